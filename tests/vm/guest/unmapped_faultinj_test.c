// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability case 2 (docs/RELIABILITY.md): fault injection.
 *
 * Failures are injected, through debugfs, into each step of the unmapped
 * allocator that may fail, while a workload allocates, reads and writes
 * MFD_UNMAPPED memfds and memfd_secret memory:
 *
 *  convert         fail_function on unmapped_convert_block()
 *  block_alloc     fail_page_alloc with min-order = the pageblock order
 *                  (the allocation of the block to convert)
 *  direct_map      fail_function on unmapped_set_direct_map_np() (the
 *                  set_memory_np() of a conversion)
 *  mermap_prepare  fail_function on mermap_populate_slot() (the page
 *                  tables of one CPU's mermap slot; earlier slots may have
 *                  been populated when it fails)
 *  mermap_map      fail_function on mermap_map_pages() (the mapping
 *                  read() and write() copy through), half the time; no
 *                  job may see ENOMEM for it
 *  mermap_map_retry the same, failing three and then twelve times in a
 *                  row with nothing else running: read() and write() try
 *                  again until the mapping works, so every copy succeeds
 *                  whole, with the right data
 *  refill          fail_function on unmapped_pool_convert() (the pool
 *                  worker's conversion)
 *  refill_retry    the same, failing twice with nothing else running: the
 *                  worker must fill the pool by itself afterwards (before
 *                  the fix in the pools patch it stopped at the first
 *                  failure and the pool stayed empty)
 *  failslab        failslab, every slab allocation of the workload's tasks
 *  fail_page_alloc fail_page_alloc, every page allocation of the workload's
 *                  tasks
 *  release         failslab and fail_page_alloc, every allocation of the
 *                  one thread that makes the shrinker give pageblocks back,
 *                  from pages a child left holding a marker (fail_function
 *                  on secretmem_zero_freed(), the zeroing at free)
 *                  (test_release() says what it asserts)
 *
 * The injectable functions are the series' (ALLOW_ERROR_INJECTION). Not
 * injected: making a block present again in the direct map (the kernel
 * warns if it fails, and the debug guest panics on a warning) and
 * mermap_map_reserved(), which cannot fail once its window is set aside at
 * boot.
 *
 * The workload: two threads that each fork short-lived jobs (a fresh mm
 * each, so that the mermap is set up again) which create an MFD_UNMAPPED
 * memfd, write() it, store through a shared mapping, read() it back,
 * punch a hole, and map a memfd_secret area, checking every page against
 * a checksum of what was stored. A thread toggles the pool target so that
 * the worker converts and releases pageblocks throughout.
 *
 * Asserted for each site:
 *  - the injection happened (the fault attribute's "times" went down);
 *  - no corrupt page: every page read (by read() or through a mapping) is
 *    what was last stored there, or zero where nothing was;
 *  - failures were clean: ENOMEM from a system call, a short write(),
 *    SIGBUS on a fault; any other error fails the test;
 *  - no page both mapped and handed out: a page of a job's memfd (found
 *    through /proc/self/pagemap) read through /proc/kcore returns zeroes,
 *    not what the job stored (a control page of ordinary memory does);
 *  - counters consistent once settled with the pool refilled: /proc/vmstat
 *    nr_unmapped and nr_free_unmapped, the sysfs statistics (global and
 *    summed over nodes) and the per-pageblock sums of /proc/pagetypeinfo
 *    (Unmapped pageblocks, free Unmapped pages) agree, and the vmstat
 *    events moved like the sysfs statistics;
 *  - with injection off, the jobs gone and every pool at 0, everything is
 *    back to zero (no leaked pageblock);
 *  - no mermap debug checker line in the kernel log.
 *
 * FI_SECONDS (default 3) sets the workload time per site.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "failfn.h"
#include "hash.h"
#include "kcore.h"
#include "klog.h"
#include "subtest.h"
#include "upool.h"

#ifndef __NR_memfd_secret
#define __NR_memfd_secret	447
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define DBG			"/sys/kernel/debug"
#define FI_FUNC_DIR		DBG "/fail_function"
#define FI_TIMES		1000000
#define FI_SPAWNERS		2
#define JOB_ROUNDS		3
#define JOB_PAGES		24
#define JOB_BYTES		(JOB_PAGES * UPOOL_PAGE)
#define SECRET_PAGES		8
#define HOLE_START		4
#define HOLE_END		8
#define CHURN_BLOCKS		2
#define SUBTEST_TIMEOUT		60
#define UNKNOWN			UINT64_MAX

enum fi_kind { FI_FUNCTION, FI_SLAB, FI_PAGE };

struct site {
	enum fi_kind kind;
	const char *func;	/* FI_FUNCTION: the function */
	const char *retval;	/* FI_FUNCTION: what it returns, if not -ENOMEM */
	unsigned int probability;
	bool task_filter;	/* only the jobs (make-it-fail) */
	bool min_order_block;	/* FI_PAGE: only pageblock-sized allocations */
	bool churn;		/* toggle the pool target meanwhile */
	bool want_enomem;	/* the jobs must see ENOMEM */
	bool reach_empty;	/* if not reached: one job on an empty pool */
};

/* --- shared results of the jobs ------------------------------------------ */

struct results {
	atomic_ullong jobs, rounds_ok, pages_checked, bytes;
	atomic_ullong enomem, short_io, sigbus, unexpected, corrupt;
	atomic_ullong kcore_checked, both_mapped;
	atomic_int first_set;
	char first[256];
};

static struct results *res;
static atomic_bool stop;
static struct kcore kc;
static bool have_kcore;
static unsigned int fi_seconds = 3;

static void note_first(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note_first(const char *fmt, ...)
{
	va_list ap;

	if (atomic_exchange(&res->first_set, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(res->first, sizeof(res->first), fmt, ap);
	va_end(ap);
}

/* A failed call of a job: ENOMEM is clean, anything else is not. */
static void job_error(const char *what, int err)
{
	if (err == ENOMEM) {
		res->enomem++;
		return;
	}
	res->unexpected++;
	note_first("%s: %s", what, upool_errname(err));
}

/* --- patterns -------------------------------------------------------------- */

/* Generation @gen of page @pg of job @job; generation 0 is all zeroes. */
static void fill_page(uint64_t *p, uint64_t job, uint64_t gen, unsigned int pg)
{
	uint64_t seed = hash64((job << 32) ^ (gen << 12) ^ pg);
	unsigned int i;

	for (i = 0; i < UPOOL_PAGE / 8; i++)
		p[i] = gen ? hash64(seed + i) | 1 : 0;
}

static bool page_is(const uint64_t *p, uint64_t job, uint64_t gen, unsigned int pg)
{
	uint64_t seed = hash64((job << 32) ^ (gen << 12) ^ pg);
	unsigned int i;

	for (i = 0; i < UPOOL_PAGE / 8; i++)
		if (p[i] != (gen ? hash64(seed + i) | 1 : 0))
			return false;
	return true;
}

/* --- faults under a SIGBUS guard ---------------------------------------------- */

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* Copy a page to or from a mapping; false (counted) on SIGBUS. */
static bool guarded_copy(void *dst, const void *src)
{
	if (sigsetjmp(bus_jmp, 1)) {
		res->sigbus++;
		return false;
	}
	memcpy(dst, src, UPOOL_PAGE);
	return true;
}

/* --- the direct map check -------------------------------------------------- */

static int pagemap_fd = -1;

/* The pfn of the page mapped at @addr, or 0. */
static uint64_t pfn_of(const void *addr)
{
	uint64_t e;

	if (pread(pagemap_fd, &e, sizeof(e), (uintptr_t)addr / UPOOL_PAGE * 8) != sizeof(e))
		return 0;
	if (!(e >> 63))
		return 0;
	return e & ((1ULL << 55) - 1);
}

/*
 * Is the page at @addr, which holds generation @gen of page @pg, readable
 * through the kernel's direct map (/proc/kcore)? It must not be.
 */
static void check_unmapped(const void *addr, uint64_t job, uint64_t gen, unsigned int pg)
{
	static uint64_t buf[UPOOL_PAGE / 8];
	uint64_t pfn;

	if (!have_kcore || !gen || gen == UNKNOWN)
		return;
	pfn = pfn_of(addr);
	if (!pfn || kcore_read_phys(&kc, pfn * UPOOL_PAGE, buf, sizeof(buf)))
		return;
	res->kcore_checked++;
	if (page_is(buf, job, gen, pg)) {
		res->both_mapped++;
		note_first("pfn %#llx handed out to a job and readable through the direct map",
			   (unsigned long long)pfn);
	}
}

static void set_make_it_fail(int on)
{
	int fd = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, on ? "1" : "0", 1) != 1)
			res->unexpected++;
		close(fd);
	}
}

/* --- a job: one fresh process -------------------------------------------------- */

/* Check @n bytes read from the file at offset 0 against @expect. */
static void check_read(const uint64_t *buf, ssize_t n, const uint64_t *expect,
		       uint64_t job, const char *how)
{
	unsigned int pg;

	for (pg = 0; pg < n / UPOOL_PAGE; pg++) {
		if (expect[pg] == UNKNOWN)
			continue;
		res->pages_checked++;
		if (!page_is(buf + pg * UPOOL_PAGE / 8, job, expect[pg], pg)) {
			res->corrupt++;
			note_first("job %llu: page %u corrupt through %s (want generation %llu)",
				   (unsigned long long)job, pg, how,
				   (unsigned long long)expect[pg]);
		}
	}
}

static void job_memfd(uint64_t job, uint64_t *buf, bool fail)
{
	uint64_t expect[JOB_PAGES], gen = 0;
	unsigned int pg, round;
	uint8_t *map;
	ssize_t n;
	int fd;

	fd = memfd_create("faultinj", MFD_UNMAPPED | MFD_CLOEXEC);
	if (fd < 0) {
		job_error("memfd_create(MFD_UNMAPPED)", errno);
		return;
	}
	if (ftruncate(fd, JOB_BYTES)) {
		job_error("ftruncate", errno);
		close(fd);
		return;
	}
	for (pg = 0; pg < JOB_PAGES; pg++)
		expect[pg] = 0;
	map = mmap(NULL, JOB_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		job_error("mmap", errno);
		map = NULL;
	}

	for (round = 0; round < JOB_ROUNDS; round++) {
		bool ok = true;

		/* write() a new generation of every page. */
		gen++;
		for (pg = 0; pg < JOB_PAGES; pg++)
			fill_page(buf + pg * UPOOL_PAGE / 8, job, gen, pg);
		n = pwrite(fd, buf, JOB_BYTES, 0);
		if (n < 0) {
			job_error("pwrite", errno);
			ok = false;
		} else {
			if (n < (ssize_t)JOB_BYTES) {
				res->short_io++;
				ok = false;
			}
			for (pg = 0; pg < n / UPOOL_PAGE; pg++)
				expect[pg] = gen;
			if (n % UPOOL_PAGE)
				expect[n / UPOOL_PAGE] = UNKNOWN;
		}

		/* Store the next one through the mapping, page by page. */
		gen++;
		for (pg = 0; map && pg < JOB_PAGES; pg++) {
			fill_page(buf, job, gen, pg);
			if (guarded_copy(map + pg * UPOOL_PAGE, buf))
				expect[pg] = gen;
			else
				ok = false;
		}

		/* read() it all back, then look through the mapping. */
		memset(buf, 0xa5, JOB_BYTES);
		n = pread(fd, buf, JOB_BYTES, 0);
		if (n < 0) {
			job_error("pread", errno);
			ok = false;
		} else {
			if (n < (ssize_t)JOB_BYTES) {
				res->short_io++;
				ok = false;
			}
			check_read(buf, n, expect, job, "read()");
		}
		for (pg = 0; map && pg < JOB_PAGES; pg++) {
			if (!guarded_copy(buf + pg * UPOOL_PAGE / 8, map + pg * UPOOL_PAGE)) {
				ok = false;
				memset(buf + pg * UPOOL_PAGE / 8, 0xa5, UPOOL_PAGE);
				continue;
			}
		}
		if (map)
			check_read(buf, JOB_BYTES, expect, job, "the mapping");

		/* Stored pages must be out of the direct map. */
		if (fail)
			set_make_it_fail(0);
		for (pg = 0; map && pg < JOB_PAGES; pg++)
			check_unmapped(map + pg * UPOOL_PAGE, job, expect[pg], pg);
		if (fail)
			set_make_it_fail(1);

		/* A hole, which then reads as zeroes. */
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      HOLE_START * UPOOL_PAGE, (HOLE_END - HOLE_START) * UPOOL_PAGE)) {
			job_error("fallocate(PUNCH_HOLE)", errno);
			ok = false;
		} else {
			for (pg = HOLE_START; pg < HOLE_END; pg++)
				expect[pg] = 0;
		}
		n = pread(fd, buf, JOB_BYTES, 0);
		if (n < 0) {
			job_error("pread after the hole", errno);
			ok = false;
		} else {
			check_read(buf, n, expect, job, "read() after the hole");
		}
		if (ok) {
			res->rounds_ok++;
			res->bytes += 3 * JOB_BYTES;
		}
	}
	if (map)
		munmap(map, JOB_BYTES);
	close(fd);
}

