// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability case 6 (docs/RELIABILITY.md): bad input at the kernel
 * boundary of the unmapped allocator.
 *
 * What unmapped_pool_test (bad_inputs, nonroot, concurrent), memfd_unmapped_test
 * (one deterministic case per flag, mode and seal) and unmapped_events_test
 * (get_stats_bad_node) already check is not repeated; this adds what a
 * hostile or buggy caller does that those do not:
 *
 *  sysfs_garbage   every writable file under /sys/kernel/mm/unmapped and
 *                  nodeN/unmapped written with garbage those tests do not
 *                  try (embedded newlines and NULs, signs, hex, exponents,
 *                  whitespace, units, binary, a page and more of digits)
 *                  and with thousands of random strings judged against a
 *                  model of the documented syntax: every refused write is
 *                  EINVAL (E2BIG past a page) and changes nothing, every
 *                  accepted one reads back as the model says.
 *  sysfs_races     four root threads write garbage and valid values to the
 *                  same knobs while an unprivileged process writes too:
 *                  only EINVAL for root, only EACCES/EPERM for the other,
 *                  and what is left is one of the valid values written.
 *  memfd_fuzz      as uid 65534 (no CAP_IPC_LOCK, RLIMIT_MEMLOCK 64 MiB),
 *                  for FUZZ_SECONDS: random memfd_create flags and names,
 *                  ftruncate sizes, fallocate modes and ranges, pread and
 *                  pwrite offsets, mmap prot/flags/offsets, madvise, seals,
 *                  reopenings through /proc/self/fd (refused), on
 *                  MFD_UNMAPPED files. Every result is checked against a
 *                  model: the expected errno (or one of a set where the
 *                  kernel's order of checks decides), the file size and
 *                  seals after each call, every byte read (through read()
 *                  and through mappings) equal to what was written, SIGBUS
 *                  exactly past EOF. The data written are random 64-byte
 *                  markers; this program keeps them only bit-inverted.
 *  kcore_scan      a short fuzz while root compacts all memory every 50 ms
 *                  (movable pages move, unmapped ones must not); then, with
 *                  the fuzzed files still open (pages live, punched,
 *                  truncated), as root: no marker is in /proc/kcore, and a
 *                  control marker in a plain memfd is.
 *  read_races      read() from two threads while the file is truncated and
 *                  punched and written back: every page read is whole (all
 *                  written bytes or all zeroes), no read fails, and the
 *                  mermap debug checker stays silent (immediate mode).
 *  genl_malformed  as uid 65534, raw generic netlink: the secmem family is
 *                  sent short, truncated, over-long, unknown-command,
 *                  wrong-type, duplicate-attribute, nested, reserved-field,
 *                  random-payload and 256 KiB messages; each gets an error
 *                  (or is dropped, where netlink drops it), never
 *                  statistics; sending to the events group is refused; a
 *                  valid request afterwards still answers.
 *  counters        at the end: the global files equal the sums over the
 *                  nodes, free_bytes <= unmapped_bytes, no counter went
 *                  back since the start, unmapped_bytes - (conversions -
 *                  restorations) x pageblock unchanged, and the vmstat
 *                  events agree with sysfs.
 *
 * Kernel splats are the log checker's (check-log.py); the debug guest
 * panics on a warning. FUZZ_SECONDS (default 8) and FUZZ_SEED (default:
 * from the clock, printed) in the environment replay a run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kcore.h"
#include "klog.h"
#include "secmem_genl.h"
#include "subtest.h"
#include "upool.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define NOBODY			65534
#define SUBTEST_TIMEOUT		120
#define MiB			UPOOL_MiB
#define PG			4096ULL

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE	0x0010
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC		0x0020
#endif
#define ALL_SEALS		(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | \
				 F_SEAL_FUTURE_WRITE | F_SEAL_EXEC)
#ifndef MFD_EXEC
#define MFD_EXEC		0x0010U
#endif
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#endif
#ifndef MAP_UNINITIALIZED
#define MAP_UNINITIALIZED	0x4000000
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif

/* --- random numbers: xorshift, seeded once, replayable ------------------- */

static __thread uint64_t rng_state;
static uint64_t base_seed;

/* splitmix64: an independent stream per sub-test and thread. */
static uint64_t hash_seed(uint64_t seed, unsigned int n)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (n + 1);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z ? z : 1;
}

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int percent)
{
	return rnd_below(100) < percent;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/* Run @fn as uid/gid 65534 in a child; its exit code is the result. */
static enum tap_result as_nobody(bool (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_diag("fork: %m");
		return TAP_FAIL;
	}
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY)) {
			tap_diag("dropping to uid %d: %m", NOBODY);
			_exit(KSFT_FAIL);
		}
		_exit(fn(arg) ? KSFT_PASS : KSFT_FAIL);
	}
	if (waitpid(pid, &status, 0) != pid) {
		tap_diag("waitpid: %m");
		return TAP_FAIL;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tap_diag("the unprivileged child ended with status %#x", status);
		return TAP_FAIL;
	}
	return TAP_PASS;
}

/* --- sysfs ------------------------------------------------------------------ */

/* Every writable file: the three knobs of every node, then flush_on_free. */
struct knob_file {
	char path[160];
	int node;		/* -1: flush_on_free */
	enum upool_knob knob;
};

static struct knob_file knobs[UPOOL_MAX_NODES * UPOOL_NR_KNOBS + 1];
static unsigned int nr_knobs;

static void collect_knobs(void)
{
	int i, k;

	nr_knobs = 0;
	for (i = 0; i < upool.nr_nodes; i++)
		for (k = 0; k < UPOOL_NR_KNOBS; k++) {
			struct knob_file *f = &knobs[nr_knobs++];

			upool_path(f->path, sizeof(f->path), upool.node[i].id,
				   upool_knob_names[k]);
			f->node = upool.node[i].id;
			f->knob = k;
		}
	snprintf(knobs[nr_knobs].path, sizeof(knobs[nr_knobs].path), "%s",
		 UPOOL_GLOBAL_DIR "/flush_on_free");
	knobs[nr_knobs++].node = -1;
}

/* Everything a write could change: every node's knobs and the mode. */
struct sys_state {
	u64_t knob[UPOOL_MAX_NODES][UPOOL_NR_KNOBS];
	char mode[32];
};

static int read_state(struct sys_state *s)
{
	int i, k;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < upool.nr_nodes; i++)
		for (k = 0; k < UPOOL_NR_KNOBS; k++)
			if (upool_knob_get(upool.node[i].id, k, &s->knob[i][k]))
				return -EIO;
	return upool_flush_mode(s->mode, sizeof(s->mode));
}

static bool state_equal(const struct sys_state *a, const struct sys_state *b)
{
	return !memcmp(a->knob, b->knob, sizeof(a->knob)) && !strcmp(a->mode, b->mode);
}

static void state_diag(const char *what, const struct sys_state *s)
{
	int i;

	for (i = 0; i < upool.nr_nodes; i++)
		tap_diag("%s: node%d target %llu low %llu high %llu, flush_on_free %s", what,
			 upool.node[i].id, s->knob[i][UPOOL_TARGET], s->knob[i][UPOOL_LOW],
			 s->knob[i][UPOOL_HIGH], s->mode);
}

/* Printable form of a test string, for diagnostics. */
static const char *printable(const char *s, size_t len)
{
	static char out[96];
	size_t i, o = 0;

	for (i = 0; i < len && o < sizeof(out) - 8; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = c;
		else
			o += snprintf(out + o, sizeof(out) - o, "\\x%02x", c);
	}
	if (i < len)
		o += snprintf(out + o, sizeof(out) - o, "...(%zu)", len);
	out[o] = '\0';
	return out;
}

/*
 * The documented syntax of a knob (Documentation/ABI/testing/
 * sysfs-devices-node-unmapped): decimal digits, an optional K, M or G
 * (either case), an optional final newline, and nothing else; the value
 * must fit in 64 bits. Returns true and the bytes if @s is valid.
 */
