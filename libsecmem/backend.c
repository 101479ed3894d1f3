// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Backend probing and the one place that talks to the kernel about secret
 * files: create a file, map it between two guard pages, unmap it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "secmem/uapi.h"

static _Atomic int sm_backend = SECMEM_BACKEND_NONE;
/*
 * SECMEM_INIT_REFUSE_INSECURE was given: set once, never cleared (a fork
 * child inherits it).  While set, no probe chooses the mlock backend and
 * no file of it is created.
 */
static _Atomic bool sm_insecure_refused;
/* memfd_secret: CAP_IPC_LOCK exempts from RLIMIT_MEMLOCK (probed). */
static _Atomic bool sm_secret_ipc_lock_exempt;

SECMEM_API const char *secmem_backend_name(enum secmem_backend backend)
{
	switch (backend) {
	case SECMEM_BACKEND_UNMAPPED_MEMFD:
		return "unmapped-memfd";
	case SECMEM_BACKEND_MEMFD_SECRET:
		return "memfd-secret";
	case SECMEM_BACKEND_MLOCK:
		return "mlock";
	default:
		return "none";
	}
}

enum secmem_backend sm_backend_get(void)
{
	return atomic_load_explicit(&sm_backend, memory_order_acquire);
}

/*
 * Whether @fd is a file whose pages the kernel keeps out of its direct
 * map.  memfd_secret(2) and memfd_create(MFD_UNMAPPED) files both live on
 * the secretmem pseudo file system; a plain memfd is on tmpfs.  A
 * successful memfd_create(MFD_UNMAPPED) alone proves nothing: a kernel
 * that gave 0x20 another meaning would hand out ordinary shmem, which
 * libsecmem would then not even mlock().
 */
static bool backend_fd_unmapped(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == SECRETMEM_MAGIC;
}

/* 1: available, 0: this kernel lacks it, -errno: could not tell. */
static int backend_probe_unmapped(void)
{
	int fd = memfd_create("secmem-probe", MFD_CLOEXEC | MFD_UNMAPPED);

	if (fd >= 0) {
		bool unmapped = backend_fd_unmapped(fd);

		sm_close(fd);
		return unmapped ? 1 : 0;
	}
	/* An unknown MFD_* flag is EINVAL: the kernel predates the series. */
	return errno == EINVAL ? 0 : -errno;
}

static int backend_probe_secret(void)
{
#ifdef SYS_memfd_secret
	int fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);

	if (fd >= 0) {
		sm_close(fd);
		return 1;
	}
	/* ENOSYS: not built or secretmem.enable=0; EPERM: seccomp. */
	return (errno == ENOSYS || errno == EPERM) ? 0 : -errno;
#else
	return 0;
#endif
}

bool sm_ipc_lock_effective(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[CAP_IPC_LOCK / 32].effective & (1U << (CAP_IPC_LOCK % 32));
}

bool sm_secret_ipc_lock_exempts(void)
{
	return atomic_load_explicit(&sm_secret_ipc_lock_exempt,
				    memory_order_relaxed);
}

#ifdef SYS_memfd_secret
/*
 * The child of backend_probe_secret_exempt(), a process of its own that
 * shares the caller's memory while the caller waits: its RLIMIT_MEMLOCK is
 * its own.  With the soft limit at 0, map one page of a memfd_secret file
 * and fault it with read() from /dev/zero, which fails with EFAULT where
 * a store would get SIGBUS (MADV_POPULATE_WRITE is refused on secret
 * memory).  Only system calls: it runs on the caller's thread state.
 * Exit status 0: the page came in; anything else: it did not.  Its
 * descriptors are its own and close with it; the mapping is in the
 * shared address space and is unmapped here.
 */
