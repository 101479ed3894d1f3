// SPDX-License-Identifier: GPL-2.0
/*
 * Unmapped pool control plane helpers for guest tests, see upool.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "upool.h"

#ifndef __NR_memfd_secret
#define __NR_memfd_secret	447
#endif

struct upool_info upool;

const char *const upool_knob_names[UPOOL_NR_KNOBS] = {
	[UPOOL_TARGET] = "pool_target",
	[UPOOL_LOW] = "watermark_low",
	[UPOOL_HIGH] = "watermark_high",
};

const char *const upool_stat_names[UPOOL_NR_STATS] = {
	[UPOOL_UNMAPPED_BYTES] = "unmapped_bytes",
	[UPOOL_FREE_BYTES] = "free_bytes",
	[UPOOL_ALLOC_POOL] = "alloc_pool",
	[UPOOL_ALLOC_CONVERT] = "alloc_convert",
	[UPOOL_ALLOC_FAIL] = "alloc_fail",
	[UPOOL_CONVERSIONS] = "conversions",
	[UPOOL_RESTORATIONS] = "restorations",
	[UPOOL_TLB_FLUSH_CONVERT] = "tlb_flush_convert",
	[UPOOL_TLB_FLUSH_MERMAP] = "tlb_flush_mermap",
	[UPOOL_RELEASED_BYTES] = "released_bytes",
};

const char *const upool_vmstat_names[UPOOL_NR_VMSTAT] = {
	[UPOOL_VM_BLOCK_UNMAP] = "unmapped_block_unmap",
	[UPOOL_VM_BLOCK_REMAP] = "unmapped_block_remap",
	[UPOOL_VM_BLOCK_RECLAIM] = "unmapped_block_reclaim",
	[UPOOL_VM_ALLOC_POOL] = "unmapped_alloc_pool",
	[UPOOL_VM_ALLOC_CONVERT] = "unmapped_alloc_convert",
	[UPOOL_VM_ALLOC_FAIL] = "unmapped_alloc_fail",
	[UPOOL_VM_TLB_FLUSH] = "unmapped_tlb_flush",
	[UPOOL_VM_MERMAP_FLUSH] = "unmapped_mermap_flush",
};

const char *upool_errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "unknown errno";
}

double upool_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void upool_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

const char *upool_path(char *buf, size_t len, int node, const char *rel)
{
	if (node < 0)
		snprintf(buf, len, UPOOL_GLOBAL_DIR "/%s", rel);
	else
		snprintf(buf, len, UPOOL_NODE_ROOT "/node%d/unmapped/%s", node, rel);
	return buf;
}

int upool_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	return (int)n;
}

int upool_read_u64(const char *path, u64_t *val)
{
	char buf[128], *end;
	int n;

	n = upool_read_file(path, buf, sizeof(buf));
	if (n < 0) {
		tap_diag("read %s: %s", path, upool_errname(-n));
		return n;
	}
	errno = 0;
	if (buf[0] < '0' || buf[0] > '9')
		goto bad;
	*val = strtoull(buf, &end, 10);
	if (errno || strcmp(end, "\n"))
		goto bad;
	return 0;
bad:
	tap_diag("%s reads \"%.*s\", not decimal bytes and a newline", path,
		 (int)strcspn(buf, "\n"), buf);
	return -EPROTO;
}

int upool_write_raw(const char *path, const char *s, size_t len)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return (size_t)n == len ? 0 : -EIO;
}

int upool_write_str(const char *path, const char *s)
{
	return upool_write_raw(path, s, strlen(s));
}

int upool_write_u64(const char *path, u64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", val);
	return upool_write_str(path, buf);
}

int upool_knob_get(int node, enum upool_knob k, u64_t *val)
{
	char path[256];

	return upool_read_u64(upool_path(path, sizeof(path), node, upool_knob_names[k]), val);
}

int upool_knob_set(int node, enum upool_knob k, u64_t val)
{
	char path[256];
	int err;

	err = upool_write_u64(upool_path(path, sizeof(path), node, upool_knob_names[k]), val);
	if (err)
		tap_diag("write %llu to %s: %s", val, path, upool_errname(-err));
	return err;
}

int upool_give_back_kept(void)
{
	u64_t high;
	int i, err;

	for (i = 0; i < upool.nr_nodes; i++) {
		err = upool_knob_get(upool.node[i].id, UPOOL_HIGH, &high);
		if (!err)
			err = upool_knob_set(upool.node[i].id, UPOOL_HIGH, high);
		if (err)
			return err;
	}
	return 0;
}

int upool_set(int node, u64_t target, u64_t low, u64_t high)
{
	u64_t cur_high;
	int err;

	err = upool_knob_get(node, UPOOL_HIGH, &cur_high);
	if (err)
		return err;
	/* Whichever order keeps low <= high after each write. */
	if (low <= cur_high) {
		err = upool_knob_set(node, UPOOL_LOW, low);
		if (!err)
			err = upool_knob_set(node, UPOOL_HIGH, high);
	} else {
		err = upool_knob_set(node, UPOOL_HIGH, high);
		if (!err)
			err = upool_knob_set(node, UPOOL_LOW, low);
	}
	if (!err)
		err = upool_knob_set(node, UPOOL_TARGET, target);
	return err;
}

