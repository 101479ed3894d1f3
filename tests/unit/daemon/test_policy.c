// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Policy core: event sequences in, decisions out.  A tiny "kernel" here
 * applies the decisions to the observed state, so sequences play out as
 * they would in secmemd.
 */
#include <check.h>
#include <string.h>

#include "fake_sysfs.h"
#include "policy.h"

#define M (UINT64_C(1) << 20)
#define PB (2 * M)

static struct config cfg;
static struct observed_state st;
static struct decisions ds;

/* Two nodes, an empty kernel, default config with a 16M step. */
static void setup(void)
{
	config_defaults(&cfg);
	memset(&st, 0, sizeof(st));
	st.now_ms = 1000000;
	st.pageblock_bytes = PB;
	st.node[0].present = true;
	st.node[1].present = true;
}

static void event(enum event_type type, int node)
{
	const struct event ev = { type, node };
	unsigned int i;

	policy_decide(&cfg, &st, &ev, &ds);
	/* What secmemd does with them. */
	for (i = 0; i < ds.count; i++) {
		const struct decision *d = &ds.d[i];

		ck_assert_msg(d->reason[0], "decision without a reason");
		if (d->kind == DECISION_FLUSH) {
			st.flush_on_free = d->flush_on_free;
			continue;
		}
		if (d->kind == DECISION_HIBERNATION) {
			ck_assert(st.hibernation_present);
			st.hibernation = d->hibernation;
			continue;
		}
		st.node[d->node].pool_target = d->pool_target;
		st.node[d->node].watermark_low = d->watermark_low;
		st.node[d->node].watermark_high = d->watermark_high;
		if (d->cause == CAUSE_GROW)
			st.node[d->node].last_grow_ms = st.now_ms;
		if (d->cause == CAUSE_SHRINK)
			st.node[d->node].last_shrink_ms = st.now_ms;
	}
}

START_TEST(start_applies_config)
{
	cfg.flush_on_free = FLUSH_DEFERRED;
	cfg.node[1].pool_target = 48 * M;
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, 3);
	ck_assert_int_eq(ds.d[0].kind, DECISION_FLUSH);
	ck_assert_int_eq(ds.d[0].flush_on_free, FLUSH_DEFERRED);
	ck_assert_str_eq(ds.d[0].reason,
			 "start: flush_on_free immediate -> deferred (configured)");
	ck_assert_int_eq(ds.d[1].node, 0);
	ck_assert_int_eq(ds.d[1].cause, CAUSE_APPLY);
	ck_assert_uint_eq(ds.d[1].pool_target, 32 * M);
	ck_assert_uint_eq(ds.d[1].watermark_low, 8 * M);
	ck_assert_uint_eq(ds.d[1].watermark_high, 64 * M);
	ck_assert_str_eq(ds.d[1].reason,
			 "node 0: start: configured: pool_target 0 -> 32M");
	ck_assert_uint_eq(ds.d[2].pool_target, 48 * M);
	/* Applied: a second start (restart after SIGKILL) changes nothing. */
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, 0);
}
END_TEST

/* The kernel's hibernation knob, like flush_on_free: set on start. */
START_TEST(start_applies_hibernation)
{
	char why[256];

	st.hibernation_present = true;
	st.hibernation = HIBERNATION_REFUSE;
	cfg.hibernation = HIBERNATION_WIPE;
	cfg.flush_on_free = FLUSH_DEFERRED;
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, 4);
	ck_assert_int_eq(ds.d[0].kind, DECISION_FLUSH);
	ck_assert_int_eq(ds.d[1].kind, DECISION_HIBERNATION);
	ck_assert_int_eq(ds.d[1].cause, CAUSE_APPLY);
	ck_assert_int_eq(ds.d[1].node, -1);
	ck_assert_int_eq(ds.d[1].hibernation, HIBERNATION_WIPE);
	ck_assert_str_eq(ds.d[1].reason,
			 "start: hibernation refuse -> wipe (configured)");
	ck_assert_int_eq(ds.d[2].kind, DECISION_NODE);
	ck_assert_int_eq(st.hibernation, HIBERNATION_WIPE);
	/* The knob is there: nothing to warn about. */
	ck_assert(!policy_hibernation_unsupported(&cfg, &st, why, sizeof(why)));
	/* Applied: a restart changes nothing. */
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, 0);
}
END_TEST

/*
 * Reload back to refuse; and a change made from outside (secmemctl set)
 * is a one-off: the calm tick leaves it, the next reload undoes it.
 */
