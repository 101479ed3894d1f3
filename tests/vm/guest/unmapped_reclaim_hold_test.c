// SPDX-License-Identifier: GPL-2.0
/*
 * The pool worker and the shrinker must not ping-pong under steady memory
 * pressure. An allocation that leaves the pool below watermark_low runs
 * the worker, which refills it to pool_target; the shrinker's next pass
 * gives all of that back down to watermark_low; each round zeroes
 * pageblocks and flushes every TLB twice. After a reclaim the worker
 * refills only up to watermark_low, for a hold that doubles while
 * reclaims go on (mm/unmapped_pool.c).
 *
 *  1. fill     the first node's pool: pool_target and watermark_high
 *              POOL_BYTES, watermark_low LOW_BYTES; it fills.
 *  2. churn    once every CYCLE_MS, as on a busy server under steady
 *              memory pressure:
 *              - a reclaim pass: vm.drop_caches=2 runs the shrinkers, as
 *                kswapd and direct reclaim do on every pass, and the
 *                shrinker gives the pool back down to watermark_low (real
 *                pressure is unmapped_pressure_test's);
 *              - a secret user faults in just enough pageblocks of an
 *                MFD_UNMAPPED file to leave the pool one pageblock below
 *                watermark_low, which runs the worker, and punches them
 *                out again half a cycle later.
 *              After WARMUP_S the node's conversions and released
 *              pageblocks are counted for WINDOW_S and printed per
 *              minute. The shrinker must have released pool memory, and
 *              the worker must convert no more than MAX_CONV_PER_DIP
 *              pageblocks per dip below watermark_low, plus one refill of
 *              the pool's refillable part (pool_target - watermark_low)
 *              per hold that could end in the window. A worker that
 *              refills to pool_target after every dip converts that part
 *              every cycle.
 *  3. knob     a write of pool_target ends the hold: the pool fills again
 *              within FILL_TIMEOUT.
 *
 * The knobs are reset on exit and on SIGTERM too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "tap.h"
#include "upool.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE	0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE	0x02
#endif

#define MiB		UPOOL_MiB
#define POOL_BYTES	(48 * MiB)
#define LOW_BYTES	(4 * MiB)
#define CYCLE_MS	1000
/* The most the secret user holds at once. */
#define MAP_BYTES	(8 * MiB)
#define WARMUP_S	10.0
#define WINDOW_S	30.0
#define FILL_TIMEOUT	60.0
/* The worker's refill after a dip below watermark_low, with some slack. */
#define MAX_CONV_PER_DIP	3
/* Holds that can end in the window, at most one refill of the pool each. */
#define MAX_HOLD_ENDS	2

static int populate(volatile char *p, size_t len)
{
	if (!madvise((void *)p, len, MADV_POPULATE_WRITE))
		return 0;
	if (errno != EINVAL)
		return -1;
	for (size_t i = 0; i < len; i += UPOOL_PAGE)
		p[i] = 1;
	return 0;
}

/*
 * Cycles until @until (upool_now()): a reclaim pass, then just enough
 * pageblocks of @map faulted in to leave the pool one pageblock below
 * watermark_low, punched out of @fd half a cycle later. Returns the
 * cycles, or -1.
 */
static long churn(int node, int fd, volatile char *map, u64_t pb, double until)
{
	long cycles = 0;

	while (upool_now() < until) {
		u64_t n, free = 0;

		if (upool_write_str("/proc/sys/vm/drop_caches", "2") ||
		    upool_stat(node, UPOOL_FREE_BYTES, &free)) {
			tap_diag("vm.drop_caches=2, or the pool's free_bytes: %m");
			return -1;
		}
		n = free > LOW_BYTES ? (free - LOW_BYTES) / pb + 1 : 1;
		if (n > MAP_BYTES / pb)
			n = MAP_BYTES / pb;
		if (populate(map, n * pb)) {
			tap_diag("faulting in the secret file: %m");
			return -1;
		}
		cycles++;
		if (getenv("HOLD_TRACE")) {
			u64_t fr = 0, cv = 0, rl = 0;

			upool_stat(node, UPOOL_FREE_BYTES, &fr);
			upool_stat(node, UPOOL_CONVERSIONS, &cv);
			upool_stat(node, UPOOL_RELEASED_BYTES, &rl);
			tap_diag("trace %.1f: pool %llu MiB, conversions %llu, released %llu MiB",
				 upool_now(), fr / MiB, cv, rl / MiB);
		}
		upool_sleep_ms(CYCLE_MS / 2);
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			      (off_t)(n * pb))) {
			tap_diag("punching the secret file: %m");
			return -1;
		}
		upool_sleep_ms(CYCLE_MS / 2);
	}
	return cycles;
}

