// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Misuse detection, page protection, secret files, helpers, errors, fork,
 * RLIMIT_MEMLOCK, and backend probing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "secmem/uapi.h"
#include "test_util.h"

static char child_err[4096];

/* A child of test_in_child() that exited 0; its stderr is in child_err. */
#define ck_assert_child_ok(st)						\
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,		\
		      "child status 0x%x (exit %d): %s", (st),		\
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, child_err)

/* ---- misuse: the child must die with the library's message ------------- */

static void do_canary_small(void *arg)
{
	unsigned char *p = secmem_malloc(24);

	(void)arg;
	p[secmem_usable_size(p)] ^= 1;	/* one byte past the usable size */
	secmem_free(p);
}

static void do_canary_large(void *arg)
{
	unsigned char *p = secmem_malloc(100000);

	(void)arg;
	/* Flip a bit: a fixed value would match a random canary byte. */
	p[secmem_usable_size(p) + 3] ^= 1;
	secmem_free(p);
}

SM_TEST(test_canary_overwrite)
{
	int st = test_in_child(do_canary_small, NULL, child_err,
			       sizeof(child_err));

	ck_assert_killed_by(st, SIGABRT);
	ck_assert_msg(strstr(child_err, "libsecmem: canary after"),
		      "stderr: %s", child_err);
	st = test_in_child(do_canary_large, NULL, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGABRT);
	ck_assert_msg(strstr(child_err, "heap buffer overflow"), "stderr: %s",
		      child_err);
}

static void do_double_free(void *arg)
{
	void *keep = secmem_malloc((size_t)(uintptr_t)arg);
	void *p = secmem_malloc((size_t)(uintptr_t)arg);

	secmem_free(p);
	secmem_free(p);
	secmem_free(keep);
}

SM_TEST(test_double_free)
{
	size_t sizes[] = { 16, 5000, 200000 };

	for (int i = 0; i < 3; i++) {
		int st = test_in_child(do_double_free, (void *)(uintptr_t)sizes[i],
				       child_err, sizeof(child_err));

		ck_assert_killed_by(st, SIGABRT);
		ck_assert_msg(strstr(child_err, "double free"), "stderr: %s",
			      child_err);
	}
}

static void do_free_stack(void *arg)
{
	char local[32];

	(void)arg;
	secmem_free(secmem_malloc(1));	/* the library is initialised */
	secmem_free(local);
}

static void do_free_libc(void *arg)
{
	(void)arg;
	secmem_free(malloc(16));
}

static void do_free_inside(void *arg)
{
	char *p = secmem_malloc((size_t)(uintptr_t)arg);

	secmem_free(p + 16);
}

SM_TEST(test_foreign_pointer)
{
	int st;

	st = test_in_child(do_free_stack, NULL, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGABRT);
	ck_assert_msg(strstr(child_err, "not allocated by libsecmem"),
		      "stderr: %s", child_err);
	st = test_in_child(do_free_libc, NULL, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGABRT);
	ck_assert_msg(strstr(child_err, "not allocated by libsecmem"),
		      "stderr: %s", child_err);
	st = test_in_child(do_free_inside, (void *)64, child_err,
			   sizeof(child_err));
	ck_assert_killed_by(st, SIGABRT);
	ck_assert_msg(strstr(child_err, "inside an allocation"), "stderr: %s",
		      child_err);
	st = test_in_child(do_free_inside, (void *)100000, child_err,
			   sizeof(child_err));
	ck_assert_killed_by(st, SIGABRT);
	ck_assert_msg(strstr(child_err, "inside an allocation"), "stderr: %s",
		      child_err);
}

/* Touch the byte at @arg; ASan's SIGSEGV handler is removed first. */
static void do_touch(void *arg)
{
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	*(volatile char *)arg = 1;
}

static void do_read(void *arg)
{
	signal(SIGSEGV, SIG_DFL);
	(void)*(volatile char *)arg;
}

SM_TEST(test_guard_pages)
{
	unsigned long start, end, gstart, gend;
	char perms[5], gperms[5];
	char *p = secmem_malloc(64);
	int st;

	ck_assert(test_find_map(p, &start, &end, perms));
	ck_assert_str_eq(perms, "rw-s");
	/* The arena is flanked by inaccessible private (anonymous) pages. */
	ck_assert(test_find_map((char *)start - 1, &gstart, &gend, gperms));
	ck_assert_str_eq(gperms, "---p");
	ck_assert(test_find_map((char *)end, &gstart, &gend, gperms));
	ck_assert_str_eq(gperms, "---p");
	st = test_in_child(do_touch, (char *)start - 1, child_err,
			   sizeof(child_err));
	ck_assert_killed_by(st, SIGSEGV);
	st = test_in_child(do_touch, (char *)end, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGSEGV);
	secmem_free(p);
}

static void do_usable_size_at(void *arg)
{
	fprintf(stderr, "usable size %zu\n", secmem_usable_size(arg));
	_exit(0);
}

static void do_free_at(void *arg)
{
	secmem_free(arg);
	_exit(0);
}

static void do_free_if_owned_at(void *arg)
{
	fprintf(stderr, "freed %d\n", secmem_free_if_owned(arg));
	_exit(0);
}

/*
 * A slab of 48-byte chunks ends in a tail shorter than a chunk: an
 * address there is no chunk, whatever its offset, and every check of a
 * pointer must say so (the lookup took it for a live chunk past the last
 * one: secmem_usable_size() said 40, secmem_free() read past the slab).
 */
SM_TEST(test_slab_tail_pointer)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t slab = (16384 + pg - 1) / pg * pg, nchunks = slab / 48;
	void (*const calls[])(void *) = {
		do_usable_size_at, do_free_at, do_free_if_owned_at,
	};
	char *p, *tail;

	/* The children that make the calls have the slab, at its address. */
	ck_assert_int_eq(secmem_set_fork_policy(SECMEM_FORK_COPY), 0);
	p = secmem_malloc(40);
	ck_assert_ptr_nonnull(p);
	/* The first allocation of its class: chunk 0 of a new slab. */
	ck_assert_uint_eq((uintptr_t)p % pg, 0);
	ck_assert_uint_lt(nchunks * 48, slab);
	tail = p + nchunks * 48;
	ck_assert_int_eq(secmem_owns(tail), 0);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int st = test_in_child(calls[i], tail, child_err,
				       sizeof(child_err));

		ck_assert_killed_by(st, SIGABRT);
		ck_assert_msg(strstr(child_err, "not allocated by libsecmem"),
			      "call %zu, stderr: %s", i, child_err);
	}
	secmem_free(p);
	ck_assert_int_eq(secmem_set_fork_policy(SECMEM_FORK_DROP), 0);
}