static void job_secret(uint64_t job, uint64_t *buf, bool fail)
{
	unsigned int pg;
	uint8_t *map;
	int fd;

	fd = syscall(__NR_memfd_secret, O_CLOEXEC);
	if (fd < 0) {
		job_error("memfd_secret", errno);
		return;
	}
	if (ftruncate(fd, SECRET_PAGES * UPOOL_PAGE)) {
		job_error("ftruncate(memfd_secret)", errno);
		close(fd);
		return;
	}
	map = mmap(NULL, SECRET_PAGES * UPOOL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		job_error("mmap(memfd_secret)", errno);
		close(fd);
		return;
	}
	for (pg = 0; pg < SECRET_PAGES; pg++) {
		fill_page(buf, job, 1, pg);
		if (!guarded_copy(map + pg * UPOOL_PAGE, buf))
			continue;
		if (!guarded_copy(buf, map + pg * UPOOL_PAGE))
			continue;
		res->pages_checked++;
		if (!page_is(buf, job, 1, pg)) {
			res->corrupt++;
			note_first("job %llu: memfd_secret page %u corrupt",
				   (unsigned long long)job, pg);
		}
		if (fail)
			set_make_it_fail(0);
		check_unmapped(map + pg * UPOOL_PAGE, job, 1, pg);
		if (fail)
			set_make_it_fail(1);
	}
	munmap(map, SECRET_PAGES * UPOOL_PAGE);
	close(fd);
}