static int backend_exempt_child(void *arg)
{
	size_t pg = *(const size_t *)arg;
	int fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
	int src = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	struct rlimit rl;
	char *p;
	int r;

	if (fd < 0 || src < 0 || ftruncate(fd, (off_t)pg) < 0 ||
	    getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return 2;
	rl.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return 2;
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 1;
	r = read(src, p, pg) == (ssize_t)pg ? 0 : 1;
	munmap(p, pg);
	return r;
}
#endif

/*
 * Whether the running kernel lets this process, which has CAP_IPC_LOCK,
 * fault memfd_secret pages beyond RLIMIT_MEMLOCK.  Kernels differ:
 * upstream checks the limit when the file is mapped (mlock_future_ok(),
 * where CAP_IPC_LOCK is exempt), some (Debian's 6.12) charge every page
 * at fault time with no exemption and deliver SIGBUS past the limit.  So
 * ask this one, in a child with a soft limit of 0 (backend_exempt_child()):
 * the process's own limits, descriptors and signal dispositions are never
 * changed, whatever its other threads do meanwhile.  The child is a
 * clone() that shares the memory (no copy of a large process) and the
 * calling thread waits for it (CLONE_VFORK), with every signal blocked
 * so that no handler of the program runs in it, and with cancellation
 * disabled, so that neither the child's read() (on the caller's thread
 * state) nor the wait acts on a cancellation request while the global
 * lock is held.  It sends no SIGCHLD and is reaped here (__WALL), unseen
 * by the program's own wait() calls.  Any failure answers "not exempt",
 * libsecmem's stricter rule.  errno is the caller's.
 */
static bool backend_probe_secret_exempt(void)
{
	bool exempt = false;
#ifdef SYS_memfd_secret
	const size_t stack_size = (size_t)64 * 1024;
	size_t pg = sm_page_size;
	sigset_t all, old;
	int err = errno, status, cancel;
	char *stack;
	pid_t pid;

	/* Asked even under an infinite limit: the program may lower it. */
	if (!sm_ipc_lock_effective())
		return false;
	stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		goto out;
	cancel = sm_cancel_off();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(backend_exempt_child, stack + stack_size,
		    CLONE_VM | CLONE_VFORK, &pg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0) {
		pid_t r;

		do
			r = waitpid(pid, &status, __WALL);
		while (r < 0 && errno == EINTR);
		exempt = r == pid && WIFEXITED(status) &&
			 WEXITSTATUS(status) == 0;
	}
	sm_cancel_restore(cancel);
	munmap(stack, stack_size);
out:
	errno = err;
#endif
	return exempt;
}

void sm_refuse_insecure(void)
{
	atomic_store(&sm_insecure_refused, true);
}

bool sm_insecure_is_refused(void)
{
	return atomic_load(&sm_insecure_refused);
}

static bool backend_env_allows_insecure(void)
{
	/* secure_getenv: a setuid program must not be downgraded by its caller. */
	const char *v = secure_getenv("SECMEM_ALLOW_INSECURE");

	return v && strcmp(v, "1") == 0;
}

/*
 * Called with the global lock held, before any arena exists.  Returns 0 or
 * the SECMEM_E* code already recorded with sm_fail*().  Transient failures
 * (EMFILE...) leave the backend unprobed so that a later call retries.
 */
int sm_backend_probe(unsigned int flags)
{
	bool insecure_ok = !sm_insecure_is_refused() &&
			   ((flags & (SECMEM_INIT_ALLOW_INSECURE |
				      SECMEM_INIT_FORCE_INSECURE)) ||
			    backend_env_allows_insecure());
	enum secmem_backend b = SECMEM_BACKEND_NONE;
	int r, saved = errno;

	atomic_store(&sm_backend, SECMEM_BACKEND_NONE);
	if (flags & SECMEM_INIT_FORCE_INSECURE)
		goto insecure;

	if (!(flags & SECMEM_INIT_NO_UNMAPPED)) {
		r = backend_probe_unmapped();
		if (r < 0)
			goto transient;
		if (r) {
			b = SECMEM_BACKEND_UNMAPPED_MEMFD;
			goto done;
		}
	}
	if (!(flags & SECMEM_INIT_NO_SECRET)) {
		r = backend_probe_secret();
		if (r < 0)
			goto transient;
		if (r) {
			b = SECMEM_BACKEND_MEMFD_SECRET;
			goto done;
		}
	}
insecure:
	if (!insecure_ok) {
		sm_fail(SECMEM_ENOBACKEND, ENOSYS);
		return SECMEM_ENOBACKEND;
	}
	b = SECMEM_BACKEND_MLOCK;
done:
	atomic_store(&sm_secret_ipc_lock_exempt,
		     b == SECMEM_BACKEND_MEMFD_SECRET &&
		     backend_probe_secret_exempt());
	atomic_store_explicit(&sm_backend, b, memory_order_release);
	/* The probes that found no backend set errno: a success keeps it. */
	errno = saved;
	return 0;
transient:
	sm_fail_syscall("probing the secret memory backend", -r);
	return SECMEM_ESYSCALL;
}

static int backend_create_fd(size_t size, bool sealing)
{
	unsigned int mfd = MFD_CLOEXEC | (sealing ? MFD_ALLOW_SEALING : 0);
	int fd = -1;

	switch (sm_backend_get()) {
	case SECMEM_BACKEND_UNMAPPED_MEMFD:
		fd = memfd_create("secmem", mfd | MFD_UNMAPPED);
		if (fd >= 0 && !backend_fd_unmapped(fd)) {
			sm_close(fd);
			fd = -1;
			errno = EPROTO;	/* the probe's answer no longer holds */
		}
		break;
	case SECMEM_BACKEND_MEMFD_SECRET:
#ifdef SYS_memfd_secret
		fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
#else
		errno = ENOSYS;
#endif
		break;
	case SECMEM_BACKEND_MLOCK:
		/* Chosen before the refusal: no more memory of it. */
		if (sm_insecure_is_refused()) {
			sm_fail(SECMEM_ENOBACKEND, ENOSYS);
			return -1;
		}
		fd = memfd_create("secmem-insecure", mfd);
		break;
	default:
		sm_fail(SECMEM_ENOBACKEND, ENOSYS);
		return -1;
	}
	if (fd < 0) {
		sm_fail_syscall("creating the secret memory file", errno);
		return -1;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		int err = errno;

		sm_close(fd);
		sm_fail_syscall("sizing the secret memory file (ftruncate)", err);
		return -1;
	}
	return fd;
}

static int backend_lock(void *data, size_t size)
{
	if (mlock2(data, size, MLOCK_ONFAULT) == 0)
		return 0;
	/* Kernels before 4.4 and valgrind lack mlock2(): lock it all now. */
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	return mlock(data, size);
}

/*
 * Map @size bytes (a multiple of the page size) of a new secret file.  The
 * guard pages come from an anonymous PROT_NONE reservation, so they cost
 * neither memory nor RLIMIT_MEMLOCK.  Under SECMEM_FORK_DROP everything is
 * MADV_DONTFORK: a child inherits neither the secrets nor the address
 * range.  Under SECMEM_FORK_COPY the child inherits the shared mapping
 * and replaces it with its own copy (sm_region_copy()).
 */
int sm_region_map(struct sm_region *r, size_t size)
{
	size_t pg = sm_page_size;
	size_t total = size + 2 * pg;
	char *res, *data;
	int fd, err;

	fd = backend_create_fd(size, false);
	if (fd < 0)
		return -1;
	res = mmap(NULL, total, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED) {
		err = errno;
		sm_close(fd);
		sm_fail(SECMEM_ENOMEM, err);
		return -1;
	}
	data = mmap(res + pg, size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_FIXED, fd, 0);
	if (data == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	if ((atomic_load(&sm_fork_policy) == SECMEM_FORK_DROP &&
	     madvise(res, total, MADV_DONTFORK) < 0) ||
	    madvise(data, size, MADV_DONTDUMP) < 0) {
		err = errno;
		goto fail;
	}
	/*
	 * The kernel keeps memfd_secret and unmapped-memfd pages resident and
	 * charges them to RLIMIT_MEMLOCK itself; mlock() of such a mapping
	 * even fails (ENOMEM: it cannot populate what GUP refuses).  Only the
	 * insecure fallback is locked, on fault, so that a big arena is not
	 * populated up front.
	 */
	if (sm_backend_get() == SECMEM_BACKEND_MLOCK &&
	    backend_lock(data, size) < 0) {
		err = errno;
		goto fail;
	}
	r->fd = fd;
	r->base = data;
	r->size = size;
	return 0;
fail:
	munmap(res, total);
	sm_close(fd);
	if (err == EAGAIN || err == EPERM)
		sm_fail_memlock(0, 0, size);	/* the kernel's own limit */
	else if (err == ENOMEM)
		sm_fail(SECMEM_ENOMEM, err);
	else
		sm_fail_syscall("mapping the secret memory file", err);
	return -1;
}

void sm_region_unmap(struct sm_region *r)
{
	size_t pg = sm_page_size;

	munmap((char *)r->base - pg, r->size + 2 * pg);
	sm_close(r->fd);
	r->fd = -1;
	r->base = NULL;
}

/*
 * In a fork child under SECMEM_FORK_COPY: @r is the parent's region, still
 * shared with the parent.  Copy the pages set in @used (one bit per page;
 * never read the others, so that untouched pages are not allocated) into a
 * new file of the child and map it at the same address.  The caller
 * restores the protection of secmem_alloc_pages() blocks afterwards.
 * Returns 0 or -errno; @r then describes the child's own region.
 */
int sm_region_copy(struct sm_region *r, const uint64_t *used)
{
	size_t pg = sm_page_size, npages = r->size / pg, p;
	char *tmp, *data;
	int fd;

	fd = backend_create_fd(r->size, false);
	if (fd < 0)
		return -ENOMEM;
	tmp = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED)
		goto fail;
	/* Guards and NOACCESS blocks inside the arena must be readable. */
	if (mprotect(r->base, r->size, PROT_READ) < 0)
		goto fail_unmap;
	for (p = 0; p < npages; p++) {
		if (used[p / 64] & (1ULL << (p % 64)))
			memcpy(tmp + p * pg, (char *)r->base + p * pg, pg);
	}
	munmap(tmp, r->size);
	data = mmap(r->base, r->size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_FIXED, fd, 0);
	if (data == MAP_FAILED)
		goto fail;
	madvise(data, r->size, MADV_DONTDUMP);
	if (sm_backend_get() == SECMEM_BACKEND_MLOCK)
		backend_lock(data, r->size);
	sm_close(r->fd);
	r->fd = fd;
	return 0;
fail_unmap:
	munmap(tmp, r->size);
fail:
	p = (size_t)errno;
	sm_close(fd);
	return -(int)p;
}

/*
 * Whether the kernel wiped the secret file @fd before a hibernation (see
 * secmem_wiped()): 1 if so, 0 if not, -errno if the probe failed.  A
 * wiped file fails every allocating fallocate() with EIO, for good; on
 * any other file one byte at offset 0 succeeds (allocating the first page
 * if the file has none: no more than the arena was charged for), or is
 * refused by a file that has no fallocate() at all, such as memfd_secret
 * files (EOPNOTSUPP), which therefore cannot be probed.  Nothing of the
 * file is read.  errno is the caller's.
 */
int sm_fd_wiped(int fd)
{
	int saved = errno, r = 0, old = sm_cancel_off();

	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1) < 0) {
		if (errno == EIO)
			r = 1;
		else if (errno != EOPNOTSUPP && errno != ENOSYS)
			r = -errno;
	}
	sm_cancel_restore(old);
	errno = saved;
	return r;
}