static bool model_parse(const char *s, size_t len, u64_t *bytes)
{
	unsigned int shift = 0;
	u64_t v = 0;
	size_t i;

	if (len && s[len - 1] == '\n')
		len--;
	if (len && strchr("kKmMgG", s[len - 1]) && s[len - 1]) {
		shift = strchr("kK", s[len - 1]) ? 10 : strchr("mM", s[len - 1]) ? 20 : 30;
		len--;
	}
	if (!len)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (UINT64_MAX - (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v > (UINT64_MAX >> shift))
		return false;
	*bytes = v << shift;
	return true;
}

/* Garbage unmapped_pool_test's bad_inputs does not try. */
static const struct { const char *s; size_t len; } garbage[] = {
#define G(str) { str, sizeof(str) - 1 }
	G("1\n\n"), G("1\nM"), G("1\nM\n"), G("\n1"), G("\n"), G("\n\n"), G("2M\n\n"),
	G("2M\0"), G("2\0M"), G("\0"), G("2M\0garbage"), G("2\0"), G("2048\0"), G("1\0\n"),
	G("+2M"), G("+0"), G("-0"), G(" 2M"), G("\t2M"), G("2M "), G("2M\t"), G("2M\r\n"),
	G("0x200000"), G("0X10"), G("0b1"), G("1e6"), G("2.0M"), G("2,0M"), G("1_000"),
	G("2KB"), G("2MiB"), G("2mb"), G("2T"), G("2P"), G("2k\n2k"), G("kM"), G("Mk"),
	G("K"), G("g\n"), G("\xef\xbc\x92M"), G("2\xc2\xa0M"), G("\xff\xfe"), G("\x80"),
	G("18446744073709551616"), G("18446744073709551616K"), G("17592186044416M"),
	G("on"), G("true"),
#undef G
};

/* The words flush_on_free must refuse, beyond unmapped_pool_test's list. */
static const struct { const char *s; size_t len; } bad_modes[] = {
#define G(str) { str, sizeof(str) - 1 }
	G("immediate\n\n"), G("immediate\0"), G("Immediate"), G("IMMEDIATE"), G(" immediate"),
	G("immediate "), G("deferred\r\n"), G("deferre"), G("deferredd"), G("immediate deferred"),
	G("[deferred]"), G("0"), G("1"), G("\n"), G("\xff"), G("deferred\0immediate"),
#undef G
};

/* Knob value the model expects after an accepted write of @bytes. */
static u64_t round_pb(u64_t bytes)
{
	return (bytes + upool.pageblock - 1) / upool.pageblock * upool.pageblock;
}

/*
 * Write @s, which must be refused and change nothing. After a failure the
 * knobs are reset and @before re-read, so that one accepted write does not
 * fail every later check.
 */
static bool expect_refused(const struct knob_file *f, const char *s, size_t len,
			   struct sys_state *before)
{
	struct sys_state after;
	int err = upool_write_raw(f->path, s, len);
	bool ok = true;

	if (err != -EINVAL && !(len >= PG && err == -E2BIG)) {
		tap_diag("%s <- \"%s\": %s, want EINVAL", f->path, printable(s, len),
			 err ? upool_errname(-err) : "accepted");
		ok = false;
	} else if (read_state(&after) || !state_equal(before, &after)) {
		tap_diag("%s <- \"%s\": refused but something changed", f->path,
			 printable(s, len));
		state_diag("before", before);
		state_diag("after", &after);
		ok = false;
	}
	if (!ok && (upool_reset() || read_state(before)))
		tap_diag("cannot reset the knobs");
	return ok;
}

#define SYSFS_RANDOM_PER_KNOB	300
/* Random refused writes are checked for side effects in groups. */
#define SYSFS_CHECK_EVERY	25
#define SYSFS_ACCEPT_MAX	(8 * MiB)

static enum tap_result test_sysfs_garbage(void)
{
	unsigned int i, j, refused = 0, accepted = 0, skipped = 0;
	static const char alphabet[] = "0123456789kKmMgG\n \t-+x.\0\xff";
	struct sys_state st;
	char big[2 * PG + 2];
	bool ok = true;

	if (read_state(&st)) {
		tap_diag("cannot read the knobs");
		return TAP_FAIL;
	}
	memset(big, '1', sizeof(big));

	for (i = 0; i < nr_knobs; i++) {
		const struct knob_file *f = &knobs[i];

		if (f->node < 0) {
			for (j = 0; j < ARRAY_SIZE(bad_modes); j++, refused++)
				ok &= expect_refused(f, bad_modes[j].s, bad_modes[j].len, &st);
			for (j = 0; j < ARRAY_SIZE(garbage); j++, refused++)
				ok &= expect_refused(f, garbage[j].s, garbage[j].len, &st);
			ok &= expect_refused(f, big, PG - 1, &st);
			ok &= expect_refused(f, big, PG, &st);
			ok &= expect_refused(f, big, sizeof(big), &st);
			refused += 3;
			continue;
		}
		ok &= expect_refused(f, "immediate", 9, &st);
		ok &= expect_refused(f, "deferred\n", 9, &st);
		refused += 2;
		for (j = 0; j < ARRAY_SIZE(garbage); j++, refused++) {
			u64_t v;

			if (model_parse(garbage[j].s, garbage[j].len, &v)) {
				tap_diag("test bug: \"%s\" is valid by the model",
					 printable(garbage[j].s, garbage[j].len));
				ok = false;
				continue;
			}
			ok &= expect_refused(f, garbage[j].s, garbage[j].len, &st);
		}
		/* A page of digits, a page and more: too long, whatever the value. */
		ok &= expect_refused(f, big, PG - 1, &st);
		ok &= expect_refused(f, big, PG, &st);
		ok &= expect_refused(f, big, sizeof(big), &st);
		refused += 3;

		/*
		 * Random strings over an alphabet of what the parser looks at:
		 * judged by the model. Only small values are really written
		 * (a large pool_target would start filling the pool), and only
		 * to pool_target, which no other knob constrains.
		 */
		for (j = 0; j < SYSFS_RANDOM_PER_KNOB; j++) {
			size_t len = 1 + rnd_below(12), k;
			char s[16];
			u64_t v;

			for (k = 0; k < len; k++)
				s[k] = alphabet[rnd_below(sizeof(alphabet) - 1)];
			if (!model_parse(s, len, &v)) {
				int err = upool_write_raw(f->path, s, len);
				struct sys_state now;

				refused++;
				if (err != -EINVAL) {
					tap_diag("%s <- \"%s\": %s, want EINVAL", f->path,
						 printable(s, len),
						 err ? upool_errname(-err) : "accepted");
					ok = false;
					if (upool_reset() || read_state(&st))
						tap_diag("cannot reset the knobs");
				} else if (j % SYSFS_CHECK_EVERY == 0 &&
					   (read_state(&now) || !state_equal(&st, &now))) {
					tap_diag("%s: refused writes changed something", f->path);
					state_diag("before", &st);
					state_diag("after", &now);
					ok = false;
					if (upool_reset() || read_state(&st))
						tap_diag("cannot reset the knobs");
				}
				continue;
			}
			if (f->knob != UPOOL_TARGET || v > SYSFS_ACCEPT_MAX) {
				skipped++;
				continue;
			}
			{
				int err = upool_write_raw(f->path, s, len);
				u64_t back = 0;

				if (err || upool_knob_get(f->node, f->knob, &back) ||
				    back != round_pb(v)) {
					tap_diag("%s <- \"%s\": %s, read back %llu, want %llu",
						 f->path, printable(s, len),
						 err ? upool_errname(-err) : "accepted", back,
						 round_pb(v));
					ok = false;
				}
				accepted++;
				if (upool_knob_set(f->node, f->knob, 0) || read_state(&st))
					ok = false;
			}
		}
		{
			struct sys_state now;

			if (read_state(&now) || !state_equal(&st, &now)) {
				tap_diag("%s: refused writes changed something", f->path);
				ok = false;
			}
		}
		if (!ok)
			break;
	}
	tap_diag("%u knob files: %u writes refused as they should be, %u valid ones accepted and read back, %u valid but too large to write",
		 nr_knobs, refused, accepted, skipped);
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- sysfs_races --------------------------------------------------------------- */

#define RACE_SECONDS		2.0
#define RACE_THREADS		4

static atomic_bool race_stop;
static const char *const race_valid[] = { "0", "2M", "4M", "4096K" };

struct race_thread {
	pthread_t t;
	unsigned int id;
	uint64_t writes, refused, bad;
	char first_bad[512];
};

static const struct knob_file *race_file(unsigned int n)
{
	/* node0's pool_target and watermark_high, and flush_on_free. */
	static const unsigned int pick[] = { 0, 2 };

	return n < 2 ? &knobs[pick[n]] : &knobs[nr_knobs - 1];
}

static void *race_main(void *arg)
{
	struct race_thread *r = arg;

	rng_state = hash_seed(base_seed, 100 + r->id);
	while (!atomic_load(&race_stop)) {
		const struct knob_file *f = race_file(rnd_below(3));
		const char *s;
		size_t len;
		bool valid;
		int err;

		if (f->node < 0) {
			unsigned int b = rnd_below(ARRAY_SIZE(bad_modes));

			valid = chance(50);
			s = valid ? (chance(50) ? "deferred" : "immediate\n") : bad_modes[b].s;
			len = valid ? strlen(s) : bad_modes[b].len;
		} else if (chance(40)) {
			valid = true;
			s = race_valid[rnd_below(ARRAY_SIZE(race_valid))];
			len = strlen(s);
		} else {
			unsigned int g = rnd_below(ARRAY_SIZE(garbage));

			valid = false;
			s = garbage[g].s;
			len = garbage[g].len;
		}
		err = upool_write_raw(f->path, s, len);
		r->writes++;
		/* A valid watermark may still be refused: low above high. */
		if (err == -EINVAL)
			r->refused++;
		if ((!valid && err != -EINVAL) || (valid && err && err != -EINVAL)) {
			if (!r->bad++)
				snprintf(r->first_bad, sizeof(r->first_bad), "%s <- \"%s\": %s",
					 f->path, printable(s, len),
					 err ? upool_errname(-err) : "accepted");
		}
	}
	return NULL;
}

static bool race_nobody(void *arg)
{
	double until = upool_now() + *(double *)arg;
	unsigned long n = 0, bad = 0;

	while (upool_now() < until) {
		const struct knob_file *f = &knobs[rnd_below(nr_knobs)];
		int err = upool_write_str(f->path, chance(50) ? "2M" : "deferred");

		n++;
		if (err != -EACCES && err != -EPERM) {
			if (!bad++)
				tap_diag("uid %d: %s: %s, want EACCES or EPERM", NOBODY, f->path,
					 err ? upool_errname(-err) : "accepted");
		}
	}
	tap_diag("uid %d: %lu writes, %lu not refused", NOBODY, n, bad);
	return !bad;
}

static enum tap_result test_sysfs_races(void)
{
	struct race_thread r[RACE_THREADS] = { 0 };
	double secs = RACE_SECONDS;
	uint64_t writes = 0, refused = 0;
	struct sys_state end;
	enum tap_result res;
	bool ok = true;
	unsigned int i;
	int k;

	atomic_store(&race_stop, false);
	for (i = 0; i < RACE_THREADS; i++) {
		r[i].id = i;
		if (pthread_create(&r[i].t, NULL, race_main, &r[i])) {
			tap_diag("pthread_create failed");
			return TAP_FAIL;
		}
	}
	res = as_nobody(race_nobody, &secs);
	atomic_store(&race_stop, true);
	for (i = 0; i < RACE_THREADS; i++) {
		pthread_join(r[i].t, NULL);
		writes += r[i].writes;
		refused += r[i].refused;
		if (r[i].bad) {
			tap_diag("thread %u: %llu unexpected results, the first: %s", i,
				 (unsigned long long)r[i].bad, r[i].first_bad);
			ok = false;
		}
	}
	if (read_state(&end)) {
		tap_diag("cannot read the knobs");
		return TAP_FAIL;
	}
	for (k = 0; k < UPOOL_NR_KNOBS; k++) {
		u64_t v = end.knob[0][k];

		if (v != 0 && v != 2 * MiB && v != 4 * MiB) {
			tap_diag("node%d %s is %llu, not a value any thread wrote", upool.node[0].id,
				 upool_knob_names[k], v);
			ok = false;
		}
	}
	if (end.knob[0][UPOOL_LOW] > end.knob[0][UPOOL_HIGH]) {
		tap_diag("node%d: watermark_low %llu above watermark_high %llu", upool.node[0].id,
			 end.knob[0][UPOOL_LOW], end.knob[0][UPOOL_HIGH]);
		ok = false;
	}
	if (strcmp(end.mode, "immediate") && strcmp(end.mode, "deferred")) {
		tap_diag("flush_on_free reads \"%s\"", end.mode);
		ok = false;
	}
	tap_diag("%d root threads: %llu writes in %.0f s, %llu refused (EINVAL)", RACE_THREADS,
		 (unsigned long long)writes, secs, (unsigned long long)refused);
	return ok && res == TAP_PASS ? TAP_PASS : TAP_FAIL;
}

/* --- markers ---------------------------------------------------------------- */

#define MARKER_LEN		64
#define NR_MARKERS		16

/* The only copies in ordinary memory are bit-inverted (see kcore.h). */
static unsigned char (*inv_markers)[MARKER_LEN];
static unsigned char inv_control[MARKER_LEN];

static void make_markers(void)
{
	unsigned int i, j;

	/* Shared with the fuzzing child, which only reads them. */
	inv_markers = mmap(NULL, NR_MARKERS * MARKER_LEN, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (inv_markers == MAP_FAILED)
		tap_bail("mmap: %m");
	for (i = 0; i < NR_MARKERS; i++)
		for (j = 0; j < MARKER_LEN; j++)
			inv_markers[i][j] = rnd();
	for (j = 0; j < MARKER_LEN; j++)
		inv_control[j] = rnd();
}

/* The plain (secret) byte at @off of an endless repetition of marker @m. */
static inline unsigned char marker_byte(unsigned int m, uint64_t off)
{
	return ~((const volatile unsigned char *)inv_markers[m])[off % MARKER_LEN];
}

/* --- memfd_fuzz: the model ---------------------------------------------------- */

#define NR_SLOTS		3
#define SHADOW			(1 * MiB)	/* data are checked in [0, SHADOW) */
#define FAR_BASE		(1ULL << 40)	/* sparse use far beyond it */
#define FUZZ_MEMLOCK		(64 * MiB)
#define MAX_LFS			((uint64_t)LLONG_MAX)

struct mapping {
	uint8_t *addr;
	uint64_t off, len;
	int prot;
};

struct slot {
	int fd;			/* -1: empty */
	int rofd;		/* a read-only reopening, or -1 */
	uint64_t size;
	unsigned int seals;
	unsigned int marker;	/* what the next write repeats */
	struct mapping map;	/* addr NULL: none */
	/* Bit-inverted expected content of [0, SHADOW). */
	uint8_t *inv;
};

static struct slot slots[NR_SLOTS];

struct fuzz_stats {
	uint64_t calls, ok, refused, bytes_read, bytes_written, bytes_checked, sigbus;
	uint64_t by_op[16];
	uint64_t failures;
};

static struct fuzz_stats fs;
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

static unsigned int fuzz_fail_budget = 20;

static __attribute__((format(printf, 1, 2))) void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	fs.failures++;
	if (!fuzz_fail_budget)
		return;
	fuzz_fail_budget--;
	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
}

#define ERRN(e)		((e) ? upool_errname(e) : "success")

/* @err (0 or an errno) must be one of the @n errnos listed (0: success). */
static bool expect_err(const char *what, int err, int n, ...)
{
	va_list ap;
	int i;

	fs.calls++;
	err ? fs.refused++ : fs.ok++;
	va_start(ap, n);
	for (i = 0; i < n; i++)
		if (va_arg(ap, int) == err) {
			va_end(ap);
			return true;
		}
	va_end(ap);
	fuzz_fail("%s: %s unexpected", what, ERRN(err));
	return false;
}

static void slot_unmap(struct slot *s)
{
	if (s->map.addr) {
		munmap(s->map.addr, s->map.len);
		s->map.addr = NULL;
	}
}

static void slot_close(struct slot *s)
{
	slot_unmap(s);
	if (s->rofd >= 0)
		close(s->rofd);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = s->rofd = -1;
}

/* The model after the file's size became @size. */
static void model_resize(struct slot *s, uint64_t size)
{
	if (size < s->size && size < SHADOW)
		memset(s->inv + size, 0xff, SHADOW - size);
	s->size = size;
}

static void check_seals(struct slot *s, const char *after)
{
	int got = fcntl(s->fd, F_GET_SEALS);

	if (got < 0 || (unsigned int)got != s->seals) {
		fuzz_fail("after %s: F_GET_SEALS %#x, model %#x", after, got, s->seals);
		if (got >= 0)
			s->seals = got;
	}
}

static void check_size(struct slot *s, const char *after)
{
	struct stat st;

	if (fstat(s->fd, &st) || (uint64_t)st.st_size != s->size) {
		fuzz_fail("after %s: size %lld, model %llu", after, (long long)st.st_size,
			  (unsigned long long)s->size);
		s->size = st.st_size;
	}
}

/* Compare @n bytes read (plain) at file offset @off with the model; wipe them. */
static void check_bytes(struct slot *s, volatile uint8_t *buf, uint64_t off, uint64_t n,
			const char *how)
{
	uint64_t i, bad = 0, first = 0;

	for (i = 0; i < n; i++) {
		uint8_t want = off + i < SHADOW ? (uint8_t)~s->inv[off + i] : buf[i];

		if (buf[i] != want && !bad++)
			first = off + i;
		buf[i] = 0;
	}
	fs.bytes_checked += n;
	if (bad)
		fuzz_fail("%s: %llu of %llu bytes at %llu differ from what was written, the first at %llu",
			  how, (unsigned long long)bad, (unsigned long long)n,
			  (unsigned long long)off, (unsigned long long)first);
}

#ifdef HOST_FUZZ
#define HOST	1
/*
 * A check of the model itself on the build host: plain shmem memfds, whose
 * semantics agree with MFD_UNMAPPED's for everything but executability,
 * private mappings, hugetlb and the memlock charge, which are not tried.
 */
#undef MFD_UNMAPPED
#define MFD_UNMAPPED		0
static const unsigned int create_bits[] = { MFD_CLOEXEC, MFD_ALLOW_SEALING };
#else
#define HOST	0
static const unsigned int create_bits[] = {
	MFD_CLOEXEC, MFD_ALLOW_SEALING, MFD_HUGETLB, MFD_NOEXEC_SEAL, MFD_EXEC,
};
#endif

static void op_create(struct slot *s)
{
	unsigned int flags = MFD_UNMAPPED, i, name_kind = rnd_below(10);
#ifdef HOST_FUZZ
	if (name_kind == 3)
		name_kind = 4;	/* newer kernels differ on a NULL name */
#endif
	char name[300], what[64];
	bool flags_ok;
	int fd, err, want;

	for (i = 0; i < ARRAY_SIZE(create_bits); i++)
		if (chance(i < 2 ? 60 : 12))
			flags |= create_bits[i];
	if (chance(8))
		flags |= 1U << (6 + rnd_below(26));
	flags_ok = !(flags & ~0x3fU) && !(flags & (MFD_HUGETLB | MFD_EXEC));

	/* Names: usual, empty, the longest allowed (249 bytes), one more, NULL. */
	if (name_kind == 0) {
		name[0] = '\0';
	} else if (name_kind == 1 || name_kind == 2) {
		memset(name, 'n', 248 + name_kind);
		name[248 + name_kind] = '\0';
	} else {
		snprintf(name, sizeof(name), "fuzz-%llu", (unsigned long long)rnd_below(1000));
	}
	fd = name_kind == 3 ? syscall(SYS_memfd_create, NULL, flags) : memfd_create(name, flags);
	err = fd < 0 ? errno : 0;
	fs.by_op[0]++;
	/* The flags are checked before the name. */
	want = !flags_ok ? EINVAL : name_kind == 3 ? EFAULT : name_kind == 2 ? EINVAL : 0;
	snprintf(what, sizeof(what), "memfd_create(%#x, name kind %u)", flags, name_kind);
	if (!expect_err(what, err, 1, want) || err) {
		if (fd >= 0)
			close(fd);
		return;
	}
	s->fd = fd;
	s->rofd = -1;
	s->size = 0;
	s->seals = (flags & MFD_NOEXEC_SEAL) ? F_SEAL_EXEC :
		   (flags & MFD_ALLOW_SEALING) ? 0 : F_SEAL_SEAL;
	s->marker = rnd_below(NR_MARKERS);
	memset(s->inv, 0xff, SHADOW);
	check_seals(s, "memfd_create");
	check_size(s, "memfd_create");
}

/* A file offset: mostly in the checked range, sometimes far or absurd. */
static int64_t pick_offset(bool allow_bad)
{
	switch (rnd_below(allow_bad ? 20 : 16)) {
	case 0:
		return 0;
	case 1:
		return FAR_BASE + rnd_below(16) * PG;
	case 16:
		return -1 - (int64_t)rnd_below(PG);
	case 17:
		return LLONG_MAX - rnd_below(3 * PG);
	case 18:
		return (int64_t)1 << (40 + rnd_below(23));
	case 19:
		return LLONG_MIN;
	default:
		return rnd_below(SHADOW);
	}
}

static uint64_t pick_len(uint64_t off)
{
	uint64_t max = off < SHADOW ? SHADOW - off : 4 * PG;
	uint64_t len = chance(30) ? rnd_below(64) + 1 : rnd_below(64 * 1024) + 1;

	return len < max ? len : max;
}

static void op_ftruncate(struct slot *s)
{
	int64_t size = chance(80) ? (int64_t)rnd_below(SHADOW + 1) : pick_offset(true);
	bool ro = chance(5) && s->rofd >= 0;
	int err, want;

	fs.by_op[1]++;
	err = ftruncate(ro ? s->rofd : s->fd, size) ? errno : 0;
	if (size < 0 || ro)
		want = EINVAL;
	else if ((uint64_t)size < s->size && (s->seals & F_SEAL_SHRINK))
		want = EPERM;
	else if ((uint64_t)size > s->size && (s->seals & F_SEAL_GROW))
		want = EPERM;
	else
		want = 0;
	if (expect_err("ftruncate", err, 1, want) && !err)
		model_resize(s, size);
	check_size(s, "ftruncate");
}

/* Write repetitions of the slot's marker: plain bytes only in @buf, wiped. */
static void op_pwrite(struct slot *s, uint8_t *buf)
{
	int64_t off = pick_offset(true);
	uint64_t len = off >= 0 ? pick_len(off) : 1 + rnd_below(PG);
	bool ro = chance(5) && s->rofd >= 0;
	uint64_t i, phase = rnd_below(MARKER_LEN);
	int err, want = 0;
	char what[128];
	ssize_t n;

	fs.by_op[2]++;
	for (i = 0; i < len; i++)
		buf[i] = marker_byte(s->marker, phase + i);
	n = pwrite(ro ? s->rofd : s->fd, buf, len, off);
	err = n < 0 ? errno : 0;
	explicit_bzero(buf, len);

	/* In the order ksys_pwrite64(), rw_verify_area() and the file check. */
	if (off < 0)
		want = EINVAL;
	else if (ro)
		want = EBADF;
	else if ((uint64_t)off > MAX_LFS - len)
		want = EINVAL;
	else if (s->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE))
		want = EPERM;
	else if ((s->seals & F_SEAL_GROW) && (uint64_t)off + len > s->size)
		want = EPERM;
	snprintf(what, sizeof(what), "pwrite(%llu at %lld%s, size %llu, seals %#x)",
		 (unsigned long long)len, (long long)off, ro ? ", read-only fd" : "",
		 (unsigned long long)s->size, s->seals);
	if (!expect_err(what, err, 1, want) || err)
		return;
	if ((uint64_t)n != len) {
		fuzz_fail("pwrite of %llu bytes at %lld: %zd", (unsigned long long)len,
			  (long long)off, n);
		return;
	}
	fs.bytes_written += n;
	for (i = 0; i < len && off + i < SHADOW; i++)
		s->inv[off + i] = ((const volatile uint8_t *)inv_markers[s->marker])
					[(phase + i) % MARKER_LEN];
	if ((uint64_t)off + len > s->size)
		s->size = off + len;
	check_size(s, "pwrite");
	if (chance(10))
		s->marker = rnd_below(NR_MARKERS);
}

static void op_pread(struct slot *s, uint8_t *buf)
{
	int64_t off = chance(90) ? (int64_t)rnd_below(SHADOW) : pick_offset(true);
	uint64_t len = off >= 0 ? pick_len(off) : 1 + rnd_below(PG), want_n;
	bool ro = chance(30) && s->rofd >= 0;
	ssize_t n;
	int err;

	fs.by_op[3]++;
	n = pread(ro ? s->rofd : s->fd, buf, len, off);
	err = n < 0 ? errno : 0;
	if (!expect_err("pread", err, 1,
			off < 0 || (uint64_t)off > MAX_LFS - len ? EINVAL : 0) || err) {
		if (n > 0)
			explicit_bzero(buf, n);
		return;
	}
	want_n = (uint64_t)off >= s->size ? 0 : s->size - off < len ? s->size - off : len;
	if ((uint64_t)n != want_n) {
		fuzz_fail("pread of %llu at %lld with size %llu: %zd, want %llu",
			  (unsigned long long)len, (long long)off, (unsigned long long)s->size,
			  n, (unsigned long long)want_n);
		if (n > 0)
			explicit_bzero(buf, n);
		return;
	}
	fs.bytes_read += n;
	if ((uint64_t)off < SHADOW)
		check_bytes(s, buf, off, n, "pread");
	else
		explicit_bzero(buf, n);
}

static void op_fallocate(struct slot *s)
{
	static const int modes[] = {
		0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE, FALLOC_FL_COLLAPSE_RANGE,
		FALLOC_FL_INSERT_RANGE, FALLOC_FL_UNSHARE_RANGE, FALLOC_FL_NO_HIDE_STALE,
		FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	};
	int mode = chance(70) ? modes[rnd_below(3)] :
		   chance(80) ? modes[rnd_below(ARRAY_SIZE(modes))] : (int)rnd();
	int64_t off = pick_offset(true);
	int64_t len = chance(5) ? -(int64_t)rnd_below(2) :
		      off >= 0 ? (int64_t)pick_len(off) : 1 + (int64_t)rnd_below(PG);
	bool ro = chance(5) && s->rofd >= 0;
	bool punch = mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE);
	bool alloc = mode == 0 || mode == FALLOC_FL_KEEP_SIZE;
	char what[64];
	int err;

	fs.by_op[4]++;
	err = fallocate(ro ? s->rofd : s->fd, mode, off, len) ? errno : 0;
	snprintf(what, sizeof(what), "fallocate(%#x, %lld, %lld)", mode, (long long)off,
		 (long long)len);
	if (off < 0 || len <= 0) {
		/* The VFS checks offset and length first. */
		expect_err(what, err, 1, EINVAL);
	} else if (!punch && !alloc) {
		/* Which check refuses it first depends on the mode bits. */
		expect_err(what, err, 4, EOPNOTSUPP, EINVAL, EBADF, EFBIG);
	} else if (ro) {
		expect_err(what, err, 1, EBADF);
	} else if ((uint64_t)off + len > MAX_LFS || off + len < 0) {
		expect_err(what, err, 1, EFBIG);
	} else if (punch) {
		if (!expect_err(what, err, 1,
				s->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE) ? EPERM : 0) || err)
			goto out;
		if ((uint64_t)off < SHADOW) {
			uint64_t end = (uint64_t)off + len < SHADOW ? (uint64_t)off + len : SHADOW;

			memset(s->inv + off, 0xff, end - off);
		}
	} else {
		bool grows = (uint64_t)off + len > s->size;

		if (!expect_err(what, err, 1,
				(s->seals & F_SEAL_GROW) && grows ? EPERM : 0) || err)
			goto out;
		if (mode == 0 && grows)
			s->size = off + len;
	}
