// SPDX-License-Identifier: GPL-2.0
/*
 * secmemd and secmemctl on the real kernel: the daemon (daemon/, see
 * docs/secmemd.md and secmemd(8)) against the real sysfs knobs, the real
 * "secmem" netlink events and real memory pressure. Issue 8's guest test.
 *
 * One daemon at a time is started from /secmem/bin (SECMEMD and SECMEMCTL
 * in the environment override the paths) with a configuration written to
 * /tmp/secmemd_test/secmem.conf; its standard error, where it logs when not
 * under systemd, goes to /tmp/secmemd_test/secmemd.log, which the checks
 * read. The sub-tests run in this order and build on each other (the
 * daemon of one is the daemon of the next; one that finds it dead starts
 * another):
 *
 *  1 start_applies_config: the knobs of every node read back as configured,
 *    rounded up to whole pageblocks (9M -> 10M, ...), a [nodeN] section on
 *    a second node if there is one, flush_on_free; a SIGHUP with the same
 *    file then changes nothing (no decision in the log).
 *  2 grows_on_low_watermark: with the pool filled, unmapped memory is
 *    allocated on a node until its free pool is below watermark_low: the
 *    kernel's LOW_WATERMARK event reaches the daemon (log, debug level),
 *    which grows pool_target, and says why.
 *  3 sighup_reloads_config: a changed file (other sizes, flush_on_free
 *    deferred) is in sysfs after SIGHUP.
 *  4 sighup_rejects_bad_config: a file with two errors is refused on
 *    SIGHUP: each error is logged as FILE:LINE: KEY: ..., the daemon keeps
 *    running and sysfs keeps the previous values.
 *  5 sigkill_restart_continues: a second instance is refused (exit 4)
 *    while one runs; after SIGKILL the pid file is stale, secmemctl says no
 *    daemon, a new one starts, decides from what sysfs says now (a target
 *    changed while no daemon ran), and grows on a low watermark again.
 *  6 secmemctl_status_json: `secmemctl status --json` reports the knobs,
 *    the pool statistics, flush_on_free, pageblock_bytes and the daemon's
 *    pid as sysfs and the pid file say.
 *  7 shrinks_under_memory_pressure: `secmemctl set pool_target` makes a
 *    big pool (1/8 of each node); a child then populates anonymous memory
 *    (what was available with the pool filled, plus a quarter of the pool):
 *    the kernel's shrinker and PSI see the pressure, and the daemon must
 *    shrink pool_target (kernel RECLAIM event or PSI trigger). It comes
 *    late: PSI averages take tens of seconds to decay after it, and
 *    refilling the pool can bring more RECLAIM events meanwhile, so it
 *    ends by waiting for memory to calm down.
 *  8 sigterm_on_exit: SIGTERM with on_exit = keep leaves every knob as it
 *    was; with on_exit = restore every knob is 0, flush_on_free is
 *    immediate and the pool empties; both exit 0 and free the lock.
 *  9 knobs_restored: everything back to 0, the pool empties.
 *
 * Skips (exit 4) without /sys/kernel/mm/unmapped, when not root, or when
 * secmemd or secmemctl is not installed. Puts every knob back to 0 and
 * flush_on_free back to what it was at the end, on exit and on SIGTERM,
 * after killing any daemon it started.
 *
 * Takes about 60 s under TCG with the debug kernel (1 GiB), most of it in
 * 7 (the hog, then waiting for calm).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "upool.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define MiB		UPOOL_MiB

#define TEST_DIR	"/tmp/secmemd_test"
#define CONF		TEST_DIR "/secmem.conf"
#define LOG		TEST_DIR "/secmemd.log"
#define RUNDIR		"/run/secmemd"
#define PIDFILE		RUNDIR "/secmemd.pid"

#define START_TIMEOUT	20.0	/* until the daemon logs "started:" */
#define APPLY_TIMEOUT	10.0	/* until sysfs shows a decision */
#define FILL_TIMEOUT	90.0	/* until a pool is filled */
#define EVENT_TIMEOUT	30.0	/* until an event's decision is in sysfs */
#define HOG_TIMEOUT	120.0	/* the memory hog, at most */
#define HOG_CHUNK	(8 * MiB)

enum { T_START, T_GROW, T_RELOAD, T_BAD, T_KILL, T_JSON, T_SHRINK, T_TERM,
       T_RESTORED, NR_TESTS };

static const char *const test_names[NR_TESTS] = {
	[T_START] = "start_applies_config: sysfs = the configuration, rounded to pageblocks",
	[T_GROW] = "grows_on_low_watermark: a real LOW_WATERMARK event grows pool_target",
	[T_SHRINK] = "shrinks_under_memory_pressure: a memory hog makes the daemon shrink pool_target",
	[T_RELOAD] = "sighup_reloads_config: a changed configuration is in sysfs after SIGHUP",
	[T_BAD] = "sighup_rejects_bad_config: errors name file and line, the old values stay",
	[T_KILL] = "sigkill_restart_continues: a stale pid file does not block a restart",
	[T_JSON] = "secmemctl_status_json: secmemctl status --json reports what sysfs says",
	[T_TERM] = "sigterm_on_exit: keep leaves the knobs, restore the kernel's defaults",
	[T_RESTORED] = "knobs_restored: every knob back to 0, the pool empties",
};

static const char *secmemd_bin, *secmemctl_bin;
static u64_t pb;
static pid_t daemon_pid;		/* the running daemon, or 0 */
static int cpu_node = -1;		/* a node with CPUs, for allocations */

/* What the configurations say, in bytes (before the kernel rounds). */
struct conf_vals {
	u64_t target, low, high, max, step;
	u64_t node_target;		/* [nodeN] pool_target of the 2nd node */
	const char *flush;
	const char *on_exit;
};

static const struct conf_vals conf_a = {
	.target = 9 * MiB, .low = 3 * MiB, .high = 33 * MiB, .max = 64 * MiB,
	.step = 4 * MiB, .node_target = 13 * MiB, .flush = "immediate",
	.on_exit = "keep",
};

static const struct conf_vals conf_b = {
	.target = 16 * MiB, .low = 6 * MiB, .high = 40 * MiB, .max = 96 * MiB,
	.step = 2 * MiB, .node_target = 0, .flush = "deferred",
	.on_exit = "keep",
};