int upool_snap(int node, struct upool_snap *s)
{
	char path[256], rel[64];
	int i, err;

	for (i = 0; i < UPOOL_NR_KNOBS; i++) {
		err = upool_knob_get(node, i, &s->knob[i]);
		if (err)
			return err;
	}
	for (i = 0; i < UPOOL_NR_STATS; i++) {
		snprintf(rel, sizeof(rel), "stats/%s", upool_stat_names[i]);
		err = upool_read_u64(upool_path(path, sizeof(path), node, rel), &s->stat[i]);
		if (err)
			return err;
	}
	return 0;
}

int upool_stat(int node, enum upool_stat st, u64_t *val)
{
	char path[256], rel[64];

	snprintf(rel, sizeof(rel), "stats/%s", upool_stat_names[st]);
	return upool_read_u64(upool_path(path, sizeof(path), node, rel), val);
}

bool upool_snap_equal(const struct upool_snap *a, const struct upool_snap *b)
{
	return !memcmp(a, b, sizeof(*a));
}

void upool_snap_diag(const char *what, int node, const struct upool_snap *s)
{
	char where[32];

	if (node < 0)
		snprintf(where, sizeof(where), "global");
	else
		snprintf(where, sizeof(where), "node%d", node);
	tap_diag("%s %s: target %llu low %llu high %llu | unmapped %llu free %llu "
		 "pool %llu convert %llu fail %llu conv %llu rest %llu "
		 "flush %llu/%llu released %llu",
		 what, where, s->knob[UPOOL_TARGET], s->knob[UPOOL_LOW],
		 s->knob[UPOOL_HIGH], s->stat[UPOOL_UNMAPPED_BYTES],
		 s->stat[UPOOL_FREE_BYTES], s->stat[UPOOL_ALLOC_POOL],
		 s->stat[UPOOL_ALLOC_CONVERT], s->stat[UPOOL_ALLOC_FAIL],
		 s->stat[UPOOL_CONVERSIONS], s->stat[UPOOL_RESTORATIONS],
		 s->stat[UPOOL_TLB_FLUSH_CONVERT], s->stat[UPOOL_TLB_FLUSH_MERMAP],
		 s->stat[UPOOL_RELEASED_BYTES]);
}

int upool_flush_mode(char *buf, size_t len)
{
	char raw[128], path[256], *open_br, *close_br, *s;
	size_t n;
	int ret;

	ret = upool_read_file(upool_path(path, sizeof(path), -1, "flush_on_free"),
			      raw, sizeof(raw));
	if (ret < 0) {
		tap_diag("read %s: %s", path, upool_errname(-ret));
		return ret;
	}
	open_br = strchr(raw, '[');
	if (open_br) {
		close_br = strchr(open_br, ']');
		if (!close_br)
			goto bad;
		s = open_br + 1;
		n = close_br - s;
	} else {
		s = raw;
		n = strcspn(raw, " \n");
		if (s[n] && strcmp(s + n, "\n"))
			goto bad;
	}
	if (!n || n >= len)
		goto bad;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
bad:
	tap_diag("%s reads \"%.*s\": neither a word nor \"[selected] other\"",
		 path, (int)strcspn(raw, "\n"), raw);
	return -EPROTO;
}

