// SPDX-License-Identifier: GPL-2.0
/*
 * The secmem generic netlink family (version 1, multicast group "events"),
 * through libnl-genl as secmemd uses it: the family and its group resolve,
 * SECMEM_CMD_GET_STATS answers what sysfs says for one node and dumps one
 * message per node, and the kernel sends LOW_WATERMARK and POOL_EXHAUSTED
 * events carrying the node they are about, to unprivileged listeners too.
 *
 * Events are rate-limited per node and kind: the tests never count them,
 * they wait (up to 30 s, TCG is slow) for at least one and provoke again
 * every second or so until it comes.
 *
 * Each sub-test runs in a child process; the parent puts every knob back to
 * 0 after each one, on exit and on SIGTERM. Arguments select sub-tests by
 * id (--help lists them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "secmem_genl.h"
#include "subtest.h"
#include "upool.h"
#include "upool_nl.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define SUBTEST_TIMEOUT		150
#define FILL_TIMEOUT		60.0
#define EVENT_TIMEOUT		30.0
/* Provoke again when no event came for this long (rate limits). */
#define RETRIGGER_MS		1000
/* At most this many 1 MiB allocations to provoke one event. */
#define MAX_TRIGGER_MIB		64

#define MiB			UPOOL_MiB
#define NOBODY			65534

/* Event test knobs: low above the target, so the pool stays below low. */
#define EV_TARGET		(8 * MiB)
#define EV_LOW			(32 * MiB)
#define EV_HIGH			(64 * MiB)

static u64_t pb;

#define fail(fmt, ...)							\
	({								\
		tap_diag("%s: " fmt, __func__, ##__VA_ARGS__);		\
		TAP_FAIL;						\
	})

#define expect(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			return fail(fmt, ##__VA_ARGS__);		\
	} while (0)

#define for_each_node(idx_, nid_)					\
	for ((idx_) = 0; (idx_) < upool.nr_nodes &&			\
	     ((nid_) = upool.node[idx_].id, 1); (idx_)++)

/* Where each GET_STATS attribute is in sysfs. */
static const struct {
	int attr;
	bool knob;
	int idx;
} attr_map[] = {
	{ SECMEM_ATTR_POOL_TARGET, true, UPOOL_TARGET },
	{ SECMEM_ATTR_WATERMARK_LOW, true, UPOOL_LOW },
	{ SECMEM_ATTR_WATERMARK_HIGH, true, UPOOL_HIGH },
	{ SECMEM_ATTR_FREE_BYTES, false, UPOOL_FREE_BYTES },
	{ SECMEM_ATTR_UNMAPPED_BYTES, false, UPOOL_UNMAPPED_BYTES },
	{ SECMEM_ATTR_ALLOC_POOL, false, UPOOL_ALLOC_POOL },
	{ SECMEM_ATTR_ALLOC_CONVERT, false, UPOOL_ALLOC_CONVERT },
	{ SECMEM_ATTR_ALLOC_FAIL, false, UPOOL_ALLOC_FAIL },
	{ SECMEM_ATTR_CONVERSIONS, false, UPOOL_CONVERSIONS },
	{ SECMEM_ATTR_RESTORATIONS, false, UPOOL_RESTORATIONS },
	{ SECMEM_ATTR_TLB_FLUSH_CONVERT, false, UPOOL_TLB_FLUSH_CONVERT },
	{ SECMEM_ATTR_TLB_FLUSH_MERMAP, false, UPOOL_TLB_FLUSH_MERMAP },
	{ SECMEM_ATTR_RELEASED_BYTES, false, UPOOL_RELEASED_BYTES },
};

static const char *attr_name(int attr)
{
	size_t i;

	if (attr == SECMEM_ATTR_NODE)
		return "NODE";
	for (i = 0; i < ARRAY_SIZE(attr_map); i++)
		if (attr_map[i].attr == attr)
			return attr_map[i].knob ? upool_knob_names[attr_map[i].idx] :
						  upool_stat_names[attr_map[i].idx];
	return "?";
}

static u64_t snap_value(const struct upool_snap *s, size_t i)
{
	return attr_map[i].knob ? s->knob[attr_map[i].idx] : s->stat[attr_map[i].idx];
}

