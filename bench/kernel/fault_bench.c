// SPDX-License-Identifier: GPL-2.0
/*
 * fault_bench: the kernel side of `make bench`, run inside the guest.
 *
 *   fault_bench [options] fault memfd|memfd_secret|memfd_unmapped
 *   fault_bench [options] fault guest_memfd|guest_memfd_nodm
 *   fault_bench [options] fault anon|anon_thp
 *   fault_bench [options] read  memfd|memfd_unmapped
 *   fault_bench [options] forkexit anon
 *   fault_bench [options] scale memfd|memfd_secret|memfd_unmapped
 *
 * fault: create a file of --size MiB (256), map it MAP_SHARED and write one
 * byte to each 4 KiB page in order, pinned to CPU --cpu (0), timing each
 * first touch with clock_gettime(CLOCK_MONOTONIC). Around the loop (and
 * only the loop) it reads /proc/vmstat, /proc/interrupts and /proc/meminfo,
 * and prints
 *
 *   fault_mib_s              size / time of the whole loop
 *   tlb_flushes_per_mib      kernel TLB shootdowns per MiB. --flushes ipi
 *                            (default): the fewest function-call IPIs
 *                            (/proc/interrupts CAL) that any other CPU
 *                            received (see shootdowns()), an upper bound;
 *                            --flushes vmstat: nr_tlb_remote_flush plus
 *                            nr_tlb_kernel_flush, exact where the kernel
 *                            counts its range flushes (the patched
 *                            kernel, patch 0016)
 *   directmap4k_kib_per_gib  growth of DirectMap4k (/proc/meminfo) per GiB
 *   alloc_p99_us             99th percentile of one first touch, in us
 *
 * and, as extra figures, the raw counters the first two are made of
 * (nr_tlb_remote_flush and nr_tlb_kernel_flush from /proc/vmstat, CAL
 * IPIs), the 50th/99.9th
 * percentile and maximum of a touch, the cost of one clock_gettime(), what
 * costs time but no instructions (local TLB flushes per fault from
 * nr_tlb_local_flush_all/_one, timer interrupts per second, rescheduling
 * IPIs, this process's context switches and the system's per second), page
 * faults per page, and on the patched kernel the unmapped allocator's
 * events.
 *
 * fault guest_memfd, guest_memfd_nodm: the population of a KVM guest's
 * private memory instead. A software-protected VM gets a guest_memfd of
 * --size MiB (guest_memfd_nodm: with GUEST_MEMFD_FLAG_NO_DIRECT_MAP) as a
 * private memslot, and one vCPU populates it a 4 KiB page at a time with
 * KVM_PRE_FAULT_MEMORY, which takes the path of a guest's first access:
 * the page is allocated, zeroed and mapped into the nested page tables.
 * Each such call is one "first touch" of the figures above.
 *
 * fault anon|anon_thp: the same loop over private anonymous memory, what
 * every program faults in: 4 KiB pages (MADV_NOHUGEPAGE) or transparent
 * huge pages (MADV_HUGEPAGE, 2 MiB aligned; thp_faults counts them).
 *
 * scale memfd|memfd_secret|memfd_unmapped: --threads N threads at once,
 * thread i pinned to CPU i * (online CPUs) / N (spread over the NUMA
 * nodes), each creating its own file of --size MiB on its CPU and
 * writing one byte to each page of it; the threads start together at a
 * barrier. fault_mib_s_tN: N x --size / (last thread's end - first
 * thread's start), the median of --rounds (3) rounds; thread_mib_s_tN: the
 * median over rounds of the median thread's own rate; flushes_per_mib_tN
 * (patched kernel): shootdowns (nr_tlb_remote_flush plus
 * nr_tlb_kernel_flush) per MiB. --pool warm fills every
 * node's pool with 2 x N x --size first, so that files freed by a round
 * leave room for the next.
 *
 * forkexit anon: fork() of a process holding --size MiB of faulted-in
 * anonymous memory, the child's _exit() and waitpid(), --rounds (200)
 * times: fork_exit_us (median round), fork_exit_p99_us, forks_per_s.
 *
 * read: fill a file of --size MiB by write() in --chunk KiB (1024) chunks,
 * timed (write_mib_s: each write() allocates the chunk's pages and copies
 * into them), then time read() of it in chunks of the same size into a
 * buffer that is already faulted in: read_mib_s. On an MFD_UNMAPPED memfd
 * every page is copied through the kernel's mermap, both ways. Where the
 * kernel counts them, the unmapped allocator's global TLB flushes
 * (unmapped_tlb_flush) and the mermap's local flushes
 * (unmapped_mermap_flush) per MiB of each phase:
 * write_unmapped_tlb_flushes_per_mib, write_mermap_flushes_per_mib,
 * read_unmapped_tlb_flushes_per_mib, read_mermap_flushes_per_mib. (fault
 * prints the same two per MiB of its loop: unmapped_tlb_flushes_per_mib,
 * mermap_flushes_per_mib.)
 *
 * --pool cold|warm|refill (patched kernels only) prepares the pool of
 * unmapped pageblocks first: cold empties it (every node's pool_target and
 * watermarks to 0, vm.drop_caches=3 until stats/free_bytes is below one
 * pageblock); warm sets every node's pool_target to --size plus two
 * pageblocks and waits until stats/free_bytes reaches it; refill empties
 * it, then sets the knobs of secmemd's shipped configuration (pool_target
 * 32M, watermark_low 8M, watermark_high 64M) and waits for 32M: the loop
 * then runs on what the pool worker converts as it goes. Counters are
 * read after the pool is ready, so its earlier conversions are not
 * counted.
 *
 * Every figure is one line on stdout:
 *
 *   secmem-bench: case=CASE figure=NAME value=NUMBER
 *
 * CASE is --case, by default "<stock|patched>.<kind>[_<pool>]" (patched if
 * /sys/kernel/mm/unmapped exists). Exit status: 0 measured, 4 skipped
 * (the kind or the pool is not supported by this kernel), 1 error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "procfs.h"

/* The patched kernel's uapi has these; the stock kernel's does not. */
#ifndef GUEST_MEMFD_FLAG_NO_DIRECT_MAP
#define GUEST_MEMFD_FLAG_NO_DIRECT_MAP	(1ULL << 2)
#endif
#ifndef KVM_CAP_GUEST_MEMFD_FLAGS
#define KVM_CAP_GUEST_MEMFD_FLAGS	244
#endif

