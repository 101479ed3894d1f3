// SPDX-License-Identifier: GPL-2.0
/*
 * No secret for the next kernel (issue 20): pages outside the direct map
 * are zeroed before a crash kernel (kdump) or a kexec'd kernel takes over.
 *
 * Two kernels in one VM, run by make check-guest-kexec with the kernel
 * image as a tar archive on a read-only disk (run-vm.sh VM_TAR, which puts
 * secmem.tar=/dev/vdX on the command line) and secmem.kexec=crash or
 * secmem.kexec=kexec (crash also has a crashkernel= reservation).
 *
 * The first kernel ("arm"):
 *  1. secrets   holds, each page starting with a 64-byte marker of its
 *               kind: 256 pages of memfd_secret taken out of the direct
 *               map one by one (pageblock conversion fault-injected away:
 *               secretmem's per-page fallback), 16 MiB of an MFD_UNMAPPED
 *               mapping and 4 MiB of memfd_secret (unmapped pageblocks),
 *               4 MiB of MFD_UNMAPPED that a child filled and left behind
 *               when it exited (free unmapped pages, kept by the pool's
 *               watermark, zeroed as they were freed although the child
 *               had no mm left), and 8 MiB of plain memory as the control.
 *  2. handover  loads the kernel in the tar (make check puts the release
 *               build there) with kexec -p (crash) or kexec -l,
 *               with the seed of the markers on its command line, and
 *               crashes the kernel (sysrq c) or runs kexec -e while the
 *               secrets are held.
 * The second kernel ("scan", secmem.kexec_scan=vmcore|kcore):
 *  3. read      /proc/vmcore (crash kernel: the first kernel's memory) or
 *               /proc/kcore (kexec'd kernel: all of memory, where the first
 *               kernel's pages are free pages of this one) is read whole.
 *  4. control   the control marker is found: the scan is not blind.
 *  5-8. absent  no marker of any secret kind is found.
 * With secretmem.kexec_zero=0 on the first kernel's command line (the
 * kernel then leaves the pages alone, for debugging) the second kernel
 * is told secmem.kexec_expect=found and steps 5-7 turn around: every
 * secret kind still held must be found. This is the proof that the scan
 * sees memory outside the direct map, and that the zeroing is what
 * removes it. Step 8 does not turn: the pages freed at exit were zeroed
 * when they were freed, and this run is the one that shows it.
 * Only the second kernel's results are judged (check-log.py --handover);
 * the first kernel's TAP is progress. Without secmem.kexec and
 * secmem.kexec_scan (the main guest boot) the test skips.
 *
 * Markers are derived from a random seed with hash64() and written with
 * 64-bit stores straight into the memory they test. The scan keeps only
 * bit-inverted copies in ordinary memory (kcore.h), in the second kernel.
 */
#define _GNU_SOURCE
/* Before <sys/mman.h>: glibc defines the MFD_* it knows only if absent. */
#include <linux/memfd.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "failfn.h"
#include "hash.h"
#include "kcore.h"
#include "procfs.h"
#include "tap.h"
#include "upool.h"

#ifndef __NR_memfd_secret
#define __NR_memfd_secret	447
#endif

#define PG			4096UL
#define MARKER_LEN		64
#define MARKER_WORDS		(MARKER_LEN / 8)
#define WORK			"/tmp/kexec"
#define HANDOVER		"secmem-kexec-handover"

/* The kinds of memory, each with its own marker. */
enum kind {
	KIND_CONTROL,
	KIND_FALLBACK,
	KIND_MFD,
	KIND_SECRET,
	KIND_FREED,
	NR_KINDS,
};

static const char *const kind_name[NR_KINDS] = {
	[KIND_CONTROL] = "control (plain memory)",
	[KIND_FALLBACK] = "memfd_secret, per-page fallback",
	[KIND_MFD] = "MFD_UNMAPPED mapping",
	[KIND_SECRET] = "memfd_secret in unmapped pageblocks",
	[KIND_FREED] = "MFD_UNMAPPED pages freed at exit",
};

static const size_t kind_bytes[NR_KINDS] = {
	[KIND_CONTROL] = 8UL << 20,
	[KIND_FALLBACK] = 256 * PG,
	[KIND_MFD] = 16UL << 20,
	[KIND_SECRET] = 4UL << 20,
	[KIND_FREED] = 4UL << 20,
};

