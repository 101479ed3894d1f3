// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysfs I/O for the unmapped pools.  Values are written as plain decimal
 * bytes (the kernel also accepts K/M/G suffixes, for people) and read back
 * as plain decimal bytes, rounded by the kernel to whole pageblocks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"
#include "units.h"

#define NODE_DIR "%s/devices/system/node"
#define UNMAPPED_NODE NODE_DIR "/node%d/unmapped"
#define UNMAPPED_GLOBAL "%s/kernel/mm/unmapped"

const char *const sysfs_knob_names[KNOB_COUNT] = {
	[KNOB_POOL_TARGET] = "pool_target",
	[KNOB_WATERMARK_LOW] = "watermark_low",
	[KNOB_WATERMARK_HIGH] = "watermark_high",
};

const char *const sysfs_stat_names[STAT_COUNT] = {
	[STAT_UNMAPPED_BYTES] = "unmapped_bytes",
	[STAT_FREE_BYTES] = "free_bytes",
	[STAT_ALLOC_POOL] = "alloc_pool",
	[STAT_ALLOC_CONVERT] = "alloc_convert",
	[STAT_ALLOC_FAIL] = "alloc_fail",
	[STAT_CONVERSIONS] = "conversions",
	[STAT_RESTORATIONS] = "restorations",
	[STAT_TLB_FLUSH_CONVERT] = "tlb_flush_convert",
	[STAT_TLB_FLUSH_MERMAP] = "tlb_flush_mermap",
	[STAT_RELEASED_BYTES] = "released_bytes",
};

