// SPDX-License-Identifier: GPL-2.0
/*
 * Hibernation with secrets held (issue 20): the policy knob
 * /sys/kernel/mm/unmapped/hibernation, "refuse" as mainline or "wipe".
 *
 * The guest has a scratch disk (run-vm.sh VM_SWAP, which puts
 * secmem.swap=/dev/vda and hibernate=nocompress on the kernel command
 * line). The test makes it a swap device, the resume device, and sets
 * /sys/power/disk to test_resume: the kernel writes the image to the disk,
 * reads it back and restores it, in this one boot, and this program goes
 * on after its write to /sys/power/state returns. Without secmem.swap only
 * step 1 runs (the main guest boot); make check-guest-hibernate runs all.
 *
 *  1. knob       reads "[refuse] wipe"; garbage is EINVAL and changes
 *                nothing; both words are accepted and read back.
 *  2. refuse     a secret file open, policy refuse: "disk" is refused
 *                (EPERM), the secret is intact.
 *  3. wipe       policy wipe, held: 64 MiB of an MFD_UNMAPPED mapping and a
 *                memfd_secret page, each page with a 64-byte random
 *                marker, and a control marker in a plain memfd. "disk"
 *                succeeds; afterwards this process runs, an access to
 *                either secret mapping gets SIGBUS, pread() of the
 *                MFD_UNMAPPED file gets EIO, hibernation_wiped_files went
 *                up by 2, a SECRETS_WIPED netlink event came with 2
 *                files and their bytes, and the control reads back.
 *                The pool worker is kept busy meanwhile: a 96 MiB fill
 *                starts just before, and the wiped pages are above its
 *                high watermark, to give back. It must not be caught
 *                halfway through a block when the image is made (the
 *                kernel log is checked for warnings).
 *  4. image      the raw disk, where the image was written uncompressed,
 *                holds no secret marker; it holds the control (the scan is
 *                not blind).
 *  5. cost       the kernel log's line for the wipe: files, pages, time,
 *                and the time per GiB (printed, not judged).
 *  6. after      new secret files can be created and filled again.
 *  7. libsecmem  a libsecmem allocation held across the hibernation (its
 *                arena, an MFD_UNMAPPED memfd, is the third file wiped):
 *                secmem_wiped() said 0 before and says 1 after, realloc
 *                of the wiped allocation fails with EIO, its free survives
 *                (no SIGBUS), secmem_wiped() is 0 again once it is freed,
 *                and a new allocation works.
 *  8. abort      a hibernation that fails after the wipe still tells: with
 *                the swap device off, a new MFD_UNMAPPED file held, "disk"
 *                fails (the image cannot be written) after the snapshot.
 *                The file is wiped all the same (SIGBUS), a SECRETS_WIPED
 *                event comes with as many files as hibernation_wiped_files
 *                grew by, and secret files can be created again at once.
 *
 * Markers are made by getrandom() straight into the memory they test; the
 * program keeps only bit-inverted copies in ordinary memory (kcore.h).
 */
#define _GNU_SOURCE
/* Before <sys/mman.h>: glibc defines the MFD_* it knows only if absent. */
#include <linux/memfd.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
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
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "kcore.h"
#include "procfs.h"
#include "secmem.h"
#include "tap.h"
#include "upool.h"
#include "upool_nl.h"

#ifndef MFD_UNMAPPED
#define MFD_UNMAPPED		0x0040U
#endif

#define KNOB			"/sys/kernel/mm/unmapped/hibernation"
#define WIPED			"/sys/kernel/mm/unmapped/hibernation_wiped_files"
#define MARKER_LEN		64
#define SECRET_BYTES		(64UL << 20)
/* The pool the worker fills while the image is made (test_wipe()). */
#define POOL_BUSY_BYTES		(96ULL << 20)
#define PG			4096UL
#define NR_PAGES		(SECRET_BYTES / PG)
/* Needles: one per 4096 secret pages (a sample), the secretmem page, the control. */
#define SAMPLE_EVERY		256
#define NR_SECRET_NEEDLES	(NR_PAGES / SAMPLE_EVERY + 1)
#define NR_NEEDLES		(NR_SECRET_NEEDLES + 1)