static void job_main(uint64_t job, bool fail)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	uint64_t *buf;

	sigaction(SIGBUS, &sa, NULL);
	buf = malloc(JOB_BYTES);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (!buf || pagemap_fd < 0)
		_exit(1);
	/* Touched now, so that no copy into it needs an allocation later. */
	memset(buf, 0, JOB_BYTES);
	if (fail)
		set_make_it_fail(1);
	job_memfd(job, buf, fail);
	job_secret(job, buf, fail);
	res->jobs++;
	_exit(0);
}

static bool job_fail_mode;
static atomic_ullong job_seq;

static void *spawner(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t job = ++job_seq;
		int status;
		pid_t pid;

		pid = fork();
		if (pid < 0) {
			upool_sleep_ms(10);
			continue;
		}
		if (!pid)
			job_main(job, job_fail_mode);
		if (waitpid(pid, &status, 0) == pid &&
		    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			res->unexpected++;
			if (WIFSIGNALED(status))
				note_first("job %llu killed by signal %d (%s)",
					   (unsigned long long)job, WTERMSIG(status),
					   strsignal(WTERMSIG(status)));
			else
				note_first("job %llu exited with %d", (unsigned long long)job,
					   WEXITSTATUS(status));
		}
	}
	return NULL;
}

/* One job, waited for; false if it did not end cleanly. */
static bool run_one_job(void)
{
	uint64_t job = ++job_seq;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid)
		job_main(job, job_fail_mode);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		res->unexpected++;
		note_first("job %llu (on an empty pool) ended with status %#x",
			   (unsigned long long)job, status);
		return false;
	}
	return true;
}

/* Pool targets up and down: the worker converts and releases meanwhile. */
static void *churn(void *arg)
{
	unsigned int *toggles = arg;
	int i;

	while (!atomic_load(&stop)) {
		for (i = 0; i < upool.nr_nodes; i++)
			upool_knob_set(upool.node[i].id, UPOOL_TARGET,
				       (*toggles & 1) ? 0 : CHURN_BLOCKS * upool.pageblock);
		++*toggles;
		upool_sleep_ms(150);
	}
	return NULL;
}

/* --- debugfs --------------------------------------------------------------------- */

static const char *fi_dir(enum fi_kind kind)
{
	switch (kind) {
	case FI_SLAB:
		return DBG "/failslab";
	case FI_PAGE:
		return DBG "/fail_page_alloc";
	default:
		return FI_FUNC_DIR;
	}
}

static int fi_write(enum fi_kind kind, const char *file, const char *val)
{
	char path[256];
	int err;

	snprintf(path, sizeof(path), "%s/%s", fi_dir(kind), file);
	err = upool_write_str(path, val);
	if (err)
		tap_diag("cannot write \"%s\" to %s: %s", val, path, upool_errname(-err));
	return err;
}

static long long fi_times(enum fi_kind kind)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), "%s/times", fi_dir(kind));
	if (upool_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return atoll(buf);
}

/* Every injection off; quiet, also at exit. */
static void fi_disable_all(void)
{
	static const enum fi_kind kinds[] = { FI_FUNCTION, FI_SLAB, FI_PAGE };
	char path[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		snprintf(path, sizeof(path), "%s/probability", fi_dir(kinds[i]));
		upool_write_str(path, "0");
	}
	upool_write_str(FI_FUNC_DIR "/inject", "\n");
}

static int fi_enable(const struct site *s, unsigned int probability, int times)
{
	char val[64];
	int err = 0;

	err |= fi_write(s->kind, "probability", "0");
	err |= fi_write(s->kind, "interval", "1");
	err |= fi_write(s->kind, "verbose", "0");
	err |= fi_write(s->kind, "space", "0");
	err |= fi_write(s->kind, "task-filter", s->task_filter ? "Y" : "N");
	snprintf(val, sizeof(val), "%d", times);
	err |= fi_write(s->kind, "times", val);
	if (s->kind == FI_FUNCTION) {
		char path[256];

		err |= fi_write(s->kind, "inject", s->func);
		snprintf(path, sizeof(path), "%s/retval", s->func);
		/* -ENOMEM, as the 64-bit value the kprobe puts in the return register. */
		err |= fi_write(s->kind, path, s->retval ? s->retval : "0xfffffffffffffff4");
	} else {
		err |= fi_write(s->kind, "ignore-gfp-wait", "N");
	}
	if (s->kind == FI_PAGE) {
		int order = 0;

		while ((UPOOL_PAGE << order) < upool.pageblock)
			order++;
		snprintf(val, sizeof(val), "%d", s->min_order_block ? order : 0);
		err |= fi_write(s->kind, "ignore-gfp-highmem", "N");
		err |= fi_write(s->kind, "min-order", val);
	}
	snprintf(val, sizeof(val), "%u", probability);
	err |= fi_write(s->kind, "probability", val);
	return err ? -EIO : 0;
}

/* --- counters ------------------------------------------------------------------- */