static void parse_cpulist(const char *s, cpu_set_t *set, int *nr)
{
	char *end;

	CPU_ZERO(set);
	*nr = 0;
	while (*s >= '0' && *s <= '9') {
		long a = strtol(s, &end, 10), b = a, c;

		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (c = a; c <= b && c < CPU_SETSIZE; c++) {
			CPU_SET(c, set);
			(*nr)++;
		}
		if (*s != ',')
			break;
		s++;
	}
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Paths and words the signal handler writes, prepared in advance. */
static char restore_path[UPOOL_MAX_NODES][UPOOL_NR_KNOBS][128];
static char restore_flush_path[128];
static pid_t restore_pid;

int upool_init(void)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	int ids[UPOOL_MAX_NODES], nr = 0, i, err, fd;
	char path[256], buf[512];
	struct dirent *de;
	struct stat st;
	DIR *d;

	memset(&upool, 0, sizeof(upool));
	if (stat(UPOOL_GLOBAL_DIR, &st) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	err = upool_read_u64(UPOOL_GLOBAL_DIR "/pageblock_bytes", &upool.pageblock);
	if (err)
		return err;
	if (!upool.pageblock || upool.pageblock % UPOOL_PAGE) {
		tap_diag("pageblock_bytes %llu is not a positive multiple of the page size",
			 upool.pageblock);
		return -EPROTO;
	}

	d = opendir(UPOOL_NODE_ROOT);
	if (!d) {
		err = errno;
		tap_diag("opendir " UPOOL_NODE_ROOT ": %s", upool_errname(err));
		return -err;
	}
	while ((de = readdir(d))) {
		int id;
		char c;

		if (sscanf(de->d_name, "node%d%c", &id, &c) != 1 || id < 0)
			continue;
		snprintf(path, sizeof(path), UPOOL_NODE_ROOT "/node%d/unmapped", id);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (nr == UPOOL_MAX_NODES) {
			tap_diag("more than %d nodes: only the first are tested", UPOOL_MAX_NODES);
			break;
		}
		ids[nr++] = id;
	}
	closedir(d);
	qsort(ids, nr, sizeof(ids[0]), cmp_int);
	upool.nr_nodes = nr;
	for (i = 0; i < nr; i++) {
		struct upool_node *n = &upool.node[i];
		char *p;

		n->id = ids[i];
		snprintf(path, sizeof(path), UPOOL_NODE_ROOT "/node%d/cpulist", n->id);
		if (upool_read_file(path, buf, sizeof(buf)) >= 0)
			parse_cpulist(buf, &n->cpus, &n->nr_cpus);
		snprintf(path, sizeof(path), UPOOL_NODE_ROOT "/node%d/meminfo", n->id);
		if (upool_read_file(path, buf, sizeof(buf)) >= 0 &&
		    (p = strstr(buf, "MemTotal:")))
			n->mem_total = strtoull(p + 9, NULL, 10) * UPOOL_KiB;
	}

	err = upool_flush_mode(upool.flush_saved, sizeof(upool.flush_saved));
	if (err)
		snprintf(upool.flush_saved, sizeof(upool.flush_saved), "immediate");

	/* Probe MFD_UNMAPPED: unknown memfd flags are EINVAL. */
	fd = memfd_create("upool-probe", MFD_UNMAPPED | MFD_CLOEXEC);
	upool.mfd_unmapped = fd >= 0;
	if (fd >= 0)
		close(fd);

	/* Quietly: the runner has done it already where this is refused. */
	setrlimit(RLIMIT_MEMLOCK, &unlimited);

	for (i = 0; i < nr; i++) {
		int k;

		for (k = 0; k < UPOOL_NR_KNOBS; k++)
			upool_path(restore_path[i][k], sizeof(restore_path[i][k]),
				   upool.node[i].id, upool_knob_names[k]);
	}
	upool_path(restore_flush_path, sizeof(restore_flush_path), -1, "flush_on_free");
	return 0;
}

void upool_init_or_skip(bool need_mfd_unmapped)
{
	int err;

	if (geteuid())
		tap_skip_all("must run as root");
	err = upool_init();
	if (err == -ENOENT)
		tap_skip_all("no " UPOOL_GLOBAL_DIR ": this kernel has no unmapped pool control plane");
	if (err)
		tap_bail("the unmapped pool sysfs files are unusable: %s", upool_errname(-err));
	if (need_mfd_unmapped && !upool.mfd_unmapped)
		tap_skip_all("memfd_create(MFD_UNMAPPED) is refused");
}

int upool_node_index(int node)
{
	int i;

	for (i = 0; i < upool.nr_nodes; i++)
		if (upool.node[i].id == node)
			return i;
	return -1;
}

int upool_reset(void)
{
	int i, ret = 0;
	char path[256];

	for (i = 0; i < upool.nr_nodes; i++) {
		int id = upool.node[i].id;

		/*
		 * Target first; low before high keeps low <= high. high
		 * goes to one pageblock and back so that the value changes
		 * even when it was 0 already: the worker then looks at the
		 * pool and releases what is beyond max(high, target) = 0.
		 */
		ret |= upool_knob_set(id, UPOOL_TARGET, 0);
		ret |= upool_knob_set(id, UPOOL_LOW, 0);
		ret |= upool_knob_set(id, UPOOL_HIGH, upool.pageblock);
		ret |= upool_knob_set(id, UPOOL_HIGH, 0);
	}
	if (upool_write_str(upool_path(path, sizeof(path), -1, "flush_on_free"),
			    upool.flush_saved)) {
		tap_diag("cannot restore flush_on_free to %s", upool.flush_saved);
		ret = -EIO;
	}
	return ret ? -EIO : 0;
}

int upool_wait_empty(double timeout)
{
	double end = upool_now() + timeout;
	u64_t free_bytes = 0;
	int i;

	for (;;) {
		bool empty = true;

		for (i = 0; i < upool.nr_nodes; i++) {
			if (upool_stat(upool.node[i].id, UPOOL_FREE_BYTES, &free_bytes))
				return -EIO;
			if (free_bytes >= upool.pageblock) {
				empty = false;
				break;
			}
		}
		if (empty)
			return 0;
		if (upool_now() > end) {
			tap_diag("FAIL: node%d still has %llu free unmapped bytes after %.0f s with every knob at 0",
				 upool.node[i].id, free_bytes, timeout);
			return -ETIMEDOUT;
		}
		upool_sleep_ms(50);
	}
}

/* Async-signal-safe: open, write, close of prepared strings. */
static void restore_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0) {
			/* nothing more to do in a signal handler */
		}
		close(fd);
	}
}

