// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The interfaces integrators build on: the version of the header and of
 * the library.
 */
#define _GNU_SOURCE
#include <errno.h>
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

TCase *test_api_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test_version);
	return tc;
}
