// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability case 3 (docs/RELIABILITY.md): CPU hotplug under unmapped
 * memfd traffic.
 *
 * A CPU is taken offline and brought back through sysfs in a loop while
 * four threads fault, read() and write() MFD_UNMAPPED memfds and check
 * every byte against a checksum of what they wrote, in each flush-on-free
 * mode. read() and write() go through the mermap, whose state is per mm
 * and per possible CPU: a CPU that went away and came back must find its
 * slot usable (its TLB was flushed when it came up, so the slot's bump
 * allocator stays conservative), and no stale entry may be reported by
 * the debug checker (CONFIG_MERMAP_DEBUG warns, and the debug guest panics
 * on a warning; its "expected by a test" lines are counted here too).
 *
 * Sub-tests: "immediate" and "deferred", the flush_on_free mode each runs
 * in. Each asserts:
 *  - no corruption: every page read back (through the mapping and through
 *    read()) has the checksum of what was written, holes read as zeroes;
 *  - no failed system call in the workers;
 *  - at least HP_MIN_CYCLES offline/online cycles, each followed by a
 *    write()/read() round trip pinned to the CPU that came back;
 *  - counters consistent: sampled whenever the CPU is settled (offline or
 *    online), /proc/vmstat unmapped_mermap_flush and the sum of the nodes'
 *    tlb_flush_mermap never go back, and over the run both moved by the
 *    same amount (the sysfs sum covers offline CPUs, the vm event of a
 *    dead CPU is folded into a live one);
 *  - no new "mermap: pfn" line in the kernel log.
 * Figures: cycles, average offline+online time, worker operations and
 * bytes checked, mermap flushes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "hash.h"
#include "klog.h"
#include "subtest.h"
#include "upool.h"

#define HP_WORKERS		4
#define HP_FILE_PAGES		48		/* per worker */
#define HP_FILE_BYTES		(HP_FILE_PAGES * UPOOL_PAGE)
#define HP_DURATION		12.0		/* seconds per mode */
#define HP_MAX_CYCLES		40
#define HP_MIN_CYCLES		3
#define HP_PROBE_PAGES		16
#define SUBTEST_TIMEOUT		90
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

static int hp_cpu = -1;			/* the CPU taken offline */
static char hp_online_path[128];

/* --- helpers -------------------------------------------------------------- */

/* Page @pg of generation @gen of worker @w: 512 words derived from them. */
static void fill_page(uint64_t *p, unsigned int w, uint64_t gen, unsigned int pg)
{
	uint64_t seed = hash64(((uint64_t)w << 56) ^ (gen << 16) ^ pg);
	unsigned int i;

	for (i = 0; i < UPOOL_PAGE / 8; i++)
		p[i] = hash64(seed + i);
}

static bool check_page(const uint64_t *p, unsigned int w, uint64_t gen,
		       unsigned int pg)
{
	uint64_t seed = hash64(((uint64_t)w << 56) ^ (gen << 16) ^ pg);
	unsigned int i;

	for (i = 0; i < UPOOL_PAGE / 8; i++)
		if (p[i] != hash64(seed + i))
			return false;
	return true;
}

static bool page_is_zero(const uint64_t *p)
{
	unsigned int i;

	for (i = 0; i < UPOOL_PAGE / 8; i++)
		if (p[i])
			return false;
	return true;
}

static int cpu_set_online(int on)
{
	return upool_write_str(hp_online_path, on ? "1" : "0");
}

static int cpu_is_online(void)
{
	char buf[16];

	if (upool_read_file(hp_online_path, buf, sizeof(buf)) < 0)
		return -1;
	return buf[0] == '1';
}

static void restore_cpu(void)
{
	if (hp_cpu > 0 && cpu_is_online() == 0)
		cpu_set_online(1);
}

/* --- workers --------------------------------------------------------------- */

struct worker {
	pthread_t thread;
	unsigned int id;
	uint64_t ops, bytes_checked, corrupt, errors;
	char first_error[160];
};

static atomic_bool stop;

static void worker_error(struct worker *w, const char *what, int err)
{
	if (!w->errors++)
		snprintf(w->first_error, sizeof(w->first_error), "%s: %s", what,
			 upool_errname(err));
}

