// SPDX-License-Identifier: GPL-2.0
/*
 * memfd_secret(2) behaviour on the secmem guest kernel.
 *
 * Modelled on the kernel's tools/testing/selftests/mm/memfd_secret.c, and
 * extended with what the secmem series must preserve: the secret is not
 * reachable through any interface that reads another mapping (read(2) on
 * the fd, process_vm_readv, ptrace, /proc/pid/mem, vmsplice) nor through
 * the kernel's direct map (/proc/kcore), and its memory is charged against
 * RLIMIT_MEMLOCK exactly as this 6.12 tree does it.
 *
 * Each sub-test runs in a process of its own: a crash becomes that
 * sub-test's failure, and every resource it held (mappings, the memlock
 * charge, helper children) is released by the kernel when it exits, so
 * failure paths simply return.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "subtest.h"
#include "kcore.h"

#ifndef __NR_memfd_secret
#error "__NR_memfd_secret is missing: build with KHDR= pointing at the guest kernel's uapi headers"
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* A sub-test that has not finished after this long is reported as hung. */
#define SUBTEST_TIMEOUT		240

/* Bytes the secret and the control memory are filled with. */
#define SECRET_BYTE		0xa5
#define PLAIN_BYTE		0x5a

/* RLIMIT_MEMLOCK used by the memlock sub-test, in pages. */
#define MEMLOCK_PAGES		4
/*
 * A uid nothing else in the guest runs as: secretmem charges the user's
 * locked_vm, and a fresh user_struct starts that count at zero.
 */
#define MEMLOCK_UID		4242

#define KCORE_PATTERN_LEN	32

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

static int memfd_secret(unsigned int flags)
{
	return syscall(__NR_memfd_secret, flags);
}

static const char *errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "unknown errno";
}

/*
 * True if a call returning @ret failed with @want. Otherwise says what
 * happened instead.
 */
static bool refused(long ret, int want, const char *what)
{
	if (ret >= 0) {
		tap_diag("%s succeeded (returned %ld), expected %s", what, ret,
			 errname(want));
		return false;
	}
	if (errno != want) {
		tap_diag("%s failed with %s, expected %s", what, errname(errno),
			 errname(want));
		return false;
	}
	return true;
}

/* A memfd_secret file of @pages pages, or -1 with a diagnostic. */
static int secret_create(size_t pages)
{
	int fd = memfd_secret(0);

	if (fd < 0) {
		tap_diag("memfd_secret(0): %m");
		return -1;
	}
	if (ftruncate(fd, pages * page_size)) {
		tap_diag("ftruncate(%zu pages): %m", pages);
		close(fd);
		return -1;
	}
	return fd;
}

static void *secret_map(int fd, size_t pages)
{
	void *p = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);

	if (p == MAP_FAILED) {
		tap_diag("mmap(MAP_SHARED, %zu pages): %m", pages);
		return NULL;
	}
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- sub-tests --------------------------------------------------------- */

static enum tap_result test_create(void)
{
	int fd, flags;

	fd = memfd_secret(0);
	expect(fd >= 0, "memfd_secret(0): %m");
	flags = fcntl(fd, F_GETFD);
	expect(flags >= 0 && !(flags & FD_CLOEXEC),
	       "memfd_secret(0) fd flags %#x, want no FD_CLOEXEC", flags);
	close(fd);

	fd = memfd_secret(O_CLOEXEC);
	expect(fd >= 0, "memfd_secret(O_CLOEXEC): %m");
	flags = fcntl(fd, F_GETFD);
	expect(flags >= 0 && (flags & FD_CLOEXEC),
	       "memfd_secret(O_CLOEXEC) fd flags %#x, want FD_CLOEXEC", flags);
	close(fd);

	/* No mode or flag other than O_CLOEXEC is defined. */
	if (!refused(memfd_secret(1), EINVAL, "memfd_secret(1)"))
		return TAP_FAIL;
	return TAP_PASS;
}

static enum tap_result test_map_shared(void)
{
	const size_t pages = 4;
	unsigned char *a, *b;
	size_t i;
	int fd;

	fd = secret_create(pages);
	expect(fd >= 0, "cannot create the secret file");
	a = secret_map(fd, pages);
	b = secret_map(fd, pages);
	expect(a && b, "cannot map the secret file twice");