static u64_t round_pb(u64_t v)
{
	return (v + pb - 1) / pb * pb;
}

/* --- the daemon's log -------------------------------------------------- */

static off_t log_mark(void)
{
	struct stat st;

	return stat(LOG, &st) ? 0 : st.st_size;
}

/* The log from @from on, NUL-terminated, in a static buffer. */
static const char *log_since(off_t from)
{
	static char buf[256 * 1024];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	fd = open(LOG, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	n = pread(fd, buf, sizeof(buf) - 1, from);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static bool log_has(off_t from, const char *needle)
{
	return strstr(log_since(from), needle) != NULL;
}

/* Print the log since @from as diagnostics (the last 40 lines). */
static void log_dump(off_t from, const char *why)
{
	const char *s = log_since(from), *p;
	int lines = 0, skip;

	for (p = s; *p; p++)
		lines += *p == '\n';
	tap_diag("%s: secmemd's log since the start of this check (%d lines):", why, lines);
	for (skip = lines > 40 ? lines - 40 : 0; skip > 0 && (p = strchr(s, '\n')); skip--)
		s = p + 1;
	while (*s) {
		size_t n = strcspn(s, "\n");

		tap_diag("  | %.*s", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

/* --- processes ---------------------------------------------------------- */

static bool daemon_alive(void)
{
	int status;

	if (daemon_pid <= 0)
		return false;
	if (waitpid(daemon_pid, &status, WNOHANG) == daemon_pid) {
		tap_diag("secmemd (pid %d) is gone: %s %d", daemon_pid,
			 WIFSIGNALED(status) ? "signal" : "exit status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		daemon_pid = 0;
		return false;
	}
	return true;
}

/* Wait for @pid to exit; its wait status, or -1 after @timeout. */
static int wait_exit(pid_t pid, double timeout)
{
	double end = upool_now() + timeout;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 || upool_now() > end)
			return -1;
		upool_sleep_ms(50);
	}
}

static const char *status_str(int status)
{
	static char buf[64];

	if (status < 0)
		snprintf(buf, sizeof(buf), "still running");
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, sizeof(buf), "exit status %d", WEXITSTATUS(status));
	return buf;
}

/* Start secmemd -c CONF, logging to LOG. Its pid, or -1. */
static pid_t spawn_daemon(void)
{
	pid_t pid;
	int fd;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_diag("fork: %m");
		return -1;
	}
	if (pid)
		return pid;
	/* Never outlive the test, whatever kills it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(LOG, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	execl(secmemd_bin, "secmemd", "-c", CONF, (char *)NULL);
	dprintf(STDERR_FILENO, "secmemd_test: exec %s: %m\n", secmemd_bin);
	_exit(127);
}

/*
 * Start a daemon and wait until it says "started:". Sets daemon_pid; false
 * (with the log) if it did not start.
 */
static bool start_daemon(void)
{
	off_t mark = log_mark();
	double end = upool_now() + START_TIMEOUT;
	pid_t pid;
	int status;

	pid = spawn_daemon();
	if (pid < 0)
		return false;
	for (;;) {
		if (log_has(mark, "secmemd: started:")) {
			daemon_pid = pid;
			return true;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			tap_diag("secmemd did not start: %s", status_str(status));
			log_dump(mark, "start");
			return false;
		}
		if (upool_now() > end) {
			tap_diag("secmemd did not log \"started:\" within %.0f s", START_TIMEOUT);
			log_dump(mark, "start");
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return false;
		}
		upool_sleep_ms(50);
	}
}

static void kill_daemon(void)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	daemon_pid = 0;
}

/* A daemon for the next check, if the last one did not leave one. */
static bool ensure_daemon(void)
{
	if (daemon_alive())
		return true;
	tap_diag("no daemon running: starting one");
	return start_daemon();
}

/*
 * Wait until the daemon has dealt with everything sent to it so far: its
 * main loop takes one signal at a time, lowest number first, so once it
 * logs a SIGUSR1 sent now, a SIGHUP sent before has been handled in full.
 */
static bool daemon_sync(void)
{
	off_t mark = log_mark();
	int i;

	if (daemon_pid <= 0 || kill(daemon_pid, SIGUSR1))
		return false;
	for (i = 0; i < 200; i++) {
		if (log_has(mark, "pool settings changed from outside"))
			return true;
		upool_sleep_ms(50);
	}
	tap_diag("secmemd did not log the SIGUSR1 sent to it within 10 s");
	return false;
}

/*
 * Run secmemctl with the arguments in @args (NULL-terminated); its standard
 * output in @out (NUL-terminated), its wait status returned (-1 if it could
 * not run).
 */
static int run_ctl(char *out, size_t len, const char **args)
{
	const char *argv[8] = { "secmemctl" };
	int pfd[2], status;
	size_t got = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int i;

		for (i = 0; args[i] && i < 6; i++)
			argv[i + 1] = args[i];
		dup2(pfd[1], STDOUT_FILENO);
		execv(secmemctl_bin, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + got, len - 1 - got);

		if (n <= 0)
			break;
		got += n;
		if (got == len - 1)
			break;
	}
	out[got] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* Signal handling: kill the daemon, then upool's reset (saved handler). */
static struct sigaction upool_handler[NSIG];

static void on_fatal_signal(int sig)
{
	if (daemon_pid > 0)
		kill(daemon_pid, SIGKILL);
	if (upool_handler[sig].sa_handler != SIG_DFL &&
	    upool_handler[sig].sa_handler != SIG_IGN)
		upool_handler[sig].sa_handler(sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void at_exit_kill_daemon(void)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
		daemon_pid = 0;
	}
}

static void install_cleanup(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGALRM };
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	size_t i;

	/* upool's reset runs at exit after this kill (atexit is LIFO). */
	upool_install_restore();
	atexit(at_exit_kill_daemon);
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, &upool_handler[sigs[i]]);
}

/* --- configurations and sysfs ------------------------------------------ */

