// SPDX-License-Identifier: GPL-2.0
/*
 * memfd_create(MFD_UNMAPPED) on the secmem guest kernel.
 *
 * An MFD_UNMAPPED memfd is a secretmem inode (its pages are outside the
 * kernel's direct map) with the file operations of a memfd: read/write,
 * ftruncate any number of times, fallocate, seals. What must stay as it is
 * for memfd_secret(2): MAP_SHARED only, never executable, no GUP (so no
 * process_vm_readv, ptrace, /proc/pid/mem, vmsplice), no reopening through
 * /proc/PID/fd or /proc/PID/map_files, no splice/sendfile,
 * every page charged to RLIMIT_MEMLOCK, hibernation off while one exists.
 *
 * One sub-test per semantic; the sub-test id (for the command line) and
 * its TAP name are in the table at the end. Each sub-test runs in a
 * process of its own: a crash becomes that sub-test's failure, and every
 * resource it held is released by the kernel when it exits, so failure
 * paths simply return. Where a call is expected to succeed on a plain
 * (shmem) memfd and fail on an unmapped one, the plain memfd is the
 * positive control and is tried first, so that a failure of the mechanism
 * itself cannot pass for the refusal.
 *
 * Checking the test itself on a kernel without MFD_UNMAPPED: build with
 * -DTEST_MFD_FLAG=0 and every file is a plain memfd; the sub-tests of
 * shmem-compatible semantics (I/O, ftruncate, fallocate, seals, fork,
 * concurrency) must then pass, the unmapped-only ones fail.
 */
#define _GNU_SOURCE
/* Before <sys/mman.h>: glibc defines the MFD_* it knows only if absent. */
#include <linux/memfd.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "subtest.h"

#ifndef MFD_UNMAPPED
#define MFD_UNMAPPED		0x0020U
#endif
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE	0x0010
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC		0x0020
#endif

/* The flag under test; see the top of the file. */
#ifndef TEST_MFD_FLAG
#define TEST_MFD_FLAG		MFD_UNMAPPED
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* A sub-test that has not finished after this long is reported as hung. */
#define SUBTEST_TIMEOUT		120

/* memlock sub-tests: the limit, and a size well past it. */
#define MEMLOCK_LIMIT		(1UL << 20)
#define MEMLOCK_OVER		(4UL << 20)
/* "nobody": a user whose locked_vm nothing else in the guest charges. */
#define NOBODY			65534

/* Bytes the GUP sub-tests fill their pages with. */
#define PLAIN_BYTE		0x5a
#define UNMAPPED_BYTE		0xa5

/* How long the concurrency sub-test runs. */
#define CONCURRENT_SECONDS	1.5

static size_t page_size;

#define fail(fmt, ...)							\
	({								\
		tap_diag("%s: " fmt, __func__, ##__VA_ARGS__);		\
		TAP_FAIL;						\
	})

#define expect(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			return fail(fmt, ##__VA_ARGS__);		\
	} while (0)

/* A call that must fail with @err: return TAP_FAIL from the caller if not. */
#define expect_err(ret, err, what)					\
	do {								\
		if (!refused((long)(ret), (err), (what)))		\
			return TAP_FAIL;				\
	} while (0)

static const char *errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "unknown errno";
}

/*
 * True if a call returning @ret failed with @want. Otherwise says what
 * happened instead. errno is read first, before anything can change it.
 */
static bool refused(long ret, int want, const char *what)
{
	int err = errno;

	if (ret >= 0) {
		tap_diag("%s succeeded (returned %ld), expected %s", what, ret,
			 errname(want));
		return false;
	}
	if (err != want) {
		tap_diag("%s failed with %s, expected %s", what, errname(err),
			 errname(want));
		return false;
	}
	return true;
}

static int sys_memfd_create(const char *name, unsigned int flags)
{
	return syscall(__NR_memfd_create, name, flags);
}

/* A memfd of the kind under test, of @size bytes, or -1 with a diagnostic. */
static int umfd_flags(size_t size, unsigned int extra)
{
	int fd = sys_memfd_create("memfd_unmapped_test", TEST_MFD_FLAG | extra);

	if (fd < 0) {
		tap_diag("memfd_create(MFD_UNMAPPED|%#x): %m", extra);
		return -1;
	}
	if (size && ftruncate(fd, size)) {
		tap_diag("ftruncate(%zu): %m", size);
		close(fd);
		return -1;
	}
	return fd;
}

static int umfd(size_t size)
{
	return umfd_flags(size, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

/* A plain (shmem) memfd: the positive control. */
static int plain_memfd(size_t size)
{
	int fd = sys_memfd_create("memfd_unmapped_test-plain", MFD_CLOEXEC);

	if (fd < 0) {
		tap_diag("memfd_create(plain): %m");
		return -1;
	}
	if (size && ftruncate(fd, size)) {
		tap_diag("ftruncate(%zu): %m", size);
		close(fd);
		return -1;
	}
	return fd;
}

static unsigned char *map_shared(int fd, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		tap_diag("mmap(MAP_SHARED, %zu bytes, prot %#x): %m", len, prot);
		return NULL;
	}
	return p;
}

static unsigned char *map_rw(int fd, size_t len)
{
	return map_shared(fd, len, PROT_READ | PROT_WRITE);
}

static off_t file_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -1;
	return st.st_size;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The byte of test pattern @seed at file offset @off: a multiplicative
 * hash, so that data shifted by any amount up to 4 GiB (a page, a wrong
 * iovec) does not match.
 */
static unsigned char pat(uint64_t off, unsigned int seed)
{
	uint32_t v = (uint32_t)off * 2654435761u + seed * 40503u + 0x9e37u;

	return (v ^ (v >> 15)) >> 8;
}

static void fill(unsigned char *buf, size_t n, uint64_t off, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = pat(off + i, seed);
}

/* Does @buf hold pattern @seed for file offsets [@off, @off + @n)? */
static bool check(const unsigned char *buf, size_t n, uint64_t off,
		  unsigned int seed, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i] != pat(off + i, seed)) {
			tap_diag("%s: byte at file offset %llu is %#x, expected %#x (pattern %u)",
				 what, (unsigned long long)(off + i), buf[i],
				 pat(off + i, seed), seed);
			return false;
		}
	}
	return true;
}

static bool check_zero(const unsigned char *buf, size_t n, uint64_t off,
		       const char *what)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (buf[i]) {
			tap_diag("%s: byte at file offset %llu is %#x, expected 0",
				 what, (unsigned long long)(off + i), buf[i]);
			return false;
		}
	}
	return true;
}

/* pwrite()/pread() all of @n bytes, or false with a diagnostic. */
static bool pwrite_all(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t r = pwrite(fd, buf, n, off);

	if (r != (ssize_t)n) {
		tap_diag("pwrite(%zu bytes at %lld) returned %zd: %m", n,
			 (long long)off, r);
		return false;
	}
	return true;
}

static bool pread_all(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r = pread(fd, buf, n, off);

	if (r != (ssize_t)n) {
		tap_diag("pread(%zu bytes at %lld) returned %zd: %m", n,
			 (long long)off, r);
		return false;
	}
	return true;
}

/* Read [@off, @off + @n) of the file with pread() and check it is zero. */
static bool file_zero(int fd, off_t off, size_t n, const char *what)
{
	unsigned char *buf = malloc(n);
	bool ok;

	if (!buf)
		return false;
	ok = pread_all(fd, buf, n, off) && check_zero(buf, n, off, what);
	free(buf);
	return ok;
}

static bool file_check(int fd, off_t off, size_t n, unsigned int seed,
		       const char *what)
{
	unsigned char *buf = malloc(n);
	bool ok;

	if (!buf)
		return false;
	ok = pread_all(fd, buf, n, off) && check(buf, n, off, seed, what);
	free(buf);
	return ok;
}

static bool file_fill(int fd, off_t off, size_t n, unsigned int seed)
{
	unsigned char *buf = malloc(n);
	bool ok;

	if (!buf)
		return false;
	fill(buf, n, off, seed);
	ok = pwrite_all(fd, buf, n, off);
	free(buf);
	return ok;
}

static bool size_is(int fd, off_t want, const char *when)
{
	off_t size = file_size(fd);

	if (size != want) {
		tap_diag("%s: file size %lld, expected %lld", when,
			 (long long)size, (long long)want);
		return false;
	}
	return true;
}

/*
 * Run @fn(@arg) in a child and return how it ended: 0 if it returned,
 * otherwise the signal that killed it (-1 if it exited otherwise).
 */
static int in_child(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_diag("fork: %m");
		return -1;
	}
	if (!pid) {
		fn(arg);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		tap_diag("waitpid: %m");
		return -1;
	}
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	tap_diag("child exited with status %d", WEXITSTATUS(status));
	return -1;
}

static void touch_byte(void *addr)
{
	*(volatile unsigned char *)addr = 1;
}

static bool child_gets_signal(void *addr, int sig, const char *what)
{
	int got = in_child(touch_byte, addr);

	if (got != sig) {
		tap_diag("%s: child %s, expected %s", what,
			 got > 0 ? strsignal(got) : got ? "failed" : "was not killed",
			 strsignal(sig));
		return false;
	}
	return true;
}

/* --- creation ---------------------------------------------------------- */

static enum tap_result test_create(void)
{
	struct stat st;
	int fd, fl;

	fd = sys_memfd_create("x", TEST_MFD_FLAG | MFD_CLOEXEC | MFD_ALLOW_SEALING);
	expect(fd >= 0, "memfd_create(MFD_UNMAPPED|MFD_CLOEXEC|MFD_ALLOW_SEALING): %m");
	expect(!fstat(fd, &st), "fstat: %m");
	expect(S_ISREG(st.st_mode), "st_mode %#o is not a regular file", st.st_mode);
	expect(st.st_size == 0, "new file has size %lld", (long long)st.st_size);
	fl = fcntl(fd, F_GETFD);
	expect(fl >= 0 && (fl & FD_CLOEXEC), "MFD_CLOEXEC not honoured (fd flags %#x)", fl);
	fl = fcntl(fd, F_GET_SEALS);
	expect(fl == 0, "F_GET_SEALS with MFD_ALLOW_SEALING is %#x (%m), expected 0", fl);
	tap_diag("mode %04o, st_blksize %ld", st.st_mode & 07777, (long)st.st_blksize);
	return TAP_PASS;
}

