// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The interfaces integrators build on: the version of the header and of
 * the library, giving idle memory back (secmem_trim()), and the _r
 * functions, which return their error code (for bindings whose code moves
 * between threads, where secmem_last_error() would read another thread's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/*
 * The header's macros describe one release, the library reports the same
 * one, and a program can test for a function at compile time:
 * secmem_wiped() came with 0.2.0.
 */
START_TEST(test_version)
{
	char str[32];

	ck_assert_uint_eq(SECMEM_VERSION_NUMBER,
			  SECMEM_VERSION_ENCODE(SECMEM_VERSION_MAJOR,
						SECMEM_VERSION_MINOR,
						SECMEM_VERSION_PATCH));
	ck_assert_uint_eq(secmem_version(), SECMEM_VERSION_NUMBER);
	snprintf(str, sizeof(str), "%u.%u.%u", SECMEM_VERSION_MAJOR,
		 SECMEM_VERSION_MINOR, SECMEM_VERSION_PATCH);
	ck_assert_str_eq(str, SECMEM_VERSION_STRING);
	/* Each part has 8 bits: the encoding orders releases. */
	ck_assert_uint_lt(SECMEM_VERSION_ENCODE(0, 255, 255),
			  SECMEM_VERSION_ENCODE(1, 0, 0));
	ck_assert_uint_lt(SECMEM_VERSION_ENCODE(0, 1, 255),
			  SECMEM_VERSION_ENCODE(0, 2, 0));
#if SECMEM_VERSION_NUMBER >= SECMEM_VERSION_ENCODE(0, 2, 0)
	errno = 0;
	ck_assert_int_ne(secmem_wiped(), -1);
	ck_assert_int_eq(errno, 0);
#else
	ck_abort_msg("secmem.h %s: secmem_wiped() is older than that",
		     SECMEM_VERSION_STRING);
#endif
}
END_TEST

/* kB of VmLck in /proc/self/status: what the kernel counts as locked. */
static unsigned long test_vmlck_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long kb = 0;
	char line[256];

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

#define TRIM_BLOCK	(64 * 1024)
#define TRIM_MAX	256

/* A batch on another thread, hence another heap when there are two. */
static void *trim_thread(void *arg)
{
	void *p = secmem_malloc(TRIM_BLOCK);

	(void)arg;
	ck_assert_ptr_nonnull(p);
	secmem_free(p);
	return NULL;
}

/*
 * A batch that grew the heap to three arenas is freed: the heap keeps
 * the empty arenas as spares, mapped and charged, until secmem_trim()
 * gives them back.  The arena of the allocation still live stays, with
 * the allocation and its contents.
 */
SM_TEST(test_trim)
{
	struct secmem_stats st0, st;
	unsigned char *keep = secmem_malloc(100);
	unsigned long lck;
	uint64_t idle;
	void *v[TRIM_MAX];
	pthread_t t;
	int n = 0, maps;

	ck_assert_ptr_nonnull(keep);
	memset(keep, 0x5a, 100);
	ck_assert_int_eq(secmem_stats(&st0), 0);
	ck_assert_uint_eq(st0.arenas, 1);
	do {
		v[n] = secmem_malloc(TRIM_BLOCK);
		ck_assert_ptr_nonnull(v[n]);
		memset(v[n++], 0xa5, TRIM_BLOCK);
		ck_assert_int_eq(secmem_stats(&st), 0);
	} while (st.arenas < 3 && n < TRIM_MAX);
	ck_assert_uint_eq(st.arenas, 3);
	while (n > 0)
		secmem_free(v[--n]);
	ck_assert_int_eq(pthread_create(&t, NULL, trim_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);

	/* Freed, and still mapped and charged: the spares. */
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 1);
	ck_assert_uint_gt(st.arenas, 1);
	ck_assert_uint_gt(st.bytes_mapped, st0.bytes_mapped);
	idle = st.bytes_mapped - st0.bytes_mapped;
	maps = test_count_maps();
	lck = test_vmlck_kb();

	ck_assert_int_eq(secmem_trim(), 1);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.allocations, 1);
	ck_assert_uint_eq(st.arenas, 1);
	ck_assert_uint_eq(st.fds, 1);
	ck_assert_uint_eq(st.bytes_mapped, st0.bytes_mapped);
	ck_assert_uint_eq(st.memlock_charged, st0.memlock_charged);
	ck_assert_int_lt(test_count_maps(), maps);
	/*
	 * The kernel counts the mlock backend's arenas (mlock2()) and
	 * memfd_secret mappings (VM_LOCKED) as locked memory.
	 */
	if (secmem_backend() != SECMEM_BACKEND_UNMAPPED_MEMFD)
		ck_assert_uint_le(test_vmlck_kb() + (idle >> 10), lck);

	/* The live allocation, untouched. */
	ck_assert_int_eq(secmem_owns(keep), 1);
	ck_assert_uint_ge(secmem_usable_size(keep), 100);
	for (int i = 0; i < 100; i++)
		ck_assert_uint_eq(keep[i], 0x5a);
	ck_assert_int_eq(secmem_trim(), 0);	/* nothing idle is left */
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.arenas, 1);

	/* Its free keeps an idle slab, and the arena; trim returns both. */
	secmem_free(keep);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.arenas, 1);
	ck_assert_int_eq(secmem_trim(), 1);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.arenas, 0);
	ck_assert_uint_eq(st.bytes_mapped, 0);
	ck_assert_uint_eq(st.memlock_charged, 0);
	ck_assert_uint_eq(st.fds, 0);

	/* The allocator works on after a trim. */
	keep = secmem_malloc(100);
	ck_assert_ptr_nonnull(keep);
	secmem_free(keep);
}