	for (i = 0; i < pages * page_size; i++)
		expect(!a[i], "fresh secret memory not zero at byte %zu: %#x", i, a[i]);
	for (i = 0; i < pages * page_size; i++)
		a[i] = (unsigned char)(i * 7 + i / page_size);
	for (i = 0; i < pages * page_size; i++)
		expect(b[i] == (unsigned char)(i * 7 + i / page_size),
		       "second mapping differs at byte %zu", i);

	/* The pages belong to the file, not to the mapping. */
	munmap(a, pages * page_size);
	munmap(b, pages * page_size);
	a = secret_map(fd, pages);
	expect(a, "cannot map the secret file again");
	for (i = 0; i < pages * page_size; i++)
		expect(a[i] == (unsigned char)(i * 7 + i / page_size),
		       "contents lost across munmap at byte %zu", i);
	return TAP_PASS;
}

static enum tap_result test_map_private(void)
{
	void *p;
	int fd;

	fd = secret_create(1);
	expect(fd >= 0, "cannot create the secret file");
	p = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (!refused(p == MAP_FAILED ? -1 : 0, EINVAL, "mmap(MAP_PRIVATE)"))
		return TAP_FAIL;
	return TAP_PASS;
}

static enum tap_result test_size_once(void)
{
	int fd;

	fd = secret_create(1);
	expect(fd >= 0, "cannot create the secret file");
	if (!refused(ftruncate(fd, 2 * page_size), EINVAL, "second ftruncate()"))
		return TAP_FAIL;
	return TAP_PASS;
}

static enum tap_result test_file_io(void)
{
	char buf[64] = { 0 };
	bool ok = true;
	int fd;

	fd = secret_create(1);
	expect(fd >= 0, "cannot create the secret file");
	/*
	 * secretmem has no read/write methods: vfs_read/vfs_write see no
	 * FMODE_CAN_READ/WRITE. A pseudo file never gets FMODE_PREAD/PWRITE,
	 * so the positional calls stop even earlier.
	 */
	ok &= refused(read(fd, buf, sizeof(buf)), EINVAL, "read()");
	ok &= refused(write(fd, buf, sizeof(buf)), EINVAL, "write()");
	ok &= refused(pread(fd, buf, sizeof(buf), 0), ESPIPE, "pread()");
	ok &= refused(pwrite(fd, buf, sizeof(buf), 0), ESPIPE, "pwrite()");
	return ok ? TAP_PASS : TAP_FAIL;
}

/*
 * Shared between the memlock sub-test and the child it lets run into the
 * limit: how far the child got before it was killed. Accessed through a
 * volatile pointer so that every update is stored when it happens.
 */
struct memlock_progress {
	int mapped;		/* 1: mmap() of twice the limit succeeded */
	int map_errno;
	size_t faulted;		/* pages written successfully */
};

static void memlock_child(volatile struct memlock_progress *pr, uid_t uid)
{
	const struct rlimit lim = {
		.rlim_cur = MEMLOCK_PAGES * page_size,
		.rlim_max = MEMLOCK_PAGES * page_size,
	};
	volatile unsigned char *p;
	size_t i;
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &lim)) {
		tap_diag("setrlimit(RLIMIT_MEMLOCK): %m");
		_exit(KSFT_FAIL);
	}
	if (uid && setuid(uid)) {
		tap_diag("setuid(%u): %m", uid);
		_exit(KSFT_FAIL);
	}
	fd = secret_create(2 * MEMLOCK_PAGES);
	if (fd < 0)
		_exit(KSFT_FAIL);
	p = mmap(NULL, 2 * MEMLOCK_PAGES * page_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		pr->map_errno = errno;
		_exit(KSFT_PASS);
	}
	pr->mapped = 1;
	for (i = 0; i < 2 * MEMLOCK_PAGES; i++) {
		p[i * page_size] = SECRET_BYTE;
		pr->faulted = i + 1;
	}
	_exit(KSFT_PASS);
}

/*
 * Run a child that maps twice its RLIMIT_MEMLOCK of secret memory and
 * writes one page after the other. Debian's 6.12 secretmem charges a page
 * to the owner's locked_vm when it is faulted in, against the faulting
 * task's RLIMIT_MEMLOCK, and answers a fault past the limit with SIGBUS;
 * mmap() itself is not charged. CAP_IPC_LOCK does not exempt root.
 */