static char swapdev[64];
static unsigned char (*inv)[MARKER_LEN];	/* bit-inverted markers */
static struct kcore_needle needles[NR_NEEDLES];
static volatile unsigned char *mfd_map, *sec_map;
static int mfd_fd = -1, sec_fd = -1, ctl_fd = -1;
static char saved_knob[32];
static unsigned char *lib_secret;
#define LIB_SECRET_LEN		256
/* The two files above and libsecmem's arena. */
#define NR_WIPED_FILES		3
static sigjmp_buf fault_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(fault_jmp, sig);
}

/* Did reading *@p raise SIGBUS? */
static bool read_faults(const volatile unsigned char *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	bool faulted = false;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(fault_jmp, 1))
		faulted = true;
	else
		(void)*p;
	sigaction(SIGBUS, &old, NULL);
	return faulted;
}

/* The current word of the knob (the bracketed one), or "" when unreadable. */
static const char *knob_word(void)
{
	static char word[32];
	char buf[64], *a, *b;

	word[0] = 0;
	if (upool_read_file(KNOB, buf, sizeof(buf)) < 0)
		return word;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b && b - a - 1 < (long)sizeof(word)) {
		memcpy(word, a + 1, b - a - 1);
		word[b - a - 1] = 0;
	}
	return word;
}

static long long wiped_files(void)
{
	u64_t v;

	return upool_read_u64(WIPED, &v) ? -1 : (long long)v;
}

/* Put the policy back as it was, also on a bail-out. */
static void restore_knob(void)
{
	if (saved_knob[0])
		upool_write_str(KNOB, saved_knob);
}

/* Make a random marker at @p, keep its inverted copy in inv[@i]. */
static int make_marker(volatile unsigned char *p, unsigned int i)
{
	unsigned int k;

	if (getrandom((void *)p, MARKER_LEN, 0) != MARKER_LEN)
		return -1;
	for (k = 0; k < MARKER_LEN; k++)
		inv[i][k] = (unsigned char)~p[k];
	needles[i] = (struct kcore_needle){ .bytes = inv[i], .len = MARKER_LEN, .xor = 0xff };
	return 0;
}

/* --- 1. knob --------------------------------------------------------------- */

static enum tap_result test_knob(void)
{
	static const struct { const char *s; size_t len; } bad[] = {
		{ "\n", 1 }, { "wip", 3 }, { "WIPE", 4 }, { "wipe\0x", 6 },
		{ "refuse wipe", 11 }, { "[wipe]", 6 }, { "1", 1 }, { "wipe\n\n", 6 },
		{ " refuse", 7 },
	};
	bool ok = true;
	unsigned int i;
	char buf[64];