static enum tap_result test_create_hugetlb(void)
{
	expect_err(sys_memfd_create("x", TEST_MFD_FLAG | MFD_HUGETLB), EINVAL,
		   "memfd_create(MFD_UNMAPPED|MFD_HUGETLB)");
	return TAP_PASS;
}

static enum tap_result test_create_exec(void)
{
	expect_err(sys_memfd_create("x", TEST_MFD_FLAG | MFD_EXEC), EINVAL,
		   "memfd_create(MFD_UNMAPPED|MFD_EXEC)");
	expect_err(sys_memfd_create("x", TEST_MFD_FLAG | MFD_EXEC | MFD_ALLOW_SEALING),
		   EINVAL, "memfd_create(MFD_UNMAPPED|MFD_EXEC|MFD_ALLOW_SEALING)");
	return TAP_PASS;
}

static enum tap_result test_create_noexec_seal(void)
{
	struct stat st;
	int fd, seals;

	fd = sys_memfd_create("x", TEST_MFD_FLAG | MFD_NOEXEC_SEAL);
	expect(fd >= 0, "memfd_create(MFD_UNMAPPED|MFD_NOEXEC_SEAL): %m");
	seals = fcntl(fd, F_GET_SEALS);
	expect(seals >= 0, "F_GET_SEALS: %m");
	expect(seals & F_SEAL_EXEC, "seals %#x lack F_SEAL_EXEC", seals);
	expect(!fstat(fd, &st), "fstat: %m");
	tap_diag("seals %#x, mode %04o", seals, st.st_mode & 07777);
	expect(!(st.st_mode & 0111), "mode %04o has x bits", st.st_mode & 07777);
	/* F_SEAL_EXEC: the x bits cannot be set, the others can change. */
	expect_err(fchmod(fd, (st.st_mode & 0777) | 0100), EPERM,
		   "fchmod(u+x) under F_SEAL_EXEC");
	expect(!fchmod(fd, 0400), "fchmod(0400) under F_SEAL_EXEC: %m");
	close(fd);

	fd = sys_memfd_create("x", TEST_MFD_FLAG | MFD_NOEXEC_SEAL | MFD_ALLOW_SEALING);
	expect(fd >= 0, "memfd_create(MFD_UNMAPPED|MFD_NOEXEC_SEAL|MFD_ALLOW_SEALING): %m");
	seals = fcntl(fd, F_GET_SEALS);
	expect(seals >= 0 && (seals & F_SEAL_EXEC),
	       "seals %#x lack F_SEAL_EXEC (%m)", seals);
	return TAP_PASS;
}

static enum tap_result test_create_unknown_flag(void)
{
	expect_err(sys_memfd_create("x", TEST_MFD_FLAG | 0x1000U), EINVAL,
		   "memfd_create(MFD_UNMAPPED|0x1000)");
	return TAP_PASS;
}

/* --- mmap -------------------------------------------------------------- */

static enum tap_result test_mmap_shared_rw(void)
{
	const size_t len = 3 * page_size;
	unsigned char *p, *q, *buf;
	int fd;

	fd = umfd(len);
	expect(fd >= 0, "cannot create the file");
	p = map_rw(fd, len);
	q = map_rw(fd, len);
	buf = malloc(len);
	expect(p && q && buf, "cannot map the file twice");
	expect(check_zero(p, len, 0, "fresh mapping"), "new pages are not zero");

	/* Mapping -> read() and pread(), across the page boundaries. */
	fill(p, len, 0, 1);
	expect(check(q, len, 0, 1, "second mapping"), "mappings are not coherent");
	expect(read(fd, buf, len) == (ssize_t)len, "read(): %m");
	expect(check(buf, len, 0, 1, "read() after writing the mapping"),
	       "read() does not see the mapping's data");
	expect(file_check(fd, page_size - 5, page_size + 10, 1,
			  "pread() across pages after writing the mapping"),
	       "pread() does not see the mapping's data");

	/* write()/pwrite() -> mapping. */
	fill(buf, len, 0, 2);
	expect(lseek(fd, 0, SEEK_SET) == 0, "lseek: %m");
	expect(write(fd, buf, len) == (ssize_t)len, "write(): %m");
	expect(check(p, len, 0, 2, "mapping after write()"),
	       "the mapping does not see write()");
	fill(buf, 2 * page_size, page_size / 2, 3);
	expect(pwrite_all(fd, buf, 2 * page_size, page_size / 2), "pwrite failed");
	expect(check(p, page_size / 2, 0, 2, "mapping before the pwrite()") &&
	       check(p + page_size / 2, 2 * page_size, page_size / 2, 3,
		     "mapping after pwrite()") &&
	       check(p + page_size / 2 + 2 * page_size, page_size / 2,
		     page_size / 2 + 2 * page_size, 2, "mapping after the pwrite()"),
	       "the mapping does not see pwrite()");

	/* The pages belong to the file, not to the mapping. */
	munmap(p, len);
	munmap(q, len);
	p = map_rw(fd, len);
	expect(p, "cannot map the file again");
	expect(check(p + page_size / 2, 2 * page_size, page_size / 2, 3,
		     "mapping after munmap"), "contents lost across munmap");
	return TAP_PASS;
}

static enum tap_result test_mmap_private(void)
{
	void *p;
	int fd;

	fd = umfd(page_size);
	expect(fd >= 0, "cannot create the file");
	p = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	expect_err(p == MAP_FAILED ? -1 : 0, EINVAL, "mmap(PROT_READ|PROT_WRITE, MAP_PRIVATE)");
	p = mmap(NULL, page_size, PROT_READ, MAP_PRIVATE, fd, 0);
	expect_err(p == MAP_FAILED ? -1 : 0, EINVAL, "mmap(PROT_READ, MAP_PRIVATE)");
	return TAP_PASS;
}

static enum tap_result test_mmap_exec(void)
{
	void *p;
	int fd;

	fd = umfd(page_size);
	expect(fd >= 0, "cannot create the file");
	p = mmap(NULL, page_size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	expect_err(p == MAP_FAILED ? -1 : 0, EPERM, "mmap(PROT_READ|PROT_EXEC, MAP_SHARED)");
	p = mmap(NULL, page_size, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, fd, 0);
	expect_err(p == MAP_FAILED ? -1 : 0, EPERM, "mmap(PROT_RWX, MAP_SHARED)");
	return TAP_PASS;
}

static enum tap_result test_mprotect_exec(void)
{
	unsigned char *p;
	int fd;

	fd = umfd(page_size);
	expect(fd >= 0, "cannot create the file");
	p = map_rw(fd, page_size);
	expect(p, "cannot map the file");
	p[0] = 1;
	expect_err(mprotect(p, page_size, PROT_READ | PROT_EXEC), EACCES,
		   "mprotect(PROT_READ|PROT_EXEC)");
	expect_err(mprotect(p, page_size, PROT_READ | PROT_WRITE | PROT_EXEC), EACCES,
		   "mprotect(PROT_RWX)");
	/* The mapping is unchanged and still writable. */
	p[1] = 2;
	expect(p[0] == 1 && p[1] == 2, "mapping changed");
	return TAP_PASS;
}

static enum tap_result test_mmap_sigbus(void)
{
	unsigned char *p;
	int fd;

	/* A page wholly past EOF. */
	fd = umfd(page_size);
	expect(fd >= 0, "cannot create the file");
	p = map_rw(fd, 3 * page_size);
	expect(p, "cannot map past EOF");
	p[0] = 1;
	expect(child_gets_signal(p + page_size, SIGBUS, "touching the page past EOF"),
	       "no SIGBUS past EOF");
	expect(child_gets_signal(p + 2 * page_size + 7, SIGBUS, "touching two pages past EOF"),
	       "no SIGBUS past EOF");

	/* Pages that were in the file and were truncated away. */
	expect(!ftruncate(fd, 3 * page_size), "ftruncate(3 pages): %m");
	memset(p, 0x11, 3 * page_size);
	expect(!ftruncate(fd, page_size), "ftruncate(1 page): %m");
	expect(p[0] == 0x11, "first page lost by shrinking");
	expect(child_gets_signal(p + 2 * page_size, SIGBUS, "touching a truncated page"),
	       "no SIGBUS on a truncated page");
	return TAP_PASS;
}

/* --- ftruncate --------------------------------------------------------- */

static enum tap_result test_ftruncate_resize(void)
{
	const size_t P = page_size;
	unsigned char *buf;
	int fd;

	fd = umfd(0);
	buf = malloc(4 * P);
	expect(fd >= 0 && buf, "cannot create the file");
	expect(size_is(fd, 0, "new file"), "wrong size");

	expect(!ftruncate(fd, 3 * P), "ftruncate(0 -> 3 pages): %m");
	expect(size_is(fd, 3 * P, "after 0 -> 3 pages"), "wrong size");
	expect(file_zero(fd, 0, 3 * P, "grown file"), "grown file not zero");
	expect(file_fill(fd, 0, 3 * P, 1), "cannot fill");

	expect(!ftruncate(fd, P + 10), "ftruncate(3 pages -> 1 page + 10): %m");
	expect(size_is(fd, P + 10, "after 3 pages -> 1 page + 10"), "wrong size");
	expect(file_check(fd, 0, P + 10, 1, "data kept by shrinking"), "data lost");
	expect(pread(fd, buf, 4 * P, 0) == (ssize_t)(P + 10),
	       "pread of the whole file did not stop at EOF");

	expect(!ftruncate(fd, 4 * P), "ftruncate(1 page + 10 -> 4 pages): %m");
	expect(size_is(fd, 4 * P, "after 1 page + 10 -> 4 pages"), "wrong size");
	expect(file_check(fd, 0, P + 10, 1, "data kept by growing"), "data lost");
	expect(file_zero(fd, P + 10, 3 * P - 10, "bytes past the old EOF"),
	       "shrunk-away data came back");

	expect(!ftruncate(fd, 0), "ftruncate(4 pages -> 0): %m");
	expect(size_is(fd, 0, "after 4 pages -> 0"), "wrong size");
	expect(pread(fd, buf, P, 0) == 0, "pread of an empty file did not return 0");

	expect(!ftruncate(fd, 2 * P), "ftruncate(0 -> 2 pages): %m");
	expect(size_is(fd, 2 * P, "after 0 -> 2 pages"), "wrong size");
	expect(file_zero(fd, 0, 2 * P, "file grown from 0"), "old data came back");
	return TAP_PASS;
}

static enum tap_result test_ftruncate_regrow_zero(void)
{
	const size_t P = page_size, cut = P + 100;
	unsigned char *p, *q;
	int fd;

