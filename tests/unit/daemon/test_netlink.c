// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Decoding of kernel events, on messages built as the kernel would send
 * them (the family itself does not exist on the build host).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <netlink/genl/genl.h>

#include "fake_sysfs.h"
#include "secmem/uapi.h"
#include "netlink.h"

static struct nl_msg *event_msg(uint8_t cmd)
{
	struct nl_msg *m = nlmsg_alloc();

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(genlmsg_put(m, 0, 0, 0x1234, 0, 0, cmd,
					  SECMEM_GENL_VERSION));
	return m;
}

START_TEST(low_watermark_event)
{
	struct nl_msg *m = event_msg(SECMEM_CMD_EVENT_LOW_WATERMARK);
	struct kernel_event ev;

	nla_put_u32(m, SECMEM_ATTR_NODE, 1);
	nla_put_u64(m, SECMEM_ATTR_FREE_BYTES, 4096);
	ck_assert_int_eq(events_parse(m, &ev), 0);
	ck_assert_int_eq(ev.type, KEV_LOW_WATERMARK);
	ck_assert_int_eq(ev.node, 1);
	ck_assert_uint_eq(ev.free_bytes, 4096);
	ck_assert_uint_eq(ev.unmapped_bytes, UINT64_MAX);
	nlmsg_free(m);
}
END_TEST

START_TEST(every_event_kind)
{
	static const struct {
		uint8_t cmd;
		enum kernel_event_type type;
	} map[] = {
		{ SECMEM_CMD_EVENT_POOL_EXHAUSTED, KEV_POOL_EXHAUSTED },
		{ SECMEM_CMD_EVENT_ALLOC_FAIL, KEV_ALLOC_FAIL },
		{ SECMEM_CMD_EVENT_RECLAIM, KEV_RECLAIM },
	};
	struct kernel_event ev;
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		struct nl_msg *m = event_msg(map[i].cmd);

		nla_put_u32(m, SECMEM_ATTR_NODE, 0);
		ck_assert_int_eq(events_parse(m, &ev), 0);
		ck_assert_int_eq(ev.type, map[i].type);
		nlmsg_free(m);
	}
}
END_TEST

START_TEST(secrets_wiped_event)
{
	struct nl_msg *m = event_msg(SECMEM_CMD_EVENT_SECRETS_WIPED);
	struct kernel_event ev;

	nla_put_u64(m, SECMEM_ATTR_WIPED_FILES, 2);
	nla_put_u64(m, SECMEM_ATTR_WIPED_BYTES, 65536);
	ck_assert_int_eq(events_parse(m, &ev), 0);
	ck_assert_int_eq(ev.type, KEV_SECRETS_WIPED);
	ck_assert_int_eq(ev.node, -1);
	ck_assert_uint_eq(ev.wiped_files, 2);
	ck_assert_uint_eq(ev.wiped_bytes, 65536);
	ck_assert_str_eq(kernel_event_name(ev.type), "secrets-wiped");
	nlmsg_free(m);

	/* Without its counts it is malformed, a node does not make up for it. */
	m = event_msg(SECMEM_CMD_EVENT_SECRETS_WIPED);
	nla_put_u32(m, SECMEM_ATTR_NODE, 0);
	nla_put_u64(m, SECMEM_ATTR_WIPED_FILES, 2);
	ck_assert_int_eq(events_parse(m, &ev), -EPROTO);
	nlmsg_free(m);
}
END_TEST

START_TEST(malformed_events_refused)
{
	struct kernel_event ev;
	struct nl_msg *m;

	m = event_msg(SECMEM_CMD_EVENT_LOW_WATERMARK);	/* no node */
	ck_assert_int_eq(events_parse(m, &ev), -EPROTO);
	nlmsg_free(m);
	m = event_msg(SECMEM_CMD_GET_STATS);		/* not an event */
	nla_put_u32(m, SECMEM_ATTR_NODE, 0);
	ck_assert_int_eq(events_parse(m, &ev), -EPROTO);
	nlmsg_free(m);
	m = event_msg(SECMEM_CMD_EVENT_RECLAIM);	/* node too short */
	nla_put_u8(m, SECMEM_ATTR_NODE, 0);
	ck_assert_int_eq(events_parse(m, &ev), -EPROTO);
	nlmsg_free(m);
}
END_TEST

START_TEST(events_from_userspace_refused)
{
	struct sockaddr_nl forger = { .nl_family = AF_NETLINK, .nl_pid = 4242 };
	struct kernel_event ev;
	struct nl_msg *m;

	m = event_msg(SECMEM_CMD_EVENT_ALLOC_FAIL);
	nla_put_u32(m, SECMEM_ATTR_NODE, 0);
	nlmsg_set_src(m, &forger);	/* well formed, but not the kernel's */
	ck_assert_int_eq(events_parse(m, &ev), -EPERM);
	forger.nl_pid = 0;		/* the same message from the kernel */
	nlmsg_set_src(m, &forger);
	ck_assert_int_eq(events_parse(m, &ev), 0);
	ck_assert_int_eq(ev.type, KEV_ALLOC_FAIL);
	nlmsg_free(m);
}
END_TEST

START_TEST(open_without_family)
{
	int err = 0;
	struct nl_sock *sk = events_open(&err);

	/* Only meaningful where the kernel lacks the family (the host). */
	if (sk) {
		events_close(sk);
		return;
	}
	ck_assert_int_eq(err, -ENOENT);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("daemon-netlink");
	TCase *tc = tcase_create("netlink");

	tcase_add_test(tc, low_watermark_event);
	tcase_add_test(tc, every_event_kind);
	tcase_add_test(tc, secrets_wiped_event);
	tcase_add_test(tc, malformed_events_refused);
	tcase_add_test(tc, events_from_userspace_refused);
	tcase_add_test(tc, open_without_family);
	suite_add_tcase(s, tc);
	return s;
}