static bool memlock_run(uid_t uid)
{
	volatile struct memlock_progress *pr;
	int status;
	pid_t pid;

	pr = mmap(NULL, sizeof(*pr), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pr == MAP_FAILED) {
		tap_diag("mmap(MAP_ANONYMOUS): %m");
		return false;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_diag("fork: %m");
		return false;
	}
	if (!pid)
		memlock_child(pr, uid);
	if (waitpid(pid, &status, 0) != pid) {
		tap_diag("waitpid: %m");
		return false;
	}

	tap_diag("uid %u, limit %d pages: mmap of %d pages %s, %zu pages faulted, child %s %d",
		 uid, MEMLOCK_PAGES, 2 * MEMLOCK_PAGES,
		 pr->mapped ? "succeeded" : errname(pr->map_errno), pr->faulted,
		 WIFSIGNALED(status) ? "killed by signal" : "exited with",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_FAIL)
		return false;
	if (!pr->mapped) {
		tap_diag("mmap() past RLIMIT_MEMLOCK failed (%s): this tree charges at fault time",
			 errname(pr->map_errno));
		return false;
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGBUS) {
		tap_diag("expected SIGBUS on the first fault past RLIMIT_MEMLOCK");
		return false;
	}
	if (pr->faulted != MEMLOCK_PAGES) {
		tap_diag("expected exactly %d pages to fault in before SIGBUS", MEMLOCK_PAGES);
		return false;
	}
	return true;
}

static enum tap_result test_memlock(void)
{
	bool ok = true;

	ok &= memlock_run(MEMLOCK_UID);
	/* Root has CAP_IPC_LOCK, which secretmem does not honour. */
	ok &= memlock_run(0);
	return ok ? TAP_PASS : TAP_FAIL;
}

/*
 * A child holding one page of secret memory and one page of ordinary
 * memory, filled with SECRET_BYTE and PLAIN_BYTE, that waits until the
 * control pipe is closed. Used as the target of remote access.
 */
struct target {
	pid_t pid;
	int ctl;
	uintptr_t secret;
	uintptr_t plain;
};

static bool target_start(struct target *t)
{
	int addr_pipe[2], ctl_pipe[2];
	uintptr_t addr[2];
	char c;

	if (pipe(addr_pipe) || pipe(ctl_pipe)) {
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
		unsigned char *secret, *plain;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(addr_pipe[0]);
		close(ctl_pipe[1]);
		fd = secret_create(1);
		if (fd < 0)
			_exit(KSFT_FAIL);
		secret = secret_map(fd, 1);
		plain = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!secret || plain == MAP_FAILED)
			_exit(KSFT_FAIL);
		memset(secret, SECRET_BYTE, page_size);
		memset(plain, PLAIN_BYTE, page_size);
		addr[0] = (uintptr_t)secret;
		addr[1] = (uintptr_t)plain;
		if (write(addr_pipe[1], addr, sizeof(addr)) != sizeof(addr))
			_exit(KSFT_FAIL);
		/* EOF on the control pipe: the test is done with us. */
		while (read(ctl_pipe[0], &c, 1) > 0)
			;
		_exit(KSFT_PASS);
	}
	close(addr_pipe[1]);
	close(ctl_pipe[0]);
	t->ctl = ctl_pipe[1];
	if (read(addr_pipe[0], addr, sizeof(addr)) != sizeof(addr)) {
		tap_diag("target child did not start");
		return false;
	}
	close(addr_pipe[0]);
	t->secret = addr[0];
	t->plain = addr[1];
	return true;
}

static bool target_stop(struct target *t)
{
	int status;

	close(t->ctl);
	if (waitpid(t->pid, &status, 0) != t->pid) {
		tap_diag("waitpid(target): %m");
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tap_diag("target child ended with status %#x", status);
		return false;
	}
	return true;
}

static bool all_bytes(const unsigned char *p, size_t n, unsigned char c)
{
	while (n--)
		if (*p++ != c)
			return false;
	return true;
}

static enum tap_result test_process_vm_readv(void)
{
	unsigned char buf[64];
	struct iovec local = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct iovec remote = { .iov_len = sizeof(buf) };
	struct target t;
	ssize_t n;

	expect(target_start(&t), "cannot start the target child");

	/* Control: the same call works on ordinary memory. */
	remote.iov_base = (void *)t.plain;
	n = process_vm_readv(t.pid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ENOSYS)
		return skip("process_vm_readv(2) is not available (CONFIG_CROSS_MEMORY_ATTACH=n)");
	expect(n == sizeof(buf) && all_bytes(buf, sizeof(buf), PLAIN_BYTE),
	       "control: process_vm_readv of ordinary memory returned %zd (%m)", n);