/* Does reply @m say what sysfs said (@s) for @node? Diagnoses differences. */
static bool reply_matches(const struct nlt_msg *m, int node, const struct upool_snap *s)
{
	bool ok = true;
	size_t i;

	if (!nlt_has(m, SECMEM_ATTR_NODE) || m->val[SECMEM_ATTR_NODE] != (u64_t)node) {
		tap_diag("reply for node%d: NODE attribute %s%llu", node,
			 nlt_has(m, SECMEM_ATTR_NODE) ? "" : "missing, ",
			 m->val[SECMEM_ATTR_NODE]);
		ok = false;
	}
	for (i = 0; i < ARRAY_SIZE(attr_map); i++) {
		int a = attr_map[i].attr;

		if (!nlt_has(m, a)) {
			tap_diag("reply for node%d: no attribute %d (%s)", node, a, attr_name(a));
			ok = false;
		} else if (m->val[a] != snap_value(s, i)) {
			tap_diag("reply for node%d: %s = %llu, sysfs says %llu", node,
				 attr_name(a), m->val[a], snap_value(s, i));
			ok = false;
		}
	}
	return ok;
}

/* Give each node different knobs and a filled pool, then let it settle. */
static int distinct_knobs(void)
{
	int i, id, err;

	for_each_node(i, id) {
		err = upool_set(id, (i + 2) * 2 * MiB, (i + 1) * 2 * MiB, (i + 3) * 2 * MiB);
		if (err)
			return err;
	}
	for_each_node(i, id) {
		err = upool_wait_free(id, (i + 2) * 2 * MiB, UINT64_MAX, FILL_TIMEOUT, NULL);
		if (err)
			return err;
	}
	return upool_settle(300, 30);
}

/* --- family -------------------------------------------------------------- */

static enum tap_result test_family(void)
{
	struct nlt_listener *l = malloc(sizeof(*l));
	struct nlt_req r;
	int err;

	expect(l, "out of memory");
	err = nlt_req_open(&r);
	expect(!err, "family %s: %s", SECMEM_GENL_NAME, nlt_err(err));
	tap_diag("family %s: id %d, version %d", SECMEM_GENL_NAME, r.family, r.version);
	expect(r.version == SECMEM_GENL_VERSION, "family version %d, want %d", r.version,
	       SECMEM_GENL_VERSION);
	nlt_req_close(&r);
	err = nlt_listen(l);
	expect(!err, "cannot subscribe to %s/%s: %s", SECMEM_GENL_NAME,
	       SECMEM_GENL_MCGRP_EVENTS, nlt_err(err));
	nlt_unlisten(l);
	free(l);
	return TAP_PASS;
}

/* --- GET_STATS ----------------------------------------------------------- */

static enum tap_result test_get_stats_node(void)
{
	struct upool_snap a, b;
	struct nlt_replies rep;
	struct nlt_req r;
	bool ok = true;
	int i, id, err, attempt;

