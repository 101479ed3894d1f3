// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmemctl status / set.  Everything is read from sysfs each time: the
 * kernel is the single source of truth, the daemon only adds its list of
 * recent decisions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "ctl.h"
#include "json.h"
#include "protect.h"
#include "runtime.h"
#include "secrets.h"
#include "sysfs.h"
#include "units.h"

static void json_stats(FILE *out, const uint64_t stat[STAT_COUNT])
{
	int i;

	fputc('{', out);
	for (i = 0; i < STAT_COUNT; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "",
			sysfs_stat_names[i], stat[i]);
	fputc('}', out);
}

static const char *sz(uint64_t v, char *buf)
{
	return format_size(v, buf, SIZE_STR_MAX);
}

static void print_units(FILE *out, const struct protect_env *units)
{
	char uerr[512];

	if (!units)
		return;
	fprintf(out, "\nprotected units:\n");
	if (ctl_units(out, units, false, true, uerr, sizeof(uerr)))
		fprintf(out, "unknown: %s\n", uerr);
}

/* The kernel's hibernation policy: refuse, wipe, or absent (no knob). */
static const char *hibernation_state(const struct sysfs_global *g)
{
	return g->hibernation_present ?
		       hibernation_policy_name(g->hibernation) : "absent";
}

static void print_table(FILE *out, const struct sysfs_global *g,
			const bool *present, const struct sysfs_node *nodes,
			pid_t daemon, const struct history *h)
{
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX], c[SIZE_STR_MAX],
		d[SIZE_STR_MAX], e[SIZE_STR_MAX];
	unsigned int i;
	int n;

	fprintf(out, "flush_on_free: %s    pageblock: %s    secmemd: ",
		flush_policy_name(g->flush_on_free),
		sz(g->pageblock_bytes, a));
	if (daemon > 0)
		fprintf(out, "running (pid %ld)\n", (long)daemon);
	else if (daemon < 0)
		fprintf(out, "unknown (%s)\n", strerror(-daemon));
	else
		fprintf(out, "not running\n");
	fprintf(out, "hibernation: %s", hibernation_state(g));
	if (g->hibernation_wiped_files >= 0)
		fprintf(out, "    wiped_files: %" PRId64,
			g->hibernation_wiped_files);
	fprintf(out, "\n\n");

	fprintf(out, "%-5s %10s %10s %10s %10s %10s %12s %12s %8s\n", "NODE",
		"TARGET", "LOW", "HIGH", "FREE", "UNMAPPED", "FROM_POOL",
		"CONVERTED", "FAILED");
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		const struct sysfs_node *s = &nodes[n];

		if (!present[n])
			continue;
		fprintf(out,
			"%-5d %10s %10s %10s %10s %10s %12" PRIu64
			" %12" PRIu64 " %8" PRIu64 "\n",
			n, sz(s->knob[KNOB_POOL_TARGET], a),
			sz(s->knob[KNOB_WATERMARK_LOW], b),
			sz(s->knob[KNOB_WATERMARK_HIGH], c),
			sz(s->stat[STAT_FREE_BYTES], d),
			sz(s->stat[STAT_UNMAPPED_BYTES], e),
			s->stat[STAT_ALLOC_POOL], s->stat[STAT_ALLOC_CONVERT],
			s->stat[STAT_ALLOC_FAIL]);
	}
	fprintf(out, "\n%-5s %12s %12s %12s %12s %10s\n", "NODE",
		"CONVERSIONS", "RESTORATIONS", "TLB_CONVERT", "TLB_MERMAP",
		"RELEASED");
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		const struct sysfs_node *s = &nodes[n];

		if (!present[n])
			continue;
		fprintf(out,
			"%-5d %12" PRIu64 " %12" PRIu64 " %12" PRIu64
			" %12" PRIu64 " %10s\n",
			n, s->stat[STAT_CONVERSIONS],
			s->stat[STAT_RESTORATIONS],
			s->stat[STAT_TLB_FLUSH_CONVERT],
			s->stat[STAT_TLB_FLUSH_MERMAP],
			sz(s->stat[STAT_RELEASED_BYTES], a));
	}
	if (!h->count)
		return;
	fprintf(out, "\nlast decisions of secmemd:\n");
	for (i = 0; i < h->count; i++) {
		unsigned int k = (h->head + RUNTIME_HISTORY - h->count + i) %
				 RUNTIME_HISTORY;
		char when[32];
		struct tm tm;

		strftime(when, sizeof(when), "%F %T",
			 localtime_r(&h->e[k].when, &tm));
		fprintf(out, "  %s  %s\n", when, h->e[k].reason);
	}
}