/* Unmapped pageblocks and free Unmapped pages, summed over /proc/pagetypeinfo. */
static int pagetypeinfo_sums(u64_t *blocks, u64_t *free_pages)
{
	static char text[65536];
	int col = -1, fd, len = 0, n;
	char *line, *save;

	fd = open("/proc/pagetypeinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, text + len, sizeof(text) - 1 - len)) > 0)
		len += n;
	close(fd);
	text[len] = '\0';
	*blocks = *free_pages = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "Number of blocks type", 21)) {
			char *tok, *s2;
			int i = 0;

			col = -1;
			for (tok = strtok_r(line + 22, " ", &s2); tok; tok = strtok_r(NULL, " ", &s2), i++)
				if (!strcmp(tok, "Unmapped"))
					col = i;
			if (col < 0)
				return -EPROTO;
		} else if (col >= 0 && !strncmp(line, "Node", 4) && !strstr(line, "type")) {
			/* "Node 0, zone   DMA32   count count ..." */
			char *p = strstr(line, "zone");
			int i;

			if (!p)
				continue;
			p += 4;
			while (*p == ' ')
				p++;
			while (*p && *p != ' ')
				p++;
			for (i = 0; i <= col; i++) {
				unsigned long long v = strtoull(p, &p, 10);

				if (i == col)
					*blocks += v;
			}
		} else if (!strncmp(line, "Node", 4) && strstr(line, "type     Unmapped")) {
			char *p = strstr(line, "Unmapped") + 8;
			int order;

			for (order = 0; *p; order++) {
				while (*p == ' ' || *p == '>')
					p++;
				if (!*p)
					break;
				*free_pages += strtoull(p, &p, 10) << order;
			}
		}
	}
	return col < 0 ? -EPROTO : 0;
}

struct counts {
	long long nr_unmapped, nr_free_unmapped;	/* /proc/vmstat, pages */
	struct upool_snap global, sum;
	u64_t pti_blocks, pti_free;
};

static int read_counts(struct counts *c)
{
	int i, k;

	memset(c, 0, sizeof(*c));
	c->nr_unmapped = upool_vmstat("nr_unmapped");
	c->nr_free_unmapped = upool_vmstat("nr_free_unmapped");
	if (c->nr_unmapped < 0 || c->nr_free_unmapped < 0 || upool_snap(-1, &c->global))
		return -EIO;
	for (i = 0; i < upool.nr_nodes; i++) {
		struct upool_snap s;

		if (upool_snap(upool.node[i].id, &s))
			return -EIO;
		for (k = 0; k < UPOOL_NR_STATS; k++)
			c->sum.stat[k] += s.stat[k];
	}
	return pagetypeinfo_sums(&c->pti_blocks, &c->pti_free);
}

static bool counts_agree(const struct counts *c, bool say)
{
	u64_t pb = upool.pageblock, ub = c->global.stat[UPOOL_UNMAPPED_BYTES],
	      fb = c->global.stat[UPOOL_FREE_BYTES];
	bool ok = true;
	int k;

	for (k = 0; k < UPOOL_NR_STATS; k++)
		if (c->global.stat[k] != c->sum.stat[k]) {
			if (say)
				tap_diag("global %s %llu, sum over the nodes %llu",
					 upool_stat_names[k], c->global.stat[k], c->sum.stat[k]);
			ok = false;
		}
	if ((u64_t)c->nr_unmapped * UPOOL_PAGE != ub || c->pti_blocks * pb != ub ||
	    (u64_t)c->nr_free_unmapped * UPOOL_PAGE != fb || c->pti_free * UPOOL_PAGE != fb) {
		if (say)
			tap_diag("unmapped: vmstat %llu B, sysfs %llu B, pagetypeinfo %llu blocks (%llu B); free: vmstat %llu B, sysfs %llu B, pagetypeinfo %llu B",
				 c->nr_unmapped * UPOOL_PAGE, ub, c->pti_blocks, c->pti_blocks * pb,
				 c->nr_free_unmapped * UPOOL_PAGE, fb, c->pti_free * UPOOL_PAGE);
		ok = false;
	}
	if (fb > ub) {
		if (say)
			tap_diag("free_bytes %llu above unmapped_bytes %llu", fb, ub);
		ok = false;
	}
	return ok;
}

/* Settle, then wait (the vmstat deltas fold within seconds) until all agree. */
static bool wait_consistent(const char *when, struct counts *c)
{
	double end = upool_now() + 10;

	/* Kept pages are counted free but are not on pagetypeinfo's lists. */
	if (upool_give_back_kept())
		tap_diag("%s: cannot write a knob to give back the kept pages", when);
	upool_settle(300, 10);
	for (;;) {
		if (read_counts(c)) {
			tap_diag("%s: cannot read the counters", when);
			return false;
		}
		if (counts_agree(c, false))
			return true;
		if (upool_now() > end) {
			tap_diag("%s: counters disagree after 10 s:", when);
			counts_agree(c, true);
			return false;
		}
		upool_sleep_ms(200);
	}
}

/* The vmstat events moved like the sysfs statistics over a run. */
static bool events_agree(const u64_t vm0[UPOOL_NR_VMSTAT], const struct counts *c0,
			 const u64_t vm1[UPOOL_NR_VMSTAT], const struct counts *c1)
{
	long long base0, base1;
	bool ok;

	ok = upool_events_agree(upool_alloc_pairs, ARRAY_SIZE(upool_alloc_pairs), vm0, vm1,
				c0->sum.stat, c1->sum.stat);
	base0 = c0->sum.stat[UPOOL_UNMAPPED_BYTES] -
		(c0->sum.stat[UPOOL_CONVERSIONS] - c0->sum.stat[UPOOL_RESTORATIONS]) * upool.pageblock;
	base1 = c1->sum.stat[UPOOL_UNMAPPED_BYTES] -
		(c1->sum.stat[UPOOL_CONVERSIONS] - c1->sum.stat[UPOOL_RESTORATIONS]) * upool.pageblock;
	if (base0 != base1) {
		tap_diag("unmapped_bytes - (conversions - restorations) x pageblock: %lld -> %lld",
			 base0, base1);
		ok = false;
	}
	return ok;
}

/* Pools at 0, everything free: every gauge must reach 0. */
static bool back_to_zero(void)
{
	double end = upool_now() + 15;
	struct counts c;

	if (upool_reset() || upool_wait_empty(15))
		return false;
	for (;;) {
		if (read_counts(&c)) {
			tap_diag("cannot read the counters");
			return false;
		}
		if (!c.global.stat[UPOOL_UNMAPPED_BYTES] && counts_agree(&c, false))
			return true;
		if (upool_now() > end) {
			tap_diag("with every pool at 0 and every file closed, after 15 s:");
			counts_agree(&c, true);
			tap_diag("unmapped_bytes %llu, free_bytes %llu (want 0: a leaked pageblock or page)",
				 c.global.stat[UPOOL_UNMAPPED_BYTES], c.global.stat[UPOOL_FREE_BYTES]);
			return false;
		}
		upool_sleep_ms(200);
	}
}

