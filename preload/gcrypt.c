// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gcrypt mode: libgcrypt's memory served by libsecmem, its secure memory
 * above all.
 *
 * Every allocation of libgcrypt 1.10 goes through one dispatcher
 * (do_malloc() in its global.c), which calls the five handlers of
 * gcry_set_allocation_handler() when they are set: the program's calls
 * (gcry_malloc_secure() and the rest) and libgcrypt's own allocations,
 * made inside a computation (the limbs of the secure MPIs that
 * gcry_mpi_powm() or gcry_pk_genkey() create or grow, secure cipher, hash
 * and MAC contexts, S-expressions holding secure MPIs, the secure random
 * pool).  Those internal calls never go through the PLT (libgcrypt.so.20
 * resolves no allocation function of its own through it), so
 * interposing the exported functions alone would reach only the
 * program's calls: this mode installs the handlers.
 *
 * When: gcry_set_allocation_handler() runs libgcrypt's initialization,
 * after which the gcry_control() settings that must come first
 * (GCRYCTL_FORCE_FIPS_MODE, GCRYCTL_DISABLE_HWF, GCRYCTL_ENABLE_M_GUARD)
 * are ignored.  So the handlers are installed by the program's first call
 * of gcry_check_version(), which libgcrypt requires before any other use,
 * or of one of libgcrypt's exported secure allocators, whichever comes
 * first, each of which this file interposes.  A program that follows
 * libgcrypt's rule has no secure allocation in libgcrypt's own pool then,
 * which the handlers could not free.
 *
 * FIPS mode: libgcrypt 1.10 ignores gcry_set_allocation_handler() without
 * a word while in FIPS mode (LIBGCRYPT_FORCE_FIPS_MODE,
 * /etc/gcrypt/fips_enabled, /proc/sys/crypto/fips_enabled or the
 * program's GCRYCTL_FORCE_FIPS_MODE).  The installation is therefore
 * proven by its effect, an allocation that must reach the handlers; if it
 * does not, the program is stopped (preload_die()) rather than left to
 * keep its keys in libgcrypt's pool.
 *
 * The handlers keep libgcrypt's own rules (its stdmem.c): a size of 0 is
 * EINVAL, realloc() keeps secure memory secure, free() wipes it, and a
 * secure allocation that fails is an allocation failure, never ordinary
 * memory.
 *
 * The mode declares the few libgcrypt types and constants it uses itself:
 * the preload builds without libgcrypt's headers and links only
 * libsecmem; libgcrypt's functions are found with dlvsym().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secmem.h"
#include "preload.h"

/* The symbol version of libgcrypt.so.20's functions (since 1.6). */
#define GCRY_VER "GCRYPT_1.6"

/* From gcrypt.h (enum gcry_ctl_cmds): a stable ABI. */
#define GCRYCTL_FIPS_MODE_P	55

typedef void *(*gcry_handler_alloc_t)(size_t n);
typedef int (*gcry_handler_secure_check_t)(const void *p);
typedef void *(*gcry_handler_realloc_t)(void *p, size_t n);
typedef void (*gcry_handler_free_t)(void *p);
typedef struct gcry_mpi *gcry_mpi_t;

PRELOAD_API const char *gcry_check_version(const char *req_version);
PRELOAD_API void
gcry_set_allocation_handler(gcry_handler_alloc_t alloc,
			    gcry_handler_alloc_t alloc_secure,
			    gcry_handler_secure_check_t is_secure,
			    gcry_handler_realloc_t realloc_fn,
			    gcry_handler_free_t free_fn);
PRELOAD_API void *gcry_malloc_secure(size_t n);
PRELOAD_API void *gcry_calloc_secure(size_t n, size_t m);
PRELOAD_API void *gcry_xmalloc_secure(size_t n);
PRELOAD_API void *gcry_xcalloc_secure(size_t n, size_t m);
PRELOAD_API gcry_mpi_t gcry_mpi_snew(unsigned int nbits);
/* libgcrypt's, called only through NEXT(). */
void *gcry_malloc(size_t n);
void gcry_free(void *p);
int gcry_is_secure(const void *p);
unsigned int gcry_control(int cmd, ...);

/*
 * libgcrypt's definition of @name: after the preload in the global scope,
 * or in a libgcrypt loaded by dlopen(RTLD_LOCAL), which only a handle of
 * its own finds (see next() in openssl.c).
 */
static void *next(const char *name)
{
	void *f;

	preload_nested++;
	f = dlvsym(RTLD_NEXT, name, GCRY_VER);
	if (!f) {
		void *h = dlopen("libgcrypt.so.20", RTLD_LAZY | RTLD_NOLOAD);

		if (h)
			f = dlvsym(h, name, GCRY_VER);
	}
	preload_nested--;
	if (!f)
		preload_die("%s@%s not found: is libgcrypt.so.20 loaded?", name,
			    GCRY_VER);
	return f;
}

/* libgcrypt's @fn, looked up once. */
#define NEXT(fn) PRELOAD_NEXT(next, fn)

static bool on(void)
{
	return preload_modes() & PRELOAD_GCRYPT;
}

/* --- the handlers ------------------------------------------------------ */

/* Set on the installing thread while it proves the handlers are in use. */
static __thread bool proving __attribute__((tls_model("initial-exec")));
static __thread bool proven __attribute__((tls_model("initial-exec")));
static int alloc_failed, ordinary_failed;

static void *served(void *p)
{
	preload_stats_tick();
	if (p)
		atomic_fetch_add_explicit(&preload_served_gcrypt, 1,
					  memory_order_relaxed);
	return p;
}

/*
 * libsecmem's @n bytes for a handler, @n = 0 being EINVAL as in
 * libgcrypt.  One that libsecmem cannot serve is told once, and is
 * malloc()'s memory if not @secure (see h_malloc()), an allocation
 * failure (ENOMEM) if @secure.
 */
static void *h_alloc(size_t n, bool secure)
{
	void *p;

	if (!n) {
		errno = EINVAL;
		return NULL;
	}
	p = served(SM(secmem_malloc(n)));
	if (p)
		return p;
	if (!secure) {
		preload_warn_once(&ordinary_failed,
				  "gcrypt: an ordinary allocation of %zu bytes "
				  "failed: %s (served by malloc(), as without "
				  "the mode; libgcrypt's secure allocations "
				  "never are)", n,
				  secmem_strerror(secmem_last_error()));
		return malloc(n);
	}
	preload_warn_once(&alloc_failed,
			  "gcrypt: a secure allocation of %zu bytes failed: %s "
			  "(libgcrypt sees an allocation failure; nothing "
			  "falls back to ordinary memory)", n,
			  secmem_strerror(secmem_last_error()));
	errno = ENOMEM;
	return NULL;
}

/*
 * libgcrypt's ordinary allocations are libsecmem's too: libgcrypt copies
 * secure S-expressions into them and frees the copies unwiped
 * (gcry_pk_sign() and gcry_pk_decrypt() take the private key out of its
 * S-expression with gcry_sexp_find_token(), which allocates ordinary
 * memory), and programs built on libgcrypt allocate their own buffers
 * here (gpg-agent its Assuan and estream buffers).  One that libsecmem
 * cannot serve gets malloc()'s memory, as without the mode: libgcrypt
 * promises these no more, and its xmalloc() ends the program on a
 * failure.
 */
static void *h_malloc(size_t n)
{
	if (proving)
		proven = true;
	return h_alloc(n, false);
}

static void *h_malloc_secure(size_t n)
{
	return h_alloc(n, true);
}

/*
 * libgcrypt's own secure pool, where it was mapped when the handlers were
 * installed.  A program that follows libgcrypt's rules has nothing there
 * (the handlers come first), but one that used libgcrypt before its first
 * gcry_check_version() (libgcrypt initializes itself then, with a warning
 * to syslog) may hold blocks of the pool, which it then frees and
 * reallocates through the handlers: glibc's free() of such a block aborts
 * the program.  The pool's blocks are left where they are (libgcrypt
 * wipes the pool at GCRYCTL_TERM_SECMEM and at exit) and count as secure.
 * Written once, before the handlers are installed; read-only after.
 */
#define MAX_POOLS 16
static struct {
	uintptr_t lo, hi;
} pools[MAX_POOLS];
static int npools;

static bool in_pool(const void *p)
{
	int i;

	for (i = 0; i < npools; i++)
		if ((uintptr_t)p >= pools[i].lo && (uintptr_t)p < pools[i].hi)
			return true;
	return false;
}

/*
 * True for the ordinary allocations libsecmem serves as well: libgcrypt
 * then wipes the S-expressions in them on release, and the MPIs it reads
 * from them are secure MPIs.
 */
static int h_is_secure(const void *p)
{
	return SM(secmem_owns(p)) || in_pool(p);
}

/*
 * libgcrypt passes neither NULL nor 0 here (it turns them into an
 * allocation and a free).  libsecmem's blocks stay libsecmem's, and
 * secmem_realloc() zeroes what it leaves behind; malloc()'s (made before
 * the handlers were installed, or after a failure above) stay malloc()'s;
 * a block of libgcrypt's pool moves to libsecmem, with as many bytes as
 * the new size wants and the pool still has after it (libgcrypt keeps
 * the block's own size to itself).
 */
static void *h_realloc(void *p, size_t n)
{
	void *q;
	int i;

	if (SM(secmem_owns(p))) {
		q = SM(secmem_realloc(p, n));
		if (!q)
			errno = ENOMEM;
		return q;
	}
	for (i = 0; i < npools; i++) {
		uintptr_t a = (uintptr_t)p;

		if (a < pools[i].lo || a >= pools[i].hi)
			continue;
		q = h_malloc_secure(n);
		if (q)
			memcpy(q, p, n < pools[i].hi - a ? n : pools[i].hi - a);
		return q;
	}
	return realloc(p, n);
}

/* secmem_free_if_owned() zeroes the whole allocation. */
static void h_free(void *p)
{
	if (!SM(secmem_free_if_owned(p)) && !in_pool(p))
		free(p);
}

/*
 * Record in pools[] the ranges that libgcrypt's own gcry_is_secure() (the
 * handlers are not installed yet) calls secure: in the process's private
 * writable mappings that are not files, page by page, the ends of a range
 * found to the byte.  libgcrypt maps its pool with mmap(), or takes it
 * from malloc() when that fails.
 */
static void find_pools_in_maps(void)
{
	int (*is_secure)(const void *) = NEXT(gcry_is_secure);
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	char line[512];
	FILE *maps;

	/* No /proc: a program that keeps libgcrypt's rules needs none. */
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return;
	while (npools < MAX_POOLS && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi, ino;
		char perms[5], name[64] = "";
		uintptr_t a, start = 0, l, h;

		if (sscanf(line, "%lx-%lx %4s %*s %*s %lu %63s", &lo, &hi,
			   perms, &ino, name) < 4 ||
		    strncmp(perms, "rw", 2) || perms[3] != 'p' || ino ||
		    (name[0] && strcmp(name, "[heap]") &&
		     strncmp(name, "[anon:", 6)))
			continue;
		for (a = lo; a <= hi && npools < MAX_POOLS; a += pg) {
			bool in = a < hi && is_secure((void *)a);

			if (in && !start) {
				/* The first secure byte of the page before. */
				for (l = a > lo ? a - pg : a, h = a; l < h;) {
					uintptr_t m = l + (h - l) / 2;

					if (is_secure((void *)m))
						h = m;
					else
						l = m + 1;
				}
				start = l;
			} else if (!in && start) {
				/* The first byte after, in the page before. */
				for (l = a - pg, h = a; l < h;) {
					uintptr_t m = l + (h - l) / 2;

					if (is_secure((void *)m))
						l = m + 1;
					else
						h = m;
				}
				pools[npools].lo = start;
				pools[npools++].hi = l;
				start = 0;
			}
		}
	}
	fclose(maps);
}

/* stdio's buffers are glibc's, whatever the heap mode. */
static void find_pools(void)
{
	preload_nested++;
	find_pools_in_maps();
	preload_nested--;
}

/* --- installation ------------------------------------------------------ */

static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void install(void)
{
	void *p;

	find_pools();
	NEXT(gcry_set_allocation_handler)(h_malloc, h_malloc_secure,
					  h_is_secure, h_realloc, h_free);
	proving = true;
	proven = false;
	p = NEXT(gcry_malloc)(1);
	proving = false;
	NEXT(gcry_free)(p);
	if (proven)
		return;
	if (NEXT(gcry_control)(GCRYCTL_FIPS_MODE_P, 0))
		preload_die("gcrypt: libgcrypt is in FIPS mode, which ignores "
			    "gcry_set_allocation_handler(): its secure memory "
			    "cannot be served by libsecmem; stopping the "
			    "program rather than letting it run without the "
			    "protection it asked for (FIPS mode comes from "
			    "LIBGCRYPT_FORCE_FIPS_MODE, "
			    "/etc/gcrypt/fips_enabled, "
			    "/proc/sys/crypto/fips_enabled or the program's "
			    "GCRYCTL_FORCE_FIPS_MODE)");
	preload_die("gcrypt: libgcrypt ignored gcry_set_allocation_handler(): "
		    "its secure memory cannot be served by libsecmem; stopping "
		    "the program rather than letting it run without the "
		    "protection it asked for");
}

/*
 * With the mode on, the handlers are libgcrypt's once this returns (or
 * the program is gone); with it off, libgcrypt is left as it is.
 */
static void ensure(void)
{
	if (on())
		pthread_once(&install_once, install);
}

/* --- the interposed functions ------------------------------------------ */

const char *gcry_check_version(const char *req_version)
{
	ensure();
	return NEXT(gcry_check_version)(req_version);
}

/*
 * A program's own handlers would take libgcrypt's secure memory back out
 * of libsecmem: they are not installed while the mode is on.
 */
void gcry_set_allocation_handler(gcry_handler_alloc_t alloc,
				 gcry_handler_alloc_t alloc_secure,
				 gcry_handler_secure_check_t is_secure,
				 gcry_handler_realloc_t realloc_fn,
				 gcry_handler_free_t free_fn)
{
	static int refused;

	if (!on()) {
		NEXT(gcry_set_allocation_handler)(alloc, alloc_secure,
						  is_secure, realloc_fn,
						  free_fn);
		return;
	}
	ensure();
	preload_warn_once(&refused,
			  "gcrypt: the program's gcry_set_allocation_handler() "
			  "is not installed: libgcrypt's memory stays with "
			  "libsecmem's handlers");
}

void *gcry_malloc_secure(size_t n)
{
	ensure();
	return NEXT(gcry_malloc_secure)(n);
}

void *gcry_calloc_secure(size_t n, size_t m)
{
	ensure();
	return NEXT(gcry_calloc_secure)(n, m);
}

void *gcry_xmalloc_secure(size_t n)
{
	ensure();
	return NEXT(gcry_xmalloc_secure)(n);
}

void *gcry_xcalloc_secure(size_t n, size_t m)
{
	ensure();
	return NEXT(gcry_xcalloc_secure)(n, m);
}

gcry_mpi_t gcry_mpi_snew(unsigned int nbits)
{
	ensure();
	return NEXT(gcry_mpi_snew)(nbits);
}