	if (upool_read_file(KNOB, buf, sizeof(buf)) < 0)
		return TAP_FAIL;
	if (strcmp(buf, "[refuse] wipe\n")) {
		tap_diag("%s reads \"%s\" at boot, not \"[refuse] wipe\"", KNOB, buf);
		ok = false;
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = upool_write_raw(KNOB, bad[i].s, bad[i].len);

		if (err != -EINVAL || strcmp(knob_word(), "refuse")) {
			tap_diag("writing \"%.*s\" (%zu bytes): %s, now \"%s\"", (int)bad[i].len,
				 bad[i].s, bad[i].len, upool_errname(-err), knob_word());
			ok = false;
		}
	}
	if (upool_write_str(KNOB, "wipe\n") || strcmp(knob_word(), "wipe") ||
	    upool_write_str(KNOB, "refuse") || strcmp(knob_word(), "refuse")) {
		tap_diag("the two words are not both accepted and read back");
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- swap, secrets ------------------------------------------------------------ */

/* mkswap, swapon, the resume device, test_resume. 0 or -1. */
static int setup_swap(void)
{
	char cmd[160], devnum[32];
	struct stat st;

	if (stat(swapdev, &st) || !S_ISBLK(st.st_mode)) {
		tap_diag("%s: not a block device", swapdev);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "mkswap %s >/dev/null && swapon %s", swapdev, swapdev);
	if (system(cmd)) {
		tap_diag("%s failed", cmd);
		return -1;
	}
	snprintf(devnum, sizeof(devnum), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (upool_write_str("/sys/power/resume", devnum) ||
	    upool_write_str("/sys/power/disk", "test_resume")) {
		tap_diag("cannot set /sys/power/resume to %s and /sys/power/disk to test_resume",
			 devnum);
		return -1;
	}
	return 0;
}

/* The secrets and the control; every marker made in place. 0 or -1. */
static int hold_secrets(void)
{
	unsigned int i, n = 0;
	size_t off;

	mfd_fd = memfd_create("hibernate", MFD_UNMAPPED | MFD_CLOEXEC);
	sec_fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
	ctl_fd = memfd_create("hibernate-control", MFD_CLOEXEC);
	if (mfd_fd < 0 || sec_fd < 0 || ctl_fd < 0 || ftruncate(mfd_fd, SECRET_BYTES) ||
	    ftruncate(sec_fd, PG) || ftruncate(ctl_fd, PG)) {
		tap_diag("secret files: %m");
		return -1;
	}
	mfd_map = mmap(NULL, SECRET_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, mfd_fd, 0);
	sec_map = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, sec_fd, 0);
	if (mfd_map == MAP_FAILED || sec_map == MAP_FAILED) {
		tap_diag("mmap: %m");
		return -1;
	}
	/* Every page gets a marker; every SAMPLE_EVERY-th is a needle. */
	for (i = 0, off = 0; off < SECRET_BYTES; off += PG, i++) {
		if (i % SAMPLE_EVERY == 0) {
			if (make_marker(mfd_map + off, n++))
				return -1;
		} else if (getrandom((void *)(mfd_map + off), MARKER_LEN, 0) != MARKER_LEN) {
			return -1;
		}
	}
	if (make_marker(sec_map, n++))
		return -1;
	/* libsecmem's heap: one arena, an MFD_UNMAPPED memfd on this kernel. */
	lib_secret = secmem_malloc(LIB_SECRET_LEN);
	if (!lib_secret || secmem_backend() != SECMEM_BACKEND_UNMAPPED_MEMFD) {
		tap_diag("secmem_malloc: %s, backend %s", secmem_strerror(secmem_last_error()),
			 secmem_backend_name(secmem_backend()));
		return -1;
	}
	memset(lib_secret, 0x5a, LIB_SECRET_LEN);
	/* The control: a plain memfd page, written the same way. */
	{
		volatile unsigned char *c = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED,
						 ctl_fd, 0);

		if (c == MAP_FAILED || make_marker(c, n))
			return -1;
		munmap((void *)c, PG);
	}
	return 0;
}

static int hibernate(void)
{
	return upool_write_str("/sys/power/state", "disk");
}

/* --- 2. refuse --------------------------------------------------------------- */

static enum tap_result test_refuse(void)
{
	int err;

	if (upool_write_str(KNOB, "refuse"))
		return TAP_FAIL;
	err = hibernate();
	if (err != -EPERM) {
		tap_diag("hibernation with a secret file open and policy refuse: %s, want EPERM",
			 err ? upool_errname(-err) : "it hibernated");
		return TAP_FAIL;
	}
	if (read_faults(mfd_map) || read_faults(sec_map)) {
		tap_diag("a secret was lost although hibernation was refused");
		return TAP_FAIL;
	}
	{
		u64_t files = 0;

		upool_read_u64("/sys/kernel/mm/unmapped/secret_files", &files);
		tap_diag("refused with EPERM while %llu secret files were open", files);
	}
	return TAP_PASS;
}

/*
 * Wait for the SECRETS_WIPED event on @events: it must name @files files,
 * at least @min_bytes bytes, and no node. @when is for the diagnostics.
 */
static bool wiped_event_ok(struct nlt_listener *events, long long files,
			   unsigned long min_bytes, const char *when)
{
	const struct nlt_msg *m;
	int i;

	/* Sent once tasks run again: already queued, or about to be. */
	nlt_poll(events, 5000);
	i = nlt_find(events, SECMEM_CMD_EVENT_SECRETS_WIPED, -1, 0);
	if (i < 0) {
		tap_diag("no SECRETS_WIPED event after %s", when);
		return false;
	}
	m = &events->ev[i];
	nlt_msg_diag("event", m);
	if (m->val[SECMEM_ATTR_WIPED_FILES] != (unsigned long long)files ||
	    m->val[SECMEM_ATTR_WIPED_BYTES] < min_bytes || nlt_has(m, SECMEM_ATTR_NODE)) {
		tap_diag("SECRETS_WIPED after %s: %llu files, %llu bytes, want %lld files and at least %lu bytes, no node",
			 when, m->val[SECMEM_ATTR_WIPED_FILES], m->val[SECMEM_ATTR_WIPED_BYTES],
			 files, min_bytes);
		return false;
	}
	return true;
}

/* --- 3. wipe ------------------------------------------------------------------ */

static long long wiped_before;

static enum tap_result test_wipe(void)
{
	struct nlt_listener events;
	unsigned char c;
	bool ok = true;
	double t;
	int err;