static void worker_corrupt(struct worker *w, const char *how, unsigned int pg,
			   uint64_t gen)
{
	if (!w->corrupt++)
		tap_diag("worker %u: page %u (generation %llu) corrupt, seen through %s",
			 w->id, pg, (unsigned long long)gen, how);
}

/*
 * One file, three kinds of rounds in turn: (0) a new generation stored
 * through the mapping (faults), checked by read(); (1) a new generation by
 * write(), checked through the mapping and by pread(); (2) a hole punched
 * in the middle and the file shrunk and grown back, the freed pages read
 * as zeroes by read() and through the mapping (new zeroed allocations),
 * the rest still intact.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t *buf, gen = 1;
	unsigned int round = 0;
	char name[32];
	uint8_t *map;
	int fd;

	buf = malloc(HP_FILE_BYTES);
	snprintf(name, sizeof(name), "hotplug-%u", w->id);
	fd = memfd_create(name, MFD_UNMAPPED | MFD_CLOEXEC);
	if (!buf || fd < 0) {
		worker_error(w, "memfd_create(MFD_UNMAPPED)", errno);
		return NULL;
	}
	if (ftruncate(fd, HP_FILE_BYTES)) {
		worker_error(w, "ftruncate", errno);
		goto out;
	}
	map = mmap(NULL, HP_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		worker_error(w, "mmap", errno);
		goto out;
	}
	/* Generation 0 is all zeroes: the file starts empty. */
	gen = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned int pg, kind = round++ % 3;
		ssize_t n;

		if (kind == 0) {
			gen++;
			for (pg = 0; pg < HP_FILE_PAGES; pg++)
				fill_page((uint64_t *)(map + pg * UPOOL_PAGE), w->id, gen, pg);
			n = pread(fd, buf, HP_FILE_BYTES, 0);
			if (n != (ssize_t)HP_FILE_BYTES) {
				worker_error(w, "pread after mapped stores", n < 0 ? errno : EIO);
				continue;
			}
			for (pg = 0; pg < HP_FILE_PAGES; pg++)
				if (!check_page(buf + pg * UPOOL_PAGE / 8, w->id, gen, pg))
					worker_corrupt(w, "read()", pg, gen);
		} else if (kind == 1) {
			gen++;
			for (pg = 0; pg < HP_FILE_PAGES; pg++)
				fill_page(buf + pg * UPOOL_PAGE / 8, w->id, gen, pg);
			n = pwrite(fd, buf, HP_FILE_BYTES, 0);
			if (n != (ssize_t)HP_FILE_BYTES) {
				worker_error(w, "pwrite", n < 0 ? errno : EIO);
				continue;
			}
			memset(buf, 0, HP_FILE_BYTES);
			for (pg = 0; pg < HP_FILE_PAGES; pg++)
				if (!check_page((uint64_t *)(map + pg * UPOOL_PAGE), w->id, gen, pg))
					worker_corrupt(w, "the mapping", pg, gen);
			n = pread(fd, buf, HP_FILE_BYTES, 0);
			if (n != (ssize_t)HP_FILE_BYTES) {
				worker_error(w, "pread after write()", n < 0 ? errno : EIO);
				continue;
			}
			for (pg = 0; pg < HP_FILE_PAGES; pg++)
				if (!check_page(buf + pg * UPOOL_PAGE / 8, w->id, gen, pg))
					worker_corrupt(w, "read() after write()", pg, gen);
		} else {
			/* Pages [8, 16) punched, [32, end) truncated away and back. */
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      8 * UPOOL_PAGE, 8 * UPOOL_PAGE)) {
				worker_error(w, "fallocate(PUNCH_HOLE)", errno);
				continue;
			}
			if (ftruncate(fd, 32 * UPOOL_PAGE) || ftruncate(fd, HP_FILE_BYTES)) {
				worker_error(w, "ftruncate", errno);
				continue;
			}
			n = pread(fd, buf, HP_FILE_BYTES, 0);
			if (n != (ssize_t)HP_FILE_BYTES) {
				worker_error(w, "pread after punch", n < 0 ? errno : EIO);
				continue;
			}
			for (pg = 0; pg < HP_FILE_PAGES; pg++) {
				const uint64_t *p = buf + pg * UPOOL_PAGE / 8;
				bool hole = (pg >= 8 && pg < 16) || pg >= 32;

				if (hole ? !page_is_zero(p) : (gen && !check_page(p, w->id, gen, pg)))
					worker_corrupt(w, hole ? "read() of a hole" : "read() beside a hole",
						       pg, gen);
			}
			/* Fault the holes in again: new pages, zeroed through the mermap. */
			for (pg = 8; pg < HP_FILE_PAGES; pg = pg == 15 ? 32 : pg + 1)
				if (!page_is_zero((uint64_t *)(map + pg * UPOOL_PAGE)))
					worker_corrupt(w, "the mapping of a hole", pg, gen);
			/* The file now holds a mix: start the next round from zero. */
			if (ftruncate(fd, 0) || ftruncate(fd, HP_FILE_BYTES)) {
				worker_error(w, "ftruncate", errno);
				continue;
			}
			gen++;
			for (pg = 0; pg < HP_FILE_PAGES; pg++)
				fill_page(buf + pg * UPOOL_PAGE / 8, w->id, gen, pg);
			if (pwrite(fd, buf, HP_FILE_BYTES, 0) != (ssize_t)HP_FILE_BYTES) {
				worker_error(w, "pwrite", errno);
				continue;
			}
		}
		w->ops++;
		w->bytes_checked += HP_FILE_BYTES;
	}
	munmap(map, HP_FILE_BYTES);
