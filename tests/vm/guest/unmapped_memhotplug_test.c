// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability case 4 (docs/RELIABILITY.md): memory hotplug. Offlining a
 * memory block that holds unmapped pageblocks, and onlining it again.
 *
 * The guest has a pc-dimm (run-vm.sh VM_DIMM, which also puts
 * secmem.dimm=SIZE on the kernel command line): memory the kernel's ACPI
 * memory hotplug driver added during boot and left offline. Without
 * secmem.dimm the test skips; with it, a missing DIMM fails.
 *
 * The kernel's promise (Documentation/mm/unmapped.rst, "Memory hotplug"):
 * a memory block holding an unmapped page in use cannot be offlined
 * (EBUSY: unmapped pages cannot migrate), and nothing about it changes;
 * free unmapped pageblocks do not stop offlining: they are mapped again,
 * zeroed, before their memory goes, so that offlined memory is never out
 * of the direct map and never comes back holding a secret.
 *
 * One scenario, in order:
 *  1. the DIMM's memory blocks (the ones offline at the start; as many as
 *     secmem.dimm says) go online as ZONE_NORMAL (unmapped pageblocks are
 *     never taken from ZONE_MOVABLE);
 *  2. the pool is filled to the DIMM's size less 128 MiB and frozen
 *     (pool_target 0, watermark_high above it: the worker neither converts
 *     nor releases); ZONE_NORMAL, which is the DIMM, holds unmapped
 *     pageblocks; secret A (16 MiB MFD_UNMAPPED, a 64-byte random marker
 *     at the start of every page) is allocated on it, and a child writes
 *     secret B (the rest of the pool, its own marker in every page) and
 *     exits with the file open, so B's pages go back to the unmapped free
 *     lists unzeroed: every pageblock offlining maps again holds them;
 *  3. round 1, every DIMM block, highest first (with KASAN a block's
 *     shadow lives in the blocks onlined before it), is offlined. A block
 *     with a page of A must fail with EBUSY; a refusal must be EBUSY, and
 *     the page the kernel names for it (offline_pages() asks isolation to
 *     dump_page() the unmovable page) must be in use: A's, or the kernel's
 *     (slab the kernel put on the DIMM), never a free unmapped page (B's);
 *     a refusal changes no counter and not MemTotal; a success lowers
 *     MemTotal by the block. Every attempt: the pool's unmapped_bytes and
 *     free_bytes move by the same amount, pageblock_bytes times the
 *     restorations, and nothing is converted. At least one refusal must
 *     name a page of A;
 *  4. A is read back through its mapping and read(), every byte, and is
 *     not in /proc/kcore (the DIMM's online range), while a control
 *     marker in a plain memfd is read back there at its pagemap address;
 *  5. round 2: A is closed, the remaining DIMM blocks are offlined, judged
 *     the same way (A's pages are now free ones); after it at least one
 *     block went offline, with unmapped pageblocks mapped again and some
 *     of B's pages in it;
 *  6. every DIMM block is onlined again: neither marker is in its memory
 *     (B's pages went offline unzeroed on the unmapped free lists: the
 *     kernel must zero them before they return to the direct map);
 *  7. the DIMM is used again: a pool fill puts unmapped pageblocks on it,
 *     an MFD_UNMAPPED round trip there reads back;
 *  8. the pool is emptied, the counters are consistent with the start
 *     (unmapped_bytes less (conversions - restorations) pageblocks is
 *     what it was, /proc/vmstat nr_unmapped equals unmapped_bytes), and
 *     the DIMM goes offline again (MemTotal as at the start, plus any block
 *     the kernel's own pages keep online, which is said), as the next
 *     tests expect it.
 * A kernel splat (a fault on an unmapped page handed to the mapped side, a
 * WARNING) panics the debug guest and fails the run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "hash.h"
#include "kcore.h"
#include "procfs.h"
#include "tap.h"
#include "upool.h"

#define MEM_ROOT		"/sys/devices/system/memory"
#define MH_MAX_BLOCKS		64
#define MH_A_BYTES		(16 * UPOOL_MiB)
#define MH_C_BYTES		(1 * UPOOL_MiB)
#define MH_MARK			64
#define MH_POOL_SLACK		(64 * UPOOL_MiB)
/*
 * The pool leaves this much of the DIMM mapped: KASAN's shadow of the
 * blocks onlined later is allocated in the ones onlined before (16 MiB per
 * 128 MiB), and ZONE_NORMAL must stay above its watermarks, or kswapd
 * would have the shrinker release pool blocks while the worker fills.
 */
#define MH_POOL_LEAVE		(128 * UPOOL_MiB)
#define MH_FILL_TIMEOUT		150.0
#define MH_NR_RESULTS		8
#define MH_PAGES(b)		((b) / UPOOL_PAGE)
#define MH_MIB			((uint64_t)UPOOL_MiB)

struct mblock {
	int id;			/* memoryN */
	uint64_t pfn;		/* first pfn */
	bool online;
};

static struct mblock blk[MH_MAX_BLOCKS];
static int nr_blk;
static uint64_t block_bytes, block_pages, dimm_bytes;

/* The secrets' markers are kept only bit-inverted here. */
static unsigned char mark_inv[3][MH_MARK];	/* A, B, control */
static uint64_t a_pfn[MH_PAGES(MH_A_BYTES)], *b_pfn;
static unsigned int nr_a_pfn, nr_b_pfn;
static struct upool_buf a_buf = { .fd = -1 };
static bool a_held;		/* A is open; once closed its pages are free */
static uint64_t a_seed;

/* Counters of the pool (global files) and meminfo, one snapshot. */
struct mh_snap {
	u64_t stat[UPOOL_NR_STATS];
	long long mem_total;
};

/* --- small helpers -------------------------------------------------------- */

/* Byte @i of page @pg of A, past the marker. */
static unsigned char a_byte(unsigned int pg, unsigned int i)
{
	return hash64(a_seed ^ ((uint64_t)pg << 20) ^ (i / 8)) >> (8 * (i % 8));
}

/* Write marker @m (un-inverted one byte at a time) at @p. */
static void put_mark(volatile unsigned char *p, int m)
{
	unsigned int i;

	for (i = 0; i < MH_MARK; i++)
		p[i] = mark_inv[m][i] ^ 0xff;
}

static bool is_mark(const volatile unsigned char *p, int m)
{
	unsigned int i;

	for (i = 0; i < MH_MARK; i++)
		if (p[i] != (mark_inv[m][i] ^ 0xff))
			return false;
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool pfn_in(const uint64_t *set, unsigned int n, uint64_t pfn)
{
	return bsearch(&pfn, set, n, sizeof(*set), cmp_u64);
}

static bool on_dimm(uint64_t pfn)
{
	int i;

	for (i = 0; i < nr_blk; i++)
		if (pfn >= blk[i].pfn && pfn < blk[i].pfn + block_pages)
			return true;
	return false;
}

/* The pfn of every page of [@addr, @addr + @len) in @out; 0 if unknown. */
static int pagemap_pfns(const void *addr, size_t len, uint64_t *out)
{
	size_t n = len / UPOOL_PAGE, i;
	uint64_t *ent;
	int fd, err = 0;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ent = calloc(n, sizeof(*ent));
	if (!ent) {
		close(fd);
		return -ENOMEM;
	}
	if (pread(fd, ent, n * sizeof(*ent), (uintptr_t)addr / UPOOL_PAGE * sizeof(*ent)) !=
	    (ssize_t)(n * sizeof(*ent)))
		err = -EIO;
	for (i = 0; i < n; i++)
		out[i] = (ent[i] >> 63) ? ent[i] & ((1ULL << 55) - 1) : 0;
	free(ent);
	close(fd);
	return err;
}

static int snap(struct mh_snap *s)
{
	int i;

	for (i = 0; i < UPOOL_NR_STATS; i++)
		if (upool_stat(-1, i, &s->stat[i]))
			return -EIO;
	s->mem_total = upool_meminfo("MemTotal");
	return s->mem_total < 0 ? -EIO : 0;
}

static void snap_diag(const char *what, const struct mh_snap *s)
{
	tap_diag("%s: unmapped_bytes %llu, free_bytes %llu, conversions %llu, restorations %llu, released_bytes %llu, MemTotal %lld kB",
		 what, s->stat[UPOOL_UNMAPPED_BYTES], s->stat[UPOOL_FREE_BYTES],
		 s->stat[UPOOL_CONVERSIONS], s->stat[UPOOL_RESTORATIONS],
		 s->stat[UPOOL_RELEASED_BYTES], s->mem_total / 1024);
}

/*
 * Free what per-CPU LRU batches still hold: a secretmem folio freed by
 * its file stays on a CPU's lru_add batch, referenced, until the batch is
 * drained, and offline_pages() drains every CPU's (lru_add_drain_all()),
 * which would move free_bytes in the middle of a round (15 pages seen).
 * Writing 1 to drop_caches does the same drain first; the guest has no
 * page cache worth keeping.
 */
static void lru_drain(void)
{
	if (upool_write_str("/proc/sys/vm/drop_caches", "1"))
		tap_diag("drop_caches: cannot drain the LRU batches");
}

/* The zone's counter in /proc/zoneinfo, after folding per-CPU deltas. */
static long long zone_counter(const char *zone, const char *key)
{
	char line[256], name[32];
	long long val = -1;
	bool in = false;
	FILE *f;

	upool_stat_refresh();
	f = fopen("/proc/zoneinfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Node ", 5)) {
			in = sscanf(line, "Node %*d, zone %31s", name) == 1 &&
			     !strcmp(name, zone);
			continue;
		}
		if (in && sscanf(line, " %31s %lld", name, &val) == 2 &&
		    !strcmp(name, key))
			break;
		val = -1;
	}
	fclose(f);
	return val;
}

/* --- memory blocks -------------------------------------------------------- */

static int read_sysfs(const char *path, char *buf, size_t len)
{
	int n = upool_read_file(path, buf, len);

	if (n < 0)
		return n;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

/* Write @state to memoryN/state: 0 or a negative errno. */
static int block_set(struct mblock *b, const char *state, double *secs)
{
	char path[128];
	double t0 = upool_now();
	int err;

	snprintf(path, sizeof(path), MEM_ROOT "/memory%d/state", b->id);
	err = upool_write_str(path, state);
	if (secs)
		*secs = upool_now() - t0;
	if (!err)
		b->online = strcmp(state, "offline");
	return err;
}

static int cmp_blk(const void *a, const void *b)
{
	return ((const struct mblock *)a)->id - ((const struct mblock *)b)->id;
}

/* secmem.dimm=SIZE from the kernel command line, in bytes; 0 if absent. */
static uint64_t cmdline_dimm(void)
{
	unsigned long long v;
	char val[32], unit = 0;

	if (!procfs_cmdline_get("secmem.dimm", val, sizeof(val)) ||
	    sscanf(val, "%llu%c", &v, &unit) < 1)
		return 0;
	if (unit == 'G' || unit == 'g')
		return v << 30;
	if (unit == 'M' || unit == 'm')
		return v << 20;
	return v << 20;
}

/* The blocks offline now: the DIMM's, since all boot memory is online. */
static int find_dimm(void)
{
	char path[300], buf[64];
	struct dirent *de;
	DIR *d;

	if (read_sysfs(MEM_ROOT "/block_size_bytes", buf, sizeof(buf)) < 0)
		return -ENOENT;
	block_bytes = strtoull(buf, NULL, 16);
	if (!block_bytes || block_bytes % UPOOL_PAGE)
		return -EPROTO;
	block_pages = block_bytes / UPOOL_PAGE;
	d = opendir(MEM_ROOT);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		struct mblock b = { 0 };
		char *end;

		if (strncmp(de->d_name, "memory", 6))
			continue;
		b.id = strtol(de->d_name + 6, &end, 10);
		if (end == de->d_name + 6 || *end)
			continue;
		snprintf(path, sizeof(path), MEM_ROOT "/%s/state", de->d_name);
		if (read_sysfs(path, buf, sizeof(buf)) < 0 || strcmp(buf, "offline"))
			continue;
		snprintf(path, sizeof(path), MEM_ROOT "/%s/phys_index", de->d_name);
		if (read_sysfs(path, buf, sizeof(buf)) < 0)
			continue;
		b.pfn = strtoull(buf, NULL, 16) * block_pages;
		if (nr_blk == MH_MAX_BLOCKS) {
			closedir(d);
			return -E2BIG;
		}
		blk[nr_blk++] = b;
	}
	closedir(d);
	qsort(blk, nr_blk, sizeof(blk[0]), cmp_blk);
	return 0;
}

/*
 * The page the kernel named when it last refused to isolate a pageblock:
 * offline_pages() asks for REPORT_FAILURE, and set_migratetype_isolate()
 * then dump_page()s the unmovable page ("page dumped because: unmovable
 * page"). Returns when the last such report was logged, in microseconds
 * of the log's clock (0: none in the log; -1: the log cannot be read),
 * which a later report exceeds: not a count, which stays the same when
 * a new report pushes an old one out of the ring buffer. The last one's
 * pfn goes to @pfn and its page_type (slab, ...) or mapping to @what.
 */
static long long unmovable_reports(uint64_t *pfn, char *what, size_t len)
{
	static const char tag[] = "page dumped because: unmovable page";
	int size = klogctl(10, NULL, 0);
	char *buf, *p, *last = NULL, *line, *t;
	long long when = 0;
	int got;

	if (size <= 0)
		return -1;
	buf = malloc(size + 1);
	if (!buf)
		return -1;
	got = klogctl(3, buf, size);
	if (got < 0) {
		free(buf);
		return -1;
	}
	buf[got] = '\0';
	for (p = buf; (p = strstr(p, tag)); p += sizeof(tag) - 1)
		last = p;
	if (last) {
		/* "<4>[  528.394237] page dumped because: ..." */
		double secs;

		for (t = last; t > buf && t[-1] != '\n'; t--)
			;
		t = strchr(t, '[');
		when = t && t < last && sscanf(t + 1, "%lf", &secs) == 1 ?
			       (long long)(secs * 1e6) + 1 : 1;
	}
	if (last && pfn) {
		*last = '\0';
		/* The dump starts with "page: refcount:... pfn:0x...". */
		line = NULL;
		for (p = buf; (p = strstr(p, "page: refcount:")); p++)
			line = p;
		*pfn = 0;
		if (line && (t = strstr(line, " pfn:0x")))
			*pfn = strtoull(t + 7, NULL, 16);
		snprintf(what, len, "%s", "in use");
		if (line && (t = strstr(line, "page_type: ")))
			snprintf(what, len, "%.*s", (int)strcspn(t, "\n"), t);
		else if (line && (t = strstr(line, "mapping:")))
			snprintf(what, len, "%.*s", (int)strcspn(t, " \n"), t);
	}
	free(buf);
	return when;
}

/* --- the steps ------------------------------------------------------------ */

static struct mh_snap start;
static unsigned int remapped_by_offline, offlined, busy_refused, refused_for_a;
static unsigned int refused_for_kernel;
static uint64_t b_pages_offlined;

/* How many of the @n pfns of @set lie in block @b. */
static unsigned int pfns_in_block(const uint64_t *set, unsigned int n,
				  const struct mblock *b)
{
	unsigned int k, c = 0;

	for (k = 0; k < n; k++)
		c += set[k] >= b->pfn && set[k] < b->pfn + block_pages;
	return c;
}

/*
 * Offline @b and judge it: a block holding a page of A (while A is open)
 * must be refused; any refusal must be -EBUSY for a page in use that the
 * kernel names, never a free unmapped page (one of B's, or of A once
 * closed); the pool's counters must balance. @round only names the
 * attempt. Returns false on a broken promise.
 */
static bool offline_checked(struct mblock *b, int round)
{
	unsigned int a_here = a_held ? pfns_in_block(a_pfn, nr_a_pfn, b) : 0;
	unsigned int b_here = pfns_in_block(b_pfn, nr_b_pfn, b);
	long long d_unm, d_free, d_rest, d_rel, d_conv;
	long long reports0, reports1 = 0;
	char what[96] = "", reason[160] = "";
	struct mh_snap s0, s1;
	uint64_t pfn = 0;
	double secs;
	bool ok = true;
	int err;

	reports0 = unmovable_reports(NULL, NULL, 0);
	lru_drain();
	if (snap(&s0))
		return false;
	err = block_set(b, "offline", &secs);
	if (snap(&s1))
		return false;
	if (err)
		reports1 = unmovable_reports(&pfn, what, sizeof(what));
	if (err && reports1 > reports0)
		snprintf(reason, sizeof(reason), " for pfn %#" PRIx64 " (%s%s)", pfn,
			 pfn_in(a_pfn, nr_a_pfn, pfn) ? (a_held ? "secret A's, " :
							 "secret A's, closed, ") :
			 pfn_in(b_pfn, nr_b_pfn, pfn) ? "secret B's, free, " : "", what);
	d_unm = s1.stat[UPOOL_UNMAPPED_BYTES] - s0.stat[UPOOL_UNMAPPED_BYTES];
	d_free = s1.stat[UPOOL_FREE_BYTES] - s0.stat[UPOOL_FREE_BYTES];
	d_rest = s1.stat[UPOOL_RESTORATIONS] - s0.stat[UPOOL_RESTORATIONS];
	d_rel = s1.stat[UPOOL_RELEASED_BYTES] - s0.stat[UPOOL_RELEASED_BYTES];
	d_conv = s1.stat[UPOOL_CONVERSIONS] - s0.stat[UPOOL_CONVERSIONS];
	tap_diag("round %d memory%d (pfn %#" PRIx64 ", %u of A's pages, %u of B's): %s%s in %.2f s; %lld pageblocks mapped again, unmapped_bytes %+lld, free_bytes %+lld, MemTotal %+lld kB",
		 round, b->id, b->pfn, a_here, b_here, err ? upool_errname(-err) : "offlined",
		 reason, secs, d_rest, d_unm, d_free, (s1.mem_total - s0.mem_total) / 1024);

	/* Whatever happened, the pool's books balance and nothing converted. */
	if (d_unm != d_free || d_unm != -d_rest * (long long)upool.pageblock ||
	    d_conv) {
		tap_diag("round %d memory%d: counters moved inconsistently: unmapped_bytes %+lld, free_bytes %+lld, restorations %+lld, conversions %+lld",
			 round, b->id, d_unm, d_free, d_rest, d_conv);
		ok = false;
	}
	if (!err) {
		if (a_here) {
			tap_diag("round %d memory%d: offlined with %u pages of secret A in use in it",
				 round, b->id, a_here);
			ok = false;
		}
		if (s0.mem_total - s1.mem_total != (long long)block_bytes) {
			tap_diag("round %d memory%d: offlined, but MemTotal went down by %lld bytes, not %" PRIu64,
				 round, b->id, s0.mem_total - s1.mem_total, block_bytes);
			ok = false;
		}
		offlined++;
		remapped_by_offline += d_rest - d_rel / (long long)upool.pageblock;
		b_pages_offlined += b_here;
		return ok;
	}
	if (err != -EBUSY) {
		tap_diag("round %d memory%d: offline failed with %s, neither success nor EBUSY",
			 round, b->id, upool_errname(-err));
		return false;
	}
	busy_refused += !!a_here;
	if (d_rest || s1.mem_total != s0.mem_total) {
		tap_diag("round %d memory%d: refused, but %lld pageblocks were mapped again or MemTotal moved",
			 round, b->id, d_rest);
		ok = false;
	}
	if (reports1 <= reports0) {
		tap_diag("round %d memory%d: refused, and the kernel named no unmovable page",
			 round, b->id);
		ok = false;
	} else if (a_held && pfn_in(a_pfn, nr_a_pfn, pfn)) {
		refused_for_a++;
	} else if (pfn_in(a_pfn, nr_a_pfn, pfn) || pfn_in(b_pfn, nr_b_pfn, pfn)) {
		tap_diag("round %d memory%d: refused for a free unmapped page", round, b->id);
		ok = false;
	} else {
		refused_for_kernel++;
	}
	return ok;
}

/* Step 1: the DIMM's blocks online as ZONE_NORMAL. */
static enum tap_result step_online(void)
{
	char buf[128], path[128];
	int i, err;

	for (i = 0; i < nr_blk; i++) {
		snprintf(path, sizeof(path), MEM_ROOT "/memory%d/valid_zones", blk[i].id);
		if (read_sysfs(path, buf, sizeof(buf)) < 0 || !strstr(buf, "Normal")) {
			tap_diag("memory%d: valid_zones \"%s\" has no Normal", blk[i].id, buf);
			return TAP_FAIL;
		}
		err = block_set(&blk[i], "online_kernel", NULL);
		if (err) {
			tap_diag("memory%d: online_kernel: %s", blk[i].id, upool_errname(-err));
			return TAP_FAIL;
		}
		if (read_sysfs(path, buf, sizeof(buf)) < 0 || strcmp(buf, "Normal")) {
			tap_diag("memory%d: online, valid_zones \"%s\", not Normal", blk[i].id, buf);
			return TAP_FAIL;
		}
	}
	tap_diag("%d blocks of %" PRIu64 " MiB online in ZONE_NORMAL, MemTotal %lld kB",
		 nr_blk, block_bytes / MH_MIB, upool_meminfo("MemTotal") / 1024);
	return TAP_PASS;
}

/* Fill the pool to @bytes and wait; then freeze it. */
static int fill_pool(u64_t bytes, double *secs)
{
	double t0 = upool_now();
	u64_t last = 0;
	int err;

	err = upool_set(0, bytes, 0, bytes + MH_POOL_SLACK);
	if (!err)
		err = upool_wait_free(0, bytes, bytes + MH_POOL_SLACK, MH_FILL_TIMEOUT, &last);
	*secs = upool_now() - t0;
	if (err) {
		tap_diag("pool fill to %llu MiB: %s, free_bytes %llu", bytes / UPOOL_MiB,
			 upool_errname(-err), last);
		return err;
	}
	/* Frozen: no conversion below 0, no release below the high mark. */
	return upool_knob_set(0, UPOOL_TARGET, 0);
}

/* Step 2: pool and secrets on the DIMM. */
static enum tap_result step_fill(void)
{
	u64_t target = dimm_bytes - MH_POOL_LEAVE;
	long long normal;
	unsigned int i, a_on = 0, b_on = 0;
	uint64_t *shared;
	u64_t b_bytes;
	double secs;
	pid_t pid;
	int status;

	if (fill_pool(target, &secs))
		return TAP_FAIL;
	normal = zone_counter("Normal", "nr_unmapped");
	tap_diag("pool filled to %llu MiB in %.1f s; ZONE_NORMAL (the DIMM) nr_unmapped %lld pages (%lld MiB), nr_free_unmapped %lld",
		 target / UPOOL_MiB, secs, normal, normal * (long long)UPOOL_PAGE / (long long)UPOOL_MiB,
		 zone_counter("Normal", "nr_free_unmapped"));
	if (normal < (long long)MH_PAGES(target / 2)) {
		tap_diag("less than half of the pool is on the DIMM");
		return TAP_FAIL;
	}

	/* A: held by this process for round 1. */
	if (upool_alloc(&a_buf, MH_A_BYTES, UPOOL_MFD_MMAP))
		return TAP_FAIL;
	a_held = true;
	for (i = 0; i < MH_PAGES(MH_A_BYTES); i++) {
		volatile unsigned char *p = (unsigned char *)a_buf.addr + i * UPOOL_PAGE;
		unsigned int j;

		put_mark(p, 0);
		for (j = MH_MARK; j < UPOOL_PAGE; j++)
			p[j] = a_byte(i, j);
	}
	if (pagemap_pfns(a_buf.addr, MH_A_BYTES, a_pfn)) {
		tap_diag("cannot read A's pfns from /proc/self/pagemap");
		return TAP_FAIL;
	}
	nr_a_pfn = MH_PAGES(MH_A_BYTES);
	qsort(a_pfn, nr_a_pfn, sizeof(a_pfn[0]), cmp_u64);
	for (i = 0; i < nr_a_pfn; i++) {
		if (!a_pfn[i]) {
			tap_diag("A's page %u has no pfn in pagemap", i);
			return TAP_FAIL;
		}
		a_on += on_dimm(a_pfn[i]);
	}

	/*
	 * B: the rest of the pool, written by a child that exits with the
	 * file open, so that every unmapped pageblock offlining meets holds
	 * B's marker in its free pages.
	 */
	if (upool_stat(0, UPOOL_FREE_BYTES, &b_bytes) || b_bytes < 32 * UPOOL_MiB)
		return TAP_FAIL;
	b_bytes = (b_bytes - 16 * UPOOL_MiB) / UPOOL_MiB * UPOOL_MiB;
	nr_b_pfn = MH_PAGES(b_bytes);
	shared = mmap(NULL, nr_b_pfn * sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return TAP_FAIL;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return TAP_FAIL;
	if (!pid) {
		struct upool_buf b;

		if (upool_alloc(&b, b_bytes, UPOOL_MFD_MMAP))
			_exit(1);
		for (i = 0; i < nr_b_pfn; i++)
			put_mark((unsigned char *)b.addr + i * UPOOL_PAGE, 1);
		if (pagemap_pfns(b.addr, b_bytes, shared))
			_exit(1);
		/* The last close comes after exit_mm(): nothing zeroes. */
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		tap_diag("the child writing B failed");
		return TAP_FAIL;
	}
	lru_drain();
	b_pfn = shared;
	qsort(b_pfn, nr_b_pfn, sizeof(b_pfn[0]), cmp_u64);
	for (i = 0; i < nr_b_pfn; i++)
		b_on += b_pfn[i] && on_dimm(b_pfn[i]);
	tap_diag("secret A: %u of %u pages on the DIMM; secret B (freed unzeroed): %u of %u (%llu MiB)",
		 a_on, nr_a_pfn, b_on, nr_b_pfn, b_bytes / UPOOL_MiB);
	if (!a_on || !b_on) {
		tap_diag("the secrets must have pages on the DIMM");
		return TAP_FAIL;
	}
	return TAP_PASS;
}

/* Offline every online DIMM block, highest first. */
static bool offline_round(int round)
{
	bool ok = true;
	int i;

	for (i = nr_blk - 1; i >= 0; i--)
		if (blk[i].online)
			ok &= offline_checked(&blk[i], round);
	return ok;
}

/*
 * Search the DIMM's online blocks in /proc/kcore for the markers; returns
 * a mask of markers found (bit 0: A, bit 1: B), or -1.
 */
static int scan_dimm(uint64_t *scanned)
{
	struct kcore_needle nd[2];
	struct kcore kc;
	unsigned char *buf;
	size_t chunk = UPOOL_MiB;
	uint64_t off;
	int i, m, ret = 0;

	*scanned = 0;
	for (m = 0; m < 2; m++)
		nd[m] = (struct kcore_needle){ .bytes = mark_inv[m], .len = MH_MARK,
					       .xor = 0xff };
	if (kcore_open(&kc)) {
		tap_diag("cannot open /proc/kcore");
		return -1;
	}
	buf = malloc(chunk);
	for (i = 0; buf && i < nr_blk; i++) {
		if (!blk[i].online)
			continue;
		for (off = 0; off < block_bytes; off += chunk) {
			uint64_t pa = blk[i].pfn * UPOOL_PAGE + off;

			if (kcore_read_phys(&kc, pa, buf, chunk)) {
				tap_diag("memory%d: cannot read %#" PRIx64 " through /proc/kcore",
					 blk[i].id, pa);
				ret = -1;
				goto out;
			}
			kcore_search_mem(buf, chunk, nd, 2, pa);
			*scanned += chunk;
		}
	}
	for (m = 0; m < 2; m++) {
		if (nd[m].found) {
			tap_diag("marker of secret %c found at physical %#" PRIx64,
				 'A' + m, nd[m].paddr);
			ret |= 1 << m;
		}
	}
out:
	free(buf);
	kcore_close(&kc);
	return buf ? ret : -1;
}

/* A plain memfd page with the control marker reads back through kcore. */
static bool control_found(void)
{
	struct kcore kc;
	unsigned char buf[MH_MARK];
	uint64_t pfn = 0;
	bool found = false;
	void *p;
	int fd;

	fd = memfd_create("control", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, UPOOL_PAGE))
		return false;
	p = mmap(NULL, UPOOL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto out_fd;
	put_mark(p, 2);
	if (!pagemap_pfns(p, UPOOL_PAGE, &pfn) && pfn && !kcore_open(&kc)) {
		found = !kcore_read_phys(&kc, pfn * UPOOL_PAGE, buf, sizeof(buf)) &&
			is_mark(buf, 2);
		kcore_close(&kc);
	}
	tap_diag("control marker in a plain memfd at pfn %#" PRIx64 " (%s): %s in /proc/kcore",
		 pfn, on_dimm(pfn) ? "on the DIMM" : "boot memory", found ? "found" : "NOT found");
	munmap(p, UPOOL_PAGE);
out_fd:
	close(fd);
	return found;
}

/* A reads back, every byte, through the mapping and through read(). */
static bool a_intact(void)
{
	static unsigned char page[UPOOL_PAGE];
	unsigned int i, j, bad = 0;

	for (i = 0; i < MH_PAGES(MH_A_BYTES); i++) {
		const volatile unsigned char *p = (unsigned char *)a_buf.addr + i * UPOOL_PAGE;
		bool good = is_mark(p, 0);

		for (j = MH_MARK; good && j < UPOOL_PAGE; j++)
			good = p[j] == a_byte(i, j);
		if (good && pread(a_buf.fd, page, UPOOL_PAGE, i * UPOOL_PAGE) == UPOOL_PAGE) {
			good = is_mark(page, 0);
			for (j = MH_MARK; good && j < UPOOL_PAGE; j++)
				good = page[j] == a_byte(i, j);
		} else {
			good = false;
		}
		bad += !good;
	}
	memset(page, 0, sizeof(page));
	if (bad)
		tap_diag("secret A: %u of %u pages differ from what was written", bad,
			 (unsigned int)MH_PAGES(MH_A_BYTES));
	return !bad;
}

static enum tap_result step_secret(void)
{
	uint64_t scanned;
	double t0 = upool_now();
	int found;
	bool ok = a_intact();

	found = scan_dimm(&scanned);
	tap_diag("secret A %s; /proc/kcore: %" PRIu64 " MiB of the DIMM's online memory in %.1f s, %s",
		 ok ? "intact" : "CORRUPT", scanned / MH_MIB, upool_now() - t0,
		 found < 0 ? "scan failed" : found ? "a marker FOUND" : "no marker");
	ok &= found == 0;
	ok &= control_found();
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result step_reonline(void)
{
	uint64_t scanned;
	double t0, secs, total = 0;
	int i, err, found;

	for (i = 0; i < nr_blk; i++) {
		if (blk[i].online)
			continue;
		err = block_set(&blk[i], "online_kernel", &secs);
		total += secs;
		if (err) {
			tap_diag("memory%d: online again: %s", blk[i].id, upool_errname(-err));
			return TAP_FAIL;
		}
	}
	t0 = upool_now();
	found = scan_dimm(&scanned);
	tap_diag("DIMM online again in %.1f s; /proc/kcore: %" PRIu64 " MiB of it in %.1f s, %s",
		 total, scanned / MH_MIB, upool_now() - t0,
		 found < 0 ? "scan failed" : found ? "a marker FOUND" : "no marker");
	if (scanned != (uint64_t)nr_blk * block_bytes) {
		tap_diag("scanned %" PRIu64 " bytes, not the whole DIMM", scanned);
		return TAP_FAIL;
	}
	return found == 0 && control_found() ? TAP_PASS : TAP_FAIL;
}

/* Step 7: the DIMM holds unmapped memory again, which works. */
static enum tap_result step_reuse(void)
{
	static unsigned char page[UPOOL_PAGE];
	uint64_t pfn[MH_PAGES(MH_C_BYTES)];
	long long normal0, normal;
	struct upool_buf c;
	unsigned int i, on = 0, bad = 0;
	u64_t free0;
	double secs;

	/* 64 MiB more than what the blocks that stayed online still hold. */
	normal0 = zone_counter("Normal", "nr_unmapped");
	if (upool_stat(0, UPOOL_FREE_BYTES, &free0) ||
	    fill_pool(free0 / upool.pageblock * upool.pageblock + 64 * UPOOL_MiB, &secs))
		return TAP_FAIL;
	normal = zone_counter("Normal", "nr_unmapped");
	if (upool_alloc(&c, MH_C_BYTES, UPOOL_MFD_MMAP))
		return TAP_FAIL;
	for (i = 0; i < MH_PAGES(MH_C_BYTES); i++)
		memset((char *)c.addr + i * UPOOL_PAGE, 0x5a ^ i, UPOOL_PAGE);
	if (pagemap_pfns(c.addr, MH_C_BYTES, pfn))
		bad++;
	for (i = 0; i < MH_PAGES(MH_C_BYTES); i++) {
		on += on_dimm(pfn[i]);
		if (pread(c.fd, page, UPOOL_PAGE, i * UPOOL_PAGE) != UPOOL_PAGE ||
		    page[0] != (unsigned char)(0x5a ^ i) ||
		    memcmp(page, page + 1, UPOOL_PAGE - 1))
			bad++;
	}
	upool_free(&c);
	tap_diag("pool grown by 64 MiB in %.1f s, ZONE_NORMAL nr_unmapped %lld pages, was %lld; a 1 MiB MFD_UNMAPPED file: %u of %u pages on the DIMM, %u bad",
		 secs, normal, normal0, on, (unsigned int)MH_PAGES(MH_C_BYTES), bad);
	return normal > normal0 && on && !bad ? TAP_PASS : TAP_FAIL;
}

/* Step 8: empty pool, consistent books, DIMM offline as found. */
static enum tap_result step_end(void)
{
	struct mh_snap end;
	int i, err, left_online = 0;
	bool ok = true;
	long long vm, alloc_convert0, block_unmap0;

	if (upool_reset() || upool_wait_empty(60)) {
		tap_diag("the pool did not empty");
		ok = false;
	}
	/* Who converts once the pool is empty (docs/RELIABILITY.md). */
	alloc_convert0 = upool_vmstat("unmapped_alloc_convert");
	block_unmap0 = upool_vmstat("unmapped_block_unmap");
	for (i = nr_blk - 1; i >= 0; i--) {
		long long reports0, reports1 = 0;
		long long unmapped = -1;
		char what[96] = "";
		uint64_t pfn = 0;

		if (!blk[i].online)
			continue;
		reports0 = unmovable_reports(NULL, NULL, 0);
		err = block_set(&blk[i], "offline", NULL);
		if (!err)
			continue;
		if (err == -EBUSY) {
			reports1 = unmovable_reports(&pfn, what, sizeof(what));
			unmapped = zone_counter("Normal", "nr_unmapped");
		}
		/*
		 * Slab or page tables the kernel put there since the DIMM
		 * came back: not ours to judge. A and B are long gone (their
		 * pfns may well be the kernel's now): the refusal is the
		 * kernel's when the page it named is typed (slab, page
		 * table: no unmapped page is) or when no unmapped page is
		 * left on the DIMM at all.
		 */
		if (err == -EBUSY && reports1 > reports0 &&
		    (!unmapped || !strncmp(what, "page_type: ", strlen("page_type: ")))) {
			tap_diag("memory%d stays online: pfn %#" PRIx64 " in use (%s)",
				 blk[i].id, pfn, what);
			left_online++;
			continue;
		}
		tap_diag("memory%d: cannot offline at the end: %s (%s%s, ZONE_NORMAL nr_unmapped %lld)",
			 blk[i].id, upool_errname(-err),
			 reports1 > reports0 ? "reported: " : "no page reported",
			 reports1 > reports0 ? what : "", unmapped);
		ok = false;
	}
	if (snap(&end))
		return TAP_FAIL;
	snap_diag("end", &end);
	tap_diag("since the pool emptied: %lld pageblocks converted, %lld of them for an allocation (unmapped_alloc_convert)",
		 upool_vmstat("unmapped_block_unmap") - block_unmap0,
		 upool_vmstat("unmapped_alloc_convert") - alloc_convert0);
	upool_stat_refresh();
	vm = upool_vmstat("nr_unmapped");
	if ((long long)(end.stat[UPOOL_UNMAPPED_BYTES] -
			(end.stat[UPOOL_CONVERSIONS] - end.stat[UPOOL_RESTORATIONS]) *
			upool.pageblock) !=
	    (long long)(start.stat[UPOOL_UNMAPPED_BYTES] -
			(start.stat[UPOOL_CONVERSIONS] - start.stat[UPOOL_RESTORATIONS]) *
			upool.pageblock)) {
		tap_diag("unmapped_bytes less (conversions - restorations) pageblocks changed");
		ok = false;
	}
	if (vm < 0 || (u64_t)vm * UPOOL_PAGE != end.stat[UPOOL_UNMAPPED_BYTES]) {
		tap_diag("/proc/vmstat nr_unmapped %lld pages, unmapped_bytes %llu", vm,
			 end.stat[UPOOL_UNMAPPED_BYTES]);
		ok = false;
	}
	if (end.stat[UPOOL_FREE_BYTES] > end.stat[UPOOL_UNMAPPED_BYTES]) {
		tap_diag("free_bytes above unmapped_bytes");
		ok = false;
	}
	if (end.mem_total != start.mem_total + left_online * (long long)block_bytes) {
		tap_diag("MemTotal %lld kB at the end, %lld kB at the start, %d blocks left online",
			 end.mem_total / 1024, start.mem_total / 1024, left_online);
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

int main(void)
{
	enum tap_result r;
	uint64_t expect;
	bool ok1, ok2;
	int err;

	upool_init_or_skip(true);
	expect = cmdline_dimm();
	err = find_dimm();
	if (err == -ENOENT && !expect)
		tap_skip_all("no memory hotplug (%s)", MEM_ROOT);
	if (err)
		tap_bail("memory blocks: %s", upool_errname(-err));
	if (!expect)
		tap_skip_all("no DIMM (run-vm.sh VM_DIMM=512M puts one in and says so with secmem.dimm=)");
	dimm_bytes = nr_blk * block_bytes;
	tap_plan(MH_NR_RESULTS);
	tap_diag("secmem.dimm says %" PRIu64 " MiB; %d offline memory blocks of %" PRIu64 " MiB, memory%d to memory%d",
		 expect / MH_MIB, nr_blk, block_bytes / MH_MIB,
		 nr_blk ? blk[0].id : -1, nr_blk ? blk[nr_blk - 1].id : -1);
	if (!nr_blk || dimm_bytes != expect || dimm_bytes < 2 * MH_POOL_LEAVE)
		tap_bail("the DIMM's %" PRIu64 " MiB are not offline memory blocks here",
			 expect / MH_MIB);
	if (getrandom(mark_inv, sizeof(mark_inv), 0) != sizeof(mark_inv) ||
	    getrandom(&a_seed, sizeof(a_seed), 0) != sizeof(a_seed))
		tap_bail("getrandom: %m");
	upool_install_restore();
	if (snap(&start))
		tap_bail("cannot read the pool's statistics");
	snap_diag("start", &start);

	r = step_online();
	tap_report(r, "the DIMM's memory blocks go online in ZONE_NORMAL", NULL);
	if (r != TAP_PASS)
		tap_bail("cannot go on without the DIMM online");
	r = step_fill();
	tap_report(r, "pool and secrets on the DIMM", NULL);
	if (r != TAP_PASS)
		tap_bail("cannot go on without unmapped memory on the DIMM");

	ok1 = offline_round(1);
	tap_diag("round 1: %u blocks with secret A refused, %u of them naming an A page; %u refusals for other kernel pages; %u blocks offlined, %u pageblocks mapped again by offlining",
		 busy_refused, refused_for_a, refused_for_kernel, offlined, remapped_by_offline);
	tap_report(ok1 && busy_refused && refused_for_a ? TAP_PASS : TAP_FAIL,
		   "a block with unmapped pages in use is refused with EBUSY, unchanged", NULL);
	tap_report(step_secret(), "secret A intact and not in /proc/kcore after the refusals", NULL);

	upool_free(&a_buf);
	a_held = false;
	ok2 = offline_round(2);
	tap_diag("after round 2: %u blocks offlined, %u pageblocks mapped again by offlining, %" PRIu64 " of B's %u pages went offline; %u refusals for kernel pages",
		 offlined, remapped_by_offline, b_pages_offlined, nr_b_pfn, refused_for_kernel);
	tap_report(ok1 && ok2 && offlined && remapped_by_offline && b_pages_offlined ?
		   TAP_PASS : TAP_FAIL,
		   "blocks of free unmapped pageblocks go offline, given back to the direct map", NULL);
	tap_report(step_reonline(), "online again: no secret in the DIMM's memory", NULL);
	tap_report(step_reuse(), "the DIMM serves unmapped memory again", NULL);
	tap_report(step_end(), "pool empty, counters consistent, DIMM offline again", NULL);
	return tap_finish();
}