/* --- one site ---------------------------------------------------------------------- */

static enum tap_result run_site(const char *id, const struct site *s)
{
	pthread_t spawners[FI_SPAWNERS], churner;
	u64_t vm0[UPOOL_NR_VMSTAT], vm1[UPOOL_NR_VMSTAT];
	struct counts c0, c1;
	unsigned int toggles = 0, i;
	long long times_left;
	long reports0, reports1;
	u64_t injected;
	double t0, t;
	bool ok = true;

	if (!back_to_zero()) {
		tap_diag("%s: not at zero before the run", id);
		return TAP_FAIL;
	}
	if (!wait_consistent("before", &c0) || upool_vmstat_all(vm0))
		return TAP_FAIL;
	reports0 = klog_count("mermap: pfn");
	memset(res, 0, sizeof(*res));
	job_fail_mode = s->task_filter;

	if (fi_enable(s, s->probability, FI_TIMES))
		return TAP_FAIL;
	atomic_store(&stop, false);
	t0 = upool_now();
	for (i = 0; i < FI_SPAWNERS; i++)
		if (pthread_create(&spawners[i], NULL, spawner, NULL))
			tap_bail("pthread_create failed");
	if (s->churn && pthread_create(&churner, NULL, churn, &toggles))
		tap_bail("pthread_create failed");
	upool_sleep_ms(fi_seconds * 1000);
	/*
	 * A site the traffic reaches rarely (an allocation that must convert,
	 * while the churn keeps refilling the pool) may not be reached in
	 * fi_seconds on a slow host: run on until it was, for up to four
	 * times as long again. Nothing injected after that still fails.
	 */
	while (fi_times(s->kind) == FI_TIMES && upool_now() - t0 < 5.0 * fi_seconds)
		upool_sleep_ms(250);
	atomic_store(&stop, true);
	for (i = 0; i < FI_SPAWNERS; i++)
		pthread_join(spawners[i], NULL);
	if (s->churn)
		pthread_join(churner, NULL);
	/*
	 * On a busy host the worker may keep up with every allocation, so
	 * that none had to convert: then empty the pool, the site still
	 * armed, and run one job, whose first page must convert.
	 */
	if (s->reach_empty && fi_times(s->kind) == FI_TIMES) {
		tap_diag("%s: not reached under traffic: one job on an empty pool", id);
		if (!back_to_zero() || !run_one_job())
			ok = false;
	}
	times_left = fi_times(s->kind);
	fi_disable_all();
	t = upool_now() - t0;
	injected = times_left >= 0 ? FI_TIMES - times_left : 0;

	tap_diag("%s: %.1f s, %u pool target changes, %llu failures injected; %llu jobs, %llu rounds without a failure, %llu pages checked (%.1f MiB), %llu through the direct map",
		 id, t, toggles, (unsigned long long)injected, (unsigned long long)res->jobs,
		 (unsigned long long)res->rounds_ok, (unsigned long long)res->pages_checked,
		 res->pages_checked * UPOOL_PAGE / (double)UPOOL_MiB,
		 (unsigned long long)res->kcore_checked);
	tap_diag("%s: clean failures: %llu ENOMEM, %llu short read/write, %llu SIGBUS; %llu other errors, %llu corrupt pages, %llu pages both mapped and handed out",
		 id, (unsigned long long)res->enomem, (unsigned long long)res->short_io,
		 (unsigned long long)res->sigbus, (unsigned long long)res->unexpected,
		 (unsigned long long)res->corrupt, (unsigned long long)res->both_mapped);
	if (res->first_set)
		tap_diag("%s: first problem: %s", id, res->first);

	if (times_left < 0 || !injected) {
		tap_diag("%s: no failure was injected", id);
		ok = false;
	}
	if (!res->jobs || !res->rounds_ok) {
		tap_diag("%s: the workload made no progress", id);
		ok = false;
	}
	if (res->unexpected || res->corrupt || res->both_mapped)
		ok = false;
	if (s->want_enomem && !res->enomem) {
		tap_diag("%s: the injected failures never reached the jobs as ENOMEM", id);
		ok = false;
	}
	if (have_kcore && !res->kcore_checked) {
		tap_diag("%s: no page could be checked through /proc/kcore", id);
		ok = false;
	}

