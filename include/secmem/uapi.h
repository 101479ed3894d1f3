/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel ABI that libsecmem needs and that the system headers of the build
 * host may not carry yet.  Keep in step with the kernel series in kernel/.
 */
#ifndef SECMEM_UAPI_H
#define SECMEM_UAPI_H

#include <sys/syscall.h>

/*
 * memfd_create() flag for a memfd whose pages are removed from the kernel's
 * direct map (the "unmapped memfd").  PLACEHOLDER: the value must match
 * MFD_UNMAPPED in the kernel's include/uapi/linux/memfd.h once the series
 * fixes it.  A kernel without the flag rejects it with EINVAL.
 */
#ifndef MFD_UNMAPPED
#define MFD_UNMAPPED 0x0020U
#endif

/* memfd_secret(2) has the same number on every architecture that has it. */
#ifndef SYS_memfd_secret
#if defined(__x86_64__) || defined(__aarch64__) || defined(__riscv) || \
	defined(__i386__) || defined(__s390x__) || defined(__loongarch__)
#define SYS_memfd_secret 447
#endif
#endif

#endif /* SECMEM_UAPI_H */