static uint64_t seed;

static uint64_t marker_word(enum kind k, unsigned int i)
{
	return hash64(seed ^ ((uint64_t)(k + 1) << 56) ^ i);
}

/* The marker at the start of every page, stored straight into @mem. */
static void mark_pages(volatile uint64_t *mem, size_t bytes, enum kind k)
{
	size_t p;
	unsigned int i;

	for (p = 0; p < bytes / PG; p++)
		for (i = 0; i < MARKER_WORDS; i++)
			mem[p * (PG / 8) + i] = marker_word(k, i);
}

/*
 * The command line for the next kernel: this one's, without what only
 * concerned the first kernel, with @extra.
 */
static void next_cmdline(char *out, size_t len, const char *extra)
{
	static const char *const drop[] = { "secmem.kexec=", "crashkernel=",
					    "secmem.filter=", "secmem.tar=",
					    "BOOT_IMAGE=", "initrd=" };
	char cmdline[4096], *word, *save;
	size_t used = 0;
	unsigned int i;
	FILE *f;

	out[0] = '\0';
	f = fopen("/proc/cmdline", "re");
	if (f && fgets(cmdline, sizeof(cmdline), f)) {
		for (word = strtok_r(cmdline, " \n", &save); word;
		     word = strtok_r(NULL, " \n", &save)) {
			for (i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
				if (!strncmp(word, drop[i], strlen(drop[i])))
					break;
			if (i < sizeof(drop) / sizeof(drop[0]))
				continue;
			used += snprintf(out + used, len - used, "%s ", word);
			if (used >= len)
				break;
		}
	}
	if (f)
		fclose(f);
	if (used < len)
		snprintf(out + used, len - used, "%s", extra);
}

static int run(const char *cmd)
{
	int st = system(cmd);

	if (st != 0)
		tap_diag("'%s' failed (status %d)", cmd, st);
	return st == 0 ? 0 : -1;
}

static void *secret_map(size_t bytes, bool mfd)
{
	void *p;
	int fd;

	fd = mfd ? memfd_create("kexec-secret", MFD_UNMAPPED) :
		   (int)syscall(__NR_memfd_secret, 0);
	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		tap_diag("%s: %s", mfd ? "memfd_create(MFD_UNMAPPED)" : "memfd_secret",
			 strerror(errno));
		return NULL;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		tap_diag("mmap: %s", strerror(errno));
		return NULL;
	}
	return p;
}

/* A child that fills @bytes of MFD_UNMAPPED memory and exits with it. */
static int freed_at_exit(size_t bytes)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		void *p = secret_map(bytes, true);

		if (!p)
			_exit(1);
		mark_pages(p, bytes, KIND_FREED);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

/* The second kernel's initramfs: busybox, /init and this program. */
static int make_initrd(void)
{
	return run("set -e; r=" WORK "/root; rm -rf $r; mkdir -p $r/secmem/tests $r/dev;"
		   "cp -a /bin /sbin /usr /etc /init $r/;"
		   "cp /secmem/tests/unmapped_kexec_test $r/secmem/tests/;"
		   "mknod $r/dev/console c 5 1;"
		   "cd $r && find . | cpio -o -H newc >" WORK "/initrd.cpio 2>/dev/null");
}