START_TEST(reload_and_outside_changes_of_hibernation)
{
	st.hibernation_present = true;
	st.hibernation = HIBERNATION_WIPE;
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, 3);
	ck_assert_int_eq(ds.d[0].kind, DECISION_HIBERNATION);
	ck_assert_str_eq(ds.d[0].reason,
			 "start: hibernation wipe -> refuse (configured)");
	ck_assert_int_eq(st.hibernation, HIBERNATION_REFUSE);
	st.hibernation = HIBERNATION_WIPE;	/* secmemctl set hibernation wipe */
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(ds.count, 0);
	event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(ds.count, 1);
	ck_assert_int_eq(ds.d[0].kind, DECISION_NODE);
	ck_assert_int_eq(st.hibernation, HIBERNATION_WIPE);
	event(EVENT_RELOAD, -1);
	ck_assert_uint_ge(ds.count, 1);
	ck_assert_int_eq(ds.d[0].kind, DECISION_HIBERNATION);
	ck_assert_str_eq(ds.d[0].reason,
			 "reload: hibernation wipe -> refuse (configured)");
	ck_assert_int_eq(st.hibernation, HIBERNATION_REFUSE);
}
END_TEST

/*
 * No knob (a stock or older kernel): never a decision, whatever is
 * configured (event() fails on one); a warning only for a policy other
 * than the kernel's own refuse.
 */
START_TEST(hibernation_knob_absent)
{
	char why[256] = "";

	st.hibernation_present = false;
	cfg.hibernation = HIBERNATION_WIPE;
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, 2);
	ck_assert_int_eq(ds.d[0].kind, DECISION_NODE);
	ck_assert_int_eq(ds.d[1].kind, DECISION_NODE);
	event(EVENT_RELOAD, -1);
	ck_assert_uint_eq(ds.count, 0);
	ck_assert(policy_hibernation_unsupported(&cfg, &st, why, sizeof(why)));
	ck_assert_str_eq(why,
			 "hibernation = wipe is configured, but this kernel has no hibernation policy: it cannot wipe secret files and keeps refusing to hibernate while any exists");
	/* Not configured (the default), or refuse: nothing to say. */
	config_defaults(&cfg);
	ck_assert(!policy_hibernation_unsupported(&cfg, &st, why, sizeof(why)));
	cfg.hibernation = HIBERNATION_REFUSE;
	ck_assert(!policy_hibernation_unsupported(&cfg, &st, why, sizeof(why)));
	event(EVENT_RELOAD, -1);
	ck_assert_uint_eq(ds.count, 0);
}
END_TEST

/* Every node, flush_on_free and hibernation at once: all fit. */
START_TEST(every_decision_at_once)
{
	int n;

	for (n = 0; n < CONFIG_MAX_NODES; n++)
		st.node[n].present = true;
	st.hibernation_present = true;
	cfg.flush_on_free = FLUSH_DEFERRED;
	cfg.hibernation = HIBERNATION_WIPE;
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, CONFIG_MAX_NODES + 2);
	ck_assert_uint_le(ds.count, sizeof(ds.d) / sizeof(ds.d[0]));
	ck_assert_int_eq(ds.d[CONFIG_MAX_NODES + 1].node, CONFIG_MAX_NODES - 1);
}
END_TEST

/*
 * The kernel keeps whole pageblocks: a size that is not a multiple is
 * decided on rounded up, so that what sysfs reads back counts as applied
 * and a reload of the same file decides nothing.
 */
START_TEST(sizes_rounded_to_pageblocks)
{
	cfg.node[0].pool_target = 9 * M;
	cfg.node[0].watermark_low = 3 * M;
	cfg.node[0].watermark_high = 33 * M;
	event(EVENT_START, -1);
	ck_assert_uint_ge(ds.count, 1);
	ck_assert_int_eq(ds.d[0].node, 0);
	ck_assert_uint_eq(ds.d[0].pool_target, 10 * M);
	ck_assert_uint_eq(ds.d[0].watermark_low, 4 * M);
	ck_assert_uint_eq(ds.d[0].watermark_high, 34 * M);
	event(EVENT_RELOAD, -1);
	ck_assert_uint_eq(ds.count, 0);
}
END_TEST

START_TEST(absent_nodes_untouched)
{
	st.node[1].present = false;
	event(EVENT_START, -1);
	ck_assert_uint_eq(ds.count, 1);
	ck_assert_int_eq(ds.d[0].node, 0);
	event(EVENT_LOW_WATERMARK, 1);
	ck_assert_uint_eq(ds.count, 0);
	event(EVENT_LOW_WATERMARK, CONFIG_MAX_NODES);
	ck_assert_uint_eq(ds.count, 0);
	event(EVENT_LOW_WATERMARK, -1);
	ck_assert_uint_eq(ds.count, 0);
}
END_TEST