	/* Injection off: the pool fills, and every count agrees. */
	for (i = 0; i < (unsigned int)upool.nr_nodes; i++)
		if (upool_set(upool.node[i].id, CHURN_BLOCKS * upool.pageblock, 0, 0) ||
		    upool_wait_free(upool.node[i].id, CHURN_BLOCKS * upool.pageblock,
				    UINT64_MAX, 10, NULL))
			ok = false;
	if (!wait_consistent("after the run, pool refilled", &c1) || upool_vmstat_all(vm1) ||
	    !events_agree(vm0, &c0, vm1, &c1))
		ok = false;
	tap_diag("%s: since the start: %llu conversions, %llu restorations, %llu allocations from the pool, %llu converting, %llu failed (fell back)",
		 id, c1.sum.stat[UPOOL_CONVERSIONS] - c0.sum.stat[UPOOL_CONVERSIONS],
		 c1.sum.stat[UPOOL_RESTORATIONS] - c0.sum.stat[UPOOL_RESTORATIONS],
		 c1.sum.stat[UPOOL_ALLOC_POOL] - c0.sum.stat[UPOOL_ALLOC_POOL],
		 c1.sum.stat[UPOOL_ALLOC_CONVERT] - c0.sum.stat[UPOOL_ALLOC_CONVERT],
		 c1.sum.stat[UPOOL_ALLOC_FAIL] - c0.sum.stat[UPOOL_ALLOC_FAIL]);
	if (!back_to_zero())
		ok = false;
	reports1 = klog_count("mermap: pfn");
	if (reports0 < 0 || reports1 != reports0) {
		tap_diag("%s: mermap debug checker lines: %ld before, %ld after", id, reports0,
			 reports1);
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_convert(void)
{
	/*
	 * Every time: the pool's partly used pageblocks outlive a target of
	 * 0, so few allocations convert in 3 s (one, in some runs), and at
	 * 50% a run could inject nothing.
	 */
	static const struct site s = {
		.kind = FI_FUNCTION, .func = "unmapped_convert_block",
		.probability = 100, .churn = true, .reach_empty = true,
	};
	return run_site("convert", &s);
}

static enum tap_result test_block_alloc(void)
{
	static const struct site s = {
		.kind = FI_PAGE, .probability = 50, .min_order_block = true, .churn = true,
	};
	return run_site("block_alloc", &s);
}

static enum tap_result test_direct_map(void)
{
	static const struct site s = {
		.kind = FI_FUNCTION, .func = "unmapped_set_direct_map_np",
		.probability = 50, .churn = true,
	};
	return run_site("direct_map", &s);
}

static enum tap_result test_mermap_prepare(void)
{
	static const struct site s = {
		.kind = FI_FUNCTION, .func = "mermap_populate_slot",
		.probability = 50, .want_enomem = true,
	};
	return run_site("mermap_prepare", &s);
}

static enum tap_result test_mermap_map(void)
{
	/*
	 * Half the time. read() and write() try again until the mapping
	 * works, so no copy fails for it: this sub-test asserts clean
	 * results, progress and intact pages under traffic, and
	 * mermap_map_retry shows deterministically that a long run of
	 * failures is absorbed.
	 */
	static const struct site s = {
		.kind = FI_FUNCTION, .func = "mermap_map_pages", .retval = "0",
		.probability = 50,
	};
	return run_site("mermap_map", &s);
}

#define RETRY_PAGES	16	/* one mapping of read() and write() */
#define RETRY_MANY	12	/* mapping failures in a row, a tick apart */

/* One pread() or pwrite() of RETRY_PAGES with @fails mapping failures armed. */
static ssize_t retry_io(int fd, uint64_t *buf, bool to_file, int fails, long long *left)
{
	static const struct site s = {
		.kind = FI_FUNCTION, .func = "mermap_map_pages", .retval = "0",
		.probability = 100,
	};
	ssize_t n;
	int err;

	*left = -1;
	if (fi_enable(&s, s.probability, fails)) {
		fi_disable_all();
		errno = EIO;
		return -2;
	}
	if (to_file)
		n = pwrite(fd, buf, RETRY_PAGES * UPOOL_PAGE, 0);
	else
		n = pread(fd, buf, RETRY_PAGES * UPOOL_PAGE, 0);
	err = errno;
	*left = fi_times(s.kind);
	fi_disable_all();
	errno = err;
	return n;
}

/*
 * read() and write() try to map their pages again, a tick apart, until
 * it works: a failure to map is a moment's shortage, never an error
 * (ENOMEM from read() of a program with memory to spare). Three failures
 * in a row are absorbed, and so are RETRY_MANY.
 */
static enum tap_result test_mermap_map_retry(void)
{
	static uint64_t buf[RETRY_PAGES * UPOOL_PAGE / 8];
	const ssize_t len = sizeof(buf);
	bool ok = true;
	long long left;
	unsigned int pg;
	ssize_t n;
	int fd;

	fd = memfd_create("faultinj-retry", MFD_UNMAPPED | MFD_CLOEXEC);
	if (fd < 0) {
		tap_diag("mermap_map_retry: memfd_create(MFD_UNMAPPED): %m");
		return TAP_FAIL;
	}
	/* Unarmed first, so that the mm's mermap is prepared. */
	for (pg = 0; pg < RETRY_PAGES; pg++)
		fill_page(buf + pg * UPOOL_PAGE / 8, 1, 1, pg);
	if (pwrite(fd, buf, len, 0) != len) {
		tap_diag("mermap_map_retry: the first pwrite() failed: %m");
		close(fd);
		return TAP_FAIL;
	}

	for (pg = 0; pg < RETRY_PAGES; pg++)
		fill_page(buf + pg * UPOOL_PAGE / 8, 1, 2, pg);
	n = retry_io(fd, buf, true, 3, &left);
	tap_diag("mermap_map_retry: pwrite() with 3 failures armed: %zd (%s), %lld left", n,
		 n < 0 ? strerror(errno) : "ok", left);
	if (n != len || left != 0)
		ok = false;

	memset(buf, 0, sizeof(buf));
	n = retry_io(fd, buf, false, 3, &left);
	tap_diag("mermap_map_retry: pread() with 3 failures armed: %zd (%s), %lld left", n,
		 n < 0 ? strerror(errno) : "ok", left);
	if (n != len || left != 0)
		ok = false;
	for (pg = 0; n == len && pg < RETRY_PAGES; pg++) {
		if (!page_is(buf + pg * UPOOL_PAGE / 8, 1, 2, pg)) {
			tap_diag("mermap_map_retry: page %u is not what pwrite() stored", pg);
			ok = false;
			break;
		}
	}

	for (pg = 0; pg < RETRY_PAGES; pg++)
		fill_page(buf + pg * UPOOL_PAGE / 8, 1, 3, pg);
	n = retry_io(fd, buf, true, RETRY_MANY, &left);
	tap_diag("mermap_map_retry: pwrite() with %d failures armed: %zd (%s), %lld left",
		 RETRY_MANY, n, n < 0 ? strerror(errno) : "ok", left);
	if (n != len || left != 0)
		ok = false;
	memset(buf, 0, sizeof(buf));
	n = retry_io(fd, buf, false, RETRY_MANY, &left);
	tap_diag("mermap_map_retry: pread() with %d failures armed: %zd (%s), %lld left",
		 RETRY_MANY, n, n < 0 ? strerror(errno) : "ok", left);
	if (n != len || left != 0)
		ok = false;
	for (pg = 0; n == len && pg < RETRY_PAGES; pg++) {
		if (!page_is(buf + pg * UPOOL_PAGE / 8, 1, 3, pg)) {
			tap_diag("mermap_map_retry: page %u is not what pwrite() stored", pg);
			ok = false;
			break;
		}
	}
	close(fd);
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_refill(void)
{
	static const struct site s = {
		.kind = FI_FUNCTION, .func = "unmapped_pool_convert",
		.probability = 50, .churn = true,
	};
	return run_site("refill", &s);
}

static enum tap_result test_failslab(void)
{
	static const struct site s = {
		.kind = FI_SLAB, .probability = 5, .task_filter = true, .churn = true,
		.want_enomem = true,
	};
	return run_site("failslab", &s);
}

static enum tap_result test_fail_page_alloc(void)
{
	/*
	 * Few page allocations of the jobs reach the allocator (unmapped
	 * pages come from their own lists), and a failed fault is retried
	 * rather than reported: ENOMEM is possible, not promised.
	 */
	static const struct site s = {
		.kind = FI_PAGE, .probability = 10, .task_filter = true, .churn = true,
	};
	return run_site("fail_page_alloc", &s);
}

/*
 * The worker's conversion fails twice, then works: with nothing else
 * touching the pool (no knob write, no allocation), the worker must fill
 * it by itself.
 */
static enum tap_result test_refill_retry(void)
{
	static const struct site s = {
		.kind = FI_FUNCTION, .func = "unmapped_pool_convert", .probability = 100,
	};
	u64_t want = CHURN_BLOCKS * upool.pageblock, last = 0;
	int node = upool.node[0].id, err;
	long long left;
	double t0;

	if (!back_to_zero())
		return TAP_FAIL;
	if (fi_enable(&s, s.probability, 2))
		return TAP_FAIL;
	t0 = upool_now();
	if (upool_knob_set(node, UPOOL_TARGET, want))
		return TAP_FAIL;
	err = upool_wait_free(node, want, UINT64_MAX, 12, &last);
	left = fi_times(s.kind);
	fi_disable_all();
	tap_diag("refill_retry: 2 failures armed, %lld left; node%d free_bytes %llu of %llu after %.1f s",
		 left, node, last, want, upool_now() - t0);
	if (err) {
		tap_diag("refill_retry: the pool stayed short after %lld injected failure(s): the worker gave up",
			 left >= 0 && left <= 2 ? 2 - left : -1);
		back_to_zero();
		return TAP_FAIL;
	}
	if (left != 0) {
		tap_diag("refill_retry: the pool filled, but the worker's conversion did not fail twice");
		back_to_zero();
		return TAP_FAIL;
	}
	return back_to_zero() ? TAP_PASS : TAP_FAIL;
}

/* --- a release under allocation failure ------------------------------------------ */

#define RELEASE_BLOCKS		4
#define RELEASE_DROPS		8
#define RELEASE_SLAB_SPACE	"64"

/* The child: a marker in every page of an MFD_UNMAPPED file, left unclosed. */
static int release_child(uint64_t *pfns, unsigned int npages)
{
	size_t bytes = (size_t)npages * UPOOL_PAGE;
	unsigned int pg;
	uint8_t *p;
	int fd;

	fd = memfd_create("faultinj-release", MFD_UNMAPPED);
	if (fd < 0 || ftruncate(fd, bytes))
		return 1;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (p == MAP_FAILED || pagemap_fd < 0)
		return 2;
	for (pg = 0; pg < npages; pg++) {
		fill_page((uint64_t *)(p + (size_t)pg * UPOOL_PAGE), 0xfee1, 1, pg);
		pfns[pg] = pfn_of(p + (size_t)pg * UPOOL_PAGE);
		if (!pfns[pg])
			return 3;
	}
	/*
	 * Exit with the file open. Its last close zeroes the pages as they
	 * are freed, unless the parent made secretmem_zero_freed() fail, as
	 * it does: then they go back to the unmapped free lists holding the
	 * marker, as pages freed outside task context would.
	 */
	return 0;
}

/* Write @val to the already open @fd; no allocation of ours in between. */
static int write_fd(int fd, const char *val)
{
	return pwrite(fd, val, strlen(val), 0) == (ssize_t)strlen(val) ? 0 : -errno;
}

/*
 * Pageblocks given back to the direct map while every allocation fails. A
 * child leaves a marker in free unmapped pages (with the zeroing at free
 * made to fail, as for pages freed outside task context). Then this
 * thread, the only task failslab and fail_page_alloc fail (each slab
 * allocation past the first RELEASE_SLAB_SPACE bytes, each page), makes
 * the shrinker give the blocks back through drop_caches, with the pool
 * keeping none. A release
 * must zero a block while it is hidden, allocating nothing for that, and
 * only then make it present: the debug kernel warns (and its guest panics)
 * if a block shows in the direct map before it is zero, as one did when
 * the temporary alias the zeroing went through could not be allocated.
 * Asserted: the shrinker gave blocks back meanwhile, without a flush of
 * every TLB, the marker is in none of the child's pages through
 * /proc/kcore afterwards, and the counters agree.
 */
static enum tap_result test_release(void)
{
	static const struct site slab = { .kind = FI_SLAB, .task_filter = true };
	static const struct site page = { .kind = FI_PAGE, .task_filter = true };
	unsigned int npages = RELEASE_BLOCKS * upool.pageblock / UPOOL_PAGE, pg;
	u64_t vm0[UPOOL_NR_VMSTAT], vm1[UPOOL_NR_VMSTAT], reclaimed, flushes;
	char flush_mode[32] = "";
	uint64_t *pfns, buf[UPOOL_PAGE / 8];
	unsigned int found = 0, checked = 0;
	int drop_fd, fail_fd, i, status, err;
	long long slab_left, page_left;
	bool ok = true;
	struct counts c;
	pid_t pid;

	if (!back_to_zero())
		return TAP_FAIL;
	/*
	 * The worker neither fills (target 0) nor gives back (high far above
	 * what is free); the shrinker keeps nothing (low 0).
	 */
	for (i = 0; i < upool.nr_nodes; i++)
		if (upool_set(upool.node[i].id, 0, 0, 64 * upool.pageblock))
			return TAP_FAIL;
	pfns = mmap(NULL, npages * sizeof(*pfns), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pfns == MAP_FAILED)
		return TAP_FAIL;
	/* The child's pages are freed holding the marker: see release_child(). */
	if (failfn_inject("secretmem_zero_freed", "0xfffffffffffffff5")) {
		munmap(pfns, npages * sizeof(*pfns));
		return TAP_FAIL;
	}
	pid = fork();
	if (!pid)
		_exit(release_child(pfns, npages));
	status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		failfn_stop();
		tap_diag("release: the child failed (status %#x)", status);
		munmap(pfns, npages * sizeof(*pfns));
		return TAP_FAIL;
	}
	failfn_stop();
	if (upool_flush_mode(flush_mode, sizeof(flush_mode)))
		tap_diag("release: cannot read the flush_on_free mode");
	/* Its folios may wait in per-CPU LRU batches: drain them, then settle. */
	upool_write_str("/proc/sys/vm/drop_caches", "1");
	upool_settle(300, 10);

	drop_fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	fail_fd = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (drop_fd < 0 || fail_fd < 0 || upool_vmstat_all(vm0) ||
	    fi_enable(&slab, 100, FI_TIMES) || fi_write(FI_SLAB, "space", RELEASE_SLAB_SPACE) ||
	    fi_enable(&page, 100, FI_TIMES)) {
		tap_diag("release: cannot set up the injection");
		ok = false;
	} else {
		/*
		 * The shrinker is asked for half of what it counts on each
		 * pass, so pass a few times (each write allocates 2 bytes of
		 * the slab budget and nothing else of ours).
		 */
		err = write_fd(fail_fd, "1");
		for (i = 0; !err && i < RELEASE_DROPS; i++)
			err = write_fd(drop_fd, "2");
		write_fd(fail_fd, "0");
		tap_diag("release: %d drop_caches pass(es) under injection%s%s", err ? i - 1 : i,
			 err ? ", the next one refused: " : "", err ? upool_errname(-err) : "");
	}
	slab_left = fi_times(FI_SLAB);
	page_left = fi_times(FI_PAGE);
	fi_disable_all();
	if (drop_fd >= 0)
		close(drop_fd);
	if (fail_fd >= 0)
		close(fail_fd);
	if (upool_vmstat_all(vm1))
		ok = false;
	reclaimed = vm1[UPOOL_VM_BLOCK_RECLAIM] - vm0[UPOOL_VM_BLOCK_RECLAIM];
	flushes = vm1[UPOOL_VM_TLB_FLUSH] - vm0[UPOOL_VM_TLB_FLUSH];
	tap_diag("release: %llu pageblock(s) given back by the shrinker under injection, %llu flush(es) of every TLB; failed meanwhile: %lld slab, %lld page allocation(s)",
		 (unsigned long long)reclaimed, (unsigned long long)flushes,
		 FI_TIMES - slab_left, FI_TIMES - page_left);
	/*
	 * Nothing converts meanwhile (target 0), and making a block present
	 * needs no flush: a release costs the other CPUs nothing (in the
	 * default flush_on_free mode, which leaves no stale mermap entry).
	 */
	if (ok && flushes && !strcmp(flush_mode, "immediate")) {
		tap_diag("release: FAIL: giving blocks back flushed every TLB %llu time(s)",
			 (unsigned long long)flushes);
		ok = false;
	}
	if (ok && reclaimed < RELEASE_BLOCKS / 2) {
		tap_diag("release: FAIL: fewer than half of the %u block(s) the child freed went back",
			 RELEASE_BLOCKS);
		ok = false;
	}

	for (pg = 0; have_kcore && pg < npages; pg++) {
		if (kcore_read_phys(&kc, pfns[pg] * UPOOL_PAGE, buf, sizeof(buf)))
			continue;
		checked++;
		if (page_is(buf, 0xfee1, 1, pg))
			found++;
	}
	munmap(pfns, npages * sizeof(*pfns));
	if (have_kcore)
		tap_diag("release: %u of %u page(s) read through /proc/kcore, %u with the marker",
			 checked, npages, found);
	if (found) {
		tap_diag("release: FAIL: a freed page's old contents are readable in the direct map");
		ok = false;
	}
	if (!wait_consistent("release", &c))
		ok = false;
	return back_to_zero() && ok ? TAP_PASS : TAP_FAIL;
}

static const struct subtest subtests[] = {
	{ "convert", "fail_function unmapped_convert_block under MFD_UNMAPPED/memfd_secret traffic",
	  test_convert },
	{ "block_alloc", "fail_page_alloc of pageblocks under traffic", test_block_alloc },
	{ "direct_map", "fail_function unmapped_set_direct_map_np under traffic", test_direct_map },
	{ "mermap_prepare", "fail_function mermap_populate_slot under traffic",
	  test_mermap_prepare },
	{ "mermap_map", "fail_function mermap_map_pages under traffic", test_mermap_map },
	{ "mermap_map_retry", "read() and write() absorb any run of mapping failures, never ENOMEM",
	  test_mermap_map_retry },
	{ "refill", "fail_function unmapped_pool_convert (pool worker) under traffic",
	  test_refill },
	{ "refill_retry", "the pool worker fills the pool by itself after failed conversions",
	  test_refill_retry },
	{ "failslab", "failslab in the workload's tasks", test_failslab },
	{ "fail_page_alloc", "fail_page_alloc in the workload's tasks", test_fail_page_alloc },
	{ "release", "pageblocks given back by the shrinker while every allocation fails",
	  test_release },
};

static void restore_on_signal(int sig)
{
	/* Async-signal-safe enough: open, write, close. */
	int fd = open(FI_FUNC_DIR "/inject", O_WRONLY | O_TRUNC);

	if (fd >= 0) {
		if (write(fd, "\n", 1) < 0) {
			/* nothing more to do */
		}
		close(fd);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The control: a page of ordinary memory is found through /proc/kcore. */
static int kcore_control(void)
{
	uint64_t *page, pfn, buf[UPOOL_PAGE / 8];
	int ret = -1;

	page = mmap(NULL, UPOOL_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (page == MAP_FAILED || pagemap_fd < 0)
		return -1;
	fill_page(page, 0xc0ffee, 1, 0);
	pfn = pfn_of(page);
	if (pfn && !kcore_read_phys(&kc, pfn * UPOOL_PAGE, buf, sizeof(buf)) &&
	    page_is(buf, 0xc0ffee, 1, 0))
		ret = 0;
	munmap(page, UPOOL_PAGE);
	close(pagemap_fd);
	pagemap_fd = -1;
	return ret;
}

int main(int argc, char **argv)
{
	unsigned int i, planned;
	const char *env;

	planned = subtest_select(subtests, ARRAY_SIZE(subtests), argc, argv);
	upool_init_or_skip(true);
	if (access(FI_FUNC_DIR "/inject", W_OK) || access(DBG "/failslab/probability", W_OK) ||
	    access(DBG "/fail_page_alloc/probability", W_OK))
		tap_skip_all("no fault injection in debugfs (CONFIG_FAIL_FUNCTION, FAILSLAB, FAIL_PAGE_ALLOC, debugfs mounted)");
	env = getenv("FI_SECONDS");
	if (env && (atoi(env) < 1 || atoi(env) > 60))
		tap_bail("FI_SECONDS must be 1 to 60, not \"%s\"", env);
	if (env)
		fi_seconds = atoi(env);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		tap_bail("mmap: %m");

	tap_plan(planned);
	if (kcore_open(&kc))
		tap_diag("no /proc/kcore: the direct map check is off");
	else if (kcore_control())
		tap_bail("the control page is not found through /proc/kcore: the direct map check would prove nothing");
	else
		have_kcore = true;
	tap_diag("%u s per site, %d job spawners, jobs of %llu KiB MFD_UNMAPPED + %llu KiB memfd_secret",
		 fi_seconds, FI_SPAWNERS, JOB_BYTES / UPOOL_KiB, SECRET_PAGES * UPOOL_PAGE / UPOOL_KiB);
	fi_disable_all();
	upool_install_restore();
	atexit(fi_disable_all);
	signal(SIGTERM, restore_on_signal);
	signal(SIGINT, restore_on_signal);
	signal(SIGHUP, restore_on_signal);

	for (i = 0; i < ARRAY_SIZE(subtests); i++) {
		if (!subtest_selected(&subtests[i], argc, argv))
			continue;
		tap_report(subtest_run(&subtests[i], SUBTEST_TIMEOUT), subtests[i].name,
			   skip_reason);
		fi_disable_all();
	}
	if (have_kcore)
		kcore_close(&kc);
	return tap_finish();
}