out:
	check_size(s, "fallocate");
}

/* Read the mapping page by page (wiping nothing: it is the file), SIGBUS past EOF. */
static void check_mapping(struct slot *s, bool store)
{
	struct mapping *m = &s->map;
	uint64_t pg, npages = m->len / PG;
	volatile uint8_t *p;

	for (pg = 0; pg < npages; pg++) {
		uint64_t foff = m->off + pg * PG, i;
		volatile uint64_t bad = 0;
		bool past_eof = foff >= s->size;

		if (!chance(25))
			continue;
		p = m->addr + pg * PG;
		fault_sig = 0;
		if (!sigsetjmp(fault_jmp, 1)) {
			/* Stores only inside the file, and only if allowed. */
			if (store && !past_eof) {
				uint64_t end = s->size - foff < PG ? s->size - foff : PG;
				uint64_t phase = rnd_below(MARKER_LEN);

				for (i = 0; i < end; i++) {
					p[i] = marker_byte(s->marker, phase + i);
					if (foff + i < SHADOW)
						s->inv[foff + i] = ~p[i];
				}
				fs.bytes_written += end;
			}
			for (i = 0; i < PG; i++) {
				uint8_t want = foff + i < SHADOW ? (uint8_t)~s->inv[foff + i] : p[i];

				bad += p[i] != want;
			}
			fs.bytes_checked += PG;
			if (past_eof)
				fuzz_fail("mapping: file page at %llu past EOF %llu did not fault",
					  (unsigned long long)foff, (unsigned long long)s->size);
			else if (bad)
				fuzz_fail("mapping: %llu bytes of the page at %llu differ (size %llu)",
					  (unsigned long long)bad, (unsigned long long)foff,
					  (unsigned long long)s->size);
		} else {
			fs.sigbus++;
			if (!past_eof || fault_sig != SIGBUS)
				fuzz_fail("mapping: signal %d at file page %llu, size %llu",
					  fault_sig, (unsigned long long)foff,
					  (unsigned long long)s->size);
		}
	}
}

