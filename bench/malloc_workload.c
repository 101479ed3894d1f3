// SPDX-License-Identifier: GPL-2.0
/*
 * malloc_workload: a malloc-heavy program to run with and without
 * secmem-run --mode heap (preload_bench.sh).  It keeps a working set of
 * 4096 live blocks of 16..2048 bytes and replaces a random one per step:
 * malloc, memset, free, as a daemon parsing requests would.
 * Prints "ops N ns_per_op X".
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIVE	4096
#define OPS	2000000

int main(void)
{
	static void *live[LIVE];
	uint64_t x = 88172645463325252ULL;
	struct timespec a, b;
	double ns;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < OPS; i++) {
		size_t slot, n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		slot = x % LIVE;
		n = 16 + (x >> 32) % 2033;
		free(live[slot]);
		live[slot] = malloc(n);
		if (!live[slot])
			return 1;
		memset(live[slot], (int)i, n);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	for (i = 0; i < LIVE; i++)
		free(live[i]);
	ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("ops %d ns_per_op %.1f\n", OPS, ns / OPS);
	return 0;
}
