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
 * direct map (the "unmapped memfd"), as in the series' patch to
 * include/uapi/linux/memfd.h.  A kernel without the flag rejects it with
 * EINVAL.  `make check` compares every constant here with the patched
 * kernel's uapi headers (tests/uapi/check-drift.sh).
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

/*
 * The "secmem" generic netlink family: pool statistics and events, as in
 * the series' include/uapi/linux/secmem.h (installed as <linux/secmem.h>).
 */
#if !defined(_LINUX_SECMEM_H) && !defined(_UAPI_LINUX_SECMEM_H)
#define SECMEM_GENL_NAME "secmem"
#define SECMEM_GENL_VERSION 1
#define SECMEM_GENL_MCGRP_EVENTS "events"

enum secmem_genl_cmd {
	SECMEM_CMD_UNSPEC,
	SECMEM_CMD_GET_STATS,		 /* request: per-node statistics */
	SECMEM_CMD_EVENT_LOW_WATERMARK,	 /* pool fell below watermark_low */
	SECMEM_CMD_EVENT_POOL_EXHAUSTED, /* an allocation had to convert */
	SECMEM_CMD_EVENT_ALLOC_FAIL,	 /* an unmapped allocation failed */
	SECMEM_CMD_EVENT_RECLAIM,	 /* pool released under pressure */
	SECMEM_CMD_EVENT_SECRETS_WIPED,	 /* secret files wiped for hibernation */
	__SECMEM_CMD_MAX,
};

#define SECMEM_CMD_MAX (__SECMEM_CMD_MAX - 1)

enum secmem_genl_attr {
	SECMEM_ATTR_UNSPEC,
	SECMEM_ATTR_PAD,		/* for 64-bit alignment */
	SECMEM_ATTR_NODE,		/* u32 */
	SECMEM_ATTR_POOL_TARGET,	/* u64, bytes */
	SECMEM_ATTR_FREE_BYTES,		/* u64, bytes */
	SECMEM_ATTR_UNMAPPED_BYTES,	/* u64, bytes */
	SECMEM_ATTR_WATERMARK_LOW,	/* u64, bytes */
	SECMEM_ATTR_WATERMARK_HIGH,	/* u64, bytes */
	SECMEM_ATTR_ALLOC_POOL,		/* u64 */
	SECMEM_ATTR_ALLOC_CONVERT,	/* u64 */
	SECMEM_ATTR_ALLOC_FAIL,		/* u64 */
	SECMEM_ATTR_CONVERSIONS,	/* u64, pageblocks */
	SECMEM_ATTR_RESTORATIONS,	/* u64, pageblocks */
	SECMEM_ATTR_TLB_FLUSH_CONVERT,	/* u64 */
	SECMEM_ATTR_TLB_FLUSH_MERMAP,	/* u64 */
	SECMEM_ATTR_RELEASED_BYTES,	/* u64, bytes */
	SECMEM_ATTR_WIPED_FILES,	/* u64, SECRETS_WIPED only */
	SECMEM_ATTR_WIPED_BYTES,	/* u64, bytes, SECRETS_WIPED only */
	__SECMEM_ATTR_MAX,
};

#define SECMEM_ATTR_MAX (__SECMEM_ATTR_MAX - 1)
#endif

#endif /* SECMEM_UAPI_H */