out:
	close(fd);
	free(buf);
	return NULL;
}

/* --- the probe on the CPU that came back ---------------------------------- */

/* A write()/read() round trip through the mermap, run on hp_cpu. */
static int probe_cpu(int fd, uint64_t gen)
{
	static uint64_t buf[HP_PROBE_PAGES * UPOOL_PAGE / 8];
	cpu_set_t one, all;
	unsigned int pg;
	int err = 0;

	if (sched_getaffinity(0, sizeof(all), &all))
		return -errno;
	CPU_ZERO(&one);
	CPU_SET(hp_cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -errno;
	if (sched_getcpu() != hp_cpu)
		err = -EXDEV;
	for (pg = 0; !err && pg < HP_PROBE_PAGES; pg++)
		fill_page(buf + pg * UPOOL_PAGE / 8, 99, gen, pg);
	if (!err && pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		err = -EIO;
	memset(buf, 0, sizeof(buf));
	if (!err && pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		err = -EIO;
	for (pg = 0; !err && pg < HP_PROBE_PAGES; pg++)
		if (!check_page(buf + pg * UPOOL_PAGE / 8, 99, gen, pg))
			err = -EBADMSG;
	/* All CPUs again, before the next offline: none is left without one. */
	CPU_ZERO(&all);
	for (pg = 0; pg < CPU_SETSIZE; pg++)
		CPU_SET(pg, &all);
	sched_setaffinity(0, sizeof(all), &all);
	return err;
}

/* --- counters -------------------------------------------------------------- */

struct counters {
	u64_t vm_flush;		/* /proc/vmstat unmapped_mermap_flush */
	u64_t sys_flush;	/* sum of the nodes' stats/tlb_flush_mermap */
};

static int read_counters(struct counters *c)
{
	long long v = upool_vmstat("unmapped_mermap_flush");
	int i;

	if (v < 0)
		return -ENOENT;
	c->vm_flush = v;
	c->sys_flush = 0;
	for (i = 0; i < upool.nr_nodes; i++) {
		u64_t s;

		if (upool_stat(upool.node[i].id, UPOOL_TLB_FLUSH_MERMAP, &s))
			return -EIO;
		c->sys_flush += s;
	}
	return 0;
}

/* --- the sub-tests -------------------------------------------------------- */

static enum tap_result run_mode(const char *mode)
{
	struct worker w[HP_WORKERS] = { 0 };
	struct counters c0, prev, cur;
	uint64_t ops = 0, bytes = 0, corrupt = 0, errors = 0;
	unsigned int cycles = 0, probes_ok = 0, i;
	double t0, t_hp = 0, t;
	long reports0, reports1;
	char seen[32];
	bool ok = true;
	int probe_fd;

	if (upool_write_str(UPOOL_GLOBAL_DIR "/flush_on_free", mode) ||
	    upool_flush_mode(seen, sizeof(seen)) || strcmp(seen, mode)) {
		tap_diag("cannot set flush_on_free to %s", mode);
		return TAP_FAIL;
	}
	probe_fd = memfd_create("hotplug-probe", MFD_UNMAPPED | MFD_CLOEXEC);
	if (probe_fd < 0 || ftruncate(probe_fd, HP_PROBE_PAGES * UPOOL_PAGE)) {
		tap_diag("probe memfd: %m");
		return TAP_FAIL;
	}
	reports0 = klog_count("while a stale mermap TLB entry");
	if (read_counters(&c0)) {
		tap_diag("cannot read the mermap flush counters");
		return TAP_FAIL;
	}
	prev = c0;

	atomic_store(&stop, false);
	for (i = 0; i < HP_WORKERS; i++) {
		w[i].id = i;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i])) {
			tap_diag("pthread_create failed");
			return TAP_FAIL;
		}
	}

	t0 = upool_now();
	while (upool_now() - t0 < HP_DURATION && cycles < HP_MAX_CYCLES) {
		int err;

		t = upool_now();
		err = cpu_set_online(0);
		if (err || cpu_is_online() != 0) {
			tap_diag("cpu%d: offline failed: %s", hp_cpu, upool_errname(-err));
			ok = false;
			break;
		}
		/* Settled: counters may be compared. */
		if (!read_counters(&cur)) {
			if (cur.vm_flush < prev.vm_flush || cur.sys_flush < prev.sys_flush) {
				tap_diag("cycle %u, cpu%d offline: mermap flush counters went back: vmstat %llu -> %llu, sysfs %llu -> %llu",
					 cycles, hp_cpu, prev.vm_flush, cur.vm_flush,
					 prev.sys_flush, cur.sys_flush);
				ok = false;
			}
			prev = cur;
		}
		upool_sleep_ms(100);
		err = cpu_set_online(1);
		if (err || cpu_is_online() != 1) {
			tap_diag("cpu%d: online failed: %s", hp_cpu, upool_errname(-err));
			ok = false;
			break;
		}
		t_hp += upool_now() - t - 0.1;
		if (!read_counters(&cur)) {
			if (cur.vm_flush < prev.vm_flush || cur.sys_flush < prev.sys_flush) {
				tap_diag("cycle %u, cpu%d online: mermap flush counters went back: vmstat %llu -> %llu, sysfs %llu -> %llu",
					 cycles, hp_cpu, prev.vm_flush, cur.vm_flush,
					 prev.sys_flush, cur.sys_flush);
				ok = false;
			}
			prev = cur;
		}
		cycles++;
		err = probe_cpu(probe_fd, cycles);
		if (err) {
			tap_diag("cycle %u: round trip on cpu%d after it came back: %s",
				 cycles, hp_cpu, upool_errname(-err));
			ok = false;
		} else {
			probes_ok++;
		}
		upool_sleep_ms(100);
	}
	atomic_store(&stop, true);
	for (i = 0; i < HP_WORKERS; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
		bytes += w[i].bytes_checked;
		corrupt += w[i].corrupt;
		errors += w[i].errors;
		if (w[i].errors)
			tap_diag("worker %u: %llu failed calls, the first: %s", i,
				 (unsigned long long)w[i].errors, w[i].first_error);
		if (!w[i].ops) {
			tap_diag("worker %u made no progress", i);
			ok = false;
		}
	}
	t = upool_now() - t0;
	close(probe_fd);
	reports1 = klog_count("while a stale mermap TLB entry");

	if (read_counters(&cur)) {
		tap_diag("cannot read the mermap flush counters");
		ok = false;
	} else if (cur.vm_flush - c0.vm_flush != cur.sys_flush - c0.sys_flush) {
		tap_diag("mermap flushes: /proc/vmstat moved by %llu, sysfs tlb_flush_mermap by %llu",
			 cur.vm_flush - c0.vm_flush, cur.sys_flush - c0.sys_flush);
		ok = false;
	}

	tap_diag("%s: %u offline/online cycles of cpu%d in %.1f s (%.0f ms per cycle, without the pauses), %u round trips on it after it came back",
		 mode, cycles, hp_cpu, t, cycles ? 1000 * t_hp / cycles : 0.0, probes_ok);
	tap_diag("%s: %d workers, %llu rounds, %.1f MiB checked (%.2f MiB/s), %llu corrupt pages, %llu failed calls, %llu mermap flushes",
		 mode, HP_WORKERS, (unsigned long long)ops, bytes / (double)UPOOL_MiB,
		 bytes / (double)UPOOL_MiB / t, (unsigned long long)corrupt,
		 (unsigned long long)errors, cur.sys_flush - c0.sys_flush);
	tap_diag("%s: debug checker lines in the kernel log: %ld before, %ld after",
		 mode, reports0, reports1);

	if (cycles < HP_MIN_CYCLES) {
		tap_diag("only %u cycles, want at least %d", cycles, HP_MIN_CYCLES);
		ok = false;
	}
	if (probes_ok != cycles || corrupt || errors)
		ok = false;
	if (reports0 < 0 || reports1 > reports0) {
		tap_diag("the mermap debug checker reported (or the log is unreadable)");
		ok = false;
	}
	if (!strcmp(mode, "immediate") && cur.sys_flush == c0.sys_flush) {
		tap_diag("immediate mode but no mermap flush counted");
		ok = false;
	}
	restore_cpu();
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_immediate(void)
{
	return run_mode("immediate");
}

static enum tap_result test_deferred(void)
{
	return run_mode("deferred");
}

static const struct subtest subtests[] = {
	{ "immediate", "CPU offline/online loop under MFD_UNMAPPED traffic, flush_on_free immediate",
	  test_immediate },
	{ "deferred", "CPU offline/online loop under MFD_UNMAPPED traffic, flush_on_free deferred",
	  test_deferred },
};

/* The highest-numbered online CPU other than 0 with an "online" file. */
static int find_hotplug_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int cpu;

	for (cpu = n - 1; cpu > 0; cpu--) {
		char path[128], buf[16];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (upool_read_file(path, buf, sizeof(buf)) >= 0 && buf[0] == '1')
			return cpu;
	}
	return -1;
}

