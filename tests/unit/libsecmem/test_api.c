// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The interfaces integrators build on: the version of the header and of
 * the library, and giving idle memory back (secmem_trim()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

TCase *test_api_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_trim);
	return tc;
}
