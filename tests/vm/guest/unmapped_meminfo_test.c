// SPDX-License-Identifier: GPL-2.0
/*
 * Secret memory made visible (issue 20, "Visibility"; patch 0021):
 * /proc/meminfo and each node's meminfo show SecretMem, Unmapped and
 * UnmappedFree, /proc/vmstat nr_secretmem, and
 * /sys/kernel/mm/unmapped/secret_files counts the open secret files, any
 * of which keeps the kernel from hibernating (/sys/power/disk reads
 * "[disabled]"). secmemctl secrets names the processes that hold them.
 *
 * The test holds a memfd_secret file (1 MiB, written through its mapping)
 * and an MFD_UNMAPPED memfd (2 MiB, written with pwrite()), then lets them
 * go one step at a time: A's descriptor closed while it is still mapped
 * (still open: the mapping holds the file), A unmapped, B closed. After
 * every step each figure must be exactly what the step implies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "tap.h"
#include "upool.h"

#define A_BYTES		(1 * UPOOL_MiB)
#define B_BYTES		(2 * UPOOL_MiB)
#define SECRET_FILES	"/sys/kernel/mm/unmapped/secret_files"
#define POWER_DISK	"/sys/power/disk"
#define SECMEMCTL	"/secmem/bin/secmemctl"

/* What the kernel shows, all in bytes except files. */
struct figures {
	long long secretmem, nr_secretmem, unmapped, unmapped_free;
	long long node_secretmem, node_unmapped, node_unmapped_free;
	u64_t sys_unmapped, sys_free;
	long long files;
	int hibernation;	/* 1 available, 0 "[disabled]", -1 no file */
};

/* Sum of "Node N KEY: V kB" over the nodes with a pool, in bytes. */
static long long node_meminfo_sum(const char *key)
{
	long long sum = 0;
	int i;

	for (i = 0; i < upool.nr_nodes; i++) {
		char path[96], line[256], want[64];
		bool found = false;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
			 upool.node[i].id);
		snprintf(want, sizeof(want), "Node %d %s:", upool.node[i].id, key);
		f = fopen(path, "re");
		if (!f)
			return -1;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long kb;

			if (!strncmp(line, want, strlen(want)) &&
			    sscanf(line + strlen(want), "%llu kB", &kb) == 1) {
				sum += (long long)kb * 1024;
				found = true;
			}
		}
		fclose(f);
		if (!found)
			return -1;
	}
	return sum;
}

static int read_figures(struct figures *f)
{
	char buf[64];
	u64_t v;

	upool_stat_refresh();
	f->secretmem = upool_meminfo("SecretMem");
	f->unmapped = upool_meminfo("Unmapped");
	f->unmapped_free = upool_meminfo("UnmappedFree");
	f->nr_secretmem = upool_vmstat("nr_secretmem");
	f->node_secretmem = node_meminfo_sum("SecretMem");
	f->node_unmapped = node_meminfo_sum("Unmapped");
	f->node_unmapped_free = node_meminfo_sum("UnmappedFree");
	if (upool_stat(-1, UPOOL_UNMAPPED_BYTES, &f->sys_unmapped) ||
	    upool_stat(-1, UPOOL_FREE_BYTES, &f->sys_free))
		return -1;
	f->files = upool_read_u64(SECRET_FILES, &v) ? -1 : (long long)v;
	f->hibernation = -1;
	if (upool_read_file(POWER_DISK, buf, sizeof(buf)) >= 0)
		f->hibernation = !strstr(buf, "[disabled]");
	return 0;
}

static void diag_figures(const char *when, const struct figures *f)
{
	tap_diag("%s: SecretMem %lld kB (nodes %lld, nr_secretmem %lld pages), Unmapped %lld kB (nodes %lld, sysfs %llu), UnmappedFree %lld kB (nodes %lld, sysfs %llu), secret_files %lld, hibernation %s",
		 when, f->secretmem / 1024, f->node_secretmem / 1024, f->nr_secretmem,
		 f->unmapped / 1024, f->node_unmapped / 1024, f->sys_unmapped / 1024,
		 f->unmapped_free / 1024, f->node_unmapped_free / 1024, f->sys_free / 1024,
		 f->files, f->hibernation < 0 ? "unknown" : f->hibernation ? "available" : "[disabled]");
}

/*
 * The figures agree with each other: meminfo with vmstat, the nodes'
 * sum with the total, Unmapped and UnmappedFree with the pools' sysfs
 * statistics. The pool is empty and nothing else allocates, so these do
 * not move between the reads.
 */
static bool consistent(const struct figures *f)
{
	bool ok = true;

	if (f->secretmem < 0 || f->unmapped < 0 || f->unmapped_free < 0 || f->files < 0) {
		tap_diag("a line or file is missing (SecretMem, Unmapped, UnmappedFree, secret_files)");
		return false;
	}
	if (f->secretmem != f->nr_secretmem * (long long)UPOOL_PAGE ||
	    f->node_secretmem != f->secretmem) {
		tap_diag("SecretMem, nr_secretmem and the nodes' SecretMem disagree");
		ok = false;
	}
	if (f->unmapped != (long long)f->sys_unmapped || f->node_unmapped != f->unmapped ||
	    f->unmapped_free != (long long)f->sys_free ||
	    f->node_unmapped_free != f->unmapped_free) {
		tap_diag("Unmapped/UnmappedFree disagree with the nodes' or with sysfs");
		ok = false;
	}
	if (f->unmapped_free > f->unmapped) {
		tap_diag("UnmappedFree above Unmapped");
		ok = false;
	}
	return ok;
}