static void op_mmap(struct slot *s)
{
	static const int extra[] = {
		MAP_POPULATE, MAP_LOCKED, MAP_NORESERVE, MAP_HUGETLB, MAP_STACK,
		MAP_SYNC, MAP_FIXED_NOREPLACE, MAP_GROWSDOWN, MAP_32BIT, MAP_UNINITIALIZED,
	};
	int type = chance(75) ? MAP_SHARED : chance(50) ? MAP_SHARED_VALIDATE :
		   chance(70) ? MAP_PRIVATE : (int)rnd_below(16);
	int prot = chance(60) ? PROT_READ | PROT_WRITE : chance(50) ? PROT_READ :
		   chance(50) ? PROT_READ | PROT_EXEC : (int)rnd_below(16);
#ifdef HOST_FUZZ
	type = MAP_SHARED;
	prot &= PROT_READ | PROT_WRITE;
#endif
	int flags = type, fd = s->fd, err;
	uint64_t off = chance(90) ? rnd_below(SHADOW / PG) * PG :
		       chance(50) ? rnd_below(SHADOW) : (uint64_t)pick_offset(true);
#ifdef HOST_FUZZ
	uint64_t len = (1 + rnd_below(64)) * PG;
#else
	uint64_t len = chance(95) ? (1 + rnd_below(64)) * PG : 128 * MiB;
#endif
	bool ro = chance(15) && s->rofd >= 0;
	bool writable_shared;
	void *addr;

	fs.by_op[5]++;
	slot_unmap(s);
	if (chance(20))
		flags |= extra[rnd_below(ARRAY_SIZE(extra))];
	if (ro)
		fd = s->rofd;
	addr = mmap(NULL, len, prot, flags, fd, off);
	err = addr == MAP_FAILED ? errno : 0;

	writable_shared = (type == MAP_SHARED || type == MAP_SHARED_VALIDATE) &&
			  (prot & PROT_WRITE);
	/*
	 * Only the combinations whose outcome is certain are asserted; the
	 * others only must not succeed wrongly: a private, executable,
	 * over-limit, misaligned or write-sealed one must fail.
	 */
	if (!err) {
		bool must_fail = type == MAP_PRIVATE || (prot & PROT_EXEC) || len > FUZZ_MEMLOCK ||
				 off % PG || (ro && writable_shared) ||
				 (writable_shared && (s->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)));

		if (must_fail || (type != MAP_SHARED && type != MAP_SHARED_VALIDATE)) {
			fuzz_fail("mmap(len %llu, prot %#x, flags %#x, off %llu%s, seals %#x) succeeded",
				  (unsigned long long)len, prot, flags, (unsigned long long)off,
				  ro ? ", read-only fd" : "", s->seals);
			munmap(addr, len);
			return;
		}
		fs.calls++;
		fs.ok++;
		s->map.addr = addr;
		s->map.off = off;
		s->map.len = len;
		s->map.prot = prot;
		if (prot & PROT_READ)
			check_mapping(s, writable_shared &&
					 !(flags & ~(MAP_SHARED | MAP_SHARED_VALIDATE | MAP_NORESERVE |
						     MAP_POPULATE | MAP_LOCKED | MAP_STACK)));
		return;
	}
	fs.calls++;
	fs.refused++;
	if (type == MAP_SHARED && !(flags & ~MAP_SHARED) && prot == (PROT_READ | PROT_WRITE) &&
	    !(off % PG) && off < SHADOW && len <= 64 * PG && !ro &&
	    !(s->seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
		fuzz_fail("mmap(len %llu, PROT_READ|PROT_WRITE, MAP_SHARED, off %llu): %s",
			  (unsigned long long)len, (unsigned long long)off, upool_errname(err));
	/* Refused, by whichever check do_mmap() makes first. */
	if (prot & PROT_EXEC && err != EPERM && err != EINVAL && err != EACCES &&
	    err != EOPNOTSUPP && err != EOVERFLOW && err != EAGAIN && err != ENOMEM)
		fuzz_fail("mmap with PROT_EXEC: %s", upool_errname(err));
}

static void op_madvise(struct slot *s)
{
	static const int advice[] = {
		MADV_DONTNEED, MADV_REMOVE, MADV_WILLNEED, MADV_COLD, MADV_PAGEOUT,
		MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_FREE, MADV_DONTFORK, MADV_DOFORK,
		MADV_MERGEABLE, MADV_HUGEPAGE, MADV_COLLAPSE, MADV_WIPEONFORK, MADV_RANDOM,
		MADV_SEQUENTIAL, MADV_DONTDUMP, MADV_HWPOISON, MADV_SOFT_OFFLINE, 12345,
	};
	struct mapping *m = &s->map;
	uint64_t first, n;
	int adv, err;

	fs.by_op[6]++;
	if (!m->addr)
		return;
	adv = advice[rnd_below(ARRAY_SIZE(advice))];
	first = rnd_below(m->len / PG);
	n = 1 + rnd_below(m->len / PG - first);
	err = madvise(m->addr + first * PG, n * PG, adv) ? errno : 0;
	fs.calls++;
	err ? fs.refused++ : fs.ok++;
	/* Without CONFIG_MEMORY_FAILURE these two are unknown advice. */
	if ((adv == MADV_HWPOISON || adv == MADV_SOFT_OFFLINE) && err != EPERM && err != EINVAL)
		fuzz_fail("madvise(%d) as uid %d: %s, want EPERM", adv, NOBODY, ERRN(err));
	/* MADV_REMOVE punches the hole it covers inside the file. */
	if (adv == MADV_REMOVE && !err) {
		uint64_t a = m->off + first * PG, b = a + n * PG, i;

		for (i = a; i < b && i < SHADOW; i++)
			s->inv[i] = 0xff;
	}
	if (chance(50) && (m->prot & PROT_READ))
		check_mapping(s, false);
}

static void op_seal(struct slot *s)
{
	unsigned int req = 0, before = s->seals;
	bool ro = chance(5) && s->rofd >= 0;
	bool wmap = s->map.addr && (s->map.prot & PROT_WRITE);
	int err;

	fs.by_op[7]++;
	while (!req)
		req = rnd_below(ALL_SEALS + 1) & ~(chance(70) ? F_SEAL_SEAL : 0);
	if (chance(5))
		req |= 1U << (6 + rnd_below(26));
#ifdef HOST_FUZZ
	/* shmem writes up to EOF under F_SEAL_GROW, MFD_UNMAPPED refuses it all. */
	req &= ~F_SEAL_GROW;
	if (!req)
		return;
#endif
	err = fcntl(ro ? s->rofd : s->fd, F_ADD_SEALS, req) ? errno : 0;
	/* F_SEAL_EXEC on an executable file implies the write seals. */
	if (req & F_SEAL_EXEC) {
		struct stat st;

		if (!fstat(s->fd, &st) && (st.st_mode & 0111))
			req |= F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_FUTURE_WRITE;
	}
	fs.calls++;
	err ? fs.refused++ : fs.ok++;
	if (!err) {
		if ((req & ~ALL_SEALS) || (before & F_SEAL_SEAL) || ro ||
		    ((req & F_SEAL_WRITE) && wmap))
			fuzz_fail("F_ADD_SEALS %#x on seals %#x%s%s succeeded", req, before,
				  ro ? ", read-only fd" : "", wmap ? ", mapped writable" : "");
		s->seals |= req;
	} else if (err != EINVAL && err != EPERM && err != EBUSY) {
		fuzz_fail("F_ADD_SEALS %#x: %s", req, upool_errname(err));
	} else if (err == EBUSY && !(req & F_SEAL_WRITE)) {
		fuzz_fail("F_ADD_SEALS %#x: EBUSY without F_SEAL_WRITE", req);
	} else if (err == EPERM && !(before & F_SEAL_SEAL) && !ro) {
		fuzz_fail("F_ADD_SEALS %#x on seals %#x: EPERM", req, before);
	}
	check_seals(s, "F_ADD_SEALS");
}

static void op_reopen(struct slot *s)
{
	char path[64];

	fs.by_op[8]++;
	if (s->rofd >= 0) {
		close(s->rofd);
		s->rofd = -1;
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->fd);
	s->rofd = open(path, O_RDONLY | O_CLOEXEC);
	/*
	 * An MFD_UNMAPPED file cannot be opened again (ENXIO, as for
	 * memfd_secret()); the host's shmem memfds can, which keeps the
	 * read-only paths of the other operations checked there.
	 */
	expect_err("reopen through /proc/self/fd", s->rofd < 0 ? errno : 0, 1,
		   HOST ? 0 : ENXIO);
	if (!HOST && s->rofd >= 0) {
		close(s->rofd);
		s->rofd = -1;
	}
}

static void op_lseek(struct slot *s)
{
	static const int whence[] = { SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE, 7 };
	int w = whence[rnd_below(ARRAY_SIZE(whence))];
	int64_t off = pick_offset(true);
	off_t r;

	fs.by_op[9]++;
	r = lseek(s->fd, off, w);
	fs.calls++;
	if (r < 0) {
		fs.refused++;
		if (errno != EINVAL && errno != ENXIO && errno != EOVERFLOW)
			fuzz_fail("lseek(%lld, %d): %s", (long long)off, w, upool_errname(errno));
	} else {
		fs.ok++;
	}
}

/*
 * The fuzzer's buffer for plain data, @len bytes. Any memory would do for
 * the model, but not for kcore_scan: compaction moves an ordinary page and
 * frees the old copy without wiping it, so a marker that such a buffer held
 * for a moment could stay in RAM (with compaction stirred as kcore_scan
 * does, it did in 3 of 4 runs). A memfd_secret page is neither movable nor
 * in the direct map.
 */
static uint8_t *plain_buffer(size_t len)
{
	int fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
	void *p = MAP_FAILED;

	if (fd >= 0 && !ftruncate(fd, len))
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (p != MAP_FAILED)
		return p;
	/* The model's check on a build host may have no memfd_secret. */
	if (HOST)
		return malloc(len);
	tap_diag("memfd_secret buffer of %zu bytes: %m", len);
	return NULL;
}

/* The fuzz loop, as uid 65534; @arg: the seconds. Holds its files after, see kcore. */
struct fuzz_arg {
	double seconds;
	int ready_fd;		/* written once the files are ready to be scanned */
	int release_fd;		/* read until the scan is over */
};

static bool fuzz_main(void *p)
{
	struct fuzz_arg *a = p;
	struct rlimit rl = { FUZZ_MEMLOCK, FUZZ_MEMLOCK };
	struct sigaction sa = { .sa_handler = on_fault, .sa_flags = SA_NODEFER };
	double t0 = upool_now(), t;
	uint8_t *buf;
	unsigned int i;
	char c = 0;

	/* Lowering a limit needs no privilege. */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	buf = plain_buffer(SHADOW);
	for (i = 0; i < NR_SLOTS; i++) {
		slots[i].fd = slots[i].rofd = -1;
		slots[i].inv = malloc(SHADOW);
		if (!slots[i].inv || !buf) {
			tap_diag("out of memory");
			return false;
		}
	}
	while ((t = upool_now() - t0) < a->seconds) {
		struct slot *s = &slots[rnd_below(NR_SLOTS)];
		unsigned int op = rnd_below(100);

		if (s->fd < 0) {
			op_create(s);
			continue;
		}
		if (op < 2)
			slot_close(s);
		else if (op < 14)
			op_ftruncate(s);
		else if (op < 36)
			op_pwrite(s, buf);
		else if (op < 56)
			op_pread(s, buf);
		else if (op < 70)
			op_fallocate(s);
		else if (op < 80)
			op_mmap(s);
		else if (op < 86)
			op_madvise(s);
		else if (op < 92)
			op_seal(s);
		else if (op < 96)
			op_reopen(s);
		else
			op_lseek(s);
		if (fs.failures > 200)
			break;
	}
	/* A final full check of every file. */
	for (i = 0; i < NR_SLOTS; i++) {
		struct slot *s = &slots[i];
		uint64_t n;
		ssize_t r;

		if (s->fd < 0)
			continue;
		n = s->size < SHADOW ? s->size : SHADOW;
		r = pread(s->fd, buf, n, 0);
		if (r != (ssize_t)n)
			fuzz_fail("final pread of %llu bytes: %zd", (unsigned long long)n, r);
		else
			check_bytes(s, buf, 0, n, "final pread");
		if (s->map.addr && (s->map.prot & PROT_READ))
			check_mapping(s, false);
	}
	explicit_bzero(buf, SHADOW);
	tap_diag("uid %d: %llu calls in %.1f s (%.0f/s): %llu succeeded, %llu refused; %.1f MiB written, %.1f MiB read, %.1f MiB checked, %llu SIGBUS past EOF; %llu model violations",
		 NOBODY, (unsigned long long)fs.calls, t, fs.calls / t, (unsigned long long)fs.ok,
		 (unsigned long long)fs.refused, fs.bytes_written / (double)MiB,
		 fs.bytes_read / (double)MiB, fs.bytes_checked / (double)MiB,
		 (unsigned long long)fs.sigbus, (unsigned long long)fs.failures);
	tap_diag("ops: create %llu, ftruncate %llu, pwrite %llu, pread %llu, fallocate %llu, mmap %llu, madvise %llu, seal %llu, reopen %llu, lseek %llu",
		 (unsigned long long)fs.by_op[0], (unsigned long long)fs.by_op[1],
		 (unsigned long long)fs.by_op[2], (unsigned long long)fs.by_op[3],
		 (unsigned long long)fs.by_op[4], (unsigned long long)fs.by_op[5],
		 (unsigned long long)fs.by_op[6], (unsigned long long)fs.by_op[7],
		 (unsigned long long)fs.by_op[8], (unsigned long long)fs.by_op[9]);

	/* Hold the files (and their pages) while the parent scans. */
	if (a->ready_fd >= 0) {
		if (write(a->ready_fd, "r", 1) != 1 || read(a->release_fd, &c, 1) < 0)
			tap_diag("pipe: %m");
	}
	return !fs.failures && fs.calls > 100;
}

/* --- memfd_fuzz and kcore_scan ------------------------------------------------ */

static double fuzz_seconds;

static enum tap_result test_memfd_fuzz(void)
{
	struct fuzz_arg a = { .seconds = fuzz_seconds, .ready_fd = -1, .release_fd = -1 };

	return as_nobody(fuzz_main, &a);
}

/*
 * Compact all memory, again and again, until @fd is readable: the fuzzer's
 * own buffers and page tables move, and no MFD_UNMAPPED page may (they are
 * not movable, and a copy would be in the direct map). Returns how many
 * full compactions ran.
 */
static int stir_compaction(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n = 0;

	while (poll(&pfd, 1, 50) == 0) {
		if (upool_write_str("/proc/sys/vm/compact_memory", "1"))
			break;
		n++;
	}
	return n;
}

static enum tap_result test_kcore_scan(void)
{
	struct kcore_needle needles[NR_MARKERS + 1];
	struct fuzz_arg a = { .seconds = fuzz_seconds / 3 };
	int ready[2], release[2], ctl_fd, found, i, status;
	uint64_t scanned = 0;
	unsigned char plain[MARKER_LEN];
	double t;
	bool ok = true;
	struct kcore kc;
	int nr_compactions;
	pid_t pid;
	char c;

	if (kcore_open(&kc))
		return skip("/proc/kcore cannot be opened");
	/* The control: a plain memfd, in the direct map, must be found. */
	ctl_fd = memfd_create("kcore-control", MFD_CLOEXEC);
	for (i = 0; i < MARKER_LEN; i++)
		plain[i] = ~((volatile unsigned char *)inv_control)[i];
	if (ctl_fd < 0 || pwrite(ctl_fd, plain, MARKER_LEN, 0) != MARKER_LEN) {
		tap_diag("control memfd: %m");
		return TAP_FAIL;
	}
	explicit_bzero(plain, sizeof(plain));

	if (pipe(ready) || pipe(release)) {
		tap_diag("pipe: %m");
		return TAP_FAIL;
	}
	a.ready_fd = ready[1];
	a.release_fd = release[0];
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(ready[0]);
		close(release[1]);
		rng_state ^= 0x5bd1e995;
		_exit(as_nobody(fuzz_main, &a) == TAP_PASS ? KSFT_PASS : KSFT_FAIL);
	}
	close(ready[1]);
	close(release[0]);
	nr_compactions = pid > 0 ? stir_compaction(ready[0]) : 0;
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		tap_diag("the fuzzing child did not get ready");
		ok = false;
		goto out;
	}

	for (i = 0; i < NR_MARKERS; i++)
		needles[i] = (struct kcore_needle){ .bytes = inv_markers[i], .len = MARKER_LEN,
						    .xor = 0xff };
	needles[NR_MARKERS] = (struct kcore_needle){ .bytes = inv_control, .len = MARKER_LEN,
						      .xor = 0xff };
	t = upool_now();
	found = kcore_find_all(&kc, needles, NR_MARKERS + 1, &scanned);
	t = upool_now() - t;
	if (found < 0) {
		tap_diag("kcore scan: %s", upool_errname(-found));
		ok = false;
		goto out;
	}
	for (i = 0; i < NR_MARKERS; i++)
		if (needles[i].found) {
			tap_diag("marker %d written to an MFD_UNMAPPED file found in RAM at %#llx",
				 i, (unsigned long long)needles[i].paddr);
			ok = false;
		}
	if (!needles[NR_MARKERS].found) {
		tap_diag("the control marker in a plain memfd was not found: the scan is blind");
		ok = false;
	}
	tap_diag("kcore: %.0f MiB scanned in %.1f s, %d of %d unmapped markers found, control %s; %d full compactions during the fuzz",
		 scanned / (double)MiB, t, found - needles[NR_MARKERS].found, NR_MARKERS,
		 needles[NR_MARKERS].found ? "found" : "missing", nr_compactions);