static void restore_now(void)
{
	int i;

	if (getpid() != restore_pid)
		return;
	for (i = 0; i < upool.nr_nodes; i++) {
		restore_write(restore_path[i][UPOOL_TARGET], "0");
		restore_write(restore_path[i][UPOOL_LOW], "0");
		restore_write(restore_path[i][UPOOL_HIGH], "2M");
		restore_write(restore_path[i][UPOOL_HIGH], "0");
	}
	restore_write(restore_flush_path, upool.flush_saved);
}

static void restore_on_signal(int sig)
{
	restore_now();
	signal(sig, SIG_DFL);
	raise(sig);
}

void upool_install_restore(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGALRM };
	struct sigaction sa = { .sa_handler = restore_on_signal };
	size_t i;

	restore_pid = getpid();
	atexit(restore_now);
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int upool_wait_free(int node, u64_t lo, u64_t hi, double timeout, u64_t *last)
{
	double end = upool_now() + timeout;
	u64_t v = 0;
	int err;

	for (;;) {
		err = upool_stat(node, UPOOL_FREE_BYTES, &v);
		if (err)
			return err;
		if (last)
			*last = v;
		if (v >= lo && v <= hi)
			return 0;
		if (upool_now() > end) {
			tap_diag("node%d: free_bytes %llu, not within [%llu, %llu] after %.0f s",
				 node, v, lo, hi, timeout);
			return -ETIMEDOUT;
		}
		upool_sleep_ms(50);
	}
}