/* glibc's <sys/mman.h> has memfd_create(); the flag is newer than it. */
#ifndef MFD_UNMAPPED
#define MFD_UNMAPPED	0x0020U
#endif
#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447
#endif

#define PAGE		4096UL
#define EXIT_SKIP	4

static const char *prog = "fault_bench";

static struct {
	unsigned long size_mib;
	unsigned long chunk_kib;
	const char *pool;	/* NULL, "cold" or "warm" */
	const char *case_name;
	double pool_timeout;
	int cpu;
	bool flushes_vmstat;	/* --flushes vmstat */
	unsigned int rounds;	/* --rounds, forkexit and scale */
	bool rounds_set;
	unsigned int threads;	/* --threads, scale */
} opt = { 256, 1024, NULL, NULL, 120, 0, false, 200, false, 1 };

static char case_buf[128];

static __attribute__((format(printf, 1, 2), noreturn)) void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: error: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static __attribute__((format(printf, 1, 2), noreturn)) void skip(const char *fmt, ...)
{
	va_list ap;

	printf("secmem-bench: skip case=%s: ", opt.case_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(EXIT_SKIP);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	printf("secmem-bench: note case=%s: ", opt.case_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void figure(const char *name, double value)
{
	printf("secmem-bench: case=%s figure=%s value=%.6g\n", opt.case_name,
	       name, value);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* --- counters ------------------------------------------------------------- */

#define MAX_CPUS	64

/*
 * A line of /proc/interrupts ("CAL:", "TLB:"): the count of each CPU into
 * @percpu (if not NULL), the sum returned; -1 if absent.
 */
static long long read_irq(const char *name, long long *percpu)
{
	size_t len = strlen(name);
	long long sum = -1;
	char line[4096];
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		int cpu = 0;

		while (*p == ' ')
			p++;
		if (strncmp(p, name, len) || p[len] != ':')
			continue;
		sum = 0;
		for (p += len + 1;; p = end, cpu++) {
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			if (percpu && cpu < MAX_CPUS)
				percpu[cpu] = v;
			sum += v;
		}
		break;
	}
	fclose(f);
	return sum;
}

enum ctr {
	C_CAL, C_TLB_IRQ, C_REMOTE_FLUSH, C_REMOTE_FLUSH_RECEIVED, C_KERNEL_FLUSH,
	C_DM4K, C_DM2M, C_BLOCK_UNMAP, C_ALLOC_POOL, C_ALLOC_CONVERT,
	C_ALLOC_FAIL, C_UNMAPPED_TLB_FLUSH, C_MERMAP_FLUSH, C_PREZEROED,
	C_SPLIT_2M, C_SPLIT_1G, C_LOCAL_FLUSH_ALL, C_LOCAL_FLUSH_ONE,
	C_PGFAULT, C_THP_FAULT, C_LOC_IRQ, C_RES_IRQ, C_CSW, C_OWN_CSW,
	NCTR
};

static const char *const vmstat_key[NCTR] = {
	[C_REMOTE_FLUSH] = "nr_tlb_remote_flush",
	[C_REMOTE_FLUSH_RECEIVED] = "nr_tlb_remote_flush_received",
	[C_KERNEL_FLUSH] = "nr_tlb_kernel_flush",
	[C_BLOCK_UNMAP] = "unmapped_block_unmap",
	[C_ALLOC_POOL] = "unmapped_alloc_pool",
	[C_ALLOC_CONVERT] = "unmapped_alloc_convert",
	[C_ALLOC_FAIL] = "unmapped_alloc_fail",
	[C_UNMAPPED_TLB_FLUSH] = "unmapped_tlb_flush",
	[C_MERMAP_FLUSH] = "unmapped_mermap_flush",
	[C_PREZEROED] = "unmapped_alloc_prezeroed",
	[C_SPLIT_2M] = "direct_map_level2_splits",
	[C_SPLIT_1G] = "direct_map_level3_splits",
	[C_LOCAL_FLUSH_ALL] = "nr_tlb_local_flush_all",
	[C_LOCAL_FLUSH_ONE] = "nr_tlb_local_flush_one",
	[C_PGFAULT] = "pgfault",
	[C_THP_FAULT] = "thp_fault_alloc",
};

/* Context switches of this process (voluntary + involuntary). */
static long long own_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static void read_counters(long long *c, long long *cal_percpu)
{
	for (int i = 0; i < NCTR; i++)
		c[i] = vmstat_key[i] ? procfs_read_key("/proc/vmstat", vmstat_key[i]) : -1;
	c[C_CAL] = read_irq("CAL", cal_percpu);
	c[C_TLB_IRQ] = read_irq("TLB", NULL);
	c[C_DM4K] = procfs_read_key("/proc/meminfo", "DirectMap4k");
	c[C_DM2M] = procfs_read_key("/proc/meminfo", "DirectMap2M");
	c[C_LOC_IRQ] = read_irq("LOC", NULL);
	c[C_RES_IRQ] = read_irq("RES", NULL);
	c[C_CSW] = procfs_read_key("/proc/stat", "ctxt");
	c[C_OWN_CSW] = own_switches();
}

/* --- the pool of unmapped pageblocks -------------------------------------- */

static bool patched_kernel(void)
{
	return access("/sys/kernel/mm/unmapped", F_OK) == 0;
}

static void write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	n = write(fd, value, strlen(value));
	if (n != (ssize_t)strlen(value))
		die("write '%s' to %s: %s", value, path,
		    n < 0 ? strerror(errno) : "short write");
	close(fd);
}

static long long read_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		die("open %s: %s", path, strerror(errno));
	if (fscanf(f, "%lld", &v) != 1)
		die("%s: not a number", path);
	fclose(f);
	return v;
}

/* Applies @fn to every node's unmapped/ directory; returns how many. */
static size_t for_each_node(void (*fn)(const char *dir, void *arg), void *arg)
{
	glob_t g;
	size_t n;

	if (glob("/sys/devices/system/node/node*/unmapped", GLOB_ONLYDIR, NULL, &g))
		return 0;
	n = g.gl_pathc;
	for (size_t i = 0; i < n; i++)
		fn(g.gl_pathv[i], arg);
	globfree(&g);
	return n;
}

static void node_set(const char *dir, void *arg)
{
	char path[512];

	/* low first, then high, so that low <= high holds at every step */
	snprintf(path, sizeof(path), "%s/watermark_low", dir);
	write_file(path, "0");
	snprintf(path, sizeof(path), "%s/watermark_high", dir);
	write_file(path, "0");
	snprintf(path, sizeof(path), "%s/pool_target", dir);
	write_file(path, arg);
}

/*
 * --pool refill: the knobs secmemd sets from its shipped
 * /etc/secmem.conf (pool_target 32M, watermark_low 8M, watermark_high
 * 64M), written the way secmemd writes them: high first when raising.
 */
static void node_set_refill(const char *dir, void *arg)
{
	char path[512];

	(void)arg;
	snprintf(path, sizeof(path), "%s/watermark_high", dir);
	write_file(path, "64M");
	snprintf(path, sizeof(path), "%s/watermark_low", dir);
	write_file(path, "8M");
	snprintf(path, sizeof(path), "%s/pool_target", dir);
	write_file(path, "32M");
}

static void node_free(const char *dir, void *arg)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/stats/free_bytes", dir);
	*(long long *)arg += read_number(path);
}