/*
 * Every _r function returns 0 or the code of its failure, sets errno and
 * the thread's last error as the plain function does, and leaves its
 * output untouched on failure.
 */
SM_TEST(test_error_codes)
{
	void *const sentinel = (void *)&sentinel;
	void *p = sentinel, *pages;
	char *str = NULL;
	enum secmem_backend b;
	int fd = -2, w = -2;

	/* Successes, as the plain functions give them. */
	ck_assert_int_eq(secmem_backend_r(&b), SECMEM_OK);
	ck_assert_int_eq(b, secmem_backend());
	ck_assert_int_eq(secmem_malloc_r(&p, 40), SECMEM_OK);
	ck_assert_ptr_ne(p, sentinel);
	ck_assert_uint_ge(secmem_usable_size(p), 40);
	memset(p, 0x11, 40);
	ck_assert_int_eq(secmem_realloc_r(&p, 4000), SECMEM_OK);
	ck_assert_uint_eq(((unsigned char *)p)[39], 0x11);
	secmem_free(p);
	ck_assert_int_eq(secmem_calloc_r(&p, 10, 10), SECMEM_OK);
	ck_assert_uint_eq(((unsigned char *)p)[99], 0);
	secmem_free(p);
	ck_assert_int_eq(secmem_aligned_alloc_r(&p, 256, 10), SECMEM_OK);
	ck_assert_uint_eq((uintptr_t)p % 256, 0);
	secmem_free(p);
	ck_assert_int_eq(secmem_strdup_r(&str, "secret"), SECMEM_OK);
	ck_assert_str_eq(str, "secret");
	secmem_free(str);
	ck_assert_int_eq(secmem_strndup_r(&str, "secret", 3), SECMEM_OK);
	ck_assert_str_eq(str, "sec");
	secmem_free(str);
	ck_assert_int_eq(secmem_fd_create_r(&fd, 4096, 0), SECMEM_OK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(secmem_fd_wiped_r(fd, &w), SECMEM_OK);
	ck_assert_int_eq(w, 0);
	close(fd);
	w = -2;
	ck_assert_int_eq(secmem_wiped_r(&w), SECMEM_OK);
	ck_assert_int_eq(w, 0);
	ck_assert_int_eq(secmem_init_r(test_mode == TEST_MODE_MLOCK ?
				       SECMEM_INIT_FORCE_INSECURE : 0),
			 SECMEM_OK);

	/* Failures: the code, errno, the thread's record; nothing written. */
	p = sentinel;
	errno = 0;
	ck_assert_int_eq(secmem_malloc_r(&p, SIZE_MAX), SECMEM_EOVERFLOW);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EOVERFLOW);
	ck_assert_int_eq(secmem_calloc_r(&p, SIZE_MAX, 2), SECMEM_EOVERFLOW);
	errno = 0;
	ck_assert_int_eq(secmem_aligned_alloc_r(&p, 3, 16), SECMEM_EINVAL);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(secmem_alloc_pages_r(&p, 0), SECMEM_EINVAL);
	ck_assert_int_eq(secmem_malloc_r(NULL, 16), SECMEM_EINVAL);
	ck_assert_ptr_eq(p, sentinel);
	ck_assert_int_eq(secmem_strdup_r(&str, NULL), SECMEM_EINVAL);
	ck_assert_int_eq(secmem_strndup_r(NULL, "x", 1), SECMEM_EINVAL);
	fd = -2;
	ck_assert_int_eq(secmem_fd_create_r(&fd, 0, 0), SECMEM_EINVAL);
	ck_assert_int_eq(fd, -2);
	errno = 0;
	ck_assert_int_eq(secmem_fd_wiped_r(-1, &w), SECMEM_EINVAL);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(secmem_init_r(0x1000), SECMEM_EINVAL);

	/* A protected block: realloc refused, with its own errno. */
	ck_assert_int_eq(secmem_alloc_pages_r(&pages, 100), SECMEM_OK);
	ck_assert_int_eq(secmem_protect_r(pages, 7), SECMEM_EINVAL);
	ck_assert_int_eq(secmem_protect_r(pages, SECMEM_READONLY), SECMEM_OK);
	p = pages;
	errno = 0;
	ck_assert_int_eq(secmem_realloc_r(&p, 10000), SECMEM_EINVAL);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_ptr_eq(p, pages);
	ck_assert_int_eq(secmem_protect_r(pages, SECMEM_READWRITE), SECMEM_OK);

	/* Memory handed out: another policy is busy. */
	ck_assert_int_eq(secmem_init_r(test_mode == TEST_MODE_MLOCK ? 0 :
				       SECMEM_INIT_FORCE_INSECURE),
			 SECMEM_EBUSY);
	secmem_free(pages);

	/* The two functions whose -1 has one meaning, documented as such. */
	ck_assert_int_eq(secmem_set_fork_policy(99), -1);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EINVAL);
	ck_assert_int_eq(secmem_stats(NULL), -1);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EINVAL);
}