	expect(!distinct_knobs(), "cannot set up the nodes");
	err = nlt_req_open(&r);
	expect(!err, "family %s: %s", SECMEM_GENL_NAME, nlt_err(err));
	for_each_node(i, id) {
		for (attempt = 0; attempt < 10; attempt++) {
			expect(!upool_snap(id, &a), "cannot read node%d", id);
			err = nlt_get_stats(&r, id, &rep);
			expect(!upool_snap(id, &b), "cannot read node%d", id);
			expect(!err, "GET_STATS node %d: %s", id, nlt_err(err));
			if (upool_snap_equal(&a, &b))
				break;
			upool_sleep_ms(200);
		}
		expect(attempt < 10, "node%d's statistics kept moving", id);
		if (rep.count != 1 || rep.bad) {
			tap_diag("GET_STATS node %d: %d replies (%d malformed), want one",
				 id, rep.count, rep.bad);
			ok = false;
			continue;
		}
		nlt_msg_diag("reply", &rep.msg[0]);
		ok &= reply_matches(&rep.msg[0], id, &a);
	}
	nlt_req_close(&r);
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_get_stats_dump(void)
{
	struct upool_snap a[UPOOL_MAX_NODES], b[UPOOL_MAX_NODES];
	struct nlt_replies rep;
	bool seen[UPOOL_MAX_NODES] = { false };
	struct nlt_req r;
	bool ok = true, same = false;
	int i, id, k, err, attempt;

	expect(!distinct_knobs(), "cannot set up the nodes");
	err = nlt_req_open(&r);
	expect(!err, "family %s: %s", SECMEM_GENL_NAME, nlt_err(err));
	for (attempt = 0; attempt < 10 && !same; attempt++) {
		for_each_node(i, id)
			expect(!upool_snap(id, &a[i]), "cannot read node%d", id);
		err = nlt_get_stats(&r, -1, &rep);
		expect(!err, "GET_STATS dump: %s", nlt_err(err));
		same = true;
		for_each_node(i, id) {
			expect(!upool_snap(id, &b[i]), "cannot read node%d", id);
			same &= upool_snap_equal(&a[i], &b[i]);
		}
		if (!same)
			upool_sleep_ms(200);
	}
	nlt_req_close(&r);
	expect(same, "the statistics kept moving");
	tap_diag("dump: %d messages (%d malformed) for %d node(s)", rep.count, rep.bad,
		 upool.nr_nodes);
	if (rep.count != upool.nr_nodes || rep.bad) {
		tap_diag("want exactly one message per node with an unmapped/ directory");
		ok = false;
	}
	for (k = 0; k < rep.count; k++) {
		const struct nlt_msg *m = &rep.msg[k];
		int idx = nlt_has(m, SECMEM_ATTR_NODE) ?
			upool_node_index((int)m->val[SECMEM_ATTR_NODE]) : -1;

		nlt_msg_diag("dump", m);
		if (idx < 0 || seen[idx]) {
			tap_diag("dump message %d: node %s%llu unknown or repeated", k,
				 nlt_has(m, SECMEM_ATTR_NODE) ? "" : "(missing) ",
				 m->val[SECMEM_ATTR_NODE]);
			ok = false;
			continue;
		}
		seen[idx] = true;
		ok &= reply_matches(m, upool.node[idx].id, &a[idx]);
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_get_stats_bad_node(void)
{
	static const int bad_nodes[] = { 4095, 1 << 20, -1 };
	struct nlt_replies rep;
	struct nlt_req r;
	bool ok = true;
	size_t i;
	int err;

	err = nlt_req_open(&r);
	expect(!err, "family %s: %s", SECMEM_GENL_NAME, nlt_err(err));
	for (i = 0; i < ARRAY_SIZE(bad_nodes); i++) {
		/* -1 is sent as the u32 0xffffffff, not as a dump. */
		struct nl_msg *msg = nlmsg_alloc();

		expect(msg, "out of memory");
		expect(genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, r.family, 0, 0,
				   SECMEM_CMD_GET_STATS, SECMEM_GENL_VERSION) &&
		       !nla_put_u32(msg, SECMEM_ATTR_NODE, (uint32_t)bad_nodes[i]),
		       "cannot build the request");
		memset(&rep, 0, sizeof(rep));
		err = nl_socket_modify_cb(r.sk, NL_CB_VALID, NL_CB_CUSTOM, nlt_replies_cb, &rep);
		if (!err)
			err = nl_send_auto(r.sk, msg);
		nlmsg_free(msg);
		expect(err >= 0, "sending GET_STATS: %s", nlt_err(err));
		err = nl_recvmsgs_default(r.sk);
		tap_diag("GET_STATS node %u: %s, %d replies", (uint32_t)bad_nodes[i],
			 err < 0 ? nlt_err(err) : "accepted", rep.count);
		if (err >= 0 || rep.count) {
			tap_diag("want an error and no statistics for a node that does not exist");
			ok = false;
		}
		/* Nothing else may be pending on the socket. */
		if (err == -NLE_AGAIN)
			break;
	}
	nlt_req_close(&r);
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- events -------------------------------------------------------------- */

/*
 * Allocate 1 MiB at a time on @node (kept until the end) and let @done
 * look for what should follow, until it says so or EVENT_TIMEOUT passes.
 */
static bool provoke(int node, bool (*done)(void *ctx, int wait_ms), void *ctx)
{
	struct upool_buf bufs[MAX_TRIGGER_MIB];
	double end = upool_now() + EVENT_TIMEOUT;
	bool got = false;
	int n = 0, i, err;

	err = upool_bind_node(node);
	if (err) {
		tap_diag("cannot run on node%d: %s", node, upool_errname(-err));
		return false;
	}
	while (!got && upool_now() < end && n < MAX_TRIGGER_MIB) {
		if (upool_alloc(&bufs[n], MiB, UPOOL_ANY))
			break;
		n++;
		got = done(ctx, RETRIGGER_MS);
	}
	upool_unbind();
	tap_diag("node%d: %d MiB allocated, %s", node, n, got ? "got it" : "nothing came");
	for (i = 0; i < n; i++)
		upool_free(&bufs[i]);
	return got;
}

struct wait_event {
	struct nlt_listener *l;
	int cmd;
	int node;
};

static bool event_arrived(void *ctx, int wait_ms)
{
	struct wait_event *w = ctx;
	double end = upool_now() + wait_ms / 1000.0;

	do {
		nlt_poll(w->l, 100);
		if (nlt_find(w->l, w->cmd, w->node, 0) >= 0)
			return true;
	} while (upool_now() < end);
	return false;
}

/* The attributes every event carries, and the knobs it reports. */
static bool check_event(const struct nlt_msg *m, int node, u64_t target, u64_t low, u64_t high)
{
	static const int attrs[] = {
		SECMEM_ATTR_NODE, SECMEM_ATTR_POOL_TARGET, SECMEM_ATTR_FREE_BYTES,
		SECMEM_ATTR_UNMAPPED_BYTES, SECMEM_ATTR_WATERMARK_LOW,
		SECMEM_ATTR_WATERMARK_HIGH,
	};
	bool ok = true;
	size_t i;

	nlt_msg_diag("event", m);
	for (i = 0; i < ARRAY_SIZE(attrs); i++)
		if (!nlt_has(m, attrs[i])) {
			tap_diag("%s event lacks attribute %d (%s)", nlt_cmd_name(m->cmd),
				 attrs[i], attr_name(attrs[i]));
			ok = false;
		}
	if (!ok)
		return false;
	if (m->val[SECMEM_ATTR_NODE] != (u64_t)node ||
	    m->val[SECMEM_ATTR_POOL_TARGET] != target ||
	    m->val[SECMEM_ATTR_WATERMARK_LOW] != low ||
	    m->val[SECMEM_ATTR_WATERMARK_HIGH] != high) {
		tap_diag("want node %d, target %llu, low %llu, high %llu", node, target, low, high);
		ok = false;
	}
	if (m->val[SECMEM_ATTR_FREE_BYTES] > m->val[SECMEM_ATTR_UNMAPPED_BYTES] ||
	    m->val[SECMEM_ATTR_UNMAPPED_BYTES] % pb) {
		tap_diag("want free <= unmapped, unmapped in whole pageblocks");
		ok = false;
	}
	return ok;
}

/* No event may name a node that has no pool; none of @cmd may name another node. */
static bool check_other_nodes(const struct nlt_listener *l, int cmd, int node)
{
	bool ok = true;
	int i;

	for (i = 0; i < l->count; i++) {
		const struct nlt_msg *m = &l->ev[i];
		int nid = nlt_has(m, SECMEM_ATTR_NODE) ? (int)m->val[SECMEM_ATTR_NODE] : -1;

		if (upool_node_index(nid) < 0) {
			nlt_msg_diag("event about no managed node", m);
			ok = false;
		} else if (m->cmd == cmd && nid != node) {
			nlt_msg_diag("event about the wrong node", m);
			ok = false;
		}
	}
	if (l->bad) {
		tap_diag("%d malformed event(s)", l->bad);
		ok = false;
	}
	return ok;
}

static enum tap_result low_watermark_node(struct nlt_listener *l, int node)
{
	struct wait_event w = { l, SECMEM_CMD_EVENT_LOW_WATERMARK, node };
	bool ok = true;
	int k;

	expect(!upool_reset() && !upool_wait_empty(FILL_TIMEOUT), "the pool does not empty");
	expect(!upool_set(node, EV_TARGET, EV_LOW, EV_HIGH), "node%d: cannot set the knobs", node);
	expect(!upool_wait_free(node, EV_TARGET, UINT64_MAX, FILL_TIMEOUT, NULL),
	       "node%d: pool not filled", node);
	/* The worker may fill on (to max(target, low)): let it finish. */
	expect(!upool_settle(300, FILL_TIMEOUT), "node%d: the pool does not settle", node);
	nlt_clear(l);
	expect(provoke(node, event_arrived, &w),
	       "node%d: no LOW_WATERMARK event within %.0f s of allocating below watermark_low",
	       node, EVENT_TIMEOUT);
	k = nlt_find(l, SECMEM_CMD_EVENT_LOW_WATERMARK, node, 0);
	ok &= check_event(&l->ev[k], node, EV_TARGET, EV_LOW, EV_HIGH);
	if (l->ev[k].val[SECMEM_ATTR_FREE_BYTES] >= EV_LOW) {
		tap_diag("LOW_WATERMARK event with free_bytes %llu, not below watermark_low %llu",
			 l->ev[k].val[SECMEM_ATTR_FREE_BYTES], EV_LOW);
		ok = false;
	}
	nlt_poll(l, 0);
	ok &= check_other_nodes(l, SECMEM_CMD_EVENT_LOW_WATERMARK, node);
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result exhausted_node(struct nlt_listener *l, int node)
{
	struct wait_event w = { l, SECMEM_CMD_EVENT_POOL_EXHAUSTED, node };
	u64_t conv0, conv1;
	bool ok = true;
	int k;

	expect(!upool_reset() && !upool_wait_empty(FILL_TIMEOUT), "the pool does not empty");
	expect(!upool_stat(node, UPOOL_ALLOC_CONVERT, &conv0), "cannot read alloc_convert");
	nlt_clear(l);
	expect(provoke(node, event_arrived, &w),
	       "node%d: no POOL_EXHAUSTED event within %.0f s of allocating with an empty pool",
	       node, EVENT_TIMEOUT);
	expect(!upool_stat(node, UPOOL_ALLOC_CONVERT, &conv1), "cannot read alloc_convert");
	if (conv1 == conv0) {
		tap_diag("node%d: POOL_EXHAUSTED without any allocation that converted", node);
		ok = false;
	}
	k = nlt_find(l, SECMEM_CMD_EVENT_POOL_EXHAUSTED, node, 0);
	ok &= check_event(&l->ev[k], node, 0, 0, 0);
	nlt_poll(l, 0);
	ok &= check_other_nodes(l, SECMEM_CMD_EVENT_POOL_EXHAUSTED, node);
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result for_each_cpu_node(enum tap_result (*fn)(struct nlt_listener *, int))
{
	enum tap_result res = TAP_SKIP;
	struct nlt_listener *l = malloc(sizeof(*l));
	int i, id, err;

	expect(l, "out of memory");
	err = nlt_listen(l);
	expect(!err, "cannot subscribe: %s", nlt_err(err));
	for_each_node(i, id) {
		if (!upool.node[i].nr_cpus) {
			tap_diag("node%d has no CPU: no local allocation possible", id);
			continue;
		}
		if (fn(l, id) == TAP_FAIL)
			res = TAP_FAIL;
		else if (res == TAP_SKIP)
			res = TAP_PASS;
	}
	nlt_unlisten(l);
	free(l);
	if (res == TAP_SKIP)
		return skip("no node has a CPU");
	return res;
}

static enum tap_result test_low_watermark(void)
{
	return for_each_cpu_node(low_watermark_node);
}

static enum tap_result test_pool_exhausted(void)
{
	return for_each_cpu_node(exhausted_node);
}

/* --- unprivileged listener ----------------------------------------------- */

struct child_wait {
	pid_t pid;
	int status;
};

static bool child_finished(void *ctx, int wait_ms)
{
	struct child_wait *c = ctx;
	double end = upool_now() + wait_ms / 1000.0;

	do {
		if (waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
			c->pid = 0;
			return true;
		}
		upool_sleep_ms(50);
	} while (upool_now() < end);
	return false;
}

static void nobody_listener(int ready_fd, int node)
{
	struct nlt_listener *l = malloc(sizeof(*l));
	double end;
	int err;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		tap_diag("dropping to uid %d: %m", NOBODY);
		_exit(KSFT_FAIL);
	}
	if (!l)
		_exit(KSFT_FAIL);
	err = nlt_listen(l);
	if (err) {
		tap_diag("uid %d cannot subscribe to %s/%s: %s", NOBODY, SECMEM_GENL_NAME,
			 SECMEM_GENL_MCGRP_EVENTS, nlt_err(err));
		_exit(KSFT_FAIL);
	}
	if (write(ready_fd, "r", 1) != 1)
		_exit(KSFT_FAIL);
	end = upool_now() + EVENT_TIMEOUT + 10;
	while (upool_now() < end) {
		nlt_poll(l, 200);
		if (nlt_find(l, SECMEM_CMD_EVENT_POOL_EXHAUSTED, node, 0) >= 0) {
			tap_diag("uid %d received POOL_EXHAUSTED for node%d", NOBODY, node);
			_exit(KSFT_PASS);
		}
	}
	tap_diag("uid %d received no POOL_EXHAUSTED event for node%d", NOBODY, node);
	_exit(KSFT_FAIL);
}

static enum tap_result test_unprivileged_listener(void)
{
	struct pollfd pfd;
	struct child_wait c = { 0 };
	int pipefd[2], i, id = -1, nid;
	bool got;
	char ch;

	for_each_node(i, nid)
		if (upool.node[i].nr_cpus && id < 0)
			id = nid;
	if (id < 0)
		return skip("no node has a CPU");
	expect(!upool_reset() && !upool_wait_empty(FILL_TIMEOUT), "the pool does not empty");
	expect(!pipe(pipefd), "pipe: %m");
	fflush(stdout);
	c.pid = fork();
	expect(c.pid >= 0, "fork: %m");
	if (!c.pid) {
		close(pipefd[0]);
		nobody_listener(pipefd[1], id);
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1 || read(pipefd[0], &ch, 1) != 1) {
		kill(c.pid, SIGKILL);
		waitpid(c.pid, &c.status, 0);
		return fail("the unprivileged listener did not subscribe (status %#x)", c.status);
	}
	got = provoke(id, child_finished, &c);
	if (!got) {
		kill(c.pid, SIGKILL);
		waitpid(c.pid, &c.status, 0);
		return fail("the unprivileged listener got nothing within %.0f s", EVENT_TIMEOUT);
	}
	expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == KSFT_PASS,
	       "the unprivileged listener failed (status %#x)", c.status);
	return TAP_PASS;
}

/* --- driver -------------------------------------------------------------- */

static const struct subtest subtests[] = {
	{ "family", "generic netlink family secmem version 1 with group events resolves",
	  test_family },
	{ "get_stats_node", "GET_STATS with NODE answers one message equal to sysfs",
	  test_get_stats_node },
	{ "get_stats_dump", "GET_STATS dump answers one message per node, equal to sysfs",
	  test_get_stats_dump },
	{ "get_stats_bad_node", "GET_STATS for a node that does not exist fails",
	  test_get_stats_bad_node },
	{ "low_watermark", "allocating below watermark_low sends LOW_WATERMARK for that node",
	  test_low_watermark },
	{ "pool_exhausted", "allocating from an empty pool sends POOL_EXHAUSTED for that node",
	  test_pool_exhausted },
	{ "unprivileged_listener", "an unprivileged user receives events",
	  test_unprivileged_listener },
};

int main(int argc, char **argv)
{
	unsigned int i, planned;

	planned = subtest_select(subtests, ARRAY_SIZE(subtests), argc, argv);

	upool_init_or_skip(false);
	/*
	 * The sysfs side exists, so a missing family or group is a failure
	 * (of every sub-test), not a reason to skip.
	 */
	pb = upool.pageblock;

	tap_plan(planned);
	tap_diag("pageblock %llu bytes, %d node(s) with unmapped/, MFD_UNMAPPED %s",
		 pb, upool.nr_nodes, upool.mfd_unmapped ? "supported" : "refused: memfd_secret stands in");
	upool_install_restore();
	if (upool_reset() || upool_wait_empty(FILL_TIMEOUT))
		tap_diag("warning: the pool was not empty at the start");

	for (i = 0; i < ARRAY_SIZE(subtests); i++) {
		enum tap_result res;

		if (!subtest_selected(&subtests[i], argc, argv))
			continue;
		res = subtest_run(&subtests[i], SUBTEST_TIMEOUT);
		if (upool_reset() || upool_wait_empty(FILL_TIMEOUT)) {
			tap_diag("%s: the knobs could not be reset or the pool did not empty",
				 subtests[i].id);
			res = TAP_FAIL;
		}
		tap_report(res, subtests[i].name, skip_reason);
	}
	return tap_finish();
}
