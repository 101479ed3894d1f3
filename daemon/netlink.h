/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel pool events from the "secmem" generic netlink family.
 */
#ifndef SECMEM_NETLINK_H
#define SECMEM_NETLINK_H

#include <stdint.h>

struct nl_msg;
struct nl_sock;

enum kernel_event_type {
	KEV_LOW_WATERMARK,
	KEV_POOL_EXHAUSTED,
	KEV_ALLOC_FAIL,
	KEV_RECLAIM,
	KEV_SECRETS_WIPED,	/* for hibernation; no node */
};

struct kernel_event {
	enum kernel_event_type type;
	int node;
	uint64_t free_bytes;		/* UINT64_MAX: not in the message */
	uint64_t unmapped_bytes;	/* UINT64_MAX: not in the message */
	uint64_t wiped_files;		/* KEV_SECRETS_WIPED only */
	uint64_t wiped_bytes;		/* KEV_SECRETS_WIPED only */
};

/* Events received in one events_receive() call. */
#define EVENTS_BATCH 32
struct event_batch {
	unsigned int count;
	unsigned int dropped;		/* malformed or beyond EVENTS_BATCH */
	struct kernel_event ev[EVENTS_BATCH];
};

/*
 * Subscribe to the events group.  Returns the socket, or NULL with
 * *@err = -ENOENT when the family or group does not exist (the kernel
 * lacks the feature) or another negative errno.
 */
struct nl_sock *events_open(int *err);
int events_fd(struct nl_sock *sk);
void events_close(struct nl_sock *sk);

/* Read what is queued on the socket (non-blocking) into @batch. */
int events_receive(struct nl_sock *sk, struct event_batch *batch);

/* Decode one message; -EPROTO if it is not a well-formed event. */
int events_parse(struct nl_msg *msg, struct kernel_event *ev);

const char *kernel_event_name(enum kernel_event_type type);

#endif /* SECMEM_NETLINK_H */
