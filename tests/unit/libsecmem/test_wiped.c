// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * secmem_wiped() and secmem_fd_wiped(): secret memory after the kernel
 * wiped it for hibernation (/sys/kernel/mm/unmapped/hibernation = wipe).
 *
 * No kernel that this suite runs on outside the guest can wipe, so
 * test_wipe() does what the kernel does to every secret file before it
 * hibernates: every access through the file's mappings raises SIGBUS from
 * then on, whatever mprotect() is done later (each mapping is replaced,
 * with its protection, by one of an empty file: every page lies beyond
 * its end), and allocating fallocate() on the file fails with EIO.  The
 * suite links libsecmem statically, so the fallocate() below is the one
 * libsecmem calls; it answers EIO for the files test_wipe() took and asks
 * the kernel for any other.  Files made afterwards are intact, as on the
 * real kernel.  Only files on the secretmem file system are wiped, as by
 * the kernel: none of the mlock backend's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#ifndef SECRETMEM_MAGIC
#define SECRETMEM_MAGIC 0x5345434d	/* "SECM" */
#endif

#define WIPED_MAX 64

static char child_err[4096];

/* The files test_wipe() took, by device and inode (descriptors get reused). */
static struct {
	dev_t dev;
	ino_t ino;
} wiped_files[WIPED_MAX];
static int nwiped;
/* Every fallocate() fails with this errno if it is not 0. */
static int fallocate_fail;

static bool wiped_file(const struct stat *sb)
{
	for (int i = 0; i < nwiped; i++) {
		if (wiped_files[i].dev == sb->st_dev &&
		    wiped_files[i].ino == sb->st_ino)
			return true;
	}
	return false;
}

int fallocate(int fd, int mode, off_t offset, off_t len)
{
	struct stat sb;

	if (fallocate_fail) {
		errno = fallocate_fail;
		return -1;
	}
	if (fstat(fd, &sb) == 0 && wiped_file(&sb)) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fallocate, fd, mode, offset, len);
}

/*
 * Make every access through a mapping of the wiped file @sb raise SIGBUS,
 * as the kernel's wipe does: map an empty file over each, with the same
 * protection.  The ranges are collected first: /proc/self/maps changes
 * under the remapping.
 */
static void wipe_mappings(const struct stat *sb)
{
	static int empty_fd = -1;
	struct {
		unsigned long start, end;
		int prot;
	} maps[256];
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long start, end, ino;
	unsigned int maj, mnr;
	char line[512], perms[5];
	int n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s %*x %x:%x %lu", &start, &end,
			   perms, &maj, &mnr, &ino) != 6 ||
		    ino != sb->st_ino || makedev(maj, mnr) != sb->st_dev)
			continue;
		ck_assert_int_lt(n, 256);
		maps[n].start = start;
		maps[n].end = end;
		maps[n].prot = (perms[0] == 'r' ? PROT_READ : 0) |
			       (perms[1] == 'w' ? PROT_WRITE : 0);
		n++;
	}
	fclose(f);
	if (empty_fd < 0)
		empty_fd = memfd_create("wiped", MFD_CLOEXEC);
	ck_assert_int_ge(empty_fd, 0);
	for (int i = 0; i < n; i++) {
		void *p = (void *)maps[i].start;

		ck_assert_ptr_eq(mmap(p, maps[i].end - maps[i].start,
				      maps[i].prot, MAP_SHARED | MAP_FIXED,
				      empty_fd, 0), p);
	}
}

/*
 * The kernel's wipe of every secret file open in this process (the
 * kernel wipes all of them, system-wide).  Returns how many it took.
 */
static int test_wipe(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		struct statfs sfs;
		struct stat sb;

		if (e->d_name[0] == '.' || fd == dirfd(d) ||
		    fstatfs(fd, &sfs) < 0 || sfs.f_type != SECRETMEM_MAGIC ||
		    fstat(fd, &sb) < 0 || wiped_file(&sb))
			continue;
		ck_assert_int_lt(nwiped, WIPED_MAX);
		wiped_files[nwiped].dev = sb.st_dev;
		wiped_files[nwiped].ino = sb.st_ino;
		nwiped++;
		wipe_mappings(&sb);
		n++;
	}
	closedir(d);
	return n;
}