	remote.iov_base = (void *)t.secret;
	if (!refused(process_vm_readv(t.pid, &local, 1, &remote, 1, 0), EFAULT,
		     "process_vm_readv(secret)"))
		return TAP_FAIL;
	expect(target_stop(&t), "target child failed");
	return TAP_PASS;
}

static enum tap_result test_ptrace(void)
{
	const long plain_word = (long)0x5a5a5a5a5a5a5a5aULL;
	struct target t;
	int status;
	long word;

	expect(target_start(&t), "cannot start the target child");
	expect(!ptrace(PTRACE_ATTACH, t.pid, 0, 0), "PTRACE_ATTACH: %m");
	expect(waitpid(t.pid, &status, 0) == t.pid && WIFSTOPPED(status),
	       "target did not stop after PTRACE_ATTACH (status %#x)", status);

	/* Control: PEEKDATA reads ordinary memory. */
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, t.pid, (void *)t.plain, 0);
	expect(!errno && word == plain_word,
	       "control: PTRACE_PEEKDATA of ordinary memory gave %#lx (%m)", word);

	/* PEEKDATA returns the word itself: only errno tells failure apart. */
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, t.pid, (void *)t.secret, 0);
	expect(errno, "PTRACE_PEEKDATA(secret) succeeded and read %#lx", word);
	expect(errno == EIO, "PTRACE_PEEKDATA(secret) failed with %s, expected EIO",
	       errname(errno));
	expect(!ptrace(PTRACE_DETACH, t.pid, 0, 0), "PTRACE_DETACH: %m");
	expect(target_stop(&t), "target child failed");
	return TAP_PASS;
}

static enum tap_result test_proc_mem(void)
{
	unsigned char buf[64], *secret, *plain;
	bool ok = true;
	int fd, mem;

	fd = secret_create(1);
	expect(fd >= 0, "cannot create the secret file");
	secret = secret_map(fd, 1);
	plain = malloc(page_size);
	expect(secret && plain, "cannot allocate memory");
	memset(secret, SECRET_BYTE, page_size);
	memset(plain, PLAIN_BYTE, page_size);

	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	expect(mem >= 0, "open(/proc/self/mem): %m");

	/* Control: /proc/self/mem reads ordinary memory. */
	expect(pread(mem, buf, sizeof(buf), (off_t)(uintptr_t)plain) == sizeof(buf) &&
	       all_bytes(buf, sizeof(buf), PLAIN_BYTE),
	       "control: reading ordinary memory through /proc/self/mem failed: %m");

	ok &= refused(pread(mem, buf, sizeof(buf), (off_t)(uintptr_t)secret), EIO,
		      "pread(/proc/self/mem, secret)");
	ok &= refused(pwrite(mem, buf, sizeof(buf), (off_t)(uintptr_t)secret), EIO,
		      "pwrite(/proc/self/mem, secret)");
	expect(all_bytes(secret, page_size, SECRET_BYTE),
	       "secret memory changed behind our back");
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_vmsplice(void)
{
	unsigned char *secret;
	struct iovec iov;
	int pipefd[2], fd;
	bool ok = true;

	fd = secret_create(2);
	expect(fd >= 0, "cannot create the secret file");
	secret = secret_map(fd, 2);
	expect(secret, "cannot map the secret file");
	expect(!pipe(pipefd), "pipe: %m");

	/*
	 * The first page is never touched, so only the slow GUP path can see
	 * it; the second is faulted in first, so GUP-fast finds its PTE.
	 */
	memset(secret + page_size, SECRET_BYTE, page_size);
	iov = (struct iovec){ .iov_base = secret, .iov_len = page_size };
	ok &= refused(vmsplice(pipefd[1], &iov, 1, 0), EFAULT, "vmsplice(fresh secret page)");
	iov.iov_base = secret + page_size;
	ok &= refused(vmsplice(pipefd[1], &iov, 1, 0), EFAULT, "vmsplice(faulted secret page)");
	return ok ? TAP_PASS : TAP_FAIL;
}

static enum tap_result test_kcore(void)
{
	volatile unsigned char *secret;
	unsigned char *plain;
	struct kcore kc;
	uint64_t paddr;
	double t0, t1;
	size_t i;
	int fd, ret;

