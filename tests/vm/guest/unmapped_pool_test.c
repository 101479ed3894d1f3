// SPDX-License-Identifier: GPL-2.0
/*
 * The unmapped pool control plane: the per-node knobs and statistics in
 * /sys/devices/system/node/nodeN/unmapped/, the global view in
 * /sys/kernel/mm/unmapped/, and the /proc/vmstat events, as
 * docs/secmemd.md ("The ABI this daemon expects") specifies them.
 *
 * Every node with an unmapped/ directory is exercised on its own; the test
 * passes with one node and with several (VM_NUMA=2). Allocations meant for
 * a node run on that node's CPUs with the memory policy bound to it; a node
 * without CPUs is only filled and released.
 *
 * Each sub-test runs in a child process; after each one the parent puts
 * every knob back to 0 (and flush_on_free back to what it was) and waits
 * for the pool to empty, and it does the same on exit and on SIGTERM.
 * Arguments select sub-tests by id (--help lists them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "subtest.h"
#include "upool.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* A sub-test that has not finished after this long is reported as hung. */
#define SUBTEST_TIMEOUT		150
/* The worker converts a few pageblocks; TCG with a debug kernel is slow. */
#define FILL_TIMEOUT		60.0
#define RELEASE_TIMEOUT		60.0

#define MiB			UPOOL_MiB
#define NOBODY			65534

static u64_t pb;		/* pageblock_bytes */

#define fail(fmt, ...)							\
	({								\
		tap_diag("%s: " fmt, __func__, ##__VA_ARGS__);		\
		TAP_FAIL;						\
	})

#define expect(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			return fail(fmt, ##__VA_ARGS__);		\
	} while (0)

#define for_each_node(idx_, nid_)					\
	for ((idx_) = 0; (idx_) < upool.nr_nodes &&			\
	     ((nid_) = upool.node[idx_].id, 1); (idx_)++)

static const char *node_path(char *buf, size_t len, int node, const char *rel)
{
	return upool_path(buf, len, node, rel);
}

/*
 * Set @node's target to @target (high to the same value, low to 0) and
 * wait until its free pool holds at least that much.
 */
static int fill_node(int node, u64_t target)
{
	u64_t got;
	int err;

	err = upool_set(node, target, 0, target);
	if (err)
		return err;
	err = upool_wait_free(node, target, UINT64_MAX, FILL_TIMEOUT, &got);
	if (err)
		tap_diag("node%d: pool_target %llu not reached (free_bytes %llu)",
			 node, target, got);
	return err;
}

/* Empty every node's pool and wait for the statistics to stop moving. */
static int quiesce(void)
{
	int err = upool_reset();

	if (!err)
		err = upool_wait_empty(RELEASE_TIMEOUT);
	if (!err)
		err = upool_settle(300, 30);
	return err;
}

static int snap_all(struct upool_snap s[UPOOL_MAX_NODES])
{
	int i, id;

	for_each_node(i, id)
		if (upool_snap(id, &s[i]))
			return -EIO;
	return 0;
}

static u64_t delta(const struct upool_snap *a, const struct upool_snap *b, enum upool_stat st)
{
	return b->stat[st] - a->stat[st];
}

/* --- layout -------------------------------------------------------------- */

static bool check_file(const char *path, mode_t mode)
{
	struct stat st;

	if (stat(path, &st)) {
		tap_diag("%s: %m", path);
		return false;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 07777) != mode || st.st_uid != 0) {
		tap_diag("%s: mode %04o uid %u, want a regular file, mode %04o, owned by root",
			 path, st.st_mode & 07777, st.st_uid, mode);
		return false;
	}
	return true;
}

static bool check_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		tap_diag("%s is not a directory", path);
		return false;
	}
	return true;
}

/* Files of a directory (node >= 0: nodeN/unmapped, else the global one). */
static bool check_dir_files(int node)
{
	char path[256], rel[64];
	mode_t knob_mode = node >= 0 ? 0644 : 0444;
	struct upool_snap s;
	bool ok = true;
	int i;

	ok &= check_dir(node_path(path, sizeof(path), node, ""));
	ok &= check_dir(node_path(path, sizeof(path), node, "stats"));
	for (i = 0; i < UPOOL_NR_KNOBS; i++)
		ok &= check_file(node_path(path, sizeof(path), node, upool_knob_names[i]),
				 knob_mode);
	for (i = 0; i < UPOOL_NR_STATS; i++) {
		snprintf(rel, sizeof(rel), "stats/%s", upool_stat_names[i]);
		ok &= check_file(node_path(path, sizeof(path), node, rel), 0444);
	}
	if (!ok)
		return false;
	if (upool_snap(node, &s))
		return false;
	for (i = 0; i < UPOOL_NR_KNOBS; i++)
		if (s.knob[i] % pb) {
			tap_diag("%s %s reads %llu, not whole pageblocks",
				 node >= 0 ? "node" : "global", upool_knob_names[i], s.knob[i]);
			ok = false;
		}
	if (s.stat[UPOOL_UNMAPPED_BYTES] % pb || s.stat[UPOOL_FREE_BYTES] % UPOOL_PAGE ||
	    s.stat[UPOOL_RELEASED_BYTES] % UPOOL_PAGE) {
		upool_snap_diag("misaligned byte counts:", node, &s);
		ok = false;
	}
	return ok;
}

/* Nodes listed in /sys/devices/system/node/has_memory. */
static int nodes_with_memory(int *ids, int max)
{
	char buf[256], *s = buf, *end;
	int n = 0;

	if (upool_read_file(UPOOL_NODE_ROOT "/has_memory", buf, sizeof(buf)) < 0)
		return -1;
	while (*s >= '0' && *s <= '9') {
		long a = strtol(s, &end, 10), b = a;

		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (; a <= b && n < max; a++)
			ids[n++] = (int)a;
		if (*s++ != ',')
			break;
	}
	return n;
}

static enum tap_result test_layout(void)
{
	int mem_ids[UPOOL_MAX_NODES], nr_mem, i, id;
	char path[256], mode[32];
	u64_t before, after;
	bool ok = true;

	ok &= check_dir_files(-1);
	ok &= check_file(UPOOL_GLOBAL_DIR "/flush_on_free", 0644);
	ok &= check_file(UPOOL_GLOBAL_DIR "/pageblock_bytes", 0444);
	expect(pb == 2 * MiB, "pageblock_bytes is %llu, want 2097152 (x86-64 with THP)", pb);
	expect(!upool_flush_mode(mode, sizeof(mode)), "flush_on_free unreadable");
	expect(!strcmp(mode, "immediate") || !strcmp(mode, "deferred"),
	       "flush_on_free selects \"%s\", want immediate or deferred", mode);

	expect(upool.nr_nodes > 0, "no node has an unmapped/ directory");
	for_each_node(i, id) {
		tap_diag("node%d: %d CPU(s), MemTotal %llu MiB", id, upool.node[i].nr_cpus,
			 upool.node[i].mem_total / MiB);
		ok &= check_dir_files(id);
	}
	nr_mem = nodes_with_memory(mem_ids, UPOOL_MAX_NODES);
	expect(nr_mem > 0, "cannot read " UPOOL_NODE_ROOT "/has_memory");
	for (i = 0; i < nr_mem; i++)
		if (upool_node_index(mem_ids[i]) < 0) {
			tap_diag("node%d has memory but no unmapped/ directory", mem_ids[i]);
			ok = false;
		}