struct err_thread {
	int code;
	int last_error;
	void *p;
};

static void *err_thread_main(void *arg)
{
	struct err_thread *t = arg;

	t->p = NULL;
	t->code = secmem_aligned_alloc_r(&t->p, 24, 8);
	t->last_error = secmem_last_error();
	return NULL;
}

/*
 * The code is the caller's wherever it is read: a goroutine that moved
 * to another thread after a failure would read that thread's
 * secmem_last_error(), not its own.  secmem_strerror_r() describes a
 * code without any thread's particulars, into the caller's buffer.
 */
SM_TEST(test_error_codes_threads)
{
	struct err_thread t = { .code = -1 };
	char buf[512], small[16];
	size_t n;
	void *p = NULL;
	pthread_t th;

	ck_assert_int_eq(secmem_malloc_r(&p, SIZE_MAX), SECMEM_EOVERFLOW);
	ck_assert_int_eq(pthread_create(&th, NULL, err_thread_main, &t), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(t.code, SECMEM_EINVAL);
	ck_assert_int_eq(t.last_error, SECMEM_EINVAL);
	/* Here, the thread's failure is not the last error: its code is. */
	ck_assert_int_eq(secmem_last_error(), SECMEM_EOVERFLOW);
	n = secmem_strerror_r(t.code, buf, sizeof(buf));
	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "powers of two"));

	/* Length of the whole sentence; truncated, always terminated. */
	n = secmem_strerror_r(SECMEM_ENOBACKEND, NULL, 0);
	ck_assert_uint_gt(n, sizeof(small));
	ck_assert_uint_eq(secmem_strerror_r(SECMEM_ENOBACKEND, small,
					    sizeof(small)), n);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(strncmp(small, secmem_strerror(SECMEM_ENOBACKEND),
				 sizeof(small) - 1), 0);
	secmem_strerror_r(SECMEM_OK, buf, sizeof(buf));
	ck_assert_str_eq(buf, "Success");
	secmem_strerror_r(ENOMEM, buf, sizeof(buf));
	ck_assert_str_eq(buf, strerror(ENOMEM));
	/* Without particulars: no system call or errno is named. */
	secmem_strerror_r(SECMEM_ESYSCALL, buf, sizeof(buf));
	ck_assert_ptr_null(strstr(buf, "Success"));
	ck_assert_ptr_nonnull(strstr(buf, "ulimit -n"));
	secmem_strerror_r(SECMEM_EMEMLOCK, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "RLIMIT_MEMLOCK is "));
	ck_assert_ptr_null(strstr(buf, " more are needed"));
}

TCase *test_api_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_trim);
	tcase_add_test(tc, test_error_codes);
	tcase_add_test(tc, test_error_codes_threads);
	return tc;
}