out:
	if (write(release[1], "x", 1) < 0)
		ok = false;
	close(release[1]);
	close(ready[0]);
	if (pid > 0 && (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			WEXITSTATUS(status))) {
		tap_diag("the fuzz during the scan failed");
		ok = false;
	}
	close(ctl_fd);
	kcore_close(&kc);
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- read_races ------------------------------------------------------------------ */

/*
 * read() against truncation and hole punching of the same file, which a
 * caller may well do from two threads. A page being read is mapped in the
 * reader's mermap slot; truncation must not zero or free it under the copy:
 * every page read is either entirely what was written or entirely zero,
 * and (CONFIG_MERMAP_DEBUG, immediate mode) the checker does not see a page
 * leave the file while a mapping of it is live.
 */
#define RR_PAGES		64
#define RR_SECONDS		4.0
#define RR_READERS		2

struct rr_reader {
	pthread_t t;
	unsigned int id;
	int fd;
	uint64_t reads, pages, zero_pages, mixed, errors;
};

static atomic_bool rr_stop, rr_pause;
static atomic_int rr_parked;

static void rr_fill(uint8_t *buf, unsigned int first, unsigned int n)
{
	unsigned int p;

	for (p = 0; p < n; p++)
		memset(buf + p * PG, first + p + 1, PG);
}