	fd = umfd(3 * P);
	expect(fd >= 0, "cannot create the file");
	/* A mapping that lives through the shrink and the growth. */
	p = map_rw(fd, 3 * P);
	expect(p, "cannot map the file");
	fill(p, 3 * P, 0, 7);

	expect(!ftruncate(fd, cut), "ftruncate(1 page + 100): %m");
	expect(!ftruncate(fd, 3 * P), "ftruncate(3 pages): %m");

	expect(file_check(fd, 0, cut, 7, "read() before the old EOF"), "data lost");
	expect(file_zero(fd, cut, 3 * P - cut, "read() past the old EOF"),
	       "read() shows stale bytes past the old EOF");
	expect(check(p, cut, 0, 7, "old mapping before the old EOF"), "data lost");
	expect(check_zero(p + cut, 3 * P - cut, cut, "old mapping past the old EOF"),
	       "the mapping shows stale bytes past the old EOF");
	q = map_rw(fd, 3 * P);
	expect(q, "cannot map the file again");
	expect(check_zero(q + cut, 3 * P - cut, cut, "new mapping past the old EOF"),
	       "a new mapping shows stale bytes past the old EOF");
	return TAP_PASS;
}

/* --- fallocate --------------------------------------------------------- */

static enum tap_result test_fallocate_extend(void)
{
	const size_t P = page_size;
	int fd;

	fd = umfd(0);
	expect(fd >= 0, "cannot create the file");
	expect(!fallocate(fd, 0, P / 2, 2 * P), "fallocate(0, P/2, 2P): %m");
	expect(size_is(fd, P / 2 + 2 * P, "after fallocate past EOF"),
	       "fallocate did not extend the file");
	expect(file_zero(fd, 0, P / 2 + 2 * P, "allocated range"), "not zero");
	/* Inside the file: size unchanged, data kept. */
	expect(file_fill(fd, 0, P / 2 + 2 * P, 4), "cannot fill");
	expect(!fallocate(fd, 0, 0, 2 * P), "fallocate inside the file: %m");
	expect(size_is(fd, P / 2 + 2 * P, "after fallocate inside the file"), "size changed");
	expect(file_check(fd, 0, P / 2 + 2 * P, 4, "data after fallocate"),
	       "fallocate changed data");
	return TAP_PASS;
}

static enum tap_result test_fallocate_keep_size(void)
{
	const size_t P = page_size;
	char c;
	int fd;

	fd = umfd(P);
	expect(fd >= 0, "cannot create the file");
	expect(file_fill(fd, 0, P, 5), "cannot fill");
	expect(!fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4 * P),
	       "fallocate(KEEP_SIZE, 0, 4P): %m");
	expect(size_is(fd, P, "after fallocate(KEEP_SIZE)"), "KEEP_SIZE changed the size");
	expect(pread(fd, &c, 1, P) == 0, "read past EOF after KEEP_SIZE did not return 0");
	expect(file_check(fd, 0, P, 5, "data after KEEP_SIZE"), "data changed");
	expect(!ftruncate(fd, 4 * P), "ftruncate(4P): %m");
	expect(file_zero(fd, P, 3 * P, "preallocated pages"), "preallocated pages not zero");
	return TAP_PASS;
}

static enum tap_result test_fallocate_punch_hole(void)
{
	const size_t P = page_size, size = 4 * P;
	const off_t start = P + 100, end = 3 * P - 200;
	unsigned char *p, *buf;
	int fd;

	fd = umfd(size);
	buf = malloc(size);
	expect(fd >= 0 && buf, "cannot create the file");
	p = map_rw(fd, size);
	expect(p, "cannot map the file");
	fill(p, size, 0, 6);

	expect(!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, start, end - start),
	       "fallocate(PUNCH_HOLE|KEEP_SIZE, %lld, %lld): %m", (long long)start,
	       (long long)(end - start));
	expect(size_is(fd, size, "after punching"), "punching changed the size");

	expect(pread_all(fd, buf, size, 0), "pread failed");
	expect(check(buf, start, 0, 6, "read() before the hole") &&
	       check_zero(buf + start, end - start, start, "read() in the hole") &&
	       check(buf + end, size - end, end, 6, "read() after the hole"),
	       "punch hole via read() wrong");
	expect(check(p, start, 0, 6, "mapping before the hole") &&
	       check_zero(p + start, end - start, start, "mapping in the hole") &&
	       check(p + end, size - end, end, 6, "mapping after the hole"),
	       "punch hole via the mapping wrong");

	/* A hole can be written again. */
	fill(p + 2 * P, P, 2 * P, 8);
	expect(file_check(fd, 2 * P, P, 8, "refilled hole"), "cannot refill the hole");
	return TAP_PASS;
}

static enum tap_result test_fallocate_unsupported(void)
{
	static const struct {
		int mode;
		const char *name;
	} modes[] = {
		{ FALLOC_FL_ZERO_RANGE, "ZERO_RANGE" },
		{ FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, "ZERO_RANGE|KEEP_SIZE" },
		{ FALLOC_FL_COLLAPSE_RANGE, "COLLAPSE_RANGE" },
		{ FALLOC_FL_INSERT_RANGE, "INSERT_RANGE" },
		{ FALLOC_FL_PUNCH_HOLE, "PUNCH_HOLE without KEEP_SIZE" },
	};
	char what[64];
	unsigned int i;
	bool ok = true;
	int fd;

	fd = umfd(4 * page_size);
	expect(fd >= 0, "cannot create the file");
	expect(file_fill(fd, 0, 4 * page_size, 9), "cannot fill");
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		snprintf(what, sizeof(what), "fallocate(%s)", modes[i].name);
		ok &= refused(fallocate(fd, modes[i].mode, page_size, page_size),
			      EOPNOTSUPP, what);
	}
	expect(size_is(fd, 4 * page_size, "after refused modes"), "size changed");
	expect(file_check(fd, 0, 4 * page_size, 9, "data after refused modes"),
	       "data changed");
	return ok ? TAP_PASS : TAP_FAIL;
}

/* --- read/write -------------------------------------------------------- */

static enum tap_result test_rw_page_crossing(void)
{
	/* Offsets and sizes around page boundaries, and odd ones. */
	const size_t P = page_size;
	const struct {
		size_t off, len;
	} cases[] = {
		{ 0, 1 }, { P - 1, 2 }, { P - 3, P + 6 }, { 1, 3 * P - 2 },
		{ 2 * P, P }, { 3 * P - 1, 1 }, { 123, 4567 }, { 0, 4 * P },
	};
	unsigned char *p, *buf;
	unsigned int i;
	int fd;

	fd = umfd(4 * P);
	buf = malloc(4 * P);
	expect(fd >= 0 && buf, "cannot create the file");
	p = map_rw(fd, 4 * P);
	expect(p, "cannot map the file");

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t off = cases[i].off, len = cases[i].len;

		memset(p, 0xee, 4 * P);
		fill(buf, len, off, 10 + i);
		expect(pwrite_all(fd, buf, len, off), "case %u: pwrite failed", i);
		/* Neighbours untouched, data in place. */
		expect(!off || p[off - 1] == 0xee, "case %u: pwrite wrote before its range", i);
		expect(off + len == 4 * P || p[off + len] == 0xee,
		       "case %u: pwrite wrote past its range", i);
		expect(check(p + off, len, off, 10 + i, "mapping after pwrite"),
		       "case %u: wrong data", i);
		memset(buf, 0, len);
		expect(pread_all(fd, buf, len, off), "case %u: pread failed", i);
		expect(check(buf, len, off, 10 + i, "pread"), "case %u: wrong data", i);
	}
	return TAP_PASS;
}

static enum tap_result test_rw_vectored(void)
{
	const size_t P = page_size;
	/* Segments of odd sizes; several cross page boundaries. */
	const size_t lens[] = { 7, P - 10, 2 * P + 5, 1, P / 2, 3 };
	struct iovec iov[ARRAY_SIZE(lens)];
	unsigned char *src, *dst;
	size_t total = 0, i, at;
	const off_t base = P - 40;
	int fd;

	for (i = 0; i < ARRAY_SIZE(lens); i++)
		total += lens[i];
	fd = umfd(0);
	src = malloc(total);
	dst = malloc(total);
	expect(fd >= 0 && src && dst, "cannot create the file");
	fill(src, total, base, 20);

	for (i = 0, at = 0; i < ARRAY_SIZE(lens); at += lens[i], i++)
		iov[i] = (struct iovec){ .iov_base = src + at, .iov_len = lens[i] };
	expect(lseek(fd, base, SEEK_SET) == base, "lseek: %m");
	expect(writev(fd, iov, ARRAY_SIZE(lens)) == (ssize_t)total, "writev: %m");
	expect(lseek(fd, 0, SEEK_CUR) == base + (off_t)total,
	       "writev did not advance the file position");
	expect(file_check(fd, base, total, 20, "pread after writev"), "writev wrote wrong data");
	expect(file_zero(fd, 0, base, "hole before writev"), "hole not zero");

	/* readv with a different split. */
	for (i = 0, at = 0; i < ARRAY_SIZE(lens); at += lens[ARRAY_SIZE(lens) - 1 - i], i++)
		iov[i] = (struct iovec){ .iov_base = dst + at,
					 .iov_len = lens[ARRAY_SIZE(lens) - 1 - i] };
	expect(lseek(fd, base, SEEK_SET) == base, "lseek: %m");
	expect(readv(fd, iov, ARRAY_SIZE(lens)) == (ssize_t)total, "readv: %m");
	expect(check(dst, total, base, 20, "readv"), "readv read wrong data");

	/* preadv/pwritev at an offset, leaving the file position alone. */
	fill(src, total, 3 * P + 1, 21);
	for (i = 0, at = 0; i < ARRAY_SIZE(lens); at += lens[i], i++)
		iov[i] = (struct iovec){ .iov_base = src + at, .iov_len = lens[i] };
	expect(pwritev(fd, iov, ARRAY_SIZE(lens), 3 * P + 1) == (ssize_t)total, "pwritev: %m");
	memset(dst, 0, total);
	for (i = 0, at = 0; i < ARRAY_SIZE(lens); at += lens[i], i++)
		iov[i] = (struct iovec){ .iov_base = dst + at, .iov_len = lens[i] };
	expect(preadv(fd, iov, ARRAY_SIZE(lens), 3 * P + 1) == (ssize_t)total, "preadv: %m");
	expect(check(dst, total, 3 * P + 1, 21, "preadv"), "preadv/pwritev wrong data");
	expect(lseek(fd, 0, SEEK_CUR) == base + (off_t)total,
	       "preadv/pwritev moved the file position");
	return TAP_PASS;
}

