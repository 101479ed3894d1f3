// SPDX-License-Identifier: GPL-2.0
/*
 * A pool of free unmapped pageblocks must never cause an OOM kill that not
 * keeping it would have avoided: under memory pressure the kernel's
 * shrinker gives free unmapped pageblocks back to the direct map, down to
 * watermark_low.
 *
 * One scenario, reported as several results:
 *
 *  1. every node's pool_target is set to 40% of the node's memory (high the
 *     same, low 8 MiB) and the pool fills;
 *  2. a child allocates and writes anonymous memory: up to 85% of MemTotal,
 *     but no more than what was available before the pool was filled minus
 *     a margin, and much more than what is left outside the pool; there is
 *     no swap, so it fits only if the pool is released;
 *  3. the child must finish (no OOM kill: its exit status, and oom_kill in
 *     /proc/vmstat), the kernel must have released pool memory
 *     (stats/released_bytes, unmapped_block_reclaim), no node's free pool
 *     may have gone below watermark_low, and a RECLAIM event must have come
 *     on the "events" netlink group;
 *  4. every knob goes back to 0 and the pool empties.
 *
 * The knobs are reset on exit and on SIGTERM too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "secmem_genl.h"
#include "tap.h"
#include "upool.h"
#include "upool_nl.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define MiB			UPOOL_MiB

#define POOL_PERCENT		40
#define HOG_PERCENT		85
#define LOW_BYTES		(8 * MiB)
#define FILL_TIMEOUT		90.0
#define HOG_TIMEOUT		180.0
#define RELEASE_TIMEOUT		60.0
#define HOG_CHUNK		(8 * MiB)

static u64_t pb;

/* What the hog child reports through shared memory. */
struct hog_progress {
	u64_t done;		/* bytes populated */
	int err;		/* errno of a failed populate, 0 if none */
	int method;		/* 1: MADV_POPULATE_WRITE, 2: touching pages */
};

static void set_oom_score_adj(const char *val)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, val, strlen(val)) < 0)
		tap_diag("cannot set oom_score_adj %s: %m", val);
	close(fd);
}

static void hog_child(size_t len, volatile struct hog_progress *pr, int ready_fd, int ctl_fd)
{
	char *p;
	size_t off;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent protects itself; the hog is an ordinary process. */
	set_oom_score_adj("0");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		pr->err = errno;
		_exit(2);
	}
	pr->method = 1;
	for (off = 0; off < len; off += HOG_CHUNK) {
		size_t n = len - off < HOG_CHUNK ? len - off : HOG_CHUNK;

		if (pr->method == 1 && madvise(p + off, n, MADV_POPULATE_WRITE)) {
			if (errno != EINVAL) {
				pr->err = errno;
				_exit(3);
			}
			pr->method = 2;
		}
		if (pr->method == 2) {
			size_t i;

			for (i = 0; i < n; i += UPOOL_PAGE)
				((volatile char *)p)[off + i] = 1;
		}
		pr->done = off + n;
	}
	/* Held: tell the parent, and keep it until the parent says so. */
	if (write(ready_fd, "h", 1) != 1)
		_exit(4);
	while (read(ctl_fd, &c, 1) > 0)
		;
	_exit(0);
}

struct result {
	const char *name;
	enum tap_result res;
	char why[160];
};

enum {
	R_FILLED,
	R_NO_OOM,
	R_RELEASED,
	R_KEEPS_LOW,
	R_RELEASED_VMSTAT,
	R_EVENT,
	R_RESTORED,
	NR_RESULTS,
};

static struct result results[NR_RESULTS] = {
	[R_FILLED] = { "pool_filled: every node's pool reaches 40% of the node's memory" },
	[R_NO_OOM] = { "hog_not_oom_killed: the hog finishes, oom_kill does not move" },
	[R_RELEASED] = { "pool_released_under_pressure: released_bytes or unmapped_block_reclaim grows" },
	[R_KEEPS_LOW] = { "shrinker_keeps_watermark_low: no node's free pool goes below watermark_low" },
	[R_RELEASED_VMSTAT] = { "released_bytes_matches_vmstat: released_bytes = unmapped_block_reclaim x pageblock" },
	[R_EVENT] = { "reclaim_event: a RECLAIM event names a node with a pool" },
	[R_RESTORED] = { "knobs_restored: every knob back to 0, the pool empties" },
};

