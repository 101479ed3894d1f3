/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The statistics page a preloaded process maps (preload/stats_export.h),
 * read from outside through /proc/PID/map_files (root) or /proc/PID/mem
 * (ptrace access).
 */
#ifndef SECMEM_STATS_PAGE_H
#define SECMEM_STATS_PAGE_H

#include "stats_export.h"

struct proc_stats {
	long pid;
	int r;				/* 0: @s valid, else -errno */
	char why[96];			/* why @s is not valid */
	struct secmem_stats_export s;
};

/*
 * Read the page of process @p->pid under the procfs mount @proc into @p:
 * one consistent copy (written by that process, of this format), or
 * @p->r and @p->why set.
 */
void stats_page_read(const char *proc, struct proc_stats *p);

#endif /* SECMEM_STATS_PAGE_H */
