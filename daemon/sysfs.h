/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's pool control plane as secmemd and secmemctl see it: every
 * sysfs path and format of the ABI lives in this file and sysfs.c (see
 * docs/secmemd.md, "The ABI this daemon expects").
 *
 * All functions take the sysfs mount point as @root ("/sys" normally, a
 * fake tree in tests) and return 0 or a negative errno.  -ENOENT from
 * sysfs_nodes() or sysfs_read_global() means the kernel lacks the feature.
 * The hibernation knob is younger than the pools: its absence is part of
 * what sysfs_read_global() reports, not an error.
 */
#ifndef SECMEM_SYSFS_H
#define SECMEM_SYSFS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define SYSFS_ROOT_DEFAULT "/sys"

/* The writable per-node knobs, in bytes. */
enum sysfs_knob {
	KNOB_POOL_TARGET,
	KNOB_WATERMARK_LOW,
	KNOB_WATERMARK_HIGH,
	KNOB_COUNT,
};

/* Read-only counters in stats/: amounts in bytes, events in counts. */
enum sysfs_stat {
	STAT_UNMAPPED_BYTES,	/* memory out of the direct map now */
	STAT_FREE_BYTES,	/* of which free: the pool */
	STAT_ALLOC_POOL,	/* allocations served from the pool */
	STAT_ALLOC_CONVERT,	/* allocations that had to convert */
	STAT_ALLOC_FAIL,	/* allocations that failed */
	STAT_CONVERSIONS,	/* pageblocks taken out of the direct map */
	STAT_RESTORATIONS,	/* pageblocks given back to it */
	STAT_TLB_FLUSH_CONVERT,	/* TLB flushes issued by conversions */
	STAT_TLB_FLUSH_MERMAP,	/* TLB flushes issued by the mermap */
	STAT_RELEASED_BYTES,	/* released under memory pressure */
	STAT_COUNT,
};

struct sysfs_node {
	uint64_t knob[KNOB_COUNT];
	uint64_t stat[STAT_COUNT];
};

struct sysfs_global {
	enum flush_policy flush_on_free;
	bool hibernation_present;	/* the kernel has the hibernation knob */
	enum hibernation_policy hibernation;	/* refuse if absent */
	int64_t hibernation_wiped_files; /* since boot; -1: not counted */
	uint64_t pageblock_bytes;
	uint64_t stat[STAT_COUNT];	/* the sum over all nodes */
};

extern const char *const sysfs_knob_names[KNOB_COUNT];
extern const char *const sysfs_stat_names[STAT_COUNT];

/*
 * Which nodes have pools (nodeN/unmapped/ exists).  Nodes numbered
 * CONFIG_MAX_NODES or more are counted in *@ignored, not listed.
 */
int sysfs_nodes(const char *root, bool present[CONFIG_MAX_NODES],
		int *ignored);

int sysfs_read_global(const char *root, struct sysfs_global *g);
int sysfs_read_node(const char *root, int node, struct sysfs_node *n);

/* Write one knob; -EINVAL is the kernel refusing the value. */
int sysfs_write_knob(const char *root, int node, enum sysfs_knob k,
		     uint64_t bytes);
int sysfs_write_flush(const char *root, enum flush_policy f);
/* -ENOENT: this kernel has no hibernation knob (nothing is created). */
int sysfs_write_hibernation(const char *root, enum hibernation_policy h);

/*
 * Move a node from the knob values in @cur to @want (indexed by
 * enum sysfs_knob), in an order that keeps low <= target <= high after
 * every single write, so the kernel's checks never refuse a step in the
 * middle.  Unchanged knobs are not written.  On error, *@failed names the
 * knob that was refused; @cur is updated with what was written.
 */
int sysfs_set_node(const char *root, int node, uint64_t cur[KNOB_COUNT],
		   const uint64_t want[KNOB_COUNT], enum sysfs_knob *failed);

#endif /* SECMEM_SYSFS_H */