/* Read a small attribute, without its trailing newline. */
static int read_attr(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	close(fd);
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static int read_u64(const char *path, uint64_t *v)
{
	char buf[32];
	int r;

	r = read_attr(path, buf, sizeof(buf));
	if (r)
		return r;
	/* Anything but a number means this is not the ABI we know. */
	return parse_uint(buf, UINT64_MAX, v) ? -EPROTO : 0;
}

static int write_attr(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, r = 0;

	/* O_TRUNC matters only for the fake trees of the tests. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}

int sysfs_nodes(const char *root, bool present[CONFIG_MAX_NODES],
		int *ignored)
{
	char path[4096];
	struct dirent *de;
	DIR *d;

	memset(present, 0, CONFIG_MAX_NODES * sizeof(*present));
	*ignored = 0;
	snprintf(path, sizeof(path), UNMAPPED_GLOBAL, root);
	if (access(path, F_OK))
		return -errno;
	snprintf(path, sizeof(path), NODE_DIR, root);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char sub[4096];
		uint64_t n;

		if (strncmp(de->d_name, "node", 4) ||
		    parse_uint(de->d_name + 4, INT32_MAX, &n))
			continue;
		snprintf(sub, sizeof(sub), UNMAPPED_NODE, root, (int)n);
		if (access(sub, F_OK))
			continue;
		if (n >= CONFIG_MAX_NODES)
			(*ignored)++;
		else
			present[n] = true;
	}
	closedir(d);
	return 0;
}

static int read_stats(const char *dir, uint64_t stat[STAT_COUNT])
{
	char path[4096];
	int i, r;

	for (i = 0; i < STAT_COUNT; i++) {
		snprintf(path, sizeof(path), "%s/stats/%s", dir,
			 sysfs_stat_names[i]);
		r = read_u64(path, &stat[i]);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The global policies read either as the bare word or, in the style of
 * transparent_hugepage/enabled, as "[immediate] deferred": the bracketed
 * word is the current one.  Copies it into @word.
 */
static int attr_word(const char *buf, char *word, size_t len)
{
	const char *open = strchr(buf, '[');
	size_t n;

	if (open) {
		const char *close = strchr(open, ']');

		n = close ? (size_t)(close - open - 1) : len;
		buf = open + 1;
	} else {
		n = strlen(buf);
	}
	if (n >= len)
		return -EPROTO;
	memcpy(word, buf, n);
	word[n] = '\0';
	return 0;
}

static int parse_flush_attr(const char *buf, enum flush_policy *f)
{
	char word[16];

	if (attr_word(buf, word, sizeof(word)))
		return -EPROTO;
	return flush_policy_parse(word, f) ? -EPROTO : 0;
}

/* "[refuse] wipe", "refuse [wipe]" or the bare word. */
static int parse_hibernation_attr(const char *buf,
				  enum hibernation_policy *h)
{
	char word[16];

	if (attr_word(buf, word, sizeof(word)))
		return -EPROTO;
	return hibernation_policy_parse(word, h) ? -EPROTO : 0;
}

/*
 * The hibernation knob and its counter.  A kernel without them (stock, or
 * patched before the knob) refuses to hibernate while secret files exist:
 * reported as absent, with the policy it has, not as an error.
 */
static int read_hibernation(const char *dir, struct sysfs_global *g)
{
	char path[4096], buf[64];
	uint64_t v;
	int r;

	g->hibernation_present = false;
	g->hibernation = HIBERNATION_REFUSE;
	g->hibernation_wiped_files = -1;
	snprintf(path, sizeof(path), "%s/hibernation", dir);
	r = read_attr(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return 0;
	if (!r)
		r = parse_hibernation_attr(buf, &g->hibernation);
	if (r)
		return r;
	g->hibernation_present = true;
	snprintf(path, sizeof(path), "%s/hibernation_wiped_files", dir);
	r = read_u64(path, &v);
	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	g->hibernation_wiped_files = v > INT64_MAX ? INT64_MAX : (int64_t)v;
	return 0;
}

int sysfs_read_global(const char *root, struct sysfs_global *g)
{
	char dir[4000], path[4096], buf[64];
	int r;

	snprintf(dir, sizeof(dir), UNMAPPED_GLOBAL, root);
	snprintf(path, sizeof(path), "%s/flush_on_free", dir);
	r = read_attr(path, buf, sizeof(buf));
	if (!r)
		r = parse_flush_attr(buf, &g->flush_on_free);
	if (r)
		return r;
	r = read_hibernation(dir, g);
	if (r)
		return r;
	snprintf(path, sizeof(path), "%s/pageblock_bytes", dir);
	r = read_u64(path, &g->pageblock_bytes);
	if (r)
		return r;
	return read_stats(dir, g->stat);
}

int sysfs_read_node(const char *root, int node, struct sysfs_node *n)
{
	char dir[4000], path[4096];
	int i, r;

	snprintf(dir, sizeof(dir), UNMAPPED_NODE, root, node);
	for (i = 0; i < KNOB_COUNT; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir,
			 sysfs_knob_names[i]);
		r = read_u64(path, &n->knob[i]);
		if (r)
			return r;
	}
	return read_stats(dir, n->stat);
}

int sysfs_write_knob(const char *root, int node, enum sysfs_knob k,
		     uint64_t bytes)
{
	char path[4096], val[24];

	snprintf(path, sizeof(path), UNMAPPED_NODE "/%s", root, node,
		 sysfs_knob_names[k]);
	snprintf(val, sizeof(val), "%" PRIu64 "\n", bytes);
	return write_attr(path, val);
}

int sysfs_write_flush(const char *root, enum flush_policy f)
{
	char path[4096];

	snprintf(path, sizeof(path), UNMAPPED_GLOBAL "/flush_on_free", root);
	return write_attr(path, f == FLUSH_DEFERRED ? "deferred\n" :
						      "immediate\n");
}

int sysfs_write_hibernation(const char *root, enum hibernation_policy h)
{
	char path[4096];

	snprintf(path, sizeof(path), UNMAPPED_GLOBAL "/hibernation", root);
	return write_attr(path, h == HIBERNATION_WIPE ? "wipe\n" : "refuse\n");
}

int sysfs_set_node(const char *root, int node, uint64_t cur[KNOB_COUNT],
		   const uint64_t want[KNOB_COUNT], enum sysfs_knob *failed)
{
	/*
	 * Widen the watermarks, set the target (now inside them), then
	 * narrow them: each step keeps low <= target <= high.
	 */
	static const struct {
		enum sysfs_knob knob;
		int when;	/* +1: if growing, -1: if shrinking, 0: if changed */
	} steps[] = {
		{ KNOB_WATERMARK_HIGH, +1 }, { KNOB_WATERMARK_LOW, -1 },
		{ KNOB_POOL_TARGET, 0 },     { KNOB_WATERMARK_LOW, +1 },
		{ KNOB_WATERMARK_HIGH, -1 },
	};
	size_t i;
	int r;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		enum sysfs_knob k = steps[i].knob;

		if (want[k] == cur[k] ||
		    (steps[i].when > 0 && want[k] < cur[k]) ||
		    (steps[i].when < 0 && want[k] > cur[k]))
			continue;
		r = sysfs_write_knob(root, node, k, want[k]);
		if (r) {
			*failed = k;
			return r;
		}
		cur[k] = want[k];
	}
	return 0;
}
