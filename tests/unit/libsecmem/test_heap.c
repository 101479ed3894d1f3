// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The malloc family: sizes, alignment, contents, zeroing, scale, threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define test_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define test_unpoison(p, n) ((void)(p), (void)(n))
#endif

static void fill(void *p, size_t n, unsigned int seed)
{
	unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		c[i] = (unsigned char)(seed * 131 + i * 7);
}

static bool check(const void *p, size_t n, unsigned int seed)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		if (c[i] != (unsigned char)(seed * 131 + i * 7))
			return false;
	}
	return true;
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		if (c[i])
			return false;
	}
	return true;
}

SM_TEST(test_malloc_boundary_sizes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const size_t sizes[] = {
		0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 127, 128, 129,
		pg - 1, pg, pg + 1, 16376, 16377, 65536, 1 << 20,
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *p = secmem_malloc(n);

		ck_assert_msg(p, "secmem_malloc(%zu): %s", n,
			      secmem_strerror(secmem_last_error()));
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_uint_ge(secmem_usable_size(p), n);
		fill(p, secmem_usable_size(p), (unsigned int)i);
		ck_assert(check(p, secmem_usable_size(p), (unsigned int)i));
		secmem_free(p);
	}
	ck_assert_uint_eq(secmem_usable_size(NULL), 0);
	secmem_free(NULL);	/* no-op */
}

/* The size classes of libsecmem/heap.c, searched the slow way. */
static const size_t test_classes[] = {
	16, 32, 48, 64, 80, 96, 112, 128,
	160, 192, 224, 256, 320, 384, 448, 512,
	640, 768, 896, 1024, 1280, 1536, 1792, 2048,
	2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
	10240, 12288, 14336, 16384,
};

/* Usable size of a request of @n bytes aligned to @align (8-byte canary). */
static size_t expect_usable(size_t n, size_t align, size_t pg)
{
	size_t need = n + 8;

	for (size_t i = 0; i < sizeof(test_classes) / sizeof(test_classes[0]); i++) {
		if (test_classes[i] >= need && test_classes[i] % align == 0)
			return test_classes[i] - 8;
	}
	return (need + pg - 1) / pg * pg - 8;
}

/*
 * Every small size gets exactly the smallest class that holds it and its
 * canary (a multiple of the alignment asked): the class is computed, not
 * searched, and a formula off by one at a power of two would still hand
 * out enough bytes (usable >= n) while wasting a class, or too few.
 */
SM_TEST(test_size_classes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const size_t aligns[] = { 32, 64, 128, 256, 512, 1024, 2048, 4096 };

	for (size_t n = 0; n <= 16384; n++) {
		unsigned char *p = secmem_malloc(n);

		ck_assert_ptr_nonnull(p);
		ck_assert_msg(secmem_usable_size(p) == expect_usable(n ? n : 1, 16, pg) ||
			      (!n && secmem_usable_size(p) == 8),
			      "secmem_malloc(%zu): usable %zu, expected %zu", n,
			      secmem_usable_size(p), expect_usable(n, 16, pg));
		p[0] = 1;
		p[secmem_usable_size(p) - 1] = 2;
		secmem_free(p);
	}
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		for (size_t n = 1; n <= 16384; n += 37) {
			unsigned char *p = secmem_aligned_alloc(aligns[i], n);

			ck_assert_ptr_nonnull(p);
			ck_assert_uint_eq((uintptr_t)p % aligns[i], 0);
			ck_assert_msg(secmem_usable_size(p) ==
				      expect_usable(n, aligns[i], pg),
				      "aligned_alloc(%zu, %zu): usable %zu, "
				      "expected %zu", aligns[i], n,
				      secmem_usable_size(p),
				      expect_usable(n, aligns[i], pg));
			secmem_free(p);
		}
	}
}

SM_TEST(test_malloc_huge)
{
	struct secmem_stats st;

	errno = 0;
	ck_assert_ptr_null(secmem_malloc(SIZE_MAX));
	ck_assert_int_eq(errno, ENOMEM);
	/* Refused by the size check: the kernel was never asked. */
	ck_assert_int_eq(secmem_last_error(), SECMEM_EOVERFLOW);
	ck_assert_ptr_null(secmem_malloc(PTRDIFF_MAX));
	ck_assert_ptr_null(secmem_aligned_alloc(1UL << 62, 16));

	/* Larger than the limit: refused by the library, not the kernel. */
	test_set_memlock(16ULL << 20);
	ck_assert(test_drop_ipc_lock());
	errno = 0;
	ck_assert_ptr_null(secmem_malloc(1ULL << 30));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EMEMLOCK);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_le(st.memlock_charged, st.memlock_limit);

	/* A large allocation within the limit works. */
	void *p = secmem_malloc(4 << 20);

	ck_assert_ptr_nonnull(p);
	memset(p, 0x5a, 4 << 20);
	secmem_free(p);
}