static long long pool_free_bytes(void)
{
	long long sum = 0;

	for_each_node(node_free, &sum);
	return sum;
}

/* Wait until the pools hold @want free bytes, or --pool-timeout from @t0. */
static void pool_wait_filled(long long want, double t0)
{
	long long free_now;

	for (;;) {
		free_now = pool_free_bytes();
		if (free_now >= want || now() - t0 > opt.pool_timeout)
			break;
		sleep_s(0.05);
	}
	if (free_now < want)
		note("pool not filled after %.0f s: %lld of %lld bytes",
		     opt.pool_timeout, free_now, want);
}

static void pool_prepare(void)
{
	long long pageblock, want, free_now = 0;
	char target[64];
	double t0 = now();
	size_t nodes;

	if (!patched_kernel())
		skip("no unmapped allocator on this kernel: no pool to prepare");
	pageblock = read_number("/sys/kernel/mm/unmapped/pageblock_bytes");
	if (!strcmp(opt.pool, "cold") || !strcmp(opt.pool, "refill")) {
		nodes = for_each_node(node_set, "0");
		for (;;) {
			write_file("/proc/sys/vm/drop_caches", "3");
			free_now = pool_free_bytes();
			if (free_now < pageblock || now() - t0 > opt.pool_timeout)
				break;
			sleep_s(0.05);
		}
		if (free_now >= pageblock)
			note("pool not empty after %.0f s: %lld bytes free",
			     opt.pool_timeout, free_now);
		want = 0;
		if (!strcmp(opt.pool, "refill")) {
			/* From empty, as a pool the worker keeps refilling. */
			nodes = for_each_node(node_set_refill, NULL);
			want = (32LL << 20) * (long long)nodes;
			pool_wait_filled(want, t0);
		}
	} else {
		want = ((long long)opt.size_mib << 20) + 2 * pageblock;
		snprintf(target, sizeof(target), "%lld", want);
		nodes = for_each_node(node_set, target);
		/* Every node's pool, not their sum, must be filled. */
		want *= (long long)nodes;
		pool_wait_filled(want, t0);
	}
	if (!nodes)
		die("no /sys/devices/system/node/node*/unmapped directory");
	/* Let the worker's last conversion or release (and its flush) finish. */
	sleep_s(0.2);
	note("pool %s: %lld bytes free (wanted %lld) after %.2f s", opt.pool,
	     pool_free_bytes(), want, now() - t0);
}

/* --- files ---------------------------------------------------------------- */

enum kind { K_MEMFD, K_SECRET, K_UNMAPPED, K_GMEM, K_GMEM_NODM, K_ANON, K_ANON_THP };

#define HPAGE	(2UL << 20)

/*
 * Private anonymous memory, as every program has: 4 KiB pages
 * (MADV_NOHUGEPAGE) or transparent huge pages where the kernel can
 * (MADV_HUGEPAGE, 2 MiB aligned). Not a file: no pool, nothing unmapped.
 */
