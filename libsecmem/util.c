// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Errors, fatal misuse, and the two byte helpers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/*
 * The contended half of sm_lock(): mark the lock contended and sleep
 * until it is released, then take it (still marked contended: another
 * waiter may sleep).  errno is the caller's: an allocation that
 * succeeds must not change it.
 */
void sm_lock_slow(sm_lock_t *l)
{
	int saved = errno;

	while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
		syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	errno = saved;
}

/* sm_unlock() found waiters: wake one. */
void sm_unlock_wake(sm_lock_t *l)
{
	int saved = errno;

	syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}

static _Thread_local struct sm_error sm_err;
static _Thread_local char sm_msg[512];

struct sm_error *sm_error_get(void)
{
	return &sm_err;
}

/* Record @code for this thread, set errno to @err, return NULL. */
void *sm_fail(int code, int err)
{
	memset(&sm_err, 0, sizeof(sm_err));
	sm_err.code = code;
	sm_err.sys_errno = err;
	errno = err;
	return NULL;
}

void sm_fail_syscall(const char *what, int err)
{
	sm_fail(SECMEM_ESYSCALL, err);
	sm_err.what = what;
}

void sm_fail_einval(int err, const char *why)
{
	sm_fail(SECMEM_EINVAL, err);
	sm_err.what = why;
}

/* @limit 0: the kernel said EAGAIN; the numbers are read when reported. */
void sm_fail_memlock(uint64_t limit, uint64_t in_use, uint64_t requested)
{
	sm_fail(SECMEM_EMEMLOCK, ENOMEM);
	sm_err.limit = limit;
	sm_err.in_use = in_use;
	sm_err.requested = requested;
}

_Noreturn void sm_die(const char *fmt, ...)
{
	char buf[256];
	size_t len;
	va_list ap;

	/* Nothing may unwind this thread instead of the abort(). */
	sm_cancel_off();
	/* One line, written at once, then abort() like sodium_free() does. */
	strcpy(buf, "libsecmem: ");
	len = strlen(buf);
	va_start(ap, fmt);
	/* The analyzer does not see that va_start() initialised ap. */
	// NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
	vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
	va_end(ap);
	len = strlen(buf);
	snprintf(buf + len, sizeof(buf) - len, ": aborting\n");
	len = strlen(buf);
	buf[len - 1] = '\n';	/* even if truncated */
	if (write(STDERR_FILENO, buf, len) < 0) {
		/* Nothing left to report to. */
	}
	abort();
}

void sm_close(int fd)
{
	int old = sm_cancel_off(), err = errno;

	close(fd);
	errno = err;
	sm_cancel_restore(old);
}

uint64_t sm_random_u64(void)
{
	uint64_t v = 0;
	struct timespec ts;
	int old = sm_cancel_off();
	ssize_t n = getrandom(&v, sizeof(v), GRND_NONBLOCK);

	sm_cancel_restore(old);
	if (n == (ssize_t)sizeof(v))
		return v;
	/* Early boot without entropy: weak, but a canary still catches bugs. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^
	       (uint64_t)(uintptr_t)&v ^ (uint64_t)getpid() << 32;
}

SECMEM_API void secmem_memzero(void *ptr, size_t len)
{
	if (!len)
		return;
	memset(ptr, 0, len);
	/* The compiler must assume the asm reads the zeroed bytes. */
	__asm__ __volatile__("" : : "r"(ptr) : "memory");
}

SECMEM_API int secmem_memeq(const void *a, const void *b, size_t len)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < len; i++)
		d |= x[i] ^ y[i];
	/* 1 if d == 0, computed without a branch on the secret. */
	return (int)(1 & ((d - 1U) >> 8));
}

SECMEM_API unsigned int secmem_version(void)
{
	return SECMEM_VERSION_NUMBER;
}

SECMEM_API int secmem_last_error(void)
{
	return sm_err.code;
}