SM_TEST(test_calloc)
{
	unsigned char *p;

	/* As glibc's calloc(): ENOMEM, like secmem_malloc(SIZE_MAX). */
	errno = 0;
	ck_assert_ptr_null(secmem_calloc(SIZE_MAX / 2, 3));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EOVERFLOW);
	errno = 0;
	ck_assert_ptr_null(secmem_calloc(SIZE_MAX, 2));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_ptr_null(secmem_calloc(3, SIZE_MAX / 2));

	/* Reuse a dirty chunk: calloc must still hand out zeroes. */
	p = secmem_malloc(1000);
	memset(p, 0xff, 1000);
	secmem_free(p);
	p = secmem_calloc(100, 10);
	ck_assert_ptr_nonnull(p);
	ck_assert(all_zero(p, 1000));
	secmem_free(p);

	p = secmem_calloc(0, 5);
	ck_assert_ptr_nonnull(p);
	secmem_free(p);
	p = secmem_calloc(1 << 10, 1 << 10);
	ck_assert_ptr_nonnull(p);
	ck_assert(all_zero(p, 1 << 20));
	secmem_free(p);
}

SM_TEST(test_realloc)
{
	size_t sizes[] = { 1, 24, 100, 4000, 5000, 70000, 1 << 20, 3 << 20 };
	size_t n = sizeof(sizes) / sizeof(sizes[0]), prev = 0, i;
	unsigned char *p = NULL, *q;

	/* Growth keeps what was there, step by step. */
	for (i = 0; i < n; i++) {
		q = secmem_realloc(p, sizes[i]);
		ck_assert_ptr_nonnull(q);
		if (prev)
			ck_assert(check(q, prev, 9));
		fill(q, sizes[i], 9);
		p = q;
		prev = sizes[i];
	}
	/* Shrink keeps the prefix. */
	for (i = n; i-- > 0;) {
		q = secmem_realloc(p, sizes[i]);
		ck_assert_ptr_nonnull(q);
		ck_assert(check(q, sizes[i], 9));
		p = q;
	}
	/* An in-place shrink zeroes the bytes given up. */
	p = secmem_realloc(p, 100);
	fill(p, secmem_usable_size(p), 3);
	q = secmem_realloc(p, 90);
	ck_assert_ptr_eq(q, p);
	ck_assert(check(q, 90, 3));
	ck_assert(all_zero(q + 90, secmem_usable_size(q) - 90));
	/* 0 frees and returns a new minimal allocation. */
	p = secmem_realloc(q, 0);
	ck_assert_ptr_nonnull(p);
	secmem_free(p);
	/* NULL is malloc. */
	p = secmem_realloc(NULL, 10);
	ck_assert_ptr_nonnull(p);
	/* Failure leaves the block alone. */
	fill(p, 10, 4);
	ck_assert_ptr_null(secmem_realloc(p, SIZE_MAX));
	ck_assert(check(p, 10, 4));
	secmem_free(p);
}

/* Read freed memory: it stays mapped because @keep holds the arena. */
static void zero_after_free(size_t size)
{
	unsigned char *keep = secmem_malloc(size);
	unsigned char *p = secmem_malloc(size);
	size_t usable = secmem_usable_size(p);

	ck_assert_ptr_nonnull(keep);
	ck_assert_ptr_nonnull(p);
	memset(p, 0xa5, usable);
	secmem_free(p);
	test_unpoison(p, usable);
	ck_assert_msg(all_zero(p, usable), "%zu bytes not zeroed", size);
	secmem_free(keep);
}

SM_TEST(test_zero_after_free)
{
	zero_after_free(32);
	zero_after_free(3000);
	zero_after_free(100000);
}