static void *rr_main(void *arg)
{
	struct rr_reader *r = arg;
	uint8_t *buf = aligned_alloc(PG, RR_PAGES * PG);

	/*
	 * A read is atomic per batch of pages only if its copy does not
	 * fault: a fault on the buffer ends the batch mid-page, and the rest
	 * of that page is read after the lock was dropped, maybe as a hole.
	 * So: a page-aligned buffer, resident and locked before the first read.
	 */
	if (buf) {
		memset(buf, 0, RR_PAGES * PG);
		mlock(buf, RR_PAGES * PG);
	}
	rng_state = hash_seed(base_seed, 200 + r->id);
	while (buf && !atomic_load(&rr_stop)) {
		unsigned int first = rnd_below(RR_PAGES), n = 1 + rnd_below(RR_PAGES - first), p;
		ssize_t got;

		/*
		 * Parked while the file is written back: a read racing a
		 * write may see a page half written, which is not the point.
		 */
		if (atomic_load(&rr_pause)) {
			atomic_fetch_add(&rr_parked, 1);
			while (atomic_load(&rr_pause) && !atomic_load(&rr_stop))
				usleep(50);
			atomic_fetch_sub(&rr_parked, 1);
			continue;
		}
		got = pread(r->fd, buf, n * PG, first * PG);

		r->reads++;
		if (got < 0) {
			r->errors++;
			continue;
		}
		for (p = 0; p < got / PG; p++) {
			const uint8_t *b = buf + p * PG;
			uint8_t want = first + p + 1;
			unsigned int i, same = 0, zero = 0;

			for (i = 0; i < PG; i++) {
				same += b[i] == want;
				zero += !b[i];
			}
			r->pages++;
			if (zero == PG)
				r->zero_pages++;
			else if (same != PG)
				r->mixed++;
		}
	}
	free(buf);
	return NULL;
}

static enum tap_result test_read_races(void)
{
	struct rr_reader r[RR_READERS] = { 0 };
	uint64_t truncs = 0, punches = 0, reads = 0, pages = 0, zero = 0, mixed = 0, errors = 0;
	uint8_t *pattern = malloc(RR_PAGES * PG);
	long reports0, reports1;
	bool ok = true;
	unsigned int i;
	double t0;
	int fd;

	fd = memfd_create("read-races", MFD_UNMAPPED | MFD_CLOEXEC);
	if (fd < 0 || !pattern) {
		tap_diag("memfd_create(MFD_UNMAPPED): %m");
		return TAP_FAIL;
	}
	/* The checker reports only where immediate mode promises no stale entry. */
	if (!HOST && upool_write_str(UPOOL_GLOBAL_DIR "/flush_on_free", "immediate")) {
		tap_diag("cannot set flush_on_free");
		return TAP_FAIL;
	}
	rr_fill(pattern, 0, RR_PAGES);
	if (pwrite(fd, pattern, RR_PAGES * PG, 0) != (ssize_t)(RR_PAGES * PG)) {
		tap_diag("pwrite: %m");
		return TAP_FAIL;
	}
	reports0 = klog_count("while a stale mermap TLB entry");
	atomic_store(&rr_stop, false);
	atomic_store(&rr_pause, false);
	atomic_store(&rr_parked, 0);
	for (i = 0; i < RR_READERS; i++) {
		r[i].id = i;
		r[i].fd = fd;
		if (pthread_create(&r[i].t, NULL, rr_main, &r[i])) {
			tap_diag("pthread_create failed");
			return TAP_FAIL;
		}
	}
	t0 = upool_now();
	while (upool_now() - t0 < RR_SECONDS) {
		unsigned int first = rnd_below(RR_PAGES), n = 1 + rnd_below(RR_PAGES - first);

		if (chance(50)) {
			if (ftruncate(fd, first * PG)) {
				tap_diag("ftruncate: %m");
				ok = false;
				break;
			}
			truncs++;
		} else {
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, first * PG,
				      n * PG)) {
				tap_diag("fallocate(PUNCH_HOLE): %m");
				ok = false;
				break;
			}
			punches++;
		}
		/* Everything back, the same bytes as before, with no reader running. */
		atomic_store(&rr_pause, true);
		while (atomic_load(&rr_parked) < RR_READERS)
			usleep(50);
		if (pwrite(fd, pattern, RR_PAGES * PG, 0) != (ssize_t)(RR_PAGES * PG)) {
			tap_diag("pwrite: %m");
			ok = false;
		}
		atomic_store(&rr_pause, false);
		if (!ok)
			break;
		/* Let the readers run against the truncated file for a while. */
		usleep(2000);
	}
	atomic_store(&rr_stop, true);
	for (i = 0; i < RR_READERS; i++) {
		pthread_join(r[i].t, NULL);
		reads += r[i].reads;
		pages += r[i].pages;
		zero += r[i].zero_pages;
		mixed += r[i].mixed;
		errors += r[i].errors;
	}
	reports1 = klog_count("while a stale mermap TLB entry");
	close(fd);
	free(pattern);
	tap_diag("%llu truncations and %llu punched holes against %d readers: %llu reads, %llu pages, %llu read as zeroes, %llu mixed, %llu failed reads; checker lines %ld -> %ld",
		 (unsigned long long)truncs, (unsigned long long)punches, RR_READERS,
		 (unsigned long long)reads, (unsigned long long)pages, (unsigned long long)zero,
		 (unsigned long long)mixed, (unsigned long long)errors, reports0, reports1);
	if (mixed || errors || !reads || !truncs || reports0 < 0 || reports1 > reports0)
		ok = false;
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- genl_malformed ------------------------------------------------------------- */