static int arm(const char *how, const char *tar)
{
	bool crash = !strcmp(how, "crash");
	long long secret_b, unmapped_b;
	void *mem[NR_KINDS] = { NULL };
	char cmd[8192], append[4096], extra[256];
	int node = -1, err;
	unsigned int k;

	tap_plan(2);
	if (strcmp(how, "crash") && strcmp(how, "kexec"))
		tap_bail("secmem.kexec=%s: crash or kexec", how);
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		tap_bail("getrandom: %s", strerror(errno));
	err = upool_init();
	if (err)
		tap_bail("no unmapped pools: %s", upool_errname(-err));
	node = upool.node[0].id;
	if (crash) {
		u64_t size = 0;

		if (upool_read_u64("/sys/kernel/kexec_crash_size", &size) || !size)
			tap_bail("no crash kernel reservation (crashkernel=)");
		tap_diag("crash kernel reservation: %llu MiB", size >> 20);
	}
	if (run("rm -rf " WORK " && mkdir -p " WORK) ||
	    (snprintf(cmd, sizeof(cmd), "tar -xf %s -C " WORK " bzImage", tar), run(cmd)) ||
	    make_initrd())
		tap_bail("cannot prepare the next kernel from %s", tar);

	/* Keep freed blocks unmapped: the pool holds up to 32 MiB free. */
	if (upool_set(node, 0, 0, 32 * UPOOL_MiB))
		tap_bail("cannot set node %d's watermark_high", node);

	/* First, with the pools empty, the fallback: no conversion works. */
	upool_stat_refresh();
	secret_b = upool_meminfo("SecretMem");
	unmapped_b = upool_meminfo("Unmapped");
	if (failfn_inject("unmapped_convert_block", "0xfffffffffffffff4"))
		tap_bail("cannot inject failures into unmapped_convert_block");
	mem[KIND_FALLBACK] = secret_map(kind_bytes[KIND_FALLBACK], false);
	if (mem[KIND_FALLBACK])
		mark_pages(mem[KIND_FALLBACK], kind_bytes[KIND_FALLBACK], KIND_FALLBACK);
	failfn_stop();
	if (!mem[KIND_FALLBACK])
		tap_bail("memfd_secret failed");
	/* Fold the per-CPU counter deltas in: exact figures. */
	upool_stat_refresh();
	tap_diag("fallback: SecretMem %+lld bytes, Unmapped %+lld bytes",
		 upool_meminfo("SecretMem") - secret_b,
		 upool_meminfo("Unmapped") - unmapped_b);
	if (upool_meminfo("Unmapped") != unmapped_b ||
	    upool_meminfo("SecretMem") - secret_b < (long long)kind_bytes[KIND_FALLBACK])
		tap_bail("the fallback pages did not come from the per-page path");

	mem[KIND_MFD] = secret_map(kind_bytes[KIND_MFD], true);
	mem[KIND_SECRET] = secret_map(kind_bytes[KIND_SECRET], false);
	mem[KIND_CONTROL] = mmap(NULL, kind_bytes[KIND_CONTROL], PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!mem[KIND_MFD] || !mem[KIND_SECRET] || mem[KIND_CONTROL] == MAP_FAILED)
		tap_bail("cannot map the secrets or the control");
	mlock(mem[KIND_CONTROL], kind_bytes[KIND_CONTROL]);
	for (k = KIND_CONTROL; k < NR_KINDS; k++)
		if (k != KIND_FALLBACK && k != KIND_FREED)
			mark_pages(mem[k], kind_bytes[k], k);
	/* Last, so that no later allocation takes the pages it frees. */
	if (freed_at_exit(kind_bytes[KIND_FREED]))
		tap_bail("the child that frees MFD_UNMAPPED pages at exit failed");
	/*
	 * The child's last pages may still wait in a per-CPU LRU batch of
	 * the CPU it exited on (secretmem folios are on the LRU), for good
	 * if that CPU idles. Lowering a knob drains those batches (its ABI):
	 * raise watermark_high by a pageblock and lower it back.
	 */
	if (upool_knob_set(node, UPOOL_HIGH, 32 * UPOOL_MiB + upool.pageblock) ||
	    upool_knob_set(node, UPOOL_HIGH, 32 * UPOOL_MiB))
		tap_bail("cannot rewrite node %d's watermark_high", node);
	upool_stat_refresh();
	tap_diag("held: SecretMem %lld, Unmapped %lld, UnmappedFree %lld bytes",
		 upool_meminfo("SecretMem"), upool_meminfo("Unmapped"),
		 upool_meminfo("UnmappedFree"));
	if (upool_meminfo("UnmappedFree") < (long long)kind_bytes[KIND_FREED])
		tap_bail("the pages freed at exit did not stay in the unmapped pool");
	tap_report(TAP_PASS, "secrets", NULL);

	snprintf(extra, sizeof(extra),
		 "secmem.filter=unmapped_kexec_test secmem.kexec_scan=%s secmem.kexec_seed=%" PRIx64
		 "%s%s", crash ? "vmcore" : "kcore", seed, crash ? " maxcpus=1 reset_devices" : "",
		 procfs_cmdline_get("secretmem.kexec_zero", cmd, sizeof(cmd)) && !strcmp(cmd, "0") ?
			 " secmem.kexec_expect=found" : "");
	next_cmdline(append, sizeof(append), extra);
	snprintf(cmd, sizeof(cmd), "kexec %s " WORK "/bzImage --initrd=" WORK "/initrd.cpio --append='%s'",
		 crash ? "-p" : "-l", append);
	if (run(cmd))
		tap_bail("kexec could not load the next kernel");
	tap_report(TAP_PASS, "handover", NULL);
	fflush(stdout);
	/* Let the runner's pipe drain to the console before the kernel goes. */
	sleep(2);
	/* In the kernel log too: the judge looks for it there. */
	upool_write_str("/dev/kmsg", HANDOVER "\n");
	if (crash)
		upool_write_str("/proc/sysrq-trigger", "c");
	else
		run("kexec -e");
	tap_bail("still running after the handover");
}