TCase *test_death_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test_canary_overwrite);
	tcase_add_test(tc, test_double_free);
	tcase_add_test(tc, test_foreign_pointer);
	tcase_add_test(tc, test_guard_pages);
	tcase_add_test(tc, test_slab_tail_pointer);
	return tc;
}

/* ---- pages and protection ---------------------------------------------- */

SM_TEST(test_alloc_pages_protect)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *p = secmem_alloc_pages(100), *q;
	int st;

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p % pg, 0);
	ck_assert_uint_eq(secmem_usable_size(p), pg);
	memset(p, 7, pg);

	/* Guard pages on both sides. */
	st = test_in_child(do_touch, p - 1, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGSEGV);
	st = test_in_child(do_touch, p + pg, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGSEGV);

	ck_assert_int_eq(secmem_protect(p, SECMEM_READONLY), 0);
	ck_assert_int_eq(p[10], 7);
	st = test_in_child(do_touch, p, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGSEGV);

	ck_assert_int_eq(secmem_protect(p, SECMEM_NOACCESS), 0);
	st = test_in_child(do_read, p, child_err, sizeof(child_err));
	ck_assert_killed_by(st, SIGSEGV);

	ck_assert_int_eq(secmem_protect(p, SECMEM_READWRITE), 0);
	p[0] = 1;

	/* Freeing a NOACCESS block works and zeroes it. */
	ck_assert_int_eq(secmem_protect(p, SECMEM_NOACCESS), 0);
	secmem_free(p);

	/* Growing keeps contents and page granularity. */
	p = secmem_alloc_pages(3 * pg);
	memset(p, 9, 3 * pg);
	q = secmem_realloc(p, 10 * pg);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq((uintptr_t)q % pg, 0);
	ck_assert_int_eq(q[3 * pg - 1], 9);
	ck_assert_int_eq(secmem_protect(q, SECMEM_READONLY), 0);
	secmem_free(q);

	/* Errors. */
	errno = 0;
	ck_assert_ptr_null(secmem_alloc_pages(0));
	ck_assert_int_eq(errno, EINVAL);
	p = secmem_malloc(10);
	ck_assert_int_eq(secmem_protect(p, SECMEM_READONLY), -1);
	ck_assert_int_eq(errno, EINVAL);
	secmem_free(p);
	p = secmem_alloc_pages(1);
	ck_assert_int_eq(secmem_protect(p, 7), -1);
	ck_assert_int_eq(secmem_protect(p + 1, SECMEM_READONLY), -1);
	ck_assert_int_eq(secmem_protect(NULL, SECMEM_READONLY), -1);
	ck_assert_int_eq(secmem_protect(child_err, SECMEM_READONLY), -1);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EINVAL);
	secmem_free(p);
}

/*
 * secmem_realloc() of a block that secmem_protect() made READONLY or
 * NOACCESS fails with EACCES whatever the size, and leaves the block as
 * it was: its contents and its protection.  (It zeroed a READONLY block's
 * tail and copied a NOACCESS block: SIGSEGV; a READONLY block that grew
 * came back read-write.)
 */
SM_TEST(test_realloc_protected)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const size_t sizes[] = { 3 * pg - 100, 3 * pg, pg, 10 * pg, 0 };
	const int prots[] = { SECMEM_READONLY, SECMEM_NOACCESS };

	for (size_t i = 0; i < sizeof(prots) / sizeof(prots[0]); i++) {
		for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
			char *p = secmem_alloc_pages(3 * pg), *q;
			const char *msg;
			int st;

			ck_assert_ptr_nonnull(p);
			memset(p, 0x5c, 3 * pg);
			ck_assert_int_eq(secmem_protect(p, prots[i]), 0);
			errno = 0;
			q = secmem_realloc(p, sizes[j]);
			ck_assert_msg(!q, "prot %d, size %zu: resized to %p",
				      prots[i], sizes[j], (void *)q);
			ck_assert_int_eq(errno, EACCES);
			ck_assert_int_eq(secmem_last_error(), SECMEM_EINVAL);
			msg = secmem_strerror(secmem_last_error());
			ck_assert_msg(strstr(msg, "secmem_protect") &&
				      strstr(msg, "SECMEM_READWRITE"),
				      "message: %s", msg);
			/* Still protected as it was. */
			st = test_in_child(prots[i] == SECMEM_READONLY ?
					   do_touch : do_read, p, child_err,
					   sizeof(child_err));
			ck_assert_killed_by(st, SIGSEGV);
			ck_assert_int_eq(secmem_protect(p, SECMEM_READWRITE),
					 0);
			for (size_t k = 0; k < 3 * pg; k++)
				ck_assert_int_eq(p[k], 0x5c);
			/* Read-write again, it resizes. */
			q = secmem_realloc(p, sizes[j]);
			ck_assert_ptr_nonnull(q);
			for (size_t k = 0; k < 3 * pg && k < sizes[j]; k++)
				ck_assert_int_eq(q[k], 0x5c);
			secmem_free(q);
		}
	}
}

TCase *test_pages_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test_alloc_pages_protect);
	tcase_add_test(tc, test_realloc_protected);
	return tc;
}

/* ---- secret files -------------------------------------------------------- */