START_TEST(low_watermark_grows_to_max)
{
	event(EVENT_START, -1);
	event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(ds.count, 1);
	ck_assert_int_eq(ds.d[0].cause, CAUSE_GROW);
	ck_assert_uint_eq(ds.d[0].pool_target, 48 * M);
	ck_assert_str_eq(ds.d[0].reason,
			 "node 0: pool below watermark_low, grow by 16M (max 256M): pool_target 32M -> 48M");
	ck_assert_uint_eq(st.node[1].pool_target, 32 * M);
	/* Beyond watermark_high 64M, the high watermark follows. */
	event(EVENT_LOW_WATERMARK, 0);
	event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(st.node[0].pool_target, 80 * M);
	ck_assert_uint_eq(st.node[0].watermark_high, 80 * M);
	ck_assert_uint_eq(st.node[0].watermark_low, 8 * M);
	for (int i = 0; i < 20; i++)
		event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(st.node[0].pool_target, 256 * M);
	event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(ds.count, 0);
}
END_TEST

START_TEST(exhausted_grows_twice_as_fast)
{
	event(EVENT_START, -1);
	event(EVENT_POOL_EXHAUSTED, 1);
	ck_assert_uint_eq(ds.count, 1);
	ck_assert_int_eq(ds.d[0].node, 1);
	ck_assert_uint_eq(ds.d[0].pool_target, 64 * M);
	ck_assert_ptr_nonnull(strstr(ds.d[0].reason, "pool exhausted"));
}
END_TEST

START_TEST(no_growth_under_pressure)
{
	event(EVENT_START, -1);
	st.psi_some_avg10 = 1000; /* exactly the 10% limit */
	event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(ds.count, 0);
	st.psi_some_avg10 = 999;
	event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(ds.count, 1);
	/* A disabled limit (0) never means pressure. */
	cfg.pressure_some_avg10 = 0;
	cfg.pressure_full_avg10 = 0;
	st.psi_some_avg10 = 10000;
	st.psi_full_avg10 = 10000;
	event(EVENT_LOW_WATERMARK, 0);
	ck_assert_uint_eq(ds.count, 1);
}
END_TEST

START_TEST(pressure_halves_toward_min_and_ends)
{
	int steps = 0;

	cfg.node[0].pool_min = 4 * M;
	cfg.node[1].pool_min = 4 * M;
	event(EVENT_START, -1);
	event(EVENT_PRESSURE, -1);
	ck_assert_uint_eq(ds.count, 2);
	ck_assert_int_eq(ds.d[0].cause, CAUSE_SHRINK);
	/* 4M + (32M - 4M) / 2 = 18M, in whole pageblocks */
	ck_assert_uint_eq(ds.d[0].pool_target, 18 * M);
	/* The low watermark follows the target down. */
	event(EVENT_PRESSURE, -1);
	ck_assert_uint_eq(st.node[0].pool_target, 10 * M);
	event(EVENT_PRESSURE, -1);
	ck_assert_uint_eq(st.node[0].pool_target, 6 * M);
	ck_assert_uint_eq(st.node[0].watermark_low, 6 * M);
	ck_assert_ptr_nonnull(strstr(ds.d[0].reason, "PSI trigger \"some 200000 2000000\" fired"));
	do {
		event(EVENT_PRESSURE, -1);
	} while (ds.count && ++steps < 10);
	ck_assert_int_lt(steps, 10);
	ck_assert_uint_eq(st.node[0].pool_target, 4 * M);
	ck_assert_uint_eq(st.node[1].pool_target, 4 * M);
}
END_TEST

START_TEST(full_pressure_goes_to_min)
{
	event(EVENT_START, -1);
	st.psi_full_avg10 = 600;
	event(EVENT_PRESSURE, -1);
	ck_assert_uint_eq(ds.count, 2);
	ck_assert_uint_eq(st.node[0].pool_target, 0);
	ck_assert_ptr_nonnull(strstr(ds.d[0].reason,
				     "memory full avg10 6.00% >= 5.00%"));
}
END_TEST

START_TEST(reclaim_shrinks_one_node)
{
	event(EVENT_START, -1);
	event(EVENT_RECLAIM, 1);
	ck_assert_uint_eq(ds.count, 1);
	ck_assert_int_eq(ds.d[0].node, 1);
	ck_assert_uint_eq(ds.d[0].pool_target, 16 * M);
	ck_assert_uint_eq(st.node[0].pool_target, 32 * M);
}
END_TEST

