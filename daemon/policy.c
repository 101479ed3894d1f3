// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pool policy.  The rules, in the order they are checked:
 *
 *  - start/reload: the configured values, as they are (the hibernation
 *    policy only where the kernel has its knob);
 *  - low watermark: grow by grow_step, pool exhausted: by twice that
 *    (an allocation already waited for a conversion), never beyond
 *    pool_max, and never while memory is under pressure: memory handed
 *    to the pool then would be taken from a system that is short of it;
 *  - pressure (PSI trigger, or the kernel releasing pool pages): halve
 *    the distance to pool_min, or go straight to pool_min when the
 *    "full" PSI limit is reached (every task is stalled: no half steps);
 *  - calm tick: if PSI is still over a limit, shrink as above; otherwise
 *    step back toward pool_target by grow_step, but only once the last
 *    change in the other direction is decay_interval old, so that a
 *    burst or a pressure spell is not undone while it lasts.
 *
 * Every size of the configuration is taken rounded up to whole pageblocks,
 * as the kernel stores it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "units.h"

const char *event_name(enum event_type type)
{
	static const char *const names[] = {
		[EVENT_START] = "start",
		[EVENT_RELOAD] = "reload",
		[EVENT_LOW_WATERMARK] = "low-watermark",
		[EVENT_POOL_EXHAUSTED] = "pool-exhausted",
		[EVENT_PRESSURE] = "pressure",
		[EVENT_RECLAIM] = "reclaim",
		[EVENT_CALM_TICK] = "calm-tick",
	};

	if ((unsigned int)type < sizeof(names) / sizeof(names[0]))
		return names[type];
	return "?";
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return max_u64(lo, min_u64(v, hi));
}

bool policy_under_pressure(const struct config *cfg,
			   const struct observed_state *st, char *why,
			   size_t len)
{
	const char *kind;
	unsigned int v, limit;

	if (cfg->pressure_full_avg10 &&
	    st->psi_full_avg10 >= cfg->pressure_full_avg10) {
		kind = "full";
		v = st->psi_full_avg10;
		limit = cfg->pressure_full_avg10;
	} else if (cfg->pressure_some_avg10 &&
		   st->psi_some_avg10 >= cfg->pressure_some_avg10) {
		kind = "some";
		v = st->psi_some_avg10;
		limit = cfg->pressure_some_avg10;
	} else {
		return false;
	}
	snprintf(why, len, "memory %s avg10 %u.%02u%% >= %u.%02u%%", kind,
		 v / 100, v % 100, limit / 100, limit % 100);
	return true;
}

bool policy_hibernation_unsupported(const struct config *cfg,
				    const struct observed_state *st,
				    char *why, size_t len)
{
	if (st->hibernation_present || cfg->hibernation == HIBERNATION_REFUSE)
		return false;
	snprintf(why, len,
		 "hibernation = %s is configured, but this kernel has no hibernation policy: it cannot wipe secret files and keeps refusing to hibernate while any exists",
		 hibernation_policy_name(cfg->hibernation));
	return true;
}

static bool full_pressure(const struct config *cfg,
			  const struct observed_state *st)
{
	return cfg->pressure_full_avg10 &&
	       st->psi_full_avg10 >= cfg->pressure_full_avg10;
}

/*
 * Append a node decision for @target unless the kernel already has it.
 * The watermarks follow the target where they must: the configured ones
 * unless the target has moved outside them.
 */
static void decide_node(struct decisions *out, const struct config *cfg,
			const struct observed_state *st, int node,
			enum decision_cause cause, uint64_t target,
			const char *fmt_why)
{
	const struct node_policy *np = &cfg->node[node];
	const struct node_state *ns = &st->node[node];
	struct decision *d;
	char from[SIZE_STR_MAX], to[SIZE_STR_MAX];
	uint64_t low = min_u64(np->watermark_low, target);
	uint64_t high = max_u64(np->watermark_high, target);

	if (target == ns->pool_target && low == ns->watermark_low &&
	    high == ns->watermark_high)
		return;
	d = &out->d[out->count++];
	memset(d, 0, sizeof(*d));
	d->kind = DECISION_NODE;
	d->cause = cause;
	d->node = node;
	d->pool_target = target;
	d->watermark_low = low;
	d->watermark_high = high;
	snprintf(d->reason, sizeof(d->reason), "node %d: %s: pool_target %s -> %s",
		 node, fmt_why, format_size(ns->pool_target, from, sizeof(from)),
		 format_size(target, to, sizeof(to)));
}