SM_TEST(test_fd_create)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct stat sb;
	char buf[8];
	int fd, seals;
	char *m;

	fd = secmem_fd_create(10000, 0);
	ck_assert_msg(fd >= 0, "%s", secmem_strerror(secmem_last_error()));
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_int_eq(sb.st_size, (off_t)((10000 + pg - 1) / pg * pg));
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(m[5000], 0);
	strcpy(m, "secret");
	/*
	 * A memfd_secret file cannot be read(2): only its mapping shows it.
	 * The unmapped memfd can, through the kernel's mermap, as can the
	 * insecure fallback.
	 */
	if (secmem_backend() == SECMEM_BACKEND_MEMFD_SECRET) {
		ck_assert_int_lt(pread(fd, buf, 6, 0), 0);
	} else {
		ck_assert_int_eq(pread(fd, buf, 6, 0), 6);
		ck_assert_int_eq(memcmp(buf, "secret", 6), 0);
	}
	munmap(m, (size_t)sb.st_size);
	close(fd);

	fd = secmem_fd_create(pg, SECMEM_FD_NOCLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert(!(fcntl(fd, F_GETFD) & FD_CLOEXEC));
	close(fd);

	/* Sealed: the size can change neither way. */
	fd = secmem_fd_create(4 * pg, SECMEM_FD_SEAL);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_lt(ftruncate(fd, (off_t)(8 * pg)), 0);
	ck_assert_int_lt(ftruncate(fd, (off_t)pg), 0);
	if (secmem_backend() != SECMEM_BACKEND_MEMFD_SECRET) {
		seals = fcntl(fd, F_GET_SEALS);
		ck_assert_int_eq(seals & (F_SEAL_GROW | F_SEAL_SHRINK |
					  F_SEAL_SEAL),
				 F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
	}
	close(fd);

	errno = 0;
	ck_assert_int_eq(secmem_fd_create(0, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(secmem_fd_create(pg, 0x100), -1);
	ck_assert_int_eq(secmem_fd_create(SIZE_MAX, 0), -1);
}

TCase *test_fd_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test_fd_create);
	return tc;
}

/* ---- helpers, errors, init, fork, RLIMIT_MEMLOCK ------------------------- */

SM_TEST(test_memzero_memeq)
{
	unsigned char a[64], b[64];

	memset(a, 0xee, sizeof(a));
	secmem_memzero(a, sizeof(a));
	for (size_t i = 0; i < sizeof(a); i++)
		ck_assert_int_eq(a[i], 0);
	secmem_memzero(NULL, 0);

	memset(a, 3, sizeof(a));
	memset(b, 3, sizeof(b));
	ck_assert_int_eq(secmem_memeq(a, b, sizeof(a)), 1);
	ck_assert_int_eq(secmem_memeq(a, b, 0), 1);
	for (size_t i = 0; i < sizeof(a); i++) {
		for (int bit = 0; bit < 8; bit++) {
			b[i] ^= (unsigned char)(1 << bit);
			ck_assert_int_eq(secmem_memeq(a, b, sizeof(a)), 0);
			b[i] ^= (unsigned char)(1 << bit);
		}
	}
}

SM_TEST(test_backend_in_use)
{
	const char *want = getenv("SECMEM_TEST_EXPECT_BACKEND");
	enum secmem_backend b = secmem_backend();

	if (test_mode == TEST_MODE_MLOCK) {
		ck_assert_int_eq(b, SECMEM_BACKEND_MLOCK);
		ck_assert_str_eq(secmem_backend_name(b), "mlock");
		return;
	}
	ck_assert(b == SECMEM_BACKEND_UNMAPPED_MEMFD ||
		  b == SECMEM_BACKEND_MEMFD_SECRET);
	if (want)
		ck_assert_str_eq(secmem_backend_name(b), want);
	ck_assert_str_eq(secmem_backend_name(SECMEM_BACKEND_UNMAPPED_MEMFD),
			 "unmapped-memfd");
	ck_assert_str_eq(secmem_backend_name(SECMEM_BACKEND_MEMFD_SECRET),
			 "memfd-secret");
	ck_assert_str_eq(secmem_backend_name(SECMEM_BACKEND_NONE), "none");
	ck_assert_str_eq(secmem_backend_name((enum secmem_backend)99), "none");
}

SM_TEST(test_strerror)
{
	const int codes[] = {
		SECMEM_ENOBACKEND, SECMEM_EMEMLOCK, SECMEM_ENOMEM,
		SECMEM_EINVAL, SECMEM_EOVERFLOW, SECMEM_EBUSY,
		SECMEM_ESYSCALL, SECMEM_ENOTSUP, SECMEM_EWIPED,
	};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *s = secmem_strerror(codes[i]);

		ck_assert_ptr_nonnull(s);
		ck_assert_msg(strlen(s) > 40, "code %d: '%s'", codes[i], s);
		ck_assert_msg(strchr(s, ':'), "no advice for %d: '%s'",
			      codes[i], s);
	}
	ck_assert_str_eq(secmem_strerror(SECMEM_OK), "Success");
	ck_assert_str_eq(secmem_strerror(EINVAL), strerror(EINVAL));
	ck_assert_ptr_nonnull(strstr(secmem_strerror(SECMEM_ENOBACKEND),
				     "SECMEM_ALLOW_INSECURE=1"));
}

SM_TEST(test_init_busy)
{
	unsigned int mine = test_mode == TEST_MODE_MLOCK ?
			    SECMEM_INIT_FORCE_INSECURE : 0;
	unsigned int other = test_mode == TEST_MODE_MLOCK ? 0 :
			     SECMEM_INIT_FORCE_INSECURE;
	void *p = secmem_malloc(10);

	ck_assert_int_eq(secmem_init(mine), 0);	/* same flags: fine */
	errno = 0;
	ck_assert_int_eq(secmem_init(other), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EBUSY);
	secmem_free(p);
	/* Nothing handed out: the policy may change (arenas are dropped). */
	ck_assert_int_eq(secmem_init(other), 0);
	p = secmem_malloc(10);
	ck_assert_ptr_nonnull(p);
	secmem_free(p);
	ck_assert_int_eq(secmem_init(0x1000), -1);
	ck_assert_int_eq(errno, EINVAL);
}

static int count_secret_fds(void)
{
	char path[64], target[256];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (strstr(target, "secretmem") || strstr(target, "memfd:secmem"))
			n++;
	}
	return n;
}

static void do_child_fresh(void *arg)
{
	struct secmem_stats st;
	char *q;

	(void)arg;
	if (secmem_stats(&st) || st.arenas || st.allocations || st.fds ||
	    count_secret_fds())
		_exit(10);
	q = secmem_malloc(100);
	if (!q)
		_exit(11);
	strcpy(q, "child");
	if (secmem_usable_size(q) < 100)
		_exit(12);
	secmem_free(q);
	if (secmem_stats(&st) || st.allocations)
		_exit(13);
	_exit(0);
}

/*
 * A child that allocates before it touches a stale parent pointer: its new
 * arena must not land on the parent's old range, where the stale pointer
 * would read (and secmem_free() would free) the child's own secret.
 */
static void do_child_stale_pointer(void *arg)
{
	volatile char *stale = arg;
	char *q = secmem_malloc(64);

	if (!q)
		_exit(20);
	strcpy(q, "child secret");
	if (q == (char *)arg)
		_exit(21);
	signal(SIGSEGV, SIG_DFL);	/* ASan's handler would exit(1) */
	(void)stale[0];			/* must fault: SIGSEGV */
	_exit(22);
}

static _Atomic bool init_race_stop;
static _Atomic unsigned long init_race_nobackend, init_race_allocs;

static void *init_race_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&init_race_stop)) {
		void *p = secmem_malloc(48);

		if (p) {
			secmem_free(p);
			atomic_fetch_add(&init_race_allocs, 1);
		} else if (secmem_last_error() == SECMEM_ENOBACKEND) {
			atomic_fetch_add(&init_race_nobackend, 1);
		}
	}
	return NULL;
}

/*
 * secmem_init() switching backends while other threads allocate: each
 * allocation must see one backend or the other, never none (the review
 * saw 49 spurious SECMEM_ENOBACKEND in 2.07M allocations).
 */