static __attribute__((format(printf, 3, 4)))
void set_result(int r, enum tap_result res, const char *fmt, ...)
{
	va_list ap;

	results[r].res = res;
	va_start(ap, fmt);
	vsnprintf(results[r].why, sizeof(results[r].why), fmt, ap);
	va_end(ap);
	if (res == TAP_FAIL)
		tap_diag("%s: %s", results[r].name, results[r].why);
}

static int report_all(void)
{
	int r;

	for (r = 0; r < NR_RESULTS; r++)
		tap_report(results[r].res, results[r].name,
			   results[r].res == TAP_SKIP ? results[r].why : NULL);
	return tap_finish();
}

/* Fail whatever was not decided yet, with @why. */
static int bail_rest(const char *why)
{
	int r;

	for (r = 0; r < NR_RESULTS; r++)
		if (!results[r].why[0])
			set_result(r, TAP_FAIL, "not reached: %s", why);
	upool_reset();
	return report_all();
}

int main(void)
{
	u64_t target[UPOOL_MAX_NODES], filled[UPOOL_MAX_NODES], min_free[UPOOL_MAX_NODES];
	u64_t v0[UPOOL_NR_VMSTAT], v1[UPOOL_NR_VMSTAT], rel0, rel1, total_filled = 0;
	long long total, avail0, avail1, oom0, oom1, hog, margin, cap, outside;
	volatile struct hog_progress *pr;
	int ready[2], ctl[2], i, id, err, status = 0, r, events = 0, bad_events = 0;
	struct nlt_listener *l;
	bool filled_all = true, held = false, listening;
	double start, end, next_diag;
	pid_t pid;

	upool_init_or_skip(false);
	pb = upool.pageblock;
	if (!upool.nr_nodes)
		tap_bail("no node has an unmapped/ directory");
	pr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	l = malloc(sizeof(*l));
	if (pr == MAP_FAILED || !l)
		tap_bail("out of memory");

	tap_plan(NR_RESULTS);
	upool_install_restore();
	/* The hog must be the OOM killer's choice, never this process. */
	set_oom_score_adj("-1000");

	/* A clean start: empty pool, nothing moving. */
	if (upool_reset() || upool_wait_empty(RELEASE_TIMEOUT) || upool_settle(300, 30))
		return bail_rest("the pool does not empty at the start");
	total = upool_meminfo("MemTotal");
	avail0 = upool_meminfo("MemAvailable");
	oom0 = upool_vmstat("oom_kill");
	if (total <= 0 || avail0 <= 0 || oom0 < 0)
		return bail_rest("cannot read MemTotal, MemAvailable or oom_kill");
	if (upool_vmstat_all(v0) || upool_stat(-1, UPOOL_RELEASED_BYTES, &rel0))
		return bail_rest("cannot read the statistics");
	tap_diag("MemTotal %lld MiB, MemAvailable %lld MiB with an empty pool, %d node(s)",
		 total / (long long)MiB, avail0 / (long long)MiB, upool.nr_nodes);

	err = nlt_listen(l);
	listening = !err;
	if (!listening)
		set_result(R_EVENT, TAP_FAIL, "cannot subscribe to %s/%s: %s", SECMEM_GENL_NAME,
			   SECMEM_GENL_MCGRP_EVENTS, nlt_err(err));

	/* 1. Fill: 40% of each node. */
	start = upool_now();
	for (i = 0; i < upool.nr_nodes; i++) {
		u64_t mem = upool.node[i].mem_total ? upool.node[i].mem_total :
						      (u64_t)total / upool.nr_nodes;

		id = upool.node[i].id;
		target[i] = mem * POOL_PERCENT / 100 / pb * pb;
		if (upool_set(id, target[i], LOW_BYTES, target[i]))
			return bail_rest("the knobs refuse a 40% pool");
	}
	for (i = 0; i < upool.nr_nodes; i++) {
		double left = FILL_TIMEOUT - (upool_now() - start);

		id = upool.node[i].id;
		if (upool_wait_free(id, target[i], UINT64_MAX, left > 1 ? left : 1, &filled[i]))
			filled_all = false;
		total_filled += filled[i];
		min_free[i] = filled[i];
		tap_diag("node%d: target %llu MiB, %llu MiB free unmapped", id,
			 target[i] / MiB, filled[i] / MiB);
	}
	tap_diag("filling took %.1f s", upool_now() - start);
	if (filled_all)
		set_result(R_FILLED, TAP_PASS, "filled");
	else
		set_result(R_FILLED, TAP_FAIL, "a node's pool did not reach its target in %.0f s",
			   FILL_TIMEOUT);
	if (upool_settle(300, 30))
		tap_diag("warning: the pool does not settle after filling");
	for (i = 0; i < upool.nr_nodes; i++)
		upool_stat(upool.node[i].id, UPOOL_FREE_BYTES, &filled[i]);
	avail1 = upool_meminfo("MemAvailable");

	/*
	 * 2. The hog: as much as fits once the pool (all but watermark_low)
	 * is released, less a margin for the kernel; 85% of MemTotal at most.
	 */
	margin = (long long)(64 * MiB) > total / 16 ? (long long)(64 * MiB) : total / 16;
	margin += upool.nr_nodes * (long long)LOW_BYTES;
	cap = total * HOG_PERCENT / 100;
	hog = avail0 - margin < cap ? avail0 - margin : cap;
	hog = hog / (long long)HOG_CHUNK * (long long)HOG_CHUNK;
	outside = avail0 - (long long)total_filled;
	tap_diag("pool %llu MiB; MemAvailable now %lld MiB; hog %lld MiB (margin %lld MiB), %lld MiB more than what is outside the pool",
		 total_filled / MiB, avail1 / (long long)MiB, hog / (long long)MiB,
		 margin / (long long)MiB, (hog - outside) / (long long)MiB);
	if (hog <= 0)
		return bail_rest("no memory for a hog");
	if (hog - outside < (long long)(32 * MiB))
		tap_diag("warning: the pool is too small for the hog to need it: the release checks may fail");

	if (listening)
		nlt_clear(l);
	if (pipe(ready) || pipe(ctl))
		return bail_rest("pipe failed");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return bail_rest("fork failed");
	if (!pid) {
		close(ready[0]);
		close(ctl[1]);
		hog_child(hog, pr, ready[1], ctl[0]);
	}
	close(ready[1]);
	close(ctl[0]);

	start = upool_now();
	end = start + HOG_TIMEOUT;
	next_diag = start + 10;
	while (upool_now() < end) {
		struct pollfd pfd = { .fd = ready[0], .events = POLLIN };
		char c;
		int n;

		n = poll(&pfd, 1, 500);
		for (i = 0; i < upool.nr_nodes; i++) {
			u64_t f;

			if (!upool_stat(upool.node[i].id, UPOOL_FREE_BYTES, &f) && f < min_free[i])
				min_free[i] = f;
		}
		if (listening)
			nlt_poll(l, 0);
		if (upool_now() > next_diag) {
			tap_diag("%.0f s: hog at %llu of %lld MiB", upool_now() - start,
				 pr->done / MiB, hog / (long long)MiB);
			next_diag += 10;
		}
		if (n == 1) {
			if (read(ready[0], &c, 1) == 1)
				held = true;
			break;	/* held, or the child is gone (EOF) */
		}
	}
	tap_diag("hog: %llu of %lld MiB in %.1f s (%s)%s", pr->done / MiB, hog / (long long)MiB,
		 upool_now() - start, pr->method == 2 ? "touching pages" : "MADV_POPULATE_WRITE",
		 held ? ", holding it" : "");
	/* While it holds everything: a last look at the pool. */
	for (i = 0; i < upool.nr_nodes; i++) {
		u64_t f;

		if (!upool_stat(upool.node[i].id, UPOOL_FREE_BYTES, &f) && f < min_free[i])
			min_free[i] = f;
	}
	close(ctl[1]);
	if (!held)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		tap_diag("waitpid: %m");
	close(ready[0]);
	oom1 = upool_vmstat("oom_kill");
	if (WIFSIGNALED(status))
		tap_diag("the hog was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status))
		tap_diag("the hog exited with %d (%s)", WEXITSTATUS(status),
			 pr->err ? upool_errname(pr->err) : "no error recorded");

	if (held && WIFEXITED(status) && !WEXITSTATUS(status) && oom1 == oom0)
		set_result(R_NO_OOM, TAP_PASS, "survived");
	else
		set_result(R_NO_OOM, TAP_FAIL, "%s; status %#x; oom_kill %lld -> %lld",
			   held ? "held its memory" : "did not get its memory", status, oom0, oom1);

	/* 3. What the kernel did meanwhile. */
	if (listening)
		for (i = 0; i < 20; i++)
			nlt_poll(l, 100);
	if (upool_vmstat_all(v1) || upool_stat(-1, UPOOL_RELEASED_BYTES, &rel1))
		return bail_rest("cannot read the statistics");
	tap_diag("released_bytes +%llu MiB, unmapped_block_reclaim +%llu, unmapped_block_remap +%llu",
		 (rel1 - rel0) / MiB, v1[UPOOL_VM_BLOCK_RECLAIM] - v0[UPOOL_VM_BLOCK_RECLAIM],
		 v1[UPOOL_VM_BLOCK_REMAP] - v0[UPOOL_VM_BLOCK_REMAP]);
	if (rel1 > rel0 || v1[UPOOL_VM_BLOCK_RECLAIM] > v0[UPOOL_VM_BLOCK_RECLAIM])
		set_result(R_RELEASED, TAP_PASS, "released");
	else
		set_result(R_RELEASED, TAP_FAIL, "no pool memory released under pressure");
	if ((rel1 - rel0) == (v1[UPOOL_VM_BLOCK_RECLAIM] - v0[UPOOL_VM_BLOCK_RECLAIM]) * pb)
		set_result(R_RELEASED_VMSTAT, TAP_PASS, "equal");
	else
		set_result(R_RELEASED_VMSTAT, TAP_FAIL, "released_bytes +%llu, unmapped_block_reclaim +%llu pageblocks",
			   rel1 - rel0, v1[UPOOL_VM_BLOCK_RECLAIM] - v0[UPOOL_VM_BLOCK_RECLAIM]);

	if (rel1 == rel0 && v1[UPOOL_VM_BLOCK_RECLAIM] == v0[UPOOL_VM_BLOCK_RECLAIM]) {
		set_result(R_KEEPS_LOW, TAP_SKIP, "nothing was released");
	} else {
		bool ok = true;

		for (i = 0; i < upool.nr_nodes; i++) {
			u64_t floor = filled[i] < LOW_BYTES ? filled[i] : LOW_BYTES;

			tap_diag("node%d: free unmapped went from %llu MiB down to %llu MiB (watermark_low %llu MiB)",
				 upool.node[i].id, filled[i] / MiB, min_free[i] / MiB, LOW_BYTES / MiB);
			ok &= min_free[i] >= floor;
		}
		set_result(R_KEEPS_LOW, ok ? TAP_PASS : TAP_FAIL,
			   ok ? "kept" : "a node's free pool went below watermark_low");
	}

	if (listening) {
		for (i = 0; i < l->count; i++) {
			const struct nlt_msg *m = &l->ev[i];

			if (m->cmd != SECMEM_CMD_EVENT_RECLAIM)
				continue;
			nlt_msg_diag("event", m);
			if (nlt_has(m, SECMEM_ATTR_NODE) &&
			    upool_node_index((int)m->val[SECMEM_ATTR_NODE]) >= 0)
				events++;
			else
				bad_events++;
		}
		tap_diag("%d event(s) received, %d RECLAIM with a managed node, %d without",
			 l->count, events, bad_events);
		if (events && !bad_events && !l->bad)
			set_result(R_EVENT, TAP_PASS, "received");
		else
			set_result(R_EVENT, TAP_FAIL, "%d good and %d bad RECLAIM events, %d malformed",
				   events, bad_events, l->bad);
		nlt_unlisten(l);
	}

	/* 4. Back to 0. */
	err = upool_reset();
	if (!err)
		err = upool_wait_empty(RELEASE_TIMEOUT);
	for (i = 0; !err && i < upool.nr_nodes; i++) {
		struct upool_snap s;

		if (upool_snap(upool.node[i].id, &s) || s.knob[UPOOL_TARGET] ||
		    s.knob[UPOOL_LOW] || s.knob[UPOOL_HIGH])
			err = -EIO;
	}
	if (err)
		set_result(R_RESTORED, TAP_FAIL, "the knobs or the pool did not go back to 0");
	else
		set_result(R_RESTORED, TAP_PASS, "restored");
	set_oom_score_adj("0");

	for (r = 0; r < NR_RESULTS; r++)
		if (!results[r].why[0])
			set_result(r, TAP_FAIL, "not decided");
	return report_all();
}