SM_TEST(test_aligned_alloc)
{
	size_t aligns[] = { 1, 2, 8, 16, 32, 64, 256, 4096, 8192, 1 << 20 };
	size_t sizes[] = { 1, 40, 5000 };

	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		for (size_t j = 0; j < 3; j++) {
			void *p = secmem_aligned_alloc(aligns[i], sizes[j]);

			ck_assert_msg(p, "align %zu size %zu: %s", aligns[i],
				      sizes[j],
				      secmem_strerror(secmem_last_error()));
			ck_assert_uint_eq((uintptr_t)p % aligns[i], 0);
			ck_assert_uint_ge(secmem_usable_size(p), sizes[j]);
			memset(p, 1, sizes[j]);
			secmem_free(p);
		}
	}
	errno = 0;
	ck_assert_ptr_null(secmem_aligned_alloc(3, 16));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EINVAL);
	ck_assert_ptr_null(secmem_aligned_alloc(0, 16));
}

/*
 * A million live 32-byte secrets in fewer than 64 mappings (sodium_malloc
 * needs three per secret), and the arenas go back when they are freed.
 */
#define MANY 1000000
SM_TEST(test_million_small)
{
	void **v = malloc(MANY * sizeof(*v));
	struct secmem_stats st;
	int before, after;

	ck_assert_ptr_nonnull(v);
	/*
	 * About 64 MiB are needed.  CAP_IPC_LOCK exempts the mlock and
	 * unmapped backends, and memfd_secret where the kernel exempts it.
	 */
	if (!test_set_memlock(1ULL << 30) &&
	    test_mode == TEST_MODE_SECURE &&
	    secmem_backend() == SECMEM_BACKEND_MEMFD_SECRET &&
	    !(test_have_ipc_lock() && test_kernel_exempts_secret())) {
		test_skip("memfd_secret needs RLIMIT_MEMLOCK >= 64 MiB, the "
			  "hard limit cannot be raised here (no "
			  "CAP_SYS_RESOURCE) and this kernel does not exempt "
			  "CAP_IPC_LOCK");
		free(v);
		return;
	}
	before = test_count_maps();
	for (size_t i = 0; i < MANY; i++) {
		v[i] = secmem_malloc(32);
		ck_assert_msg(v[i], "allocation %zu: %s", i,
			      secmem_strerror(secmem_last_error()));
		memcpy(v[i], &i, sizeof(i));
	}
	after = test_count_maps();
	ck_assert_int_eq(secmem_stats(&st), 0);
	fprintf(stderr, "# 1M x 32 B: maps %d -> %d, %llu arenas, %llu MiB\n",
		before, after, (unsigned long long)st.arenas,
		(unsigned long long)st.bytes_mapped >> 20);
	ck_assert_uint_eq(st.allocations, MANY);
	ck_assert_int_lt(after - before, 64);
	/* Under ASan the sanitizer's own mappings are not ours to count. */
	if (!test_under_asan())
		ck_assert_int_lt(after, 64);
	for (size_t i = 0; i < MANY; i++) {
		size_t got;

		memcpy(&got, v[i], sizeof(got));
		ck_assert_uint_eq(got, i);
		secmem_free(v[i]);
	}
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 0);
	ck_assert_uint_eq(st.bytes_in_use, 0);
	/*
	 * Empty arenas are returned, except spares: at most 32 MiB of them
	 * per heap (one heap here), a fraction of the 64 MiB mapped.
	 */
	ck_assert_uint_le(st.bytes_mapped, 32ULL << 20);
	ck_assert_uint_eq(st.fds, st.arenas);
	ck_assert_uint_eq(st.mappings, 3 * st.arenas);
	ck_assert_uint_eq(st.memlock_charged, st.bytes_mapped);
	ck_assert_int_lt(test_count_maps(), after);
	free(v);
}

/*
 * A batch of page-sized secrets, freed and allocated again, finds the
 * arenas of the first batch (kept as spares) instead of mapping new ones.
 */
#define BATCH 1000
SM_TEST(test_spares_reused)
{
	void **v = malloc(BATCH * sizeof(*v));
	struct secmem_stats st, st2;

	ck_assert_ptr_nonnull(v);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < BATCH; i++) {
			v[i] = secmem_malloc(4096);
			ck_assert_msg(v[i], "allocation %d: %s", i,
				      secmem_strerror(secmem_last_error()));
			memset(v[i], i, 4096);
		}
		ck_assert_int_eq(secmem_stats(&st2), 0);
		if (round)
			ck_assert_uint_eq(st2.bytes_mapped, st.bytes_mapped);
		for (int i = 0; i < BATCH; i++)
			secmem_free(v[i]);
		ck_assert_int_eq(secmem_stats(&st), 0);
		ck_assert_uint_eq(st.allocations, 0);
		/* All of it kept: the batch is within the spare budget. */
		ck_assert_uint_eq(st.bytes_mapped, st2.bytes_mapped);
		ck_assert_uint_ge(st.arenas, 1);
		ck_assert_uint_eq(st.memlock_charged, st.bytes_mapped);
	}
	free(v);
}

