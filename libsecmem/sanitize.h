/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tell AddressSanitizer and valgrind's memcheck which secret memory is live,
 * so that a use after secmem_free() is reported where it happens.  Both are
 * no-ops in a normal build (the valgrind requests cost a few instructions
 * when not running under valgrind).
 */
#ifndef SECMEM_SANITIZE_H
#define SECMEM_SANITIZE_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define SM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SM_ASAN 1
#endif
#endif

#ifdef SM_ASAN
#include <sanitizer/asan_interface.h>
#define sm_poison(p, n)		ASAN_POISON_MEMORY_REGION((p), (n))
#define sm_unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define sm_poison(p, n)		((void)(p), (void)(n))
#define sm_unpoison(p, n)	((void)(p), (void)(n))
#endif

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define SM_VALGRIND 1
#endif
#endif

#ifdef SM_VALGRIND
#define sm_vg_alloc(p, n, zeroed) VALGRIND_MALLOCLIKE_BLOCK((p), (n), 0, (zeroed))
#define sm_vg_free(p)		VALGRIND_FREELIKE_BLOCK((p), 0)
/* Zeroed memory going back to the page allocator: any class may reuse it. */
#define sm_vg_defined(p, n)	VALGRIND_MAKE_MEM_DEFINED((p), (n))
#else
#define sm_vg_defined(p, n)	((void)(p), (void)(n))
#define sm_vg_alloc(p, n, zeroed) ((void)(p), (void)(n), (void)(zeroed))
#define sm_vg_free(p)		((void)(p))
#endif

#endif /* SECMEM_SANITIZE_H */