START_TEST(calm_decays_after_interval)
{
	event(EVENT_START, -1);
	event(EVENT_POOL_EXHAUSTED, 0);
	ck_assert_uint_eq(st.node[0].pool_target, 64 * M);
	/* Within decay_interval of the growth: hold. */
	st.now_ms += cfg.decay_interval_ms - 1;
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(ds.count, 0);
	st.now_ms += 1;
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(ds.count, 1);
	ck_assert_int_eq(ds.d[0].cause, CAUSE_DECAY);
	ck_assert_uint_eq(ds.d[0].pool_target, 48 * M);
	ck_assert_str_eq(ds.d[0].reason,
			 "node 0: no growth for 30 s, decay toward pool_target 32M: pool_target 64M -> 48M");
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(st.node[0].pool_target, 32 * M);
	/* The high watermark is back to the configured one. */
	ck_assert_uint_eq(st.node[0].watermark_high, 64 * M);
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(ds.count, 0);
}
END_TEST

START_TEST(calm_returns_after_pressure)
{
	event(EVENT_START, -1);
	event(EVENT_PRESSURE, -1);
	ck_assert_uint_eq(st.node[0].pool_target, 16 * M);
	/* Still under pressure at the tick: shrink further. */
	st.psi_some_avg10 = 2500;
	st.now_ms += cfg.decay_interval_ms;
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(st.node[0].pool_target, 8 * M);
	ck_assert_ptr_nonnull(strstr(ds.d[0].reason, "some avg10 25.00% >= 10.00%"));
	/* Calm, but the last shrink was just now. */
	st.psi_some_avg10 = 0;
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(ds.count, 0);
	st.now_ms += cfg.decay_interval_ms;
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(st.node[0].pool_target, 24 * M);
	ck_assert_ptr_nonnull(strstr(ds.d[0].reason, "no memory pressure for 30 s"));
	event(EVENT_CALM_TICK, -1);
	ck_assert_uint_eq(st.node[0].pool_target, 32 * M);
}
END_TEST

START_TEST(reload_applies_new_config)
{
	event(EVENT_START, -1);
	event(EVENT_LOW_WATERMARK, 0);
	cfg.node[0].pool_target = 40 * M;
	cfg.node[1].pool_target = 40 * M;
	event(EVENT_RELOAD, -1);
	ck_assert_uint_eq(ds.count, 2);
	ck_assert_ptr_nonnull(strstr(ds.d[0].reason, "reload: configured"));
	ck_assert_uint_eq(st.node[0].pool_target, 40 * M);
}
END_TEST

/* Whatever happens, targets stay in [min, max] and low <= target <= high. */
START_TEST(invariants_hold_for_random_sequences)
{
	static const enum event_type types[] = {
		EVENT_LOW_WATERMARK, EVENT_POOL_EXHAUSTED, EVENT_PRESSURE,
		EVENT_RECLAIM,	     EVENT_CALM_TICK,	   EVENT_RELOAD,
	};
	uint32_t seed = 12345;
	int i, n;

	cfg.node[0] = (struct node_policy){ 20 * M, 6 * M, 100 * M, 3 * M,
					    30 * M, 7 * M };
	cfg.node[1].pool_min = 10 * M;
	event(EVENT_START, -1);
	for (i = 0; i < 20000; i++) {
		seed = seed * 1103515245 + 12345;
		st.now_ms += (seed >> 8) % 20000;
		st.psi_some_avg10 = (seed >> 4) % 3 ? 0 : 1500;
		event(types[(seed >> 16) % 6], (int)((seed >> 12) % 3) - 1);
		for (n = 0; n < 2; n++) {
			const struct node_state *ns = &st.node[n];

			ck_assert_uint_ge(ns->pool_target, cfg.node[n].pool_min);
			ck_assert_uint_le(ns->pool_target, cfg.node[n].pool_max);
			ck_assert_uint_le(ns->watermark_low, ns->pool_target);
			ck_assert_uint_ge(ns->watermark_high, ns->pool_target);
		}
	}
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("daemon-policy");
	TCase *tc = tcase_create("policy");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, start_applies_config);
	tcase_add_test(tc, start_applies_hibernation);
	tcase_add_test(tc, reload_and_outside_changes_of_hibernation);
	tcase_add_test(tc, hibernation_knob_absent);
	tcase_add_test(tc, every_decision_at_once);
	tcase_add_test(tc, absent_nodes_untouched);
	tcase_add_test(tc, sizes_rounded_to_pageblocks);
	tcase_add_test(tc, low_watermark_grows_to_max);
	tcase_add_test(tc, exhausted_grows_twice_as_fast);
	tcase_add_test(tc, no_growth_under_pressure);
	tcase_add_test(tc, pressure_halves_toward_min_and_ends);
	tcase_add_test(tc, full_pressure_goes_to_min);
	tcase_add_test(tc, reclaim_shrinks_one_node);
	tcase_add_test(tc, calm_decays_after_interval);
	tcase_add_test(tc, calm_returns_after_pressure);
	tcase_add_test(tc, reload_applies_new_config);
	tcase_add_test(tc, invariants_hold_for_random_sequences);
	suite_add_tcase(s, tc);
	return s;
}
