// SPDX-License-Identifier: GPL-2.0
/*
 * Stands in for tools/testing/selftests/memfd/common.c when memfd_test.c
 * is built as memfd_unmapped_ksft (see memfd_unmapped_ksft.c): every memfd
 * the selftest creates is an MFD_UNMAPPED one. Same interface (common.h),
 * no hugetlbfs mode.
 */
#define _GNU_SOURCE
/* Before any glibc header: glibc defines the MFD_* it knows only if absent. */
#include <linux/memfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#ifndef MFD_UNMAPPED
#define MFD_UNMAPPED	0x0020U
#endif

/* Never set: memfd_unmapped_ksft has no hugetlbfs mode. */
int hugetlbfs_test;

unsigned long default_huge_page_size(void)
{
	return 0;
}

int sys_memfd_create(const char *name, unsigned int flags)
{
	return syscall(__NR_memfd_create, name, flags | MFD_UNMAPPED);
}
