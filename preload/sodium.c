// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sodium mode: libsodium's guarded allocations on secret memory, with
 * libsodium's semantics:
 *
 *   [guard][header ... canary][user data][guard]
 *
 * The user data ends at the trailing guard page, so an overflow faults;
 * the 16-byte canary just before it is checked by sodium_free(), which
 * aborts if it was overwritten; the region is filled with 0xdb on
 * allocation and zeroed on free; sodium_mprotect_*() change the
 * protection of the whole block.  The block is a secmem_alloc_pages()
 * run, whose guard pages libsecmem provides.  The header sits at a fixed
 * offset before the user pointer and, because the block is the smallest
 * number of pages that holds header, canary and data, always in the
 * block's first page: the block is found from the pointer alone, even
 * while the block is PROT_NONE.
 *
 * Pointers that are not such blocks (libsodium's own, when the mode was
 * off, cannot exist: the mode is fixed for the process) are passed to
 * libsodium's sodium_free().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "secmem.h"
#include "preload.h"

#define CANARY_SIZE	16
#define GARBAGE		0xdb
#define HDR_MAGIC	0x736d736f6469756dULL	/* "smsodium" */

struct hdr {
	uint64_t magic;
	void *user;
	size_t size;
	size_t total;
};

#define HDR_OFF	(sizeof(struct hdr) + CANARY_SIZE)

static unsigned char canary[CANARY_SIZE];
static pthread_once_t canary_once = PTHREAD_ONCE_INIT;

static void canary_init(void)
{
	if (getrandom(canary, sizeof(canary), 0) != sizeof(canary))
		preload_die("sodium: getrandom failed for the canary: %m");
}

/*
 * libsodium's definition of @name: in the global scope, or in a libsodium
 * loaded by dlopen(RTLD_LOCAL), which only a handle of its own finds (see
 * next() in openssl.c).
 */
static void *next(const char *name)
{
	static const char *const sonames[] = { "libsodium.so.23",
					       "libsodium.so.26" };
	void *f;
	size_t i;

	preload_nested++;
	f = dlsym(RTLD_NEXT, name);
	for (i = 0; !f && i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		void *h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);

		if (h)
			f = dlsym(h, name);
	}
	preload_nested--;
	if (!f)
		preload_die("%s not found: is libsodium.so.23 loaded?", name);
	return f;
}

/* libsodium's @fn, looked up once. */
#define NEXT(fn) PRELOAD_NEXT(next, fn)

static bool on(void)
{
	return preload_modes() & PRELOAD_SODIUM;
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* The block of @ptr, from its address only (see the top of the file). */
static void *block_of(void *ptr)
{
	uintptr_t h = (uintptr_t)ptr - HDR_OFF;

	return (void *)(h & ~(uintptr_t)(page_size() - 1));
}

PRELOAD_API void *sodium_malloc(size_t size);
PRELOAD_API void *sodium_allocarray(size_t count, size_t size);
PRELOAD_API void sodium_free(void *ptr);
PRELOAD_API int sodium_mprotect_noaccess(void *ptr);
PRELOAD_API int sodium_mprotect_readonly(void *ptr);
PRELOAD_API int sodium_mprotect_readwrite(void *ptr);

static int alloc_failed;

void *sodium_malloc(size_t size)
{
	size_t pg = page_size(), total;
	unsigned char *block, *user;
	struct hdr *h;

	if (!on())
		return NEXT(sodium_malloc)(size);
	pthread_once(&canary_once, canary_init);
	if (size > SIZE_MAX - HDR_OFF - pg) {
		errno = ENOMEM;
		return NULL;
	}
	total = (size + HDR_OFF + pg - 1) / pg * pg;
	block = SM(secmem_alloc_pages(total));
	if (!block) {
		preload_warn_once(&alloc_failed,
				  "sodium: sodium_malloc(%zu) failed: %s", size,
				  secmem_strerror(secmem_last_error()));
		errno = ENOMEM;
		return NULL;
	}
	atomic_fetch_add_explicit(&preload_served_sodium, 1,
				  memory_order_relaxed);
	preload_stats_tick();
	user = block + total - size;
	h = (struct hdr *)(user - HDR_OFF);
	*h = (struct hdr){ .magic = HDR_MAGIC, .user = user, .size = size,
			   .total = total };
	memcpy(user - CANARY_SIZE, canary, CANARY_SIZE);
	memset(user, GARBAGE, size);
	return user;
}

void *sodium_allocarray(size_t count, size_t size)
{
	if (!on())
		return NEXT(sodium_allocarray)(count, size);
	if (count > 0 && size >= SIZE_MAX / count) {
		errno = ENOMEM;
		return NULL;
	}
	return sodium_malloc(count * size);
}

/* @ptr's block made read-write, or NULL if @ptr is not one of ours. */
static struct hdr *hdr_of(void *ptr)
{
	void *block = block_of(ptr);
	struct hdr *h = (struct hdr *)((unsigned char *)ptr - HDR_OFF);

	if (SM(secmem_protect(block, SECMEM_READWRITE)) < 0)
		return NULL;
	if (h->magic != HDR_MAGIC || h->user != ptr)
		return NULL;
	return h;
}

void sodium_free(void *ptr)
{
	struct hdr *h;

	if (!on())
		return NEXT(sodium_free)(ptr);
	if (!ptr)
		return;
	h = hdr_of(ptr);
	if (!h) {
		/* Not a block of this mode: libsodium's, or a bad pointer. */
		NEXT(sodium_free)(ptr);
		return;
	}
	if (!secmem_memeq((unsigned char *)ptr - CANARY_SIZE, canary,
			 CANARY_SIZE)) {
		/* As libsodium's sodium_misuse(): the heap is not trusted. */
		static const char msg[] = "libsecmem-preload: sodium_free(): "
					  "canary overwritten (buffer "
					  "underflow); aborting\n";
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			abort();
		abort();
	}
	SM_VOID(secmem_free(block_of(ptr)));	/* zeroes the block */
}

static int mprotect_to(void *ptr, int prot,
		       int (*fallback)(void *))
{
	void *block = block_of(ptr);

	if (!ptr) {
		errno = EINVAL;
		return -1;
	}
	/* The header is read only if the block is ours (secmem_protect). */
	if (SM(secmem_protect(block, SECMEM_READWRITE)) < 0)
		return fallback(ptr);
	if (((struct hdr *)((unsigned char *)ptr - HDR_OFF))->magic !=
	    HDR_MAGIC) {
		errno = EINVAL;
		return -1;
	}
	return SM(secmem_protect(block, prot));
}

int sodium_mprotect_noaccess(void *ptr)
{
	if (!on())
		return NEXT(sodium_mprotect_noaccess)(ptr);
	return mprotect_to(ptr, SECMEM_NOACCESS, NEXT(sodium_mprotect_noaccess));
}

int sodium_mprotect_readonly(void *ptr)
{
	if (!on())
		return NEXT(sodium_mprotect_readonly)(ptr);
	return mprotect_to(ptr, SECMEM_READONLY, NEXT(sodium_mprotect_readonly));
}

int sodium_mprotect_readwrite(void *ptr)
{
	if (!on())
		return NEXT(sodium_mprotect_readwrite)(ptr);
	return mprotect_to(ptr, SECMEM_READWRITE,
			   NEXT(sodium_mprotect_readwrite));
}
