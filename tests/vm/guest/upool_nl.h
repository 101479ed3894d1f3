/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libnl-genl helpers for the guest tests that talk to the secmem generic
 * netlink family: an "events" listener and GET_STATS requests. Included by
 * unmapped_events_test.c and unmapped_pressure_test.c only (the programs
 * linked with libnl); everything is static inline so that a program may
 * use part of it.
 */
#ifndef SECMEM_TEST_UPOOL_NL_H
#define SECMEM_TEST_UPOOL_NL_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "secmem_genl.h"
#include "tap.h"
#include "upool.h"

/* One decoded secmem message: its command and the attributes it had. */
struct nlt_msg {
	int cmd;
	unsigned long long has;			/* bit n: attribute n present */
	unsigned long long val[SECMEM_ATTR_MAX + 1];
};

#define NLT_MAX_EVENTS	256

struct nlt_listener {
	struct nl_sock *sk;
	int count;				/* events kept in ev[] */
	int dropped;				/* beyond NLT_MAX_EVENTS */
	int bad;				/* messages that did not parse */
	struct nlt_msg ev[NLT_MAX_EVENTS];
};

static inline const char *nlt_cmd_name(int cmd)
{
	switch (cmd) {
	case SECMEM_CMD_GET_STATS:
		return "GET_STATS";
	case SECMEM_CMD_EVENT_LOW_WATERMARK:
		return "LOW_WATERMARK";
	case SECMEM_CMD_EVENT_POOL_EXHAUSTED:
		return "POOL_EXHAUSTED";
	case SECMEM_CMD_EVENT_ALLOC_FAIL:
		return "ALLOC_FAIL";
	case SECMEM_CMD_EVENT_RECLAIM:
		return "RECLAIM";
	case SECMEM_CMD_EVENT_SECRETS_WIPED:
		return "SECRETS_WIPED";
	}
	return "unknown";
}

static inline bool nlt_has(const struct nlt_msg *m, int attr)
{
	return m->has & (1ULL << attr);
}

/*
 * Decode @msg: the genl header, NODE as a u32 and every other attribute up
 * to SECMEM_ATTR_MAX as a u64 (PAD excepted). -EPROTO on a malformed one.
 */
static inline int nlt_parse(struct nl_msg *msg, struct nlt_msg *out)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[SECMEM_ATTR_MAX + 1];
	struct genlmsghdr *gh;
	int a;

	memset(out, 0, sizeof(*out));
	if (!genlmsg_valid_hdr(nlh, 0))
		return -EPROTO;
	gh = nlmsg_data(nlh);
	out->cmd = gh->cmd;
	if (genlmsg_parse(nlh, 0, tb, SECMEM_ATTR_MAX, NULL) < 0)
		return -EPROTO;
	for (a = 1; a <= SECMEM_ATTR_MAX; a++) {
		if (!tb[a] || a == SECMEM_ATTR_PAD)
			continue;
		if (a == SECMEM_ATTR_NODE) {
			if (nla_len(tb[a]) != 4) {
				tap_diag("%s: NODE attribute of %d bytes, want a u32",
					 nlt_cmd_name(out->cmd), nla_len(tb[a]));
				return -EPROTO;
			}
			out->val[a] = nla_get_u32(tb[a]);
		} else {
			if (nla_len(tb[a]) != 8) {
				tap_diag("%s: attribute %d of %d bytes, want a u64",
					 nlt_cmd_name(out->cmd), a, nla_len(tb[a]));
				return -EPROTO;
			}
			out->val[a] = nla_get_u64(tb[a]);
		}
		out->has |= 1ULL << a;
	}
	return 0;
}

static inline void nlt_msg_diag(const char *what, const struct nlt_msg *m)
{
	char buf[768];
	size_t n;
	int a;

	n = snprintf(buf, sizeof(buf), "%s %s:", what, nlt_cmd_name(m->cmd));
	for (a = 1; a <= SECMEM_ATTR_MAX && n < sizeof(buf); a++)
		if (nlt_has(m, a))
			n += snprintf(buf + n, sizeof(buf) - n, " %d=%llu", a, m->val[a]);
	tap_diag("%s", buf);
}