SM_TEST(test_init_races_allocations)
{
	unsigned int base = test_mode == TEST_MODE_MLOCK ?
			    SECMEM_INIT_FORCE_INSECURE : 0;
	unsigned int ok = 0;
	pthread_t t[3];
	int i;

	atomic_store(&init_race_stop, false);
	atomic_store(&init_race_nobackend, 0);
	atomic_store(&init_race_allocs, 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, init_race_thread,
						NULL), 0);
	for (i = 0; i < 20000; i++) {
		unsigned int f = base | (i % 2 ? SECMEM_INIT_NO_UNMAPPED : 0);

		if (secmem_init(f) == 0)
			ok++;
		else
			ck_assert_int_eq(secmem_last_error(), SECMEM_EBUSY);
	}
	atomic_store(&init_race_stop, true);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("# init race: %u of 20000 secmem_init() switched the backend, "
	       "%lu allocations\n", ok, atomic_load(&init_race_allocs));
	ck_assert_uint_eq(atomic_load(&init_race_nobackend), 0);
	ck_assert_int_eq(secmem_init(base), 0);
}

SM_TEST(test_fork)
{
	char *p = secmem_malloc(64);
	struct secmem_stats st;
	int status;

	strcpy(p, "parent secret");
	ck_assert_int_ge(count_secret_fds(), 1);
	/* The child gets an empty, working allocator and no arena fds. */
	status = test_in_child(do_child_fresh, NULL, child_err,
			       sizeof(child_err));
	ck_assert_child_ok(status);
	/* The parent's secrets are not in the child at all. */
	status = test_in_child(do_read, p, child_err, sizeof(child_err));
	ck_assert_killed_by(status, SIGSEGV);
	/* Still so once the child has arenas of its own. */
	status = test_in_child(do_child_stale_pointer, p, child_err,
			       sizeof(child_err));
	ck_assert_killed_by(status, SIGSEGV);
	/* The parent is unaffected. */
	ck_assert_str_eq(p, "parent secret");
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 1);
	secmem_free(p);
	p = secmem_malloc(64);
	ck_assert_ptr_nonnull(p);
	secmem_free(p);
}

/*
 * Under SECMEM_FORK_DROP a child that frees the parent's secrets, from an
 * atexit() handler as ported libsodium code does, must go on: each free
 * of an address in the parent's arenas is a no-op that touches nothing
 * (the memory is not there: a touch is SIGSEGV).  The child's stdio
 * buffer, flushed by exit() after the handlers, must arrive.
 */
static char **fork_parent_ptrs;

static void fork_free_parent_ptrs(void)
{
	for (int i = 0; fork_parent_ptrs[i]; i++)
		secmem_free(fork_parent_ptrs[i]);
}

static void do_child_frees_parent(void *arg)
{
	static char buf[BUFSIZ];
	struct secmem_stats st;
	char **p = arg, *q;
	int status;
	pid_t pid;

	fork_parent_ptrs = p;
	q = secmem_malloc(64);
	if (!q)
		_exit(40);
	strcpy(q, "child secret");
	/* Not the start of an allocation: still the parent's, still no-op. */
	secmem_free(p[0] + 8);
	secmem_free(p[1] + 4096);
	if (secmem_free_if_owned(p[1]) != 1)
		_exit(41);
	if (secmem_owns(p[0]) || secmem_owns(p[1]))
		_exit(42);
	if (secmem_stats(&st) || st.allocations != 1 ||
	    strcmp(q, "child secret"))
		_exit(43);
	secmem_free(q);
	/* A grandchild inherits the reservation and the no-op. */
	pid = fork();
	if (pid == 0) {
		secmem_free(p[2]);
		secmem_free(secmem_malloc(16));
		secmem_free(p[0]);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		_exit(44);
	setvbuf(stderr, buf, _IOFBF, sizeof(buf));
	atexit(fork_free_parent_ptrs);
	fprintf(stderr, "child: buffered line\n");
	exit(0);
}

SM_TEST(test_fork_free_parent)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *p[4] = {
		secmem_malloc(64), secmem_malloc(100000),
		secmem_alloc_pages(2 * pg), NULL,
	};
	struct secmem_stats st;
	int status;

	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(p[i]);
		memset(p[i], 0x33, 64);
	}
	ck_assert_int_eq(secmem_protect(p[2], SECMEM_NOACCESS), 0);
	status = test_in_child(do_child_frees_parent, p, child_err,
			       sizeof(child_err));
	ck_assert_child_ok(status);
	ck_assert_msg(strstr(child_err, "child: buffered line"), "stderr: %s",
		      child_err);
	/* The parent still has all three. */
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 3);
	ck_assert_int_eq(p[0][63], 0x33);
	ck_assert_int_eq(p[1][63], 0x33);
	for (int i = 0; i < 3; i++)
		secmem_free(p[i]);
}

#ifdef TEST_LIBSECMEM_SO
struct dl_thread {
	void *(*alloc)(size_t);
	void (*release)(void *);
	sem_t allocated, go;
	bool ok;
};

static void *dl_thread_main(void *arg)
{
	struct dl_thread *t = arg;
	void *p = t->alloc(32);	/* binds the thread: its key has a value */

	t->ok = p != NULL;
	t->release(p);
	sem_post(&t->allocated);
	while (sem_wait(&t->go) < 0)
		;
	return NULL;		/* exits after the dlclose() */
}

/*
 * The shared library, dlopen()ed by a plugin and dlclose()d: a thread
 * that used it exits afterwards, and its thread-specific key must not
 * call a destructor in unloaded code (SIGSEGV).  A fork afterwards must
 * not run unloaded fork handlers either.
 */
static void do_dlclose_thread_exit(void *arg)
{
	struct dl_thread t = { .ok = false };
	pthread_t th;
	void *h;
	pid_t pid;
	int st;

	(void)arg;
	setenv("SECMEM_ALLOW_INSECURE", "1", 1);
	h = dlopen(TEST_LIBSECMEM_SO, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		_exit(50);
	}
	t.alloc = (void *(*)(size_t))dlsym(h, "secmem_malloc");
	t.release = (void (*)(void *))dlsym(h, "secmem_free");
	if (!t.alloc || !t.release) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		_exit(51);
	}
	if (sem_init(&t.allocated, 0, 0) || sem_init(&t.go, 0, 0) ||
	    pthread_create(&th, NULL, dl_thread_main, &t))
		_exit(52);
	while (sem_wait(&t.allocated) < 0)
		;
	if (!t.ok)
		_exit(53);
	if (dlclose(h)) {
		fprintf(stderr, "dlclose: %s\n", dlerror());
		_exit(54);
	}
	signal(SIGSEGV, SIG_DFL);	/* ASan's handler would exit(1) */
	sem_post(&t.go);
	pthread_join(th, NULL);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		_exit(55);
	_exit(0);
}