static const char *util_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes == UINT64_MAX)
		snprintf(buf, len, "unlimited");
	else if (bytes >= (1ULL << 20) && bytes % (1ULL << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

/*
 * A record with particulars (its thread's last error) has the limit and
 * use it saw, or limit 0 when the kernel refused (then they are read
 * now), and the bytes asked for; a bare code has none of them: the
 * numbers are read now and the request is not named.
 */
static void util_memlock_msg(const struct sm_error *e, char *buf, size_t len)
{
	struct rlimit rl;
	uint64_t limit = e->limit, in_use = e->in_use;
	char l[32], u[32], more[64] = "";
	bool kernel = !limit;

	if (kernel) {
		limit = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
			rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : UINT64_MAX;
		in_use = atomic_load(&sm_count.charged);
	}
	if (e->requested) {
		char r[32];

		snprintf(more, sizeof(more), ", %s more are needed",
			 util_size(r, sizeof(r), e->requested));
	}
	snprintf(buf, len,
		 "RLIMIT_MEMLOCK is %s and %s are in use by libsecmem%s%s: "
		 "raise LimitMEMLOCK= in the service unit or ulimit -l, or "
		 "free secrets that are no longer needed",
		 util_size(l, sizeof(l), limit),
		 util_size(u, sizeof(u), in_use),
		 kernel ? " (the kernel also counts memory the process "
			  "mlock()ed itself)" : "",
		 more);
}

/*
 * The sentence for the record @e: a constant, or formatted into @buf of
 * @len bytes and returned.
 */
static const char *util_sentence(const struct sm_error *e, char *buf,
				 size_t len)
{
	char sys[128];
	const char *s;

	switch (e->code) {
	case SECMEM_OK:
		return "Success";
	case SECMEM_ENOBACKEND:
		if (sm_insecure_is_refused())
			return "No secure memory backend: this kernel has "
			       "neither the unmapped memfd (MFD_UNMAPPED) nor "
			       "memfd_secret(2) (enable it with "
			       "secretmem.enable=1 on Linux 5.14 or later, and "
			       "allow it in any seccomp filter); this program "
			       "refused mlock()ed memory with "
			       "SECMEM_INIT_REFUSE_INSECURE, so "
			       "SECMEM_ALLOW_INSECURE is ignored";
		return "No secure memory backend: this kernel has neither the "
		       "unmapped memfd (MFD_UNMAPPED) nor memfd_secret(2) "
		       "(enable it with secretmem.enable=1 on Linux 5.14 or "
		       "later, and allow it in any seccomp filter); set "
		       "SECMEM_ALLOW_INSECURE=1 or call secmem_init("
		       "SECMEM_INIT_ALLOW_INSECURE) to accept mlock()ed memory "
		       "that stays in the kernel's direct map";
	case SECMEM_EMEMLOCK:
		util_memlock_msg(e, buf, len);
		return buf;
	case SECMEM_ENOMEM:
		return "The kernel refused memory or a new mapping: check free "
		       "memory, and raise vm.max_map_count if many blocks were "
		       "split by secmem_protect()";
	case SECMEM_EINVAL:
		if (e->what)
			return e->what;
		return "Invalid argument: see the function's man page for the "
		       "accepted values (alignments must be powers of two, "
		       "secmem_protect() takes only secmem_alloc_pages() "
		       "pointers)";
	case SECMEM_EOVERFLOW:
		return "The requested size overflows size_t: check the element "
		       "count and size passed to secmem_calloc() or the size "
		       "passed to the allocation function";
	case SECMEM_EBUSY:
		return "secmem_init() with different flags was called while "
		       "secrets are allocated: call it once at start-up, before "
		       "the first allocation";
	case SECMEM_ENOTSUP:
		return "The operation is not supported by the backend in use: "
		       "check secmem_backend() and the function's man page";
	case SECMEM_EWIPED:
		return "The kernel wiped this secret memory before hibernating "
		       "(/sys/kernel/mm/unmapped/hibernation = wipe): its "
		       "contents are gone for good; free it with secmem_free() "
		       "and create the secret again";
	case SECMEM_ESYSCALL:
		if (!e->what && !e->sys_errno)
			return "A system call failed unexpectedly: if the "
			       "process ran out of file descriptors raise "
			       "ulimit -n, otherwise report this with the "
			       "kernel version";
		/* GNU strerror_r may return a static string instead of sys. */
		s = strerror_r(e->sys_errno, sys, sizeof(sys));
		snprintf(buf, len,
			 "%s failed unexpectedly (%s): if the process ran out "
			 "of file descriptors raise ulimit -n, otherwise report "
			 "this with the kernel version",
			 e->what ? e->what : "A system call", s);
		return buf;
	default:
		return strerror_r(e->code, buf, len);
	}
}

SECMEM_API const char *secmem_strerror(int err)
{
	struct sm_error e = { .code = err };

	if (err == sm_err.code)
		e = sm_err;
	return util_sentence(&e, sm_msg, sizeof(sm_msg));
}

/* A bare code: the same sentence in every thread.  errno is the caller's. */
SECMEM_API size_t secmem_strerror_r(int err, char *buf, size_t buflen)
{
	struct sm_error e = { .code = err };
	char tmp[sizeof(sm_msg)];
	int saved = errno;
	const char *s = util_sentence(&e, tmp, sizeof(tmp));
	size_t n = strlen(s);

	if (buflen) {
		size_t k = n < buflen ? n : buflen - 1;

		memcpy(buf, s, k);
		buf[k] = '\0';
	}
	errno = saved;
	return n;
}