/*
 * A new decision about a global knob, applying the configuration: @what
 * (start, reload) changes @knob from @from to @to. The caller sets the value.
 */
static struct decision *global_decision(struct decisions *out, enum decision_kind kind,
					const char *what, const char *knob, const char *from,
					const char *to)
{
	struct decision *d = &out->d[out->count++];

	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->cause = CAUSE_APPLY;
	d->node = -1;
	snprintf(d->reason, sizeof(d->reason), "%s: %s %s -> %s (configured)", what, knob, from,
		 to);
	return d;
}

static void apply_config(const struct config *cfg,
			 const struct observed_state *st, const char *what,
			 struct decisions *out)
{
	char why[64];
	int n;

	if (st->flush_on_free != cfg->flush_on_free) {
		struct decision *d = global_decision(out, DECISION_FLUSH, what,
						     "flush_on_free",
						     flush_policy_name(st->flush_on_free),
						     flush_policy_name(cfg->flush_on_free));

		d->flush_on_free = cfg->flush_on_free;
	}
	/* Without the knob: policy_hibernation_unsupported(), no decision. */
	if (st->hibernation_present && st->hibernation != cfg->hibernation) {
		struct decision *d = global_decision(out, DECISION_HIBERNATION, what,
						     "hibernation",
						     hibernation_policy_name(st->hibernation),
						     hibernation_policy_name(cfg->hibernation));

		d->hibernation = cfg->hibernation;
	}
	snprintf(why, sizeof(why), "%s: configured", what);
	for (n = 0; n < CONFIG_MAX_NODES; n++)
		if (st->node[n].present)
			decide_node(out, cfg, st, n, CAUSE_APPLY,
				    cfg->node[n].pool_target, why);
}

static void grow(const struct config *cfg, const struct observed_state *st,
		 const struct event *ev, struct decisions *out)
{
	const struct node_policy *np = &cfg->node[ev->node];
	uint64_t cur = st->node[ev->node].pool_target;
	uint64_t step = np->grow_step;
	char why[128], by[SIZE_STR_MAX], max[SIZE_STR_MAX];

	if (policy_under_pressure(cfg, st, why, sizeof(why)))
		return;
	if (ev->type == EVENT_POOL_EXHAUSTED)
		step = step > UINT64_MAX / 2 ? UINT64_MAX : step * 2;
	snprintf(why, sizeof(why), "%s, grow by %s%s (max %s)",
		 ev->type == EVENT_POOL_EXHAUSTED ?
			 "pool exhausted (an allocation had to convert)" :
			 "pool below watermark_low",
		 format_size(np->grow_step, by, sizeof(by)),
		 ev->type == EVENT_POOL_EXHAUSTED ? " x2" : "",
		 format_size(np->pool_max, max, sizeof(max)));
	decide_node(out, cfg, st, ev->node, CAUSE_GROW,
		    clamp_u64(cur > UINT64_MAX - step ? UINT64_MAX : cur + step,
			      np->pool_min, np->pool_max),
		    why);
}

/* Halve the distance to pool_min, in whole pageblocks so that it ends. */
static uint64_t shrunk_target(const struct config *cfg,
			      const struct observed_state *st, int node)
{
	const struct node_policy *np = &cfg->node[node];
	uint64_t cur = st->node[node].pool_target;
	uint64_t pb = st->pageblock_bytes ? st->pageblock_bytes : 1;
	uint64_t half;

	if (cur <= np->pool_min || full_pressure(cfg, st))
		return np->pool_min;
	half = (cur - np->pool_min) / 2;
	half -= half % pb;
	return min_u64(np->pool_min + half, np->pool_max);
}

static void shrink(const struct config *cfg, const struct observed_state *st,
		   int node, const char *cause, struct decisions *out)
{
	char why[160], min[SIZE_STR_MAX];
	int n;

	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		if (!st->node[n].present || (node >= 0 && n != node))
			continue;
		snprintf(why, sizeof(why), "%s, shrink toward pool_min %s",
			 cause,
			 format_size(cfg->node[n].pool_min, min, sizeof(min)));
		decide_node(out, cfg, st, n, CAUSE_SHRINK,
			    shrunk_target(cfg, st, n), why);
	}
}

static bool older_than(uint64_t now, uint64_t then, uint64_t interval)
{
	return then == 0 || now < then || now - then >= interval;
}

