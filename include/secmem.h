/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsecmem: memory for secrets that the kernel cannot casually read.
 *
 * Memory comes from large memfd-backed arenas (one file descriptor per
 * arena, not per secret).  The backend is chosen once, on first use, in
 * this order:
 *
 *  1. the unmapped memfd (memfd_create() with MFD_UNMAPPED): pages are
 *     removed from the kernel's direct map;
 *  2. memfd_secret(2): the same promise on kernels that have it enabled;
 *  3. only if the application opted in (SECMEM_INIT_ALLOW_INSECURE or
 *     SECMEM_ALLOW_INSECURE=1 in the environment) and did not refuse it
 *     (SECMEM_INIT_REFUSE_INSECURE): a memfd mapped with mlock() and
 *     MADV_DONTDUMP, which keeps secrets out of swap and core dumps but
 *     leaves them in the direct map.
 *
 * Without a secure backend and without the opt-in, every allocation fails
 * and secmem_last_error() returns SECMEM_ENOBACKEND.
 *
 * Errors: functions that return a pointer return NULL, functions that
 * return an int return -1; both set errno to a standard value (ENOMEM,
 * EINVAL, EACCES, ENOSYS, EBUSY, EIO) and record a precise SECMEM_E* code
 * for the calling thread, which secmem_last_error() returns and
 * secmem_strerror() turns into a sentence that says what to do.  A call
 * that succeeds leaves errno as it was, the first one (which chooses the
 * backend) included.  Each function that can fail in more than one way
 * also has an _r form (since 0.2.0) that returns the SECMEM_E* code
 * itself, for callers that cannot rely on thread-local state (a Go
 * goroutine moves between threads): see "Error codes as return values"
 * below.
 *
 * Misuse that would corrupt memory (a double free, a pointer that
 * libsecmem did not return, an overwritten canary) is not reported as an
 * error: the library writes one line to stderr and calls abort().
 *
 * All functions are thread-safe.  Threads are spread over several heaps
 * with one lock each; there is no global lock on the allocation path.
 *
 * Signals: like malloc(3), these functions are not async-signal-safe, so
 * a signal handler must not call them: they take locks (a handler that
 * calls secmem_free() while the code it interrupted holds a heap lock
 * deadlocks), allocate with malloc(3) and make system calls whose state
 * an interrupted call may be in the middle of.  The exceptions, which
 * are async-signal-safe: secmem_memzero(), secmem_memeq(),
 * secmem_backend_name() and secmem_version().
 *
 * Cancellation: like malloc(3), no function is a cancellation point.  The
 * system calls that are (close() of an arena's file, ...) run with
 * cancellation disabled, so a pending request is acted on at the caller's
 * next cancellation point, never with a lock of libsecmem held.
 *
 * fork(): arenas are mapped with MADV_DONTFORK, so a child process does
 * not inherit the parent's secrets (touching them faults with SIGSEGV).
 * Their address ranges stay reserved without access in the child, so a
 * stale parent pointer keeps faulting after the child has allocated.
 * secmem_free() of an address in those ranges is a no-op that touches no
 * memory, so that the atexit() handlers and destructors the child
 * inherits may free the parent's secrets as they would in the parent;
 * secmem_usable_size() and secmem_realloc() of one abort with a message.
 * A child that calls into libsecmem gets a fresh, empty allocator with
 * the same backend and init flags.  Arena file descriptors are
 * close-on-exec and are closed in the child.  secmem_set_fork_policy()
 * gives the child a copy instead.
 *
 * Hibernation: a kernel with /sys/kernel/mm/unmapped/hibernation = wipe
 * destroys every secret file before it hibernates.  After a resume, call
 * secmem_wiped() before touching, allocating, reallocating or freeing
 * secret memory: see there.
 */
#ifndef SECMEM_H
#define SECMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The release this header belongs to.  A function is available from the
 * release that added it on, which its comment below names ("Since
 * 0.2.0"); a function without one is in 0.1.0.  Test at compile time
 *
 *	#if SECMEM_VERSION_NUMBER >= SECMEM_VERSION_ENCODE(0, 2, 0)
 *		if (secmem_wiped() == 1) ...
 *	#endif
 *
 * and, for the library a program runs with, compare secmem_version()
 * with the same numbers.  Each part is below 256.  The library's symbol
 * versions follow the release that added a function: SECMEM_0.2 for
 * those of 0.2.0, so a program that uses one does not start on an older
 * libsecmem.so.0.
 */
#define SECMEM_VERSION_MAJOR	0
#define SECMEM_VERSION_MINOR	2
#define SECMEM_VERSION_PATCH	0
#define SECMEM_VERSION_STRING	"0.2.0"
/** @major.@minor.@patch as one number that orders releases (usable in #if). */
#define SECMEM_VERSION_ENCODE(major, minor, patch) \
	((major) * 0x10000u + (minor) * 0x100u + (patch))
#define SECMEM_VERSION_NUMBER \
	SECMEM_VERSION_ENCODE(SECMEM_VERSION_MAJOR, SECMEM_VERSION_MINOR, \
			      SECMEM_VERSION_PATCH)

#if defined(__GNUC__)
#define SECMEM_API __attribute__((visibility("default")))
#define SECMEM_MALLOC __attribute__((malloc, warn_unused_result))
#else
#define SECMEM_API
#define SECMEM_MALLOC
#endif

/** Backends, in the order they are probed. */
enum secmem_backend {
	SECMEM_BACKEND_NONE = 0,	/* not probed yet, or none usable */
	SECMEM_BACKEND_UNMAPPED_MEMFD,	/* memfd_create(MFD_UNMAPPED) */
	SECMEM_BACKEND_MEMFD_SECRET,	/* memfd_secret(2) */
	SECMEM_BACKEND_MLOCK,		/* memfd + mlock + MADV_DONTDUMP (opt-in) */
};

/** Error codes; disjoint from errno values so secmem_strerror() takes both. */
enum secmem_error {
	SECMEM_OK = 0,
	SECMEM_ENOBACKEND = 0x5ec000,	/* no secure backend and no opt-in */
	SECMEM_EMEMLOCK,		/* would exceed RLIMIT_MEMLOCK */
	SECMEM_ENOMEM,			/* the kernel refused memory or a mapping */
	SECMEM_EINVAL,			/* invalid argument */
	SECMEM_EOVERFLOW,		/* size computation overflows */
	SECMEM_EBUSY,			/* secmem_init() after memory was handed out */
	SECMEM_ESYSCALL,		/* unexpected system call failure */
	SECMEM_ENOTSUP,			/* operation not possible with this backend */
	SECMEM_EWIPED,			/* the kernel wiped the memory (hibernation) */
};

/* Flags for secmem_init(). */
/** Accept the mlock() backend when no secure backend exists. */
#define SECMEM_INIT_ALLOW_INSECURE	(1U << 0)
/** Use the mlock() backend even if a secure one exists (tests, debugging). */
#define SECMEM_INIT_FORCE_INSECURE	(1U << 1)
/** Do not probe the unmapped memfd (e.g. to compare with memfd_secret). */
#define SECMEM_INIT_NO_UNMAPPED		(1U << 2)
/** Do not probe memfd_secret. */
#define SECMEM_INIT_NO_SECRET		(1U << 3)
/**
 * Never use the mlock() backend, whatever SECMEM_ALLOW_INSECURE says, for
 * the rest of the process's life (and its fork children's).  Since 0.2.0.
 */
#define SECMEM_INIT_REFUSE_INSECURE	(1U << 4)

/* Protections for secmem_protect(). */
#define SECMEM_NOACCESS		0
#define SECMEM_READONLY		1
#define SECMEM_READWRITE	2

/* Flags for secmem_fd_create(). */
/** Forbid growing and shrinking the file, and further seal changes. */
#define SECMEM_FD_SEAL		(1U << 0)
/** Keep the descriptor open across execve() (default: close-on-exec). */
#define SECMEM_FD_NOCLOEXEC	(1U << 1)

/* secmem_set_fork_policy() */
enum secmem_fork_policy {
	SECMEM_FORK_DROP = 0,	/* default: the child gets an empty allocator */
	SECMEM_FORK_COPY = 1,	/* the child gets a copy, in its own memory */
};

/** Snapshot returned by secmem_stats(). */
struct secmem_stats {
	enum secmem_backend backend;	/* backend in use (NONE if unprobed) */
	uint64_t bytes_in_use;		/* usable bytes of live allocations */
	uint64_t bytes_mapped;		/* arena bytes mapped (excl. guards) */
	uint64_t memlock_charged;	/* bytes counted against RLIMIT_MEMLOCK */
	uint64_t memlock_limit;		/* soft RLIMIT_MEMLOCK, UINT64_MAX if none */
	uint64_t allocations;		/* live allocations */
	uint64_t arenas;		/* live arenas */
	uint64_t fds;			/* open arena file descriptors */
	uint64_t mappings;		/* mappings created (arena + 2 guards each) */
	uint64_t wiped_arenas;		/* arenas found wiped, not yet released */
	uint64_t wiped_bytes;		/* their bytes (part of bytes_mapped) */
	uint64_t reserved[5];		/* zero; room to grow without ABI break */
};

/**
 * secmem_version() - the release of the library in use.
 *
 * Since 0.2.0.  Async-signal-safe.
 *
 * Return: SECMEM_VERSION_ENCODE(major, minor, patch) of the library
 * loaded, which may be newer than the header the program was built with
 * (SECMEM_VERSION_NUMBER).
 */
SECMEM_API unsigned int secmem_version(void);

/**
 * secmem_init() - choose the backend policy before the first allocation.
 * @flags: SECMEM_INIT_* flags, 0 for the default (secure backends only,
 *         unless SECMEM_ALLOW_INSECURE=1 is set in the environment and
 *         SECMEM_INIT_REFUSE_INSECURE was not given).
 *
 * Optional: the first allocation initialises the library with flags 0.
 * May be called again while no memory is handed out (the backend is then
 * probed again); afterwards a call with different flags fails with
 * SECMEM_EBUSY.
 *
 * SECMEM_INIT_REFUSE_INSECURE is for programs that must never hold a
 * secret in ordinary memory: the mlock() backend is not chosen, and
 * SECMEM_ALLOW_INSECURE=1 in the environment is ignored.  The refusal
 * holds from this call to the end of the process, whatever the call
 * returns (unless it is SECMEM_EINVAL): later calls without the flag
 * keep it, and a call with SECMEM_INIT_ALLOW_INSECURE or
 * SECMEM_INIT_FORCE_INSECURE fails with SECMEM_EINVAL (errno EPERM).
 * Call it before the first allocation: if the environment's opt-in has
 * already made libsecmem use the mlock() backend and its memory is
 * live, the call fails with SECMEM_EBUSY and no new memory of that
 * backend is handed out (SECMEM_ENOBACKEND) until it is all freed and a
 * secure backend is probed.  With the secure backend in use it succeeds
 * even while memory is live.  A library older than 0.2.0 rejects the
 * flag (SECMEM_EINVAL), so a program that checks the return value fails
 * closed there too.
 *
 * Return: 0, or -1 with errno set (ENOSYS for SECMEM_ENOBACKEND, EBUSY,
 * EINVAL for unknown or contradictory flags, EPERM for an insecure
 * backend after SECMEM_INIT_REFUSE_INSECURE).
 */
SECMEM_API int secmem_init(unsigned int flags);

/**
 * secmem_set_fork_policy() - what a child process created by fork() gets.
 * @policy: SECMEM_FORK_DROP (the default) or SECMEM_FORK_COPY.
 *
 * SECMEM_FORK_DROP: the arenas are MADV_DONTFORK; the child does not
 * inherit the secrets, the parent's pointers fault there (secmem_free() of
 * one does nothing), and the child starts with an empty allocator.
 *
 * SECMEM_FORK_COPY: the child gets a private copy of every live
 * allocation at the same address, in new secret memory of its own (as
 * fork() gives ordinary memory), so the parent's pointers stay valid in
 * the child.  The copy is made in the child before fork() returns in
 * either process; the forking thread of the parent waits for it.  Other
 * threads of the parent that write secret memory during the fork may or
 * may not have their writes seen by the child.  If the child cannot get
 * the memory for its copy it aborts with a message.  For programs that
 * keep all their heap here (libsecmem-preload's heap mode).
 *
 * May be called at any time; applies to existing arenas too.
 *
 * Return: 0, or -1 with errno EINVAL for an unknown @policy, its only
 * failure (SECMEM_EINVAL).
 */
SECMEM_API int secmem_set_fork_policy(int policy);

/**
 * secmem_backend() - the backend in use, probing it if needed.
 *
 * Return: SECMEM_BACKEND_NONE if no usable backend exists.
 */
SECMEM_API enum secmem_backend secmem_backend(void);

/**
 * secmem_backend_name() - short name of a backend.
 * Return: "unmapped-memfd", "memfd-secret", "mlock" or "none"; never NULL.
 */
SECMEM_API const char *secmem_backend_name(enum secmem_backend backend);

/**
 * secmem_malloc() - allocate @size bytes of secret memory.
 *
 * The memory is aligned for any object type (16 bytes).  @size 0 returns a
 * unique pointer that may be freed.  Freshly allocated memory happens to
 * be zero, but only secmem_calloc() promises it.
 *
 * Return: the memory, or NULL with errno and secmem_last_error() set.
 */
SECMEM_API SECMEM_MALLOC void *secmem_malloc(size_t size);

/**
 * secmem_calloc() - allocate @nmemb * @size zeroed bytes.
 * Return: as secmem_malloc(); SECMEM_EOVERFLOW if the product overflows,
 * with errno ENOMEM as calloc(3) and secmem_malloc(SIZE_MAX) set it.
 */
SECMEM_API SECMEM_MALLOC void *secmem_calloc(size_t nmemb, size_t size);

/**
 * secmem_realloc() - resize an allocation, preserving its contents.
 * @ptr:  NULL (then this is secmem_malloc()) or a live allocation.
 * @size: the new size; 0 frees @ptr and returns a new minimal allocation.
 *
 * Bytes that are no longer part of the allocation are zeroed.  On failure
 * @ptr is left untouched.  An allocation from secmem_alloc_pages() stays
 * page-granular.  An allocation that secmem_wiped() found wiped cannot be
 * resized: SECMEM_EWIPED (errno EIO), whatever @size.  Nor can a
 * secmem_alloc_pages() block that secmem_protect() made SECMEM_READONLY
 * or SECMEM_NOACCESS: SECMEM_EINVAL (errno EACCES), whatever @size, and
 * the block keeps its contents and its protection; make it
 * SECMEM_READWRITE first, and protect the result again.
 *
 * Return: the (possibly moved) memory, or NULL with errno set.
 */
SECMEM_API void *secmem_realloc(void *ptr, size_t size);

/**
 * secmem_free() - zero and release an allocation.
 * @ptr: NULL (no-op), or memory from any libsecmem allocation function,
 *       including secmem_alloc_pages() (whatever its protection).
 *
 * Checks the allocation's canary first.  Aborts with a message on an
 * overwritten canary, a double free, or a pointer libsecmem did not return.
 * An allocation that secmem_wiped() found wiped is released without a
 * touch: neither checked nor zeroed (the kernel took its pages).  In a
 * child of fork() under SECMEM_FORK_DROP, an address in the parent's
 * arenas (which the child does not have) is a no-op that touches
 * nothing.
 */
SECMEM_API void secmem_free(void *ptr);

/**
 * secmem_free_if_owned() - secmem_free() @ptr if it is libsecmem's.
 * @ptr: any pointer, NULL included.
 *
 * For code that frees pointers of two allocators through one function
 * (an OpenSSL secure free, a malloc replacement): one lookup instead of
 * secmem_owns() and then secmem_free().  A pointer outside every arena is
 * left alone; one inside an arena that is not a live allocation's start
 * aborts, as in secmem_free().  In a fork child under SECMEM_FORK_DROP, an
 * address in the parent's arenas is released as secmem_free() releases
 * it, with no touch, and counts as libsecmem's (1): the other allocator
 * must not get it.
 *
 * Return: 1 if @ptr was freed (or was the parent's), 0 if it is not
 * libsecmem's (or NULL).
 */
SECMEM_API int secmem_free_if_owned(void *ptr);

/**
 * secmem_owns() - whether @ptr points into memory libsecmem handed out.
 * @ptr: any pointer, NULL included.
 *
 * Unlike secmem_free() and secmem_usable_size() this never aborts: it is
 * the "is this secure memory?" query of integrations such as libgcrypt's
 * is-secure callback or OpenSSL's CRYPTO_secure_allocated().  A pointer
 * anywhere inside a live allocation counts (not only its start); freed
 * memory, guard pages and foreign pointers do not.
 *
 * Return: 1 if @ptr is inside a live allocation, else 0.
 */
SECMEM_API int secmem_owns(const void *ptr);

/**
 * secmem_strdup() - copy the string @s into secret memory.
 * Return: the copy, to be released with secmem_free(), or NULL with errno
 * set (EINVAL if @s is NULL).
 */
SECMEM_API SECMEM_MALLOC char *secmem_strdup(const char *s);

/**
 * secmem_strndup() - copy at most @n bytes of @s, always NUL-terminated.
 * Return: as secmem_strdup().
 */
SECMEM_API SECMEM_MALLOC char *secmem_strndup(const char *s, size_t n);

/**
 * secmem_usable_size() - bytes usable at @ptr (at least what was asked).
 * Return: 0 for NULL; aborts like secmem_free() for a foreign pointer, and
 * for the parent's pointer in a fork child.
 */
SECMEM_API size_t secmem_usable_size(const void *ptr);

/**
 * secmem_aligned_alloc() - allocate @size bytes aligned to @alignment.
 * @alignment: a power of two (any size; above the page size costs pages).
 * Return: as secmem_malloc(); SECMEM_EINVAL if @alignment is not a power
 * of two.  Free with secmem_free().
 */
SECMEM_API SECMEM_MALLOC void *secmem_aligned_alloc(size_t alignment,
						    size_t size);

/**
 * secmem_alloc_pages() - allocate whole pages for secmem_protect().
 * @size: bytes, rounded up to the page size; 0 is SECMEM_EINVAL.
 *
 * The pages start page-aligned and have a guard page (PROT_NONE) on each
 * side, so a linear overflow or underflow faults.  They need no canary.
 * Initially SECMEM_READWRITE.  Free with secmem_free().
 *
 * Return: the memory, or NULL with errno set.
 */
SECMEM_API SECMEM_MALLOC void *secmem_alloc_pages(size_t size);

/**
 * secmem_protect() - change the protection of a secmem_alloc_pages() block.
 * @ptr:  exactly what secmem_alloc_pages() returned.
 * @prot: SECMEM_NOACCESS, SECMEM_READONLY or SECMEM_READWRITE.
 *
 * Each distinct protection splits the arena mapping; keep the number of
 * differently protected blocks well below vm.max_map_count.
 *
 * Return: 0, or -1 with errno EINVAL (@ptr not from secmem_alloc_pages(),
 * bad @prot) or ENOMEM (mapping limit).
 */
SECMEM_API int secmem_protect(void *ptr, int prot);

/**
 * secmem_fd_create() - a file of @size bytes of secret memory.
 * @size:  bytes, rounded up to the page size; must not be 0.
 * @flags: SECMEM_FD_SEAL, SECMEM_FD_NOCLOEXEC.
 *
 * For handing to another process or to a VMM as guest memory; map it with
 * MAP_SHARED.  Uses the same backend as the heap (and needs the same
 * opt-in for the mlock backend, where the memory is NOT locked until the
 * receiver mlock()s it).  SECMEM_FD_SEAL adds F_SEAL_GROW, F_SEAL_SHRINK
 * and F_SEAL_SEAL; memfd_secret files cannot be sealed but their size is
 * fixed once set, which is the same guarantee.  Memory is charged against
 * RLIMIT_MEMLOCK of whoever maps it, not here.
 *
 * Return: the file descriptor, or -1 with errno set.
 */
SECMEM_API int secmem_fd_create(size_t size, unsigned int flags);

/**
 * secmem_wiped() - whether the kernel wiped memory that libsecmem holds.
 *
 * With /sys/kernel/mm/unmapped/hibernation = wipe (secmem's kernel), the
 * kernel takes every page of every secret file before it hibernates, for
 * good: an access through a mapping then gets SIGBUS, read() and write()
 * EIO.  Call this after a resume before touching, allocating,
 * reallocating or freeing secret memory: it probes the file of each arena
 * (heap and secmem_alloc_pages() memory) with an allocating fallocate()
 * of one byte, which fails with EIO on a wiped file, and never reads a
 * secret.  Arenas found wiped are dead from then on: nothing is allocated
 * from them, and secmem_free() of an allocation in one only releases the
 * bookkeeping (no canary check, no zeroing); secmem_realloc() of it fails
 * with SECMEM_EWIPED (EIO).  A dead arena is unmapped when its last
 * allocation is freed; secmem_owns() and secmem_usable_size() still work.
 *
 * Only the unmapped memfd backend (MFD_UNMAPPED, the one libsecmem uses
 * on secmem's kernel) can be probed: memfd_secret(2) files refuse
 * fallocate(), so with that backend (SECMEM_INIT_NO_UNMAPPED on secmem's
 * kernel) a wipe goes unseen here.  Stock kernels never wipe (they refuse
 * to hibernate while a secret file exists), and the mlock backend is
 * never wiped.  Files of secmem_fd_create(): secmem_fd_wiped().
 *
 * Since 0.2.0.
 *
 * Return: 1 while an allocation in wiped memory is live (until all of
 * them are freed), 0 if none is, -1 with errno set if a file could not be
 * probed and none was found wiped.
 */
SECMEM_API int secmem_wiped(void);

/**
 * secmem_fd_wiped() - whether the kernel wiped the file @fd.
 * @fd: a descriptor from secmem_fd_create(), open for writing.
 *
 * The probe of secmem_wiped(), on one file: with the same limits (a
 * memfd_secret file always answers 0).  It may allocate the file's first
 * page if it has none yet.  Since 0.2.0.
 *
 * Return: 1 if the file was wiped, 0 if not, -1 with errno set (EBADF
 * for a bad or read-only @fd).
 */
SECMEM_API int secmem_fd_wiped(int fd);

/**
 * secmem_trim() - give memory that holds no secret back to the kernel.
 *
 * Each heap keeps arenas whose allocations were all freed, mapped and
 * counted against RLIMIT_MEMLOCK, for reuse (up to 32 MiB per heap), and
 * one empty slab per size class in its smallest arenas.  This unmaps
 * them all: every arena that holds no live allocation is returned to the
 * kernel and its RLIMIT_MEMLOCK charge dropped, as OpenSSL's
 * CRYPTO_secure_malloc_done() and libgcrypt's GCRYCTL_TERM_SECMEM do, but
 * without requiring every allocation to be freed first.  Live
 * allocations, the arenas that hold them and their contents are
 * untouched, and so are arenas secmem_wiped() found wiped.  Later
 * allocations map new arenas (new pages to fault in).  For a program
 * that is done with a batch of secrets, or about to idle.  Since 0.2.0.
 *
 * Return: 1 if memory was unmapped, 0 if none was idle.  Never fails;
 * errno is left as it was.
 */
SECMEM_API int secmem_trim(void);

/**
 * secmem_memzero() - zero @len bytes at @ptr; never optimised away.
 */
SECMEM_API void secmem_memzero(void *ptr, size_t len);

/**
 * secmem_memeq() - compare in time that depends only on @len.
 * Return: 1 if the @len bytes at @a and @b are equal, else 0.
 */
SECMEM_API int secmem_memeq(const void *a, const void *b, size_t len);

/**
 * secmem_stats() - fill @stats with a snapshot of the allocator.
 * Return: 0, or -1 with errno EINVAL if @stats is NULL, its only failure
 * (SECMEM_EINVAL).
 */
SECMEM_API int secmem_stats(struct secmem_stats *stats);

/**
 * secmem_last_error() - SECMEM_E* code of the calling thread's last failure.
 * Return: SECMEM_OK if nothing failed yet.  Success does not reset it.
 */
SECMEM_API int secmem_last_error(void);

/**
 * secmem_strerror() - a sentence describing @err and what to do about it.
 * @err: a SECMEM_E* code, or an errno value.
 *
 * For the calling thread's last error the sentence carries its numbers
 * (e.g. "RLIMIT_MEMLOCK is 8 MiB and 8 MiB are in use ...").
 *
 * Return: a string valid until the next call in the same thread.
 */
SECMEM_API const char *secmem_strerror(int err);

/*
 * Error codes as return values (since 0.2.0).
 *
 * Each function below does what the function without _r does, and
 * returns SECMEM_OK (0) or the SECMEM_E* code of its failure, the code
 * secmem_last_error() would give right after it; its result goes to an
 * output parameter, which is left untouched on failure (as
 * posix_memalign() does).  errno and the thread's last error are still
 * set on failure, as by the plain function.  A NULL output parameter is
 * SECMEM_EINVAL (errno EINVAL).
 *
 * They are for bindings and other callers that must not depend on
 * thread-local state: a goroutine that calls secmem_malloc() and then
 * secmem_last_error() may be moved to another OS thread in between and
 * read that thread's error.  secmem_strerror_r() gives the sentence for
 * a code into the caller's buffer, without the calling thread's state.
 *
 * The functions without an _r form do not need one: secmem_free(),
 * secmem_free_if_owned(), secmem_owns(), secmem_usable_size(),
 * secmem_trim(), secmem_memzero(), secmem_memeq(), secmem_version(),
 * secmem_backend_name(), secmem_last_error() and secmem_strerror() do
 * not fail (misuse aborts), and secmem_set_fork_policy() and
 * secmem_stats() fail only with SECMEM_EINVAL.
 */

/** secmem_init() returning its code. */
SECMEM_API int secmem_init_r(unsigned int flags);

/**
 * secmem_backend_r() - the backend in use in *@backend, probing it.
 * Return: SECMEM_OK, or why there is none (SECMEM_ENOBACKEND, or
 * SECMEM_ESYSCALL when the probe itself failed and will be retried).
 */
SECMEM_API int secmem_backend_r(enum secmem_backend *backend);

/** secmem_malloc() into *@ptr. */
SECMEM_API int secmem_malloc_r(void **ptr, size_t size);

/** secmem_calloc() into *@ptr. */
SECMEM_API int secmem_calloc_r(void **ptr, size_t nmemb, size_t size);

/**
 * secmem_realloc_r() - secmem_realloc() of *@ptr, the result in *@ptr.
 * On failure *@ptr is still the (unchanged) allocation.
 */
SECMEM_API int secmem_realloc_r(void **ptr, size_t size);

/** secmem_aligned_alloc() into *@ptr. */
SECMEM_API int secmem_aligned_alloc_r(void **ptr, size_t alignment,
				      size_t size);

/** secmem_alloc_pages() into *@ptr. */
SECMEM_API int secmem_alloc_pages_r(void **ptr, size_t size);

/** secmem_strdup() into *@copy. */
SECMEM_API int secmem_strdup_r(char **copy, const char *s);

/** secmem_strndup() into *@copy. */
SECMEM_API int secmem_strndup_r(char **copy, const char *s, size_t n);

/** secmem_protect() returning its code. */
SECMEM_API int secmem_protect_r(void *ptr, int prot);

/** secmem_fd_create() with the descriptor in *@fd. */
SECMEM_API int secmem_fd_create_r(int *fd, size_t size, unsigned int flags);

/** secmem_wiped() with its answer (1 or 0) in *@wiped. */
SECMEM_API int secmem_wiped_r(int *wiped);

/** secmem_fd_wiped() with its answer (1 or 0) in *@wiped. */
SECMEM_API int secmem_fd_wiped_r(int fd, int *wiped);

/**
 * secmem_strerror_r() - the sentence for @err in the caller's buffer.
 * @err:    a SECMEM_E* code, or an errno value.
 * @buf:    where to write it, NUL-terminated, cut to @buflen - 1 bytes;
 *          may be NULL if @buflen is 0.
 * @buflen: size of @buf.
 *
 * The sentence of secmem_strerror() without the calling thread's
 * particulars (which system call failed, the allocation's size): the
 * same for a code in every thread.  For SECMEM_EMEMLOCK it gives the
 * RLIMIT_MEMLOCK limit and libsecmem's use at the time of the call.
 *
 * Return: the length of the whole sentence (as snprintf() does): the
 * buffer was too small if it is @buflen or more.
 */
SECMEM_API size_t secmem_strerror_r(int err, char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif

#endif /* SECMEM_H */