	wiped_before = wiped_files();
	if (secmem_wiped() != 0) {
		tap_diag("secmem_wiped() is not 0 before the hibernation");
		return TAP_FAIL;
	}
	if (nlt_listen(&events))
		return TAP_FAIL;
	if (upool_write_str(KNOB, "wipe")) {
		nlt_unlisten(&events);
		return TAP_FAIL;
	}
	/*
	 * Keep the pool worker busy while the image is made: a fill it
	 * starts now, and then the wiped files' pages to give back, which
	 * are above the high watermark. A worker caught halfway through a
	 * block had it on no free list and out of the direct map, for the
	 * image to copy with interrupts off (a warning, a panic here).
	 */
	if (upool_set(upool.node[0].id, POOL_BUSY_BYTES, 0, POOL_BUSY_BYTES)) {
		nlt_unlisten(&events);
		return TAP_FAIL;
	}
	t = upool_now();
	err = hibernate();
	t = upool_now() - t;
	if (upool_reset())
		ok = false;
	if (err) {
		tap_diag("hibernation with policy wipe: %s", upool_errname(-err));
		nlt_unlisten(&events);
		return TAP_FAIL;
	}
	if (!wiped_event_ok(&events, NR_WIPED_FILES, SECRET_BYTES + PG, "the hibernation"))
		ok = false;
	nlt_unlisten(&events);
	tap_diag("hibernated to %s and resumed from it in %.1f s", swapdev, t);
	if (!read_faults(mfd_map) || !read_faults(mfd_map + SECRET_BYTES - PG)) {
		tap_diag("the MFD_UNMAPPED mapping still reads after the wipe");
		ok = false;
	}
	if (!read_faults(sec_map)) {
		tap_diag("the memfd_secret mapping still reads after the wipe");
		ok = false;
	}
	errno = 0;
	if (pread(mfd_fd, &c, 1, 0) != -1 || errno != EIO) {
		tap_diag("pread() of the wiped MFD_UNMAPPED file: %s, want EIO",
			 errno ? upool_errname(errno) : "data");
		ok = false;
	}
	if (wiped_files() - wiped_before != NR_WIPED_FILES) {
		tap_diag("hibernation_wiped_files went from %lld to %lld, want +%d", wiped_before,
			 wiped_files(), NR_WIPED_FILES);
		ok = false;
	}
	if (pread(ctl_fd, &c, 1, 0) != 1) {
		tap_diag("the control memfd does not read back");
		ok = false;
	}
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- 4. image ----------------------------------------------------------------- */

static enum tap_result test_image(void)
{
	unsigned int i, found = 0;
	uint64_t total = 0;
	bool ok = true;
	int fd, err;