static enum tap_result test_rw_write_past_eof(void)
{
	const size_t P = page_size;
	unsigned char buf[100];
	int fd;

	fd = umfd(P / 2);
	expect(fd >= 0, "cannot create the file");
	expect(file_fill(fd, 0, P / 2, 30), "cannot fill");
	fill(buf, sizeof(buf), 3 * P - 50, 31);
	expect(pwrite_all(fd, buf, sizeof(buf), 3 * P - 50), "pwrite past EOF failed");
	expect(size_is(fd, 3 * P + 50, "after pwrite past EOF"), "pwrite did not extend");
	expect(file_check(fd, 0, P / 2, 30, "data before the hole"), "old data changed");
	expect(file_zero(fd, P / 2, 3 * P - 50 - P / 2, "hole"), "hole not zero");
	expect(file_check(fd, 3 * P - 50, sizeof(buf), 31, "data after the hole"),
	       "written data wrong");

	/* Appending write() through the file position. */
	expect(lseek(fd, 0, SEEK_END) == (off_t)(3 * P + 50), "lseek(SEEK_END): %m");
	fill(buf, sizeof(buf), 3 * P + 50, 32);
	expect(write(fd, buf, sizeof(buf)) == sizeof(buf), "write at EOF: %m");
	expect(size_is(fd, 3 * P + 150, "after write at EOF"), "write did not extend");
	expect(file_check(fd, 3 * P + 50, sizeof(buf), 32, "appended data"), "wrong data");
	return TAP_PASS;
}

static enum tap_result test_rw_read_eof(void)
{
	const size_t P = page_size;
	unsigned char buf[256];
	int fd;

	fd = umfd(P + 10);
	expect(fd >= 0, "cannot create the file");
	expect(pread(fd, buf, sizeof(buf), P + 10) == 0, "pread at EOF did not return 0");
	expect(pread(fd, buf, sizeof(buf), 5 * P) == 0, "pread past EOF did not return 0");
	expect(pread(fd, buf, sizeof(buf), P) == 10,
	       "pread across EOF did not return the 10 bytes left");
	expect(lseek(fd, 0, SEEK_END) == (off_t)(P + 10), "lseek(SEEK_END): %m");
	expect(read(fd, buf, sizeof(buf)) == 0, "read at EOF did not return 0");
	expect(lseek(fd, 7 * P, SEEK_SET) == (off_t)(7 * P), "lseek past EOF: %m");
	expect(read(fd, buf, sizeof(buf)) == 0, "read past EOF did not return 0");
	expect(size_is(fd, P + 10, "after reads past EOF"), "reading changed the size");
	return TAP_PASS;
}

static enum tap_result test_rw_large(void)
{
	const size_t len = (1UL << 20) + 123;
	const off_t off = 77;
	unsigned char *src, *dst, *p;
	ssize_t n;
	int fd;

	fd = umfd(0);
	src = malloc(len);
	dst = malloc(len);
	expect(fd >= 0 && src && dst, "cannot create the file");
	fill(src, len, off, 40);
	expect(lseek(fd, off, SEEK_SET) == off, "lseek: %m");
	n = write(fd, src, len);
	expect(n == (ssize_t)len, "write(%zu) returned %zd: %m", len, n);
	expect(size_is(fd, off + len, "after the large write"), "wrong size");
	expect(lseek(fd, off, SEEK_SET) == off, "lseek: %m");
	n = read(fd, dst, len);
	expect(n == (ssize_t)len, "read(%zu) returned %zd: %m", len, n);
	expect(check(dst, len, off, 40, "large read"), "large transfer corrupted");
	p = map_shared(fd, off + len, PROT_READ);
	expect(p, "cannot map the file");
	expect(check(p + off, len, off, 40, "mapping after the large write"),
	       "mapping disagrees with the large write");
	return TAP_PASS;
}

static enum tap_result test_lseek(void)
{
	const size_t P = page_size;
	unsigned char buf[16];
	int fd;

	fd = umfd(2 * P + 5);
	expect(fd >= 0, "cannot create the file");
	expect(file_fill(fd, 0, 2 * P + 5, 50), "cannot fill");
	expect(lseek(fd, 0, SEEK_CUR) == 0, "new fd not at 0");
	expect(lseek(fd, P - 3, SEEK_SET) == (off_t)(P - 3), "SEEK_SET: %m");
	expect(read(fd, buf, 8) == 8 && check(buf, 8, P - 3, 50, "read after SEEK_SET"),
	       "read after SEEK_SET wrong");
	expect(lseek(fd, 0, SEEK_CUR) == (off_t)(P + 5), "read did not advance by 8");
	expect(lseek(fd, 10, SEEK_CUR) == (off_t)(P + 15), "SEEK_CUR +10: %m");
	expect(lseek(fd, -20, SEEK_CUR) == (off_t)(P - 5), "SEEK_CUR -20: %m");
	expect(read(fd, buf, 8) == 8 && check(buf, 8, P - 5, 50, "read after SEEK_CUR"),
	       "read after SEEK_CUR wrong");
	expect(lseek(fd, -5, SEEK_END) == (off_t)(2 * P), "SEEK_END -5: %m");
	expect(read(fd, buf, 16) == 5 && check(buf, 5, 2 * P, 50, "read after SEEK_END"),
	       "read after SEEK_END wrong");
	expect(lseek(fd, 3, SEEK_END) == (off_t)(2 * P + 8), "SEEK_END +3: %m");
	fill(buf, 4, 2 * P + 8, 51);
	expect(write(fd, buf, 4) == 4, "write after SEEK_END: %m");
	expect(size_is(fd, 2 * P + 12, "after write past SEEK_END"), "wrong size");
	expect(file_zero(fd, 2 * P + 5, 3, "gap"), "gap not zero");
	expect_err(lseek(fd, -1, SEEK_SET), EINVAL, "lseek(-1, SEEK_SET)");
	return TAP_PASS;
}

/* --- sendfile and splice ----------------------------------------------- */

static enum tap_result test_sendfile(void)
{
	int pfd, ufd, out, pipefd[2];
	off_t off;

	pfd = plain_memfd(page_size);
	ufd = umfd(page_size);
	out = plain_memfd(0);
	expect(pfd >= 0 && ufd >= 0 && out >= 0, "cannot create the files");
	expect(!pipe(pipefd), "pipe: %m");

	/* Control: the same call from a plain memfd works. */
	off = 0;
	expect(sendfile(out, pfd, &off, page_size) == (ssize_t)page_size,
	       "control: sendfile from a plain memfd to a file: %m");
	off = 0;
	expect(sendfile(pipefd[1], pfd, &off, 100) == 100,
	       "control: sendfile from a plain memfd to a pipe: %m");

	off = 0;
	expect_err(sendfile(out, ufd, &off, page_size), EINVAL,
		   "sendfile(file, unmapped memfd)");
	off = 0;
	expect_err(sendfile(pipefd[1], ufd, &off, 100), EINVAL,
		   "sendfile(pipe, unmapped memfd)");
	return TAP_PASS;
}

static enum tap_result test_splice_read(void)
{
	int pfd, ufd, pipefd[2];

	pfd = plain_memfd(page_size);
	ufd = umfd(page_size);
	expect(pfd >= 0 && ufd >= 0, "cannot create the files");
	expect(!pipe(pipefd), "pipe: %m");

	expect(splice(pfd, NULL, pipefd[1], NULL, 100, 0) == 100,
	       "control: splice(plain memfd -> pipe): %m");
	expect_err(splice(ufd, NULL, pipefd[1], NULL, 100, 0), EINVAL,
		   "splice(unmapped memfd -> pipe)");
	return TAP_PASS;
}

static enum tap_result test_splice_write(void)
{
	unsigned char buf[100];
	int pfd, ufd, pipefd[2];

	pfd = plain_memfd(0);
	ufd = umfd(0);
	expect(pfd >= 0 && ufd >= 0, "cannot create the files");
	expect(!pipe(pipefd), "pipe: %m");
	memset(buf, 0x33, sizeof(buf));
	expect(write(pipefd[1], buf, sizeof(buf)) == sizeof(buf), "write to pipe: %m");

	expect(splice(pipefd[0], NULL, pfd, NULL, 50, 0) == 50,
	       "control: splice(pipe -> plain memfd): %m");
	expect_err(splice(pipefd[0], NULL, ufd, NULL, 50, 0), EINVAL,
		   "splice(pipe -> unmapped memfd)");
	expect(size_is(ufd, 0, "after the refused splice"), "splice wrote something");
	return TAP_PASS;
}

/* --- seals ------------------------------------------------------------- */

static bool seals_are(int fd, int want)
{
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals != want) {
		tap_diag("F_GET_SEALS is %#x (%s), expected %#x", seals,
			 seals < 0 ? errname(errno) : "ok", want);
		return false;
	}
	return true;
}

static enum tap_result test_seal_default(void)
{
	int fd;

	fd = umfd_flags(page_size, MFD_CLOEXEC);
	expect(fd >= 0, "cannot create the file");
	expect(seals_are(fd, F_SEAL_SEAL), "without MFD_ALLOW_SEALING");
	expect_err(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EPERM,
		   "F_ADD_SEALS(F_SEAL_WRITE) without MFD_ALLOW_SEALING");
	expect_err(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), EPERM,
		   "F_ADD_SEALS(SHRINK|GROW) without MFD_ALLOW_SEALING");
	expect(seals_are(fd, F_SEAL_SEAL), "after refused F_ADD_SEALS");
	/* The file still works. */
	expect(file_fill(fd, 0, page_size, 60) && !ftruncate(fd, 2 * page_size),
	       "cannot use the file");
	return TAP_PASS;
}

static enum tap_result test_seal_shrink(void)
{
	const size_t P = page_size;
	int fd;