static void print_json(FILE *out, const struct sysfs_global *g,
		       const bool *present, const struct sysfs_node *nodes,
		       pid_t daemon, const struct history *h,
		       const struct protect_env *units,
		       const struct secret_kernel *sk,
		       const struct secret_scan *ss)
{
	char uerr[512];
	const char *sep = "";
	unsigned int i;
	int n, k;

	/* "hibernation" is taken: whether the kernel would (secret_print). */
	fprintf(out, "{\"flush_on_free\":\"%s\",\"hibernation_policy\":\"%s\"",
		flush_policy_name(g->flush_on_free), hibernation_state(g));
	if (g->hibernation_wiped_files >= 0)
		fprintf(out, ",\"hibernation_wiped_files\":%" PRId64,
			g->hibernation_wiped_files);
	else
		fprintf(out, ",\"hibernation_wiped_files\":null");
	fprintf(out, ",\"pageblock_bytes\":%" PRIu64, g->pageblock_bytes);
	if (daemon > 0)
		fprintf(out, ",\"daemon_pid\":%ld", (long)daemon);
	else
		fprintf(out, ",\"daemon_pid\":null");
	fprintf(out, ",\"nodes\":[");
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		if (!present[n])
			continue;
		fprintf(out, "%s{\"node\":%d", sep, n);
		for (k = 0; k < KNOB_COUNT; k++)
			fprintf(out, ",\"%s\":%" PRIu64, sysfs_knob_names[k],
				nodes[n].knob[k]);
		fprintf(out, ",\"stats\":");
		json_stats(out, nodes[n].stat);
		fputc('}', out);
		sep = ",";
	}
	fprintf(out, "],\"total\":");
	json_stats(out, g->stat);
	fprintf(out, ",\"decisions\":[");
	for (i = 0; i < h->count; i++) {
		unsigned int j = (h->head + RUNTIME_HISTORY - h->count + i) %
				 RUNTIME_HISTORY;

		fprintf(out, "%s{\"time\":%lld,\"reason\":", i ? "," : "",
			(long long)h->e[j].when);
		json_string(out, h->e[j].reason);
		fputc('}', out);
	}
	fputc(']', out);
	fputc(',', out);
	secret_print(out, sk, ss, true);
	if (units) {
		fprintf(out, ",\"units\":");
		if (ctl_units(out, units, true, true, uerr, sizeof(uerr)))
			fprintf(out, "null");
	}
	fprintf(out, "}\n");
}

static int lacks_feature(int r, const char *sysfs, char *err, size_t len)
{
	snprintf(err, len,
		 "%s: no unmapped pools (%s): this kernel lacks the secmem pool control",
		 sysfs, strerror(-r));
	return -ENOENT;
}

int ctl_status(FILE *out, const char *sysfs, const char *proc,
	       const char *rundir, bool json, const struct protect_env *units,
	       char *err, size_t len)
{
	struct sysfs_node nodes[CONFIG_MAX_NODES];
	bool present[CONFIG_MAX_NODES];
	struct secret_kernel sk;
	struct secret_scan ss;
	struct sysfs_global g;
	struct history h;
	int n, ignored, r;
	pid_t daemon;

	r = sysfs_nodes(sysfs, present, &ignored);
	if (r == -ENOENT)
		return lacks_feature(r, sysfs, err, len);
	if (!r)
		r = sysfs_read_global(sysfs, &g);
	if (r) {
		snprintf(err, len, "%s: reading the pool state: %s", sysfs,
			 strerror(-r));
		return r;
	}
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		if (!present[n])
			continue;
		r = sysfs_read_node(sysfs, n, &nodes[n]);
		if (r) {
			snprintf(err, len, "node %d: reading the pool state: %s",
				 n, strerror(-r));
			return r;
		}
	}
	daemon = runtime_daemon_pid(rundir);
	if (runtime_read_history(rundir, &h))
		memset(&h, 0, sizeof(h));
	secret_kernel_read(sysfs, proc, &sk);
	/* Without /proc the holders are unknown, the pools still are. */
	if (secret_scan(proc, &ss))
		memset(&ss, 0, sizeof(ss));
	if (json) {
		print_json(out, &g, present, nodes, daemon, &h, units, &sk, &ss);
	} else {
		print_table(out, &g, present, nodes, daemon, &h);
		fputc('\n', out);
		secret_print(out, &sk, &ss, false);
		print_units(out, units);
	}
	secret_scan_free(&ss);
	return ferror(out) ? -EIO : 0;
}

int ctl_secrets(FILE *out, const char *sysfs, const char *proc, bool json,
		bool legend, char *err, size_t len)
{
	struct secret_kernel sk;
	struct secret_scan ss;
	int r;

	r = secret_scan(proc, &ss);
	if (r) {
		snprintf(err, len, "%s: %s", proc, strerror(-r));
		return r;
	}
	secret_kernel_read(sysfs, proc, &sk);
	if (json) {
		fputc('{', out);
		secret_print(out, &sk, &ss, true);
		fprintf(out, "}\n");
	} else if (!legend) {
		secret_print_holders(out, &ss);
	} else {
		secret_print(out, &sk, &ss, false);
	}
	secret_scan_free(&ss);
	return ferror(out) ? -EIO : 0;
}

