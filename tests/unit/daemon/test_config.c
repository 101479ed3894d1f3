// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmem.conf parser: every error case with the line and key it reports,
 * inheritance between [global] and [nodeN], and the value rules.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "fake_sysfs.h"
#include "sysfs.h"
#include "units.h"

#define M (UINT64_C(1) << 20)

static struct config_errors errs;

static int parse(const char *text, struct config *cfg)
{
	return config_parse_buffer(text, strlen(text), cfg, &errs);
}

/* Parse @text, expect exactly one error on @line with @key and @msg. */
#define ck_one_error(text, line_, key_, msg_)                                  \
	do {                                                                   \
		struct config c_;                                              \
		ck_assert_int_eq(parse(text, &c_), -1);                        \
		ck_assert_uint_eq(errs.count, 1);                              \
		ck_assert_uint_eq(errs.err[0].line, line_);                    \
		ck_assert_str_eq(errs.err[0].key, key_);                       \
		ck_assert_msg(strstr(errs.err[0].msg, msg_),                   \
			      "message '%s' lacks '%s'", errs.err[0].msg,      \
			      msg_);                                           \
	} while (0)

static struct config parse_ok(const char *text)
{
	struct config cfg;
	int r = parse(text, &cfg);

	ck_assert_msg(r == 0, "unexpected error: line %u: %s: %s",
		      errs.count ? errs.err[0].line : 0,
		      errs.count ? errs.err[0].key : "",
		      errs.count ? errs.err[0].msg : "");
	return cfg;
}

START_TEST(empty_is_defaults)
{
	struct config cfg = parse_ok(""), def;

	config_defaults(&def);
	ck_assert_mem_eq(&cfg, &def, sizeof(cfg));
	ck_assert_uint_eq(def.node[0].pool_target, 32 * M);
	ck_assert_int_eq(def.flush_on_free, FLUSH_IMMEDIATE);
	ck_assert_int_eq(def.hibernation, HIBERNATION_REFUSE);
	ck_assert_int_eq(def.on_exit, EXIT_KEEP);
}
END_TEST

START_TEST(shipped_config_parses)
{
	struct config cfg;

	ck_assert_int_eq(config_parse_file(SRC_TOP "/conf/secmem.conf", &cfg,
					   &errs), 0);
	ck_assert_uint_eq(errs.count, 0);
	/* Documented there, commented out: the kernel's default. */
	ck_assert_int_eq(cfg.hibernation, HIBERNATION_REFUSE);
}
END_TEST

/* The shipped file shows the hibernation key with its default. */
START_TEST(shipped_config_documents_hibernation)
{
	char text[8192];
	FILE *f = fopen(SRC_TOP "/conf/secmem.conf", "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	ck_assert_msg(strstr(text, "\n#hibernation = refuse\n"),
		      "no '#hibernation = refuse' line");
	ck_assert_msg(strstr(text, "SIGBUS"), "wipe's effect not explained");
}
END_TEST

START_TEST(hibernation_values)
{
	enum hibernation_policy h = HIBERNATION_WIPE;

	ck_assert_int_eq(parse_ok("[global]\nhibernation = wipe\n").hibernation,
			 HIBERNATION_WIPE);
	ck_assert_int_eq(parse_ok("[global]\nhibernation = refuse\n").hibernation,
			 HIBERNATION_REFUSE);
	ck_assert_int_eq(parse_ok("[global]\npool_target = 16M\n").hibernation,
			 HIBERNATION_REFUSE);
	/* Beside flush_on_free, each its own. */
	ck_assert_int_eq(parse_ok("[global]\nflush_on_free = deferred\n"
				  "hibernation = wipe\n").flush_on_free,
			 FLUSH_DEFERRED);
	ck_assert_int_eq(hibernation_policy_parse("refuse", &h), 0);
	ck_assert_int_eq(h, HIBERNATION_REFUSE);
	ck_assert_int_eq(hibernation_policy_parse("Wipe", &h), -EINVAL);
	ck_assert_int_eq(hibernation_policy_parse("", &h), -EINVAL);
	ck_assert_int_eq(h, HIBERNATION_REFUSE);
	ck_assert_str_eq(hibernation_policy_name(HIBERNATION_WIPE), "wipe");
	ck_assert_str_eq(hibernation_policy_name(HIBERNATION_REFUSE), "refuse");
}
END_TEST

/*
 * A bad hibernation value in a file: FILE:LINE: KEY: message, and the
 * configuration in force (here with wipe) stays as it was.
 */
