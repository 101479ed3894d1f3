/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the guest tests of the unmapped pool control plane: the
 * sysfs knobs and statistics under /sys/devices/system/node/nodeN/unmapped/
 * and /sys/kernel/mm/unmapped/, /proc/meminfo and /proc/vmstat, and
 * unmapped allocations (memfd_create(MFD_UNMAPPED), memfd_secret) made on a
 * chosen node. The ABI is docs/secmemd.md, "The ABI this daemon expects".
 *
 * Every function that fails says why with tap_diag() and returns a
 * negative errno (or false); none exits.
 */
#ifndef SECMEM_TEST_UPOOL_H
#define SECMEM_TEST_UPOOL_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#ifndef MFD_UNMAPPED
#define MFD_UNMAPPED		0x0020U
#endif

#define UPOOL_GLOBAL_DIR	"/sys/kernel/mm/unmapped"
#define UPOOL_NODE_ROOT		"/sys/devices/system/node"
#define UPOOL_MAX_NODES		16

#define UPOOL_KiB		1024ULL
#define UPOOL_MiB		(1024ULL * 1024)
#define UPOOL_PAGE		4096ULL

typedef unsigned long long u64_t;

/* The rw knobs of a node, in the order upool_knob_names lists them. */
enum upool_knob {
	UPOOL_TARGET,
	UPOOL_LOW,
	UPOOL_HIGH,
	UPOOL_NR_KNOBS,
};

/* stats/ files, in the order upool_stat_names lists them. */
enum upool_stat {
	UPOOL_UNMAPPED_BYTES,
	UPOOL_FREE_BYTES,
	UPOOL_ALLOC_POOL,
	UPOOL_ALLOC_CONVERT,
	UPOOL_ALLOC_FAIL,
	UPOOL_CONVERSIONS,
	UPOOL_RESTORATIONS,
	UPOOL_TLB_FLUSH_CONVERT,
	UPOOL_TLB_FLUSH_MERMAP,
	UPOOL_RELEASED_BYTES,
	UPOOL_NR_STATS,
};

/* /proc/vmstat events of the unmapped allocator. */
enum upool_vmstat {
	UPOOL_VM_BLOCK_UNMAP,
	UPOOL_VM_BLOCK_REMAP,
	UPOOL_VM_BLOCK_RECLAIM,
	UPOOL_VM_ALLOC_POOL,
	UPOOL_VM_ALLOC_CONVERT,
	UPOOL_VM_ALLOC_FAIL,
	UPOOL_VM_TLB_FLUSH,
	UPOOL_VM_MERMAP_FLUSH,
	UPOOL_NR_VMSTAT,
};

extern const char *const upool_knob_names[UPOOL_NR_KNOBS];
extern const char *const upool_stat_names[UPOOL_NR_STATS];
extern const char *const upool_vmstat_names[UPOOL_NR_VMSTAT];

/* A snapshot of one node (or, with node -1, of the global files). */
struct upool_snap {
	u64_t knob[UPOOL_NR_KNOBS];
	u64_t stat[UPOOL_NR_STATS];
};

struct upool_node {
	int id;			/* N of /sys/devices/system/node/nodeN */
	int nr_cpus;		/* 0: a memory-only node */
	cpu_set_t cpus;
	u64_t mem_total;	/* bytes, from nodeN/meminfo */
};

struct upool_info {
	u64_t pageblock;	/* pageblock_bytes */
	int nr_nodes;		/* nodes with an unmapped/ directory */
	struct upool_node node[UPOOL_MAX_NODES];
	char flush_saved[32];	/* flush_on_free as found, the bare word */
	bool mfd_unmapped;	/* memfd_create(MFD_UNMAPPED) works */
};

extern struct upool_info upool;

/*
 * Fill in @upool: returns -ENOENT without /sys/kernel/mm/unmapped (no
 * control plane), another negative errno on a broken layout. Also raises
 * RLIMIT_MEMLOCK to unlimited (secretmem charges every page).
 */
int upool_init(void);

/*
 * The start of every pool test's main(), and the one function here that
 * does not return on failure: skips the whole test (TAP) when not run as
 * root, or when the kernel has no control plane (or, with
 * @need_mfd_unmapped, refuses memfd_create(MFD_UNMAPPED)); bails out when
 * the sysfs files exist but upool_init() cannot use them.
 */
void upool_init_or_skip(bool need_mfd_unmapped);

/* "/sys/devices/system/node/nodeN/unmapped/REL" (node < 0: the global dir). */
const char *upool_path(char *buf, size_t len, int node, const char *rel);

/*
 * Read a whole sysfs file into @buf (NUL-terminated). Returns its length
 * or a negative errno; quiet.
 */
int upool_read_file(const char *path, char *buf, size_t len);
/* Read "DECIMAL\n" strictly. -EPROTO (with a diagnostic) when malformed. */
int upool_read_u64(const char *path, u64_t *val);
/*
 * One write(2) of @len bytes of @s at offset 0 of a fresh open. Returns 0
 * when all of it was taken, else a negative errno (from open or write);
 * quiet, since refusals are what some tests want.
 */