static int set_knob(const char *sysfs, enum sysfs_knob k, uint64_t v, int n,
		    char *err, size_t len)
{
	struct sysfs_node cur;
	char a[SIZE_STR_MAX], b[SIZE_STR_MAX];
	int r;

	r = sysfs_read_node(sysfs, n, &cur);
	if (r) {
		snprintf(err, len, "node %d: %s", n, strerror(-r));
		return r;
	}
	/* The kernel refuses these too, but only with a bare EINVAL. */
	if (k == KNOB_WATERMARK_LOW && v > cur.knob[KNOB_WATERMARK_HIGH]) {
		snprintf(err, len, "node %d: watermark_low %s above watermark_high %s",
			 n, sz(v, a), sz(cur.knob[KNOB_WATERMARK_HIGH], b));
		return -EINVAL;
	}
	if (k == KNOB_WATERMARK_HIGH && v < cur.knob[KNOB_WATERMARK_LOW]) {
		snprintf(err, len, "node %d: watermark_high %s below watermark_low %s",
			 n, sz(v, a), sz(cur.knob[KNOB_WATERMARK_LOW], b));
		return -EINVAL;
	}
	r = sysfs_write_knob(sysfs, n, k, v);
	if (r)
		snprintf(err, len, "node %d: writing %s = %s: %s", n,
			 sysfs_knob_names[k], sz(v, a), strerror(-r));
	return r;
}

static int set_flush(const char *sysfs, const char *value, int node,
		     char *err, size_t len)
{
	enum flush_policy f;
	int r;

	if (node >= 0) {
		snprintf(err, len, "flush_on_free is global: no --node");
		return -EINVAL;
	}
	if (flush_policy_parse(value, &f)) {
		snprintf(err, len,
			 "flush_on_free: '%s' is not one of: immediate, deferred",
			 value);
		return -EINVAL;
	}
	r = sysfs_write_flush(sysfs, f);
	if (r)
		snprintf(err, len, "writing flush_on_free: %s", strerror(-r));
	return r;
}

static int set_hibernation(const char *sysfs, const char *value, int node,
			   char *err, size_t len)
{
	enum hibernation_policy h;
	int r;

	if (node >= 0) {
		snprintf(err, len, "hibernation is global: no --node");
		return -EINVAL;
	}
	if (hibernation_policy_parse(value, &h)) {
		snprintf(err, len,
			 "hibernation: '%s' is not one of: refuse, wipe", value);
		return -EINVAL;
	}
	r = sysfs_write_hibernation(sysfs, h);
	if (r == -ENOENT)
		snprintf(err, len,
			 "%s/kernel/mm/unmapped/hibernation does not exist: this kernel has no hibernation policy (it refuses to hibernate while secret files exist)",
			 sysfs);
	else if (r)
		snprintf(err, len, "writing hibernation: %s", strerror(-r));
	return r;
}

#define SET_KEYS "pool_target, watermark_low, watermark_high, flush_on_free, hibernation"

bool ctl_set_key_known(const char *key, char *err, size_t len)
{
	int k;

	if (!strcmp(key, "flush_on_free") || !strcmp(key, "hibernation"))
		return true;
	for (k = 0; k < KNOB_COUNT; k++)
		if (!strcmp(key, sysfs_knob_names[k]))
			return true;
	snprintf(err, len, "unknown key '%s' (" SET_KEYS ")", key);
	return false;
}

int ctl_set(const char *sysfs, const char *rundir, const char *key,
	    const char *value, int node, char *err, size_t len)
{
	bool present[CONFIG_MAX_NODES];
	int k, n, ignored, r;
	uint64_t v;
	pid_t daemon;

	/* A mistyped key is the caller's error on any kernel. */
	if (!ctl_set_key_known(key, err, len))
		return -EINVAL;
	r = sysfs_nodes(sysfs, present, &ignored);
	if (r == -ENOENT)
		return lacks_feature(r, sysfs, err, len);
	if (r) {
		snprintf(err, len, "%s: %s", sysfs, strerror(-r));
		return r;
	}
	if (!strcmp(key, "flush_on_free")) {
		r = set_flush(sysfs, value, node, err, len);
		goto notify;
	}
	if (!strcmp(key, "hibernation")) {
		r = set_hibernation(sysfs, value, node, err, len);
		goto notify;
	}
	for (k = 0; k < KNOB_COUNT; k++)
		if (!strcmp(key, sysfs_knob_names[k]))
			break;
	r = parse_size(value, &v);
	if (r || v > CONFIG_SIZE_MAX) {
		snprintf(err, len, "%s: '%s' is not a size in [0, 1T] (e.g. 512K, 64M, 1G)",
			 key, value);
		return -EINVAL;
	}
	if (node >= 0 && (node >= CONFIG_MAX_NODES || !present[node])) {
		snprintf(err, len, "node %d has no unmapped pool", node);
		return -ENODEV;
	}
	for (n = 0; n < CONFIG_MAX_NODES && !r; n++)
		if (present[n] && (node < 0 || n == node))
			r = set_knob(sysfs, (enum sysfs_knob)k, v, n, err, len);
notify:
	if (r)
		return r;
	/* The daemon re-reads sysfs, so that its decisions start from here. */
	daemon = runtime_daemon_pid(rundir);
	if (daemon > 0 && kill(daemon, SIGUSR1) < 0) {
		r = -errno;
		snprintf(err, len, "written, but secmemd (pid %ld) not told: %s",
			 (long)daemon, strerror(-r));
	}
	return r;
}
