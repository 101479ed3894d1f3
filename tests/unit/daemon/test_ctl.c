// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysfs.c, runtime.c, file_replace.c and secmemctl against a fake sysfs
 * tree.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"
#include "fake_sysfs.h"
#include "file_replace.h"
#include "json.h"
#include "runtime.h"
#include "sysfs.h"

#define N0 "devices/system/node/node0/unmapped/"
#define N1 "devices/system/node/node1/unmapped/"
#define HIB "kernel/mm/unmapped/hibernation"
#define WIPED "kernel/mm/unmapped/hibernation_wiped_files"

static char root[PATH_MAX];
static char rundir[PATH_MAX + 8];
static char err[512];

static void setup(void)
{
	fake_sysfs_create(root, 2);
	snprintf(rundir, sizeof(rundir), "%s/run", root);
}

static void teardown(void)
{
	fake_sysfs_destroy(root);
}

/*
 * The write order: a knob replaced by a directory refuses writes, which
 * shows which knobs were written before it.
 */
static void block_knob(const char *rel)
{
	char path[PATH_MAX + 128];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

START_TEST(nodes_and_missing_feature)
{
	bool present[CONFIG_MAX_NODES];
	int ignored;

	ck_assert_int_eq(sysfs_nodes(root, present, &ignored), 0);
	ck_assert(present[0] && present[1]);
	/* node2 exists but has no unmapped/: not a pool node. */
	ck_assert(!present[2]);
	ck_assert_int_eq(ignored, 0);
	ck_assert_int_eq(sysfs_nodes("/nonexistent", present, &ignored),
			 -ENOENT);
}
END_TEST

START_TEST(read_values)
{
	struct sysfs_global g;
	struct sysfs_node n;

	fake_write(root, N1 "pool_target", "67108864\n");
	ck_assert_int_eq(sysfs_read_node(root, 1, &n), 0);
	ck_assert_uint_eq(n.knob[KNOB_POOL_TARGET], 64 << 20);
	ck_assert_uint_eq(n.stat[STAT_ALLOC_CONVERT], 1003);
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert_int_eq(g.flush_on_free, FLUSH_IMMEDIATE);
	ck_assert_uint_eq(g.pageblock_bytes, 2 << 20);
	fake_write(root, "kernel/mm/unmapped/flush_on_free", "deferred\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert_int_eq(g.flush_on_free, FLUSH_DEFERRED);
	fake_write(root, "kernel/mm/unmapped/flush_on_free", "[lazy] x\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), -EPROTO);
	/* A value with a unit is not what the ABI reads back. */
	fake_write(root, N0 "watermark_low", "8M\n");
	ck_assert_int_eq(sysfs_read_node(root, 0, &n), -EPROTO);
	fake_write(root, N0 "watermark_low", "0\n");
	block_knob(N0 "stats/alloc_fail");
	ck_assert_int_eq(sysfs_read_node(root, 0, &n), -EISDIR);
}
END_TEST

/* Both bracket forms, the bare word, the counter; garbage is not the ABI. */
START_TEST(read_hibernation_knob)
{
	struct sysfs_global g;

	memset(&g, 0xa5, sizeof(g));
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert(g.hibernation_present);
	ck_assert_int_eq(g.hibernation, HIBERNATION_REFUSE);
	ck_assert_int_eq(g.hibernation_wiped_files, 0);
	fake_write(root, HIB, "refuse [wipe]\n");
	fake_write(root, WIPED, "12\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert_int_eq(g.hibernation, HIBERNATION_WIPE);
	ck_assert_int_eq(g.hibernation_wiped_files, 12);
	fake_write(root, HIB, "[refuse] wipe\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert_int_eq(g.hibernation, HIBERNATION_REFUSE);
	fake_write(root, HIB, "wipe\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert_int_eq(g.hibernation, HIBERNATION_WIPE);
	fake_write(root, HIB, "refuse");
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert_int_eq(g.hibernation, HIBERNATION_REFUSE);
	fake_write(root, HIB, "[sleep] wipe\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), -EPROTO);
	fake_write(root, HIB, "[wipe\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), -EPROTO);
	fake_write(root, HIB, "[refuse] wipe\n");
	fake_write(root, WIPED, "many\n");
	ck_assert_int_eq(sysfs_read_global(root, &g), -EPROTO);
}
END_TEST

/*
 * A kernel without the knob (stock, or patched before it): reported as
 * absent, the rest of the global state read as usual.
 */
START_TEST(hibernation_knob_absent)
{
	struct sysfs_global g;
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/" WIPED, root);
	ck_assert_int_eq(unlink(path), 0);
	memset(&g, 0xa5, sizeof(g));
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert(g.hibernation_present);
	ck_assert_int_eq(g.hibernation_wiped_files, -1);
	snprintf(path, sizeof(path), "%s/" HIB, root);
	ck_assert_int_eq(unlink(path), 0);
	fake_write(root, "kernel/mm/unmapped/flush_on_free", "immediate [deferred]\n");
	memset(&g, 0xa5, sizeof(g));
	ck_assert_int_eq(sysfs_read_global(root, &g), 0);
	ck_assert(!g.hibernation_present);
	ck_assert_int_eq(g.hibernation, HIBERNATION_REFUSE);
	ck_assert_int_eq(g.hibernation_wiped_files, -1);
	ck_assert_int_eq(g.flush_on_free, FLUSH_DEFERRED);
	ck_assert_uint_eq(g.pageblock_bytes, 2 << 20);
	ck_assert_uint_eq(g.stat[STAT_ALLOC_FAIL], 4);
	/* Not created by a write either. */
	ck_assert_int_eq(sysfs_write_hibernation(root, HIBERNATION_WIPE), -ENOENT);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* Any other failure still is one. */
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(sysfs_read_global(root, &g), -EISDIR);
}
END_TEST

START_TEST(write_values)
{
	char buf[64];

	fake_write(root, N0 "pool_target", "123456789\n");
	ck_assert_int_eq(sysfs_write_knob(root, 0, KNOB_POOL_TARGET, 4096), 0);
	ck_assert_str_eq(fake_read(root, N0 "pool_target", buf, sizeof(buf)),
			 "4096");
	ck_assert_int_eq(sysfs_write_flush(root, FLUSH_DEFERRED), 0);
	ck_assert_str_eq(fake_read(root, "kernel/mm/unmapped/flush_on_free",
				   buf, sizeof(buf)),
			 "deferred");
	ck_assert_int_eq(sysfs_write_hibernation(root, HIBERNATION_WIPE), 0);
	ck_assert_str_eq(fake_read(root, HIB, buf, sizeof(buf)), "wipe");
	ck_assert_int_eq(sysfs_write_hibernation(root, HIBERNATION_REFUSE), 0);
	ck_assert_str_eq(fake_read(root, HIB, buf, sizeof(buf)), "refuse");
	/* Never creates a file the kernel does not have. */
	ck_assert_int_eq(sysfs_write_knob(root, 5, KNOB_POOL_TARGET, 1), -ENOENT);
}
END_TEST

START_TEST(set_node_grows_high_first)
{
	uint64_t cur[KNOB_COUNT] = { 0, 0, 0 };
	const uint64_t want[KNOB_COUNT] = { 32, 8, 64 };
	enum sysfs_knob failed;
	char buf[32];

	block_knob(N0 "watermark_low");
	ck_assert_int_eq(sysfs_set_node(root, 0, cur, want, &failed), -EISDIR);
	ck_assert_int_eq(failed, KNOB_WATERMARK_LOW);
	ck_assert_str_eq(fake_read(root, N0 "watermark_high", buf, sizeof(buf)), "64");
	ck_assert_str_eq(fake_read(root, N0 "pool_target", buf, sizeof(buf)), "32");
	ck_assert_uint_eq(cur[KNOB_POOL_TARGET], 32);
	ck_assert_uint_eq(cur[KNOB_WATERMARK_LOW], 0);
}
END_TEST

START_TEST(set_node_shrinks_low_first)
{
	uint64_t cur[KNOB_COUNT] = { 32, 8, 64 };
	const uint64_t want[KNOB_COUNT] = { 4, 2, 8 };
	enum sysfs_knob failed;
	char buf[32];

	block_knob(N0 "watermark_high");
	ck_assert_int_eq(sysfs_set_node(root, 0, cur, want, &failed), -EISDIR);
	ck_assert_int_eq(failed, KNOB_WATERMARK_HIGH);
	ck_assert_str_eq(fake_read(root, N0 "watermark_low", buf, sizeof(buf)), "2");
	ck_assert_str_eq(fake_read(root, N0 "pool_target", buf, sizeof(buf)), "4");
}
END_TEST

START_TEST(set_node_skips_unchanged)
{
	uint64_t cur[KNOB_COUNT] = { 32, 8, 64 };
	const uint64_t want[KNOB_COUNT] = { 48, 8, 64 };
	enum sysfs_knob failed;

	block_knob(N0 "watermark_low");
	block_knob(N0 "watermark_high");
	ck_assert_int_eq(sysfs_set_node(root, 0, cur, want, &failed), 0);
	ck_assert_uint_eq(cur[KNOB_POOL_TARGET], 48);
}
END_TEST

START_TEST(status_json_exact)
{
	struct history h = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(mkdir(rundir, 0755), 0);
	history_add(&h, 1700000000, "node 0: a \"quoted\" reason");
	ck_assert_int_eq(runtime_write_history(rundir, &h), 0);
	fake_write(root, N0 "pool_target", "33554432\n");
	ck_assert_int_eq(ctl_status(f, root, "/nonexistent", rundir, true, NULL, err,
				    sizeof(err)), 0);
	fclose(f);
	ck_assert_str_eq(buf,
		"{\"flush_on_free\":\"immediate\",\"hibernation_policy\":\"refuse\","
		"\"hibernation_wiped_files\":0,\"pageblock_bytes\":2097152,"
		"\"daemon_pid\":null,\"nodes\":["
		"{\"node\":0,\"pool_target\":33554432,\"watermark_low\":0,\"watermark_high\":0,"
		"\"stats\":{\"unmapped_bytes\":0,\"free_bytes\":1,\"alloc_pool\":2,"
		"\"alloc_convert\":3,\"alloc_fail\":4,\"conversions\":5,\"restorations\":6,"
		"\"tlb_flush_convert\":7,\"tlb_flush_mermap\":8,\"released_bytes\":9}},"
		"{\"node\":1,\"pool_target\":0,\"watermark_low\":0,\"watermark_high\":0,"
		"\"stats\":{\"unmapped_bytes\":1000,\"free_bytes\":1001,\"alloc_pool\":1002,"
		"\"alloc_convert\":1003,\"alloc_fail\":1004,\"conversions\":1005,\"restorations\":1006,"
		"\"tlb_flush_convert\":1007,\"tlb_flush_mermap\":1008,\"released_bytes\":1009}}],"
		"\"total\":{\"unmapped_bytes\":0,\"free_bytes\":1,\"alloc_pool\":2,"
		"\"alloc_convert\":3,\"alloc_fail\":4,\"conversions\":5,\"restorations\":6,"
		"\"tlb_flush_convert\":7,\"tlb_flush_mermap\":8,\"released_bytes\":9},"
		"\"decisions\":[{\"time\":1700000000,\"reason\":\"node 0: a \\\"quoted\\\" reason\"}],"
		"\"secret_files\":null,\"meminfo\":{\"SecretMem\":null,\"Unmapped\":null,"
		"\"UnmappedFree\":null},\"hibernation\":null,\"holders\":[],"
		"\"unreadable_processes\":0,\"mappings_seen\":true}\n");
	free(buf);
}
END_TEST

START_TEST(status_table)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fake_write(root, N1 "pool_target", "33554432\n");
	fake_write(root, N1 "watermark_high", "67108864\n");
	ck_assert_int_eq(ctl_status(f, root, "/nonexistent", rundir, false, NULL, err,
				    sizeof(err)), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "flush_on_free: immediate    pageblock: 2M    secmemd: not running\n"
				  "hibernation: refuse    wiped_files: 0\n\nNODE "),
		      "%s", buf);
	ck_assert_msg(strstr(buf, "\nsecret files (memfd_secret, MFD_UNMAPPED): 0 seen in 0 processes; this kernel cannot hibernate\n  no process holds one\n"),
		      "%s", buf);
	ck_assert_msg(strstr(buf, "\n1            32M          0        64M       1001       1000         1002         1003     1004\n"),
		      "%s", buf);
	ck_assert_msg(!strstr(buf, "last decisions"), "%s", buf);
	free(buf);
}
END_TEST

/* secmemctl status, text or JSON, into a string (free it). */
static char *status_output(bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ctl_status(f, root, "/nonexistent", rundir, json, NULL,
				    err, sizeof(err)), 0);
	fclose(f);
	return buf;
}

/* The hibernation line: wipe with its count, then a kernel without it. */
START_TEST(status_hibernation)
{
	char path[PATH_MAX + 64], *buf;

	fake_write(root, HIB, "refuse [wipe]\n");
	fake_write(root, WIPED, "3\n");
	buf = status_output(false);
	ck_assert_msg(strstr(buf, "\nhibernation: wipe    wiped_files: 3\n\n"), "%s", buf);
	free(buf);
	buf = status_output(true);
	ck_assert_msg(strstr(buf, "{\"flush_on_free\":\"immediate\",\"hibernation_policy\":\"wipe\","
				  "\"hibernation_wiped_files\":3,\"pageblock_bytes\":"),
		      "%s", buf);
	/* The secret files' "hibernation" (would the kernel) stays apart. */
	ck_assert_msg(strstr(buf, ",\"hibernation\":null,"), "%s", buf);
	free(buf);

	snprintf(path, sizeof(path), "%s/" WIPED, root);
	ck_assert_int_eq(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/" HIB, root);
	ck_assert_int_eq(unlink(path), 0);
	buf = status_output(false);
	ck_assert_msg(strstr(buf, "secmemd: not running\nhibernation: absent\n\nNODE "), "%s", buf);
	free(buf);
	buf = status_output(true);
	ck_assert_msg(strstr(buf, "{\"flush_on_free\":\"immediate\",\"hibernation_policy\":\"absent\","
				  "\"hibernation_wiped_files\":null,\"pageblock_bytes\":"),
		      "%s", buf);
	free(buf);
}
END_TEST

START_TEST(status_without_feature)
{
	FILE *f = fopen("/dev/null", "w");

	ck_assert_int_eq(ctl_status(f, "/nonexistent", "/nonexistent", rundir, false, NULL,
				    err, sizeof(err)),
			 -ENOENT);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(err, "this kernel lacks"));
}
END_TEST

/*
 * A fake /proc: process 4242 holds one memfd_secret file twice through fd/
 * and a second one only through map_files/, and a plain memfd; 4243
 * holds only a plain memfd. The links point at this process's own fds,
 * which is what statfs() and stat() follow. Returns the number of
 * secret files made: 0 where memfd_secret() is not available.
 */
static int fake_proc(char *proc, size_t len, int fds[3])
{
	char path[PATH_MAX + 64], target[64];
	int n = 0;

	ck_assert_int_lt(snprintf(proc, len, "%.*s/proc", PATH_MAX - 16, root), (int)len);
	fds[0] = (int)syscall(SYS_memfd_secret, 0);
	fds[1] = (int)syscall(SYS_memfd_secret, 0);
	fds[2] = memfd_create("plain", 0);
	ck_assert_int_ge(fds[2], 0);
	ck_assert_int_eq(ftruncate(fds[2], 1 << 20), 0);
	if (fds[0] >= 0 && fds[1] >= 0) {
		ck_assert_int_eq(ftruncate(fds[0], 8192), 0);
		ck_assert_int_eq(ftruncate(fds[1], 20480), 0);
		n = 2;
	}
	ck_assert_int_eq(mkdir(proc, 0755), 0);
	fake_write(root, "proc/meminfo",
		   "MemTotal:        1024 kB\nSecretMem:           8 kB\n"
		   "Unmapped:         4096 kB\nUnmappedFree:     2048 kB\n");
	snprintf(path, sizeof(path), "%s/4242", proc);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	fake_write(root, "proc/4242/comm", "keeper\n");
	snprintf(path, sizeof(path), "%s/4242/fd", proc);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/4242/map_files", proc);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	if (n) {
		snprintf(target, sizeof(target), "/proc/self/fd/%d", fds[0]);
		snprintf(path, sizeof(path), "%s/4242/fd/3", proc);
		ck_assert_int_eq(symlink(target, path), 0);
		snprintf(path, sizeof(path), "%s/4242/fd/4", proc);
		ck_assert_int_eq(symlink(target, path), 0);
		snprintf(target, sizeof(target), "/proc/self/fd/%d", fds[1]);
		snprintf(path, sizeof(path), "%s/4242/map_files/7f0000000000-7f0000005000", proc);
		ck_assert_int_eq(symlink(target, path), 0);
	}
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fds[2]);
	snprintf(path, sizeof(path), "%s/4242/fd/5", proc);
	ck_assert_int_eq(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/4243", proc);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/4243/fd", proc);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/4243/fd/0", proc);
	ck_assert_int_eq(symlink(target, path), 0);
	return n;
}

/* /sys/power/disk, which says whether the kernel would hibernate. */
static void fake_power_disk(const char *text)
{
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/power", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	fake_write(root, "power/disk", text);
}

static void close_fds(const int fds[3])
{
	int i;

	for (i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* secmemctl secrets on the fake trees: what it printed (free it). */
static char *secrets_output(const char *proc, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ctl_secrets(f, root, proc, json, true, err, sizeof(err)), 0);
	fclose(f);
	return buf;
}

START_TEST(secrets_json_exact)
{
	char proc[PATH_MAX], *buf;
	int fds[3], n;

	n = fake_proc(proc, sizeof(proc), fds);
	fake_write(root, "kernel/mm/unmapped/secret_files", "2\n");
	fake_power_disk("[disabled]\n");
	buf = secrets_output(proc, true);
	if (n) {
		ck_assert_str_eq(buf,
			"{\"secret_files\":2,\"meminfo\":{\"SecretMem\":8192,\"Unmapped\":4194304,"
			"\"UnmappedFree\":2097152},\"hibernation\":false,\"holders\":["
			"{\"pid\":4242,\"comm\":\"keeper\",\"files\":2,\"bytes\":28672}],"
			"\"unreadable_processes\":0,\"mappings_seen\":true}\n");
	} else {
		/* No memfd_secret() here: the guest test covers the holders. */
		fprintf(stderr, "memfd_secret() unavailable: only plain memfds checked\n");
		ck_assert_msg(strstr(buf, "\"holders\":[],"), "%s", buf);
	}
	free(buf);
	close_fds(fds);
}
END_TEST

START_TEST(secrets_table)
{
	char proc[PATH_MAX], *buf;
	int fds[3], n;

	n = fake_proc(proc, sizeof(proc), fds);
	fake_power_disk("[platform] shutdown reboot\n");
	buf = secrets_output(proc, false);
	if (n)
		ck_assert_str_eq(buf,
			"secret files (memfd_secret, MFD_UNMAPPED): 2 seen in 1 processes; hibernation available\n"
			"  SecretMem     8K\n  Unmapped      4M\n  UnmappedFree  2M\n"
			"  PID      COMM              FILES      BYTES\n"
			"  4242     keeper                2        28K\n");
	else
		ck_assert_msg(strstr(buf, "no process holds one"), "%s", buf);
	free(buf);
	close_fds(fds);
}
END_TEST

START_TEST(secrets_without_proc)
{
	FILE *f = fopen("/dev/null", "w");

	ck_assert_int_eq(ctl_secrets(f, root, "/nonexistent", false, true, err, sizeof(err)), -ENOENT);
	fclose(f);
	ck_assert_msg(strstr(err, "/nonexistent: "), "%s", err);
}
END_TEST

START_TEST(set_checks_then_writes)
{
	char buf[64];

	ck_assert_int_eq(ctl_set(root, rundir, "pool_target", "64M", 1, err,
				 sizeof(err)), 0);
	ck_assert_str_eq(fake_read(root, N1 "pool_target", buf, sizeof(buf)),
			 "67108864");
	ck_assert_str_eq(fake_read(root, N0 "pool_target", buf, sizeof(buf)), "0");
	/* Without a node: every node. */
	ck_assert_int_eq(ctl_set(root, rundir, "watermark_high", "1G", -1, err,
				 sizeof(err)), 0);
	ck_assert_str_eq(fake_read(root, N0 "watermark_high", buf, sizeof(buf)),
			 "1073741824");
	ck_assert_str_eq(fake_read(root, N1 "watermark_high", buf, sizeof(buf)),
			 "1073741824");
	ck_assert_int_eq(ctl_set(root, rundir, "flush_on_free", "deferred", -1,
				 err, sizeof(err)), 0);
	ck_assert_str_eq(fake_read(root, "kernel/mm/unmapped/flush_on_free",
				   buf, sizeof(buf)), "deferred");
	ck_assert_int_eq(ctl_set(root, rundir, "hibernation", "wipe", -1, err,
				 sizeof(err)), 0);
	ck_assert_str_eq(fake_read(root, HIB, buf, sizeof(buf)), "wipe");
	ck_assert_int_eq(ctl_set(root, rundir, "hibernation", "refuse", -1, err,
				 sizeof(err)), 0);
	ck_assert_str_eq(fake_read(root, HIB, buf, sizeof(buf)), "refuse");
}
END_TEST

/* set hibernation: the checks of flush_on_free, and a kernel without it. */
START_TEST(set_hibernation_refusals)
{
	char buf[64], path[PATH_MAX + 64];

	ck_assert_int_eq(ctl_set(root, rundir, "hibernation", "wipe", 0, err,
				 sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "hibernation is global: no --node");
	ck_assert_int_eq(ctl_set(root, rundir, "hibernation", "suspend", -1,
				 err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "hibernation: 'suspend' is not one of: refuse, wipe");
	ck_assert_int_eq(ctl_set(root, rundir, "hibernation", "wipe\n", -1,
				 err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(fake_read(root, HIB, buf, sizeof(buf)), "[refuse] wipe");
	ck_assert_int_eq(ctl_set(root, rundir, "hibernate", "wipe", -1, err,
				 sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "flush_on_free, hibernation)"), "%s", err);

	snprintf(path, sizeof(path), "%s/" HIB, root);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(ctl_set(root, rundir, "hibernation", "wipe", -1, err,
				 sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "/kernel/mm/unmapped/hibernation does not exist: this kernel has no hibernation policy"),
		      "%s", err);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

START_TEST(set_refusals_change_nothing)
{
	char buf[64];

	ck_assert_int_eq(ctl_set(root, rundir, "pool_target", "64Q", 0, err,
				 sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "pool_target: '64Q' is not a size in [0, 1T] (e.g. 512K, 64M, 1G)");
	ck_assert_int_eq(ctl_set(root, rundir, "pool_target", "2T", 0, err,
				 sizeof(err)), -EINVAL);
	ck_assert_int_eq(ctl_set(root, rundir, "watermark_low", "1M", 0, err,
				 sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "node 0: watermark_low 1M above watermark_high 0");
	ck_assert_str_eq(fake_read(root, N0 "watermark_low", buf, sizeof(buf)), "0");
	ck_assert_int_eq(ctl_set(root, rundir, "pool_size", "1M", 0, err,
				 sizeof(err)), -EINVAL);
	ck_assert_int_eq(ctl_set(root, rundir, "flush_on_free", "deferred", 0,
				 err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(ctl_set(root, rundir, "flush_on_free", "later", -1,
				 err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(ctl_set(root, rundir, "pool_target", "1M", 2, err,
				 sizeof(err)), -ENODEV);
	ck_assert_str_eq(err, "node 2 has no unmapped pool");
	ck_assert_int_eq(ctl_set("/nonexistent", rundir, "pool_target", "1M",
				 -1, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(fake_read(root, N0 "pool_target", buf, sizeof(buf)), "0");
	ck_assert_str_eq(fake_read(root, "kernel/mm/unmapped/flush_on_free",
				   buf, sizeof(buf)), "[immediate] deferred");
}
END_TEST

START_TEST(lock_keeps_second_instance_out)
{
	pid_t holder = 0;
	int fd = runtime_lock(rundir, &holder);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(runtime_daemon_pid(rundir), getpid());
	ck_assert_int_eq(runtime_lock(rundir, &holder), -EBUSY);
	ck_assert_int_eq(holder, getpid());
	close(fd);
	/* The stale pid file does not count once the lock is gone. */
	ck_assert_int_eq(runtime_daemon_pid(rundir), 0);
	fd = runtime_lock(rundir, &holder);
	ck_assert_int_ge(fd, 0);
	close(fd);
}
END_TEST

static mode_t mode_of(const char *name)
{
	char path[PATH_MAX + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", rundir, name);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	return st.st_mode & 07777;
}

/* The lock only root can open; the pid file for everyone. */
START_TEST(lock_file_is_private)
{
	char path[PATH_MAX + 64], buf[32], want[32];
	pid_t holder = 0;
	int fd;

	umask(0);
	fd = runtime_lock(rundir, &holder);
	umask(022);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(mode_of("secmemd.lock"), 0600);
	ck_assert_uint_eq(mode_of("secmemd.pid"), 0644);
	snprintf(want, sizeof(want), "%ld", (long)getpid());
	ck_assert_str_eq(fake_read(rundir, "secmemd.pid", buf, sizeof(buf)),
			 want);
	close(fd);

	/* A lock file left readable (by hand, or an old version): fixed. */
	snprintf(path, sizeof(path), "%s/secmemd.lock", rundir);
	ck_assert_int_eq(chmod(path, 0644), 0);
	fd = runtime_lock(rundir, &holder);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(mode_of("secmemd.lock"), 0600);
	close(fd);
}
END_TEST

/*
 * Another user opens and flock()s whatever it can in the runtime
 * directory, and keeps it: the daemon must still start.  (With the lock
 * on the 0644 pid file, flock(LOCK_SH) on it kept every daemon out.)
 */
START_TEST(other_users_cannot_block_the_lock)
{
	static const char *const names[] = { "secmemd.lock", "secmemd.pid" };
	char path[PATH_MAX + 64], c;
	pid_t holder = 0, child;
	int fd, sync[2], go[2], status;
	size_t i;

	if (geteuid() != 0)
		return; /* needs root to become another user */
	fd = runtime_lock(rundir, &holder);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(chmod(root, 0755), 0);
	ck_assert_int_eq(pipe(sync), 0);
	ck_assert_int_eq(pipe(go), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int locked = 0;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", rundir, names[i]);
			fd = open(path, O_RDONLY);
			if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) == 0)
				locked++;
		}
		c = (char)('0' + locked);
		if (write(sync[1], &c, 1) != 1)
			_exit(2);
		/* Hold everything until the parent has tried. */
		if (read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	ck_assert_int_eq(read(sync[0], &c, 1), 1);
	fd = runtime_lock(rundir, &holder);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(fd >= 0,
		      "user 65534 holding %c flock(s) kept the daemon out: %s",
		      c, strerror(-fd));
	close(fd);
	/* The lock itself it could not even open. */
	ck_assert_int_le(c, '1');
}
END_TEST

/* A lock file that belongs to someone else is not trusted. */
START_TEST(lock_file_of_another_user_is_refused)
{
	char path[PATH_MAX + 64];
	pid_t holder = 0;
	int fd;

	if (geteuid() != 0)
		return;
	fd = runtime_lock(rundir, &holder);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/secmemd.lock", rundir);
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	ck_assert_int_eq(runtime_lock(rundir, &holder), -EPERM);
}
END_TEST

/*
 * secmemctl status while daemons start and stop: asking whether one runs
 * must never make one fail to start.  (A reader that took flock(LOCK_SH)
 * on the pid file would make a starting daemon's LOCK_EX|LOCK_NB fail:
 * the reader looks in /proc/locks instead.)
 *
 * The starts are bounded by time, not by count: each one creates and
 * renames the pid file, which on a loaded 2-core machine took up to 1 ms,
 * and the reader hammers /proc/locks, whose every read takes the kernel's
 * file-lock rwsem for writing and so slows every flock() down too.  3000
 * starts then ran past Check's 4 s timeout.  What the test needs is not a
 * number of starts but starts that overlap reads: the reader counts its
 * reads in shared memory, and the test requires enough of both.
 */
START_TEST(status_does_not_race_a_starting_daemon)
{
	pid_t holder = 0, child, me = getpid(), seen;
	int i, fd, status, busy = 0, wrong = 0;
	unsigned long reads_before, reads;
	_Atomic unsigned long *shared;
	struct timespec t0, t;
	double elapsed = 0;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(shared, MAP_FAILED);
	atomic_store(shared, 0);
	fd = runtime_lock(rundir, &holder);
	ck_assert_int_ge(fd, 0);
	close(fd);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		for (;;) {
			runtime_daemon_pid(rundir);
			atomic_fetch_add(shared, 1);
		}
	}
	/* The reader is running before the first start. */
	while (!atomic_load(shared))
		usleep(1000);
	reads_before = atomic_load(shared);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 3000 && elapsed < 1.5; i++) {
		fd = runtime_lock(rundir, &holder);
		if (fd == -EBUSY) {
			busy++;
		} else {
			ck_assert_int_ge(fd, 0);
			seen = runtime_daemon_pid(rundir);
			wrong += seen != me;
			close(fd);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		elapsed = (double)(t.tv_sec - t0.tv_sec) +
			  (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
	}
	reads = atomic_load(shared) - reads_before;
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	munmap((void *)shared, sizeof(*shared));
	ck_assert_msg(!busy, "%d of %d starts refused while secmemctl looked",
		      busy, i);
	ck_assert_msg(!wrong, "%d times the holder was not reported", wrong);
	ck_assert_msg(i >= 200 && reads >= 200,
		      "too little overlap to tell: %d starts, %lu reads in %.1f s",
		      i, reads, elapsed);
}
END_TEST

START_TEST(history_keeps_the_last)
{
	struct history h = { 0 }, back;
	char reason[32];
	int i;

	for (i = 0; i < RUNTIME_HISTORY + 3; i++) {
		snprintf(reason, sizeof(reason), "decision %d", i);
		history_add(&h, i, reason);
	}
	ck_assert_int_eq(mkdir(rundir, 0755), 0);
	ck_assert_int_eq(runtime_write_history(rundir, &h), 0);
	ck_assert_int_eq(runtime_read_history(rundir, &back), 0);
	ck_assert_uint_eq(back.count, RUNTIME_HISTORY);
	ck_assert_str_eq(back.e[0].reason, "decision 3");
	ck_assert_int_eq(back.e[0].when, 3);
	ck_assert_str_eq(back.e[RUNTIME_HISTORY - 1].reason, "decision 18");
}
END_TEST

/*
 * file_replace(): the mode asked for under any umask, the whole contents,
 * no temporary file left, a symbolic link replaced and not followed.
 */
START_TEST(file_replace_is_whole)
{
	char path[PATH_MAX + 32], target[PATH_MAX + 32], tmp[PATH_MAX + 32];
	char buf[64];
	struct stat st;
	mode_t old = umask(077);

	snprintf(path, sizeof(path), "%s/file", root);
	snprintf(tmp, sizeof(tmp), "%s/.file.tmp", root);
	snprintf(target, sizeof(target), "%s/target", root);
	ck_assert_int_eq(file_replace(path, "one\n", 4, 0644), 0);
	ck_assert_int_eq(file_replace(path, "two\n", 4, 0644), 0);
	umask(old);
	ck_assert_str_eq(fake_read(root, "file", buf, sizeof(buf)), "two");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	/* A link at the path: replaced, its target untouched. */
	fake_write(root, "target", "target\n");
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(file_replace(path, "three\n", 6, 0600), 0);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_str_eq(fake_read(root, "file", buf, sizeof(buf)), "three");
	ck_assert_str_eq(fake_read(root, "target", buf, sizeof(buf)), "target");
	/* A directory that does not exist: an error, nothing left behind. */
	snprintf(path, sizeof(path), "%s/nodir/file", root);
	ck_assert_int_eq(file_replace(path, "x", 1, 0644), -ENOENT);
}
END_TEST

/* The binary: exit statuses and messages (SECMEMCTL set by make). */
START_TEST(secmemctl_binary)
{
	const char *bin = getenv("SECMEMCTL");
	char out[8192], errout[1024];
	char *st[] = { (char *)bin, "--sysfs-root", root, "--runtime-dir",
		       rundir, "status", "--json", NULL };
	char *set[] = { (char *)bin, "--sysfs-root", root, "set",
			"pool_target", "12X", "--node", "0", NULL };
	char *nofeat[] = { (char *)bin, "--sysfs-root", "/nonexistent",
			   "status", NULL };
	char *usage[] = { (char *)bin, "frobnicate", NULL };
	char *badnode[] = { (char *)bin, "set", "pool_target", "1M", "--node",
			    "x", NULL };
	char *sethib[] = { (char *)bin, "--sysfs-root", root, "--runtime-dir",
			   rundir, "set", "hibernation", "wipe", NULL };
	char *sethibnode[] = { (char *)bin, "--sysfs-root", root, "set",
			       "hibernation", "refuse", "--node", "1", NULL };
	char *text[] = { (char *)bin, "--sysfs-root", root, "--runtime-dir",
			 rundir, "status", NULL };
	char buf[64], path[PATH_MAX + 64];

	ck_assert_msg(bin, "SECMEMCTL is not set");
	ck_assert_int_eq(run_capture(st, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_msg(!strncmp(out, "{\"flush_on_free\":\"immediate\"", 28), "%s", out);
	ck_assert_str_eq(errout, "");
	ck_assert_int_eq(run_capture(set, out, sizeof(out), errout, sizeof(errout)), 1);
	ck_assert_str_eq(errout, "secmemctl: pool_target: '12X' is not a size in [0, 1T] (e.g. 512K, 64M, 1G)\n");
	ck_assert_int_eq(run_capture(nofeat, out, sizeof(out), errout, sizeof(errout)), 3);
	ck_assert_int_eq(run_capture(usage, out, sizeof(out), errout, sizeof(errout)), 2);
	ck_assert_int_eq(run_capture(badnode, out, sizeof(out), errout, sizeof(errout)), 2);

	ck_assert_int_eq(run_capture(sethib, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_str_eq(errout, "");
	ck_assert_str_eq(fake_read(root, HIB, buf, sizeof(buf)), "wipe");
	ck_assert_int_eq(run_capture(text, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_msg(strstr(out, "\nhibernation: wipe    wiped_files: 0\n"), "%s", out);
	ck_assert_int_eq(run_capture(sethibnode, out, sizeof(out), errout, sizeof(errout)), 1);
	ck_assert_str_eq(errout, "secmemctl: hibernation is global: no --node\n");
	/* No knob: the kernel lacks the feature, status 3. */
	snprintf(path, sizeof(path), "%s/" HIB, root);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(run_capture(sethib, out, sizeof(out), errout, sizeof(errout)), 3);
	ck_assert_msg(strstr(errout, "this kernel has no hibernation policy"), "%s", errout);
	ck_assert_int_eq(run_capture(text, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_msg(strstr(out, "\nhibernation: absent\n"), "%s", out);
}
END_TEST

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* json_pretty(): systemd's layout; strings, however they look, untouched. */
START_TEST(json_pretty_layout)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	enum json_mode m;

	ck_assert_ptr_nonnull(f);
	json_pretty(f, "{\"a\":[1,{\"b\":\"x, y: {[\\\"\\\\\"}],\"c\":{},\"d\":[],\"e\":null}\n");
	fclose(f);
	ck_assert_str_eq(buf, "{\n"
			      "\t\"a\" : [\n"
			      "\t\t1,\n"
			      "\t\t{\n"
			      "\t\t\t\"b\" : \"x, y: {[\\\"\\\\\"\n"
			      "\t\t}\n"
			      "\t],\n"
			      "\t\"c\" : {},\n"
			      "\t\"d\" : [],\n"
			      "\t\"e\" : null\n"
			      "}\n");
	free(buf);
	ck_assert_int_eq(json_mode_parse(NULL, &m), 0);
	ck_assert_int_eq(m, JSON_SHORT);
	ck_assert_int_eq(json_mode_parse("pretty", &m), 0);
	ck_assert_int_eq(m, JSON_PRETTY);
	ck_assert_int_eq(json_mode_parse("off", &m), 0);
	ck_assert_int_eq(m, JSON_OFF);
	ck_assert_int_eq(json_mode_parse("", &m), -EINVAL);
	ck_assert_int_eq(json_mode_parse("Pretty", &m), -EINVAL);
}
END_TEST

/* --version, and a key set does not know: usage errors, sysfs unread. */
START_TEST(secmemctl_version_and_unknown_key)
{
	const char *bin = getenv("SECMEMCTL");
	char out[1024], errout[1024];
	char *version[] = { (char *)bin, "--version", NULL };
	char *nokernel[] = { (char *)bin, "--sysfs-root", "/nonexistent", "set",
			     "bogus", "1", NULL };
	char *kernel[] = { (char *)bin, "--sysfs-root", root, "set", "bogus",
			   "1", NULL };
	const char *msg = "secmemctl: set: unknown key 'bogus' (pool_target, watermark_low, watermark_high, flush_on_free, hibernation)\n";

	ck_assert_msg(bin, "SECMEMCTL is not set");
	ck_assert_int_eq(run_capture(version, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_str_eq(out, "secmemctl " SECMEM_VERSION "\n");
	ck_assert_str_eq(errout, "");
	/* Before sysfs: the same on a kernel without the pools. */
	ck_assert_int_eq(run_capture(nokernel, out, sizeof(out), errout, sizeof(errout)), 2);
	ck_assert_str_eq(errout, msg);
	ck_assert_int_eq(run_capture(kernel, out, sizeof(out), errout, sizeof(errout)), 2);
	ck_assert_str_eq(errout, msg);
	ck_assert_int_eq(ctl_set("/nonexistent", rundir, "bogus", "1", -1, err,
				 sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "unknown key 'bogus'"), "%s", err);
}
END_TEST

/* --json=short|pretty and --no-legend, as systemd's tools have them. */
START_TEST(secmemctl_json_modes_and_legend)
{
	const char *bin = getenv("SECMEMCTL");
	char out[8192], out2[8192], errout[1024];
	char *bare[] = { (char *)bin, "--sysfs-root", root, "--runtime-dir",
			 rundir, "status", "--json", NULL };
	char *shortj[] = { (char *)bin, "--sysfs-root", root, "--runtime-dir",
			   rundir, "status", "--json=short", NULL };
	char *pretty[] = { (char *)bin, "--sysfs-root", root, "--runtime-dir",
			   rundir, "status", "--json=pretty", NULL };
	char *off[] = { (char *)bin, "--sysfs-root", root, "--runtime-dir",
			rundir, "status", "--json=off", NULL };
	char *bad[] = { (char *)bin, "--sysfs-root", root, "status",
			"--json=long", NULL };
	char *secrets[] = { (char *)bin, "--sysfs-root", root, "secrets",
			    "--json=pretty", NULL };
	char *nolegend[] = { (char *)bin, "--sysfs-root", root, "secrets",
			     "--no-legend", NULL };
	char *statuslegend[] = { (char *)bin, "--sysfs-root", root, "status",
				 "--no-legend", NULL };

	ck_assert_msg(bin, "SECMEMCTL is not set");
	ck_assert_int_eq(run_capture(bare, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_int_eq(run_capture(shortj, out2, sizeof(out2), errout, sizeof(errout)), 0);
	ck_assert_str_eq(out, out2);
	ck_assert_msg(starts(out, "{\"flush_on_free\":\"immediate\","), "%s", out);
	ck_assert_int_eq(run_capture(pretty, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_msg(starts(out, "{\n\t\"flush_on_free\" : \"immediate\",\n"
			      "\t\"hibernation_policy\" : \"refuse\",\n") &&
		      strstr(out, "\n\t\"nodes\" : [\n\t\t{\n\t\t\t\"node\" : 0,\n") &&
		      strstr(out, "\n\t\"decisions\" : [],\n") &&
		      !strcmp(out + strlen(out) - 3, "\n}\n"),
		      "%s", out);
	ck_assert_int_eq(run_capture(off, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_msg(starts(out, "flush_on_free: immediate"), "%s", out);
	ck_assert_int_eq(run_capture(bad, out, sizeof(out), errout, sizeof(errout)), 2);
	ck_assert_str_eq(errout, "secmemctl: --json=long: one of short, pretty, off\n");
	ck_assert_int_eq(run_capture(secrets, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_msg(starts(out, "{\n\t\"secret_files\" : "), "%s", out);
	/* secrets --no-legend: the holders' rows and nothing else. */
	ck_assert_int_eq(run_capture(nolegend, out, sizeof(out), errout, sizeof(errout)), 0);
	ck_assert_msg(!strstr(out, "secret files") && !strstr(out, "PID") &&
		      !strstr(out, "SecretMem") && !strstr(out, "no process"),
		      "%s", out);
	/* status is a report, not a list: refused, and the message says so. */
	ck_assert_int_eq(run_capture(statuslegend, out, sizeof(out), errout, sizeof(errout)), 2);
	ck_assert_str_eq(errout, "secmemctl: status is a report, not a listing: --no-legend is for status --units and secrets\n");
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("daemon-ctl");
	TCase *tc = tcase_create("ctl");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nodes_and_missing_feature);
	tcase_add_test(tc, read_values);
	tcase_add_test(tc, read_hibernation_knob);
	tcase_add_test(tc, hibernation_knob_absent);
	tcase_add_test(tc, write_values);
	tcase_add_test(tc, set_node_grows_high_first);
	tcase_add_test(tc, set_node_shrinks_low_first);
	tcase_add_test(tc, set_node_skips_unchanged);
	tcase_add_test(tc, status_json_exact);
	tcase_add_test(tc, status_table);
	tcase_add_test(tc, status_hibernation);
	tcase_add_test(tc, status_without_feature);
	tcase_add_test(tc, secrets_json_exact);
	tcase_add_test(tc, secrets_table);
	tcase_add_test(tc, secrets_without_proc);
	tcase_add_test(tc, set_checks_then_writes);
	tcase_add_test(tc, set_refusals_change_nothing);
	tcase_add_test(tc, set_hibernation_refusals);
	tcase_add_test(tc, lock_keeps_second_instance_out);
	tcase_add_test(tc, lock_file_is_private);
	tcase_add_test(tc, other_users_cannot_block_the_lock);
	tcase_add_test(tc, lock_file_of_another_user_is_refused);
	tcase_add_test(tc, status_does_not_race_a_starting_daemon);
	tcase_add_test(tc, history_keeps_the_last);
	tcase_add_test(tc, file_replace_is_whole);
	tcase_add_test(tc, secmemctl_binary);
	tcase_add_test(tc, json_pretty_layout);
	tcase_add_test(tc, secmemctl_version_and_unknown_key);
	tcase_add_test(tc, secmemctl_json_modes_and_legend);
	suite_add_tcase(s, tc);
	return s;
}