	fd = umfd(4 * P);
	expect(fd >= 0, "cannot create the file");
	expect(file_fill(fd, 0, 4 * P, 61), "cannot fill");
	expect(!fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), "F_ADD_SEALS(F_SEAL_SHRINK): %m");
	expect(seals_are(fd, F_SEAL_SHRINK), "after F_SEAL_SHRINK");
	expect_err(ftruncate(fd, 2 * P), EPERM, "ftruncate smaller under F_SEAL_SHRINK");
	expect_err(ftruncate(fd, 0), EPERM, "ftruncate(0) under F_SEAL_SHRINK");
	expect(size_is(fd, 4 * P, "after refused shrinks"), "size changed");
	expect(!ftruncate(fd, 6 * P), "ftruncate bigger under F_SEAL_SHRINK: %m");
	expect(size_is(fd, 6 * P, "after growing"), "did not grow");
	expect(file_check(fd, 0, 4 * P, 61, "data"), "data changed");
	return TAP_PASS;
}

static enum tap_result test_seal_grow(void)
{
	const size_t P = page_size;
	unsigned char buf[64];
	ssize_t n;
	int fd;

	fd = umfd(4 * P);
	expect(fd >= 0, "cannot create the file");
	expect(!fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), "F_ADD_SEALS(F_SEAL_GROW): %m");
	expect(seals_are(fd, F_SEAL_GROW), "after F_SEAL_GROW");
	expect_err(ftruncate(fd, 5 * P), EPERM, "ftruncate bigger under F_SEAL_GROW");
	memset(buf, 1, sizeof(buf));
	expect_err(pwrite(fd, buf, sizeof(buf), 4 * P), EPERM,
		   "pwrite at EOF under F_SEAL_GROW");
	expect_err(pwrite(fd, buf, sizeof(buf), 6 * P), EPERM,
		   "pwrite past EOF under F_SEAL_GROW");
	expect(lseek(fd, 0, SEEK_END) == (off_t)(4 * P), "lseek: %m");
	expect_err(write(fd, buf, sizeof(buf)), EPERM, "write at EOF under F_SEAL_GROW");
	expect_err(fallocate(fd, 0, 4 * P, P), EPERM, "fallocate past EOF under F_SEAL_GROW");
	expect_err(fallocate(fd, 0, 3 * P, 2 * P), EPERM,
		   "fallocate across EOF under F_SEAL_GROW");
	/* A write that starts inside and ends past EOF may be cut short at EOF. */
	n = pwrite(fd, buf, sizeof(buf), 4 * P - 10);
	expect((n < 0 && errno == EPERM) || n == 10,
	       "pwrite across EOF under F_SEAL_GROW returned %zd (%m)", n);
	expect(size_is(fd, 4 * P, "after refused growth"), "the file grew");
	/* Inside the file everything works, and it may shrink. */
	expect(file_fill(fd, 0, 4 * P, 62), "write inside the file under F_SEAL_GROW");
	expect(!fallocate(fd, 0, 0, 4 * P), "fallocate inside the file: %m");
	expect(!ftruncate(fd, 2 * P), "ftruncate smaller under F_SEAL_GROW: %m");
	expect_err(ftruncate(fd, 3 * P), EPERM, "ftruncate regrow under F_SEAL_GROW");
	return TAP_PASS;
}

static enum tap_result test_seal_write(void)
{
	const size_t P = page_size;
	unsigned char buf[64], *p;
	void *q;
	int fd;

	fd = umfd(2 * P);
	expect(fd >= 0, "cannot create the file");
	expect(file_fill(fd, 0, 2 * P, 63), "cannot fill");

	/* A writable shared mapping blocks the seal. */
	p = map_rw(fd, 2 * P);
	expect(p, "cannot map the file");
	expect_err(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EBUSY,
		   "F_ADD_SEALS(F_SEAL_WRITE) with a writable mapping");
	expect(seals_are(fd, 0), "after the refused F_SEAL_WRITE");
	munmap(p, 2 * P);
	expect(!fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), "F_ADD_SEALS(F_SEAL_WRITE) after munmap: %m");
	expect(seals_are(fd, F_SEAL_WRITE), "after F_SEAL_WRITE");

	memset(buf, 0, sizeof(buf));
	expect_err(write(fd, buf, sizeof(buf)), EPERM, "write under F_SEAL_WRITE");
	expect_err(pwrite(fd, buf, sizeof(buf), P - 10), EPERM, "pwrite under F_SEAL_WRITE");
	q = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	expect_err(q == MAP_FAILED ? -1 : 0, EPERM,
		   "mmap(PROT_READ|PROT_WRITE, MAP_SHARED) under F_SEAL_WRITE");
	q = mmap(NULL, 2 * P, PROT_WRITE, MAP_SHARED, fd, 0);
	expect_err(q == MAP_FAILED ? -1 : 0, EPERM, "mmap(PROT_WRITE, MAP_SHARED) under F_SEAL_WRITE");
	expect_err(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, P), EPERM,
		   "fallocate(PUNCH_HOLE) under F_SEAL_WRITE");

	/* Read-only mapping: allowed, and cannot be made writable. */
	p = map_shared(fd, 2 * P, PROT_READ);
	expect(p, "read-only mmap under F_SEAL_WRITE failed");
	expect(check(p, 2 * P, 0, 63, "read-only mapping"), "wrong data");
	expect_err(mprotect(p, 2 * P, PROT_READ | PROT_WRITE), EACCES,
		   "mprotect(PROT_WRITE) of a read-only mapping under F_SEAL_WRITE");
	expect(file_check(fd, 0, 2 * P, 63, "data under F_SEAL_WRITE"), "data changed");
	return TAP_PASS;
}

static enum tap_result test_seal_future_write(void)
{
	const size_t P = page_size;
	unsigned char buf[64], *p, *r;
	void *q;
	int fd;

	fd = umfd(2 * P);
	expect(fd >= 0, "cannot create the file");
	p = map_rw(fd, 2 * P);
	expect(p, "cannot map the file");
	fill(p, 2 * P, 0, 64);
	expect(!fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE),
	       "F_ADD_SEALS(F_SEAL_FUTURE_WRITE) with a writable mapping: %m");
	expect(seals_are(fd, F_SEAL_FUTURE_WRITE), "after F_SEAL_FUTURE_WRITE");

	/* The existing writable mapping keeps working. */
	fill(p + P - 8, 16, P - 8, 65);
	expect(file_check(fd, P - 8, 16, 65, "write through the old mapping"),
	       "the existing mapping stopped working");

	q = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	expect_err(q == MAP_FAILED ? -1 : 0, EPERM,
		   "new mmap(PROT_READ|PROT_WRITE, MAP_SHARED) under F_SEAL_FUTURE_WRITE");
	memset(buf, 0, sizeof(buf));
	expect_err(write(fd, buf, sizeof(buf)), EPERM, "write under F_SEAL_FUTURE_WRITE");
	expect_err(pwrite(fd, buf, sizeof(buf), 0), EPERM, "pwrite under F_SEAL_FUTURE_WRITE");
	r = map_shared(fd, 2 * P, PROT_READ);
	expect(r, "read-only mmap under F_SEAL_FUTURE_WRITE failed");
	expect(check(r + P - 8, 16, P - 8, 65, "new read-only mapping"), "wrong data");
	return TAP_PASS;
}

static enum tap_result test_seal_seal(void)
{
	int fd;

	fd = umfd(page_size);
	expect(fd >= 0, "cannot create the file");
	expect(!fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), "F_ADD_SEALS(F_SEAL_SEAL): %m");
	expect(seals_are(fd, F_SEAL_SEAL), "after F_SEAL_SEAL");
	expect_err(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE), EPERM, "F_ADD_SEALS after F_SEAL_SEAL");
	expect_err(fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL), EPERM,
		   "F_ADD_SEALS(F_SEAL_SEAL) after F_SEAL_SEAL");
	expect(seals_are(fd, F_SEAL_SEAL), "after refused F_ADD_SEALS");
	return TAP_PASS;
}

/* --- RLIMIT_MEMLOCK ---------------------------------------------------- */

static bool set_memlock(rlim_t bytes)
{
	const struct rlimit lim = { .rlim_cur = bytes, .rlim_max = bytes };

	if (setrlimit(RLIMIT_MEMLOCK, &lim)) {
		tap_diag("setrlimit(RLIMIT_MEMLOCK, %llu): %m", (unsigned long long)bytes);
		return false;
	}
	return true;
}

/* Is CAP_IPC_LOCK in our effective set (/proc/self/status CapEff)? */
static bool has_cap_ipc_lock(void)
{
	unsigned long long eff = ~0ULL;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << 14);	/* CAP_IPC_LOCK */
}

/* Map @len bytes of a new @len-byte file and write every byte. */
static bool map_and_fill(size_t len, const char *who)
{
	unsigned char *p;
	int fd;

	fd = umfd(len);
	if (fd < 0)
		return false;
	p = map_rw(fd, len);
	if (!p) {
		tap_diag("%s: cannot map %zu bytes", who, len);
		return false;
	}
	fill(p, len, 0, 70);
	if (!check(p, len, 0, 70, who))
		return false;
	munmap(p, len);
	close(fd);
	return true;
}

static enum tap_result test_memlock_unprivileged(void)
{
	unsigned char *buf;
	int fd, err;
	ssize_t n;
	void *p;

	/* Files are created after the switch: nobody's pages, nobody's limit. */
	expect(set_memlock(MEMLOCK_LIMIT), "cannot set the limit");
	expect(!setgroups(0, NULL) && !setresgid(NOBODY, NOBODY, NOBODY) &&
	       !setresuid(NOBODY, NOBODY, NOBODY), "cannot become uid %d: %m", NOBODY);
	expect(!has_cap_ipc_lock(), "still has CAP_IPC_LOCK as uid %d", NOBODY);
	buf = malloc(MEMLOCK_OVER);
	expect(buf, "malloc: %m");
	memset(buf, 0x42, MEMLOCK_OVER);

	/* Control: a quarter of the limit maps and fills. */
	expect(map_and_fill(MEMLOCK_LIMIT / 4, "control: a quarter of the limit"),
	       "cannot use memory within RLIMIT_MEMLOCK");