	fd = open(swapdev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tap_diag("%s: %m", swapdev);
		return TAP_FAIL;
	}
	err = kcore_search_fd(fd, needles, NR_NEEDLES, &total);
	close(fd);
	if (err < 0) {
		tap_diag("reading %s: %s", swapdev, upool_errname(-err));
		return TAP_FAIL;
	}
	for (i = 0; i < NR_SECRET_NEEDLES; i++) {
		if (needles[i].found) {
			if (!found++)
				tap_diag("secret marker %u is on the disk at offset %#llx", i,
					 (unsigned long long)needles[i].paddr);
			ok = false;
		}
	}
	if (!needles[NR_SECRET_NEEDLES].found) {
		tap_diag("the control marker is not on the disk: the image is not there, or compressed");
		ok = false;
	}
	tap_diag("%s: %.0f MiB scanned, %u of %lu secret markers found, control %s", swapdev,
		 total / 1048576.0, found, (unsigned long)NR_SECRET_NEEDLES,
		 needles[NR_SECRET_NEEDLES].found ? "found" : "missing");
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- 5. cost ------------------------------------------------------------------ */

static enum tap_result test_cost(void)
{
	unsigned long files = 0, pages = 0;
	long long us = -1;
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *log, *p, *last = NULL;

	if (len <= 0 || !(log = calloc(1, len + 1)))
		return TAP_FAIL;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, len);
	for (p = log; len > 0 && (p = strstr(p, "secretmem: wiped ")); p++)
		last = p;
	if (!last || sscanf(last, "secretmem: wiped %lu secret files, %lu pages, in %lld us",
			    &files, &pages, &us) != 3) {
		tap_diag("no \"secretmem: wiped\" line in the kernel log");
		free(log);
		return TAP_FAIL;
	}
	free(log);
	tap_diag("the wipe: %lu files, %lu pages (%.0f MiB) in %lld us: %.0f ms per GiB (TCG)",
		 files, pages, pages * PG / 1048576.0, us,
		 pages ? us / 1000.0 * (1UL << 30) / (pages * PG) : 0.0);
	if (files != NR_WIPED_FILES || pages < NR_PAGES + 1) {
		tap_diag("want %d files and at least %lu pages", NR_WIPED_FILES, NR_PAGES + 1);
		return TAP_FAIL;
	}
	return TAP_PASS;
}

/* --- 7. libsecmem ------------------------------------------------------------- */

static enum tap_result test_libsecmem(void)
{
	bool ok = true;
	unsigned char *p;
	int r;

	r = secmem_wiped();
	if (r != 1) {
		tap_diag("secmem_wiped() after the wipe: %d, want 1", r);
		return TAP_FAIL;
	}
	errno = 0;
	if (secmem_realloc(lib_secret, 2 * LIB_SECRET_LEN) || errno != EIO ||
	    secmem_last_error() != SECMEM_EWIPED) {
		tap_diag("secmem_realloc() of the wiped allocation: %s, want EIO",
			 upool_errname(errno));
		ok = false;
	}
	/* Would be SIGBUS, and the end of this program, if it touched it. */
	secmem_free(lib_secret);
	lib_secret = NULL;
	r = secmem_wiped();
	if (r != 0) {
		tap_diag("secmem_wiped() once the wiped allocation is freed: %d, want 0", r);
		ok = false;
	}
	p = secmem_malloc(LIB_SECRET_LEN);
	if (!p) {
		tap_diag("secmem_malloc() after the wipe: %s",
			 secmem_strerror(secmem_last_error()));
		return TAP_FAIL;
	}
	memset(p, 0xa5, LIB_SECRET_LEN);
	if (p[0] != 0xa5 || p[LIB_SECRET_LEN - 1] != 0xa5) {
		tap_diag("a new allocation does not hold what was written");
		ok = false;
	}
	secmem_free(p);
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- 8. abort ------------------------------------------------------------------ */

#define ABORT_BYTES		(16 * PG)

static enum tap_result test_abort(void)
{
	volatile unsigned char *p;
	struct nlt_listener events;
	long long before, files;
	bool ok = true;
	char cmd[96];
	int fd, err;

