// SPDX-License-Identifier: GPL-2.0
/*
 * memfd_secret() on the patched kernel takes its pages from whole unmapped
 * pageblocks: faulting in 64 MiB must not split the direct map into 4K pages
 * (DirectMap4k in /proc/meminfo does not grow), every page must come from the
 * unmapped allocator, and there is one conversion (one direct map change, one
 * flush) per pageblock, not per page.
 *
 * On a kernel without the unmapped allocator the figures are printed for
 * comparison and the test reports a skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "procfs.h"

#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447
#endif

#define SECRET_MIB	64UL
#define SECRET_BYTES	(SECRET_MIB << 20)

struct counters {
	long directmap4k_kb;
	long directmap2m_kb;
	long call_ipis;
	long block_unmap;
	long block_remap;
	long alloc_pool;
	long alloc_convert;
	long alloc_fail;
};

/* Function-call IPIs summed over CPUs: TLB shootdowns of kernel ranges. */
static long read_call_ipis(void)
{
	char line[1024];
	long sum = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		while (*p == ' ')
			p++;
		if (strncmp(p, "CAL:", 4))
			continue;
		sum = 0;
		for (p += 4;;) {
			char *end;
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			sum += v;
			p = end;
		}
		break;
	}
	fclose(f);
	return sum;
}

static void read_counters(struct counters *c)
{
	c->directmap4k_kb = procfs_read_key("/proc/meminfo", "DirectMap4k");
	c->directmap2m_kb = procfs_read_key("/proc/meminfo", "DirectMap2M");
	c->call_ipis = read_call_ipis();
	c->block_unmap = procfs_read_key("/proc/vmstat", "unmapped_block_unmap");
	c->block_remap = procfs_read_key("/proc/vmstat", "unmapped_block_remap");
	c->alloc_pool = procfs_read_key("/proc/vmstat", "unmapped_alloc_pool");
	c->alloc_convert = procfs_read_key("/proc/vmstat", "unmapped_alloc_convert");
	c->alloc_fail = procfs_read_key("/proc/vmstat", "unmapped_alloc_fail");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct counters before, after;
	bool patched;
	double t0, t1;
	char *p;
	int fd;

	tap_plan(4);
	/* Debian's secretmem charges every faulted page to RLIMIT_MEMLOCK. */
	if (setrlimit(RLIMIT_MEMLOCK, &unlimited))
		tap_bail("setrlimit(RLIMIT_MEMLOCK): %s", strerror(errno));

	fd = syscall(__NR_memfd_secret, 0);
	if (fd < 0)
		tap_bail("memfd_secret: %s", strerror(errno));
	if (ftruncate(fd, SECRET_BYTES))
		tap_bail("ftruncate: %s", strerror(errno));
	p = mmap(NULL, SECRET_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		tap_bail("mmap: %s", strerror(errno));

	read_counters(&before);
	patched = before.block_unmap >= 0;
	t0 = now();
	for (size_t off = 0; off < SECRET_BYTES; off += 4096)
		p[off] = 1;
	t1 = now();
	read_counters(&after);

	tap_diag("faulted %lu MiB of memfd_secret in %.3f s (%.1f MiB/s)",
		 SECRET_MIB, t1 - t0, SECRET_MIB / (t1 - t0));
	tap_diag("DirectMap4k: %ld -> %ld kB (%+ld kB), DirectMap2M: %ld -> %ld kB",
		 before.directmap4k_kb, after.directmap4k_kb,
		 after.directmap4k_kb - before.directmap4k_kb,
		 before.directmap2m_kb, after.directmap2m_kb);
	tap_diag("function-call IPIs (kernel TLB shootdowns): %ld, %.1f per MiB",
		 after.call_ipis - before.call_ipis,
		 (double)(after.call_ipis - before.call_ipis) / SECRET_MIB);
	if (!patched) {
		munmap(p, SECRET_BYTES);
		close(fd);
		tap_skip_all("this kernel has no unmapped allocator: figures above are for comparison");
	}
	tap_diag("pageblocks unmapped: %ld, given back: %ld, faults served from the pool: %ld, after a conversion: %ld, failed: %ld",
		 after.block_unmap - before.block_unmap,
		 after.block_remap - before.block_remap,
		 after.alloc_pool - before.alloc_pool,
		 after.alloc_convert - before.alloc_convert,
		 after.alloc_fail - before.alloc_fail);

	tap_report(after.directmap4k_kb == before.directmap4k_kb ? TAP_PASS : TAP_FAIL,
		   "directmap4k_unchanged", NULL);
	tap_report(after.alloc_fail == before.alloc_fail ? TAP_PASS : TAP_FAIL,
		   "every_page_from_unmapped_allocator", NULL);
	tap_report((after.alloc_pool - before.alloc_pool) +
			   (after.alloc_convert - before.alloc_convert) >=
			   (long)(SECRET_BYTES / 4096) ?
			   TAP_PASS : TAP_FAIL,
		   "every_fault_counted", NULL);
	/*
	 * One conversion per 2 MiB block kept, at most: pages freed earlier
	 * by other tests may serve some faults without any conversion, and
	 * a block the pool worker gives back meanwhile (the earlier tests'
	 * frees queue it) may have been converted again for these faults:
	 * count what stayed out of the direct map.
	 */
	tap_report((after.block_unmap - before.block_unmap) -
				   (after.block_remap - before.block_remap) <=
			   (long)(SECRET_MIB / 2) ?
			   TAP_PASS : TAP_FAIL,
		   "at_most_one_conversion_per_pageblock", NULL);

	munmap(p, SECRET_BYTES);
	close(fd);
	return tap_finish();
}