static int scan(const char *where, const char *seed_hex, bool expect_found)
{
	struct kcore_needle needles[NR_KINDS];
	unsigned char (*inv)[MARKER_LEN];
	bool vmcore = !strcmp(where, "vmcore");
	uint64_t bytes = 0;
	unsigned int k, i;
	char name[128];
	int err;

	tap_plan(2 + NR_KINDS - 1);
	seed = strtoull(seed_hex, NULL, 16);
	inv = malloc(sizeof(*inv) * NR_KINDS);
	if (!inv)
		tap_bail("out of memory");
	for (k = 0; k < NR_KINDS; k++) {
		for (i = 0; i < MARKER_WORDS; i++) {
			uint64_t w = ~marker_word(k, i);

			memcpy(inv[k] + i * 8, &w, 8);
		}
		needles[k] = (struct kcore_needle){ .bytes = inv[k], .len = MARKER_LEN,
						    .xor = 0xff };
	}
	if (vmcore) {
		int fd = open("/proc/vmcore", O_RDONLY | O_CLOEXEC);

		err = fd < 0 ? -errno : kcore_search_fd(fd, needles, NR_KINDS, &bytes);
		if (fd >= 0)
			close(fd);
		if (err < 0)
			tap_diag("/proc/vmcore: %s", upool_errname(-err));
		err = err < 0 ? err : 0;
	} else {
		struct kcore kc;

		err = kcore_open(&kc);
		if (!err) {
			err = kcore_find_all(&kc, needles, NR_KINDS, &bytes);
			kcore_close(&kc);
			err = err < 0 ? err : 0;
		}
	}
	tap_diag("/proc/%s: %" PRIu64 " MiB read", where, bytes >> 20);
	tap_report(err || !bytes ? TAP_FAIL : TAP_PASS, "read", NULL);
	if (expect_found)
		tap_diag("the first kernel did not zero (secretmem.kexec_zero=0): every secret still held must be found, none freed");
	for (k = 0; k < NR_KINDS; k++) {
		/* Freed pages were zeroed at free, whatever kexec did. */
		bool want = k == KIND_CONTROL || (expect_found && k != KIND_FREED);
		bool ok = !needles[k].found == !want;

		if (needles[k].found)
			tap_diag("%s: marker found at 0x%" PRIx64, kind_name[k], needles[k].paddr);
		else
			tap_diag("%s: marker not found", kind_name[k]);
		snprintf(name, sizeof(name), "%s %s",
			 k == KIND_CONTROL ? "control" :
			 want		   ? "found (not zeroed)" :
			 expect_found	   ? "absent (zeroed at free)" : "absent",
			 kind_name[k]);
		tap_report(ok ? TAP_PASS : TAP_FAIL, name, NULL);
	}
	return tap_finish();
}

int main(void)
{
	char how[32], tar[64], where[32], seed_hex[32], expect[16];

	if (procfs_cmdline_get("secmem.kexec_scan", where, sizeof(where)) &&
	    procfs_cmdline_get("secmem.kexec_seed", seed_hex, sizeof(seed_hex)))
		return scan(where, seed_hex,
			    procfs_cmdline_get("secmem.kexec_expect", expect, sizeof(expect)) &&
				    !strcmp(expect, "found"));
	if (procfs_cmdline_get("secmem.kexec", how, sizeof(how)) &&
	    procfs_cmdline_get("secmem.tar", tar, sizeof(tar)))
		return arm(how, tar);
	tap_skip_all("needs two kernels: make check-guest-kexec");
}
