// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * heap mode: the malloc family of the whole process in secret memory.
 *
 * glibc supports replacing malloc by interposition: its own internal calls
 * (strdup, stdio buffers, getaddrinfo...) go through malloc@plt too.  The
 * replacement must cope with three things:
 *
 *  - allocations before the constructor ran (the dynamic linker's, libc's
 *    early setup) and calls made from inside libsecmem itself (its page
 *    maps and run descriptors are calloc()ed): both go to glibc, through
 *    its __libc_* entry points.  free() and the other functions that take
 *    a pointer tell the two apart with secmem_owns(), which never aborts.
 *    glibc's pointers stay glibc's (realloc() included); the constructor
 *    runs before main(), so what the program allocates is secret.
 *  - threads: libsecmem is thread-safe; the "inside libsecmem" flag is a
 *    thread-local of the initial-exec model, which never allocates.
 *  - fork: libsecmem's SECMEM_FORK_COPY, set for every mode by the
 *    constructor (common.c), gives the child its own copy of the heap.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secmem.h"
#include "preload.h"

bool preload_heap_active;

/* glibc's allocator, under the names it exports for this purpose. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);

typedef size_t usable_size_fn(void *);
static usable_size_fn *_Atomic libc_usable_size;

/*
 * glibc's malloc_usable_size(), which has no __libc_ name.  Looked up on
 * first use, whatever the mode: this file's malloc_usable_size() is the
 * process's in every mode, and before the lookup moved here it answered 0
 * for every pointer unless heap mode was on (its constructor did the
 * lookup), e.g. under the default openssl,sodium.
 */
static usable_size_fn *libc_usable_size_fn(void)
{
	usable_size_fn *f = atomic_load_explicit(&libc_usable_size,
						 memory_order_relaxed);

	if (f)
		return f;
	preload_nested++;	/* dlsym() may allocate: glibc's heap */
	f = (usable_size_fn *)dlsym(RTLD_NEXT, "malloc_usable_size");
	preload_nested--;
	if (!f)
		preload_die("glibc's malloc_usable_size not found");
	atomic_store(&libc_usable_size, f);
	return f;
}

void preload_heap_init(void)
{
	libc_usable_size_fn();
	__atomic_store_n(&preload_heap_active, true, __ATOMIC_RELEASE);
}

static inline bool active(void)
{
	return __atomic_load_n(&preload_heap_active, __ATOMIC_ACQUIRE) &&
	       !preload_nested;
}

/* Whether to serve this allocation; counts those left to glibc. */
static inline bool serve(void)
{
	if (active()) {
		atomic_fetch_add_explicit(&preload_served_heap, 1,
					  memory_order_relaxed);
		preload_stats_tick();
		return true;
	}
	if (preload_modes() & PRELOAD_HEAP)
		atomic_fetch_add_explicit(&preload_served_libc, 1,
					  memory_order_relaxed);
	return false;
}

static int alloc_failed;

/*
 * Out of secret memory: the program sees ENOMEM, as from malloc().  The
 * one warning is kept for that: a size no allocator can serve (beyond
 * PTRDIFF_MAX, which glibc refuses too, and programs try on purpose to
 * test their error paths) fails quietly, else it took the warning and a
 * later real shortage went unexplained.
 */
static void *failed(size_t size)
{
	int err = secmem_last_error();

	if (err != SECMEM_EOVERFLOW)
		preload_warn_once(&alloc_failed,
				  "heap: an allocation of %zu bytes failed: %s "
				  "(nothing falls back to ordinary memory)",
				  size, secmem_strerror(err));
	errno = ENOMEM;
	return NULL;
}

/*
 * Whether @ptr is the heap mode's: asked even while preload_nested is
 * set, which only says where new allocations go.  Code that runs on the
 * preload's behalf frees what it allocated on the program's: ld.so, in
 * the preload's own dlsym(), frees the message a failed dlsym() of the
 * program left (a heap-mode allocation) and glibc's free() of that
 * aborted ("free(): invalid pointer").  libsecmem's own metadata, freed
 * while it holds a heap lock, is glibc's, and the lookup of a pointer
 * outside every arena takes no lock.
 */