/* Record the failure -@err of sm_fd_wiped(). */
void sm_fail_wiped_probe(int err)
{
	switch (err) {
	case EBADF:	/* not open, or not for writing */
	case EISDIR:
	case ENODEV:	/* neither a file nor a block device */
	case ESPIPE:
		sm_fail(SECMEM_EINVAL, err);
		break;
	case ENOMEM:
		sm_fail(SECMEM_ENOMEM, err);
		break;
	default:
		sm_fail_syscall("probing a secret memory file for a wipe "
				"(fallocate)", err);
	}
}

/* A stand-alone file for secmem_fd_create(). */
int sm_backend_memfd(size_t size, bool seal, bool cloexec)
{
	bool can_seal = sm_backend_get() != SECMEM_BACKEND_MEMFD_SECRET;
	int fd = backend_create_fd(size, seal && can_seal);
	int err;

	if (fd < 0)
		return -1;
	if (seal && can_seal) {
		if (fcntl(fd, F_ADD_SEALS,
			  F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
			err = errno;
			sm_close(fd);
			sm_fail_syscall("sealing the secret memory file", err);
			return -1;
		}
	}
	if (!cloexec && fcntl(fd, F_SETFD, 0) < 0) {
		err = errno;
		sm_close(fd);
		sm_fail_syscall("clearing close-on-exec", err);
		return -1;
	}
	return fd;
}
