// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's memfd selftest, tools/testing/selftests/memfd/memfd_test.c,
 * run on MFD_UNMAPPED memfds: memfd_test.c is compiled as it is, included
 * below with its main() renamed, and linked with memfd_unmapped_common.c,
 * whose sys_memfd_create() ORs MFD_UNMAPPED into every memfd_create() call.
 * memfd_test.c has no per-test selection, so this file runs the test_*()
 * functions that apply, one per child process (memfd_test aborts on the
 * first failed assertion), and reports each as a TAP result.
 *
 * Run (memfd_test.c's functions, in its order):
 *
 *   test_create            flag and name validation, MFD_UNMAPPED added
 *   test_basic             F_ADD_SEALS/F_GET_SEALS, MFD_ALLOW_SEALING
 *   test_seal_write        [reopen] F_SEAL_WRITE
 *   test_seal_shrink       F_SEAL_SHRINK
 *   test_seal_grow         [reopen] F_SEAL_GROW
 *   test_seal_resize       F_SEAL_SHRINK|F_SEAL_GROW
 *   test_share_dup         seals shared by dup()ed fds
 *   test_share_open        [reopen] seals shared by a re-open()ed fd
 *   test_share_fork        seals and a forked child
 *   and test_share_{dup,open,fork} again with an idle thread sharing the
 *   file table, as memfd_test's main() does.
 *
 * [reopen]: the test re-opens the memfd through /proc/self/fd/N
 * (mfd_assert_shrink() with O_TRUNC, mfd_assert_reopen_fd(),
 * mfd_assert_open()). An MFD_UNMAPPED memfd refuses that open (ENXIO, as
 * memfd_secret() does; memfd_unmapped_test's reopen_* sub-tests assert
 * it, and its seal_* sub-tests cover these seals): the refusal is probed
 * once and these tests are reported as SKIP with the reason, not run to
 * a certain abort(). test_seal_shrink and
 * test_seal_resize also call mfd_fail_open() (O_TRUNC must fail under
 * F_SEAL_SHRINK); without re-open support that assertion holds for the
 * wrong reason, the ftruncate() assertions next to it still hold for the
 * right one.
 *
 * MAP_PRIVATE: mfd_assert_read() and mfd_assert_mmap_private() map the
 * memfd MAP_PRIVATE to show that a mapping that cannot write the file is
 * allowed. An MFD_UNMAPPED memfd refuses MAP_PRIVATE with EINVAL, so every
 * mmap() call in memfd_test.c goes through unmapped_mmap() below: for
 * MAP_PRIVATE it checks that the kernel refuses it with EINVAL (abort()
 * otherwise) and then maps the same range read-only and MAP_SHARED, which
 * is what "a mapping that cannot write the file" is for this memfd. The
 * callers that remain (mfd_assert_read(): map, unmap) only need that
 * mapping to be allowed, which it must be under every seal.
 *
 * Not run, and why:
 *
 *   test_exec_seal, test_exec_no_seal
 *       create with MFD_EXEC, which MFD_UNMAPPED refuses (EINVAL) by design:
 *       unmapped memory is never executable (noexec mount).
 *   test_noexec_seal
 *       asserts file mode 0666 (shmem's 0777 minus x) after MFD_NOEXEC_SEAL;
 *       an unmapped memfd is an anonymous inode of mode 0600 and has no x
 *       bits to seal. F_SEAL_EXEC being set by MFD_NOEXEC_SEAL, and chmod()
 *       of x bits refused under it, are in memfd_unmapped_test
 *       (create_noexec_seal).
 *   test_seal_future_write
 *       mfd_assert_fork_private_write() writes a MAP_PRIVATE mapping and
 *       checks copy-on-write across fork(): no MAP_PRIVATE, nothing to
 *       substitute; it also re-opens the fd. memfd_unmapped_test
 *       seal_future_write covers the seal.
 *   test_sysctl_simple, test_sysctl_nested
 *       vm.memfd_noexec policy (MFD_EXEC/MFD_NOEXEC_SEAL defaults per pid
 *       namespace); it does not apply to MFD_UNMAPPED, which is never
 *       executable and skips the policy.
 *   test_share_mmap (both variants)
 *       shows that a read-only MAP_PRIVATE mapping does not block
 *       F_SEAL_WRITE; the read-only substitute, MAP_SHARED from an O_RDWR
 *       fd, is VM_MAYWRITE and does block it (on shmem as well), so the
 *       test cannot pass for a reason that has anything to do with
 *       unmapped memory. memfd_unmapped_test seal_write covers EBUSY
 *       while writably mapped.
 *   "hugetlbfs" mode
 *       MFD_UNMAPPED|MFD_HUGETLB is EINVAL.
 *
 * The unmodified memfd_test is built and run as before, from the same
 * source, as the guest test memfd_test.
 */
#define _GNU_SOURCE
/* As in memfd_test.c: before <sys/mman.h>, whose MFD_* then stay out. */
#include <linux/memfd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* Every mmap() in memfd_test.c; see above. */
static void *unmapped_mmap(void *addr, size_t len, int prot, int flags, int fd,
			   off_t off);
#define mmap unmapped_mmap
#define main memfd_test_main
/*
 * Called through a pointer, test_create() is compiled on its own, and GCC
 * then sees mfd_fail_new(NULL, ...) print its name with "%s" on the path
 * where the kernel wrongly accepted a NULL name. Only that path, harmless.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-overflow"
#include "memfd_test.c"
#pragma GCC diagnostic pop
#undef main
#undef mmap

#include "tap.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void *unmapped_mmap(void *addr, size_t len, int prot, int flags, int fd,
			   off_t off)
{
	void *p;

	if (!(flags & MAP_PRIVATE) || (flags & MAP_ANONYMOUS))
		return mmap(addr, len, prot, flags, fd, off);

	p = mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		printf("mmap(MAP_PRIVATE) of an MFD_UNMAPPED memfd succeeded, expected EINVAL\n");
		abort();
	}
	if (errno != EINVAL) {
		printf("mmap(MAP_PRIVATE) of an MFD_UNMAPPED memfd failed with %m, expected EINVAL\n");
		abort();
	}
	printf("%s	MAP_PRIVATE refused (EINVAL): mapping read-only MAP_SHARED instead\n",
	       memfd_str);
	return mmap(addr, len, PROT_READ, (flags & ~MAP_PRIVATE) | MAP_SHARED, fd, off);
}

static void share_dup(void)
{
	test_share_dup("SHARE-DUP", "");
}

static void share_open(void)
{
	test_share_open("SHARE-OPEN", "");
}

static void share_fork(void)
{
	test_share_fork("SHARE-FORK", "");
}

/* As memfd_test's main(): an idle thread shares the file table. */
static void share_dup_ft(void)
{
	pid_t pid = spawn_idle_thread(CLONE_FILES | CLONE_FS | CLONE_VM);

	test_share_dup("SHARE-DUP", SHARED_FT_STR);
	join_idle_thread(pid);
}

static void share_open_ft(void)
{
	pid_t pid = spawn_idle_thread(CLONE_FILES | CLONE_FS | CLONE_VM);

	test_share_open("SHARE-OPEN", SHARED_FT_STR);
	join_idle_thread(pid);
}

static void share_fork_ft(void)
{
	pid_t pid = spawn_idle_thread(CLONE_FILES | CLONE_FS | CLONE_VM);

	test_share_fork("SHARE-FORK", SHARED_FT_STR);
	join_idle_thread(pid);
}

static const struct ksft_case {
	const char *name;
	void (*run)(void);
	bool needs_reopen;
} cases[] = {
	{ "memfd_test:test_create", test_create, false },
	{ "memfd_test:test_basic", test_basic, false },
	{ "memfd_test:test_seal_write", test_seal_write, true },
	{ "memfd_test:test_seal_shrink", test_seal_shrink, false },
	{ "memfd_test:test_seal_grow", test_seal_grow, true },
	{ "memfd_test:test_seal_resize", test_seal_resize, false },
	{ "memfd_test:test_share_dup", share_dup, false },
	{ "memfd_test:test_share_open", share_open, true },
	{ "memfd_test:test_share_fork", share_fork, false },
	{ "memfd_test:test_share_dup (shared file-table)", share_dup_ft, false },
	{ "memfd_test:test_share_open (shared file-table)", share_open_ft, true },
	{ "memfd_test:test_share_fork (shared file-table)", share_fork_ft, false },
};

/*
 * Can an MFD_UNMAPPED memfd be re-opened through /proc/self/fd? Returns 0
 * if so, else the errno of the refusal.
 */
static int reopen_errno(void)
{
	char path[64];
	int fd, fd2, err = 0;

	fd = sys_memfd_create("reopen-probe", MFD_CLOEXEC);
	if (fd < 0)
		return errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fd2 = open(path, O_RDWR | O_CLOEXEC);
	if (fd2 < 0)
		err = errno;
	else
		close(fd2);
	close(fd);
	return err;
}

/* memfd_test's functions abort() on failure: run each in a child. */
static enum tap_result run_case(const struct ksft_case *c)
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
		c->run();
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		tap_diag("waitpid: %m");
		return TAP_FAIL;
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return TAP_PASS;
	if (WIFSIGNALED(status))
		tap_diag("%s: killed by signal %d (%s)", c->name, WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		tap_diag("%s: exited with status %d", c->name, WEXITSTATUS(status));
	return TAP_FAIL;
}

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

int main(void)
{
	const struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	char reason[128];
	unsigned int i;
	int fd, reopen;

	/* sys_memfd_create() adds MFD_UNMAPPED. */
	fd = sys_memfd_create("probe", 0);
	if (fd < 0 && errno == EINVAL && !secmem_kernel())
		tap_skip_all("memfd_create(MFD_UNMAPPED) is EINVAL: kernel without the secmem series");
	if (fd < 0)
		tap_bail("memfd_create(MFD_UNMAPPED): %m");
	close(fd);

	tap_plan(ARRAY_SIZE(cases));
	/* Unmapped pages are charged to RLIMIT_MEMLOCK. */
	if (setrlimit(RLIMIT_MEMLOCK, &unlimited))
		tap_diag("setrlimit(RLIMIT_MEMLOCK, unlimited): %m");
	memfd_str = "memfd-unmapped:";
	reopen = reopen_errno();
	snprintf(reason, sizeof(reason),
		 "needs a re-open through /proc/self/fd, which MFD_UNMAPPED refuses (%s)",
		 strerrorname_np(reopen) ? strerrorname_np(reopen) : "?");
	tap_diag("re-open through /proc/self/fd: %s", reopen ? reason : "works");

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (cases[i].needs_reopen && reopen) {
			tap_report(TAP_SKIP, cases[i].name, reason);
			continue;
		}
		tap_report(run_case(&cases[i]), cases[i].name, NULL);
	}
	return tap_finish();
}
