// SPDX-License-Identifier: GPL-2.0
/*
 * kcore-secret: show, step by step, that a secret kept in memfd_secret(2)
 * memory cannot be found by reading kernel RAM through /proc/kcore, while
 * the same bytes in ordinary memory can.
 *
 * Exit status: 0 when both hold, 1 when either does not, 2 when the
 * demonstration cannot run (no memfd_secret, no /proc/kcore).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>

#include "kcore.h"

#define PATTERN_LEN	32

static void step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int main(void)
{
	const size_t page_size = sysconf(_SC_PAGESIZE);
	volatile unsigned char *secret;
	unsigned char *plain;
	struct kcore kc;
	uint64_t paddr;
	int fd, ret;
	size_t i;

	ret = kcore_open(&kc);
	if (ret) {
		step("cannot read /proc/kcore: %s", strerror(-ret));
		return 2;
	}
	step("/proc/kcore shows %llu MiB of RAM in %u segment(s)",
	     (unsigned long long)(kcore_ram_bytes(&kc) >> 20), kc.nr_segs);

	fd = syscall(__NR_memfd_secret, 0);
	if (fd < 0) {
		step("memfd_secret(0) failed: %m");
		return 2;
	}
	if (ftruncate(fd, page_size)) {
		step("ftruncate: %m");
		return 1;
	}
	secret = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (secret == MAP_FAILED) {
		step("mmap: %m");
		return 1;
	}
	step("memfd_secret(0) = fd %d, one page mapped MAP_SHARED at %p", fd,
	     (void *)secret);

	/* Written by the kernel straight into the secret page: no other copy. */
	if (getrandom((void *)secret, PATTERN_LEN, 0) != PATTERN_LEN) {
		step("getrandom: %m");
		return 1;
	}
	step("stored %d random bytes in it (first byte %#04x)", PATTERN_LEN, secret[0]);

	step("searching all of kernel RAM through /proc/kcore for those bytes...");
	ret = kcore_find(&kc, secret, PATTERN_LEN, &paddr);
	if (ret < 0) {
		step("scan failed: %s", strerror(-ret));
		return 1;
	}
	if (ret) {
		step("FOUND at physical address %#llx: the secret is readable by the kernel",
		     (unsigned long long)paddr);
		return 1;
	}
	step("  not found: the page holding the secret is not in the kernel's direct map");

	plain = malloc(page_size);
	if (!plain) {
		step("malloc: %m");
		return 1;
	}
	for (i = 0; i < PATTERN_LEN; i++)
		plain[i] = secret[i];
	step("copied the same bytes into ordinary malloc() memory at %p, searching again...",
	     (void *)plain);
	ret = kcore_find(&kc, secret, PATTERN_LEN, &paddr);
	if (ret < 0) {
		step("scan failed: %s", strerror(-ret));
		return 1;
	}
	if (!ret) {
		step("  NOT found: the scan cannot see ordinary memory either, nothing is shown");
		return 1;
	}
	step("  found at physical address %#llx: ordinary memory is visible, as expected",
	     (unsigned long long)paddr);
	kcore_close(&kc);
	return 0;
}