	/* Root cannot write the read-only global sums either. */
	for (i = 0; i < UPOOL_NR_KNOBS; i++) {
		node_path(path, sizeof(path), -1, upool_knob_names[i]);
		expect(!upool_read_u64(path, &before), "cannot read %s", path);
		if (!upool_write_str(path, "2M")) {
			tap_diag("root could write the read-only %s", path);
			ok = false;
		}
		expect(!upool_read_u64(path, &after), "cannot read %s", path);
		if (after != before) {
			tap_diag("%s changed from %llu to %llu", path, before, after);
			ok = false;
		}
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- parsing ------------------------------------------------------------- */

struct parse_case {
	enum upool_knob knob;
	const char *in;
	u64_t want;		/* in pageblocks of 2 MiB */
};

/* Applied in order; watermark values keep low <= high at every step. */
static const struct parse_case parse_cases[] = {
	{ UPOOL_TARGET, "16M", 8 },
	{ UPOOL_TARGET, "16777216", 8 },
	{ UPOOL_TARGET, "16777216\n", 8 },
	{ UPOOL_TARGET, "3M", 2 },		/* rounded up to pageblocks */
	{ UPOOL_TARGET, "1", 1 },
	{ UPOOL_TARGET, "2097153", 2 },
	{ UPOOL_TARGET, "2048K", 1 },
	{ UPOOL_TARGET, "4m", 2 },
	{ UPOOL_TARGET, "0G", 0 },
	{ UPOOL_TARGET, "0", 0 },
	{ UPOOL_HIGH, "8M", 4 },
	{ UPOOL_LOW, "3M", 2 },
	{ UPOOL_LOW, "8M\n", 4 },		/* low == high is allowed */
	{ UPOOL_TARGET, "2M", 1 },		/* target below low: independent */
	{ UPOOL_TARGET, "12M", 6 },		/* target above high: independent */
	{ UPOOL_TARGET, "0K", 0 },
	{ UPOOL_LOW, "0", 0 },
	{ UPOOL_HIGH, "2048K", 1 },
	{ UPOOL_HIGH, "0", 0 },
};

static enum tap_result test_parse(void)
{
	char path[256];
	bool ok = true;
	size_t c;
	int i, id;

	for_each_node(i, id) {
		expect(!upool_set(id, 0, 0, 0), "node%d: cannot zero the knobs", id);
		for (c = 0; c < ARRAY_SIZE(parse_cases); c++) {
			const struct parse_case *pc = &parse_cases[c];
			u64_t got = 0;
			int err;

			node_path(path, sizeof(path), id, upool_knob_names[pc->knob]);
			err = upool_write_str(path, pc->in);
			if (err) {
				tap_diag("node%d: writing \"%s\" to %s failed: %s", id, pc->in,
					 upool_knob_names[pc->knob], upool_errname(-err));
				ok = false;
				continue;
			}
			expect(!upool_read_u64(path, &got), "cannot read %s", path);
			if (got != pc->want * pb) {
				tap_diag("node%d: %s = \"%s\" reads back %llu, want %llu", id,
					 upool_knob_names[pc->knob], pc->in, got, pc->want * pb);
				ok = false;
			}
		}
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- invalid writes ------------------------------------------------------ */

/* Refused for every knob, whatever the others hold. */
static const char *const bad_any[] = {
	"abc", "\n", "-1", "-2M", "99999999999999999999", "18446744073709551616",
	"17179869184G", "16E", "2M x", "12abc", "2MM", "2 M", "M", "1.5M",
};

static bool bad_write(int node, enum upool_knob k, const char *in, size_t len)
{
	u64_t before, after;
	char path[256];
	int err;

	node_path(path, sizeof(path), node, upool_knob_names[k]);
	if (upool_read_u64(path, &before))
		return false;
	err = upool_write_raw(path, in, len);
	if (upool_read_u64(path, &after))
		return false;
	if (err != -EINVAL || after != before) {
		tap_diag("node%d: %s = \"%.*s\" (%zu bytes): %s, value %llu -> %llu; want EINVAL, unchanged",
			 node, upool_knob_names[k], (int)strcspn(in, "\n"), in, len,
			 err ? upool_errname(-err) : "accepted", before, after);
		return false;
	}
	return true;
}

static enum tap_result test_bad_inputs(void)
{
	bool ok = true;
	size_t c;
	int i, id, k;

	for_each_node(i, id) {
		/* A valid state with room on both sides of each watermark. */
		expect(!upool_set(id, 4 * MiB, 4 * MiB, 8 * MiB),
		       "node%d: cannot set target 4M, low 4M, high 8M", id);
		for (k = 0; k < UPOOL_NR_KNOBS; k++) {
			char path[256];
			u64_t before, after;
			int err;

			for (c = 0; c < ARRAY_SIZE(bad_any); c++)
				ok &= bad_write(id, k, bad_any[c], strlen(bad_any[c]));
			/*
			 * A zero-length write(2) never reaches a sysfs store
			 * method (sysfs returns 0 at once): it must change
			 * nothing, and may not fail with anything but EINVAL.
			 */
			node_path(path, sizeof(path), id, upool_knob_names[k]);
			expect(!upool_read_u64(path, &before), "cannot read %s", path);
			err = upool_write_raw(path, "", 0);
			expect(!upool_read_u64(path, &after), "cannot read %s", path);
			if ((err && err != -EINVAL) || after != before) {
				tap_diag("node%d: empty write to %s: %s, %llu -> %llu", id,
					 upool_knob_names[k], err ? upool_errname(-err) : "ok",
					 before, after);
				ok = false;
			}
		}
		/*
		 * Beyond what the node can hold: 1 TiB in two spellings, and
		 * two pageblocks more than the node's MemTotal.
		 */
		ok &= bad_write(id, UPOOL_TARGET, "1T", 2);
		ok &= bad_write(id, UPOOL_TARGET, "1024G", 5);
		if (upool.node[i].mem_total) {
			char big[32];

			snprintf(big, sizeof(big), "%llu", upool.node[i].mem_total + 2 * pb);
			ok &= bad_write(id, UPOOL_TARGET, big, strlen(big));
		}
		/*
		 * low above high, high below low: refused whether the kernel
		 * compares the values as written or rounded up.
		 */
		ok &= bad_write(id, UPOOL_LOW, "10M", 3);
		ok &= bad_write(id, UPOOL_LOW, "8388609", 7);
		ok &= bad_write(id, UPOOL_HIGH, "2M", 2);
		ok &= bad_write(id, UPOOL_HIGH, "0", 1);
		/* The knobs still take valid values afterwards. */
		expect(!upool_set(id, 0, 0, 0), "node%d: valid writes refused after the bad ones", id);
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- unprivileged users -------------------------------------------------- */

static bool nobody_checks(void)
{
	static const char *const mode_words[] = { "immediate", "deferred" };
	char path[256], rel[64], buf[256];
	bool ok = true;
	int i, id, k, err;

	for_each_node(i, id) {
		for (k = 0; k < UPOOL_NR_KNOBS; k++) {
			node_path(path, sizeof(path), id, upool_knob_names[k]);
			err = upool_write_str(path, "4M");
			if (err != -EACCES && err != -EPERM) {
				tap_diag("uid %d writing %s: %s, want EACCES or EPERM", NOBODY,
					 path, err ? upool_errname(-err) : "accepted");
				ok = false;
			}
			if (upool_read_file(path, buf, sizeof(buf)) < 0) {
				tap_diag("uid %d cannot read %s: %m", NOBODY, path);
				ok = false;
			}
		}
		for (k = 0; k < UPOOL_NR_STATS; k++) {
			snprintf(rel, sizeof(rel), "stats/%s", upool_stat_names[k]);
			if (upool_read_file(node_path(path, sizeof(path), id, rel), buf,
					    sizeof(buf)) < 0) {
				tap_diag("uid %d cannot read %s: %m", NOBODY, path);
				ok = false;
			}
		}
	}
	for (k = 0; k < 2; k++) {
		err = upool_write_str(UPOOL_GLOBAL_DIR "/flush_on_free", mode_words[k]);
		if (err != -EACCES && err != -EPERM) {
			tap_diag("uid %d writing \"%s\" to flush_on_free: %s, want EACCES or EPERM",
				 NOBODY, mode_words[k], err ? upool_errname(-err) : "accepted");
			ok = false;
		}
	}
	for (k = 0; k < UPOOL_NR_STATS; k++) {
		snprintf(rel, sizeof(rel), "stats/%s", upool_stat_names[k]);
		if (upool_read_file(node_path(path, sizeof(path), -1, rel), buf, sizeof(buf)) < 0) {
			tap_diag("uid %d cannot read %s: %m", NOBODY, path);
			ok = false;
		}
	}
	if (upool_read_file(UPOOL_GLOBAL_DIR "/flush_on_free", buf, sizeof(buf)) < 0 ||
	    upool_read_file(UPOOL_GLOBAL_DIR "/pageblock_bytes", buf, sizeof(buf)) < 0) {
		tap_diag("uid %d cannot read the global files: %m", NOBODY);
		ok = false;
	}
	return ok;
}

static enum tap_result test_nonroot(void)
{
	struct upool_snap before[UPOOL_MAX_NODES], after[UPOOL_MAX_NODES];
	char mode_before[32], mode_after[32];
	int status, i, id;
	bool ok = true;
	pid_t pid;

	for_each_node(i, id)
		expect(!upool_set(id, 0, 2 * MiB, 4 * MiB), "node%d: cannot set the knobs", id);
	expect(!upool_settle(200, 30), "the pool does not settle");
	expect(!snap_all(before) && !upool_flush_mode(mode_before, sizeof(mode_before)),
	       "cannot read the knobs");

	fflush(stdout);
	pid = fork();
	expect(pid >= 0, "fork: %m");
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY)) {
			tap_diag("dropping to uid %d: %m", NOBODY);
			_exit(KSFT_FAIL);
		}
		_exit(nobody_checks() ? KSFT_PASS : KSFT_FAIL);
	}
	expect(waitpid(pid, &status, 0) == pid, "waitpid: %m");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tap_diag("unprivileged child ended with status %#x", status);
		ok = false;
	}
	expect(!snap_all(after) && !upool_flush_mode(mode_after, sizeof(mode_after)),
	       "cannot read the knobs");
	for_each_node(i, id)
		if (memcmp(before[i].knob, after[i].knob, sizeof(before[i].knob))) {
			upool_snap_diag("before", id, &before[i]);
			upool_snap_diag("after", id, &after[i]);
			tap_diag("node%d: knobs changed by an unprivileged user", id);
			ok = false;
		}
	if (strcmp(mode_before, mode_after)) {
		tap_diag("flush_on_free changed from %s to %s", mode_before, mode_after);
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- fill ---------------------------------------------------------------- */

#define FILL_BYTES	(16 * MiB)

static enum tap_result test_fill(void)
{
	struct upool_snap s0[UPOOL_MAX_NODES], s1[UPOOL_MAX_NODES];
	u64_t v0[UPOOL_NR_VMSTAT], v1[UPOOL_NR_VMSTAT];
	bool ok = true;
	int i, id, j, jd;

	for_each_node(i, id) {
		const struct upool_snap *a = &s0[i], *b = &s1[i];
		u64_t conv, rest, need;

		expect(!quiesce(), "the pool does not empty");
		expect(!snap_all(s0) && !upool_vmstat_all(v0), "cannot read the statistics");
		expect(!fill_node(id, FILL_BYTES), "node%d: pool not filled", id);
		expect(!upool_settle(300, 30), "the pool does not settle after filling");
		expect(!snap_all(s1) && !upool_vmstat_all(v1), "cannot read the statistics");

		conv = delta(a, b, UPOOL_CONVERSIONS);
		rest = delta(a, b, UPOOL_RESTORATIONS);
		need = (FILL_BYTES - a->stat[UPOOL_FREE_BYTES] + pb - 1) / pb;
		tap_diag("node%d: free %llu -> %llu, unmapped %llu -> %llu, %llu conversions, %llu restorations",
			 id, a->stat[UPOOL_FREE_BYTES], b->stat[UPOOL_FREE_BYTES],
			 a->stat[UPOOL_UNMAPPED_BYTES], b->stat[UPOOL_UNMAPPED_BYTES], conv, rest);
		if (conv < need) {
			tap_diag("node%d: %llu conversions, want at least %llu", id, conv, need);
			ok = false;
		}
		if (b->stat[UPOOL_UNMAPPED_BYTES] - a->stat[UPOOL_UNMAPPED_BYTES] != (conv - rest) * pb) {
			tap_diag("node%d: unmapped_bytes moved by %lld, conversions - restorations = %lld pageblocks",
				 id, (long long)(b->stat[UPOOL_UNMAPPED_BYTES] - a->stat[UPOOL_UNMAPPED_BYTES]),
				 (long long)(conv - rest));
			ok = false;
		}
		/* The worker stops at the target: less than a pageblock more. */
		if (b->stat[UPOOL_FREE_BYTES] >= FILL_BYTES + pb) {
			tap_diag("node%d: free_bytes %llu overshoots the target %llu by a pageblock or more",
				 id, b->stat[UPOOL_FREE_BYTES], FILL_BYTES);
			ok = false;
		}
		if (v1[UPOOL_VM_BLOCK_UNMAP] - v0[UPOOL_VM_BLOCK_UNMAP] < conv) {
			tap_diag("vmstat unmapped_block_unmap moved by %llu, less than %llu conversions",
				 v1[UPOOL_VM_BLOCK_UNMAP] - v0[UPOOL_VM_BLOCK_UNMAP], conv);
			ok = false;
		}
		for_each_node(j, jd) {
			if (j == i || upool_snap_equal(&s0[j], &s1[j]))
				continue;
			upool_snap_diag("before", jd, &s0[j]);
			upool_snap_diag("after", jd, &s1[j]);
			tap_diag("filling node%d changed node%d", id, jd);
			ok = false;
		}
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_fill_memfree(void)
{
	struct upool_snap s0[UPOOL_MAX_NODES], s1[UPOOL_MAX_NODES];
	long long mf0, mf1;
	u64_t grew = 0;
	int i, id;

	expect(!quiesce(), "the pool does not empty");
	expect(!snap_all(s0), "cannot read the statistics");
	mf0 = upool_meminfo("MemFree");
	for_each_node(i, id)
		expect(!fill_node(id, 2 * FILL_BYTES), "node%d: pool not filled", id);
	expect(!upool_settle(300, 30), "the pool does not settle after filling");
	mf1 = upool_meminfo("MemFree");
	expect(!snap_all(s1), "cannot read the statistics");
	for_each_node(i, id)
		grew += s1[i].stat[UPOOL_FREE_BYTES] - s0[i].stat[UPOOL_FREE_BYTES];
	tap_diag("free unmapped memory grew by %llu MiB, MemFree went from %lld to %lld MiB (%+lld MiB)",
		 grew / MiB, mf0 / (long long)MiB, mf1 / (long long)MiB,
		 (mf1 - mf0) / (long long)MiB);
	expect(mf0 > 0 && mf1 > 0, "cannot read MemFree");
	/* Half is plenty of room for everything else that runs meanwhile. */
	expect(mf0 - mf1 >= (long long)grew / 2,
	       "MemFree dropped by %lld bytes while the pool grew by %llu: free unmapped memory still counts as free",
	       mf0 - mf1, grew);
	return TAP_PASS;
}

/* --- drain --------------------------------------------------------------- */

static enum tap_result drain_node(int idx)
{
	static const struct {
		enum upool_how how;
		size_t len;
	} steps[] = {
		{ UPOOL_MFD_MMAP, 4 * MiB },
		{ UPOOL_MFD_WRITE, 2 * MiB },
		{ UPOOL_SECRET, 2 * MiB },
	};
	struct upool_snap before[UPOOL_MAX_NODES], after[UPOOL_MAX_NODES];
	struct upool_snap start[UPOOL_MAX_NODES], end[UPOOL_MAX_NODES];
	struct upool_buf bufs[ARRAY_SIZE(steps)];
	int id = upool.node[idx].id, j, jd, err;
	bool ok = true;
	size_t s;

	expect(!quiesce(), "the pool does not empty");
	/* Fill 16 MiB, then target 0 under a high watermark: nothing moves. */
	expect(!upool_set(id, FILL_BYTES, 0, 4 * FILL_BYTES), "node%d: cannot set the knobs", id);
	expect(!upool_wait_free(id, FILL_BYTES, UINT64_MAX, FILL_TIMEOUT, NULL),
	       "node%d: pool not filled", id);
	expect(!upool_knob_set(id, UPOOL_TARGET, 0), "node%d: cannot set pool_target 0", id);
	expect(!upool_settle(300, 30), "the pool does not settle");
	expect(!snap_all(start), "cannot read the statistics");
	err = upool_bind_node(id);
	expect(!err, "cannot run on node%d: %s", id, upool_errname(-err));

	for (s = 0; s < ARRAY_SIZE(steps); s++) {
		const struct upool_snap *a = &before[idx], *b = &after[idx];
		u64_t drop;

		bufs[s].fd = -1;
		bufs[s].addr = NULL;
		expect(!snap_all(before), "cannot read the statistics");
		if (upool_alloc(&bufs[s], steps[s].len, steps[s].how)) {
			tap_diag("node%d: %s of %zu MiB failed", id, upool_how_name(steps[s].how),
				 (size_t)(steps[s].len / MiB));
			ok = false;
			continue;
		}
		expect(!snap_all(after), "cannot read the statistics");
		drop = a->stat[UPOOL_FREE_BYTES] - b->stat[UPOOL_FREE_BYTES];
		tap_diag("node%d: %s, %zu MiB: free_bytes -%llu, alloc_pool +%llu, alloc_convert +%llu, conversions +%llu",
			 id, upool_how_name(steps[s].how), (size_t)(steps[s].len / MiB), drop,
			 delta(a, b, UPOOL_ALLOC_POOL), delta(a, b, UPOOL_ALLOC_CONVERT),
			 delta(a, b, UPOOL_CONVERSIONS));
		if (!delta(a, b, UPOOL_ALLOC_POOL) || delta(a, b, UPOOL_ALLOC_CONVERT) ||
		    delta(a, b, UPOOL_CONVERSIONS) || delta(a, b, UPOOL_ALLOC_FAIL)) {
			tap_diag("node%d: want alloc_pool to grow and no conversion or failure: the pool had room",
				 id);
			ok = false;
		}
		if (b->stat[UPOOL_FREE_BYTES] > a->stat[UPOOL_FREE_BYTES] ||
		    drop < steps[s].len || drop > steps[s].len + 64 * UPOOL_KiB) {
			tap_diag("node%d: free_bytes dropped by %lld, want the %zu bytes allocated",
				 id, (long long)drop, steps[s].len);
			ok = false;
		}
		for_each_node(j, jd) {
			if (j == idx || upool_snap_equal(&before[j], &after[j]))
				continue;
			upool_snap_diag("before", jd, &before[j]);
			upool_snap_diag("after", jd, &after[j]);
			tap_diag("an allocation on node%d changed node%d", id, jd);
			ok = false;
		}
	}
	upool_unbind();

	/* Freed pages go back to the pool. */
	for (s = 0; s < ARRAY_SIZE(steps); s++)
		upool_free(&bufs[s]);
	expect(!upool_settle(300, 30), "the pool does not settle");
	/*
	 * A freed page may wait in a per-CPU LRU batch (secretmem folios are
	 * on the unevictable LRU) until the batch is drained: compaction
	 * drains them all. What may still be in flight is bounded like the
	 * other checks here.
	 */
	(void)upool_write_str("/proc/sys/vm/compact_memory", "1");
	expect(!snap_all(end), "cannot read the statistics");
	if (end[idx].stat[UPOOL_FREE_BYTES] > start[idx].stat[UPOOL_FREE_BYTES] ||
	    end[idx].stat[UPOOL_FREE_BYTES] + 64 * UPOOL_KiB <
		    start[idx].stat[UPOOL_FREE_BYTES]) {
		tap_diag("node%d: free_bytes %llu after freeing everything, %llu before allocating",
			 id, end[idx].stat[UPOOL_FREE_BYTES], start[idx].stat[UPOOL_FREE_BYTES]);
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_drain(void)
{
	enum tap_result res = TAP_SKIP;
	int i, id;

	for_each_node(i, id) {
		if (!upool.node[i].nr_cpus) {
			tap_diag("node%d has no CPU: no local allocation possible", id);
			continue;
		}
		if (drain_node(i) == TAP_FAIL)
			res = TAP_FAIL;
		else if (res == TAP_SKIP)
			res = TAP_PASS;
	}
	if (res == TAP_SKIP)
		return skip("no node has a CPU");
	return res;
}

/* --- refill -------------------------------------------------------------- */

/*
 * secmemd's shipped knobs (pool_target 32M, watermark_low 8M,
 * watermark_high 64M) under a burst four times the pool: the worker
 * refills in batches, one flush of every TLB per batch rather than per
 * pageblock, and the burst never finds the pool empty for long. Once it
 * is over the pool holds between watermark_low and pool_target: the
 * worker refills when the pool falls below watermark_low, and tops up
 * what a burst took during a refill only once the pool stops moving.
 */
#define REFILL_TARGET	(32 * MiB)
#define REFILL_LOW	(8 * MiB)
#define REFILL_HIGH	(64 * MiB)
#define REFILL_BURST	(4 * REFILL_TARGET)

static enum tap_result test_refill(void)
{
	struct upool_snap s1[UPOOL_MAX_NODES], s2[UPOOL_MAX_NODES];
	u64_t conv, flushes, own, got;
	struct upool_buf buf = { .fd = -1 };
	int i, id, idx = -1, err;
	bool ok = true;

	for_each_node(i, id) {
		if (upool.node[i].nr_cpus) {
			idx = i;
			break;
		}
	}
	if (idx < 0)
		return skip("no node has a CPU");
	id = upool.node[idx].id;
	expect(!quiesce(), "the pool does not empty");
	expect(!upool_set(id, REFILL_TARGET, REFILL_LOW, REFILL_HIGH),
	       "node%d: cannot set the knobs", id);
	expect(!upool_wait_free(id, REFILL_TARGET, UINT64_MAX, FILL_TIMEOUT, NULL),
	       "node%d: pool not filled", id);
	expect(!upool_settle(300, 30), "the pool does not settle");
	expect(!snap_all(s1), "cannot read the statistics");

	err = upool_bind_node(id);
	expect(!err, "cannot run on node%d: %s", id, upool_errname(-err));
	err = upool_alloc(&buf, REFILL_BURST, UPOOL_ANY);
	upool_unbind();
	expect(!err, "node%d: %zu MiB burst failed: %s", id, (size_t)(REFILL_BURST / MiB),
	       upool_errname(-err));

	/*
	 * An allocation compares watermark_low with the per-CPU-batched count
	 * (unmapped_free_pages()): the pool may end a little below it.
	 */
	err = upool_wait_free(id, REFILL_LOW - MiB, REFILL_TARGET + pb - 1, FILL_TIMEOUT, &got);
	if (err) {
		tap_diag("node%d: free_bytes %llu after the burst, want %llu to %llu (watermark_low to pool_target)",
			 id, got, (u64_t)REFILL_LOW, (u64_t)REFILL_TARGET);
		ok = false;
	}
	if (upool_settle(300, 30)) {
		tap_diag("the pool does not settle after the burst");
		ok = false;
	}
	if (snap_all(s2)) {
		upool_free(&buf);
		return fail("cannot read the statistics");
	}
	upool_free(&buf);

	conv = delta(&s1[idx], &s2[idx], UPOOL_CONVERSIONS);
	flushes = delta(&s1[idx], &s2[idx], UPOOL_TLB_FLUSH_CONVERT);
	own = delta(&s1[idx], &s2[idx], UPOOL_ALLOC_CONVERT);
	tap_diag("node%d: %zu MiB burst: %llu pageblocks converted with %llu flushes; %llu by allocations that found the pool empty, the rest by the worker in %llu batches",
		 id, (size_t)(REFILL_BURST / MiB), conv, flushes, own, flushes - own);
	tap_diag("node%d: free_bytes %llu -> %llu, unmapped_bytes %llu -> %llu, alloc_pool +%llu, alloc_fail +%llu",
		 id, s1[idx].stat[UPOOL_FREE_BYTES], s2[idx].stat[UPOOL_FREE_BYTES],
		 s1[idx].stat[UPOOL_UNMAPPED_BYTES], s2[idx].stat[UPOOL_UNMAPPED_BYTES],
		 delta(&s1[idx], &s2[idx], UPOOL_ALLOC_POOL),
		 delta(&s1[idx], &s2[idx], UPOOL_ALLOC_FAIL));
	/*
	 * The burst outgrew the pool: what it took, less the pool's fall from
	 * pool_target to no lower than watermark_low, was converted.
	 */
	if (conv * pb < REFILL_BURST - REFILL_TARGET + REFILL_LOW - MiB) {
		tap_diag("want at least %llu pageblocks converted",
			 (u64_t)((REFILL_BURST - REFILL_TARGET + REFILL_LOW - MiB) / pb));
		ok = false;
	}
	/*
	 * An allocation that converts takes one block with one flush; the
	 * worker's batches hold 12 blocks after a fall below watermark_low, and
	 * fewer only for a top-up. Per-block flushing would give one each.
	 */
	if (own > conv || flushes < own || (conv - own) < 4 * (flushes - own)) {
		tap_diag("want the worker's batches to average 4 pageblocks or more per flush");
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- release ------------------------------------------------------------- */

static enum tap_result test_release(void)
{
	struct upool_snap s1[UPOOL_MAX_NODES], s2[UPOOL_MAX_NODES];
	u64_t v1[UPOOL_NR_VMSTAT], v2[UPOOL_NR_VMSTAT], rest_total = 0;
	long long mf0, mf1, mf2, tol, total = upool_meminfo("MemTotal");
	bool ok = true;
	int i, id;

	expect(!quiesce(), "the pool does not empty");
	mf0 = upool_meminfo("MemFree");
	for_each_node(i, id)
		expect(!fill_node(id, FILL_BYTES), "node%d: pool not filled", id);
	expect(!upool_settle(300, 30), "the pool does not settle after filling");
	mf1 = upool_meminfo("MemFree");
	expect(!snap_all(s1) && !upool_vmstat_all(v1), "cannot read the statistics");

	for_each_node(i, id)
		expect(!upool_set(id, 0, 0, 0), "node%d: cannot zero the knobs", id);
	for_each_node(i, id)
		expect(!upool_wait_free(id, 0, pb - 1, RELEASE_TIMEOUT, NULL),
		       "node%d: the pool was not released", id);
	expect(!upool_settle(300, 30), "the pool does not settle after the release");
	mf2 = upool_meminfo("MemFree");
	expect(!snap_all(s2) && !upool_vmstat_all(v2), "cannot read the statistics");

	for_each_node(i, id) {
		u64_t rest = delta(&s1[i], &s2[i], UPOOL_RESTORATIONS);
		u64_t gone = s1[i].stat[UPOOL_FREE_BYTES] - s2[i].stat[UPOOL_FREE_BYTES];
		u64_t unm = s1[i].stat[UPOOL_UNMAPPED_BYTES] - s2[i].stat[UPOOL_UNMAPPED_BYTES];

		rest_total += rest;
		tap_diag("node%d: free %llu -> %llu, unmapped %llu -> %llu, %llu restorations",
			 id, s1[i].stat[UPOOL_FREE_BYTES], s2[i].stat[UPOOL_FREE_BYTES],
			 s1[i].stat[UPOOL_UNMAPPED_BYTES], s2[i].stat[UPOOL_UNMAPPED_BYTES], rest);
		if (!rest || rest * pb != gone || unm != gone || delta(&s1[i], &s2[i], UPOOL_CONVERSIONS)) {
			tap_diag("node%d: want the freed bytes (%llu) = restorations x pageblock (%llu) = the drop of unmapped_bytes (%llu), no conversion",
				 id, gone, rest * pb, unm);
			ok = false;
		}
	}
	if (v2[UPOOL_VM_BLOCK_REMAP] - v1[UPOOL_VM_BLOCK_REMAP] != rest_total) {
		tap_diag("vmstat unmapped_block_remap moved by %llu, restorations by %llu",
			 v2[UPOOL_VM_BLOCK_REMAP] - v1[UPOOL_VM_BLOCK_REMAP], rest_total);
		ok = false;
	}
	tol = 8 * (long long)MiB + total / 100;
	tap_diag("MemFree: %lld MiB empty pool, %lld MiB filled, %lld MiB released (tolerance %lld MiB)",
		 mf0 / (long long)MiB, mf1 / (long long)MiB, mf2 / (long long)MiB,
		 tol / (long long)MiB);
	if (mf2 < mf0 - tol) {
		tap_diag("MemFree did not come back after the release");
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- late_free ------------------------------------------------------------ */

/* The kernel looks about a second after the free; TCG is slow. */
#define LATE_TIMEOUT		30.0

/* Unmapped bytes of node @id, or ~0 when unreadable. */
static u64_t unmapped_bytes(int id)
{
	u64_t v;

	return upool_stat(id, UPOOL_UNMAPPED_BYTES, &v) ? ~0ULL : v;
}

/* Wait until node @id is back to @want unmapped bytes; the seconds it took, or -1. */
static double wait_unmapped(int id, u64_t want)
{
	double t0 = upool_now();

	while (unmapped_bytes(id) != want) {
		if (upool_now() - t0 > LATE_TIMEOUT)
			return -1;
		upool_sleep_ms(50);
	}
	return upool_now() - t0;
}

/*
 * Bind to node @id and run on its @nth CPU only, so that every page goes
 * through the same CPU's LRU batch. 0, or a negative errno (-ENODEV: the
 * node has no such CPU).
 */
static int bind_one_cpu(int id, int nth)
{
	int idx = upool_node_index(id), err = upool_bind_node(id), c;
	cpu_set_t one;

	if (err)
		return err;
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &upool.node[idx].cpus) && !nth--) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
		}
	}
	return -ENODEV;
}

/* In a child on node @id: 64 KiB of unmapped memory, kept until exit. */
static int alloc_and_exit(int id)
{
	struct upool_buf b;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		if (bind_one_cpu(id, 0) || upool_alloc(&b, 64 * 1024, UPOOL_ANY))
			_exit(1);
		/* No munmap, no close: both happen at exit. */
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
}

/*
 * With every knob at 0, the pageblock an allocation converted goes back to
 * the direct map once its last page is freed, however late, with no knob
 * written afterwards:
 *  1. a process maps and touches unmapped memory and exits without
 *     unmapping or closing it: its pages are freed at exit, after its
 *     address space is gone;
 *  2. pages written with write(2) on one CPU and closed on another: the
 *     last of them wait in the first CPU's LRU batch (truncation drains
 *     only the batch of the CPU it runs on), which nothing here drains;
 *     lowering a knob frees them. The diagnostics say whether they were
 *     still held; a node with one CPU closes on the same CPU.
 */
static enum tap_result test_late_free(void)
{
	struct upool_snap s0, s1;
	struct upool_buf b;
	u64_t base, held;
	bool moved;
	double secs;
	int i, id = -1;

	expect(!quiesce(), "the pool does not empty");
	for_each_node(i, id) {
		if (!bind_one_cpu(id, 0))
			break;
	}
	if (i == upool.nr_nodes)
		return skip("no node has a CPU");
	base = unmapped_bytes(id);
	expect(!upool_snap(id, &s0), "cannot read node%d's statistics", id);

	/* 1. */
	expect(!alloc_and_exit(id), "the allocating child failed");
	expect(!upool_snap(id, &s1), "cannot read node%d's statistics", id);
	expect(delta(&s0, &s1, UPOOL_CONVERSIONS) >= 1,
	       "node%d: the child's allocation converted no pageblock", id);
	secs = wait_unmapped(id, base);
	expect(secs >= 0,
	       "node%d: %llu unmapped bytes %.0f s after the child exited with every knob at 0, %llu before it",
	       id, unmapped_bytes(id), LATE_TIMEOUT, base);
	tap_diag("node%d: freed at exit: back to %llu unmapped bytes %.1f s after the exit",
		 id, base, secs);

	/* 2. */
	expect(!upool_alloc(&b, 64 * 1024, upool.mfd_unmapped ? UPOOL_MFD_WRITE : UPOOL_SECRET),
	       "node%d: cannot allocate", id);
	moved = !bind_one_cpu(id, 1);
	upool_free(&b);
	upool_sleep_ms(2000);
	held = unmapped_bytes(id);
	expect(!upool_knob_set(id, UPOOL_HIGH, pb) && !upool_knob_set(id, UPOOL_HIGH, 0),
	       "node%d: cannot write watermark_high", id);
	secs = wait_unmapped(id, base);
	expect(secs >= 0, "node%d: %llu unmapped bytes %.0f s after close and a knob lowered, %llu before",
	       id, unmapped_bytes(id), LATE_TIMEOUT, base);
	tap_diag("node%d: written and closed on %s CPU: %s 2 s later; back to %llu unmapped bytes %.1f s after the knob write",
		 id, moved ? "another" : "the same",
		 held == base ? "already given back" : "still out of the direct map", base, secs);
	upool_unbind();
	return TAP_PASS;
}

/* --- sums ---------------------------------------------------------------- */

static enum tap_result test_sums(void)
{
	struct upool_snap g1, g2, n[UPOOL_MAX_NODES], sum;
	int i, id, k, attempt;

	for_each_node(i, id) {
		u64_t t = (i + 1) * 2 * MiB;

		expect(!upool_set(id, t, t, t + 2 * MiB), "node%d: cannot set the knobs", id);
	}
	for_each_node(i, id)
		expect(!upool_wait_free(id, (i + 1) * 2 * MiB, UINT64_MAX, FILL_TIMEOUT, NULL),
		       "node%d: pool not filled", id);
	for (attempt = 0; attempt < 20; attempt++) {
		expect(!upool_settle(200, 30), "the pool does not settle");
		expect(!upool_snap(-1, &g1) && !snap_all(n) && !upool_snap(-1, &g2),
		       "cannot read the statistics");
		if (!upool_snap_equal(&g1, &g2))
			continue;
		memset(&sum, 0, sizeof(sum));
		for_each_node(i, id) {
			for (k = 0; k < UPOOL_NR_KNOBS; k++)
				sum.knob[k] += n[i].knob[k];
			for (k = 0; k < UPOOL_NR_STATS; k++)
				sum.stat[k] += n[i].stat[k];
		}
		if (upool_snap_equal(&sum, &g1)) {
			upool_snap_diag("sum", -1, &g1);
			return TAP_PASS;
		}
		upool_snap_diag("global", -1, &g1);
		upool_snap_diag("sum of nodes", -1, &sum);
		/* A stable global view that differs from the sum: retry once more. */
	}
	return fail("the global files are not the sums of the nodes' (20 attempts)");
}

/* --- flush_on_free ------------------------------------------------------- */

static bool flush_bad(const char *word)
{
	char before[32], after[32];
	int err;

	if (upool_flush_mode(before, sizeof(before)))
		return false;
	err = upool_write_str(UPOOL_GLOBAL_DIR "/flush_on_free", word);
	if (upool_flush_mode(after, sizeof(after)))
		return false;
	if (err != -EINVAL || strcmp(before, after)) {
		tap_diag("flush_on_free = \"%.*s\": %s, %s -> %s; want EINVAL, unchanged",
			 (int)strcspn(word, "\n"), word, err ? upool_errname(-err) : "accepted",
			 before, after);
		return false;
	}
	return true;
}

static bool flush_set(const char *word, const char *want)
{
	char mode[32], raw[128];
	int err;

	err = upool_write_str(UPOOL_GLOBAL_DIR "/flush_on_free", word);
	if (err) {
		tap_diag("flush_on_free = \"%.*s\": %s", (int)strcspn(word, "\n"), word,
			 upool_errname(-err));
		return false;
	}
	if (upool_flush_mode(mode, sizeof(mode)))
		return false;
	upool_read_file(UPOOL_GLOBAL_DIR "/flush_on_free", raw, sizeof(raw));
	tap_diag("flush_on_free after \"%.*s\": %.*s", (int)strcspn(word, "\n"), word,
		 (int)strcspn(raw, "\n"), raw);
	if (strcmp(mode, want)) {
		tap_diag("flush_on_free selects %s, want %s", mode, want);
		return false;
	}
	/* The bracketed form must list both words. */
	if (strchr(raw, '[') && (!strstr(raw, "immediate") || !strstr(raw, "deferred"))) {
		tap_diag("flush_on_free lists \"%.*s\", want both words", (int)strcspn(raw, "\n"), raw);
		return false;
	}
	return true;
}

/* Fill, allocate, check the data, free, release: in the current mode. */
static bool flush_exercise(void)
{
	struct upool_buf b;
	int id = upool.node[0].id;
	size_t off;
	char *p;

	if (fill_node(id, 4 * MiB))
		return false;
	if (upool_alloc(&b, 4 * MiB, UPOOL_ANY))
		return false;
	if (!b.addr) {
		upool_free(&b);
		return true;
	}
	p = b.addr;
	for (off = 0; off < b.len; off += UPOOL_PAGE)
		if (p[off] != (char)(off / UPOOL_PAGE)) {
			tap_diag("unmapped memory lost its contents at offset %zu", off);
			upool_free(&b);
			return false;
		}
	upool_free(&b);
	if (upool_set(id, 0, 0, 0))
		return false;
	return !upool_wait_free(id, 0, pb - 1, RELEASE_TIMEOUT, NULL);
}

static enum tap_result test_flush_on_free(void)
{
	bool ok = true;

	ok &= flush_set("deferred", "deferred");
	ok &= flush_exercise();
	ok &= flush_bad("sometimes");
	ok &= flush_bad("\n");
	ok &= flush_bad("immediately");
	ok &= flush_bad("deferred x");
	ok &= flush_bad("[immediate]");
	ok &= flush_set("immediate\n", "immediate");
	ok &= flush_exercise();
	ok &= flush_bad("sometimes");
	ok &= flush_set("immediate", "immediate");
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- vmstat -------------------------------------------------------------- */

static enum tap_result test_vmstat(void)
{
	struct upool_snap g0, g1;
	u64_t v0[UPOOL_NR_VMSTAT], v1[UPOOL_NR_VMSTAT], dv[UPOOL_NR_VMSTAT];
	u64_t conv_before, conv_now;
	struct upool_buf bufs[16];
	int idx = -1, i, id, nbufs = 0, err;
	bool ok = true;

	for_each_node(i, id)
		if (upool.node[i].nr_cpus && idx < 0)
			idx = i;
	if (idx < 0)
		return skip("no node has a CPU");
	id = upool.node[idx].id;

	expect(!quiesce(), "the pool does not empty");
	expect(!upool_snap(-1, &g0) && !upool_vmstat_all(v0), "cannot read the statistics");

	/* Conversions by the worker, allocations from the pool... */
	expect(!upool_set(id, 8 * MiB, 0, 64 * MiB), "node%d: cannot set the knobs", id);
	expect(!upool_wait_free(id, 8 * MiB, UINT64_MAX, FILL_TIMEOUT, NULL),
	       "node%d: pool not filled", id);
	expect(!upool_knob_set(id, UPOOL_TARGET, 0), "cannot set pool_target");
	expect(!upool_settle(200, 30), "the pool does not settle");
	err = upool_bind_node(id);
	expect(!err, "cannot run on node%d: %s", id, upool_errname(-err));
	expect(!upool_alloc(&bufs[nbufs++], 4 * MiB, UPOOL_ANY), "allocation failed");
	/* ...then allocations that must convert: past the pool's 4 MiB left. */
	expect(!upool_stat(id, UPOOL_ALLOC_CONVERT, &conv_before), "cannot read alloc_convert");
	do {
		expect(!upool_alloc(&bufs[nbufs++], 2 * MiB, UPOOL_ANY), "allocation failed");
		expect(!upool_stat(id, UPOOL_ALLOC_CONVERT, &conv_now), "cannot read alloc_convert");
	} while (conv_now == conv_before && nbufs < (int)ARRAY_SIZE(bufs));
	upool_unbind();
	/* ...and restorations. */
	for (i = 0; i < nbufs; i++)
		upool_free(&bufs[i]);
	expect(!quiesce(), "the pool does not empty");
	expect(!upool_snap(-1, &g1) && !upool_vmstat_all(v1), "cannot read the statistics");

	for (i = 0; i < UPOOL_NR_VMSTAT; i++) {
		dv[i] = v1[i] - v0[i];
		tap_diag("%-24s +%llu", upool_vmstat_names[i], dv[i]);
	}
	upool_snap_diag("before", -1, &g0);
	upool_snap_diag("after", -1, &g1);

#define SAME(vm, st, scale)							\
	do {									\
		if (dv[vm] * (scale) != delta(&g0, &g1, st)) {			\
			tap_diag("%s moved by %llu (x%llu), stats/%s by %llu",	\
				 upool_vmstat_names[vm], dv[vm], (u64_t)(scale),\
				 upool_stat_names[st], delta(&g0, &g1, st));	\
			ok = false;						\
		}								\
	} while (0)
	SAME(UPOOL_VM_BLOCK_UNMAP, UPOOL_CONVERSIONS, 1);
	SAME(UPOOL_VM_BLOCK_REMAP, UPOOL_RESTORATIONS, 1);
	SAME(UPOOL_VM_ALLOC_POOL, UPOOL_ALLOC_POOL, 1);
	SAME(UPOOL_VM_ALLOC_CONVERT, UPOOL_ALLOC_CONVERT, 1);
	SAME(UPOOL_VM_ALLOC_FAIL, UPOOL_ALLOC_FAIL, 1);
	SAME(UPOOL_VM_BLOCK_RECLAIM, UPOOL_RELEASED_BYTES, pb);
	SAME(UPOOL_VM_MERMAP_FLUSH, UPOOL_TLB_FLUSH_MERMAP, 1);
#undef SAME
	/* unmapped_tlb_flush may also count the flushes of restorations. */
	if (dv[UPOOL_VM_TLB_FLUSH] < delta(&g0, &g1, UPOOL_TLB_FLUSH_CONVERT)) {
		tap_diag("unmapped_tlb_flush moved by %llu, less than stats/tlb_flush_convert (%llu)",
			 dv[UPOOL_VM_TLB_FLUSH], delta(&g0, &g1, UPOOL_TLB_FLUSH_CONVERT));
		ok = false;
	}
	/* What the sequence above must have moved. */
	if (!delta(&g0, &g1, UPOOL_CONVERSIONS) || !delta(&g0, &g1, UPOOL_RESTORATIONS) ||
	    !delta(&g0, &g1, UPOOL_ALLOC_POOL) || !delta(&g0, &g1, UPOOL_ALLOC_CONVERT) ||
	    !delta(&g0, &g1, UPOOL_TLB_FLUSH_CONVERT) || !dv[UPOOL_VM_TLB_FLUSH]) {
		tap_diag("want conversions, restorations, alloc_pool, alloc_convert and TLB flushes all to have moved");
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- concurrent writers -------------------------------------------------- */

#define ROUNDS		10
#define ROUND_MS	200

struct hammer {
	pthread_barrier_t start, end;
	volatile int stop;
	double round_end;
	/* Results, one slot per thread. */
	unsigned long ops[4], einval[4], errors[4];
};

static struct hammer H;

static unsigned int rnd(unsigned int *seed, unsigned int n)
{
	return rand_r(seed) % n;
}

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void hammer_op(int who, unsigned int *seed)
{
	int id = upool.node[rnd(seed, upool.nr_nodes)].id, err = 0;
	char path[256], val[32];

	/* Values in half pageblocks, up to 16 MiB: rounding is exercised too. */
	snprintf(val, sizeof(val), "%uK", rnd(seed, 17) * 1024);
	switch (who) {
	case 0:
		err = upool_write_str(node_path(path, sizeof(path), id, "watermark_low"), val);
		break;
	case 1:
		err = upool_write_str(node_path(path, sizeof(path), id, "watermark_high"), val);
		break;
	case 2:
		if (rnd(seed, 8))
			err = upool_write_str(node_path(path, sizeof(path), id, "pool_target"), val);
		else
			err = upool_write_str(UPOOL_GLOBAL_DIR "/flush_on_free",
					      rnd(seed, 2) ? "deferred" : "immediate");
		break;
	case 3: {
		struct upool_buf b;

		err = upool_alloc(&b, (1 + rnd(seed, 4)) * MiB, UPOOL_ANY);
		if (!err)
			upool_free(&b);
		break;
	}
	}
	/* Only the watermarks may refuse: a write can cross the other one. */
	__atomic_fetch_add(&H.ops[who], 1, __ATOMIC_RELAXED);
	if (err == -EINVAL && who < 2)
		__atomic_fetch_add(&H.einval[who], 1, __ATOMIC_RELAXED);
	else if (err)
		__atomic_fetch_add(&H.errors[who], 1, __ATOMIC_RELAXED);
}

static void *hammer_thread(void *arg)
{
	int who = (int)(intptr_t)arg;
	unsigned int seed = 12345 + who;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	/* Writers on the first CPU, the allocator on the last one. */
	pin_cpu(who == 3 && ncpu > 1 ? (int)ncpu - 1 : 0);
	for (;;) {
		pthread_barrier_wait(&H.start);
		if (H.stop)
			break;
		while (upool_now() < H.round_end)
			hammer_op(who, &seed);
		pthread_barrier_wait(&H.end);
	}
	return NULL;
}

static bool check_knobs(int round)
{
	bool ok = true;
	int i, id, k;

	for_each_node(i, id) {
		u64_t v[UPOOL_NR_KNOBS];

		for (k = 0; k < UPOOL_NR_KNOBS; k++)
			if (upool_knob_get(id, k, &v[k]))
				return false;
		for (k = 0; k < UPOOL_NR_KNOBS; k++)
			if (v[k] % pb) {
				tap_diag("round %d: node%d %s = %llu, not whole pageblocks",
					 round, id, upool_knob_names[k], v[k]);
				ok = false;
			}
		if (v[UPOOL_LOW] > v[UPOOL_HIGH]) {
			tap_diag("round %d: node%d watermark_low %llu > watermark_high %llu",
				 round, id, v[UPOOL_LOW], v[UPOOL_HIGH]);
			ok = false;
		}
	}
	return ok;
}

/* Counters never go back; unmapped_bytes moves only by whole pageblocks. */
static bool check_counters(const struct upool_snap *a, const struct upool_snap *b, int id)
{
	static const enum upool_stat mono[] = {
		UPOOL_ALLOC_POOL, UPOOL_ALLOC_CONVERT, UPOOL_ALLOC_FAIL, UPOOL_CONVERSIONS,
		UPOOL_RESTORATIONS, UPOOL_TLB_FLUSH_CONVERT, UPOOL_TLB_FLUSH_MERMAP,
		UPOOL_RELEASED_BYTES,
	};
	bool ok = true;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(mono); k++)
		if (b->stat[mono[k]] < a->stat[mono[k]]) {
			tap_diag("node%d: %s went back from %llu to %llu", id,
				 upool_stat_names[mono[k]], a->stat[mono[k]], b->stat[mono[k]]);
			ok = false;
		}
	return ok;
}

static bool check_settled(const struct upool_snap *s, int id)
{
	if (s->stat[UPOOL_FREE_BYTES] > s->stat[UPOOL_UNMAPPED_BYTES] ||
	    s->stat[UPOOL_UNMAPPED_BYTES] % pb || s->stat[UPOOL_FREE_BYTES] % UPOOL_PAGE) {
		upool_snap_diag("insane:", id, s);
		tap_diag("node%d: want free_bytes <= unmapped_bytes, unmapped_bytes in pageblocks, free_bytes in pages",
			 id);
		return false;
	}
	return true;
}

static enum tap_result test_concurrent(void)
{
	struct upool_snap s0[UPOOL_MAX_NODES], s1[UPOOL_MAX_NODES], s2[UPOOL_MAX_NODES];
	pthread_t th[4];
	bool ok = true;
	int i, id, r, w;

	expect(!quiesce(), "the pool does not empty");
	expect(!snap_all(s0), "cannot read the statistics");
	for_each_node(i, id)
		ok &= check_settled(&s0[i], id);

	memset(&H, 0, sizeof(H));
	pthread_barrier_init(&H.start, NULL, 5);
	pthread_barrier_init(&H.end, NULL, 5);
	for (w = 0; w < 4; w++)
		expect(!pthread_create(&th[w], NULL, hammer_thread, (void *)(intptr_t)w),
		       "pthread_create failed");
	for (r = 0; r < ROUNDS; r++) {
		H.round_end = upool_now() + ROUND_MS / 1000.0;
		pthread_barrier_wait(&H.start);
		pthread_barrier_wait(&H.end);
		/* Writers paused: the knobs must be consistent now. */
		ok &= check_knobs(r);
		expect(!snap_all(s1), "cannot read the statistics");
		for_each_node(i, id)
			ok &= check_counters(r ? &s2[i] : &s0[i], &s1[i], id);
		memcpy(s2, s1, sizeof(s1));
	}
	H.stop = 1;
	pthread_barrier_wait(&H.start);
	for (w = 0; w < 4; w++)
		pthread_join(th[w], NULL);
	tap_diag("writes: low %lu (%lu EINVAL), high %lu (%lu EINVAL), target/flush %lu; allocations %lu",
		 H.ops[0], H.einval[0], H.ops[1], H.einval[1], H.ops[2], H.ops[3]);
	for (w = 0; w < 4; w++)
		if (H.errors[w]) {
			tap_diag("thread %d: %lu operations failed unexpectedly", w, H.errors[w]);
			ok = false;
		}
	if (!H.ops[0] || !H.ops[1] || !H.ops[2] || !H.ops[3]) {
		tap_diag("a thread did nothing");
		ok = false;
	}

	/* Back to 0 and empty: the books must balance. */
	expect(!quiesce(), "the pool does not empty after the storm");
	expect(!snap_all(s1), "cannot read the statistics");
	for_each_node(i, id) {
		long long base0 = (long long)s0[i].stat[UPOOL_UNMAPPED_BYTES] -
			(long long)(s0[i].stat[UPOOL_CONVERSIONS] - s0[i].stat[UPOOL_RESTORATIONS]) * (long long)pb;
		long long base1 = (long long)s1[i].stat[UPOOL_UNMAPPED_BYTES] -
			(long long)(s1[i].stat[UPOOL_CONVERSIONS] - s1[i].stat[UPOOL_RESTORATIONS]) * (long long)pb;

		ok &= check_settled(&s1[i], id);
		ok &= check_counters(&s0[i], &s1[i], id);
		if (s1[i].knob[UPOOL_TARGET] || s1[i].knob[UPOOL_LOW] || s1[i].knob[UPOOL_HIGH]) {
			upool_snap_diag("after reset", id, &s1[i]);
			ok = false;
		}
		if (base0 != base1) {
			upool_snap_diag("before", id, &s0[i]);
			upool_snap_diag("after", id, &s1[i]);
			tap_diag("node%d: unmapped_bytes - (conversions - restorations) x pageblock changed: %lld -> %lld",
				 id, base0, base1);
			ok = false;
		}
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- driver -------------------------------------------------------------- */

static const struct subtest subtests[] = {
	{ "layout", "sysfs layout: every file present with its mode, pageblock_bytes is 2 MiB",
	  test_layout },
	{ "parse", "knobs take bytes with K/M/G suffixes and read back rounded up to pageblocks",
	  test_parse },
	{ "bad_inputs", "invalid knob writes fail with EINVAL and change nothing", test_bad_inputs },
	{ "nonroot", "unprivileged users read every file and write none", test_nonroot },
	{ "flush_on_free", "flush_on_free switches between immediate and deferred, refuses other words",
	  test_flush_on_free },
	{ "sums", "global knobs and statistics are the sums of the nodes'", test_sums },
	{ "fill", "pool_target fills each node's pool by conversions, other nodes untouched",
	  test_fill },
	{ "fill_memfree", "a filled pool is not counted in MemFree", test_fill_memfree },
	{ "drain", "MFD_UNMAPPED and memfd_secret allocations are served from the node's pool",
	  test_drain },
	{ "refill", "secmemd's knobs under a burst: batched refills, then back to pool_target",
	  test_refill },
	{ "release", "pool_target 0 gives the pool back: restorations, MemFree recovers",
	  test_release },
	{ "late_free", "a pageblock emptied at exit or after close goes back with every knob at 0",
	  test_late_free },
	{ "vmstat", "/proc/vmstat unmapped_* events move with the sysfs statistics", test_vmstat },
	{ "concurrent", "concurrent knob writers and allocations keep the invariants",
	  test_concurrent },
};

int main(int argc, char **argv)
{
	unsigned int i, planned;

	planned = subtest_select(subtests, ARRAY_SIZE(subtests), argc, argv);

	upool_init_or_skip(false);
	pb = upool.pageblock;

	tap_plan(planned);
	tap_diag("pageblock %llu bytes, %d node(s) with unmapped/, flush_on_free %s, MFD_UNMAPPED %s",
		 pb, upool.nr_nodes, upool.flush_saved,
		 upool.mfd_unmapped ? "supported" : "refused: memfd_secret stands in");
	upool_install_restore();
	if (upool_reset() || upool_wait_empty(RELEASE_TIMEOUT))
		tap_diag("warning: the pool was not empty at the start");

	for (i = 0; i < ARRAY_SIZE(subtests); i++) {
		enum tap_result res;

		if (!subtest_selected(&subtests[i], argc, argv))
			continue;
		res = subtest_run(&subtests[i], SUBTEST_TIMEOUT);
		if (upool_reset() || upool_wait_empty(RELEASE_TIMEOUT)) {
			tap_diag("%s: the knobs could not be reset or the pool did not empty",
				 subtests[i].id);
			res = TAP_FAIL;
		}
		tap_report(res, subtests[i].name, skip_reason);
	}
	return tap_finish();
}
