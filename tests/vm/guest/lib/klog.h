/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel log, for guest tests that must see that a run added no
 * warning of a kind (the mermap debug checker's, say): count before,
 * count after.
 */
#ifndef SECMEM_TEST_KLOG_H
#define SECMEM_TEST_KLOG_H

/*
 * How often @needle occurs in the kernel log buffer (syslog(2) READ_ALL),
 * or -1 if the buffer cannot be read.
 */
long klog_count(const char *needle);

#endif /* SECMEM_TEST_KLOG_H */