int upool_write_raw(const char *path, const char *s, size_t len);
int upool_write_str(const char *path, const char *s);
int upool_write_u64(const char *path, u64_t val);

int upool_knob_get(int node, enum upool_knob k, u64_t *val);
/* Write one knob; says what failed. */
int upool_knob_set(int node, enum upool_knob k, u64_t val);
/*
 * Put the free unmapped pages that CPUs keep for their next allocations
 * back on the free lists (they are counted free either way, but only then
 * does /proc/pagetypeinfo see them): any knob write does, so write every
 * node's watermark_high with its own value. 0 or a negative errno.
 */
int upool_give_back_kept(void);
/*
 * Set a node's three knobs, ordering the watermark writes so that
 * low <= high holds after each one.
 */
int upool_set(int node, u64_t target, u64_t low, u64_t high);

int upool_snap(int node, struct upool_snap *s);
int upool_stat(int node, enum upool_stat st, u64_t *val);
bool upool_snap_equal(const struct upool_snap *a, const struct upool_snap *b);
void upool_snap_diag(const char *what, int node, const struct upool_snap *s);

/* The selected word of flush_on_free ("[immediate] deferred" or bare). */
int upool_flush_mode(char *buf, size_t len);

/*
 * Every knob of every node to 0 (target first, then the watermarks, with
 * a change of watermark_high so that the worker looks at the pool again)
 * and flush_on_free back to what upool_init() found.
 */
int upool_reset(void);
/* Wait until no node holds a free pageblock (free_bytes < pageblock). */
int upool_wait_empty(double timeout);
/*
 * Reset, and on the way out (exit or SIGTERM/SIGINT/SIGHUP/SIGALRM of this
 * process) reset again with async-signal-safe writes.
 */
void upool_install_restore(void);

/*
 * Wait until @node's free_bytes is within [@lo, @hi]; returns 0, or
 * -ETIMEDOUT with a diagnostic. @last gets the last value read.
 */
int upool_wait_free(int node, u64_t lo, u64_t hi, double timeout, u64_t *last);
/*
 * Wait until the statistics of every node stop moving (two snapshots
 * @quiet_ms apart agree). 0 or -ETIMEDOUT.
 */
int upool_settle(int quiet_ms, double timeout);

/* "Key: value" of /proc/meminfo in bytes, "key value" of /proc/vmstat. */
long long upool_meminfo(const char *key);
long long upool_vmstat(const char *key);
/* Fold the per-CPU deltas of the vm counters (vm.stat_refresh). */
void upool_stat_refresh(void);
int upool_vmstat_all(u64_t v[UPOOL_NR_VMSTAT]);

/* A /proc/vmstat event and the sysfs statistic that counts the same thing. */
struct upool_pair {
	enum upool_vmstat v;
	enum upool_stat s;
};

/* The allocator's events: pool hits, conversions, failures, blocks each way. */
extern const struct upool_pair upool_alloc_pairs[5];

/*
 * Did each event of @pairs move from @vm0 to @vm1 by as much as its
 * statistic, summed over the nodes, from @st0 to @st1? Says which did not.
 */
bool upool_events_agree(const struct upool_pair *pairs, unsigned int n,
			const u64_t vm0[UPOOL_NR_VMSTAT], const u64_t vm1[UPOOL_NR_VMSTAT],
			const u64_t st0[UPOOL_NR_STATS], const u64_t st1[UPOOL_NR_STATS]);

double upool_now(void);
void upool_sleep_ms(unsigned int ms);

/*
 * Run the calling thread on @node's CPUs with its memory policy bound to
 * @node, so that unmapped allocations come from that node. 0, or a
 * negative errno (-ENODEV for a node without CPUs).
 */
int upool_bind_node(int node);
void upool_unbind(void);
/* Index in upool.node[] of node id @node, or -1. */
int upool_node_index(int node);

/* How an unmapped buffer is allocated. */
enum upool_how {
	UPOOL_MFD_MMAP,		/* memfd_create(MFD_UNMAPPED), mmap, touch */
	UPOOL_MFD_WRITE,	/* memfd_create(MFD_UNMAPPED), write(2) */
	UPOOL_SECRET,		/* memfd_secret, mmap, touch */
	UPOOL_ANY,		/* MFD_UNMAPPED if the kernel has it, else secret */
};

struct upool_buf {
	int fd;
	void *addr;
	size_t len;
};

const char *upool_how_name(enum upool_how how);
/* @len bytes of unmapped memory, every page allocated. 0 or -errno. */
int upool_alloc(struct upool_buf *b, size_t len, enum upool_how how);
void upool_free(struct upool_buf *b);

/* strerrorname_np() that never returns NULL. */
const char *upool_errname(int err);

#endif /* SECMEM_TEST_UPOOL_H */