static inline bool heap_on(void)
{
	return __atomic_load_n(&preload_heap_active, __ATOMIC_ACQUIRE);
}

static inline bool ours(const void *ptr)
{
	return heap_on() && SM(secmem_owns(ptr));
}

PRELOAD_API void *malloc(size_t size);
PRELOAD_API void *calloc(size_t nmemb, size_t size);
PRELOAD_API void *realloc(void *ptr, size_t size);
PRELOAD_API void free(void *ptr);
PRELOAD_API int posix_memalign(void **memptr, size_t alignment, size_t size);
PRELOAD_API void *aligned_alloc(size_t alignment, size_t size);
PRELOAD_API void *memalign(size_t alignment, size_t size);
PRELOAD_API void *valloc(size_t size);
PRELOAD_API void *pvalloc(size_t size);
PRELOAD_API size_t malloc_usable_size(void *ptr);

void *malloc(size_t size)
{
	void *p;

	if (!serve())
		return __libc_malloc(size);
	preload_nested++;
	p = secmem_malloc(size ? size : 1);
	preload_nested--;
	return p ? p : failed(size);
}

void *calloc(size_t nmemb, size_t size)
{
	void *p;

	if (!serve())
		return __libc_calloc(nmemb, size);
	if (size && nmemb > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	preload_nested++;
	p = secmem_calloc(nmemb ? nmemb : 1, size ? size : 1);
	preload_nested--;
	return p ? p : failed(nmemb * size);
}

void free(void *ptr)
{
	int freed;

	if (!ptr)
		return;
	if (!heap_on()) {
		__libc_free(ptr);
		return;
	}
	freed = SM(secmem_free_if_owned(ptr));	/* see ours() */
	if (!freed)
		__libc_free(ptr);
}

void *realloc(void *ptr, size_t size)
{
	void *p;

	if (!ptr)
		return malloc(size);
	if (!ours(ptr))
		return __libc_realloc(ptr, size);
	if (!size) {		/* glibc: free and return NULL */
		free(ptr);
		return NULL;
	}
	preload_nested++;
	p = secmem_realloc(ptr, size);
	preload_nested--;
	return p ? p : failed(size);
}

static void *aligned(size_t alignment, size_t size)
{
	void *p;

	if (!serve())
		return __libc_memalign(alignment, size);
	preload_nested++;
	p = secmem_aligned_alloc(alignment, size ? size : 1);
	preload_nested--;
	if (!p && secmem_last_error() == SECMEM_EINVAL) {
		errno = EINVAL;
		return NULL;
	}
	return p ? p : failed(size);
}

int posix_memalign(void **memptr, size_t alignment, size_t size)
{
	void *p;
	int saved = errno;

	if (!alignment || alignment % sizeof(void *) ||
	    (alignment & (alignment - 1)))
		return EINVAL;
	p = aligned(alignment, size);
	if (!p) {
		int err = errno;

		errno = saved;
		return err;
	}
	*memptr = p;
	return 0;
}

void *aligned_alloc(size_t alignment, size_t size)
{
	if (!alignment || (alignment & (alignment - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(alignment, size);
}

void *memalign(size_t alignment, size_t size)
{
	/*
	 * glibc rounds a bad alignment up to a power of two, and refuses
	 * one above the largest (the rounding below would wrap to 0 and
	 * hand out a pointer with no alignment at all).
	 */
	if (alignment > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	if (alignment & (alignment - 1)) {
		size_t a = 1;

		while (a < alignment && a)
			a <<= 1;
		alignment = a;
	}
	return aligned(alignment ? alignment : 1, size);
}

/*
 * valloc() and pvalloc() are aligned() calls, whose glibc side is the
 * same as theirs: asking serve() here as well counted each one twice.
 */
void *valloc(size_t size)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (size > SIZE_MAX - pg) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(pg, (size + pg - 1) / pg * pg);
}

size_t malloc_usable_size(void *ptr)
{
	if (!ptr)
		return 0;
	if (ours(ptr))
		return SM(secmem_usable_size(ptr));
	return libc_usable_size_fn()(ptr);
}
