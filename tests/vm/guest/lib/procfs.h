/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read one figure from the kernel's "key value" files (/proc/vmstat) and
 * "key: value kB" files (/proc/meminfo), for the guest tests and for the
 * kernel benchmark (bench/kernel/fault_bench.c), which both compare such
 * counters before and after what they measure.
 */
#ifndef SECMEM_TEST_PROCFS_H
#define SECMEM_TEST_PROCFS_H

#include <stddef.h>

/*
 * The number after @key at the start of a line of @path, where the key is
 * followed by ' ' or ':'. -1 if the file cannot be read or has no such
 * line, which is how a test tells a kernel without the counter.
 */
long long procfs_read_key(const char *path, const char *key);

/*
 * The value of KEY=VALUE on the kernel command line (/proc/cmdline), a
 * whole word, copied into @buf: @buf, or NULL when the word is not there
 * or the file cannot be read.
 */
const char *procfs_cmdline_get(const char *key, char *buf, size_t len);

#endif /* SECMEM_TEST_PROCFS_H */