static char *map_anon(size_t size, bool thp)
{
	char *raw, *p;

	raw = mmap(NULL, size + HPAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap of %zu anonymous bytes: %s", size, strerror(errno));
	p = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	if (madvise(p, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		die("madvise(%s): %s", thp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
		    strerror(errno));
	return p;
}

static int open_file(enum kind k, size_t size, bool truncate)
{
	int fd;

	switch (k) {
	case K_MEMFD:
		fd = memfd_create("bench", MFD_CLOEXEC);
		break;
	case K_SECRET:
		fd = syscall(__NR_memfd_secret, O_CLOEXEC);
		if (fd < 0 && (errno == ENOSYS || errno == EINVAL))
			skip("memfd_secret: %s", strerror(errno));
		break;
	default:
		fd = memfd_create("bench", MFD_CLOEXEC | MFD_UNMAPPED);
		if (fd < 0 && errno == EINVAL)
			skip("memfd_create(MFD_UNMAPPED): EINVAL, not supported by this kernel");
		break;
	}
	if (fd < 0)
		die("creating the file: %s", strerror(errno));
	if (truncate && ftruncate(fd, (off_t)size))
		die("ftruncate: %s", strerror(errno));
	return fd;
}

/* --- fault ---------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted @v. */
static double pct(const uint32_t *v, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * n + 0.999999);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/* Cost of one clock_gettime(CLOCK_MONOTONIC), in ns. */
static double clock_cost_ns(void)
{
	struct timespec ts;
	const int n = 20000;
	double t0 = now();

	for (int i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (now() - t0) / n * 1e9;
}

static uint64_t ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/*
 * Kernel TLB shootdowns during the loop. Every one (flush_tlb_kernel_range(),
 * flush_tlb_all(), the flushes of set_memory_*()) is an on_each_cpu() call
 * from the faulting CPU: one function-call IPI to every other online CPU,
 * and none to its own. The loop runs pinned to opt.cpu, so the fewest IPIs
 * that any other CPU received bounds the shootdowns from above; IPIs for
 * anything else (remote wakeups, idle-balance kicks) only add to it.
 */
static double shootdowns(const long long *before, const long long *after, long cpus)
{
	long long best = -1;

	for (long c = 0; c < cpus && c < MAX_CPUS; c++) {
		long long d = after[c] - before[c];

		if (c != opt.cpu && (best < 0 || d < best))
			best = d;
	}
	return best < 0 ? 0 : (double)best;
}

/* --- guest_memfd ---------------------------------------------------------- */

/* Guest physical address of the private memslot: above 4 GiB, clear of any hole. */
#define GMEM_GPA	(1ULL << 32)

struct gmem_vm {
	int kvm, vm, vcpu, gmem;
	void *shared;		/* the memslot's shared half, never touched */
	size_t size;
};

static void gmem_setup(struct gmem_vm *g, size_t size, bool nodm)
{
	struct kvm_create_guest_memfd create = { .size = size };
	struct kvm_userspace_memory_region2 region = {
		.slot = 0,
		.flags = KVM_MEM_GUEST_MEMFD,
		.guest_phys_addr = GMEM_GPA,
		.memory_size = size,
		.guest_memfd_offset = 0,
	};
	struct kvm_memory_attributes attr = {
		.address = GMEM_GPA,
		.size = size,
		.attributes = KVM_MEMORY_ATTRIBUTE_PRIVATE,
	};
	int r;

	g->size = size;
	g->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (g->kvm < 0)
		skip("/dev/kvm: %s", strerror(errno));
	r = ioctl(g->kvm, KVM_CHECK_EXTENSION, KVM_CAP_VM_TYPES);
	if (r < 0 || !(r & (1 << KVM_X86_SW_PROTECTED_VM)))
		skip("KVM has no software-protected VM type (KVM_SW_PROTECTED_VM)");
	if (ioctl(g->kvm, KVM_CHECK_EXTENSION, KVM_CAP_PRE_FAULT_MEMORY) <= 0)
		skip("KVM has no KVM_PRE_FAULT_MEMORY");
	if (nodm) {
		r = ioctl(g->kvm, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD_FLAGS);
		if (r <= 0 || !(r & GUEST_MEMFD_FLAG_NO_DIRECT_MAP))
			skip("guest_memfd has no NO_DIRECT_MAP flag on this kernel");
		create.flags = GUEST_MEMFD_FLAG_NO_DIRECT_MAP;
	}
	g->vm = ioctl(g->kvm, KVM_CREATE_VM, KVM_X86_SW_PROTECTED_VM);
	if (g->vm < 0)
		die("KVM_CREATE_VM: %s", strerror(errno));
	g->gmem = ioctl(g->vm, KVM_CREATE_GUEST_MEMFD, &create);
	if (g->gmem < 0)
		die("KVM_CREATE_GUEST_MEMFD of %zu bytes, flags 0x%llx: %s", size,
		    (unsigned long long)create.flags, strerror(errno));
	g->shared = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (g->shared == MAP_FAILED)
		die("mmap of the shared half: %s", strerror(errno));
	region.userspace_addr = (uintptr_t)g->shared;
	region.guest_memfd = (uint32_t)g->gmem;
	if (ioctl(g->vm, KVM_SET_USER_MEMORY_REGION2, &region))
		die("KVM_SET_USER_MEMORY_REGION2: %s", strerror(errno));
	if (ioctl(g->vm, KVM_SET_MEMORY_ATTRIBUTES, &attr))
		die("KVM_SET_MEMORY_ATTRIBUTES(PRIVATE): %s", strerror(errno));
	g->vcpu = ioctl(g->vm, KVM_CREATE_VCPU, 0);
	if (g->vcpu < 0)
		die("KVM_CREATE_VCPU: %s", strerror(errno));
}

/* The guest's first access to private page @i, as KVM serves it. */
static void gmem_touch(struct gmem_vm *g, size_t i)
{
	struct kvm_pre_fault_memory range = {
		.gpa = GMEM_GPA + i * PAGE,
		.size = PAGE,
	};

	while (ioctl(g->vcpu, KVM_PRE_FAULT_MEMORY, &range)) {
		if (errno != EINTR && errno != EAGAIN)
			die("KVM_PRE_FAULT_MEMORY at 0x%llx: %s",
			    (unsigned long long)range.gpa, strerror(errno));
	}
}

static void gmem_teardown(struct gmem_vm *g)
{
	close(g->vcpu);
	close(g->gmem);
	close(g->vm);
	close(g->kvm);
	munmap(g->shared, g->size);
}

/*
 * Where the pages of a plain memfd landed in physical memory (from
 * /proc/self/pagemap, root only): the fraction of pages that follow the
 * previous one (pfn + 1), and how many 2 MiB frames they spread over. The
 * same instructions cost more time when the pages are scattered: more TLB
 * and cache misses, on the host of an emulator as on hardware.
 */
static void pfn_layout(const char *p, size_t pages)
{
	uint64_t prev = 0, prev_frame = UINT64_MAX;
	size_t seq = 0, frames = 0, seen = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	for (size_t i = 0; i < pages; i++) {
		uint64_t e, pfn;
		off_t off = (off_t)((uintptr_t)(p + i * PAGE) / PAGE * sizeof(e));

		if (pread(fd, &e, sizeof(e), off) != (ssize_t)sizeof(e))
			break;
		pfn = e & ((1ULL << 55) - 1);
		if (!(e >> 63) || !pfn)		/* not present, or no PFN shown */
			break;
		if (seen && pfn == prev + 1)
			seq++;
		/* frames counted as runs: a return to an earlier frame counts again */
		if (pfn >> 9 != prev_frame)
			frames++;
		prev_frame = pfn >> 9;
		prev = pfn;
		seen++;
	}
	close(fd);
	if (seen != pages) {
		note("pagemap shows the PFN of %zu of %zu pages: no pfn_ figures", seen, pages);
		return;
	}
	figure("pfn_sequential_fraction", (double)seq / (double)(pages - 1));
	figure("pfn_2m_frame_runs", (double)frames);
}

static void run_fault(enum kind k)
{
	size_t size = opt.size_mib << 20, pages = size / PAGE;
	double mib = (double)opt.size_mib, t0, t1, clk;
	long long before[NCTR], after[NCTR];
	long long cal0[MAX_CPUS] = { 0 }, cal1[MAX_CPUS] = { 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	bool gmem = k == K_GMEM || k == K_GMEM_NODM;
	bool anon = k == K_ANON || k == K_ANON_THP;
	struct gmem_vm g = { 0 };
	uint32_t *lat;
	char *p = NULL;
	int fd = -1;

	lat = malloc(pages * sizeof(*lat));
	if (!lat)
		die("out of memory");
	memset(lat, 0, pages * sizeof(*lat));	/* faulted in, outside the loop */
	if (gmem) {
		gmem_setup(&g, size, k == K_GMEM_NODM);
	} else if (anon) {
		if (opt.pool)
			die("--pool: anonymous memory has no pool");
		p = map_anon(size, k == K_ANON_THP);
	} else {
		fd = open_file(k, size, true);
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			die("mmap of %zu bytes: %s", size, strerror(errno));
	}
	if (opt.pool)
		pool_prepare();
	CPU_ZERO(&set);
	CPU_SET(opt.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("pinning to CPU %d: %s", opt.cpu, strerror(errno));
	sched_yield();
	clk = clock_cost_ns();

	read_counters(before, cal0);
	t0 = now();
	for (size_t i = 0; i < pages; i++) {
		uint64_t a = ns();

		if (gmem)
			gmem_touch(&g, i);
		else
			p[i * PAGE] = 1;
		lat[i] = (uint32_t)(ns() - a);
	}
	t1 = now();
	read_counters(after, cal1);

	qsort(lat, pages, sizeof(*lat), cmp_u32);
#define D(c) ((double)(after[c] - before[c]))
	figure("fault_mib_s", mib / (t1 - t0));
	if (opt.flushes_vmstat) {
		if (before[C_REMOTE_FLUSH] < 0 || before[C_KERNEL_FLUSH] < 0)
			die("--flushes vmstat: no nr_tlb_remote_flush and nr_tlb_kernel_flush in /proc/vmstat (CONFIG_DEBUG_TLBFLUSH, patched kernel)");
		figure("tlb_flushes_per_mib",
		       (D(C_REMOTE_FLUSH) + D(C_KERNEL_FLUSH)) / mib);
	} else {
		figure("tlb_flushes_per_mib",
		       before[C_CAL] >= 0 ? shootdowns(cal0, cal1, cpus) / mib : 0);
	}
	figure("ipi_bound_flushes_per_mib",
	       before[C_CAL] >= 0 ? shootdowns(cal0, cal1, cpus) / mib : 0);
	figure("directmap4k_kib_per_gib", D(C_DM4K) / (mib / 1024));
	figure("alloc_p99_us", pct(lat, pages, 99) / 1e3);
	/* extras */
	figure("fault_seconds", t1 - t0);
	figure("call_ipis_per_mib", D(C_CAL) / mib);
	if (opt.cpu < MAX_CPUS)
		figure("call_ipis_own_cpu", (double)(cal1[opt.cpu] - cal0[opt.cpu]));
	if (before[C_TLB_IRQ] >= 0)
		figure("tlb_ipis_per_mib", D(C_TLB_IRQ) / mib);
	if (before[C_REMOTE_FLUSH] >= 0) {
		figure("nr_tlb_remote_flush_per_mib", D(C_REMOTE_FLUSH) / mib);
		figure("nr_tlb_remote_flush_received_per_mib",
		       D(C_REMOTE_FLUSH_RECEIVED) / mib);
	}
	if (before[C_KERNEL_FLUSH] >= 0)
		figure("nr_tlb_kernel_flush_per_mib", D(C_KERNEL_FLUSH) / mib);
	figure("directmap2m_kib_per_gib", D(C_DM2M) / (mib / 1024));
	/* Each split of a direct map huge page costs one shootdown too. */
	if (before[C_SPLIT_1G] >= 0) {
		figure("direct_map_2m_splits", D(C_SPLIT_2M));
		figure("direct_map_1g_splits", D(C_SPLIT_1G));
	}
	figure("alloc_p50_us", pct(lat, pages, 50) / 1e3);
	figure("alloc_p999_us", pct(lat, pages, 99.9) / 1e3);
	figure("alloc_max_us", lat[pages - 1] / 1e3);
	figure("clock_gettime_ns", clk);
	/*
	 * What costs time without costing instructions (docs/PERFORMANCE.md,
	 * "What each measure sees"): local TLB flushes, which TCG pays for by
	 * dropping its software TLB, interrupts, and other tasks on the CPU.
	 */
	if (before[C_LOCAL_FLUSH_ALL] >= 0) {
		figure("local_flush_all_per_fault", D(C_LOCAL_FLUSH_ALL) / (double)pages);
		figure("local_flush_one_per_fault", D(C_LOCAL_FLUSH_ONE) / (double)pages);
	}
	if (before[C_PGFAULT] >= 0)
		figure("pgfaults_per_page", D(C_PGFAULT) / (double)pages);
	if (before[C_THP_FAULT] >= 0)
		figure("thp_faults", D(C_THP_FAULT));
	if (before[C_LOC_IRQ] >= 0)
		figure("timer_irqs_per_s", D(C_LOC_IRQ) / (t1 - t0));
	if (before[C_RES_IRQ] >= 0)
		figure("resched_ipis", D(C_RES_IRQ));
	if (before[C_CSW] >= 0 && before[C_OWN_CSW] >= 0) {
		figure("own_switches", D(C_OWN_CSW));
		figure("switches_per_s", D(C_CSW) / (t1 - t0));
	}
	if (before[C_BLOCK_UNMAP] >= 0) {
		figure("unmapped_block_unmap", D(C_BLOCK_UNMAP));
		figure("unmapped_alloc_pool", D(C_ALLOC_POOL));
		figure("unmapped_alloc_convert", D(C_ALLOC_CONVERT));
		figure("unmapped_alloc_fail", D(C_ALLOC_FAIL));
		if (before[C_UNMAPPED_TLB_FLUSH] >= 0) {
			figure("unmapped_tlb_flush", D(C_UNMAPPED_TLB_FLUSH));
			figure("unmapped_tlb_flushes_per_mib", D(C_UNMAPPED_TLB_FLUSH) / mib);
		}
		if (before[C_MERMAP_FLUSH] >= 0) {
			figure("unmapped_mermap_flush", D(C_MERMAP_FLUSH));
			figure("mermap_flushes_per_mib", D(C_MERMAP_FLUSH) / mib);
		}
		if (before[C_PREZEROED] >= 0)
			figure("unmapped_alloc_prezeroed", D(C_PREZEROED));
	}
#undef D
	if (k == K_MEMFD)
		pfn_layout(p, pages);
	if (gmem)
		gmem_teardown(&g);
	else if (!anon)
		close(fd);
	/* anonymous: the aligned part of the mapping is unmapped at exit */
	if (!gmem && !anon)
		munmap(p, size);
	free(lat);
}

/* --- read ----------------------------------------------------------------- */

/*
 * Per MiB of one phase of run_read(): the unmapped allocator's global
 * flushes (unmapped_tlb_flush: every CPU's TLB, as before handing out a
 * page after a deferred mermap unmap) and the mermap's local flushes
 * (unmapped_mermap_flush). Nothing on a kernel without the counters.
 */
static void phase_flushes(const char *phase, const long long *before,
			  const long long *after, double mib)
{
	char name[64];

	if (before[C_UNMAPPED_TLB_FLUSH] >= 0 && after[C_UNMAPPED_TLB_FLUSH] >= 0) {
		snprintf(name, sizeof(name), "%s_unmapped_tlb_flushes_per_mib", phase);
		figure(name, (double)(after[C_UNMAPPED_TLB_FLUSH] -
				      before[C_UNMAPPED_TLB_FLUSH]) / mib);
	}
	if (before[C_MERMAP_FLUSH] >= 0 && after[C_MERMAP_FLUSH] >= 0) {
		snprintf(name, sizeof(name), "%s_mermap_flushes_per_mib", phase);
		figure(name, (double)(after[C_MERMAP_FLUSH] - before[C_MERMAP_FLUSH]) / mib);
	}
}

static void run_read(enum kind k)
{
	size_t size = opt.size_mib << 20, chunk = opt.chunk_kib << 10, done;
	long long c_write[NCTR], c_read[NCTR], c_end[NCTR];
	double mib = (double)opt.size_mib, w0, w1, t0, t1;
	char *buf;
	int fd;

	if (k != K_MEMFD && k != K_UNMAPPED)
		die("read: only memfd and memfd_unmapped files can be read()");
	if (!chunk || size % chunk)
		die("--chunk must divide --size");
	buf = malloc(chunk);
	if (!buf)
		die("out of memory");
	fd = open_file(k, size, false);
	if (opt.pool)
		pool_prepare();
	/*
	 * The fill: chunk i holds byte i & 0xff at its first and last
	 * position (all that is checked below), so that the timed loop is
	 * write() and nothing else: each write() allocates the chunk's pages
	 * and copies into them (through the mermap on an MFD_UNMAPPED file).
	 */
	memset(buf, 0, chunk);
	read_counters(c_write, NULL);
	w0 = now();
	for (done = 0; done < size; done += chunk) {
		buf[0] = buf[chunk - 1] = (char)((done / chunk) & 0xff);
		if (write(fd, buf, chunk) != (ssize_t)chunk)
			die("write at %zu: %s", done, strerror(errno));
	}
	w1 = now();
	read_counters(c_read, NULL);
	memset(buf, 0xa5, chunk);

	t0 = now();
	for (done = 0; done < size; done += chunk) {
		if (pread(fd, buf, chunk, (off_t)done) != (ssize_t)chunk)
			die("read at %zu: %s", done, strerror(errno));
	}
	t1 = now();
	read_counters(c_end, NULL);
	/* The last chunk read must hold what was written there. */
	if (buf[0] != (char)((size / chunk - 1) & 0xff) ||
	    buf[chunk - 1] != (char)((size / chunk - 1) & 0xff))
		die("read back wrong data");

	figure("read_mib_s", (double)opt.size_mib / (t1 - t0));
	figure("read_seconds", t1 - t0);
	figure("write_mib_s", mib / (w1 - w0));
	figure("write_seconds", w1 - w0);
	phase_flushes("write", c_write, c_read, mib);
	phase_flushes("read", c_read, c_end, mib);
	close(fd);
	free(buf);
}

/* --- main ----------------------------------------------------------------- */

/* --- fork and exit ------------------------------------------------------- */

/*
 * What every process pays: fork() of a process with --size MiB of private
 * anonymous memory faulted in (4 KiB pages: its page tables are copied),
 * the child's _exit() and the parent's waitpid(), --rounds times on CPU
 * --cpu. fork_exit_us: the median round; forks_per_s: rounds per second.
 */
static void run_forkexit(enum kind k)
{
	size_t size = opt.size_mib << 20;
	unsigned int rounds = opt.rounds;
	long long before[NCTR], after[NCTR];
	long long cal0[MAX_CPUS] = { 0 }, cal1[MAX_CPUS] = { 0 };
	uint32_t *lat;
	cpu_set_t set;
	double t0, t1;
	char *p;

	if (k != K_ANON)
		die("forkexit: only 'anon' memory");
	if (opt.pool)
		die("--pool: anonymous memory has no pool");
	lat = calloc(rounds, sizeof(*lat));
	if (!lat)
		die("out of memory");
	p = map_anon(size, false);
	memset(p, 1, size);
	CPU_ZERO(&set);
	CPU_SET(opt.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("pinning to CPU %d: %s", opt.cpu, strerror(errno));
	read_counters(before, cal0);
	t0 = now();
	for (unsigned int i = 0; i < rounds; i++) {
		uint64_t a = ns();
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (!pid)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			die("waitpid: the child did not exit cleanly");
		lat[i] = (uint32_t)(ns() - a);
	}
	t1 = now();
	read_counters(after, cal1);
	qsort(lat, rounds, sizeof(*lat), cmp_u32);
	figure("fork_exit_us", pct(lat, rounds, 50) / 1e3);
	figure("forks_per_s", rounds / (t1 - t0));
	figure("fork_exit_p99_us", pct(lat, rounds, 99) / 1e3);
	/* What costs time without instructions, per round (see run_fault()). */
#define D(c) ((double)(after[c] - before[c]) / rounds)
	if (before[C_LOCAL_FLUSH_ALL] >= 0) {
		figure("local_flush_all_per_round", D(C_LOCAL_FLUSH_ALL));
		figure("local_flush_one_per_round", D(C_LOCAL_FLUSH_ONE));
	}
	if (before[C_REMOTE_FLUSH] >= 0)
		figure("nr_tlb_remote_flush_per_round", D(C_REMOTE_FLUSH));
	if (before[C_KERNEL_FLUSH] >= 0)
		figure("nr_tlb_kernel_flush_per_round", D(C_KERNEL_FLUSH));
	if (before[C_CAL] >= 0)
		figure("call_ipis_per_round", D(C_CAL));
	if (before[C_CSW] >= 0)
		figure("switches_per_round", D(C_CSW));
#undef D
	free(lat);
}

/* --- scale ---------------------------------------------------------------- */

struct scale_thread {
	pthread_t tid;
	pthread_barrier_t *start;
	enum kind k;
	size_t size;
	int cpu;
	double t0, t1;
	char *p;
	int fd;
};

static void *scale_thread_run(void *arg)
{
	struct scale_thread *t = arg;
	volatile char *p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("pinning a thread to CPU %d: %s", t->cpu, strerror(errno));
	/* Created on its own CPU: its pages come from that CPU's node. */
	t->fd = open_file(t->k, t->size, true);
	t->p = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->p == MAP_FAILED)
		die("mmap of %zu bytes: %s", t->size, strerror(errno));
	p = t->p;
	pthread_barrier_wait(t->start);
	t->t0 = now();
	for (size_t off = 0; off < t->size; off += PAGE)
		p[off] = 1;
	t->t1 = now();
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void run_scale(enum kind k)
{
	unsigned int n = opt.threads, rounds = opt.rounds_set ? opt.rounds : 3;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t size = opt.size_mib << 20;
	double *total, *thread, *own;
	long long before[NCTR], after[NCTR], flushes = 0;
	struct scale_thread *t;
	pthread_barrier_t start;
	char name[64];

	if (k != K_MEMFD && k != K_SECRET && k != K_UNMAPPED)
		die("scale: only memfd, memfd_secret and memfd_unmapped");
	if (cpus < 1 || n > (unsigned long)cpus)
		die("scale: --threads %u, but %ld CPU(s) online", n, cpus);
	t = calloc(n, sizeof(*t));
	total = calloc(rounds, sizeof(*total));
	thread = calloc(rounds, sizeof(*thread));
	own = calloc(n, sizeof(*own));
	if (!t || !total || !thread || !own)
		die("out of memory");
	if (opt.pool) {
		/* pool_prepare() fills every node to --size plus slack. */
		unsigned long per_thread = opt.size_mib;

		opt.size_mib = 2 * n * per_thread;
		pool_prepare();
		opt.size_mib = per_thread;
	}
	for (unsigned int r = 0; r < rounds; r++) {
		double first = 0, last = 0;

		/* Around the threads only, not the munmap()s (user flushes). */
		read_counters(before, NULL);
		if (pthread_barrier_init(&start, NULL, n))
			die("pthread_barrier_init failed");
		for (unsigned int i = 0; i < n; i++) {
			t[i] = (struct scale_thread){
				.start = &start, .k = k, .size = size,
				.cpu = (int)(i * (unsigned long)cpus / n), .fd = -1,
			};
			errno = pthread_create(&t[i].tid, NULL, scale_thread_run, &t[i]);
			if (errno)
				die("pthread_create: %s", strerror(errno));
		}
		for (unsigned int i = 0; i < n; i++) {
			pthread_join(t[i].tid, NULL);
			if (!i || t[i].t0 < first)
				first = t[i].t0;
			if (!i || t[i].t1 > last)
				last = t[i].t1;
		}
		read_counters(after, NULL);
		flushes += after[C_REMOTE_FLUSH] - before[C_REMOTE_FLUSH] +
			   after[C_KERNEL_FLUSH] - before[C_KERNEL_FLUSH];
		pthread_barrier_destroy(&start);
		total[r] = (double)n * (double)opt.size_mib / (last - first);
		for (unsigned int i = 0; i < n; i++)
			own[i] = (double)opt.size_mib / (t[i].t1 - t[i].t0);
		qsort(own, n, sizeof(*own), cmp_double);
		thread[r] = own[n / 2];
		for (unsigned int i = 0; i < n; i++) {
			munmap(t[i].p, size);
			close(t[i].fd);
		}
	}
	qsort(total, rounds, sizeof(*total), cmp_double);
	qsort(thread, rounds, sizeof(*thread), cmp_double);
	snprintf(name, sizeof(name), "fault_mib_s_t%u", n);
	figure(name, total[rounds / 2]);
	snprintf(name, sizeof(name), "thread_mib_s_t%u", n);
	figure(name, thread[rounds / 2]);
	/* Exact on the patched kernel only (patch 0016 counts kernel ranges). */
	if (before[C_REMOTE_FLUSH] >= 0 && before[C_KERNEL_FLUSH] >= 0) {
		snprintf(name, sizeof(name), "flushes_per_mib_t%u", n);
		figure(name, (double)flushes / ((double)rounds * n * opt.size_mib));
	}
	free(own);
	free(thread);
	free(total);
	free(t);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s [options] fault memfd|memfd_secret|memfd_unmapped\n"
"       %s [options] fault guest_memfd|guest_memfd_nodm\n"
"       %s [options] fault anon|anon_thp\n"
"       %s [options] read memfd|memfd_unmapped\n"
"       %s [options] forkexit anon\n"
"       %s [options] scale memfd|memfd_secret|memfd_unmapped\n"
"  --size MIB        file size (default 256)\n"
"  --chunk KIB       read: size of one write() and one read() (default 1024)\n"
"  --pool cold|warm|refill  patched kernels: empty or fill the unmapped pool\n"
"                    first, or set secmemd's default knobs from empty\n"
"  --pool-timeout S  give up waiting for the pool after S seconds (120)\n"
"  --cpu N           fault: run the loop on CPU N (default 0)\n"
"  --flushes ipi|vmstat  fault: count shootdowns from IPIs (a bound, any\n"
"                    kernel) or nr_tlb_remote_flush + nr_tlb_kernel_flush\n"
"                    (exact, patched kernel)\n"
"  --case NAME       case name in the output (default <flavor>.<kind>[_<pool>])\n"
"  --rounds N        forkexit: fork()s timed (default 200); scale: rounds (3)\n"
"  --threads N       scale: threads faulting their own files at once (1)\n"
"Prints 'secmem-bench: case=NAME figure=NAME value=N' lines; exit 4: skipped.\n",
		prog, prog, prog, prog, prog, prog);
}

static unsigned long parse_ulong(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || !v)
		die("%s: '%s' is not a positive number", what, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "pool", required_argument, NULL, 'p' },
		{ "pool-timeout", required_argument, NULL, 't' },
		{ "case", required_argument, NULL, 'n' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "flushes", required_argument, NULL, 'F' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rlimit lim, unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	const char *mode, *kind_name;
	enum kind k;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			opt.size_mib = parse_ulong(optarg, "--size");
			break;
		case 'c':
			opt.chunk_kib = parse_ulong(optarg, "--chunk");
			break;
		case 'p':
			if (strcmp(optarg, "cold") && strcmp(optarg, "warm") &&
			    strcmp(optarg, "refill"))
				die("--pool must be cold, warm or refill");
			opt.pool = optarg;
			break;
		case 't':
			opt.pool_timeout = (double)parse_ulong(optarg, "--pool-timeout");
			break;
		case 'n':
			opt.case_name = optarg;
			break;
		case 'C': {
			char *end;

			opt.cpu = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || opt.cpu < 0 || opt.cpu >= CPU_SETSIZE)
				die("--cpu: '%s' is not a CPU number", optarg);
			break;
		}
		case 'r': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (end == optarg || *end || !v || v > 1000000)
				die("--rounds: '%s' is not a number from 1 to 1000000", optarg);
			opt.rounds = (unsigned int)v;
			opt.rounds_set = true;
			break;
		}
		case 'T': {
			unsigned long v = parse_ulong(optarg, "--threads");

			if (v > MAX_CPUS)
				die("--threads: at most %d", MAX_CPUS);
			opt.threads = (unsigned int)v;
			break;
		}
		case 'F':
			if (strcmp(optarg, "ipi") && strcmp(optarg, "vmstat"))
				die("--flushes must be ipi or vmstat");
			opt.flushes_vmstat = !strcmp(optarg, "vmstat");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	mode = argv[optind];
	kind_name = argv[optind + 1];
	if (!strcmp(kind_name, "memfd"))
		k = K_MEMFD;
	else if (!strcmp(kind_name, "memfd_secret"))
		k = K_SECRET;
	else if (!strcmp(kind_name, "memfd_unmapped"))
		k = K_UNMAPPED;
	else if (!strcmp(kind_name, "guest_memfd"))
		k = K_GMEM;
	else if (!strcmp(kind_name, "guest_memfd_nodm"))
		k = K_GMEM_NODM;
	else if (!strcmp(kind_name, "anon"))
		k = K_ANON;
	else if (!strcmp(kind_name, "anon_thp"))
		k = K_ANON_THP;
	else
		die("unknown kind '%s'", kind_name);
	if (!opt.case_name) {
		snprintf(case_buf, sizeof(case_buf), "%s.%s%s%s",
			 patched_kernel() ? "patched" : "stock", kind_name,
			 opt.pool ? "_" : "", opt.pool ? opt.pool : "");
		opt.case_name = case_buf;
	}
	/* secretmem and MFD_UNMAPPED charge RLIMIT_MEMLOCK, root included. */
	if ((getrlimit(RLIMIT_MEMLOCK, &lim) || lim.rlim_cur != RLIM_INFINITY) &&
	    setrlimit(RLIMIT_MEMLOCK, &unlimited))
		note("setrlimit(RLIMIT_MEMLOCK): %s", strerror(errno));

	if (!strcmp(mode, "fault"))
		run_fault(k);
	else if (!strcmp(mode, "read"))
		run_read(k);
	else if (!strcmp(mode, "forkexit"))
		run_forkexit(k);
	else if (!strcmp(mode, "scale"))
		run_scale(k);
	else
		die("unknown mode '%s' (fault, read, forkexit or scale)", mode);
	return 0;
}