static void write_quietly(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0) {
			/* nothing more to do in a signal handler */
		}
		close(fd);
	}
}

/* Replaces upool's handler: the CPU back online, then flush_on_free. */
static void restore_on_signal(int sig)
{
	write_quietly(hp_online_path, "1");
	write_quietly(UPOOL_GLOBAL_DIR "/flush_on_free", upool.flush_saved);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	unsigned int i, planned;

	planned = subtest_select(subtests, ARRAY_SIZE(subtests), argc, argv);
	upool_init_or_skip(true);
	hp_cpu = find_hotplug_cpu();
	if (hp_cpu < 0)
		tap_skip_all("no CPU can be taken offline (one CPU, or no CPU hotplug)");
	snprintf(hp_online_path, sizeof(hp_online_path),
		 "/sys/devices/system/cpu/cpu%d/online", hp_cpu);

	tap_plan(planned);
	tap_diag("cpu%d goes offline and back; %d workers on %llu KiB memfds; flush_on_free was %s",
		 hp_cpu, HP_WORKERS, HP_FILE_BYTES / UPOOL_KiB, upool.flush_saved);
	upool_install_restore();
	atexit(restore_cpu);
	signal(SIGTERM, restore_on_signal);
	signal(SIGINT, restore_on_signal);
	signal(SIGHUP, restore_on_signal);

	for (i = 0; i < ARRAY_SIZE(subtests); i++) {
		if (!subtest_selected(&subtests[i], argc, argv))
			continue;
		tap_report(subtest_run(&subtests[i], SUBTEST_TIMEOUT), subtests[i].name,
			   skip_reason);
		restore_cpu();
	}
	return tap_finish();
}