/* Nothing was wiped: 0 on every backend, errno untouched; bad fds fail. */
SM_TEST(test_wiped_not)
{
	struct secmem_stats st;
	char *p, *big, *pages;
	int fd, closed;

	ck_assert_int_eq(secmem_wiped(), 0);	/* before any arena */
	p = secmem_malloc(40);
	big = secmem_malloc(100000);
	pages = secmem_alloc_pages(1);
	ck_assert(p && big && pages);
	fd = secmem_fd_create(10000, 0);
	ck_assert_int_ge(fd, 0);
	errno = EINTR;
	ck_assert_int_eq(secmem_wiped(), 0);
	ck_assert_int_eq(secmem_fd_wiped(fd), 0);
	ck_assert_int_eq(errno, EINTR);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.wiped_arenas, 0);
	ck_assert_uint_eq(st.wiped_bytes, 0);

	errno = 0;
	ck_assert_int_eq(secmem_fd_wiped(-1), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EINVAL);
	closed = dup(fd);
	ck_assert_int_ge(closed, 0);
	close(closed);
	errno = 0;
	ck_assert_int_eq(secmem_fd_wiped(closed), -1);
	ck_assert_int_eq(errno, EBADF);

	if (test_mode == TEST_MODE_MLOCK) {
		/* Ordinary memfds are never wiped: not even asked. */
		fallocate_fail = EIO;
		ck_assert_int_eq(secmem_wiped(), 0);
	} else {
		/* A probe that fails is not an answer. */
		fallocate_fail = ENOMEM;
		errno = 0;
		ck_assert_int_eq(secmem_wiped(), -1);
		ck_assert_int_eq(errno, ENOMEM);
		ck_assert_int_eq(secmem_last_error(), SECMEM_ENOMEM);
		ck_assert_int_eq(secmem_fd_wiped(fd), -1);
		ck_assert_int_eq(errno, ENOMEM);
	}
	fallocate_fail = 0;
	close(fd);
	secmem_free(pages);
	secmem_free(big);
	secmem_free(p);
}

static void do_double_free_wiped(void *arg)
{
	char *a = secmem_malloc(64), *b = secmem_malloc(64);

	(void)arg;
	test_wipe();
	if (secmem_wiped() != 1)
		_exit(50);
	secmem_free(a);
	secmem_free(a);		/* must abort: a double free all the same */
	secmem_free(b);
	_exit(51);
}

/*
 * After a wipe: secmem_wiped() says so; allocations in the wiped arenas
 * are freed without a touch (their pages fault), realloc()ed with
 * SECMEM_EWIPED and left allocated; new memory comes from new arenas,
 * never from a wiped spare, idle slab or partial slab; the dead arena
 * goes when its last allocation does.
 */
