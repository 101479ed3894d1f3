/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsecmem-preload: secret memory for programs that were not built for
 * it, by LD_PRELOAD interposition (secmem-run(1)).  Four modes, chosen
 * by SECMEM_PRELOAD_MODE (a comma-separated list):
 *
 *  openssl - OpenSSL 3's CRYPTO_secure_* family (openssl.c)
 *  sodium  - libsodium's sodium_malloc() family (sodium.c)
 *  gcrypt  - libgcrypt's secure memory, through its allocation handlers
 *            (gcrypt.c)
 *  heap    - the whole malloc family of the process (heap.c)
 *
 * A mode that is off forwards its functions to the next definition
 * (libcrypto's, libsodium's, libgcrypt's, glibc's), so the library can
 * stay preloaded whatever the mode.
 */
#ifndef SECMEM_PRELOAD_H
#define SECMEM_PRELOAD_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>

#include "mode_list.h"
#include "stats_export.h"

#define PRELOAD_API	__attribute__((visibility("default")))

/*
 * The modes in force, parsed once from the environment (never 0 once
 * parsed: a list that names no mode stops the program).  Inline: heap.c's
 * malloc() and free() ask on every call in every mode (whether to count
 * an allocation left to glibc), where a call into common.c would be about
 * a third of what the openssl mode adds to a process's plain malloc().
 */
extern _Atomic unsigned int preload_modes_cache;	/* ~0U: not parsed */
unsigned int preload_modes_parse(void);
static inline unsigned int preload_modes(void)
{
	unsigned int m = atomic_load_explicit(&preload_modes_cache,
					      memory_order_relaxed);

	return m != ~0U ? m : preload_modes_parse();
}
/* Print "libsecmem-preload: ..." once per @once flag. */
void preload_warn_once(int *once, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * Print and _exit(125), before main() when called from the constructor or
 * the first allocation: a mode that cannot be honoured must not run.
 */
_Noreturn void preload_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/*
 * Set while this thread is inside libsecmem (or the dynamic linker) on
 * behalf of the preload: the malloc family then goes straight to glibc,
 * so that libsecmem's own metadata (and anything it calls) cannot recurse
 * into the heap mode.
 */
extern __thread int preload_nested __attribute__((tls_model("initial-exec")));

/*
 * Every call into libsecmem goes through these, in every mode: libsecmem
 * calloc()s a run descriptor (and frees it) while it holds a heap lock,
 * and with the heap mode on that calloc() must reach glibc.  Without the
 * flag it would come back into libsecmem for the lock its caller holds,
 * and a secure allocation that needs a new run (CRYPTO_secure_malloc()
 * under openssl,heap, sodium_malloc() under sodium,heap) would deadlock.
 * Not for the functions of libcrypto, libsodium or glibc the modes
 * forward to: their malloc()/free() belong to the heap mode.
 */
#define SM(call)							\
	__extension__({							\
		__typeof__(call) _sm_ret;				\
		preload_nested++;					\
		_sm_ret = (call);					\
		preload_nested--;					\
		_sm_ret;						\
	})
#define SM_VOID(call)							\
	do {								\
		preload_nested++;					\
		(call);							\
		preload_nested--;					\
	} while (0)

/*
 * The definition of @fn that the preload's own replaces, as the library's
 * @lookup(name) finds it (which dies if there is none): looked up on the
 * first call and kept in a static of the call site, typed as @fn.
 */
#define PRELOAD_NEXT(lookup, fn)					\
	__extension__({							\
		static void *_Atomic fn##_next;				\
		void *_p = atomic_load_explicit(&fn##_next,		\
						memory_order_relaxed);	\
		if (!_p) {						\
			_p = lookup(#fn);				\
			atomic_store(&fn##_next, _p);			\
		}							\
		(__typeof__(&fn))_p;					\
	})

/* Allocations served, by mode, reported at exit with SECMEM_PRELOAD_VERBOSE. */
extern _Atomic unsigned long preload_served_openssl, preload_served_sodium,
	preload_served_gcrypt, preload_served_heap, preload_served_libc;

/* heap.c: whether the heap mode serves allocations yet. */
extern bool preload_heap_active;
void preload_heap_init(void);

#endif /* SECMEM_PRELOAD_H */
