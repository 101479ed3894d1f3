/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the daemon's Check suites: the suite entry point, and a fake
 * sysfs tree in a temporary directory laid out as docs/secmemd.md says
 * the kernel's is.
 */
#ifndef FAKE_SYSFS_H
#define FAKE_SYSFS_H

#include <check.h>
#include <stddef.h>

Suite *test_suite(void);

/*
 * Create a tree with @nodes nodes (node0..), each with pool_target 0,
 * watermarks 0, stats counting up from a per-node base (node N, stat i:
 * N * 1000 + i), flush_on_free "[immediate] deferred", hibernation
 * "[refuse] wipe" with hibernation_wiped_files 0, pageblock 2M.
 * Returns the root in @root (PATH_MAX).
 */
void fake_sysfs_create(char *root, int nodes);
/* Remove the tree. */
void fake_sysfs_destroy(const char *root);

/* Write/read a file relative to @root (read strips one trailing '\n'). */
void fake_write(const char *root, const char *rel, const char *text);
const char *fake_read(const char *root, const char *rel, char *buf,
		      size_t len);

/* Run @argv with stdout and stderr captured; returns the exit status. */
int run_capture(char *const argv[], char *out, size_t outlen, char *err,
		size_t errlen);

#endif /* FAKE_SYSFS_H */