/* Grow the calling thread's heap with 4 MiB of small secrets, free them. */
static void *spares_make(void *arg)
{
	enum { N = (4 << 20) / 64 };
	void **v = malloc(N * sizeof(*v));
	int i, n;

	(void)arg;
	if (!v)
		return (void *)1;
	for (n = 0; n < N; n++) {
		v[n] = secmem_malloc(48);
		if (!v[n])
			break;
	}
	for (i = 0; i < n; i++)
		secmem_free(v[i]);
	free(v);
	return NULL;
}

/*
 * Spare arenas hold part of RLIMIT_MEMLOCK; an allocation that needs it
 * gets it back.  Here the spares (1 + 1 + 2 MiB, all of a 4 MiB limit)
 * are the calling thread's heap's, none large enough for 2 MiB.
 */
SM_TEST(test_spares_memlock_own)
{
	struct secmem_stats st;
	void *p;

	ck_assert(test_set_memlock(4ULL << 20));
	ck_assert(test_drop_ipc_lock());
	spares_make(NULL);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_gt(st.arenas, 0);
	ck_assert_uint_eq(st.allocations, 0);
	ck_assert_uint_eq(st.memlock_charged, 4ULL << 20);
	p = secmem_malloc(2 << 20);
	ck_assert_msg(p, "%s", secmem_strerror(secmem_last_error()));
	memset(p, 1, 2 << 20);
	secmem_free(p);
}

/* The same with the spares in another thread's heap (if there are two). */
SM_TEST(test_spares_memlock_other)
{
	struct secmem_stats st;
	pthread_t t;
	void *p, *ret;

	ck_assert(test_set_memlock(4ULL << 20));
	ck_assert(test_drop_ipc_lock());
	ck_assert_int_eq(pthread_create(&t, NULL, spares_make, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &ret), 0);
	ck_assert_ptr_null(ret);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 0);
	ck_assert_uint_eq(st.memlock_charged, 4ULL << 20);
	p = secmem_malloc(3 << 20);
	ck_assert_msg(p, "%s", secmem_strerror(secmem_last_error()));
	memset(p, 2, 3 << 20);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_le(st.memlock_charged, 4ULL << 20);
	secmem_free(p);
}

/*
 * A malloc/free pair with nothing else live keeps its slab: the next
 * allocation of the class finds it, and another class gets a slab of its
 * own beside it.  When the empty slab went back to the arena, which then
 * retired, the 32-byte slab was carved from page 0 again, at the very
 * address of the 64-byte chunk, and the next pair started over.
 */
SM_TEST(test_pair_keeps_slab)
{
	struct secmem_stats st;
	void *p, *q, *r;

	p = secmem_malloc(64);
	ck_assert_ptr_nonnull(p);
	secmem_free(p);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 0);
	ck_assert_uint_eq(st.bytes_in_use, 0);
	q = secmem_malloc(32);
	ck_assert_ptr_nonnull(q);
	ck_assert_msg(q != p, "the 64-byte slab was given up (%p)", p);
	r = secmem_malloc(64);
	ck_assert_ptr_eq(r, p);
	secmem_free(r);
	secmem_free(q);
	/* One idle slab per class, not one per free. */
	for (int i = 0; i < 100; i++) {
		p = secmem_malloc(64);
		ck_assert_ptr_eq(p, r);
		secmem_free(p);
	}
}

/* Allocate 64 bytes from the calling thread's heap; keep or free them. */
static void *heap_probe(void *keep)
{
	void *p = secmem_malloc(64);

	if (p && !keep) {
		secmem_free(p);
		return (void *)1;
	}
	return p;
}

/*
 * Whether @a and @b (64-byte chunks) come from one slab, hence one heap:
 * a slab of that class is 16 KiB, and two heaps never share an arena
 * (arenas are at least 1 MiB).
 */
static bool same_slab(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return (x > y ? x - y : y - x) < 16384;
}

/*
 * A thread is bound to a heap no live thread uses while there is one:
 * heaps handed out in turn, whatever lives on them, put the 840th thread
 * on the main thread's heap (840 is a multiple of every heap count up to
 * 8), next to it while others sat unused, and two threads that share a
 * heap share its lock.
 */