int upool_settle(int quiet_ms, double timeout)
{
	struct upool_snap a[UPOOL_MAX_NODES], b[UPOOL_MAX_NODES];
	double end = upool_now() + timeout;
	int i;

	for (i = 0; i < upool.nr_nodes; i++)
		if (upool_snap(upool.node[i].id, &a[i]))
			return -EIO;
	for (;;) {
		bool same = true;

		upool_sleep_ms(quiet_ms);
		for (i = 0; i < upool.nr_nodes; i++) {
			if (upool_snap(upool.node[i].id, &b[i]))
				return -EIO;
			same &= upool_snap_equal(&a[i], &b[i]);
		}
		if (same)
			return 0;
		if (upool_now() > end) {
			tap_diag("the pool statistics kept moving for %.0f s", timeout);
			return -ETIMEDOUT;
		}
		memcpy(a, b, sizeof(a));
	}
}

static long long read_key(const char *path, const char *key, long long scale)
{
	size_t len = strlen(key);
	long long val = -1;
	char line[256];
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, len) && (line[len] == ' ' || line[len] == ':')) {
			val = strtoll(line + len + 1, NULL, 10) * scale;
			break;
		}
	}
	fclose(f);
	return val;
}

long long upool_meminfo(const char *key)
{
	return read_key("/proc/meminfo", key, 1024);
}

long long upool_vmstat(const char *key)
{
	return read_key("/proc/vmstat", key, 1);
}

void upool_stat_refresh(void)
{
	if (upool_write_str("/proc/sys/vm/stat_refresh", "1"))
		tap_diag("stat_refresh: cannot fold the per-CPU vm counters");
}

int upool_vmstat_all(u64_t v[UPOOL_NR_VMSTAT])
{
	char line[256];
	int i, found = 0;
	FILE *f;

	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < UPOOL_NR_VMSTAT; i++) {
			size_t len = strlen(upool_vmstat_names[i]);

			if (!strncmp(line, upool_vmstat_names[i], len) && line[len] == ' ') {
				v[i] = strtoull(line + len + 1, NULL, 10);
				found |= 1 << i;
			}
		}
	}
	fclose(f);
	for (i = 0; i < UPOOL_NR_VMSTAT; i++)
		if (!(found & (1 << i))) {
			tap_diag("/proc/vmstat has no %s", upool_vmstat_names[i]);
			return -ENOENT;
		}
	return 0;
}

int upool_bind_node(int node)
{
	int idx = upool_node_index(node);
	unsigned long mask[4] = { 0 };
	int err;

	if (idx < 0 || node >= (int)(8 * sizeof(mask)))
		return -EINVAL;
	if (!upool.node[idx].nr_cpus)
		return -ENODEV;
	if (sched_setaffinity(0, sizeof(cpu_set_t), &upool.node[idx].cpus)) {
		err = errno;
		tap_diag("sched_setaffinity(node%d's CPUs): %s", node, upool_errname(err));
		return -err;
	}
	mask[node / (8 * sizeof(long))] = 1UL << (node % (8 * sizeof(long)));
	if (syscall(SYS_set_mempolicy, MPOL_BIND, mask, 8 * sizeof(mask) + 1) &&
	    errno != ENOSYS) {
		err = errno;
		tap_diag("set_mempolicy(MPOL_BIND, node%d): %s", node, upool_errname(err));
		return -err;
	}
	/* Let the scheduler move us before the first allocation. */
	sched_yield();
	return 0;
}

void upool_unbind(void)
{
	cpu_set_t all;
	int c;

	CPU_ZERO(&all);
	for (c = 0; c < CPU_SETSIZE && c < 1024; c++)
		CPU_SET(c, &all);
	sched_setaffinity(0, sizeof(all), &all);
	syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0);
}

