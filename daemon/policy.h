/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pool policy: what the targets should be, given the configuration,
 * what the kernel reports and what just happened.
 *
 * policy_decide() is a pure function (no I/O, no clock, no globals), so
 * every rule below is tested by feeding it event sequences.  The caller
 * applies the decisions through sysfs, logs each reason once, and feeds
 * back the state it observes.
 */
#ifndef SECMEM_POLICY_H
#define SECMEM_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

enum event_type {
	EVENT_START,		/* apply the configuration */
	EVENT_RELOAD,		/* a new configuration was loaded: apply it */
	EVENT_LOW_WATERMARK,	/* kernel: a pool fell below watermark_low */
	EVENT_POOL_EXHAUSTED,	/* kernel: an allocation had to convert */
	EVENT_PRESSURE,		/* the PSI trigger fired */
	EVENT_RECLAIM,		/* kernel: pages released under pressure */
	EVENT_CALM_TICK,	/* timer, every decay_interval */
};

struct event {
	enum event_type type;
	int node;		/* kernel events: the node; otherwise -1 */
};

struct node_state {
	bool present;		/* the node has unmapped/ in sysfs */
	uint64_t pool_target;	/* bytes, as read back from sysfs */
	uint64_t watermark_low;
	uint64_t watermark_high;
	uint64_t last_grow_ms;	/* when the target last grew; 0: never */
	uint64_t last_shrink_ms;/* when it last shrank for pressure */
};

struct observed_state {
	uint64_t now_ms;		/* CLOCK_MONOTONIC */
	uint64_t pageblock_bytes;	/* the kernel's unit of conversion */
	unsigned int psi_some_avg10;	/* hundredths of a percent */
	unsigned int psi_full_avg10;
	enum flush_policy flush_on_free;
	bool hibernation_present;	/* the kernel has the hibernation knob */
	enum hibernation_policy hibernation;	/* if it has */
	struct node_state node[CONFIG_MAX_NODES];
};

enum decision_kind {
	DECISION_NODE,		/* new pool_target and watermarks for a node */
	DECISION_FLUSH,		/* new flush_on_free */
	DECISION_HIBERNATION,	/* new hibernation policy */
};

enum decision_cause {
	CAUSE_APPLY,		/* the configuration says so */
	CAUSE_GROW,		/* demand: low watermark or exhaustion */
	CAUSE_SHRINK,		/* memory pressure */
	CAUSE_DECAY,		/* calm: back toward the configured target */
};

struct decision {
	enum decision_kind kind;
	enum decision_cause cause;
	int node;			/* DECISION_NODE */
	uint64_t pool_target;		/* DECISION_NODE, bytes */
	uint64_t watermark_low;
	uint64_t watermark_high;
	enum flush_policy flush_on_free; /* DECISION_FLUSH */
	enum hibernation_policy hibernation; /* DECISION_HIBERNATION */
	char reason[192];		/* one line, for the log */
};

struct decisions {
	unsigned int count;
	struct decision d[CONFIG_MAX_NODES + 2]; /* + flush, hibernation */
};

/*
 * Decide what to change after @ev.  Only changes are listed: an empty
 * list means the kernel is already where the policy wants it.  Every
 * target lies in [pool_min, pool_max] of its node, and the watermarks
 * keep watermark_low <= pool_target <= watermark_high.  The sizes of @cfg
 * are taken rounded up to whole pageblocks (@st->pageblock_bytes, if not
 * 0), as the kernel keeps them, so that a configuration read back from the
 * kernel compares equal to itself.
 */
void policy_decide(const struct config *cfg, const struct observed_state *st,
		   const struct event *ev, struct decisions *out);

/* True (and a reason in @why) if PSI is at or above a configured limit. */
bool policy_under_pressure(const struct config *cfg,
			   const struct observed_state *st, char *why,
			   size_t len);

/*
 * True (and a reason in @why) if @cfg asks for a hibernation policy other
 * than the kernel's default (refuse) and the kernel has no knob for it:
 * nothing can apply it, the kernel keeps refusing.  Not a decision (there
 * is nothing to write); secmemd warns about it.
 */
bool policy_hibernation_unsupported(const struct config *cfg,
				    const struct observed_state *st,
				    char *why, size_t len);

const char *event_name(enum event_type type);

#endif /* SECMEM_POLICY_H */
