/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The statistics a preloaded process exports for secmemctl status (see
 * docs/preload.md, "Statistics for secmemctl"): one page of a plain memfd
 * named "secmem-stats", close-on-exec, sealed against resizing, holding a
 * struct secmem_stats_export.  Root finds it through the magic links
 * /proc/PID/fd/N -> "/memfd:secmem-stats (deleted)" and reads it with
 * pread(); nothing else can (opening /proc/PID/fd/N needs ptrace read
 * access to PID).
 *
 * It holds counters and the backend's name, never a secret, never an
 * address.  The writer brackets every update with @seq (odd while
 * writing); a reader takes a copy whose @seq is even and unchanged.
 *
 * A child created by fork() shares the parent's page until its first
 * update, which replaces it with a page of its own: a reader therefore
 * takes a page only from the process whose pid it carries.
 *
 * Shared by the preload (writer) and secmemctl (reader); the layout only
 * grows at the end, and @version changes if a field changes meaning.
 */
#ifndef SECMEM_STATS_EXPORT_H
#define SECMEM_STATS_EXPORT_H

#include <stdint.h>

#define SECMEM_STATS_NAME	"secmem-stats"
#define SECMEM_STATS_MAGIC	"SECMSTAT"	/* 8 bytes, no NUL */
#define SECMEM_STATS_VERSION	1U

struct secmem_stats_export {
	char magic[8];			/* SECMEM_STATS_MAGIC */
	uint32_t version;		/* SECMEM_STATS_VERSION */
	uint32_t size;			/* sizeof(struct secmem_stats_export) */
	uint32_t seq;			/* odd while an update is written */
	int32_t pid;			/* the writer: getpid() */
	uint32_t modes;			/* PRELOAD_* bits in force */
	uint32_t backend;		/* enum secmem_backend */
	char backend_name[16];		/* secmem_backend_name(), NUL-terminated */
	uint64_t updated_ns;		/* CLOCK_REALTIME of the last update */
	uint64_t updates;		/* updates written so far */
	uint64_t bytes_in_use;		/* secmem_stats() at the last update */
	uint64_t peak_bytes_in_use;	/* the largest bytes_in_use written */
	uint64_t bytes_mapped;
	uint64_t memlock_charged;
	uint64_t memlock_limit;		/* UINT64_MAX: unlimited */
	uint64_t allocations;
	uint64_t arenas;
	uint64_t served_openssl;	/* allocations served, by mode */
	uint64_t served_sodium;
	uint64_t served_heap;
	uint64_t served_libc;		/* heap mode: left to glibc */
	uint64_t served_gcrypt;
};

/* Writer side, in libsecmem-preload (stats_export.c). */
/* Create the page (after the backend check of the constructor). */
void preload_stats_init(void);
/* Refresh the page if the last refresh is 100 ms old: cheap otherwise. */
void preload_stats_tick(void);

#endif /* SECMEM_STATS_EXPORT_H */