	fd = umfd(MEMLOCK_OVER);
	expect(fd >= 0, "cannot create the file");
	p = mmap(NULL, MEMLOCK_OVER, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	expect_err(p == MAP_FAILED ? -1 : 0, EAGAIN,
		   "mmap(MAP_SHARED) of 4 MiB with RLIMIT_MEMLOCK 1 MiB");
	close(fd);

	fd = umfd(0);
	expect(fd >= 0, "cannot create the file");
	n = write(fd, buf, MEMLOCK_OVER);
	err = errno;
	tap_diag("write(4 MiB) with RLIMIT_MEMLOCK 1 MiB returned %zd (%s)", n,
		 n < 0 ? errname(err) : (size_t)n < MEMLOCK_OVER ? "short" : "complete");
	expect((n < 0 && err == ENOMEM) || (n >= 0 && (size_t)n <= MEMLOCK_LIMIT),
	       "write of 4 MiB past RLIMIT_MEMLOCK was not refused or cut short at the limit");
	close(fd);

	fd = umfd(0);
	expect(fd >= 0, "cannot create the file");
	expect_err(fallocate(fd, 0, 0, MEMLOCK_OVER), ENOMEM,
		   "fallocate(4 MiB) with RLIMIT_MEMLOCK 1 MiB");
	tap_diag("size after the refused fallocate: %lld", (long long)file_size(fd));
	close(fd);

	/* Nothing leaked: the limit is available again. */
	expect(map_and_fill(MEMLOCK_LIMIT / 2, "control after the refusals"),
	       "charges of refused operations were not released");
	return TAP_PASS;
}

static enum tap_result test_memlock_cap_ipc_lock(void)
{
	unsigned char *buf;
	int fd;

	expect(geteuid() == 0, "must run as root (CAP_IPC_LOCK)");
	expect(set_memlock(MEMLOCK_LIMIT), "cannot set the limit");
	expect(map_and_fill(MEMLOCK_OVER, "root: 4 MiB mapping, 1 MiB limit"),
	       "CAP_IPC_LOCK does not exempt mmap from RLIMIT_MEMLOCK");

	buf = malloc(MEMLOCK_OVER);
	expect(buf, "malloc: %m");
	fill(buf, MEMLOCK_OVER, 0, 71);
	fd = umfd(0);
	expect(fd >= 0, "cannot create the file");
	expect(pwrite_all(fd, buf, MEMLOCK_OVER, 0),
	       "CAP_IPC_LOCK does not exempt write() from RLIMIT_MEMLOCK");
	expect(file_check(fd, 0, MEMLOCK_OVER, 71, "root: 4 MiB written"), "wrong data");
	close(fd);

	fd = umfd(0);
	expect(fd >= 0, "cannot create the file");
	expect(!fallocate(fd, 0, 0, MEMLOCK_OVER),
	       "CAP_IPC_LOCK does not exempt fallocate from RLIMIT_MEMLOCK: %m");
	return TAP_PASS;
}

/* --- GUP --------------------------------------------------------------- */

/*
 * One page of a plain memfd and one of an unmapped memfd, both MAP_SHARED
 * and filled, and a child that shares both mappings (at the same
 * addresses) and waits until the control pipe is closed: the target of
 * remote access.
 */
struct target {
	pid_t pid;
	int ctl;
	unsigned char *plain;
	unsigned char *unmapped;
};

static bool target_start(struct target *t)
{
	int pfd, ufd, ctl[2];
	char c;

	pfd = plain_memfd(page_size);
	ufd = umfd(page_size);
	if (pfd < 0 || ufd < 0)
		return false;
	t->plain = map_rw(pfd, page_size);
	t->unmapped = map_rw(ufd, page_size);
	if (!t->plain || !t->unmapped)
		return false;
	memset(t->plain, PLAIN_BYTE, page_size);
	memset(t->unmapped, UNMAPPED_BYTE, page_size);
	if (pipe(ctl)) {
		tap_diag("pipe: %m");
		return false;
	}
	fflush(stdout);
	t->pid = fork();
	if (t->pid < 0) {
		tap_diag("fork: %m");
		return false;
	}
	if (!t->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ctl[1]);
		while (read(ctl[0], &c, 1) != 0)
			;
		_exit(0);
	}
	close(ctl[0]);
	t->ctl = ctl[1];
	return true;
}

static bool target_stop(struct target *t)
{
	int status;

	close(t->ctl);
	if (waitpid(t->pid, &status, 0) != t->pid) {
		tap_diag("waitpid: %m");
		return false;
	}
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

static bool all_bytes(const unsigned char *p, size_t n, unsigned char c)
{
	while (n--)
		if (*p++ != c)
			return false;
	return true;
}

static enum tap_result test_gup_process_vm_readv(void)
{
	unsigned char buf[256];
	struct iovec local = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct iovec remote = { .iov_len = sizeof(buf) };
	struct target t;
	ssize_t n;

	expect(target_start(&t), "cannot start the target child");
	remote.iov_base = t.plain;
	n = process_vm_readv(t.pid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ENOSYS)
		return skip("process_vm_readv(2) is not available (CONFIG_CROSS_MEMORY_ATTACH=n)");
	expect(n == sizeof(buf) && all_bytes(buf, sizeof(buf), PLAIN_BYTE),
	       "control: process_vm_readv of a plain memfd page returned %zd (%m)", n);

	remote.iov_base = t.unmapped;
	expect_err(process_vm_readv(t.pid, &local, 1, &remote, 1, 0), EFAULT,
		   "process_vm_readv(unmapped memfd page)");
	expect(target_stop(&t), "target child failed");
	return TAP_PASS;
}

static enum tap_result test_gup_ptrace(void)
{
	const long plain_word = (long)0x5a5a5a5a5a5a5a5aULL;
	struct target t;
	int status, err;
	long word;

	expect(target_start(&t), "cannot start the target child");
	expect(!ptrace(PTRACE_ATTACH, t.pid, 0, 0), "PTRACE_ATTACH: %m");
	expect(waitpid(t.pid, &status, 0) == t.pid && WIFSTOPPED(status),
	       "target did not stop after PTRACE_ATTACH (status %#x)", status);

	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, t.pid, t.plain, 0);
	expect(!errno && word == plain_word,
	       "control: PTRACE_PEEKDATA of a plain memfd page gave %#lx (%m)", word);

	/* PEEKDATA returns the word itself: only errno tells failure apart. */
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, t.pid, t.unmapped, 0);
	err = errno;
	expect(err, "PTRACE_PEEKDATA(unmapped memfd page) succeeded and read %#lx", word);
	expect(err == EIO || err == EFAULT,
	       "PTRACE_PEEKDATA(unmapped memfd page) failed with %s, expected EIO or EFAULT",
	       errname(err));
	tap_diag("PTRACE_PEEKDATA of the unmapped page: %s", errname(err));
	expect(ptrace(PTRACE_POKEDATA, t.pid, t.unmapped, 0L) < 0,
	       "PTRACE_POKEDATA(unmapped memfd page) succeeded");
	expect(all_bytes(t.unmapped, page_size, UNMAPPED_BYTE),
	       "PTRACE_POKEDATA changed the unmapped page");
	expect(!ptrace(PTRACE_DETACH, t.pid, 0, 0), "PTRACE_DETACH: %m");
	expect(target_stop(&t), "target child failed");
	return TAP_PASS;
}

static enum tap_result test_gup_proc_mem(void)
{
	unsigned char buf[64];
	struct target t;
	char path[64];
	int mem;

	expect(target_start(&t), "cannot start the target child");
	snprintf(path, sizeof(path), "/proc/%d/mem", t.pid);
	mem = open(path, O_RDWR | O_CLOEXEC);
	expect(mem >= 0, "open(%s): %m", path);

	expect(pread(mem, buf, sizeof(buf), (off_t)(uintptr_t)t.plain) == sizeof(buf) &&
	       all_bytes(buf, sizeof(buf), PLAIN_BYTE),
	       "control: reading a plain memfd page through %s failed: %m", path);

	expect_err(pread(mem, buf, sizeof(buf), (off_t)(uintptr_t)t.unmapped), EIO,
		   "pread(/proc/PID/mem, unmapped memfd page)");
	memset(buf, 0, sizeof(buf));
	expect_err(pwrite(mem, buf, sizeof(buf), (off_t)(uintptr_t)t.unmapped), EIO,
		   "pwrite(/proc/PID/mem, unmapped memfd page)");
	expect(all_bytes(t.unmapped, page_size, UNMAPPED_BYTE),
	       "the unmapped page changed behind our back");
	close(mem);
	expect(target_stop(&t), "target child failed");
	return TAP_PASS;
}

/*
 * Open /proc/@pid/@dir/@name read-only and read the start of the file
 * into @buf. Returns 0 and sets *@n to what read() returned, or the
 * open's errno.
 */
static int reopen_and_read(pid_t pid, const char *dir, const char *name,
			   unsigned char *buf, size_t len, ssize_t *n)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s/%s", (int)pid, dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	*n = read(fd, buf, len);
	close(fd);
	return 0;
}

/*
 * The reopen of an unmapped memfd through /proc/@pid/@dir/@name must fail
 * with ENXIO, as a memfd_secret() file's does; the same reopen of the
 * plain memfd at @plain_name must work and read PLAIN_BYTE, so that the
 * refusal cannot be /proc's own access check failing.
 */
static bool reopen_refused(pid_t pid, const char *dir, const char *plain_name,
			   const char *unmapped_name)
{
	unsigned char buf[256];
	ssize_t n = -1;
	int err;

	err = reopen_and_read(pid, dir, plain_name, buf, sizeof(buf), &n);
	if (err || n != sizeof(buf) || !all_bytes(buf, sizeof(buf), PLAIN_BYTE)) {
		tap_diag("control: reopening /proc/%d/%s/%s: %s, read() %zd",
			 (int)pid, dir, plain_name, err ? errname(err) : "opened", n);
		return false;
	}
	memset(buf, 0, sizeof(buf));
	err = reopen_and_read(pid, dir, unmapped_name, buf, sizeof(buf), &n);
	if (!err) {
		tap_diag("reopening /proc/%d/%s/%s worked; read() returned %zd%s",
			 (int)pid, dir, unmapped_name, n,
			 n > 0 && all_bytes(buf, n, UNMAPPED_BYTE) ? ": the owner's secret" : "");
		return false;
	}
	if (err != ENXIO) {
		tap_diag("reopening /proc/%d/%s/%s failed with %s, expected ENXIO",
			 (int)pid, dir, unmapped_name, errname(err));
		return false;
	}
	return true;
}