#define SEQ_THREADS 839
SM_TEST(test_thread_heap_fewest_threads)
{
	void *mine, *theirs, *ret;
	pthread_t t;
	int i;

	if (sysconf(_SC_NPROCESSORS_CONF) < 2) {
		test_skip("one CPU: libsecmem has a single heap");
		return;
	}
	mine = secmem_malloc(64);
	ck_assert_ptr_nonnull(mine);
	/* Threads that bind a heap and exit, one at a time. */
	for (i = 0; i < SEQ_THREADS; i++) {
		ck_assert_int_eq(pthread_create(&t, NULL, heap_probe, NULL), 0);
		ck_assert_int_eq(pthread_join(t, &ret), 0);
		ck_assert_ptr_nonnull(ret);
	}
	ck_assert_int_eq(pthread_create(&t, NULL, heap_probe, mine), 0);
	ck_assert_int_eq(pthread_join(t, &theirs), 0);
	ck_assert_ptr_nonnull(theirs);
	ck_assert_msg(!same_slab(mine, theirs),
		      "thread %d shares the main thread's heap (%p, %p) "
		      "while another heap has no thread", SEQ_THREADS + 1,
		      mine, theirs);
	secmem_free(theirs);
	secmem_free(mine);
}

/* A thread that binds a heap and stays alive until told to go. */
struct heap_holder {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool bound, go;
	void *p;
};

static void *heap_hold(void *arg)
{
	struct heap_holder *hh = arg;
	void *p = secmem_malloc(64);

	pthread_mutex_lock(&hh->lock);
	hh->p = p;
	hh->bound = true;
	pthread_cond_broadcast(&hh->cond);
	while (!hh->go)
		pthread_cond_wait(&hh->cond, &hh->lock);
	pthread_mutex_unlock(&hh->lock);
	secmem_free(p);
	return NULL;
}

/* In a fork child: its new thread must not share its main thread's heap. */
static void fork_child_heaps(void *arg)
{
	void *mine = secmem_malloc(64), *theirs = NULL;
	pthread_t t;

	(void)arg;
	if (!mine || pthread_create(&t, NULL, heap_probe, mine) ||
	    pthread_join(t, &theirs) || !theirs)
		_exit(2);
	if (same_slab(mine, theirs)) {
		fprintf(stderr, "child's thread on its main thread's heap "
			"(%p, %p)", mine, theirs);
		_exit(1);
	}
	_exit(0);
}

/*
 * A fork child has one thread, whatever the parent had: the parent's
 * other threads must not count on their heaps there, or the child's
 * next thread goes to its main thread's heap, next to it.
 */
SM_TEST(test_fork_child_heap_threads)
{
	struct heap_holder hh = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	char err[256];
	void *mine;
	pthread_t t;
	int status;

	if (sysconf(_SC_NPROCESSORS_CONF) < 2) {
		test_skip("one CPU: libsecmem has a single heap");
		return;
	}
	mine = secmem_malloc(64);
	ck_assert_ptr_nonnull(mine);
	ck_assert_int_eq(pthread_create(&t, NULL, heap_hold, &hh), 0);
	pthread_mutex_lock(&hh.lock);
	while (!hh.bound)
		pthread_cond_wait(&hh.cond, &hh.lock);
	pthread_mutex_unlock(&hh.lock);
	ck_assert_ptr_nonnull(hh.p);
	ck_assert(!same_slab(mine, hh.p));

	status = test_in_child(fork_child_heaps, NULL, err, sizeof(err));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status 0x%x: %s", status, err);

	pthread_mutex_lock(&hh.lock);
	hh.go = true;
	pthread_cond_broadcast(&hh.cond);
	pthread_mutex_unlock(&hh.lock);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	secmem_free(mine);
}

#define THREADS 8
#define SLOTS 256
#define OPS 20000
struct shared {
	pthread_mutex_t lock[SLOTS];
	unsigned char *p[SLOTS];
	size_t n[SLOTS];
	unsigned int seed[SLOTS];
	_Atomic int bad;
};

#define LOCK_THREADS 8
#define LOCK_PAIRS 40000