START_TEST(bad_hibernation_keeps_old_config)
{
	char path[] = "/tmp/secmem-test-XXXXXX", line[256], want[256];
	struct config cfg = parse_ok("[global]\nhibernation = wipe\n"
				     "pool_target = 16M\n"),
		      before = cfg;
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("[global]\npool_target = 48M\n\nhibernation = suspend\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(config_parse_file(path, &cfg, &errs), -1);
	ck_assert_uint_eq(errs.count, 1);
	config_error_format(path, &errs.err[0], line, sizeof(line));
	snprintf(want, sizeof(want),
		 "%s:4: hibernation: 'suspend' is not one of: refuse, wipe",
		 path);
	unlink(path);
	ck_assert_str_eq(line, want);
	ck_assert_mem_eq(&cfg, &before, sizeof(cfg));
	ck_assert_int_eq(cfg.hibernation, HIBERNATION_WIPE);
	ck_assert_uint_eq(cfg.node[0].pool_target, 16 * M);
}
END_TEST

START_TEST(global_values_reach_every_node)
{
	struct config cfg = parse_ok("# comment\n"
				     "[global]\n"
				     "pool_target = 48M\n"
				     "watermark_high = 1g ; inline comment\n"
				     "flush_on_free = deferred\n"
				     "on_exit = restore\n"
				     "log_level = debug\n"
				     "pressure_some_avg10 = 12.5\n"
				     "pressure_full_avg10 = 0\n"
				     "pressure_trigger = full 50000 2000000\n"
				     "decay_interval = 2m\n");

	ck_assert_uint_eq(cfg.node[0].pool_target, 48 * M);
	ck_assert_uint_eq(cfg.node[CONFIG_MAX_NODES - 1].pool_target, 48 * M);
	ck_assert_uint_eq(cfg.node[5].watermark_high, 1024 * M);
	ck_assert_int_eq(cfg.flush_on_free, FLUSH_DEFERRED);
	ck_assert_int_eq(cfg.on_exit, EXIT_RESTORE);
	ck_assert_int_eq(cfg.log_level, LOG_DEBUG);
	ck_assert_uint_eq(cfg.pressure_some_avg10, 1250);
	ck_assert_uint_eq(cfg.pressure_full_avg10, 0);
	ck_assert_int_eq(cfg.pressure_trigger.kind, PSI_FULL);
	ck_assert_uint_eq(cfg.pressure_trigger.stall_us, 50000);
	ck_assert_uint_eq(cfg.pressure_trigger.window_us, 2000000);
	ck_assert_uint_eq(cfg.decay_interval_ms, 120000);
}
END_TEST

START_TEST(node_overrides_only_its_keys_in_any_order)
{
	/* [node1] comes first: [global] must still apply beneath it. */
	struct config cfg = parse_ok("[node1]\n"
				     "pool_target = 128M\n"
				     "watermark_high = 256M\n"
				     "[global]\n"
				     "pool_max = 512M\n"
				     "pool_target = 16M\n");

	ck_assert_uint_eq(cfg.node[1].pool_target, 128 * M);
	ck_assert_uint_eq(cfg.node[1].pool_max, 512 * M);
	ck_assert_uint_eq(cfg.node[1].watermark_high, 256 * M);
	ck_assert_uint_eq(cfg.node[0].pool_target, 16 * M);
	ck_assert_uint_eq(cfg.node[0].watermark_high, 64 * M);
	ck_assert_uint_eq(cfg.node[2].pool_max, 512 * M);
}
END_TEST

START_TEST(failure_leaves_config_untouched)
{
	struct config cfg, before;

	memset(&cfg, 0x5a, sizeof(cfg));
	before = cfg;
	ck_assert_int_eq(parse("[global]\npool_target = 8M\nbogus = 1\n",
			       &cfg), -1);
	ck_assert_mem_eq(&cfg, &before, sizeof(cfg));
}
END_TEST

START_TEST(unknown_key)
{
	ck_one_error("[global]\n\npool_targe = 1M\n", 3, "pool_targe",
		     "unknown key in [global]");
	ck_one_error("[node3]\nfoo = 1\n", 2, "foo", "unknown key in [node3]");
}
END_TEST

START_TEST(unknown_section)
{
	ck_one_error("[global]\n[pool]\npool_target = 1M\n", 2, "",
		     "[pool]: unknown section");
	ck_one_error("[node01]\n", 1, "", "unknown section");
	ck_one_error("[nodex]\n", 1, "", "unknown section");
	ck_one_error("[node]\n", 1, "", "unknown section");
	ck_one_error("[node64]\n", 1, "", "out of range [0, 63]");
}
END_TEST

START_TEST(duplicate_section)
{
	ck_one_error("[node0]\npool_target = 1M\n[global]\n[node0]\n", 4, "",
		     "duplicate section (first on line 1)");
	/* Even when the copy is empty and directly follows. */
	ck_one_error("[global]\n[global]\n", 2, "", "first on line 1");
}
END_TEST

START_TEST(duplicate_key)
{
	ck_one_error("[global]\npool_max = 1G\n; x\npool_max = 2G\n", 4,
		     "pool_max", "duplicate key (first on line 2)");
	ck_one_error("[global]\nlog_level = info\nlog_level = debug\n", 3,
		     "log_level", "first on line 2");
	ck_one_error("[global]\nhibernation = wipe\nhibernation = refuse\n", 3,
		     "hibernation", "duplicate key (first on line 2)");
	/* The same key in [global] and [node0] is inheritance, not a dup. */
	parse_ok("[global]\npool_max = 1G\n[node0]\npool_max = 2G\n");
}
END_TEST

START_TEST(bad_sizes)
{
	ck_one_error("[global]\npool_max = 12X\n", 2, "pool_max",
		     "'12X' is not a size");
	ck_one_error("[global]\npool_max = -1\n", 2, "pool_max",
		     "not a size");
	ck_one_error("[global]\npool_max = 1.5G\n", 2, "pool_max",
		     "not a size");
	ck_one_error("[global]\npool_max = 1 G\n", 2, "pool_max",
		     "not a size");
	ck_one_error("[global]\npool_max = 1MB\n", 2, "pool_max",
		     "not a size");
	ck_one_error("[global]\npool_max =\n", 2, "pool_max", "empty value");
}
END_TEST

START_TEST(sizes_out_of_range)
{
	ck_one_error("[global]\npool_max = 2T\n", 2, "pool_max",
		     "2T is out of range [0, 1T]");
	ck_one_error("[global]\npool_max = 99999999999999999999\n", 2,
		     "pool_max", "out of range");
	ck_one_error("[global]\npool_max = 17179869184G\n", 2, "pool_max",
		     "out of range");
	ck_one_error("[node2]\ngrow_step = 0\n", 2, "grow_step",
		     "out of range [1, 1T]");
	parse_ok("[global]\npool_max = 1T\nwatermark_high = 1T\n");
}
END_TEST

START_TEST(low_above_high)
{
	/* Reported on the line that set either last. */
	ck_one_error("[global]\nwatermark_low = 96M\nwatermark_high = 16M\n"
		     "pool_target = 16M\n",
		     3, "watermark_high",
		     "watermark_low 96M is above watermark_high 16M ([global])");
	/* Across sections: [node1]'s low against [global]'s high. */
	ck_one_error("[global]\nwatermark_high = 64M\n[node1]\n"
		     "watermark_low = 128M\n",
		     4, "watermark_low", "([node1])");
}
END_TEST

START_TEST(min_above_max)
{
	ck_one_error("[global]\npool_max = 16M\npool_min = 32M\n"
		     "pool_target = 16M\n",
		     3, "pool_min", "pool_min 32M is above pool_max 16M");
}
END_TEST

START_TEST(target_outside_limits)
{
	ck_one_error("[node0]\npool_target = 512M\n", 2, "pool_target",
		     "pool_target 512M is above pool_max 256M ([node0])");
	ck_one_error("[global]\npool_min = 16M\npool_target = 8M\n", 3,
		     "pool_target", "pool_min 16M is above pool_target 8M");
	ck_one_error("[global]\nwatermark_low = 48M\n", 2, "watermark_low",
		     "watermark_low 48M is above pool_target 32M");
	ck_one_error("[global]\npool_target = 128M\n", 2, "pool_target",
		     "pool_target 128M is above watermark_high 64M");
}
END_TEST

START_TEST(error_in_global_reported_once)
{
	struct config cfg;

	/* [node0] does not touch the keys in conflict: one error only. */
	ck_assert_int_eq(parse("[global]\npool_min = 300M\n[node0]\n"
			       "grow_step = 1M\n",
			       &cfg), -1);
	ck_assert_uint_eq(errs.count, 1);
	ck_assert_uint_eq(errs.err[0].line, 2);
}
END_TEST

START_TEST(global_only_keys)
{
	ck_one_error("[node0]\nflush_on_free = deferred\n", 2,
		     "flush_on_free", "only allowed in [global]");
	ck_one_error("[node0]\non_exit = keep\n", 2, "on_exit",
		     "only allowed in [global]");
	ck_one_error("[node1]\nhibernation = wipe\n", 2, "hibernation",
		     "only allowed in [global]");
}
END_TEST

START_TEST(key_outside_section)
{
	ck_one_error("pool_target = 1M\n[global]\n", 1, "pool_target",
		     "outside of any section");
}
END_TEST

START_TEST(bad_enums)
{
	ck_one_error("[global]\nflush_on_free = lazy\n", 2, "flush_on_free",
		     "not one of: immediate, deferred");
	ck_one_error("[global]\non_exit = drop\n", 2, "on_exit",
		     "not one of: keep, restore");
	ck_one_error("[global]\nhibernation = yes\n", 2, "hibernation",
		     "'yes' is not one of: refuse, wipe");
	ck_one_error("[global]\nhibernation = \"wipe\"\n", 2, "hibernation",
		     "not one of: refuse, wipe");
	ck_one_error("[global]\nlog_level = verbose\n", 2, "log_level",
		     "not one of: err, warning");
}
END_TEST

START_TEST(bad_pressure)
{
	ck_one_error("[global]\npressure_some_avg10 = 101\n", 2,
		     "pressure_some_avg10", "out of range [0, 100]");
	ck_one_error("[global]\npressure_full_avg10 = 1.234\n", 2,
		     "pressure_full_avg10", "not a percentage");
	ck_one_error("[global]\npressure_full_avg10 = 5%\n", 2,
		     "pressure_full_avg10", "not a percentage");
	ck_one_error("[global]\npressure_trigger = half 1 1000000\n", 2,
		     "pressure_trigger", "is not \"some|full");
	ck_one_error("[global]\npressure_trigger = some 100000\n", 2,
		     "pressure_trigger", "is not");
	ck_one_error("[global]\npressure_trigger = some 1 1000000 x\n", 2,
		     "pressure_trigger", "is not");
	ck_one_error("[global]\npressure_trigger = some 1000 100000\n", 2,
		     "pressure_trigger", "window 100000 us is out of range");
	ck_one_error("[global]\npressure_trigger = some 2000000 1000000\n", 2,
		     "pressure_trigger", "stall 2000000 us is out of range");
	ck_one_error("[global]\npressure_trigger = some 0 1000000\n", 2,
		     "pressure_trigger", "stall 0 us");
}
END_TEST

START_TEST(bad_durations)
{
	ck_one_error("[global]\ndecay_interval = 500ms\n", 2,
		     "decay_interval", "out of range [1s, 60m]");
	ck_one_error("[global]\ndecay_interval = 61m\n", 2, "decay_interval",
		     "out of range");
	ck_one_error("[global]\ndecay_interval = 10h\n", 2, "decay_interval",
		     "not a duration");
	ck_assert_uint_eq(parse_ok("[global]\ndecay_interval = 1500ms\n")
				  .decay_interval_ms,
			  1500);
}
END_TEST

START_TEST(lines_inih_would_misread)
{
	ck_one_error("[global]\npool_target = 16M\n  pool_max = 1G\n", 3, "",
		     "indented line");
	ck_one_error("[global]\nno equals sign\n", 2, "", "syntax error");
	ck_one_error("[global\n", 1, "", "syntax error");
	/* Indented comments and blank lines are fine. */
	parse_ok("[global]\n   # note\n\t\n\npool_target = 16M\n");
}
END_TEST

START_TEST(nul_and_long_lines)
{
	static const char nul[] = "[global]\npool_target = 1\0M\n";
	char big[512];
	struct config cfg;

	ck_assert_int_eq(config_parse_buffer(nul, sizeof(nul) - 1, &cfg, &errs),
			 -1);
	ck_assert_uint_eq(errs.count, 1);
	ck_assert_uint_eq(errs.err[0].line, 2);
	ck_assert_str_eq(errs.err[0].msg, "NUL byte in line");

	snprintf(big, sizeof(big), "[global]\n\n; %0300d\npool_target = 1M\n",
		 0);
	ck_one_error(big, 3, "", "line longer than");
}
END_TEST

START_TEST(every_error_listed_in_order)
{
	struct config cfg;

	ck_assert_int_eq(parse("[global]\n"	/* 1 */
			       "a = 1\n"	/* 2 */
			       "pool_max = x\n"	/* 3 */
			       "[global]\n"	/* 4 */
			       "[node1]\n"	/* 5 */
			       "log_level = info\n", /* 6 */
			       &cfg),
			 -1);
	ck_assert_uint_eq(errs.count, 4);
	ck_assert_uint_eq(errs.err[0].line, 2);
	ck_assert_uint_eq(errs.err[1].line, 3);
	ck_assert_uint_eq(errs.err[2].line, 4);
	ck_assert_uint_eq(errs.err[3].line, 6);
}
END_TEST

START_TEST(too_many_errors_are_counted)
{
	char text[4096] = "[global]\n";
	struct config cfg;
	int i;

	for (i = 0; i < CONFIG_MAX_ERRORS + 5; i++)
		strcat(text, "x = 1\n");
	ck_assert_int_eq(parse(text, &cfg), -1);
	ck_assert_uint_eq(errs.count, CONFIG_MAX_ERRORS);
	ck_assert_uint_eq(errs.dropped, 5);
}
END_TEST

START_TEST(missing_file)
{
	struct config cfg;
	char line[256];

	ck_assert_int_eq(config_parse_file("/nonexistent/secmem.conf", &cfg,
					   &errs), -1);
	ck_assert_uint_eq(errs.count, 1);
	ck_assert_uint_eq(errs.err[0].line, 0);
	config_error_format("/nonexistent/secmem.conf", &errs.err[0], line,
			    sizeof(line));
	ck_assert_str_eq(line, "/nonexistent/secmem.conf: cannot read: No such file or directory");
}
END_TEST

/*
 * A config path that is not a regular file: rejected at once with a message
 * naming the file type, never blocking (a FIFO with no writer would block
 * open() forever).  alarm() turns a hang into a failure.
 */
static void ck_not_regular(const char *path, const char *msg)
{
	struct config cfg = { .decay_interval_ms = 4242 };
	char line[512], want[512];

	alarm(5);
	ck_assert_int_eq(config_parse_file(path, &cfg, &errs), -1);
	alarm(0);
	ck_assert_uint_eq(errs.count, 1);
	ck_assert_uint_eq(cfg.decay_interval_ms, 4242);
	config_error_format(path, &errs.err[0], line, sizeof(line));
	snprintf(want, sizeof(want), "%s: %s", path, msg);
	ck_assert_str_eq(line, want);
}

START_TEST(fifo_is_rejected_without_blocking)
{
	char dir[] = "/tmp/secmem-test-XXXXXX", path[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo.conf", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_not_regular(path, "not a regular file (a FIFO)");
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(directory_is_rejected)
{
	char dir[] = "/tmp/secmem-test-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_not_regular(dir, "is a directory");
	rmdir(dir);
}
END_TEST

/* [nodeN] for a node the machine lacks, against a fake 2-node tree. */
START_TEST(nodes_missing_on_this_machine)
{
	bool present[CONFIG_MAX_NODES];
	char root[PATH_MAX], line[256];
	struct config cfg;
	int ignored;

	fake_sysfs_create(root, 2);
	ck_assert_int_eq(sysfs_nodes(root, present, &ignored), 0);
	fake_sysfs_destroy(root);

	cfg = parse_ok("[global]\npool_target = 16M\n");
	ck_assert_uint_eq(config_check_nodes(&cfg, present, &errs), 0);
	ck_assert_uint_eq(errs.count, 0);

	cfg = parse_ok("[global]\npool_target = 16M\n"
		       "[node1]\npool_target = 8M\n"
		       "\n[node5]\npool_target = 8M\n"
		       "[node2]\n");
	ck_assert_uint_eq(cfg.node_line[1], 3);
	ck_assert_uint_eq(cfg.node_line[5], 6);
	ck_assert_uint_eq(cfg.node_line[0], 0);
	/* node2 exists in the tree, but without a pool: not a pool node. */
	ck_assert_uint_eq(config_check_nodes(&cfg, present, &errs), 2);
	ck_assert_uint_eq(errs.count, 2);
	ck_assert_uint_eq(errs.err[0].line, 8);
	config_error_format("/etc/secmem.conf", &errs.err[1], line,
			    sizeof(line));
	ck_assert_str_eq(line, "/etc/secmem.conf:6: [node5]: this machine has no node 5 with an unmapped pool (pools on nodes: 0-1)");

	memset(present, 0, sizeof(present));
	present[0] = present[2] = present[3] = present[7] = true;
	ck_assert_uint_eq(config_check_nodes(&cfg, present, &errs), 2);
	ck_assert_msg(strstr(errs.err[0].msg, "(pools on nodes: 0, 2-3, 7)"),
		      "%s", errs.err[0].msg);
}
END_TEST

START_TEST(error_format)
{
	struct config cfg;
	char line[256];

	ck_assert_int_eq(parse("[global]\npool_max = 12X\n", &cfg), -1);
	config_error_format("/etc/secmem.conf", &errs.err[0], line,
			    sizeof(line));
	ck_assert_str_eq(line, "/etc/secmem.conf:2: pool_max: '12X' is not a size (e.g. 4096, 512K, 64M, 1G)");
}
END_TEST

START_TEST(units)
{
	char buf[SIZE_STR_MAX];
	uint64_t v;
	unsigned int pct;

	ck_assert_int_eq(parse_size("512k", &v), 0);
	ck_assert_uint_eq(v, 512 * 1024);
	ck_assert_int_eq(parse_size("16777215T", &v), 0);
	ck_assert_int_eq(parse_size("16777216T", &v), -ERANGE);
	ck_assert_int_eq(parse_size("18446744073709551616", &v), -ERANGE);
	ck_assert_int_eq(parse_size("", &v), -EINVAL);
	ck_assert_int_eq(parse_size("+1", &v), -EINVAL);
	ck_assert_int_eq(parse_size("1K ", &v), -EINVAL);
	ck_assert_str_eq(format_size(64 * M, buf, sizeof(buf)), "64M");
	ck_assert_str_eq(format_size(1536 * 1024, buf, sizeof(buf)), "1536K");
	ck_assert_str_eq(format_size(1000, buf, sizeof(buf)), "1000");
	ck_assert_str_eq(format_size(0, buf, sizeof(buf)), "0");
	ck_assert_str_eq(format_size(UINT64_C(1) << 40, buf, sizeof(buf)),
			 "1T");
	ck_assert_int_eq(parse_percent("100", &pct), 0);
	ck_assert_uint_eq(pct, 10000);
	ck_assert_int_eq(parse_percent("100.01", &pct), -ERANGE);
	ck_assert_int_eq(parse_percent("3.05", &pct), 0);
	ck_assert_uint_eq(pct, 305);
	ck_assert_int_eq(parse_percent("3.", &pct), -EINVAL);
	ck_assert_int_eq(parse_duration_ms("7", &v), 0);
	ck_assert_uint_eq(v, 7000);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("daemon-config");
	TCase *tc = tcase_create("config");

	tcase_add_test(tc, empty_is_defaults);
	tcase_add_test(tc, shipped_config_parses);
	tcase_add_test(tc, shipped_config_documents_hibernation);
	tcase_add_test(tc, hibernation_values);
	tcase_add_test(tc, bad_hibernation_keeps_old_config);
	tcase_add_test(tc, global_values_reach_every_node);
	tcase_add_test(tc, node_overrides_only_its_keys_in_any_order);
	tcase_add_test(tc, failure_leaves_config_untouched);
	tcase_add_test(tc, unknown_key);
	tcase_add_test(tc, unknown_section);
	tcase_add_test(tc, duplicate_section);
	tcase_add_test(tc, duplicate_key);
	tcase_add_test(tc, bad_sizes);
	tcase_add_test(tc, sizes_out_of_range);
	tcase_add_test(tc, low_above_high);
	tcase_add_test(tc, min_above_max);
	tcase_add_test(tc, target_outside_limits);
	tcase_add_test(tc, error_in_global_reported_once);
	tcase_add_test(tc, global_only_keys);
	tcase_add_test(tc, key_outside_section);
	tcase_add_test(tc, bad_enums);
	tcase_add_test(tc, bad_pressure);
	tcase_add_test(tc, bad_durations);
	tcase_add_test(tc, lines_inih_would_misread);
	tcase_add_test(tc, nul_and_long_lines);
	tcase_add_test(tc, every_error_listed_in_order);
	tcase_add_test(tc, too_many_errors_are_counted);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, fifo_is_rejected_without_blocking);
	tcase_add_test(tc, directory_is_rejected);
	tcase_add_test(tc, nodes_missing_on_this_machine);
	tcase_add_test(tc, error_format);
	tcase_add_test(tc, units);
	suite_add_tcase(s, tc);
	return s;
}