/* A plain and an unmapped memfd of one page, filled through write(). */
static bool reopen_files(int *pfd, int *ufd)
{
	unsigned char page[4096];

	*pfd = plain_memfd(page_size);
	*ufd = umfd(page_size);
	if (*pfd < 0 || *ufd < 0)
		return false;
	memset(page, PLAIN_BYTE, sizeof(page));
	if (pwrite(*pfd, page, sizeof(page), 0) != (ssize_t)sizeof(page))
		return false;
	memset(page, UNMAPPED_BYTE, sizeof(page));
	return pwrite(*ufd, page, sizeof(page), 0) == (ssize_t)sizeof(page);
}

/*
 * Another process of the owner's user opens the owner's descriptor
 * through /proc/PID/fd. Both run as nobody and are dumpable, so that
 * /proc's PTRACE_MODE_READ check passes, as it does for the same user
 * under Yama's ptrace_scope=1 (which only restricts attaching): only the
 * file itself can refuse. The other process holds no descriptor of its
 * own, and /proc/PID/mem, process_vm_readv() and ptrace cannot read the
 * pages (the gup_* sub-tests).
 */
static enum tap_result test_reopen_proc_fd(void)
{
	char plain_name[16], unmapped_name[16], c;
	int pfd, ufd, ctl[2], status;
	pid_t owner;
	bool ok;

	expect(!setgroups(0, NULL) && !setresgid(NOBODY, NOBODY, NOBODY) &&
	       !setresuid(NOBODY, NOBODY, NOBODY), "cannot become uid %d: %m", NOBODY);
	/* Changing the uid made this process undumpable; the owner inherits it. */
	expect(!prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE: %m");
	expect(reopen_files(&pfd, &ufd), "cannot create and fill the files: %m");
	expect(!pipe(ctl), "pipe: %m");
	fflush(stdout);
	owner = fork();
	expect(owner >= 0, "fork: %m");
	if (!owner) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ctl[1]);
		while (read(ctl[0], &c, 1) > 0)
			;
		_exit(0);
	}
	/* From here on only the owner holds the files. */
	close(ctl[0]);
	close(pfd);
	close(ufd);
	snprintf(plain_name, sizeof(plain_name), "%d", pfd);
	snprintf(unmapped_name, sizeof(unmapped_name), "%d", ufd);
	ok = reopen_refused(owner, "fd", plain_name, unmapped_name);
	close(ctl[1]);
	expect(waitpid(owner, &status, 0) == owner && WIFEXITED(status) &&
	       !WEXITSTATUS(status), "the owner failed (status %#x)", status);
	return ok ? TAP_PASS : TAP_FAIL;
}

/*
 * The owner itself, as root, reopening its files through /proc/self/fd
 * and its mappings through /proc/self/map_files (which needs
 * CAP_SYS_ADMIN): the unmapped file is refused on both paths.
 */
static enum tap_result test_reopen_self(void)
{
	char plain_name[40], unmapped_name[40];
	unsigned char *plain, *unmapped;
	int pfd, ufd, sfd;

	expect(reopen_files(&pfd, &ufd), "cannot create and fill the files: %m");
	snprintf(plain_name, sizeof(plain_name), "%d", pfd);
	snprintf(unmapped_name, sizeof(unmapped_name), "%d", ufd);
	expect(reopen_refused(getpid(), "fd", plain_name, unmapped_name),
	       "/proc/self/fd");

	plain = map_rw(pfd, page_size);
	unmapped = map_rw(ufd, page_size);
	expect(plain && unmapped, "cannot map the files");
	snprintf(plain_name, sizeof(plain_name), "%lx-%lx", (unsigned long)plain,
		 (unsigned long)plain + page_size);
	snprintf(unmapped_name, sizeof(unmapped_name), "%lx-%lx", (unsigned long)unmapped,
		 (unsigned long)unmapped + page_size);
	expect(reopen_refused(getpid(), "map_files", plain_name, unmapped_name),
	       "/proc/self/map_files");

	/* The same as for a memfd_secret() file, which never could. */
	sfd = syscall(__NR_memfd_secret, O_CLOEXEC);
	expect(sfd >= 0, "memfd_secret: %m");
	snprintf(unmapped_name, sizeof(unmapped_name), "/proc/self/fd/%d", sfd);
	expect_err(open(unmapped_name, O_RDONLY | O_CLOEXEC), ENXIO,
		   "reopening a memfd_secret file through /proc/self/fd");
	return TAP_PASS;
}

static enum tap_result test_gup_vmsplice(void)
{
	unsigned char buf[256], *plain, *unmapped;
	int pfd, ufd, pipefd[2];
	struct iovec iov;
	ssize_t n;

	pfd = plain_memfd(page_size);
	ufd = umfd(2 * page_size);
	expect(pfd >= 0 && ufd >= 0, "cannot create the files");
	plain = map_rw(pfd, page_size);
	unmapped = map_rw(ufd, 2 * page_size);
	expect(plain && unmapped, "cannot map the files");
	expect(!pipe(pipefd), "pipe: %m");

	memset(plain, PLAIN_BYTE, page_size);
	iov = (struct iovec){ .iov_base = plain, .iov_len = sizeof(buf) };
	n = vmsplice(pipefd[1], &iov, 1, 0);
	expect(n == sizeof(buf), "control: vmsplice of a plain memfd page returned %zd (%m)", n);
	expect(read(pipefd[0], buf, sizeof(buf)) == sizeof(buf) &&
	       all_bytes(buf, sizeof(buf), PLAIN_BYTE),
	       "control: the pipe did not return the plain page's bytes");

	/*
	 * The first page is never touched, so only the slow GUP path can see
	 * it; the second is faulted in first, so GUP-fast finds its PTE.
	 */
	memset(unmapped + page_size, UNMAPPED_BYTE, page_size);
	iov = (struct iovec){ .iov_base = unmapped, .iov_len = sizeof(buf) };
	expect_err(vmsplice(pipefd[1], &iov, 1, 0), EFAULT, "vmsplice(untouched unmapped page)");
	iov.iov_base = unmapped + page_size;
	expect_err(vmsplice(pipefd[1], &iov, 1, 0), EFAULT, "vmsplice(faulted unmapped page)");
	return TAP_PASS;
}

/* --- fork -------------------------------------------------------------- */

struct fork_arg {
	int fd;
	unsigned char *p;
	size_t len;
};

static void fork_child(void *arg)
{
	struct fork_arg *a = arg;
	unsigned char *buf = malloc(a->len);

	/* The parent's data, through the inherited mapping and fd. */
	if (!buf || !check(a->p, a->len, 0, 80, "child: inherited mapping"))
		_exit(1);
	if (!pread_all(a->fd, buf, a->len, 0) || !check(buf, a->len, 0, 80, "child: pread"))
		_exit(1);
	/* Our own write through the mapping, seen by read() on the fd. */
	fill(a->p, a->len, 0, 81);
	if (lseek(a->fd, 0, SEEK_SET) != 0 || read(a->fd, buf, a->len) != (ssize_t)a->len ||
	    !check(buf, a->len, 0, 81, "child: read after writing the mapping"))
		_exit(1);
	/* And the other way round for part of the file. */
	fill(buf, a->len / 2, 0, 82);
	if (!pwrite_all(a->fd, buf, a->len / 2, 0))
		_exit(1);
}

static enum tap_result test_fork_shared(void)
{
	struct fork_arg a = { .len = 2 * page_size };
	int got;

	a.fd = umfd(a.len);
	expect(a.fd >= 0, "cannot create the file");
	a.p = map_rw(a.fd, a.len);
	expect(a.p, "cannot map the file");
	fill(a.p, a.len, 0, 80);

	got = in_child(fork_child, &a);
	expect(got == 0, "child failed (%s)", got > 0 ? strsignal(got) : "see above");
	expect(check(a.p, a.len / 2, 0, 82, "parent: mapping after the child's pwrite") &&
	       check(a.p + a.len / 2, a.len / 2, a.len / 2, 81,
		     "parent: mapping after the child's store"),
	       "the parent does not see the child's writes");
	expect(file_check(a.fd, a.len / 2, a.len / 2, 81, "parent: pread"),
	       "the parent's fd does not see the child's writes");
	return TAP_PASS;
}

static enum tap_result test_fork_dontfork(void)
{
	unsigned char *p;
	int fd;

	fd = umfd(page_size);
	expect(fd >= 0, "cannot create the file");
	p = map_rw(fd, page_size);
	expect(p, "cannot map the file");
	p[0] = 1;
	expect(!madvise(p, page_size, MADV_DONTFORK), "madvise(MADV_DONTFORK): %m");
	expect(child_gets_signal(p, SIGSEGV, "child touching a MADV_DONTFORK mapping"),
	       "MADV_DONTFORK mapping reachable in the child");
	p[0] = 2;
	expect(p[0] == 2, "the parent's mapping broke");
	return TAP_PASS;
}

/* --- hibernation ------------------------------------------------------- */

/* 1 if /sys/power/state lists "disk", 0 if not, -1 if it cannot be read. */
static int hibernation_listed(void)
{
	char buf[256], *tok, *save;
	ssize_t n;
	int fd;

	fd = open("/sys/power/state", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, "disk"))
			return 1;
	return 0;
}

static enum tap_result test_hibernation(void)
{
	unsigned char *p;
	int fd, h;

	h = hibernation_listed();
	if (h < 0)
		return skip("/sys/power/state cannot be read (%s): no CONFIG_PM_SLEEP?",
			    errname(errno));
	if (!h)
		return skip("/sys/power/state has no \"disk\" even without an unmapped memfd "
			    "(CONFIG_HIBERNATION=n, nohibernate, lockdown or another secretmem user)");

	fd = umfd(page_size);
	expect(fd >= 0, "cannot create the file");
	expect(hibernation_listed() == 0, "\"disk\" listed while an unmapped memfd is open");
	p = map_rw(fd, page_size);
	expect(p, "cannot map the file");
	p[0] = 1;
	close(fd);
	expect(hibernation_listed() == 0,
	       "\"disk\" listed while an unmapped memfd is still mapped (fd closed)");
	munmap(p, page_size);
	expect(hibernation_listed() == 1, "\"disk\" did not come back after close and munmap");
	return TAP_PASS;
}

/* --- concurrency ------------------------------------------------------- */

