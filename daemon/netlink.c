// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnl-genl subscription to the kernel's pool events.  Only listening:
 * the daemon changes the kernel through sysfs, so that secmemctl, the
 * daemon and a shell with echo all go through the same validated path.
 */
#define _GNU_SOURCE /* libnl's headers use struct addrinfo */
#include <errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "secmem/uapi.h"
#include "netlink.h"

static struct nla_policy event_policy[SECMEM_ATTR_MAX + 1] = {
	[SECMEM_ATTR_NODE] = { .type = NLA_U32 },
	[SECMEM_ATTR_POOL_TARGET] = { .type = NLA_U64 },
	[SECMEM_ATTR_FREE_BYTES] = { .type = NLA_U64 },
	[SECMEM_ATTR_UNMAPPED_BYTES] = { .type = NLA_U64 },
	[SECMEM_ATTR_WATERMARK_LOW] = { .type = NLA_U64 },
	[SECMEM_ATTR_WATERMARK_HIGH] = { .type = NLA_U64 },
	[SECMEM_ATTR_WIPED_FILES] = { .type = NLA_U64 },
	[SECMEM_ATTR_WIPED_BYTES] = { .type = NLA_U64 },
};

const char *kernel_event_name(enum kernel_event_type type)
{
	switch (type) {
	case KEV_LOW_WATERMARK:
		return "low-watermark";
	case KEV_POOL_EXHAUSTED:
		return "pool-exhausted";
	case KEV_ALLOC_FAIL:
		return "alloc-fail";
	case KEV_RECLAIM:
		return "reclaim";
	case KEV_SECRETS_WIPED:
		return "secrets-wiped";
	}
	return "?";
}

int events_parse(struct nl_msg *msg, struct kernel_event *ev)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct sockaddr_nl *src = nlmsg_get_src(msg);
	struct nlattr *tb[SECMEM_ATTR_MAX + 1];
	struct genlmsghdr *gh;

	/*
	 * Only the kernel (port 0) sends events.  Any local process may
	 * unicast to the daemon's port, and a forged low-watermark or
	 * alloc-fail event must not steer the pools.
	 */
	if (src && src->nl_pid != 0)
		return -EPERM;
	if (!genlmsg_valid_hdr(nlh, 0))
		return -EPROTO;
	gh = nlmsg_data(nlh);
	switch (gh->cmd) {
	case SECMEM_CMD_EVENT_LOW_WATERMARK:
		ev->type = KEV_LOW_WATERMARK;
		break;
	case SECMEM_CMD_EVENT_POOL_EXHAUSTED:
		ev->type = KEV_POOL_EXHAUSTED;
		break;
	case SECMEM_CMD_EVENT_ALLOC_FAIL:
		ev->type = KEV_ALLOC_FAIL;
		break;
	case SECMEM_CMD_EVENT_RECLAIM:
		ev->type = KEV_RECLAIM;
		break;
	case SECMEM_CMD_EVENT_SECRETS_WIPED:
		ev->type = KEV_SECRETS_WIPED;
		break;
	default:
		return -EPROTO;
	}
	if (genlmsg_parse(nlh, 0, tb, SECMEM_ATTR_MAX, event_policy) < 0)
		return -EPROTO;
	/* The one event about the whole system: counts, no node. */
	if (ev->type == KEV_SECRETS_WIPED) {
		if (!tb[SECMEM_ATTR_WIPED_FILES] || !tb[SECMEM_ATTR_WIPED_BYTES])
			return -EPROTO;
		ev->node = -1;
		ev->wiped_files = nla_get_u64(tb[SECMEM_ATTR_WIPED_FILES]);
		ev->wiped_bytes = nla_get_u64(tb[SECMEM_ATTR_WIPED_BYTES]);
		ev->free_bytes = UINT64_MAX;
		ev->unmapped_bytes = UINT64_MAX;
		return 0;
	}
	if (!tb[SECMEM_ATTR_NODE] || nla_get_u32(tb[SECMEM_ATTR_NODE]) > INT32_MAX)
		return -EPROTO;
	ev->node = (int)nla_get_u32(tb[SECMEM_ATTR_NODE]);
	ev->free_bytes = tb[SECMEM_ATTR_FREE_BYTES] ?
				 nla_get_u64(tb[SECMEM_ATTR_FREE_BYTES]) :
				 UINT64_MAX;
	ev->unmapped_bytes = tb[SECMEM_ATTR_UNMAPPED_BYTES] ?
				     nla_get_u64(tb[SECMEM_ATTR_UNMAPPED_BYTES]) :
				     UINT64_MAX;
	return 0;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct event_batch *b = arg;

	if (b->count == EVENTS_BATCH || events_parse(msg, &b->ev[b->count]))
		b->dropped++;
	else
		b->count++;
	return NL_OK;
}

struct nl_sock *events_open(int *err)
{
	struct nl_sock *sk;
	int grp, r;

	sk = nl_socket_alloc();
	if (!sk) {
		*err = -ENOMEM;
		return NULL;
	}
	r = genl_connect(sk);
	if (r < 0)
		goto fail;
	r = genl_ctrl_resolve_grp(sk, SECMEM_GENL_NAME,
				  SECMEM_GENL_MCGRP_EVENTS);
	if (r < 0)
		goto fail;
	grp = r;
	/* Multicast messages carry no sequence numbers to check. */
	nl_socket_disable_seq_check(sk);
	r = nl_socket_add_membership(sk, grp);
	if (r < 0)
		goto fail;
	r = nl_socket_set_nonblocking(sk);
	if (r < 0)
		goto fail;
	*err = 0;
	return sk;
fail:
	/* libnl says NLE_OBJ_NOTFOUND when the family or group is missing. */
	*err = r == -NLE_OBJ_NOTFOUND ? -ENOENT : -EIO;
	nl_socket_free(sk);
	return NULL;
}

int events_fd(struct nl_sock *sk)
{
	return nl_socket_get_fd(sk);
}

void events_close(struct nl_sock *sk)
{
	nl_socket_free(sk);
}

int events_receive(struct nl_sock *sk, struct event_batch *batch)
{
	int r;

	batch->count = 0;
	batch->dropped = 0;
	r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_valid, batch);
	if (r < 0)
		return -EIO;
	r = nl_recvmsgs_default(sk);
	/* Nothing (more) queued is not an error for a non-blocking socket. */
	if (r < 0 && r != -NLE_AGAIN)
		return r == -NLE_NOMEM ? -ENOMEM : -EIO;
	return 0;
}