/*
 * More threads than heaps (SM_MAX_HEAPS is 8, and there are at most as
 * many heaps as CPUs), each allocating, filling, checking and freeing:
 * threads that share a heap meet on its lock, and some sleep in its
 * contended path.  A lock that let two threads in at once would hand one
 * chunk to both (the check of the fill fails) or lose an update of the
 * heap's counters, which are plain loads and stores under the lock (the
 * totals are not 0 at the end).  errno must survive the allocations,
 * however long they waited.
 */
static void *lock_worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	long bad = 0;

	for (int i = 0; i < LOCK_PAIRS; i++) {
		size_t n = 16 + (seed = seed * 1103515245 + 12345) % 200;
		unsigned char *p;

		errno = 4242;
		p = secmem_malloc(n);
		if (!p || errno != 4242) {
			bad++;
			continue;
		}
		memset(p, (int)(seed & 0xff), n);
		for (size_t j = 0; j < n; j++)
			bad += p[j] != (unsigned char)(seed & 0xff);
		secmem_free(p);
		bad += errno != 4242;
	}
	return (void *)bad;
}

SM_TEST(test_heap_lock_contended)
{
	pthread_t t[LOCK_THREADS];
	struct secmem_stats st;
	void *bad;

	for (uintptr_t i = 0; i < LOCK_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, lock_worker,
						(void *)(i + 1)), 0);
	for (int i = 0; i < LOCK_THREADS; i++) {
		ck_assert_int_eq(pthread_join(t[i], &bad), 0);
		ck_assert_msg(bad == NULL, "thread %d: %ld bad results", i,
			      (long)(uintptr_t)bad);
	}
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 0);
	ck_assert_uint_eq(st.bytes_in_use, 0);
}

/* In the child: the parent's arenas are not inherited (SECMEM_FORK_DROP). */
static void do_free_if_owned_inside(void *arg)
{
	char *q = secmem_malloc(40);

	(void)arg;
	if (!q)
		_exit(10);
	secmem_free_if_owned(q + 1);	/* must abort */
	_exit(0);
}

/* One lookup: frees its own, leaves others alone, aborts on a bad one. */
SM_TEST(test_free_if_owned)
{
	char *p = secmem_malloc(40), *blk = secmem_alloc_pages(4096);
	char *heap = malloc(40), err[512];
	struct secmem_stats st;
	int status;

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(blk);
	ck_assert_ptr_nonnull(heap);
	ck_assert_int_eq(secmem_free_if_owned(NULL), 0);
	ck_assert_int_eq(secmem_free_if_owned(heap), 0);	/* untouched */
	free(heap);
	status = test_in_child(do_free_if_owned_inside, p, err, sizeof(err));
	ck_assert_killed_by(status, SIGABRT);
	ck_assert_msg(strstr(err, "points inside an allocation"), "%s", err);
	ck_assert_int_eq(secmem_free_if_owned(p), 1);
	ck_assert_int_eq(secmem_owns(p), 0);
	ck_assert_int_eq(secmem_protect(blk, SECMEM_NOACCESS), 0);
	ck_assert_int_eq(secmem_free_if_owned(blk), 1);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 0);
}

SM_TEST(test_owns)
{
	char *small = secmem_malloc(40);
	char *large = secmem_malloc(100000);
	char *pages = secmem_alloc_pages(8192);
	char *other = secmem_malloc(40);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	static char global[64];
	char local[64];

	ck_assert_ptr_nonnull(small);
	ck_assert_ptr_nonnull(large);
	ck_assert_ptr_nonnull(pages);
	ck_assert_ptr_nonnull(other);
	ck_assert_int_eq(secmem_owns(NULL), 0);
	ck_assert_int_eq(secmem_owns(global), 0);
	ck_assert_int_eq(secmem_owns(local), 0);
	ck_assert_int_eq(secmem_owns(&pg), 0);

	/* Any byte of the usable size, not only the start. */
	ck_assert_int_eq(secmem_owns(small), 1);
	ck_assert_int_eq(secmem_owns(small + secmem_usable_size(small) - 1), 1);
	ck_assert_int_eq(secmem_owns(large + 99999), 1);
	ck_assert_int_eq(secmem_owns(pages), 1);
	ck_assert_int_eq(secmem_owns(pages + 8191), 1);
	/* The guard pages of a page block are not secret memory. */
	ck_assert_int_eq(secmem_owns(pages - 1), 0);
	ck_assert_int_eq(secmem_owns(pages + 8192), 0);
	ck_assert_int_eq(secmem_owns(pages - pg), 0);
	ck_assert_int_eq(secmem_protect(pages, SECMEM_NOACCESS), 0);
	ck_assert_int_eq(secmem_owns(pages), 1);	/* no access needed */

	/* Freed memory is no longer owned; neighbours still are. */
	secmem_free(small);
	ck_assert_int_eq(secmem_owns(small), 0);
	ck_assert_int_eq(secmem_owns(other), 1);
	secmem_free(large);
	ck_assert_int_eq(secmem_owns(large), 0);
	secmem_free(pages);
	ck_assert_int_eq(secmem_owns(pages), 0);
	secmem_free(other);
	ck_assert_int_eq(secmem_owns(other), 0);
}