struct worker {
	pthread_t thread;
	int fd;
	off_t off;
	size_t len;
	unsigned int base_seed;
	double until;
	unsigned long rounds;
	bool failed;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned char *src = malloc(w->len), *dst = malloc(w->len);
	unsigned int seed;

	if (!src || !dst) {
		w->failed = true;
		return NULL;
	}
	while (now() < w->until) {
		seed = w->base_seed + w->rounds;
		fill(src, w->len, w->off, seed);
		if (pwrite(w->fd, src, w->len, w->off) != (ssize_t)w->len ||
		    pread(w->fd, dst, w->len, w->off) != (ssize_t)w->len ||
		    !check(dst, w->len, w->off, seed, "concurrent pread")) {
			w->failed = true;
			break;
		}
		w->rounds++;
	}
	free(src);
	free(dst);
	return NULL;
}

static enum tap_result test_concurrent_rw(void)
{
	const size_t P = page_size;
	/*
	 * Adjacent regions: each crosses page boundaries, and they share the
	 * page at 4P, so the two threads write the same page at once.
	 */
	struct worker w[2] = {
		{ .off = P - 100, .len = 3 * P + 150, .base_seed = 1000 },
		{ .off = 4 * P + 50, .len = 3 * P + 17, .base_seed = 500000 },
	};
	const size_t size = 8 * P;
	unsigned char *p;
	unsigned int i;
	double until;
	int fd;

	fd = umfd(size);
	expect(fd >= 0, "cannot create the file");
	p = map_shared(fd, size, PROT_READ);
	expect(p, "cannot map the file");
	until = now() + CONCURRENT_SECONDS;
	for (i = 0; i < 2; i++) {
		w[i].fd = fd;
		w[i].until = until;
		expect(!pthread_create(&w[i].thread, NULL, worker_fn, &w[i]),
		       "pthread_create failed");
	}
	for (i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	tap_diag("rounds: %lu and %lu", w[0].rounds, w[1].rounds);
	expect(!w[0].failed && !w[1].failed, "a thread saw wrong data");
	expect(w[0].rounds && w[1].rounds, "a thread made no progress");

	/* Final contents: each region its last pattern, the rest zero. */
	for (i = 0; i < 2; i++)
		expect(check(p + w[i].off, w[i].len, w[i].off,
			     w[i].base_seed + w[i].rounds - 1, "final contents via the mapping"),
		       "region %u: final contents wrong", i);
	expect(check_zero(p, w[0].off, 0, "before region 0") &&
	       check_zero(p + w[0].off + w[0].len, w[1].off - w[0].off - w[0].len,
			  w[0].off + w[0].len, "between the regions") &&
	       check_zero(p + w[1].off + w[1].len, size - w[1].off - w[1].len,
			  w[1].off + w[1].len, "after region 1"),
	       "bytes outside the regions changed");
	return TAP_PASS;
}

static const struct subtest subtests[] = {
	{ "create", "create: MFD_UNMAPPED|MFD_CLOEXEC|MFD_ALLOW_SEALING gives a regular file of size 0",
	  test_create },
	{ "create_hugetlb", "create: MFD_UNMAPPED|MFD_HUGETLB is EINVAL", test_create_hugetlb },
	{ "create_exec", "create: MFD_UNMAPPED|MFD_EXEC is EINVAL", test_create_exec },
	{ "create_noexec_seal", "create: MFD_UNMAPPED|MFD_NOEXEC_SEAL works, sets F_SEAL_EXEC, chmod +x refused",
	  test_create_noexec_seal },
	{ "create_unknown_flag", "create: MFD_UNMAPPED with an unknown flag bit is EINVAL",
	  test_create_unknown_flag },
	{ "mmap_shared_rw", "mmap: MAP_SHARED read/write, coherent with read/pread/write/pwrite",
	  test_mmap_shared_rw },
	{ "mmap_private", "mmap: MAP_PRIVATE is EINVAL", test_mmap_private },
	{ "mmap_exec", "mmap: PROT_EXEC is EPERM", test_mmap_exec },
	{ "mprotect_exec", "mmap: mprotect(PROT_EXEC) of a shared mapping is EACCES",
	  test_mprotect_exec },
	{ "mmap_sigbus", "mmap: touching a page past EOF or truncated away is SIGBUS",
	  test_mmap_sigbus },
	{ "ftruncate_resize", "ftruncate: grows and shrinks any number of times, keeps data",
	  test_ftruncate_resize },
	{ "ftruncate_regrow_zero", "ftruncate: bytes past an unaligned old EOF read 0 after regrowing (read and mapping)",
	  test_ftruncate_regrow_zero },
	{ "fallocate_extend", "fallocate: mode 0 allocates and extends i_size",
	  test_fallocate_extend },
	{ "fallocate_keep_size", "fallocate: KEEP_SIZE allocates without extending",
	  test_fallocate_keep_size },
	{ "fallocate_punch_hole", "fallocate: PUNCH_HOLE|KEEP_SIZE zeroes a mid-page to mid-page range",
	  test_fallocate_punch_hole },
	{ "fallocate_unsupported", "fallocate: ZERO_RANGE, COLLAPSE_RANGE, INSERT_RANGE are EOPNOTSUPP",
	  test_fallocate_unsupported },
	{ "rw_page_crossing", "io: pread/pwrite at offsets and sizes across page boundaries",
	  test_rw_page_crossing },
	{ "rw_vectored", "io: readv/writev/preadv/pwritev with iovecs spanning pages",
	  test_rw_vectored },
	{ "rw_write_past_eof", "io: a write past EOF extends the file, the hole reads 0",
	  test_rw_write_past_eof },
	{ "rw_read_eof", "io: read at or past EOF returns 0, across EOF is short",
	  test_rw_read_eof },
	{ "rw_large", "io: a 1 MiB + 123 byte write and read are exact", test_rw_large },
	{ "lseek", "io: lseek SEEK_SET/SEEK_CUR/SEEK_END and the file position", test_lseek },
	{ "sendfile", "splice: sendfile from an unmapped memfd is EINVAL", test_sendfile },
	{ "splice_read", "splice: splice(unmapped memfd -> pipe) is EINVAL", test_splice_read },
	{ "splice_write", "splice: splice(pipe -> unmapped memfd) is EINVAL", test_splice_write },
	{ "seal_default", "seals: without MFD_ALLOW_SEALING only F_SEAL_SEAL, F_ADD_SEALS is EPERM",
	  test_seal_default },
	{ "seal_shrink", "seals: F_SEAL_SHRINK refuses shrinking, allows growing", test_seal_shrink },
	{ "seal_grow", "seals: F_SEAL_GROW refuses ftruncate/write/fallocate past EOF",
	  test_seal_grow },
	{ "seal_write", "seals: F_SEAL_WRITE (EBUSY while mapped writable, then no writes)",
	  test_seal_write },
	{ "seal_future_write", "seals: F_SEAL_FUTURE_WRITE keeps old mappings, refuses new writers",
	  test_seal_future_write },
	{ "seal_seal", "seals: F_SEAL_SEAL refuses further seals", test_seal_seal },
	{ "memlock_unprivileged", "memlock: without CAP_IPC_LOCK mmap/write/fallocate past RLIMIT_MEMLOCK fail",
	  test_memlock_unprivileged },
	{ "memlock_cap_ipc_lock", "memlock: CAP_IPC_LOCK is exempt from RLIMIT_MEMLOCK",
	  test_memlock_cap_ipc_lock },
	{ "gup_process_vm_readv", "gup: process_vm_readv of an unmapped page is EFAULT",
	  test_gup_process_vm_readv },
	{ "gup_ptrace", "gup: ptrace PEEKDATA/POKEDATA of an unmapped page fail", test_gup_ptrace },
	{ "gup_proc_mem", "gup: /proc/PID/mem access to an unmapped page is EIO",
	  test_gup_proc_mem },
	{ "gup_vmsplice", "gup: vmsplice of an unmapped page is EFAULT", test_gup_vmsplice },
	{ "reopen_proc_fd", "reopen: another process of the same user cannot reopen the file through /proc/PID/fd (ENXIO)",
	  test_reopen_proc_fd },
	{ "reopen_self", "reopen: /proc/self/fd and /proc/self/map_files refuse the file (ENXIO), as for memfd_secret",
	  test_reopen_self },
	{ "fork_shared", "fork: the child shares the fd and the MAP_SHARED mapping",
	  test_fork_shared },
	{ "fork_dontfork", "fork: a MADV_DONTFORK mapping is SIGSEGV in the child",
	  test_fork_dontfork },
	{ "hibernation", "hibernation: \"disk\" is not offered while an unmapped memfd exists",
	  test_hibernation },
	{ "concurrent_rw", "concurrency: two threads pwrite/pread adjacent page-crossing regions",
	  test_concurrent_rw },
};

/* Run @st in a child process and turn how it ended into a result. */
/* Does this kernel carry the secmem series (the unmapped allocator)? */
static bool secmem_kernel(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "unmapped_", 9);
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	const struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	unsigned int i, planned;
	int fd;

	planned = subtest_select(subtests, ARRAY_SIZE(subtests), argc, argv);

	page_size = sysconf(_SC_PAGESIZE);

	/*
	 * Without the flag the kernel says EINVAL. That is a skip on a kernel
	 * without the secmem series, and a failure on one with it.
	 */
	fd = sys_memfd_create("memfd_unmapped_test", TEST_MFD_FLAG);
	if (fd < 0 && errno == EINVAL && !secmem_kernel())
		tap_skip_all("memfd_create(MFD_UNMAPPED) is EINVAL: kernel without the secmem series");
	if (fd < 0)
		tap_bail("memfd_create(MFD_UNMAPPED): %m");
	close(fd);

	tap_plan(planned);
	/* Unmapped pages are charged to RLIMIT_MEMLOCK: no limit but ours. */
	if (setrlimit(RLIMIT_MEMLOCK, &unlimited))
		tap_diag("setrlimit(RLIMIT_MEMLOCK, unlimited): %m");
	tap_diag("page size %zu, memfd flag under test %#x", page_size, TEST_MFD_FLAG);
	for (i = 0; i < ARRAY_SIZE(subtests); i++) {
		enum tap_result res;

		if (!subtest_selected(&subtests[i], argc, argv))
			continue;
		res = subtest_run(&subtests[i], SUBTEST_TIMEOUT);
		tap_report(res, subtests[i].name, skip_reason);
	}
	return tap_finish();
}