const char *upool_how_name(enum upool_how how)
{
	switch (how) {
	case UPOOL_MFD_MMAP:
		return "memfd_create(MFD_UNMAPPED) + mmap";
	case UPOOL_MFD_WRITE:
		return "memfd_create(MFD_UNMAPPED) + write";
	case UPOOL_SECRET:
		return "memfd_secret + mmap";
	case UPOOL_ANY:
		break;
	}
	return upool.mfd_unmapped ? "memfd_create(MFD_UNMAPPED) + mmap" :
				    "memfd_secret + mmap";
}

int upool_alloc(struct upool_buf *b, size_t len, enum upool_how how)
{
	static char chunk[64 * 1024];
	volatile char *p;
	size_t off;
	int err;

	b->fd = -1;
	b->addr = NULL;
	b->len = len;
	if (how == UPOOL_ANY)
		how = upool.mfd_unmapped ? UPOOL_MFD_MMAP : UPOOL_SECRET;
	if (how == UPOOL_SECRET)
		b->fd = syscall(__NR_memfd_secret, O_CLOEXEC);
	else
		b->fd = memfd_create("upool", MFD_UNMAPPED | MFD_CLOEXEC);
	if (b->fd < 0) {
		err = errno;
		tap_diag("%s: cannot create the file: %s", upool_how_name(how),
			 upool_errname(err));
		return -err;
	}
	if (how == UPOOL_MFD_WRITE) {
		memset(chunk, 0x3c, sizeof(chunk));
		for (off = 0; off < len; off += sizeof(chunk)) {
			size_t n = len - off < sizeof(chunk) ? len - off : sizeof(chunk);
			ssize_t w = pwrite(b->fd, chunk, n, off);

			if (w != (ssize_t)n) {
				err = w < 0 ? errno : EIO;
				tap_diag("%s: pwrite at %zu: %s", upool_how_name(how), off,
					 upool_errname(err));
				goto fail;
			}
		}
		return 0;
	}
	if (ftruncate(b->fd, len)) {
		err = errno;
		tap_diag("%s: ftruncate(%zu): %s", upool_how_name(how), len, upool_errname(err));
		goto fail;
	}
	b->addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->addr == MAP_FAILED) {
		err = errno;
		b->addr = NULL;
		tap_diag("%s: mmap(%zu): %s", upool_how_name(how), len, upool_errname(err));
		goto fail;
	}
	for (p = b->addr, off = 0; off < len; off += UPOOL_PAGE)
		p[off] = (char)(off / UPOOL_PAGE);
	return 0;
fail:
	close(b->fd);
	b->fd = -1;
	return -err;
}

void upool_free(struct upool_buf *b)
{
	if (b->addr)
		munmap(b->addr, b->len);
	if (b->fd >= 0)
		close(b->fd);
	b->addr = NULL;
	b->fd = -1;
}

const struct upool_pair upool_alloc_pairs[5] = {
	{ UPOOL_VM_ALLOC_POOL, UPOOL_ALLOC_POOL },
	{ UPOOL_VM_ALLOC_CONVERT, UPOOL_ALLOC_CONVERT },
	{ UPOOL_VM_ALLOC_FAIL, UPOOL_ALLOC_FAIL },
	{ UPOOL_VM_BLOCK_UNMAP, UPOOL_CONVERSIONS },
	{ UPOOL_VM_BLOCK_REMAP, UPOOL_RESTORATIONS },
};

bool upool_events_agree(const struct upool_pair *pairs, unsigned int n,
			const u64_t vm0[UPOOL_NR_VMSTAT], const u64_t vm1[UPOOL_NR_VMSTAT],
			const u64_t st0[UPOOL_NR_STATS], const u64_t st1[UPOOL_NR_STATS])
{
	bool ok = true;
	unsigned int j;

	for (j = 0; j < n; j++) {
		u64_t dv = vm1[pairs[j].v] - vm0[pairs[j].v];
		u64_t ds = st1[pairs[j].s] - st0[pairs[j].s];

		if (dv != ds) {
			tap_diag("/proc/vmstat %s moved by %llu, sysfs %s by %llu",
				 upool_vmstat_names[pairs[j].v], dv,
				 upool_stat_names[pairs[j].s], ds);
			ok = false;
		}
	}
	return ok;
}