#define NL_BUF			(64 * 1024)

struct nl {
	int fd;
	uint32_t seq;
	uint16_t family;
	uint32_t group;
};

static int nl_send(struct nl *nl, const void *msg, size_t len, uint32_t groups)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = groups };

	return sendto(nl->fd, msg, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
}

/*
 * Collect the answers to @seq for up to @ms: how many carry our family's
 * statistics, and the error of the NLMSG_ERROR (0 for an ack, 1 if none came).
 */
static int nl_answer(struct nl *nl, uint32_t seq, int ms, int *stats)
{
	static uint8_t buf[NL_BUF];
	double until = upool_now() + ms / 1000.0;
	int err = 1;

	*stats = 0;
	while (upool_now() < until) {
		struct timeval tv = { 0, 100000 };
		struct nlmsghdr *h;
		ssize_t n;

		setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(nl->fd, buf, sizeof(buf), 0);
		if (n < 0)
			continue;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				return err;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == nl->family)
				(*stats)++;
		}
	}
	return err;
}

/* A generic netlink request: header, genl header, then @attrs as given. */
static size_t build(uint8_t *buf, struct nl *nl, uint16_t type, uint16_t flags, uint8_t cmd,
		    uint8_t version, uint16_t reserved, const void *attrs, size_t alen)
{
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = NLMSG_DATA(h);

	memset(buf, 0, NLMSG_SPACE(GENL_HDRLEN));
	h->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + alen;
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = ++nl->seq;
	g->cmd = cmd;
	g->version = version;
	g->reserved = reserved;
	if (alen)
		memcpy(buf + NLMSG_LENGTH(GENL_HDRLEN), attrs, alen);
	return h->nlmsg_len;
}

static size_t put_attr(uint8_t *p, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)p;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(p + NLA_HDRLEN, data, len);
	return NLA_ALIGN(a->nla_len);
}

/* Iterate over the attributes in [@p, @p + @len). */
#define for_each_attr(a, p, len, rem)						\
	for ((a) = (struct nlattr *)(p), (rem) = (int)(len);			\
	     (rem) >= NLA_HDRLEN && (a)->nla_len >= NLA_HDRLEN && (a)->nla_len <= (rem); \
	     (rem) -= NLA_ALIGN((a)->nla_len),					\
	     (a) = (struct nlattr *)((uint8_t *)(a) + NLA_ALIGN((a)->nla_len)))

#define ATTR_DATA(a)	((void *)((uint8_t *)(a) + NLA_HDRLEN))
#define ATTR_LEN(a)	((a)->nla_len - NLA_HDRLEN)

/* Resolve the family and its events group through the controller. */
static int nl_resolve(struct nl *nl)
{
	static uint8_t buf[NL_BUF];
	uint8_t attrs[64];
	size_t alen = put_attr(attrs, CTRL_ATTR_FAMILY_NAME, SECMEM_GENL_NAME,
			       sizeof(SECMEM_GENL_NAME));
	size_t len = build(buf, nl, GENL_ID_CTRL, NLM_F_REQUEST, CTRL_CMD_GETFAMILY, 1, 0,
			   attrs, alen);
	struct nlmsghdr *h;
	ssize_t n;
	int err;

	err = nl_send(nl, buf, len, 0);
	if (err)
		return err;
	n = recv(nl->fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		struct nlattr *a, *g, *in;
		int rem, grem, irem;

		if (h->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
		for_each_attr(a, (uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN,
			      h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), rem) {
			if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
				nl->family = *(uint16_t *)ATTR_DATA(a);
			if ((a->nla_type & NLA_TYPE_MASK) != CTRL_ATTR_MCAST_GROUPS)
				continue;
			for_each_attr(g, ATTR_DATA(a), ATTR_LEN(a), grem) {
				uint32_t id = 0;
				bool events = false;

				for_each_attr(in, ATTR_DATA(g), ATTR_LEN(g), irem) {
					if ((in->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_ID)
						id = *(uint32_t *)ATTR_DATA(in);
					if ((in->nla_type & NLA_TYPE_MASK) ==
						    CTRL_ATTR_MCAST_GRP_NAME &&
					    !strcmp(ATTR_DATA(in), SECMEM_GENL_MCGRP_EVENTS))
						events = true;
				}
				if (events)
					nl->group = id;
			}
		}
	}
	return nl->family ? 0 : -ENOENT;
}

struct genl_figures {
	unsigned int sent, errors, dropped, stats_leaked;
};

/* Send a malformed request: it must get an error (or be dropped if @may_drop). */
static bool send_bad(struct nl *nl, struct genl_figures *f, const char *what, const void *msg,
		     size_t len, bool may_drop)
{
	int stats, err;
	uint32_t seq = ((const struct nlmsghdr *)msg)->nlmsg_seq;

	err = nl_send(nl, msg, len, 0);
	f->sent++;
	if (err) {
		/* Refused at send: fine for an oversized one. */
		if (err != -EMSGSIZE && err != -ENOBUFS && err != -EINVAL) {
			tap_diag("%s: send: %s", what, upool_errname(-err));
			return false;
		}
		f->errors++;
		return true;
	}
	err = nl_answer(nl, seq, may_drop ? 300 : 3000, &stats);
	if (stats) {
		f->stats_leaked++;
		tap_diag("%s: answered with statistics", what);
		return false;
	}
	if (err == 1) {
		f->dropped++;
		if (!may_drop)
			tap_diag("%s: no answer", what);
		return may_drop;
	}
	if (err >= 0) {
		tap_diag("%s: acknowledged (%d), want an error", what, err);
		return false;
	}
	f->errors++;
	return true;
}

static bool genl_nobody(void *unused)
{
	static uint8_t msg[NL_BUF * 4 + 64], attrs[NL_BUF * 4];
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	struct genl_figures f = { 0 };
	struct nl nl = { 0 };
	const uint16_t F = NLM_F_REQUEST | NLM_F_ACK;
	uint32_t node0 = upool.node[0].id;
	uint64_t u64 = node0;
	int bufsz = 1 << 20, one = 1, stats, err, i;
	bool ok = true;
	size_t len, alen;

	(void)unused;
	nl.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl.fd < 0 || bind(nl.fd, (struct sockaddr *)&local, sizeof(local))) {
		tap_diag("netlink socket: %m");
		return false;
	}
	setsockopt(nl.fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	/* Errors without a copy of the (possibly huge) request. */
	setsockopt(nl.fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(nl.fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	err = nl_resolve(&nl);
	if (err) {
		tap_diag("resolving the %s family: %s", SECMEM_GENL_NAME, upool_errname(-err));
		return false;
	}

	/* Shorter than a genl header: the header claims 2 bytes of it. */
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, NULL, 0);
	((struct nlmsghdr *)msg)->nlmsg_len = NLMSG_HDRLEN + 2;
	ok &= send_bad(&nl, &f, "genl header cut short", msg, NLMSG_HDRLEN + 2, false);

	/* Unknown commands, including the event ones, which are not requests. */
	for (i = 0; i < 256; i += (i < 8 ? 1 : 37)) {
		char what[48];

		if (i == SECMEM_CMD_GET_STATS)
			continue;
		alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
		len = build(msg, &nl, nl.family, F, i, 1, 0, attrs, alen);
		snprintf(what, sizeof(what), "command %d", i);
		ok &= send_bad(&nl, &f, what, msg, len, false);
	}
	/* No NODE; NODE of 1, 2, 8 bytes; unknown and out-of-range attributes. */
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, NULL, 0);
	ok &= send_bad(&nl, &f, "GET_STATS without NODE", msg, len, false);
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &u64, 1);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "NODE of 1 byte", msg, len, false);
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &u64, 2);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "NODE of 2 bytes", msg, len, false);
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &u64, 8);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "NODE of 8 bytes", msg, len, false);
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	alen += put_attr(attrs + alen, SECMEM_ATTR_MAX + 1, &node0, 4);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "attribute above SECMEM_ATTR_MAX", msg, len, false);
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	alen += put_attr(attrs + alen, 0x3fff, &node0, 4);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "attribute 16383", msg, len, false);
	alen = put_attr(attrs, SECMEM_ATTR_NODE | NLA_F_NESTED, &node0, 4);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "NODE flagged nested", msg, len, false);
	alen = put_attr(attrs, SECMEM_ATTR_POOL_TARGET, &u64, 8);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "a statistics attribute instead of NODE", msg, len, false);
	/* Reserved field set. */
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0xbeef, attrs, alen);
	ok &= send_bad(&nl, &f, "genl reserved field set", msg, len, false);
	/* An attribute whose length runs past the message, or is below its header. */
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	((struct nlattr *)attrs)->nla_len = 200;
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "nla_len past the message", msg, len, false);
	((struct nlattr *)attrs)->nla_len = 2;
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	ok &= send_bad(&nl, &f, "nla_len below the attribute header", msg, len, false);
	/* A trailing partial attribute. */
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	memset(attrs + alen, 0xa5, 3);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen + 3);
	ok &= send_bad(&nl, &f, "3 stray bytes after NODE", msg, len, false);
	/* Bad nodes beyond get_stats_bad_node's: 0xffff, MAX_NUMNODES..., -1. */
	{
		static const uint32_t nodes[] = { 1024, 0xffff, 0x7fffffff, 0x80000000, 1U << 31 | 1 };

		for (i = 0; i < (int)ARRAY_SIZE(nodes); i++) {
			alen = put_attr(attrs, SECMEM_ATTR_NODE, &nodes[i], 4);
			len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs,
				    alen);
			ok &= send_bad(&nl, &f, "a node that does not exist", msg, len, false);
		}
	}
	/* Oversized: 64 KiB and 256 KiB of unknown attributes, then of NODE repeated. */
	{
		static const size_t sizes[] = { NL_BUF - 64, 4 * NL_BUF - 64 };
		unsigned int s;

		for (s = 0; s < ARRAY_SIZE(sizes); s++) {
			for (alen = 0; alen + 8 <= sizes[s];)
				alen += put_attr(attrs + alen, 100 + (alen / 8) % 1000, &node0, 4);
			len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs,
				    alen);
			ok &= send_bad(&nl, &f, "oversized, unknown attributes", msg, len, false);
			for (alen = 0; alen + 8 <= sizes[s];)
				alen += put_attr(attrs + alen, SECMEM_ATTR_NODE | NLA_F_NESTED,
						 &node0, 4);
			len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs,
				    alen);
			ok &= send_bad(&nl, &f, "oversized, NODE flagged nested repeated", msg,
				       len, false);
		}
	}
	/* nlmsg_len beyond what is sent: netlink drops it. */
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	((struct nlmsghdr *)msg)->nlmsg_len = len + 4096;
	ok &= send_bad(&nl, &f, "nlmsg_len past the datagram", msg, len, true);
	/* Random payloads after a valid header, as GET_STATS and as a dump. */
	for (i = 0; i < 300; i++) {
		size_t k, n = rnd_below(256);
		bool dump = chance(20);
		int stats2;
		uint32_t seq;

		for (k = 0; k < n; k++)
			attrs[k] = rnd();
		len = build(msg, &nl, nl.family, F | (dump ? NLM_F_DUMP : 0), SECMEM_CMD_GET_STATS,
			    rnd_below(3), 0, attrs, n);
		seq = nl.seq;
		if (nl_send(&nl, msg, len, 0)) {
			tap_diag("random payload %d: send: %m", i);
			ok = false;
			continue;
		}
		f.sent++;
		/* May be valid by chance: any answer, as long as one comes. */
		err = nl_answer(&nl, seq, 3000, &stats2);
		if (err == 1) {
			tap_diag("random payload %d (%zu bytes%s): no answer", i, n,
				 dump ? ", dump" : "");
			ok = false;
		} else if (err < 0) {
			f.errors++;
		}
	}
	/* Sending to the events group as an unprivileged user. */
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	len = build(msg, &nl, nl.family, NLM_F_REQUEST, SECMEM_CMD_EVENT_LOW_WATERMARK, 1, 0,
		    attrs, alen);
	if (!nl.group || nl.group > 32) {
		/* nl_groups holds the first 32 groups only. */
		tap_diag("events group id %u: cannot be named in sockaddr_nl, not tried", nl.group);
		err = -EPERM;
	} else {
		err = nl_send(&nl, msg, len, 1U << (nl.group - 1));
	}
	if (err != -EPERM) {
		tap_diag("sending to the events group (id %u) as uid %d: %s, want EPERM", nl.group,
			 NOBODY, err ? upool_errname(-err) : "sent");
		ok = false;
	}
	/* Still answering: a valid request gets exactly its statistics. */
	alen = put_attr(attrs, SECMEM_ATTR_NODE, &node0, 4);
	len = build(msg, &nl, nl.family, F, SECMEM_CMD_GET_STATS, 1, 0, attrs, alen);
	if (nl_send(&nl, msg, len, 0) || (err = nl_answer(&nl, nl.seq, 3000, &stats)) ||
	    stats != 1) {
		tap_diag("a valid GET_STATS afterwards: error %d, %d answers", err, stats);
		ok = false;
	}
	tap_diag("uid %d: %u malformed messages sent: %u errors, %u dropped by netlink, %u answered with statistics",
		 NOBODY, f.sent, f.errors, f.dropped, f.stats_leaked);
	close(nl.fd);
	return ok && !f.stats_leaked;
}