SM_TEST(test_dlclose_thread_exit)
{
	int status = test_in_child(do_dlclose_thread_exit, NULL, child_err,
				   sizeof(child_err));

	ck_assert_child_ok(status);
}
#endif

/*
 * Whether the memfd_secret probe cannot be tested here (recorded as the
 * test's skip): it asks about CAP_IPC_LOCK's exemption only on
 * memfd_secret, and only with CAP_IPC_LOCK.
 */
static bool probe_skipped(void)
{
	if (test_mode != TEST_MODE_SECURE ||
	    secmem_init(SECMEM_INIT_NO_UNMAPPED) < 0 ||
	    secmem_backend() != SECMEM_BACKEND_MEMFD_SECRET) {
		test_skip("memfd_secret is not available: nothing to probe");
		return true;
	}
	if (!test_have_ipc_lock()) {
		test_skip("no CAP_IPC_LOCK: the exemption is not probed");
		return true;
	}
	return false;
}

static _Atomic bool limit_stop;
static _Atomic unsigned long limit_reads, limit_zero;

static void *limit_reader(void *arg)
{
	struct rlimit rl;

	(void)arg;
	while (!atomic_load(&limit_stop)) {
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == 0)
			atomic_fetch_add(&limit_zero, 1);
		atomic_fetch_add(&limit_reads, 1);
	}
	return NULL;
}

/*
 * The memfd_secret probe asks the kernel whether CAP_IPC_LOCK exempts
 * this process from RLIMIT_MEMLOCK: it must ask without changing the
 * process's limit, which another thread may read (or fault secret memory
 * under) at any time.  Each secmem_init() with other flags probes again.
 */
SM_TEST(test_probe_keeps_memlock_limit)
{
	struct timespec t0, t1;
	pthread_t th;
	int i;

	if (probe_skipped())
		return;
	test_set_memlock(64ULL << 20);
	atomic_store(&limit_stop, false);
	ck_assert_int_eq(pthread_create(&th, NULL, limit_reader, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 4000; i++) {
		ck_assert_int_eq(secmem_init(SECMEM_INIT_NO_UNMAPPED |
					     (i % 2 ? SECMEM_INIT_ALLOW_INSECURE :
						      0)), 0);
		ck_assert_int_eq(secmem_backend(), SECMEM_BACKEND_MEMFD_SECRET);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec >= 3)
			break;
	}
	atomic_store(&limit_stop, true);
	pthread_join(th, NULL);
	printf("# %d probes: %lu of %lu reads of RLIMIT_MEMLOCK saw 0\n", i,
	       atomic_load(&limit_zero), atomic_load(&limit_reads));
	ck_assert_uint_gt(atomic_load(&limit_reads), 0);
	ck_assert_uint_eq(atomic_load(&limit_zero), 0);
	ck_assert_int_eq(secmem_init(0), 0);
}

/*
 * SECMEM_FORK_COPY: the child has the parent's secrets at the same
 * addresses, in memory of its own: writes in either process are not seen
 * by the other, and a NOACCESS block stays NOACCESS in the child.
 */
SM_TEST(test_fork_copy)
{
	char *p, *big, *blk;
	int status, fds[2], i;
	char buf[64] = "";
	pid_t pid;

	ck_assert_int_eq(secmem_set_fork_policy(7), -1);
	ck_assert_int_eq(errno, EINVAL);
	p = secmem_malloc(64);
	ck_assert_ptr_nonnull(p);
	strcpy(p, "parent secret");
	/* Made before the policy changes: existing arenas switch too. */
	ck_assert_int_eq(secmem_set_fork_policy(SECMEM_FORK_COPY), 0);
	big = secmem_malloc(300000);
	ck_assert_ptr_nonnull(big);
	for (i = 0; i < 300000; i++)
		big[i] = (char)(i % 251);
	blk = secmem_alloc_pages(4096);
	ck_assert_ptr_nonnull(blk);
	strcpy(blk, "pages");
	ck_assert_int_eq(secmem_protect(blk, SECMEM_NOACCESS), 0);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		for (i = 0; i < 300000; i++)
			bad |= big[i] != (char)(i % 251);
		if (bad || strcmp(p, "parent secret"))
			_exit(30);
		strcpy(p, "child wrote");	/* must stay in the child */
		if (secmem_protect(blk, SECMEM_READONLY) || strcmp(blk, "pages"))
			_exit(31);
		secmem_free(big);		/* the child's own copy */
		big = secmem_malloc(64);
		if (!big)
			_exit(32);
		if (write(fds[1], p, strlen(p) + 1) < 0)
			_exit(33);
		ck_assert_int_eq(secmem_protect(blk, SECMEM_NOACCESS), 0);
		signal(SIGSEGV, SIG_DFL);
		(void)*(volatile char *)blk;	/* must fault */
		_exit(34);
	}
	close(fds[1]);
	ck_assert_int_gt(read(fds[0], buf, sizeof(buf) - 1), 0);
	close(fds[0]);
	ck_assert_str_eq(buf, "child wrote");
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_killed_by(status, SIGSEGV);
	ck_assert_str_eq(p, "parent secret");
	/* One assertion: Check reports every passing one to its parent. */
	for (i = 0; i < 300000 && big[i] == (char)(i % 251); i++)
		;
	ck_assert_int_eq(i, 300000);
	ck_assert_int_eq(secmem_protect(blk, SECMEM_READWRITE), 0);
	ck_assert_str_eq(blk, "pages");
	secmem_free(blk);
	secmem_free(big);
	secmem_free(p);
	ck_assert_int_eq(secmem_set_fork_policy(SECMEM_FORK_DROP), 0);
}

SM_TEST(test_memlock_exhaustion)
{
	enum { CHUNK = 60000, MAX = 1000 };
	void *v[MAX];
	struct secmem_stats st;
	const char *msg;
	int n;

	ck_assert(test_set_memlock(4ULL << 20));
	/* CAP_IPC_LOCK lifts the limit, for the kernel and for libsecmem. */
	ck_assert(test_drop_ipc_lock());
	for (n = 0; n < MAX; n++) {
		v[n] = secmem_malloc(CHUNK);
		if (!v[n])
			break;
		memset(v[n], 0x11, CHUNK);	/* would SIGBUS if overcommitted */
	}
	ck_assert_int_lt(n, MAX);
	ck_assert_int_gt(n, 10);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EMEMLOCK);
	msg = secmem_strerror(secmem_last_error());
	ck_assert_msg(strstr(msg, "RLIMIT_MEMLOCK is 4 MiB and ") &&
		      strstr(msg, " are in use") && strstr(msg, "ulimit -l") &&
		      strstr(msg, "LimitMEMLOCK="), "message: %s", msg);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_le(st.memlock_charged, 4ULL << 20);
	ck_assert_uint_eq(st.memlock_limit, 4ULL << 20);
	/* Freeing makes room again. */
	secmem_free(v[--n]);
	v[n] = secmem_malloc(CHUNK);
	ck_assert_ptr_nonnull(v[n]);
	while (n >= 0)
		secmem_free(v[n--]);
}

