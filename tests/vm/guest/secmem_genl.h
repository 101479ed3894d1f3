/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The secmem generic netlink family, for the guest tests, as docs/secmemd.md
 * ("The ABI this daemon expects") and the kernel series define it.
 *
 * PROVISIONAL: once the kernel installs include/uapi/linux/secmem.h (its
 * guard becomes _LINUX_SECMEM_H in the installed headers under KHDR), that
 * header is used and the fallback definitions below are skipped, so a
 * difference in names shows up as a build error here rather than as a
 * silent mismatch. The family, version and group name macros are defined
 * only if the kernel's header does not define them.
 */
#ifndef SECMEM_TEST_GENL_H
#define SECMEM_TEST_GENL_H

#if defined(__has_include)
#if __has_include(<linux/secmem.h>)
#include <linux/secmem.h>
#endif
#endif

#if !defined(_LINUX_SECMEM_H) && !defined(_UAPI_LINUX_SECMEM_H)

enum secmem_genl_cmd {
	SECMEM_CMD_UNSPEC,
	SECMEM_CMD_GET_STATS,			/* request: per-node statistics */
	SECMEM_CMD_EVENT_LOW_WATERMARK,		/* free pool below watermark_low */
	SECMEM_CMD_EVENT_POOL_EXHAUSTED,	/* an allocation had to convert */
	SECMEM_CMD_EVENT_ALLOC_FAIL,		/* an unmapped allocation failed */
	SECMEM_CMD_EVENT_RECLAIM,		/* pool released under pressure */
	SECMEM_CMD_EVENT_SECRETS_WIPED,		/* secret files wiped for hibernation */
	__SECMEM_CMD_MAX,
};
#define SECMEM_CMD_MAX (__SECMEM_CMD_MAX - 1)

enum secmem_genl_attr {
	SECMEM_ATTR_UNSPEC,
	SECMEM_ATTR_PAD,			/* for nla_put_u64_64bit() */
	SECMEM_ATTR_NODE,			/* u32 */
	SECMEM_ATTR_POOL_TARGET,		/* u64, bytes */
	SECMEM_ATTR_FREE_BYTES,			/* u64, bytes */
	SECMEM_ATTR_UNMAPPED_BYTES,		/* u64, bytes */
	SECMEM_ATTR_WATERMARK_LOW,		/* u64, bytes */
	SECMEM_ATTR_WATERMARK_HIGH,		/* u64, bytes */
	SECMEM_ATTR_ALLOC_POOL,			/* u64, count */
	SECMEM_ATTR_ALLOC_CONVERT,		/* u64, count */
	SECMEM_ATTR_ALLOC_FAIL,			/* u64, count */
	SECMEM_ATTR_CONVERSIONS,		/* u64, count */
	SECMEM_ATTR_RESTORATIONS,		/* u64, count */
	SECMEM_ATTR_TLB_FLUSH_CONVERT,		/* u64, count */
	SECMEM_ATTR_TLB_FLUSH_MERMAP,		/* u64, count */
	SECMEM_ATTR_RELEASED_BYTES,		/* u64, bytes */
	SECMEM_ATTR_WIPED_FILES,		/* u64, SECRETS_WIPED only */
	SECMEM_ATTR_WIPED_BYTES,		/* u64, bytes, SECRETS_WIPED only */
	__SECMEM_ATTR_MAX,
};
#define SECMEM_ATTR_MAX (__SECMEM_ATTR_MAX - 1)

#endif /* no kernel uapi header */

#ifndef SECMEM_GENL_NAME
#define SECMEM_GENL_NAME		"secmem"
#endif
#ifndef SECMEM_GENL_VERSION
#define SECMEM_GENL_VERSION		1
#endif
#ifndef SECMEM_GENL_MCGRP_EVENTS
#define SECMEM_GENL_MCGRP_EVENTS	"events"
#endif

#endif /* SECMEM_TEST_GENL_H */