#define NARENAS 6

static int is_block(char **p, const char *q)
{
	for (int i = 0; i < NARENAS; i++) {
		if (p[i] == q)
			return 1;
	}
	return 0;
}

/*
 * In a fork child (SECMEM_FORK_DROP): none of the parent's pointers is
 * memory it owns, and secmem_free_if_owned() takes each (1, a no-op), so
 * that a two-allocator free never hands one to the other allocator.
 */
static void do_owns_none(void *arg)
{
	char **p = arg, *q;

	for (int i = 0; i < NARENAS; i++) {
		if (secmem_owns(p[i]) || secmem_owns(p[i] + 1) ||
		    secmem_free_if_owned(p[i]) != 1)
			_exit(10 + i);
	}
	q = secmem_malloc(100);
	if (!q || !secmem_owns(q) || secmem_owns(q + secmem_usable_size(q)) ||
	    secmem_free_if_owned(q) != 1)
		_exit(20);
	_exit(0);
}

/*
 * The lookup of a pointer's arena scans the arena slots from the one the
 * thread found last, round to the one before it: each pointer is asked
 * for after one in another arena, so that the scan starts in the middle
 * of the table, wraps, and must stop before the slot it started from.
 * Around each large block: its first and last usable byte are ours, the
 * canary and the bytes past the arena's pages are not.
 */
SM_TEST(test_owns_many_arenas)
{
	char *p[NARENAS], err[512];
	size_t sz[NARENAS];
	int status;

	/* 1 MiB and more: four or five arenas, some shared by two blocks. */
	for (int i = 0; i < NARENAS; i++) {
		sz[i] = (1UL << 20) << (i < 3 ? 0 : i - 2);
		p[i] = secmem_malloc(sz[i]);
		ck_assert_ptr_nonnull(p[i]);
		p[i][0] = (char)i;
		p[i][sz[i] - 1] = (char)i;
	}
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < NARENAS; i++) {
			int j = (i * 5 + round) % NARENAS;
			size_t u = secmem_usable_size(p[j]);

			ck_assert_int_eq(secmem_owns(p[j]), 1);
			ck_assert_int_eq(secmem_owns(p[j] + sz[j] - 1), 1);
			ck_assert_int_eq(secmem_owns(p[j] + u - 1), 1);
			ck_assert_int_eq(secmem_owns(p[j] + u), 0);	/* canary */
			ck_assert_int_eq(secmem_owns(p[j] - 1), 0);
			/* The next page: a guard, a free page or a block. */
			ck_assert_int_eq(secmem_owns(p[j] + u + 8),
					 is_block(p, p[j] + u + 8));
		}
	}
	status = test_in_child(do_owns_none, p, err, sizeof(err));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status %d: %s", status, err);
	/* Retired arenas (spare or returned): their pointers are not ours. */
	for (int i = 1; i < NARENAS; i += 2) {
		secmem_free(p[i]);
		ck_assert_int_eq(secmem_owns(p[i]), 0);
		ck_assert_int_eq(secmem_owns(p[i] + sz[i] - 1), 0);
	}
	for (int i = 0; i < NARENAS; i += 2) {
		ck_assert_int_eq(secmem_owns(p[i] + sz[i] - 1), 1);
		ck_assert_int_eq(secmem_free_if_owned(p[i]), 1);
		ck_assert_int_eq(secmem_owns(p[i]), 0);
	}
}

SM_TEST(test_strdup)
{
	char *d, *n;

	d = secmem_strdup("correct horse battery staple");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d, "correct horse battery staple");
	ck_assert_int_eq(secmem_owns(d), 1);
	n = secmem_strndup("correct horse", 7);
	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(n, "correct");
	ck_assert_uint_ge(secmem_usable_size(n), 8);
	secmem_free(n);
	/* @n beyond the string: the string, not @n bytes, is copied. */
	n = secmem_strndup("ab", 1000);
	ck_assert_str_eq(n, "ab");
	secmem_free(n);
	n = secmem_strdup("");
	ck_assert_ptr_nonnull(n);
	ck_assert_str_eq(n, "");
	secmem_free(n);
	secmem_free(d);

	errno = 0;
	ck_assert_ptr_null(secmem_strdup(NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EINVAL);
	ck_assert_ptr_null(secmem_strndup(NULL, 3));
}

