/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The secmem generic netlink family, as secmemd expects the kernel series
 * (issue 6) to define it in include/uapi/linux/secmem.h.
 *
 * PROVISIONAL: this is the daemon's copy until the kernel's uapi header
 * exists; it then moves to include/secmem/uapi.h and the check that
 * compares that file with the kernel's covers it.
 */
#ifndef SECMEM_GENL_ABI_H
#define SECMEM_GENL_ABI_H

#define SECMEM_GENL_NAME "secmem"
#define SECMEM_GENL_VERSION 1
#define SECMEM_GENL_MCGRP_EVENTS "events"

/* Events are sent to the "events" group with one command per kind. */
enum secmem_genl_cmd {
	SECMEM_CMD_UNSPEC,
	SECMEM_CMD_GET_STATS,		/* request: per-node statistics */
	SECMEM_CMD_EVENT_LOW_WATERMARK,	/* pool fell below watermark_low */
	SECMEM_CMD_EVENT_POOL_EXHAUSTED,/* an allocation had to convert */
	SECMEM_CMD_EVENT_ALLOC_FAIL,	/* an unmapped allocation failed */
	SECMEM_CMD_EVENT_RECLAIM,	/* pool pages released under pressure */
	__SECMEM_CMD_MAX,
};

enum secmem_genl_attr {
	SECMEM_ATTR_UNSPEC,
	SECMEM_ATTR_PAD,		/* for nla_put_u64_64bit() */
	SECMEM_ATTR_NODE,		/* u32 */
	SECMEM_ATTR_POOL_TARGET,	/* u64, bytes */
	SECMEM_ATTR_FREE_BYTES,		/* u64, bytes */
	SECMEM_ATTR_UNMAPPED_BYTES,	/* u64, bytes */
	__SECMEM_ATTR_MAX,
};
#define SECMEM_ATTR_MAX (__SECMEM_ATTR_MAX - 1)

#endif /* SECMEM_GENL_ABI_H */