static void calm_tick(const struct config *cfg,
		      const struct observed_state *st, struct decisions *out)
{
	uint64_t interval = cfg->decay_interval_ms;
	char why[160], goal[SIZE_STR_MAX];
	int n;

	if (policy_under_pressure(cfg, st, why, sizeof(why))) {
		shrink(cfg, st, -1, why, out);
		return;
	}
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		const struct node_policy *np = &cfg->node[n];
		const struct node_state *ns = &st->node[n];
		uint64_t cur = ns->pool_target, next;

		if (!ns->present || cur == np->pool_target)
			continue;
		format_size(np->pool_target, goal, sizeof(goal));
		if (cur > np->pool_target) {
			if (!older_than(st->now_ms, ns->last_grow_ms, interval))
				continue;
			next = max_u64(np->pool_target,
				       cur - min_u64(cur, np->grow_step));
			snprintf(why, sizeof(why),
				 "no growth for %" PRIu64
				 " s, decay toward pool_target %s",
				 interval / 1000, goal);
		} else {
			if (!older_than(st->now_ms, ns->last_shrink_ms,
					interval))
				continue;
			next = min_u64(np->pool_target, cur + np->grow_step);
			snprintf(why, sizeof(why),
				 "no memory pressure for %" PRIu64
				 " s, return toward pool_target %s",
				 interval / 1000, goal);
		}
		decide_node(out, cfg, st, n, CAUSE_DECAY,
			    clamp_u64(next, np->pool_min, np->pool_max), why);
	}
}

static uint64_t round_up(uint64_t v, uint64_t unit)
{
	/* Sizes are at most CONFIG_SIZE_MAX: no overflow. */
	return (v % unit) ? v + (unit - v % unit) : v;
}

/*
 * The kernel keeps whole pageblocks and reads back what it keeps: decide
 * in the same units.  Otherwise a configured 9M never equals the 10M read
 * back, and every start, reload and calm tick "applies" it (and logs it)
 * again, to no effect.
 */
static void round_config(const struct config *in, uint64_t pb,
			 struct config *out)
{
	int n;

	*out = *in;
	if (pb <= 1)
		return;
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		struct node_policy *np = &out->node[n];

		np->pool_target = round_up(np->pool_target, pb);
		np->pool_min = round_up(np->pool_min, pb);
		np->pool_max = round_up(np->pool_max, pb);
		np->watermark_low = round_up(np->watermark_low, pb);
		np->watermark_high = round_up(np->watermark_high, pb);
		np->grow_step = round_up(np->grow_step, pb);
	}
}

static void decide(const struct config *cfg, const struct observed_state *st,
		   const struct event *ev, struct decisions *out)
{
	char why[160];

	out->count = 0;
	switch (ev->type) {
	case EVENT_START:
		apply_config(cfg, st, "start", out);
		break;
	case EVENT_RELOAD:
		apply_config(cfg, st, "reload", out);
		break;
	case EVENT_LOW_WATERMARK:
	case EVENT_POOL_EXHAUSTED:
		if (ev->node >= 0 && ev->node < CONFIG_MAX_NODES &&
		    st->node[ev->node].present)
			grow(cfg, st, ev, out);
		break;
	case EVENT_PRESSURE:
		if (!policy_under_pressure(cfg, st, why, sizeof(why)))
			snprintf(why, sizeof(why),
				 "PSI trigger \"%s %" PRIu32 " %" PRIu32 "\" fired",
				 cfg->pressure_trigger.kind == PSI_FULL ?
					 "full" : "some",
				 cfg->pressure_trigger.stall_us,
				 cfg->pressure_trigger.window_us);
		shrink(cfg, st, -1, why, out);
		break;
	case EVENT_RECLAIM:
		if (ev->node >= 0 && ev->node < CONFIG_MAX_NODES)
			shrink(cfg, st, ev->node,
			       "kernel released pool pages under memory pressure",
			       out);
		break;
	case EVENT_CALM_TICK:
		calm_tick(cfg, st, out);
		break;
	}
}

void policy_decide(const struct config *cfg, const struct observed_state *st,
		   const struct event *ev, struct decisions *out)
{
	struct config rounded;

	/* Rounding up keeps pool_min <= pool_target <= pool_max, low <= high. */
	round_config(cfg, st->pageblock_bytes, &rounded);
	decide(&rounded, st, ev, out);
}