/*
 * What a thread with a cancellation pending calls, and what it returned:
 * written before the thread reaches its own cancellation point.
 */
struct cancel_call {
	int (*call)(void);
	_Atomic int result;
};

static void *cancel_call_main(void *arg)
{
	struct cancel_call *c = arg;

	/* Deferred (the default) and pending from here on. */
	pthread_cancel(pthread_self());
	atomic_store(&c->result, c->call());
	pthread_testcancel();
	return NULL;
}

/*
 * In a child: @call, named @name, on a thread with a cancellation pending,
 * which must return @expect and leave the cancellation to the thread's
 * own pthread_testcancel() after it.  Exits the child with @fail when the
 * thread does not run, @fail + 1 when it is not cancelled there, and
 * @fail + 2 when @call returns anything else.
 */
static void call_with_cancel_pending(int (*call)(void), const char *name,
				     int expect, int fail)
{
	struct cancel_call c = { .call = call, .result = -2 };
	void *ret = NULL;
	pthread_t th;

	if (pthread_create(&th, NULL, cancel_call_main, &c) ||
	    pthread_join(th, &ret))
		_exit(fail);
	if (ret != PTHREAD_CANCELED) {
		fprintf(stderr, "the thread was not cancelled at its own "
			"pthread_testcancel()\n");
		_exit(fail + 1);
	}
	if (atomic_load(&c.result) != expect) {
		fprintf(stderr, "%s in the thread returned %d\n", name,
			atomic_load(&c.result));
		_exit(fail + 2);
	}
}

/* In a child: exits 0 if a small allocation still works, @fail if not. */
static void exit_checking_malloc(int fail)
{
	void *p = secmem_malloc(32);

	if (!p)
		_exit(fail);
	secmem_free(p);
	_exit(0);
}

static int probe_again(void)
{
	return secmem_init(SECMEM_INIT_NO_UNMAPPED |
			   SECMEM_INIT_ALLOW_INSECURE);
}

static void do_cancel_during_probe(void *arg)
{
	(void)arg;
	alarm(20);		/* a global lock left held hangs below */
	if (secmem_init(SECMEM_INIT_NO_UNMAPPED) != 0)
		_exit(40);
	call_with_cancel_pending(probe_again, "secmem_init()", 0, 40);
	/* The global lock is free, and the probe still gives an answer. */
	if (secmem_init(SECMEM_INIT_NO_UNMAPPED) != 0 ||
	    secmem_backend() != SECMEM_BACKEND_MEMFD_SECRET)
		_exit(43);
	exit_checking_malloc(44);
}

/*
 * The memfd_secret exemption probe's child runs on the calling thread's
 * state (CLONE_VM, the same thread pointer): a cancellation pending on
 * that thread must be acted on at the thread's own next cancellation
 * point, never by the child's read() or by the wait for the child, which
 * holds the global lock.
 */
SM_TEST(test_probe_pending_cancel)
{
	int status;

	if (probe_skipped())
		return;
	ck_assert_int_eq(secmem_init(0), 0);
	status = test_in_child(do_cancel_during_probe, NULL, child_err,
			       sizeof(child_err));
	ck_assert_child_ok(status);
}

/*
 * In a child: 40 allocations of 64 KiB, all freed, for secmem_trim() to
 * give back.  Exits the child with @fail if one fails.
 */
static void alloc_and_free_blocks(int fail)
{
	enum { N = 40, SIZE = 64 << 10 };
	void *v[N];
	int i;

	for (i = 0; i < N; i++) {
		v[i] = secmem_malloc(SIZE);
		if (!v[i])
			_exit(fail);
	}
	for (i = 0; i < N; i++)
		secmem_free(v[i]);
}

static void do_cancel_during_trim(void *arg)
{
	(void)arg;
	alarm(20);		/* a heap lock left held hangs below */
	alloc_and_free_blocks(40);
	call_with_cancel_pending(secmem_trim, "secmem_trim()", 1, 41);
	/* Every heap lock is free. */
	alloc_and_free_blocks(44);
	exit_checking_malloc(45);
}

/*
 * secmem_trim() closes the files of the arenas it unmaps, with the heap's
 * lock held: close() is a cancellation point, and a pending cancellation
 * must wait for the caller's own next one.
 */
SM_TEST(test_trim_pending_cancel)
{
	int status = test_in_child(do_cancel_during_trim, NULL, child_err,
				   sizeof(child_err));

	ck_assert_child_ok(status);
}

/*
 * With CAP_IPC_LOCK, memfd_secret arenas beyond RLIMIT_MEMLOCK are
 * refused exactly when the running kernel would refuse them: a refusal
 * regardless of the kernel would cap root at the limit (174,592 live
 * 32-byte secrets under 8 MiB) where the kernel maps 256 MiB.  Where the
 * kernel charges faulted pages with no exemption, the refusal must stay,
 * or the memset() below would die of SIGBUS.
 */
SM_TEST(test_memlock_ipc_lock_secret)
{
	enum { MIB = 1 << 20, N = 16 };
	void *v[N];
	bool exempt;
	int n;

	if (test_mode != TEST_MODE_SECURE ||
	    secmem_backend() != SECMEM_BACKEND_MEMFD_SECRET) {
		test_skip("the backend in use is not memfd_secret");
		return;
	}
	if (!test_have_ipc_lock()) {
		test_skip("no CAP_IPC_LOCK");
		return;
	}
	exempt = test_kernel_exempts_secret();
	printf("# this kernel %s CAP_IPC_LOCK from memfd_secret's "
	       "RLIMIT_MEMLOCK\n", exempt ? "exempts" : "does not exempt");
	ck_assert(test_set_memlock(2ULL * MIB));
	for (n = 0; n < N; n++) {
		v[n] = secmem_malloc(MIB);
		if (!v[n])
			break;
		memset(v[n], 0x22, MIB);
	}
	if (exempt) {
		ck_assert_msg(n == N, "allocation %d of 1 MiB under a 2 MiB "
			      "limit refused although the kernel allows it: "
			      "%s", n + 1,
			      secmem_strerror(secmem_last_error()));
	} else {
		ck_assert_int_lt(n, N);
		ck_assert_int_eq(secmem_last_error(), SECMEM_EMEMLOCK);
	}
	while (n > 0)
		secmem_free(v[--n]);
}