SM_TEST(test_wiped_heap)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct secmem_stats st;
	char *small, *small2, *big, *pages, *spare, *idle, *q[4];
	unsigned long start, end;
	char perms[5];
	size_t usable;
	int fd, fd_new, st_child;

	if (test_mode == TEST_MODE_MLOCK) {
		test_skip("the mlock backend is never wiped");
		return;
	}
	small = secmem_malloc(40);
	small2 = secmem_malloc(40);	/* the same slab: it stays partial */
	big = secmem_malloc(100000);
	pages = secmem_alloc_pages(3 * pg);
	idle = secmem_malloc(3000);	/* its slab, once empty, stays idle */
	ck_assert(small && small2 && big && pages && idle);
	strcpy(small, "secret");
	memset(big, 0x5a, 100000);
	memset(pages, 0x6b, 3 * pg);
	secmem_free(idle);
	/* Beyond the first arena: a second one, kept as a spare when empty. */
	spare = secmem_malloc(2 << 20);
	ck_assert_ptr_nonnull(spare);
	memset(spare, 0x7c, 2 << 20);
	secmem_free(spare);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.arenas, 2);
	fd = secmem_fd_create(pg, 0);
	ck_assert_int_ge(fd, 0);
	usable = secmem_usable_size(small);

	ck_assert_int_ge(test_wipe(), 3);	/* the arenas and the fd */
	ck_assert_int_eq(secmem_fd_wiped(fd), 1);
	ck_assert_int_eq(secmem_wiped(), 1);
	/* The spare is gone; the arena in use is dead. */
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.arenas, 1);
	ck_assert_uint_eq(st.wiped_arenas, 1);
	ck_assert_uint_eq(st.wiped_bytes, st.bytes_mapped);
	ck_assert_uint_eq(st.allocations, 4);
	/* Asking again finds the same. */
	ck_assert_int_eq(secmem_wiped(), 1);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.wiped_arenas, 1);

	/* The bookkeeping still answers. */
	ck_assert_int_eq(secmem_owns(small), 1);
	ck_assert_int_eq(secmem_owns(pages + pg), 1);
	ck_assert_uint_eq(secmem_usable_size(small), usable);

	/* realloc() can neither keep nor copy: EIO, still allocated. */
	errno = 0;
	ck_assert_ptr_null(secmem_realloc(small, 8));
	ck_assert_int_eq(errno, EIO);
	ck_assert_int_eq(secmem_last_error(), SECMEM_EWIPED);
	ck_assert_ptr_null(secmem_realloc(big, 1 << 20));
	ck_assert_ptr_null(secmem_realloc(pages, pg));
	ck_assert_ptr_null(secmem_realloc(small, 0));
	ck_assert_int_eq(secmem_owns(small), 1);
	ck_assert_ptr_nonnull(strstr(secmem_strerror(SECMEM_EWIPED),
				     "secmem_free()"));

	/*
	 * New memory: from a new arena, not from the dead one's partial or
	 * idle slab or from the wiped spare, all of which would fault.
	 */
	q[0] = secmem_malloc(40);
	q[1] = secmem_malloc(3000);
	q[2] = secmem_malloc(300000);
	q[3] = secmem_alloc_pages(pg);
	for (int i = 0; i < 4; i++) {
		ck_assert_ptr_nonnull(q[i]);
		ck_assert(test_find_map(q[i], &start, &end, perms));
		ck_assert_str_eq(perms, "rw-s");
		memset(q[i], i, secmem_usable_size(q[i]));
	}
	fd_new = secmem_fd_create(pg, 0);
	ck_assert_int_ge(fd_new, 0);
	ck_assert_int_eq(secmem_fd_wiped(fd_new), 0);

	/* Frees touch nothing: any access would raise SIGBUS. */
	secmem_free(small);
	ck_assert_int_eq(secmem_free_if_owned(big), 1);
	secmem_free(pages);
	ck_assert_int_eq(secmem_wiped(), 1);	/* small2 is still live */
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.wiped_arenas, 1);
	secmem_free(small2);
	ck_assert_int_eq(secmem_owns(small2), 0);
	ck_assert_int_eq(secmem_stats(&st), 0);
	ck_assert_uint_eq(st.wiped_arenas, 0);
	ck_assert_uint_eq(st.wiped_bytes, 0);
	ck_assert_uint_eq(st.allocations, 4);
	ck_assert_uint_eq(st.fds, st.arenas);
	ck_assert_int_eq(secmem_wiped(), 0);

	for (int i = 0; i < 4; i++)
		secmem_free(q[i]);
	close(fd_new);
	close(fd);

	/* A double free in a wiped arena is still caught. */
	st_child = test_in_child(do_double_free_wiped, NULL, child_err,
				 4096);
	ck_assert_killed_by(st_child, SIGABRT);
	ck_assert_msg(strstr(child_err, "double free"), "stderr: %s",
		      child_err);
}

/*
 * SECMEM_FORK_COPY with a dead arena: the child cannot copy it (reading
 * it would fault) and needs no copy; it frees in it and allocates anew.
 */
static void do_fork_copy_child(void *arg)
{
	char *p = arg, *q;

	secmem_free(p);
	q = secmem_malloc(64);
	if (!q)
		_exit(60);
	strcpy(q, "new");
	secmem_free(q);
	_exit(secmem_wiped() == 0 ? 0 : 61);
}

SM_TEST(test_wiped_fork_copy)
{
	char *p, *live;
	int st;

	if (test_mode == TEST_MODE_MLOCK) {
		test_skip("the mlock backend is never wiped");
		return;
	}
	p = secmem_malloc(64);
	ck_assert_ptr_nonnull(p);
	test_wipe();
	ck_assert_int_eq(secmem_wiped(), 1);
	live = secmem_malloc(64);
	ck_assert_ptr_nonnull(live);
	strcpy(live, "kept");
	ck_assert_int_eq(secmem_set_fork_policy(SECMEM_FORK_COPY), 0);
	st = test_in_child(do_fork_copy_child, p, child_err, sizeof(child_err));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child status 0x%x: %s", st, child_err);
	ck_assert_str_eq(live, "kept");
	ck_assert_int_eq(secmem_set_fork_policy(SECMEM_FORK_DROP), 0);
	secmem_free(p);
	secmem_free(live);
	ck_assert_int_eq(secmem_wiped(), 0);
}

TCase *test_wiped_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_test(tc, test_wiped_not);
	tcase_add_test(tc, test_wiped_heap);
	tcase_add_test(tc, test_wiped_fork_copy);
	return tc;
}
