/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared helpers of the libsecmem Check suite.
 *
 * Every test case runs twice: in the "secure" suite (default probing: the
 * unmapped memfd or memfd_secret) and in the "mlock" suite (the insecure
 * backend forced by opt-in).  Tests in the secure suite are reported as
 * TAP "# SKIP" only when this kernel really has no secure backend.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#include "secmem.h"

enum test_mode {
	TEST_MODE_SECURE,
	TEST_MODE_MLOCK,
};

extern enum test_mode test_mode;

/* Record that the running test is skipped, with a reason for TAP. */
void test_skip(const char *reason);
/* Skip unless the backend of this suite exists; true if skipped. */
bool test_backend_missing(void);

/*
 * A test body that is skipped (not run, reported "# SKIP") when the
 * suite's backend does not exist on this kernel.
 */
#define SM_TEST(name)					\
	static void name##_body(void);			\
	START_TEST(name)				\
	{						\
		if (!test_backend_missing())		\
			name##_body();			\
	}						\
	END_TEST					\
	static void name##_body(void)

/* Lines of /proc/self/maps. */
int test_count_maps(void);
/* Find the mapping holding @addr: its bounds and permissions ("rw-s"). */
bool test_find_map(const void *addr, unsigned long *start, unsigned long *end,
		   char perms[5]);

/*
 * Run @fn(@arg) in a child with stderr captured.  Returns the wait status;
 * the child's stderr (NUL-terminated) goes to @err.
 */
int test_in_child(void (*fn)(void *), void *arg, char *err, size_t errlen);
/* Assert that a child status is death by @sig. */
#define ck_assert_killed_by(status, sig)				\
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == (sig),	\
		      "child status 0x%x, expected signal %d", (status), (sig))

/*
 * Set RLIMIT_MEMLOCK to @bytes (raising the hard limit if allowed).  If it
 * cannot, the soft limit is raised to the hard limit and false returned.
 */
bool test_set_memlock(unsigned long long bytes);
/* Drop CAP_IPC_LOCK, which exempts the process from RLIMIT_MEMLOCK. */
bool test_drop_ipc_lock(void);
/* Whether CAP_IPC_LOCK is in the effective set. */
bool test_have_ipc_lock(void);
/*
 * Whether this kernel exempts a process with CAP_IPC_LOCK from
 * RLIMIT_MEMLOCK for memfd_secret pages (asked in a child).
 */
bool test_kernel_exempts_secret(void);

bool test_under_asan(void);

TCase *test_heap_tcase(const char *mode);
TCase *test_death_tcase(const char *mode);
TCase *test_pages_tcase(const char *mode);
TCase *test_fd_tcase(const char *mode);
TCase *test_misc_tcase(const char *mode);
TCase *test_wiped_tcase(const char *mode);
TCase *test_api_tcase(const char *mode);
TCase *test_probe_tcase(void);

#endif /* TEST_UTIL_H */