static void *stress_thread(void *arg)
{
	struct shared *s = arg;
	unsigned int r = (unsigned int)(uintptr_t)pthread_self();

	for (int i = 0; i < OPS; i++) {
		unsigned int k, seed;
		size_t n;
		unsigned char *p, *old;

		r = r * 1103515245 + 12345;
		k = (r >> 8) % SLOTS;
		n = (r >> 4) % 97 == 0 ? 20000 + r % 20000 : 1 + (r >> 12) % 2048;
		seed = r;
		p = secmem_malloc(n);
		if (!p) {
			s->bad++;
			continue;
		}
		fill(p, n, seed);
		/* Swap with a slot that another thread may have filled. */
		pthread_mutex_lock(&s->lock[k]);
		old = s->p[k];
		if (old && !check(old, s->n[k], s->seed[k]))
			s->bad++;
		s->p[k] = p;
		s->n[k] = n;
		s->seed[k] = seed;
		pthread_mutex_unlock(&s->lock[k]);
		secmem_free(old);
		if (i % 64 == 0) {
			old = secmem_realloc(secmem_malloc(10), 3000);
			if (!old)
				s->bad++;
			secmem_free(old);
		}
	}
	return NULL;
}

SM_TEST(test_threads_stress)
{
	struct shared *s = calloc(1, sizeof(*s));
	pthread_t t[THREADS];
	struct secmem_stats st;

	/* The default 8 MiB are enough; more if allowed. */
	test_set_memlock(256ULL << 20);
	for (int i = 0; i < SLOTS; i++)
		pthread_mutex_init(&s->lock[i], NULL);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, stress_thread, s),
				 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(s->bad, 0);
	for (int i = 0; i < SLOTS; i++) {
		if (s->p[i])
			ck_assert(check(s->p[i], s->n[i], s->seed[i]));
		secmem_free(s->p[i]);
	}
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 0);
	ck_assert_uint_eq(st.bytes_in_use, 0);
	free(s);
}

SM_TEST(test_stats)
{
	struct secmem_stats st;
	void *p = secmem_malloc(100), *q = secmem_malloc(1 << 20);

	ck_assert_int_eq(secmem_stats(NULL), -1);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_int_eq(st.backend, secmem_backend());
	ck_assert_uint_eq(st.allocations, 2);
	ck_assert_uint_eq(st.bytes_in_use,
			  secmem_usable_size(p) + secmem_usable_size(q));
	ck_assert_uint_ge(st.arenas, 1);
	ck_assert_uint_eq(st.fds, st.arenas);
	ck_assert_uint_eq(st.mappings, 3 * st.arenas);
	ck_assert_uint_eq(st.memlock_charged, st.bytes_mapped);
	ck_assert_uint_ge(st.bytes_mapped, (1 << 20) + 100);
	secmem_free(p);
	secmem_free(q);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 0);
	ck_assert_uint_eq(st.bytes_in_use, 0);
}

TCase *test_heap_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_malloc_boundary_sizes);
	tcase_add_test(tc, test_size_classes);
	tcase_add_test(tc, test_malloc_huge);
	tcase_add_test(tc, test_calloc);
	tcase_add_test(tc, test_realloc);
	tcase_add_test(tc, test_zero_after_free);
	tcase_add_test(tc, test_aligned_alloc);
	tcase_add_test(tc, test_million_small);
	tcase_add_test(tc, test_spares_reused);
	tcase_add_test(tc, test_spares_memlock_own);
	tcase_add_test(tc, test_spares_memlock_other);
	tcase_add_test(tc, test_threads_stress);
	tcase_add_test(tc, test_heap_lock_contended);
	tcase_add_test(tc, test_thread_heap_fewest_threads);
	tcase_add_test(tc, test_fork_child_heap_threads);
	tcase_add_test(tc, test_pair_keeps_slab);
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_owns);
	tcase_add_test(tc, test_owns_many_arenas);
	tcase_add_test(tc, test_free_if_owned);
	tcase_add_test(tc, test_strdup);
	return tc;
}