static inline int nlt_listener_cb(struct nl_msg *msg, void *arg)
{
	struct nlt_listener *l = arg;
	struct nlt_msg m;

	if (nlt_parse(msg, &m)) {
		l->bad++;
		return NL_OK;
	}
	if (l->count == NLT_MAX_EVENTS)
		l->dropped++;
	else
		l->ev[l->count++] = m;
	return NL_OK;
}

/* libnl's error as an errno-ish diagnostic. */
static inline const char *nlt_err(int err)
{
	return nl_geterror(err);
}

/*
 * Subscribe to the "events" group. 0, or a negative libnl error with a
 * diagnostic (-NLE_OBJ_NOTFOUND: no such family or group).
 */
static inline int nlt_listen(struct nlt_listener *l)
{
	int grp, err;

	memset(l, 0, sizeof(*l));
	l->sk = nl_socket_alloc();
	if (!l->sk)
		return -NLE_NOMEM;
	err = genl_connect(l->sk);
	if (err < 0) {
		tap_diag("genl_connect: %s", nlt_err(err));
		goto fail;
	}
	grp = genl_ctrl_resolve_grp(l->sk, SECMEM_GENL_NAME, SECMEM_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		err = grp;
		tap_diag("resolving group %s/%s: %s", SECMEM_GENL_NAME,
			 SECMEM_GENL_MCGRP_EVENTS, nlt_err(err));
		goto fail;
	}
	nl_socket_disable_seq_check(l->sk);
	err = nl_socket_modify_cb(l->sk, NL_CB_VALID, NL_CB_CUSTOM, nlt_listener_cb, l);
	if (!err)
		err = nl_socket_add_membership(l->sk, grp);
	if (!err)
		err = nl_socket_set_nonblocking(l->sk);
	if (err < 0) {
		tap_diag("subscribing to %s/%s: %s", SECMEM_GENL_NAME,
			 SECMEM_GENL_MCGRP_EVENTS, nlt_err(err));
		goto fail;
	}
	/* Room for bursts: events must not be lost to a full buffer. */
	nl_socket_set_buffer_size(l->sk, 1 << 20, 0);
	return 0;
fail:
	nl_socket_free(l->sk);
	l->sk = NULL;
	return err;
}

static inline void nlt_unlisten(struct nlt_listener *l)
{
	if (l->sk)
		nl_socket_free(l->sk);
	l->sk = NULL;
}

/* Receive whatever arrives within @timeout_ms (0: only what is queued). */
static inline int nlt_poll(struct nlt_listener *l, int timeout_ms)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(l->sk), .events = POLLIN };
	int err;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	for (;;) {
		err = nl_recvmsgs_default(l->sk);
		if (err == -NLE_AGAIN)
			return 0;
		if (err < 0) {
			tap_diag("receiving events: %s", nlt_err(err));
			return err;
		}
		/*
		 * One datagram a call, and each event is one: read on while
		 * more are queued, or nlt_clear() would leave all but one of
		 * a burst to be taken for the next case's.
		 */
		if (poll(&pfd, 1, 0) <= 0)
			return 0;
	}
}

/* Forget every event received so far (after draining the socket). */
static inline void nlt_clear(struct nlt_listener *l)
{
	nlt_poll(l, 0);
	l->count = 0;
	l->dropped = 0;
	l->bad = 0;
}

/* Index of the first event @cmd from @node (-1: any node) at or after @from. */
static inline int nlt_find(const struct nlt_listener *l, int cmd, int node, int from)
{
	int i;

	for (i = from; i < l->count; i++) {
		if (l->ev[i].cmd != cmd)
			continue;
		if (node >= 0 && (!nlt_has(&l->ev[i], SECMEM_ATTR_NODE) ||
				  l->ev[i].val[SECMEM_ATTR_NODE] != (unsigned long long)node))
			continue;
		return i;
	}
	return -1;
}