/* What one step must have done to the figures, against @base. */
static bool expect(const char *when, const struct figures *base, const struct figures *now,
		   long long secret_bytes, long long files, bool hibernation)
{
	bool ok = consistent(now);

	diag_figures(when, now);
	if (now->secretmem - base->secretmem != secret_bytes) {
		tap_diag("%s: SecretMem moved by %lld bytes, not %lld", when,
			 now->secretmem - base->secretmem, secret_bytes);
		ok = false;
	}
	if (now->files - base->files != files) {
		tap_diag("%s: secret_files moved by %lld, not %lld", when,
			 now->files - base->files, files);
		ok = false;
	}
	if (now->hibernation >= 0 && now->hibernation != hibernation) {
		tap_diag("%s: /sys/power/disk says hibernation is %s", when,
			 now->hibernation ? "available" : "disabled");
		ok = false;
	}
	return ok;
}

/*
 * secmemctl secrets --json must name this process with @files files of
 * @bytes bytes in all, or not name it when @files is 0.
 */
static bool secmemctl_names_us(unsigned int files, unsigned long long bytes)
{
	char comm[32] = "", want[160], out[8192];
	size_t n = 0;
	FILE *p;
	int status;
	bool named, ok;

	if (upool_read_file("/proc/self/comm", comm, sizeof(comm)) < 0)
		return false;
	comm[strcspn(comm, "\n")] = '\0';
	fflush(stdout);
	p = popen(SECMEMCTL " secrets --json", "r");
	if (!p) {
		tap_diag("%s: %m", SECMEMCTL);
		return false;
	}
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	status = pclose(p);
	snprintf(want, sizeof(want), "{\"pid\":%d,\"comm\":\"%s\",\"files\":%u,\"bytes\":%llu}",
		 (int)getpid(), comm, files, bytes);
	named = strstr(out, want) != NULL;
	snprintf(want, sizeof(want), "{\"pid\":%d,", (int)getpid());
	ok = status == 0 && (files ? named : !strstr(out, want));
	if (!ok)
		tap_diag("secmemctl secrets --json (exit %d) %s us as holding %u files of %llu bytes: %s",
			 status, files ? "does not name" : "names", files, bytes, out);
	return ok;
}

static struct figures base;

/*
 * One step's result: the figures moved by @files secret files and
 * @bytes of their pages from the start, hibernation as @hibernation, and
 * secmemctl saying the same of this process.
 */
static void report_step(const char *when, unsigned int files, unsigned long long bytes,
			bool hibernation, const char *name)
{
	struct figures now;
	bool ok;

	if (read_figures(&now))
		tap_bail("cannot read the figures");
	ok = expect(when, &base, &now, (long long)bytes, files, hibernation);
	ok &= secmemctl_names_us(files, bytes);
	tap_report(ok ? TAP_PASS : TAP_FAIL, name, NULL);
}

int main(void)
{
	unsigned char *a;
	int fa, fb;
	size_t off;

	upool_init_or_skip(true);
	tap_plan(5);
	upool_install_restore();
	if (upool_reset() || upool_wait_empty(30))
		tap_bail("cannot empty the pools");
	if (read_figures(&base))
		tap_bail("cannot read the pools' statistics");
	diag_figures("start", &base);
	tap_report(consistent(&base) ? TAP_PASS : TAP_FAIL,
		   "meminfo, node meminfo, vmstat and sysfs agree", NULL);
	if (base.files)
		tap_bail("%lld secret files are open already: the test needs none", base.files);

	/* A: memfd_secret, 1 MiB through its mapping. */
	fa = (int)syscall(__NR_memfd_secret, O_CLOEXEC);
	if (fa < 0 || ftruncate(fa, A_BYTES))
		tap_bail("memfd_secret: %m");
	a = mmap(NULL, A_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fa, 0);
	if (a == MAP_FAILED)
		tap_bail("mmap memfd_secret: %m");
	for (off = 0; off < A_BYTES; off += UPOOL_PAGE)
		a[off] = 0xa5;
	/* B: MFD_UNMAPPED, 2 MiB through pwrite(). */
	fb = memfd_create("meminfo", MFD_UNMAPPED | MFD_CLOEXEC);
	if (fb < 0 || ftruncate(fb, B_BYTES))
		tap_bail("memfd_create(MFD_UNMAPPED): %m");
	for (off = 0; off < B_BYTES; off += UPOOL_PAGE) {
		static unsigned char page[UPOOL_PAGE];

		memset(page, 0x5a, sizeof(page));
		if (pwrite(fb, page, sizeof(page), (off_t)off) != (ssize_t)sizeof(page))
			tap_bail("pwrite: %m");
	}
	report_step("A and B held", 2, A_BYTES + B_BYTES, false,
		    "two secret files: SecretMem +3 MiB, secret_files +2, hibernation disabled, secmemctl names us");

	/* A's descriptor closed: its mapping still holds the file open. */
	close(fa);
	report_step("A only mapped", 2, A_BYTES + B_BYTES, false,
		    "a secret file only mapped still counts, and secmemctl finds it in map_files");

	munmap(a, A_BYTES);
	report_step("A gone", 1, B_BYTES, false, "A unmapped: its pages and its count go");

	close(fb);
	report_step("all gone", 0, 0, true,
		    "all closed: SecretMem and secret_files back, hibernation available again");
	return tap_finish();
}