TCase *test_misc_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	/*
	 * These cases fork, probe and fill memlock: seconds of work on an
	 * emulated CPU shared with other guests, so Check's 4 s default
	 * would time out work that is not hung.
	 */
	tcase_set_timeout(tc, 60);

	tcase_add_test(tc, test_memzero_memeq);
	tcase_add_test(tc, test_backend_in_use);
	tcase_add_test(tc, test_strerror);
	tcase_add_test(tc, test_init_busy);
	tcase_add_test(tc, test_init_races_allocations);
	tcase_add_test(tc, test_fork);
	tcase_add_test(tc, test_fork_copy);
	tcase_add_test(tc, test_fork_free_parent);
#ifdef TEST_LIBSECMEM_SO
	tcase_add_test(tc, test_dlclose_thread_exit);
#endif
	tcase_add_test(tc, test_probe_keeps_memlock_limit);
	tcase_add_test(tc, test_probe_pending_cancel);
	tcase_add_test(tc, test_trim_pending_cancel);
	tcase_add_test(tc, test_memlock_exhaustion);
	tcase_add_test(tc, test_memlock_ipc_lock_secret);
	return tc;
}

/* ---- probing: a kernel without secure backends, simulated by seccomp ---- */

/*
 * Make memfd_secret fail with @secret_errno and memfd_create with
 * MFD_UNMAPPED fail with EINVAL, as on a kernel without either.
 */
static void deny_secure_backends(int secret_errno)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
#ifdef SYS_memfd_secret
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_secret, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (unsigned int)secret_errno),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MFD_UNMAPPED, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(f) / sizeof(f[0]),
		.filter = f,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(20);
}

static void do_no_backend(void *arg)
{
	const char *msg;

	unsetenv("SECMEM_ALLOW_INSECURE");
	deny_secure_backends((int)(intptr_t)arg);
	if (secmem_backend() != SECMEM_BACKEND_NONE)
		_exit(21);
	errno = 0;
	if (secmem_malloc(16) || errno != ENOSYS)
		_exit(22);
	if (secmem_last_error() != SECMEM_ENOBACKEND)
		_exit(23);
	if (secmem_fd_create(4096, 0) != -1)
		_exit(24);
	msg = secmem_strerror(secmem_last_error());
	if (!strstr(msg, "SECMEM_ALLOW_INSECURE=1") ||
	    !strstr(msg, "memfd_secret"))
		_exit(25);
	_exit(0);
}

static void do_no_backend_opt_in(void *arg)
{
	void *p;

	deny_secure_backends((int)(intptr_t)arg);
	setenv("SECMEM_ALLOW_INSECURE", "1", 1);
	if (secmem_backend() != SECMEM_BACKEND_MLOCK)
		_exit(31);
	p = secmem_malloc(16);
	if (!p)
		_exit(32);
	secmem_free(p);
	_exit(0);
}

static void do_no_backend_init_flag(void *arg)
{
	(void)arg;
	unsetenv("SECMEM_ALLOW_INSECURE");
	deny_secure_backends(ENOSYS);
	if (secmem_init(0) != -1 || errno != ENOSYS)
		_exit(41);
	if (secmem_init(SECMEM_INIT_ALLOW_INSECURE) != 0 ||
	    secmem_backend() != SECMEM_BACKEND_MLOCK)
		_exit(42);
	_exit(0);
}

/*
 * SECMEM_INIT_REFUSE_INSECURE on a kernel without a secure backend, with
 * SECMEM_ALLOW_INSECURE=1 in the environment: no secret ever goes to
 * the mlock backend, and neither the environment nor a later
 * secmem_init() brings it back.
 */