/* A socket for requests, with a receive timeout so that nothing hangs. */
struct nlt_req {
	struct nl_sock *sk;
	int family;
	int version;
};

static inline int nlt_req_open(struct nlt_req *r)
{
	struct timeval tv = { .tv_sec = 10 };
	struct nl_cache *cache = NULL;
	struct genl_family *fam;
	int err;

	memset(r, 0, sizeof(*r));
	r->sk = nl_socket_alloc();
	if (!r->sk)
		return -NLE_NOMEM;
	err = genl_connect(r->sk);
	if (err < 0) {
		tap_diag("genl_connect: %s", nlt_err(err));
		goto fail;
	}
	err = genl_ctrl_alloc_cache(r->sk, &cache);
	if (err < 0) {
		tap_diag("reading the generic netlink families: %s", nlt_err(err));
		goto fail;
	}
	fam = genl_ctrl_search_by_name(cache, SECMEM_GENL_NAME);
	if (!fam) {
		tap_diag("no generic netlink family \"%s\"", SECMEM_GENL_NAME);
		err = -NLE_OBJ_NOTFOUND;
		nl_cache_free(cache);
		goto fail;
	}
	r->family = genl_family_get_id(fam);
	r->version = genl_family_get_version(fam);
	genl_family_put(fam);
	nl_cache_free(cache);
	/*
	 * No ACK for requests that succeed: a GET_STATS answers with its
	 * reply (or a dump ending in NLMSG_DONE), a failure with an error.
	 */
	nl_socket_disable_auto_ack(r->sk);
	setsockopt(nl_socket_get_fd(r->sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return 0;
fail:
	nl_socket_free(r->sk);
	r->sk = NULL;
	return err;
}

static inline void nlt_req_close(struct nlt_req *r)
{
	if (r->sk)
		nl_socket_free(r->sk);
	r->sk = NULL;
}

struct nlt_replies {
	int count;
	int bad;
	struct nlt_msg msg[UPOOL_MAX_NODES + 4];
};

static inline int nlt_replies_cb(struct nl_msg *msg, void *arg)
{
	struct nlt_replies *r = arg;
	struct nlt_msg m;

	if (nlt_parse(msg, &m))
		r->bad++;
	else if (r->count < (int)(sizeof(r->msg) / sizeof(r->msg[0])))
		r->msg[r->count++] = m;
	else
		r->bad++;
	return NL_OK;
}

/*
 * SECMEM_CMD_GET_STATS for @node (with the NODE attribute), or for every
 * node (@node < 0: NLM_F_DUMP, no NODE attribute). The replies go to @out.
 * Returns 0 or a negative libnl error (the kernel's refusal included).
 */
static inline int nlt_get_stats(struct nlt_req *r, int node, struct nlt_replies *out)
{
	struct nl_msg *msg;
	int err;

	memset(out, 0, sizeof(*out));
	msg = nlmsg_alloc();
	if (!msg)
		return -NLE_NOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, r->family, 0,
			 node < 0 ? NLM_F_DUMP : 0, SECMEM_CMD_GET_STATS,
			 SECMEM_GENL_VERSION) ||
	    (node >= 0 && nla_put_u32(msg, SECMEM_ATTR_NODE, node) < 0)) {
		nlmsg_free(msg);
		return -NLE_NOMEM;
	}
	err = nl_socket_modify_cb(r->sk, NL_CB_VALID, NL_CB_CUSTOM, nlt_replies_cb, out);
	if (!err)
		err = nl_send_auto(r->sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return err;
	err = nl_recvmsgs_default(r->sk);
	return err < 0 ? err : 0;
}

#endif /* SECMEM_TEST_UPOOL_NL_H */