static enum tap_result test_genl_malformed(void)
{
	return as_nobody(genl_nobody, NULL);
}

/* --- counters ------------------------------------------------------------------- */

static struct upool_snap start_snap[UPOOL_MAX_NODES];
static u64_t start_vm[UPOOL_NR_VMSTAT];

static enum tap_result test_counters(void)
{
	struct upool_snap now[UPOOL_MAX_NODES], global;
	u64_t vm[UPOOL_NR_VMSTAT], sum[UPOOL_NR_STATS] = { 0 }, pb = upool.pageblock;
	bool ok = true;
	int i, k;

	if (upool_settle(300, 30))
		tap_diag("warning: the statistics did not settle");
	for (i = 0; i < upool.nr_nodes; i++) {
		const struct upool_snap *a = &start_snap[i], *b = &now[i];
		int id = upool.node[i].id;
		long long base0, base1;

		if (upool_snap(id, &now[i]))
			return TAP_FAIL;
		for (k = 0; k < UPOOL_NR_STATS; k++)
			sum[k] += b->stat[k];
		if (b->stat[UPOOL_FREE_BYTES] > b->stat[UPOOL_UNMAPPED_BYTES]) {
			tap_diag("node%d: free_bytes %llu above unmapped_bytes %llu", id,
				 b->stat[UPOOL_FREE_BYTES], b->stat[UPOOL_UNMAPPED_BYTES]);
			ok = false;
		}
		for (k = UPOOL_ALLOC_POOL; k < UPOOL_NR_STATS; k++)
			if (b->stat[k] < a->stat[k]) {
				tap_diag("node%d: %s went back: %llu -> %llu", id,
					 upool_stat_names[k], a->stat[k], b->stat[k]);
				ok = false;
			}
		base0 = a->stat[UPOOL_UNMAPPED_BYTES] -
			(a->stat[UPOOL_CONVERSIONS] - a->stat[UPOOL_RESTORATIONS]) * pb;
		base1 = b->stat[UPOOL_UNMAPPED_BYTES] -
			(b->stat[UPOOL_CONVERSIONS] - b->stat[UPOOL_RESTORATIONS]) * pb;
		if (base0 != base1) {
			tap_diag("node%d: unmapped_bytes - (conversions - restorations) x pageblock: %lld -> %lld",
				 id, base0, base1);
			ok = false;
		}
		tap_diag("node%d: %llu pool allocations, %llu converting, %llu failed, %llu conversions, %llu restorations since the start",
			 id, b->stat[UPOOL_ALLOC_POOL] - a->stat[UPOOL_ALLOC_POOL],
			 b->stat[UPOOL_ALLOC_CONVERT] - a->stat[UPOOL_ALLOC_CONVERT],
			 b->stat[UPOOL_ALLOC_FAIL] - a->stat[UPOOL_ALLOC_FAIL],
			 b->stat[UPOOL_CONVERSIONS] - a->stat[UPOOL_CONVERSIONS],
			 b->stat[UPOOL_RESTORATIONS] - a->stat[UPOOL_RESTORATIONS]);
	}
	if (upool_snap(-1, &global))
		return TAP_FAIL;
	for (k = 0; k < UPOOL_NR_STATS; k++)
		if (global.stat[k] != sum[k]) {
			tap_diag("global %s %llu, sum over the nodes %llu", upool_stat_names[k],
				 global.stat[k], sum[k]);
			ok = false;
		}
	if (upool_vmstat_all(vm))
		return TAP_FAIL;
	{
		static const struct upool_pair mermap[] = {
			{ UPOOL_VM_MERMAP_FLUSH, UPOOL_TLB_FLUSH_MERMAP },
		};
		u64_t s0[UPOOL_NR_STATS] = { 0 }, s1[UPOOL_NR_STATS] = { 0 };

		for (i = 0; i < upool.nr_nodes; i++)
			for (k = 0; k < UPOOL_NR_STATS; k++) {
				s0[k] += start_snap[i].stat[k];
				s1[k] += now[i].stat[k];
			}
		if (!upool_events_agree(upool_alloc_pairs, ARRAY_SIZE(upool_alloc_pairs),
					start_vm, vm, s0, s1))
			ok = false;
		if (!upool_events_agree(mermap, ARRAY_SIZE(mermap), start_vm, vm, s0, s1))
			ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- driver ------------------------------------------------------------------------ */

static const struct subtest subtests[] = {
	{ "sysfs_garbage", "sysfs: garbage and random strings on every knob are EINVAL and change nothing",
	  test_sysfs_garbage },
	{ "sysfs_races", "sysfs: concurrent root writers of garbage and an unprivileged writer",
	  test_sysfs_races },
	{ "memfd_fuzz", "MFD_UNMAPPED: random flags, sizes, modes, offsets, mmap flags and seals match the model",
	  test_memfd_fuzz },
	{ "kcore_scan", "kcore: no marker written during a fuzz is in RAM, the control is",
	  test_kcore_scan },
	{ "read_races", "MFD_UNMAPPED: read() racing truncation and hole punching sees whole pages",
	  test_read_races },
	{ "genl_malformed", "genetlink: malformed and oversized messages from uid 65534 get errors only",
	  test_genl_malformed },
	{ "counters", "counters: consistent with each other and with the start", test_counters },
};

#ifdef HOST_FUZZ
int main(void)
{
	if (getenv("HOST_READ_RACES")) {
		base_seed = time(NULL);
		rng_state = hash_seed(base_seed, 5);
		return test_read_races() == TAP_PASS ? 0 : 1;
	}
	struct fuzz_arg a = { .seconds = env_u64("FUZZ_SECONDS", 5), .ready_fd = -1 };
	uint64_t seed = env_u64("FUZZ_SEED", time(NULL));

	base_seed = seed;
	rng_state = hash_seed(seed, 2);
	make_markers();
	printf("seed %llu\n", (unsigned long long)seed);
	return fuzz_main(&a) ? 0 : 1;
}
#else
int main(int argc, char **argv)
{
	unsigned int i, planned;
	uint64_t seed;

	planned = subtest_select(subtests, ARRAY_SIZE(subtests), argc, argv);
	upool_init_or_skip(true);

	seed = env_u64("FUZZ_SEED", (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
	base_seed = seed;
	rng_state = hash_seed(seed, 999);
	fuzz_seconds = env_u64("FUZZ_SECONDS", 8);
	collect_knobs();
	make_markers();

	tap_plan(planned);
	tap_diag("FUZZ_SEED=%llu FUZZ_SECONDS=%.0f; %d node(s), %u writable files",
		 (unsigned long long)seed, fuzz_seconds, upool.nr_nodes, nr_knobs);
	upool_install_restore();
	if (upool_reset() || upool_wait_empty(60))
		tap_diag("warning: the pool was not empty at the start");
	for (i = 0; i < (unsigned int)upool.nr_nodes; i++)
		if (upool_snap(upool.node[i].id, &start_snap[i]))
			tap_bail("cannot read node%d's statistics", upool.node[i].id);
	if (upool_vmstat_all(start_vm))
		tap_bail("cannot read /proc/vmstat");

	for (i = 0; i < ARRAY_SIZE(subtests); i++) {
		enum tap_result res;

		if (!subtest_selected(&subtests[i], argc, argv))
			continue;
		/* Each sub-test its own stream: a replay of one needs only the seed. */
		rng_state = hash_seed(seed, i);
		res = subtest_run(&subtests[i], SUBTEST_TIMEOUT);
		if (strcmp(subtests[i].id, "counters") && upool_reset()) {
			tap_diag("%s: the knobs could not be reset", subtests[i].id);
			res = TAP_FAIL;
		}
		tap_report(res, subtests[i].name, skip_reason);
	}
	return tap_finish();
}
#endif