	fd = memfd_create("abort", MFD_UNMAPPED | MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, ABORT_BYTES)) {
		tap_diag("a secret file: %m");
		return TAP_FAIL;
	}
	p = mmap(NULL, ABORT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		tap_diag("mmap: %m");
		return TAP_FAIL;
	}
	memset((void *)p, 0x5a, ABORT_BYTES);
	/* No swap: the snapshot is made, and writing it out fails. */
	snprintf(cmd, sizeof(cmd), "swapoff %s", swapdev);
	if (system(cmd) || upool_write_str(KNOB, "wipe") || nlt_listen(&events)) {
		tap_diag("%s, the wipe policy or the event listener failed", cmd);
		return TAP_FAIL;
	}
	before = wiped_files();
	err = hibernate();
	if (!err) {
		tap_diag("hibernation without a swap device succeeded");
		ok = false;
	} else {
		tap_diag("hibernation without a swap device failed: %s", upool_errname(-err));
	}
	/* As many files as hibernation_wiped_files grew by, this one at least. */
	files = wiped_files() - before;
	if (files < 1) {
		tap_diag("hibernation_wiped_files grew by %lld, want at least 1", files);
		ok = false;
	}
	if (!wiped_event_ok(&events, files, ABORT_BYTES, "the failed hibernation"))
		ok = false;
	nlt_unlisten(&events);
	if (!read_faults(p)) {
		tap_diag("the secret still reads after the failed hibernation's wipe");
		ok = false;
	}
	munmap((void *)p, ABORT_BYTES);
	close(fd);
	/* Creation was refused only while the hibernation was under way. */
	fd = memfd_create("after-abort", MFD_UNMAPPED | MFD_CLOEXEC);
	if (fd < 0 || pwrite(fd, "x", 1, 0) != 1) {
		tap_diag("a secret file after the failed hibernation: %m");
		ok = false;
	}
	if (fd >= 0)
		close(fd);
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- 6. after ----------------------------------------------------------------- */

static enum tap_result test_after(void)
{
	int fd = memfd_create("after", MFD_UNMAPPED | MFD_CLOEXEC);
	int sfd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
	volatile unsigned char *p;
	bool ok = true;

	if (fd < 0 || sfd < 0 || ftruncate(fd, PG) || ftruncate(sfd, PG)) {
		tap_diag("a secret file after the hibernation: %m");
		return TAP_FAIL;
	}
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, sfd, 0);
	if (p == MAP_FAILED || pwrite(fd, "x", 1, 0) != 1) {
		tap_diag("filling it: %m");
		ok = false;
	} else {
		p[0] = 1;
		ok = p[0] == 1;
	}
	close(fd);
	close(sfd);
	return ok ? TAP_PASS : TAP_FAIL;
}

int main(void)
{
	bool held;

	upool_init_or_skip(true);
	if (access(KNOB, F_OK))
		tap_skip_all("%s: no hibernation policy in this kernel", KNOB);
	/* secmem.swap=DEV on the kernel command line, or "". */
	if (!procfs_cmdline_get("secmem.swap", swapdev, sizeof(swapdev)))
		swapdev[0] = 0;
	inv = calloc(NR_NEEDLES, MARKER_LEN);
	if (!inv)
		tap_bail("out of memory");
	snprintf(saved_knob, sizeof(saved_knob), "%s", knob_word());
	atexit(restore_knob);

	/* Hibernating needs the scratch disk: make check-guest-hibernate. */
	tap_plan(swapdev[0] ? 8 : 1);
	tap_report(test_knob(), "hibernation knob: [refuse] wipe at boot, garbage EINVAL", NULL);
	if (!swapdev[0]) {
		tap_diag("no secmem.swap: only the knob here; the hibernation steps need VM_SWAP");
		return tap_finish();
	}
	held = !setup_swap() && !hold_secrets();
	if (!held)
		tap_bail("cannot set up the swap device and the secrets");
	tap_report(test_refuse(), "refuse: with a secret file open, hibernation is EPERM", NULL);
	tap_report(test_wipe(), "wipe: hibernation succeeds, the secrets are gone (SIGBUS, EIO)",
		   NULL);
	tap_report(test_image(), "image: no secret on the disk, the control is", NULL);
	tap_report(test_cost(), "the kernel log gives the wipe's files, pages and time", NULL);
	tap_report(test_after(), "after: secret files can be created and filled again", NULL);
	tap_report(test_libsecmem(), "libsecmem: secmem_wiped() tells, and the heap goes on", NULL);
	tap_report(test_abort(), "abort: a hibernation that fails after the wipe sends the event",
		   NULL);
	return tap_finish();
}
