// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * openssl mode: OpenSSL 3's secure heap served by libsecmem.
 *
 * libcrypto.so.3 calls these through its PLT (JUMP_SLOT relocations) and
 * hands them to providers through its core dispatch table (R_X86_64_64
 * relocations), so a preloaded definition replaces both.  The preload
 * has no symbol versions at all: ld.so binds a versioned reference
 * (CRYPTO_secure_malloc@OPENSSL_3.0.0) to an unversioned definition in an
 * object without version information.  Without CRYPTO_secure_malloc_init() OpenSSL's
 * own secure heap falls back to plain CRYPTO_malloc(); here it is always
 * "initialised" and grows on demand, so private-key bignums
 * (BN_FLG_SECURE) and the secure PEM/DER decoding buffers land in secret
 * memory.  When the mode is off every call goes to libcrypto's own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "secmem.h"
#include "preload.h"

#define OSSL_VER "OPENSSL_3.0.0"

/*
 * libcrypto's definition of @name.  RTLD_NEXT and RTLD_DEFAULT search the
 * global scope only; a libcrypto loaded by dlopen(RTLD_LOCAL) (a Python
 * extension module's, a plugin's) still calls the preload's functions
 * through its PLT, the global scope coming first, but is found only by a
 * handle of its own.  RTLD_NOLOAD takes a reference, never loads: the
 * function found stays mapped as long as the pointer is cached.
 */
static void *next(const char *name)
{
	void *f;

	preload_nested++;
	f = dlvsym(RTLD_NEXT, name, OSSL_VER);
	if (!f)
		f = dlvsym(RTLD_DEFAULT, name, OSSL_VER);
	if (!f) {
		void *h = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_NOLOAD);

		if (h)
			f = dlvsym(h, name, OSSL_VER);
	}
	preload_nested--;
	if (!f)
		preload_die("%s@%s not found: is libcrypto.so.3 loaded?", name,
			    OSSL_VER);
	return f;
}

/* libcrypto's @fn, looked up once. */
#define NEXT(fn) PRELOAD_NEXT(next, fn)

static bool on(void)
{
	return preload_modes() & PRELOAD_OPENSSL;
}

static int alloc_failed;

static void *checked(void *p, size_t num)
{
	preload_stats_tick();
	if (p)
		atomic_fetch_add_explicit(&preload_served_openssl, 1,
					  memory_order_relaxed);
	else
		preload_warn_once(&alloc_failed,
				  "openssl: a secure allocation of %zu bytes "
				  "failed: %s (OpenSSL sees an allocation "
				  "failure; nothing falls back to ordinary "
				  "memory)", num,
				  secmem_strerror(secmem_last_error()));
	return p;
}

PRELOAD_API void *CRYPTO_secure_malloc(size_t num, const char *file, int line);
PRELOAD_API void *CRYPTO_secure_zalloc(size_t num, const char *file, int line);
PRELOAD_API void CRYPTO_secure_free(void *ptr, const char *file, int line);
PRELOAD_API void CRYPTO_secure_clear_free(void *ptr, size_t num,
					  const char *file, int line);
PRELOAD_API int CRYPTO_secure_allocated(const void *ptr);
PRELOAD_API int CRYPTO_secure_malloc_initialized(void);
PRELOAD_API size_t CRYPTO_secure_actual_size(void *ptr);
PRELOAD_API size_t CRYPTO_secure_used(void);
PRELOAD_API int CRYPTO_secure_malloc_init(size_t size, size_t minsize);
PRELOAD_API int CRYPTO_secure_malloc_done(void);
void CRYPTO_free(void *ptr, const char *file, int line);
void CRYPTO_clear_free(void *ptr, size_t num, const char *file, int line);

void *CRYPTO_secure_malloc(size_t num, const char *file, int line)
{
	if (!on())
		return NEXT(CRYPTO_secure_malloc)(num, file, line);
	return checked(SM(secmem_malloc(num ? num : 1)), num);
}

void *CRYPTO_secure_zalloc(size_t num, const char *file, int line)
{
	if (!on())
		return NEXT(CRYPTO_secure_zalloc)(num, file, line);
	return checked(SM(secmem_calloc(1, num ? num : 1)), num);
}

/*
 * OpenSSL's own CRYPTO_secure_free() accepts pointers from CRYPTO_malloc()
 * (its fallback when the secure heap is not initialised); so does this.
 */
void CRYPTO_secure_free(void *ptr, const char *file, int line)
{
	if (!on())
		return NEXT(CRYPTO_secure_free)(ptr, file, line);
	if (!ptr)
		return;
	/* secmem_free_if_owned() zeroes the whole allocation. */
	if (!SM(secmem_free_if_owned(ptr)))
		NEXT(CRYPTO_free)(ptr, file, line);
}

void CRYPTO_secure_clear_free(void *ptr, size_t num, const char *file,
			      int line)
{
	if (!on())
		return NEXT(CRYPTO_secure_clear_free)(ptr, num, file, line);
	if (!ptr)
		return;
	if (!SM(secmem_free_if_owned(ptr)))
		NEXT(CRYPTO_clear_free)(ptr, num, file, line);
}

int CRYPTO_secure_allocated(const void *ptr)
{
	if (!on())
		return NEXT(CRYPTO_secure_allocated)(ptr);
	return SM(secmem_owns(ptr));
}

int CRYPTO_secure_malloc_initialized(void)
{
	if (!on())
		return NEXT(CRYPTO_secure_malloc_initialized)();
	return 1;
}

size_t CRYPTO_secure_actual_size(void *ptr)
{
	if (!on())
		return NEXT(CRYPTO_secure_actual_size)(ptr);
	return SM(secmem_owns(ptr)) ? SM(secmem_usable_size(ptr)) : 0;
}

size_t CRYPTO_secure_used(void)
{
	struct secmem_stats st = { 0 };

	if (!on())
		return NEXT(CRYPTO_secure_used)();
	return SM(secmem_stats(&st)) ? 0 : (size_t)st.bytes_in_use;
}

/*
 * The fixed arena OpenSSL would map here is not needed: the heap grows on
 * demand.  1 is "initialised and locked", what callers check for.
 */
int CRYPTO_secure_malloc_init(size_t size, size_t minsize)
{
	(void)size;
	(void)minsize;
	if (!on())
		return NEXT(CRYPTO_secure_malloc_init)(size, minsize);
	return 1;
}

int CRYPTO_secure_malloc_done(void)
{
	if (!on())
		return NEXT(CRYPTO_secure_malloc_done)();
	return CRYPTO_secure_used() == 0;
}