int main(void)
{
	u64_t free0, conv0, conv1, rel0, rel1, relstart, pb, part;
	double t, conv_min, rel_min, dip_min, limit;
	volatile char *map;
	int node, fd;
	long dips;
	bool ok;

	upool_init_or_skip(true);
	if (!upool.nr_nodes)
		tap_bail("no node has an unmapped/ directory");
	pb = upool.pageblock;
	part = (POOL_BYTES - LOW_BYTES) / pb;
	node = upool.node[0].id;
	tap_plan(3);
	upool_install_restore();
	/* The secret user's pages come from the node whose pool is watched. */
	if (upool_bind_node(node))
		tap_bail("cannot bind to node%d", node);
	fd = memfd_create("reclaim-hold", MFD_UNMAPPED | MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)MAP_BYTES))
		tap_bail("an MFD_UNMAPPED file: %m");
	map = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		tap_bail("mmap: %m");

	/* 1. fill */
	if (upool_reset() || upool_wait_empty(FILL_TIMEOUT) ||
	    upool_set(node, POOL_BYTES, LOW_BYTES, POOL_BYTES))
		tap_bail("cannot set node%d's knobs", node);
	ok = !upool_wait_free(node, POOL_BYTES, UINT64_MAX, FILL_TIMEOUT, &free0);
	tap_report(ok ? TAP_PASS : TAP_FAIL, "fill: the node's pool reaches pool_target", NULL);
	if (!ok)
		tap_bail("the pool does not fill");

	/* 2. churn */
	if (upool_stat(node, UPOOL_RELEASED_BYTES, &relstart))
		tap_bail("cannot read released_bytes");
	if (churn(node, fd, map, pb, upool_now() + WARMUP_S) < 0)
		tap_bail("the churn failed");
	if (upool_stat(node, UPOOL_CONVERSIONS, &conv0) ||
	    upool_stat(node, UPOOL_RELEASED_BYTES, &rel0))
		tap_bail("cannot read the statistics");
	t = upool_now();
	dips = churn(node, fd, map, pb, t + WINDOW_S);
	t = upool_now() - t;
	if (dips < 0)
		tap_bail("the churn failed");
	if (upool_stat(node, UPOOL_CONVERSIONS, &conv1) ||
	    upool_stat(node, UPOOL_RELEASED_BYTES, &rel1))
		tap_bail("cannot read the statistics");
	conv_min = (double)(conv1 - conv0) * 60 / t;
	rel_min = (double)((rel1 - rel0) / pb) * 60 / t;
	dip_min = (double)dips * 60 / t;
	limit = MAX_CONV_PER_DIP * dip_min + MAX_HOLD_ENDS * (double)part * 60 / t;
	tap_diag("%.1f s of reclaim passes after %.0f s: %ld dips below watermark_low, %llu pageblocks converted, %llu released",
		 t, WARMUP_S, dips, conv1 - conv0, (rel1 - rel0) / pb);
	tap_diag("per minute: %.1f dips, %.1f pageblocks converted (at most %.1f), %.1f released; the pool's refillable part is %llu pageblocks",
		 dip_min, conv_min, limit, rel_min, part);
	if (rel1 == relstart)
		tap_diag("no release at all: the shrinker never ran");
	ok = dips > 0 && rel1 > relstart && conv_min <= limit;
	tap_report(ok ? TAP_PASS : TAP_FAIL,
		   "churn: under reclaim the worker refills what a dip took, not the pool", NULL);

	/* 3. knob */
	t = upool_now();
	ok = !upool_knob_set(node, UPOOL_TARGET, POOL_BYTES) &&
	     !upool_wait_free(node, POOL_BYTES, UINT64_MAX, FILL_TIMEOUT, &free0);
	tap_diag("after a pool_target write the pool held %llu MiB in %.1f s", free0 / MiB,
		 upool_now() - t);
	tap_report(ok ? TAP_PASS : TAP_FAIL, "knob: a knob write ends the hold, the pool fills",
		   NULL);
	munmap((void *)map, MAP_BYTES);
	close(fd);
	upool_reset();
	return tap_finish();
}