static void do_refuse_insecure(void *arg)
{
	const char *msg;
	pid_t pid;
	int st;

	(void)arg;
	setenv("SECMEM_ALLOW_INSECURE", "1", 1);
	deny_secure_backends(ENOSYS);
	errno = 0;
	if (secmem_init(SECMEM_INIT_REFUSE_INSECURE) != -1 || errno != ENOSYS ||
	    secmem_last_error() != SECMEM_ENOBACKEND)
		_exit(51);
	if (secmem_backend() != SECMEM_BACKEND_NONE)
		_exit(52);
	errno = 0;
	if (secmem_malloc(16) || errno != ENOSYS ||
	    secmem_last_error() != SECMEM_ENOBACKEND)
		_exit(53);
	if (secmem_fd_create(4096, 0) != -1)
		_exit(54);
	/* The environment's opt-in does not come back with the default. */
	if (secmem_init(0) != -1 || secmem_backend() != SECMEM_BACKEND_NONE)
		_exit(55);
	msg = secmem_strerror(SECMEM_ENOBACKEND);
	if (!strstr(msg, "SECMEM_INIT_REFUSE_INSECURE") ||
	    strstr(msg, "set SECMEM_ALLOW_INSECURE=1"))
		_exit(56);
	/* Nor with the flags that ask for it. */
	errno = 0;
	if (secmem_init(SECMEM_INIT_ALLOW_INSECURE) != -1 || errno != EPERM ||
	    secmem_last_error() != SECMEM_EINVAL ||
	    !strstr(secmem_strerror(SECMEM_EINVAL), "refused"))
		_exit(57);
	if (secmem_init(SECMEM_INIT_FORCE_INSECURE) != -1 || errno != EPERM)
		_exit(58);
	if (secmem_malloc(16) || secmem_backend() != SECMEM_BACKEND_NONE)
		_exit(59);
	/* A fork child inherits the refusal. */
	pid = fork();
	if (pid == 0)
		_exit(secmem_malloc(16) || secmem_init(0) != -1 ? 1 : 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		_exit(60);
	_exit(0);
}

/*
 * The environment already downgraded the process to the mlock backend
 * when the refusal comes: secmem_init() fails (EBUSY) while its memory
 * is live, and from then on no new arena or file of that backend is
 * made; once it is all freed the refusal probes again, and finds none.
 */
static void do_refuse_after_downgrade(void *arg)
{
	void *p, *q;

	(void)arg;
	setenv("SECMEM_ALLOW_INSECURE", "1", 1);
	deny_secure_backends(ENOSYS);
	p = secmem_malloc(16);
	if (!p || secmem_backend() != SECMEM_BACKEND_MLOCK)
		_exit(61);
	errno = 0;
	if (secmem_init(SECMEM_INIT_REFUSE_INSECURE) != -1 || errno != EBUSY)
		_exit(62);
	errno = 0;
	q = secmem_malloc(4 << 20);	/* needs a new arena */
	if (q || errno != ENOSYS || secmem_last_error() != SECMEM_ENOBACKEND)
		_exit(63);
	if (secmem_fd_create(4096, 0) != -1 ||
	    secmem_last_error() != SECMEM_ENOBACKEND)
		_exit(64);
	secmem_free(p);
	if (secmem_init(SECMEM_INIT_REFUSE_INSECURE) != -1 ||
	    secmem_last_error() != SECMEM_ENOBACKEND ||
	    secmem_backend() != SECMEM_BACKEND_NONE)
		_exit(65);
	_exit(0);
}

/*
 * On this kernel, with the environment's opt-in: the refusal keeps the
 * secure backend (or, on a kernel without one, none), and a later
 * secmem_init() that would choose the mlock backend is refused even with
 * nothing allocated, while one that keeps the secure backend is not
 * busy.
 */
static void do_refuse_here(void *arg)
{
	enum secmem_backend b;
	void *p;

	(void)arg;
	setenv("SECMEM_ALLOW_INSECURE", "1", 1);
	if (secmem_init(SECMEM_INIT_REFUSE_INSECURE) == 0) {
		b = secmem_backend();
		if (b != SECMEM_BACKEND_UNMAPPED_MEMFD &&
		    b != SECMEM_BACKEND_MEMFD_SECRET)
			_exit(71);
	} else if (secmem_last_error() != SECMEM_ENOBACKEND) {
		_exit(72);
	}
	b = secmem_backend();
	errno = 0;
	if (secmem_init(SECMEM_INIT_FORCE_INSECURE) != -1 || errno != EPERM ||
	    secmem_backend() != b)
		_exit(73);
	if (secmem_init(SECMEM_INIT_ALLOW_INSECURE |
			SECMEM_INIT_REFUSE_INSECURE) != -1 ||
	    errno != EINVAL)
		_exit(74);
	if (b == SECMEM_BACKEND_NONE)
		_exit(0);
	p = secmem_malloc(16);
	if (!p)
		_exit(75);
	/* Live memory: the same policy, flag or not, is no change. */
	if (secmem_init(0) != 0 || secmem_init(SECMEM_INIT_REFUSE_INSECURE))
		_exit(76);
	secmem_free(p);
	_exit(0);
}

/*
 * memfd_create() as a kernel would answer it if MFD_UNMAPPED (0x20) meant
 * something else there: success, with an ordinary tmpfs file.  The suite
 * links libsecmem statically, so this definition is the one it calls.
 */
static bool fake_mfd_unmapped_is_shmem;

int memfd_create(const char *name, unsigned int flags)
{
	if (fake_mfd_unmapped_is_shmem)
		flags &= ~MFD_UNMAPPED;
	return (int)syscall(SYS_memfd_create, name, flags);
}

static void do_unmapped_is_shmem(void *arg)
{
	(void)arg;
	fake_mfd_unmapped_is_shmem = true;
	unsetenv("SECMEM_ALLOW_INSECURE");
	secmem_init(0);
	/* Never the unmapped backend on ordinary shmem. */
	if (secmem_backend() == SECMEM_BACKEND_UNMAPPED_MEMFD)
		_exit(43);
	/* What is chosen instead must be what the kernel really offers. */
	if (secmem_init(SECMEM_INIT_NO_UNMAPPED) == 0 ?
	    secmem_backend() != SECMEM_BACKEND_MEMFD_SECRET :
	    secmem_last_error() != SECMEM_ENOBACKEND)
		_exit(44);
	_exit(0);
}

START_TEST(test_probe_no_secure_backend)
{
	int errs[] = { ENOSYS, EPERM };

	for (int i = 0; i < 2; i++) {
		int st = test_in_child(do_no_backend,
				       (void *)(intptr_t)errs[i], child_err,
				       sizeof(child_err));

		ck_assert_child_ok(st);
		st = test_in_child(do_no_backend_opt_in,
				   (void *)(intptr_t)errs[i], child_err,
				   sizeof(child_err));
		ck_assert_child_ok(st);
	}
	int st = test_in_child(do_no_backend_init_flag, NULL, child_err,
			       sizeof(child_err));

	ck_assert_child_ok(st);
}
END_TEST

/* SECMEM_INIT_REFUSE_INSECURE outranks SECMEM_ALLOW_INSECURE=1. */
START_TEST(test_probe_refuse_insecure)
{
	void (*const fns[])(void *) = {
		do_refuse_insecure, do_refuse_after_downgrade, do_refuse_here,
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		int st = test_in_child(fns[i], NULL, child_err,
				       sizeof(child_err));

		ck_assert_child_ok(st);
	}
}
END_TEST

/* A successful memfd_create(MFD_UNMAPPED) is not taken on trust. */
START_TEST(test_probe_unmapped_verified)
{
	int st = test_in_child(do_unmapped_is_shmem, NULL, child_err,
			       sizeof(child_err));

	ck_assert_child_ok(st);
}
END_TEST

/* The probing flags alone, without seccomp. */
START_TEST(test_probe_flags)
{
	unsetenv("SECMEM_ALLOW_INSECURE");
	errno = 0;
	ck_assert_int_eq(secmem_init(SECMEM_INIT_NO_UNMAPPED |
				     SECMEM_INIT_NO_SECRET), -1);
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_int_eq(secmem_last_error(), SECMEM_ENOBACKEND);
	ck_assert_ptr_null(secmem_malloc(1));
	ck_assert_int_eq(secmem_backend(), SECMEM_BACKEND_NONE);
	ck_assert_int_eq(secmem_init(SECMEM_INIT_NO_UNMAPPED |
				     SECMEM_INIT_NO_SECRET |
				     SECMEM_INIT_ALLOW_INSECURE), 0);
	ck_assert_int_eq(secmem_backend(), SECMEM_BACKEND_MLOCK);
}
END_TEST

/*
 * errno is the caller's after every call that succeeds, the first
 * allocation included, whose backend probe asks for MFD_UNMAPPED and
 * gets EINVAL from a stock kernel.
 */
START_TEST(test_probe_errno_kept)
{
	void *p;

	setenv("SECMEM_ALLOW_INSECURE", "1", 1);	/* any kernel */
	errno = EDOM;
	p = secmem_malloc(16);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(errno, EDOM);
	secmem_free(p);
	ck_assert_int_eq(errno, EDOM);
	/* Nothing is allocated: another probe, with memfd_secret first. */
	ck_assert_int_eq(secmem_init(SECMEM_INIT_NO_UNMAPPED), 0);
	ck_assert_int_eq(errno, EDOM);
	ck_assert_int_eq(secmem_init(0), 0);
	ck_assert_int_eq(errno, EDOM);
	p = secmem_calloc(4, 100);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(errno, EDOM);
	secmem_free(p);
	ck_assert_int_eq(errno, EDOM);
}
END_TEST

TCase *test_probe_tcase(void)
{
	TCase *tc = tcase_create("probe");

	tcase_add_test(tc, test_probe_no_secure_backend);
	tcase_add_test(tc, test_probe_flags);
	tcase_add_test(tc, test_probe_unmapped_verified);
	tcase_add_test(tc, test_probe_errno_kept);
	tcase_add_test(tc, test_probe_refuse_insecure);
	return tc;
}