static __attribute__((format(printf, 1, 2))) bool write_conf(const char *fmt, ...)
{
	va_list ap;
	FILE *f;
	int r;

	f = fopen(CONF ".tmp", "we");
	if (!f) {
		tap_diag("cannot write " CONF ".tmp: %m");
		return false;
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	r = fclose(f);
	/* rename(): the daemon never reads half a file. */
	if (r || rename(CONF ".tmp", CONF)) {
		tap_diag("cannot write " CONF ": %m");
		return false;
	}
	return true;
}

static int second_node(void)
{
	return upool.nr_nodes > 1 ? upool.node[1].id : -1;
}

static bool write_conf_vals(const struct conf_vals *c)
{
	char node_sect[128] = "";
	int n2 = second_node();

	if (c->node_target && n2 >= 0)
		snprintf(node_sect, sizeof(node_sect), "\n[node%d]\npool_target = %lluK\n",
			 n2, c->node_target / 1024);
	return write_conf("# secmemd_test\n"
			  "[global]\n"
			  "pool_target = %lluK\n"
			  "pool_min = 0\n"
			  "pool_max = %lluK\n"
			  "watermark_low = %lluK\n"
			  "watermark_high = %lluK\n"
			  "grow_step = %lluK\n"
			  "flush_on_free = %s\n"
			  "pressure_some_avg10 = 10\n"
			  "pressure_full_avg10 = 5\n"
			  "pressure_trigger = some 150000 1000000\n"
			  "decay_interval = 10m\n"
			  "on_exit = %s\n"
			  "log_level = debug\n"
			  "%s",
			  c->target / 1024, c->max / 1024, c->low / 1024, c->high / 1024,
			  c->step / 1024, c->flush, c->on_exit, node_sect);
}

/* What node @node's knobs must read when configuration @c is applied. */
static void expected_knobs(const struct conf_vals *c, int node, u64_t k[UPOOL_NR_KNOBS])
{
	u64_t target = c->node_target && node == second_node() ? c->node_target : c->target;

	k[UPOOL_TARGET] = round_pb(target);
	k[UPOOL_LOW] = round_pb(c->low);
	k[UPOOL_HIGH] = round_pb(c->high);
}

static bool read_knobs(int node, u64_t k[UPOOL_NR_KNOBS])
{
	int i;

	for (i = 0; i < UPOOL_NR_KNOBS; i++)
		if (upool_knob_get(node, i, &k[i]))
			return false;
	return true;
}

/*
 * Wait until every node's knobs and flush_on_free are what @c says (or,
 * with @flush NULL, only the knobs); false with a diagnostic on timeout.
 */
static bool wait_applied(const struct conf_vals *c, double timeout, bool quiet)
{
	double end = upool_now() + timeout;
	u64_t want[UPOOL_NR_KNOBS], got[UPOOL_NR_KNOBS];
	char flush[32] = "?";
	int i, bad_node = -1;

	for (;;) {
		bool ok = true;

		for (i = 0; i < upool.nr_nodes && ok; i++) {
			int id = upool.node[i].id;

			expected_knobs(c, id, want);
			if (!read_knobs(id, got) || memcmp(want, got, sizeof(want))) {
				ok = false;
				bad_node = id;
			}
		}
		if (ok && !upool_flush_mode(flush, sizeof(flush)) && strcmp(flush, c->flush))
			ok = false;
		if (ok)
			return true;
		if (upool_now() > end)
			break;
		upool_sleep_ms(100);
	}
	if (!quiet) {
		if (bad_node >= 0 && read_knobs(bad_node, got)) {
			expected_knobs(c, bad_node, want);
			tap_diag("node%d: pool_target %llu, watermark_low %llu, watermark_high %llu; expected %llu, %llu, %llu",
				 bad_node, got[UPOOL_TARGET], got[UPOOL_LOW], got[UPOOL_HIGH],
				 want[UPOOL_TARGET], want[UPOOL_LOW], want[UPOOL_HIGH]);
		}
		tap_diag("flush_on_free %s, expected %s", flush, c->flush);
	}
	return false;
}

/* PSI avg10 of memory ("some" or "full") in hundredths of a percent, or -1. */
static int psi_avg10(const char *kind)
{
	unsigned int whole, frac;
	char buf[256], pat[32];
	const char *p;

	if (upool_read_file("/proc/pressure/memory", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(pat, sizeof(pat), "%s avg10=", kind);
	p = strstr(buf, pat);
	if (!p || sscanf(p + strlen(pat), "%u.%2u", &whole, &frac) != 2)
		return -1;
	return (int)(whole * 100 + frac);
}

/*
 * The daemon does not grow while memory PSI is over its limits (some 10%,
 * full 5% here), and shrinks on PSI and on the kernel's RECLAIM events:
 * wait until PSI is well below the limits and, with a daemon running, no
 * kernel event and no pool release (unmapped_block_reclaim) has come for
 * 3 s, so that what a check sees is its own doing.
 */
static void wait_calm(double timeout)
{
	double start = upool_now();
	bool said = false;

	for (;;) {
		int some = psi_avg10("some"), full = psi_avg10("full");
		const char *why = NULL;

		if (some >= 500 || full >= 250) {
			why = "PSI";
			upool_sleep_ms(500);
		} else if (daemon_pid > 0) {
			long long reclaim = upool_vmstat("unmapped_block_reclaim");
			off_t mark = log_mark();

			upool_sleep_ms(3000);
			if (log_has(mark, "kernel event "))
				why = "kernel events";
			else if (upool_vmstat("unmapped_block_reclaim") != reclaim)
				why = "pool releases";
		}
		if (!why)
			break;
		if (!said) {
			tap_diag("waiting for memory to calm down (%s; PSI avg10 some %d.%02d%%, full %d.%02d%%)",
				 why, some / 100, some % 100, full / 100, full % 100);
			said = true;
		}
		if (upool_now() - start > timeout) {
			tap_diag("still not calm after %.0f s (%s)", timeout, why);
			return;
		}
	}
	if (said)
		tap_diag("calm after %.1f s", upool_now() - start);
}

/*
 * Make @node's free pool fall below its watermark_low with real unmapped
 * allocations and wait for the daemon to raise pool_target above @from.
 * Buffers go to @bufs (freed by the caller). True if the target grew and
 * the log shows the event and the decision.
 */
static bool provoke_growth(int node, u64_t from, off_t mark, struct upool_buf *bufs,
			   int *nbufs, int max_bufs)
{
	u64_t low, free_b, target = from;
	double start, next_alloc;
	char needle[64];
	bool ok;
	int err;

	if (upool_knob_get(node, UPOOL_LOW, &low))
		return false;
	/* The pool is filled to max(target, low) first. */
	if (upool_wait_free(node, from > low ? from : low, UINT64_MAX, FILL_TIMEOUT, &free_b)) {
		tap_diag("node%d: the pool does not fill to its target", node);
		return false;
	}
	wait_calm(45);
	err = upool_bind_node(node);
	if (err) {
		tap_diag("node%d: cannot run there: %s", node, upool_errname(-err));
		return false;
	}
	start = upool_now();
	/* Down to one pageblock below watermark_low, then a pageblock a second. */
	err = upool_alloc(&bufs[(*nbufs)++], free_b - low + pb, UPOOL_ANY);
	next_alloc = upool_now() + 3;
	while (!err) {
		if (!upool_knob_get(node, UPOOL_TARGET, &target) && target > from)
			break;
		if (upool_now() - start > EVENT_TIMEOUT)
			break;
		if (upool_now() > next_alloc && *nbufs < max_bufs) {
			err = upool_alloc(&bufs[(*nbufs)++], pb, UPOOL_ANY);
			next_alloc = upool_now() + 1;
		}
		upool_sleep_ms(100);
	}
	upool_unbind();
	if (err) {
		tap_diag("node%d: unmapped allocation failed: %s", node, upool_errname(-err));
		return false;
	}
	upool_stat(node, UPOOL_FREE_BYTES, &free_b);
	tap_diag("node%d: pool_target %llu -> %llu after %.1f s, %d allocation(s), free %llu, watermark_low %llu",
		 node, from, target, upool_now() - start, *nbufs, free_b, low);
	/* The decision is logged after the write we saw. */
	ok = daemon_sync() && target > from;
	snprintf(needle, sizeof(needle), "kernel event low-watermark on node %d", node);
	if (!log_has(mark, needle)) {
		tap_diag("the log has no \"%s\"", needle);
		ok = false;
	}
	snprintf(needle, sizeof(needle), "node %d: pool below watermark_low", node);
	if (!log_has(mark, needle)) {
		tap_diag("the log has no decision \"%s...\"", needle);
		ok = false;
	}
	return ok;
}

static void free_bufs(struct upool_buf *bufs, int n)
{
	while (n-- > 0)
		upool_free(&bufs[n]);
}

/* --- the checks --------------------------------------------------------- */

static enum tap_result check_start(void)
{
	off_t start_mark = log_mark(), mark = start_mark;
	bool ok = true;
	int i;

	if (!write_conf_vals(&conf_a) || !start_daemon())
		return TAP_FAIL;
	if (!wait_applied(&conf_a, APPLY_TIMEOUT, false)) {
		tap_diag("the configuration is not what sysfs reads");
		ok = false;
	}
	for (i = 0; i < upool.nr_nodes; i++) {
		u64_t k[UPOOL_NR_KNOBS];

		if (read_knobs(upool.node[i].id, k))
			tap_diag("node%d: pool_target %llu, watermark_low %llu, watermark_high %llu",
				 upool.node[i].id, k[UPOOL_TARGET], k[UPOOL_LOW], k[UPOOL_HIGH]);
	}
	if (!log_has(mark, "start: configured: pool_target 0 -> ")) {
		tap_diag("the log has no \"start: configured\" decision");
		ok = false;
	}
	/* Applied is applied: the same file again changes nothing. */
	mark = log_mark();
	kill(daemon_pid, SIGHUP);
	if (!daemon_sync())
		ok = false;
	if (!log_has(mark, "secmemd: reloaded ")) {
		tap_diag("no \"reloaded\" after SIGHUP");
		ok = false;
	} else if (log_has(mark, "reload: ")) {
		tap_diag("a SIGHUP with the applied configuration made decisions (the kernel's rounding taken for a change?)");
		ok = false;
	}
	if (!wait_applied(&conf_a, 1, false))
		ok = false;
	log_dump(start_mark, ok ? "start (passed)" : "start");
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result check_grow(void)
{
	struct upool_buf bufs[40];
	int nbufs = 0;
	off_t mark;
	u64_t from;
	bool ok;

	if (!ensure_daemon())
		return TAP_FAIL;
	if (upool_knob_get(cpu_node, UPOOL_TARGET, &from))
		return TAP_FAIL;
	mark = log_mark();
	ok = provoke_growth(cpu_node, from, mark, bufs, &nbufs, 40);
	free_bufs(bufs, nbufs);
	if (!ok)
		log_dump(mark, "grow");
	return ok ? TAP_PASS : TAP_FAIL;
}

/* What the hog child reports through shared memory. */
struct hog_progress {
	volatile u64_t done;
	volatile int err;
};

static void hog_child(size_t len, struct hog_progress *pr, int hold_fd)
{
	char *p, c;
	size_t off;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	upool_write_str("/proc/self/oom_score_adj", "0");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		pr->err = errno;
		_exit(2);
	}
	for (off = 0; off < len; off += HOG_CHUNK) {
		size_t n = len - off < HOG_CHUNK ? len - off : HOG_CHUNK;

		if (madvise(p + off, n, MADV_POPULATE_WRITE)) {
			size_t i;

			if (errno != EINVAL) {
				pr->err = errno;
				_exit(3);
			}
			for (i = 0; i < n; i += UPOOL_PAGE)
				((volatile char *)p)[off + i] = 1;
		}
		pr->done = off + n;
	}
	/* Hold it until the parent closes the pipe. */
	while (read(hold_fd, &c, 1) > 0)
		;
	_exit(0);
}

static enum tap_result check_shrink(void)
{
	u64_t big[UPOOL_MAX_NODES], pool_total = 0, target;
	long long total, avail, hog, oom0, oom1;
	struct hog_progress *pr;
	char size[32], out[512];
	int hold[2], i, status, shrunk = -1;
	double start, next_diag;
	bool ok = true;
	off_t mark;
	pid_t pid;

	if (!ensure_daemon())
		return TAP_FAIL;
	total = upool_meminfo("MemTotal");
	if (total <= 0)
		return TAP_FAIL;
	/* A one-off pool of 1/8 of each node, through secmemctl set. */
	for (i = 0; i < upool.nr_nodes; i++) {
		u64_t mem = upool.node[i].mem_total ? upool.node[i].mem_total :
			    (u64_t)total / upool.nr_nodes;

		big[i] = mem / 8 / pb * pb;
		if (big[i] < 8 * pb)
			big[i] = 8 * pb;
	}
	mark = log_mark();
	for (i = 0; i < upool.nr_nodes; i++) {
		char node[16];

		snprintf(size, sizeof(size), "%lluK", big[i] / 1024);
		snprintf(node, sizeof(node), "%d", upool.node[i].id);
		status = run_ctl(out, sizeof(out), (const char *[]){ "set", "pool_target", size,
				 "--node", node, NULL });
		if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			tap_diag("secmemctl set pool_target %s --node %s: %s", size, node,
				 status_str(status));
			return TAP_FAIL;
		}
	}
	start = upool_now();
	for (i = 0; i < upool.nr_nodes; i++) {
		double left = FILL_TIMEOUT - (upool_now() - start);
		u64_t got;

		if (upool_wait_free(upool.node[i].id, big[i], UINT64_MAX, left > 1 ? left : 1, &got)) {
			tap_diag("node%d: the pool does not fill to %llu MiB", upool.node[i].id,
				 big[i] / MiB);
			return TAP_FAIL;
		}
		pool_total += got;
	}
	tap_diag("pools of %llu MiB in all filled in %.1f s", pool_total / MiB, upool_now() - start);
	if (!log_has(mark, "pool settings changed from outside"))
		tap_diag("warning: the daemon did not log secmemctl's SIGUSR1");
	upool_settle(300, 10);
	avail = upool_meminfo("MemAvailable");
	/* Everything available now, and a quarter of the pool on top. */
	hog = avail + (long long)pool_total / 4;
	if (hog > total * 85 / 100)
		hog = total * 85 / 100;
	hog = hog / (long long)HOG_CHUNK * (long long)HOG_CHUNK;
	oom0 = upool_vmstat("oom_kill");
	tap_diag("MemTotal %lld MiB, MemAvailable %lld MiB with the pool filled: hog of %lld MiB",
		 total / (long long)MiB, avail / (long long)MiB, hog / (long long)MiB);

	pr = mmap(NULL, sizeof(*pr), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pr == MAP_FAILED || pipe2(hold, O_CLOEXEC))
		return TAP_FAIL;
	mark = log_mark();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return TAP_FAIL;
	if (!pid) {
		close(hold[1]);
		hog_child((size_t)hog, pr, hold[0]);
	}
	close(hold[0]);
	start = upool_now();
	next_diag = start + 10;
	while (upool_now() - start < HOG_TIMEOUT) {
		for (i = 0; i < upool.nr_nodes && shrunk < 0; i++)
			if (!upool_knob_get(upool.node[i].id, UPOOL_TARGET, &target) &&
			    target < big[i])
				shrunk = upool.node[i].id;
		if (shrunk >= 0 || waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (upool_now() > next_diag) {
			tap_diag("%.0f s: hog at %llu of %lld MiB, PSI some avg10 %d", upool_now() - start,
				 pr->done / MiB, hog / (long long)MiB, psi_avg10("some"));
			next_diag += 10;
		}
		upool_sleep_ms(200);
	}
	tap_diag("after %.1f s: hog at %llu of %lld MiB, PSI some avg10 %d", upool_now() - start,
		 pr->done / MiB, hog / (long long)MiB, psi_avg10("some"));
	/* Shrunk (or not): let the memory go at once. */
	close(hold[1]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	oom1 = upool_vmstat("oom_kill");
	if (oom1 != oom0)
		tap_diag("warning: oom_kill %lld -> %lld", oom0, oom1);
	if (pr->err)
		tap_diag("the hog failed: %s", upool_errname(pr->err));
	munmap(pr, sizeof(*pr));
	if (!daemon_sync())
		ok = false;

	if (shrunk < 0) {
		tap_diag("no node's pool_target went below what secmemctl set");
		ok = false;
	} else {
		upool_knob_get(shrunk, UPOOL_TARGET, &target);
		tap_diag("node%d: pool_target %llu MiB -> %llu MiB", shrunk,
			 big[upool_node_index(shrunk)] / MiB, target / MiB);
		if (!log_has(mark, "shrink toward pool_min")) {
			tap_diag("the log has no shrink decision");
			ok = false;
		}
		if (log_has(mark, "kernel released pool pages under memory pressure"))
			tap_diag("cause: the kernel's RECLAIM event");
		if (log_has(mark, "PSI trigger \"") || log_has(mark, "memory some avg10") ||
		    log_has(mark, "memory full avg10"))
			tap_diag("cause: PSI");
	}
	if (!daemon_alive())
		ok = false;
	log_dump(mark, ok ? "shrink (passed)" : "shrink");
	/*
	 * The aftermath: PSI averages take tens of seconds to decay, and
	 * refilling the pool (pageblock-sized allocations that wake kswapd)
	 * can bring more RECLAIM events meanwhile.
	 */
	wait_calm(60);
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result check_reload(void)
{
	off_t mark;
	bool ok = true;

	if (!ensure_daemon())
		return TAP_FAIL;
	mark = log_mark();
	if (!write_conf_vals(&conf_b))
		return TAP_FAIL;
	kill(daemon_pid, SIGHUP);
	if (!wait_applied(&conf_b, APPLY_TIMEOUT, false)) {
		tap_diag("sysfs does not show the reloaded configuration");
		ok = false;
	}
	if (!log_has(mark, "secmemd: reloaded " CONF)) {
		tap_diag("the log has no \"reloaded " CONF "\"");
		ok = false;
	}
	if (!log_has(mark, "reload: flush_on_free immediate -> deferred (configured)")) {
		tap_diag("the log has no flush_on_free decision");
		ok = false;
	}
	if (!daemon_alive())
		ok = false;
	if (!ok)
		log_dump(mark, "reload");
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result check_bad_reload(void)
{
	u64_t before[UPOOL_MAX_NODES][UPOOL_NR_KNOBS], after[UPOOL_NR_KNOBS];
	char flush0[32], flush1[32];
	bool ok = true;
	off_t mark;
	int i;

	if (!ensure_daemon())
		return TAP_FAIL;
	/* Nothing else may move the knobs meanwhile. */
	wait_calm(45);
	for (i = 0; i < upool.nr_nodes; i++)
		if (!read_knobs(upool.node[i].id, before[i]))
			return TAP_FAIL;
	if (upool_flush_mode(flush0, sizeof(flush0)))
		return TAP_FAIL;
	mark = log_mark();
	/* Line 4: a bad size; line 6: an unknown key. */
	if (!write_conf("# secmemd_test: a broken file\n"
			"[global]\n"
			"pool_target = 20M\n"
			"watermark_low = lots\n"
			"flush_on_free = immediate\n"
			"no_such_key = 1\n"
			"log_level = debug\n"))
		return TAP_FAIL;
	kill(daemon_pid, SIGHUP);
	if (!daemon_sync())
		ok = false;
	if (!log_has(mark, "reload failed: keeping the running configuration")) {
		tap_diag("the log has no \"reload failed: keeping the running configuration\"");
		ok = false;
	}
	if (!log_has(mark, "secmemd: error: " CONF ":4: watermark_low: ")) {
		tap_diag("the log does not name " CONF ":4: watermark_low");
		ok = false;
	}
	if (!log_has(mark, "secmemd: error: " CONF ":6: no_such_key: ")) {
		tap_diag("the log does not name " CONF ":6: no_such_key");
		ok = false;
	}
	for (i = 0; i < upool.nr_nodes; i++) {
		if (!read_knobs(upool.node[i].id, after) ||
		    memcmp(before[i], after, sizeof(after))) {
			tap_diag("node%d: the knobs changed: pool_target %llu -> %llu, watermark_low %llu -> %llu, watermark_high %llu -> %llu",
				 upool.node[i].id, before[i][UPOOL_TARGET], after[UPOOL_TARGET],
				 before[i][UPOOL_LOW], after[UPOOL_LOW], before[i][UPOOL_HIGH],
				 after[UPOOL_HIGH]);
			ok = false;
		}
	}
	if (upool_flush_mode(flush1, sizeof(flush1)) || strcmp(flush0, flush1)) {
		tap_diag("flush_on_free changed: %s -> %s", flush0, flush1);
		ok = false;
	}
	if (!daemon_alive()) {
		tap_diag("the daemon did not survive the bad configuration");
		ok = false;
	}
	/* The good file again, for the checks after this one. */
	if (!write_conf_vals(&conf_b))
		ok = false;
	if (!ok)
		log_dump(mark, "bad reload");
	return ok ? TAP_PASS : TAP_FAIL;
}

/* The pid in the pid file, 0 if none or unreadable. */
static pid_t pidfile_pid(void)
{
	char buf[32];

	if (upool_read_file(PIDFILE, buf, sizeof(buf)) <= 0)
		return 0;
	return (pid_t)atol(buf);
}

/* daemon_pid from secmemctl status --json: the pid, 0 for null, -1 on error. */
static long json_daemon_pid(void)
{
	char out[16384];
	const char *p;
	int st;

	st = run_ctl(out, sizeof(out), (const char *[]){ "status", "--json", NULL });
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tap_diag("secmemctl status --json: %s", status_str(st));
		return -1;
	}
	p = strstr(out, "\"daemon_pid\":");
	if (!p)
		return -1;
	p += strlen("\"daemon_pid\":");
	if (!strncmp(p, "null", 4))
		return 0;
	return isdigit((unsigned char)*p) ? strtol(p, NULL, 10) : -1;
}

static enum tap_result check_kill_restart(void)
{
	struct upool_buf bufs[40];
	int nbufs = 0, status, i;
	pid_t old, second;
	u64_t moved, from;
	char needle[128];
	bool ok = true;
	off_t mark;
	long jp;

	if (!ensure_daemon())
		return TAP_FAIL;
	old = daemon_pid;
	mark = log_mark();

	/* While one runs, a second instance is refused: exit status 4. */
	second = spawn_daemon();
	status = second > 0 ? wait_exit(second, START_TIMEOUT) : -1;
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 4) {
		tap_diag("a second secmemd: %s, expected exit status 4", status_str(status));
		if (status < 0 && second > 0) {
			kill(second, SIGKILL);
			waitpid(second, NULL, 0);
		}
		ok = false;
	}
	snprintf(needle, sizeof(needle), "another secmemd is running (pid %d", old);
	if (!log_has(mark, needle)) {
		tap_diag("the log has no \"%s\"", needle);
		ok = false;
	}

	/* SIGKILL: the pid file stays, with the dead daemon's pid. */
	kill(old, SIGKILL);
	waitpid(old, NULL, 0);
	daemon_pid = 0;
	if (pidfile_pid() != old) {
		tap_diag("after SIGKILL the pid file holds %d, not the killed %d", pidfile_pid(), old);
		ok = false;
	}
	jp = json_daemon_pid();
	if (jp != 0) {
		tap_diag("with the daemon killed, secmemctl reports daemon_pid %ld, not null", jp);
		ok = false;
	}

	/* Meanwhile the kernel moves on: a target no daemon decided. */
	moved = round_pb(conf_b.target) + 2 * pb;
	for (i = 0; i < upool.nr_nodes; i++)
		if (upool_knob_set(upool.node[i].id, UPOOL_TARGET, moved))
			ok = false;

	mark = log_mark();
	if (!start_daemon())
		return TAP_FAIL;
	if (pidfile_pid() != daemon_pid) {
		tap_diag("the pid file holds %d, the new daemon is %d", pidfile_pid(), daemon_pid);
		ok = false;
	}
	/* Its first decision starts from what sysfs says, not from 16M. */
	snprintf(needle, sizeof(needle), "node %d: start: configured: pool_target %lluM -> %lluM",
		 cpu_node, moved / MiB, round_pb(conf_b.target) / MiB);
	if (!log_has(mark, needle)) {
		tap_diag("the log has no \"%s\"", needle);
		ok = false;
	}
	if (!wait_applied(&conf_b, APPLY_TIMEOUT, false))
		ok = false;
	/* And it carries on: a low watermark grows the pool again. */
	if (upool_knob_get(cpu_node, UPOOL_TARGET, &from) ||
	    !provoke_growth(cpu_node, from, mark, bufs, &nbufs, 40))
		ok = false;
	free_bufs(bufs, nbufs);
	if (!daemon_alive())
		ok = false;
	if (!ok)
		log_dump(mark, "restart");
	return ok ? TAP_PASS : TAP_FAIL;
}

/* The unsigned number after "KEY": in [@p, @end), or false. */
static bool json_u64(const char *p, const char *end, const char *key, u64_t *v)
{
	char pat[64];
	const char *q;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	q = strstr(p, pat);
	if (!q || (end && q >= end))
		return false;
	q += strlen(pat);
	if (!isdigit((unsigned char)*q))
		return false;
	*v = strtoull(q, NULL, 10);
	return true;
}

/* Compare one secmemctl status --json output with sysfs read just after. */
static bool json_matches(const char *out, bool report)
{
	static const enum upool_stat stats[] = { UPOOL_UNMAPPED_BYTES, UPOOL_FREE_BYTES,
		UPOOL_ALLOC_POOL, UPOOL_CONVERSIONS, UPOOL_RESTORATIONS };
	char flush[32], pat[64];
	const char *p, *nodes, *next;
	bool ok = true;
	u64_t v, s;
	size_t j;
	int i, k, count = 0;

#define MISMATCH(...) do { if (report) tap_diag(__VA_ARGS__); ok = false; } while (0)
	if (upool_flush_mode(flush, sizeof(flush)))
		return false;
	snprintf(pat, sizeof(pat), "\"flush_on_free\":\"%s\"", flush);
	if (!strstr(out, pat))
		MISMATCH("no %s in the JSON", pat);
	if (!json_u64(out, NULL, "pageblock_bytes", &v) || v != pb)
		MISMATCH("pageblock_bytes is not %llu", pb);
	p = strstr(out, "\"daemon_pid\":");
	if (!p || strtol(p + strlen("\"daemon_pid\":"), NULL, 10) != daemon_pid)
		MISMATCH("daemon_pid is not %d", daemon_pid);
	nodes = strstr(out, "\"nodes\":[");
	if (!nodes) {
		MISMATCH("no \"nodes\" array");
		return false;
	}
	for (p = nodes; (p = strstr(p, "{\"node\":")); p++)
		count++;
	if (count != upool.nr_nodes)
		MISMATCH("%d node(s) in the JSON, %d in sysfs", count, upool.nr_nodes);
	for (i = 0; i < upool.nr_nodes; i++) {
		int id = upool.node[i].id;

		snprintf(pat, sizeof(pat), "{\"node\":%d,", id);
		p = strstr(nodes, pat);
		if (!p) {
			MISMATCH("node %d is not in the JSON", id);
			continue;
		}
		next = strstr(p + 1, "{\"node\":");
		for (k = 0; k < UPOOL_NR_KNOBS; k++) {
			if (upool_knob_get(id, k, &s))
				return false;
			if (!json_u64(p, next, upool_knob_names[k], &v) || v != s)
				MISMATCH("node %d: %s is %llu in sysfs, not in the JSON", id,
					 upool_knob_names[k], s);
		}
		for (j = 0; j < sizeof(stats) / sizeof(stats[0]); j++) {
			if (upool_stat(id, stats[j], &s))
				return false;
			if (!json_u64(p, next, upool_stat_names[stats[j]], &v) || v != s)
				MISMATCH("node %d: stats %s is %llu in sysfs, %llu in the JSON", id,
					 upool_stat_names[stats[j]], s, v);
		}
	}
	if (!strstr(out, "\"total\":{") || !strstr(out, "\"decisions\":[{\"time\":"))
		MISMATCH("no \"total\" or no decisions in the JSON");
#undef MISMATCH
	return ok;
}

static enum tap_result check_json(void)
{
	char out[16384];
	int st, attempt;

	if (!ensure_daemon())
		return TAP_FAIL;
	upool_settle(300, 10);
	/* The statistics may move between the two reads: three tries. */
	for (attempt = 1; attempt <= 3; attempt++) {
		st = run_ctl(out, sizeof(out), (const char *[]){ "status", "--json", NULL });
		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			tap_diag("secmemctl status --json: %s", status_str(st));
			return TAP_FAIL;
		}
		if (json_matches(out, attempt == 3))
			break;
		upool_sleep_ms(500);
	}
	tap_diag("secmemctl status --json: %.300s%s", out, strlen(out) > 300 ? "..." : "");
	return attempt <= 3 ? TAP_PASS : TAP_FAIL;
}

static enum tap_result check_term(void)
{
	u64_t before[UPOOL_MAX_NODES][UPOOL_NR_KNOBS], after[UPOOL_NR_KNOBS];
	struct conf_vals conf_c = conf_b;
	char flush0[32], flush1[32];
	bool ok = true;
	off_t mark;
	long jp;
	int i, st;

	if (!ensure_daemon())
		return TAP_FAIL;
	/* on_exit = keep */
	for (i = 0; i < upool.nr_nodes; i++)
		if (!read_knobs(upool.node[i].id, before[i]))
			return TAP_FAIL;
	if (upool_flush_mode(flush0, sizeof(flush0)))
		return TAP_FAIL;
	mark = log_mark();
	kill(daemon_pid, SIGTERM);
	st = wait_exit(daemon_pid, 10);
	if (st >= 0)
		daemon_pid = 0;
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tap_diag("on_exit = keep: SIGTERM: %s, expected exit status 0", status_str(st));
		kill_daemon();
		ok = false;
	}
	for (i = 0; i < upool.nr_nodes; i++) {
		if (!read_knobs(upool.node[i].id, after) ||
		    memcmp(before[i], after, sizeof(after))) {
			tap_diag("on_exit = keep: node%d's knobs changed on SIGTERM", upool.node[i].id);
			ok = false;
		}
	}
	if (upool_flush_mode(flush1, sizeof(flush1)) || strcmp(flush0, flush1)) {
		tap_diag("on_exit = keep: flush_on_free %s -> %s", flush0, flush1);
		ok = false;
	}
	if (!strcmp(flush1, "immediate"))
		tap_diag("warning: flush_on_free was immediate already: restore is not seen to change it");
	jp = json_daemon_pid();
	if (jp != 0) {
		tap_diag("on_exit = keep: after SIGTERM secmemctl reports daemon_pid %ld", jp);
		ok = false;
	}

	/* on_exit = restore */
	conf_c.on_exit = "restore";
	if (!write_conf_vals(&conf_c) || !start_daemon())
		return TAP_FAIL;
	/* What it starts from does not matter here, only what it leaves. */
	if (!wait_applied(&conf_c, APPLY_TIMEOUT, true))
		tap_diag("warning: the on_exit = restore daemon's configuration is not (or no longer) in sysfs");
	kill(daemon_pid, SIGTERM);
	st = wait_exit(daemon_pid, 10);
	if (st >= 0)
		daemon_pid = 0;
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tap_diag("on_exit = restore: SIGTERM: %s, expected exit status 0", status_str(st));
		kill_daemon();
		ok = false;
	}
	for (i = 0; i < upool.nr_nodes; i++) {
		if (!read_knobs(upool.node[i].id, after) || after[UPOOL_TARGET] ||
		    after[UPOOL_LOW] || after[UPOOL_HIGH]) {
			tap_diag("on_exit = restore: node%d: pool_target %llu, watermark_low %llu, watermark_high %llu, expected 0",
				 upool.node[i].id, after[UPOOL_TARGET], after[UPOOL_LOW],
				 after[UPOOL_HIGH]);
			ok = false;
		}
	}
	if (upool_flush_mode(flush1, sizeof(flush1)) || strcmp(flush1, "immediate")) {
		tap_diag("on_exit = restore: flush_on_free %s, expected immediate", flush1);
		ok = false;
	}
	if (!log_has(mark, "on_exit=restore: pools released, kernel defaults restored")) {
		tap_diag("the log has no on_exit=restore message");
		ok = false;
	}
	if (upool_wait_empty(60))
		ok = false;
	jp = json_daemon_pid();
	if (jp != 0) {
		tap_diag("on_exit = restore: after SIGTERM secmemctl reports daemon_pid %ld", jp);
		ok = false;
	}
	if (!ok)
		log_dump(mark, "SIGTERM");
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result check_restored(void)
{
	kill_daemon();
	if (upool_reset() || upool_wait_empty(60))
		return TAP_FAIL;
	return TAP_PASS;
}

/* PATH lookup of @name after $ENV and /secmem/bin. */
static const char *find_prog(const char *env, const char *name)
{
	static char found[2][256];
	static int used;
	const char *e = getenv(env);
	char *path, *dir, *save = NULL;

	if (e && *e)
		return access(e, X_OK) ? NULL : e;
	snprintf(found[used], sizeof(found[used]), "/secmem/bin/%s", name);
	if (!access(found[used], X_OK))
		return found[used++];
	path = strdup(getenv("PATH") ? getenv("PATH") : "");
	for (dir = strtok_r(path, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(found[used], sizeof(found[used]), "%s/%s", dir, name);
		if (!access(found[used], X_OK)) {
			free(path);
			return found[used++];
		}
	}
	free(path);
	return NULL;
}

int main(void)
{
	enum tap_result res[NR_TESTS];
	int i;

	upool_init_or_skip(false);
	secmemd_bin = find_prog("SECMEMD", "secmemd");
	secmemctl_bin = find_prog("SECMEMCTL", "secmemctl");
	if (!secmemd_bin || !secmemctl_bin)
		tap_skip_all("secmemd or secmemctl not installed (make -C daemon guest)");
	if (!upool.nr_nodes)
		tap_bail("no node has an unmapped/ directory");
	pb = upool.pageblock;
	for (i = 0; i < upool.nr_nodes && cpu_node < 0; i++)
		if (upool.node[i].nr_cpus)
			cpu_node = upool.node[i].id;
	if (cpu_node < 0)
		tap_bail("no node with an unmapped pool has CPUs");
	if (mkdir(TEST_DIR, 0755) && errno != EEXIST)
		tap_bail("mkdir " TEST_DIR ": %s", upool_errname(errno));
	unlink(LOG);

	tap_plan(NR_TESTS);
	tap_diag("secmemd %s, secmemctl %s, %d node(s), allocations on node%d, pageblock %llu",
		 secmemd_bin, secmemctl_bin, upool.nr_nodes, cpu_node, pb);
	install_cleanup();
	/* The hog of check 3 is the OOM killer's choice, never us or the daemon. */
	upool_write_str("/proc/self/oom_score_adj", "-1000");
	if (upool_reset() || upool_wait_empty(60))
		tap_bail("the pool does not empty at the start");
	/* What ran before (KUnit at boot, other tests) may leave pressure. */
	wait_calm(45);

	/* In this order: the memory hog comes late, its aftermath is long. */
	res[T_START] = check_start();
	tap_report(res[T_START], test_names[T_START], NULL);
	res[T_GROW] = check_grow();
	tap_report(res[T_GROW], test_names[T_GROW], NULL);
	res[T_RELOAD] = check_reload();
	tap_report(res[T_RELOAD], test_names[T_RELOAD], NULL);
	res[T_BAD] = check_bad_reload();
	tap_report(res[T_BAD], test_names[T_BAD], NULL);
	res[T_KILL] = check_kill_restart();
	tap_report(res[T_KILL], test_names[T_KILL], NULL);
	res[T_JSON] = check_json();
	tap_report(res[T_JSON], test_names[T_JSON], NULL);
	res[T_SHRINK] = check_shrink();
	tap_report(res[T_SHRINK], test_names[T_SHRINK], NULL);
	res[T_TERM] = check_term();
	tap_report(res[T_TERM], test_names[T_TERM], NULL);
	res[T_RESTORED] = check_restored();
	tap_report(res[T_RESTORED], test_names[T_RESTORED], NULL);
	return tap_finish();
}