	ret = kcore_open(&kc);
	if (ret == -ENOENT)
		return skip("no /proc/kcore (CONFIG_PROC_KCORE=n)");
	expect(!ret, "cannot use /proc/kcore: %s", strerror(-ret));
	tap_diag("/proc/kcore: %u RAM segment(s), %llu MiB", kc.nr_segs,
		 (unsigned long long)(kcore_ram_bytes(&kc) >> 20));

	fd = secret_create(1);
	expect(fd >= 0, "cannot create the secret file");
	secret = secret_map(fd, 1);
	expect(secret, "cannot map the secret file");
	/*
	 * The kernel writes the random bytes straight into the secret page, so
	 * no copy of the pattern exists in ordinary memory yet.
	 */
	expect(getrandom((void *)secret, KCORE_PATTERN_LEN, 0) == KCORE_PATTERN_LEN,
	       "getrandom: %m");

	t0 = now();
	ret = kcore_find(&kc, secret, KCORE_PATTERN_LEN, &paddr);
	t1 = now();
	expect(ret >= 0, "scanning /proc/kcore: %s", strerror(-ret));
	expect(ret == 0, "the secret was found in /proc/kcore at physical address %#llx",
	       (unsigned long long)paddr);
	tap_diag("secret pattern absent from kernel RAM (scan took %.1f s)", t1 - t0);

	/* Control: the same bytes in ordinary memory must be found. */
	plain = malloc(page_size);
	expect(plain, "malloc: %m");
	for (i = 0; i < KCORE_PATTERN_LEN; i++)
		plain[i] = secret[i];
	t0 = now();
	ret = kcore_find(&kc, secret, KCORE_PATTERN_LEN, &paddr);
	t1 = now();
	expect(ret >= 0, "scanning /proc/kcore: %s", strerror(-ret));
	expect(ret == 1, "control: a copy in ordinary memory was not found, the scan is blind");
	tap_diag("control copy found at physical address %#llx (scan took %.1f s)",
		 (unsigned long long)paddr, t1 - t0);
	kcore_close(&kc);
	return TAP_PASS;
}

static const struct subtest subtests[] = {
	{ "create", "memfd_secret() creates a file, honours O_CLOEXEC, rejects unknown flags",
	  test_create },
	{ "map_shared", "MAP_SHARED mapping is zero-filled, writable and shared",
	  test_map_shared },
	{ "map_private", "MAP_PRIVATE mapping is refused", test_map_private },
	{ "size_once", "size can be set only once", test_size_once },
	{ "file_io", "read/write/pread/pwrite on the fd are refused", test_file_io },
	{ "memlock", "faults past RLIMIT_MEMLOCK get SIGBUS, root included", test_memlock },
	{ "process_vm_readv", "process_vm_readv of secret memory fails",
	  test_process_vm_readv },
	{ "ptrace", "ptrace PEEKDATA of a child's secret memory fails", test_ptrace },
	{ "proc_mem", "/proc/self/mem access to secret memory fails", test_proc_mem },
	{ "vmsplice", "vmsplice of secret memory fails", test_vmsplice },
	{ "kcore", "secret is absent from /proc/kcore, a plain copy is present", test_kcore },
};

/* Run @st in a child process and turn how it ended into a result. */
int main(int argc, char **argv)
{
	unsigned int i, planned;
	struct rlimit lim;
	int fd;

	planned = subtest_select(subtests, ARRAY_SIZE(subtests), argc, argv);

	page_size = sysconf(_SC_PAGESIZE);

	fd = memfd_secret(0);
	if (fd < 0 && errno == ENOSYS)
		tap_skip_all("memfd_secret(2) is not available (CONFIG_SECRETMEM=n or secretmem.enable=0)");
	if (fd < 0)
		tap_bail("memfd_secret(0): %m");
	close(fd);

	tap_plan(planned);
	if (!getrlimit(RLIMIT_MEMLOCK, &lim))
		tap_diag("page size %zu, RLIMIT_MEMLOCK soft %lld hard %lld", page_size,
			 (long long)lim.rlim_cur, (long long)lim.rlim_max);
	for (i = 0; i < ARRAY_SIZE(subtests); i++) {
		enum tap_result res;

		if (!subtest_selected(&subtests[i], argc, argv))
			continue;
		res = subtest_run(&subtests[i], SUBTEST_TIMEOUT);
		tap_report(res, subtests[i].name, skip_reason);
	}
	return tap_finish();
}
