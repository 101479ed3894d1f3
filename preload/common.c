// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mode parsing and the constructor.  A mode list that is set but not
 * valid (mode_list.h: empty, an empty mode, an unknown word), or a
 * requested mode that cannot be served (no secret-memory backend), stops
 * the program with a message and status 125 instead of letting it run
 * without the protection it was started with.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "secmem.h"
#include "preload.h"

__thread int preload_nested __attribute__((tls_model("initial-exec")));

_Atomic unsigned long preload_served_openssl, preload_served_sodium,
	preload_served_gcrypt, preload_served_heap, preload_served_libc;
static bool verbose;

_Atomic unsigned int preload_modes_cache = ~0U;

/*
 * Called first from the constructor or from the first allocation, both
 * before main(); a bad list never returns, so no code of the program runs
 * with fewer modes than it was started with.
 */
unsigned int preload_modes_parse(void)
{
	const char *env;
	unsigned int m;

	/* Unset: the two interpositions that only touch secure allocators. */
	env = getenv("SECMEM_PRELOAD_MODE");
	if (!env) {
		m = PRELOAD_OPENSSL | PRELOAD_SODIUM;
	} else {
		char why[128];

		m = preload_mode_list_parse(env, why, sizeof(why));
		if (!m)
			preload_die("SECMEM_PRELOAD_MODE='%s': %s: "
				    PRELOAD_MODES_HELP "; not running the "
				    "program without the protection it "
				    "asked for", env, why);
	}
	atomic_store(&preload_modes_cache, m);
	return m;
}

static void vsay(const char *fmt, va_list ap)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "libsecmem-preload[%d]: ",
			 (int)getpid());

	if (n < 0)
		return;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	n = (int)strlen(buf);
	buf[n++] = '\n';
	/* One write: lines of concurrent threads do not interleave. */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

void preload_warn_once(int *once, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

_Noreturn void preload_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	_exit(125);
}

__attribute__((constructor)) static void preload_init(void)
{
	unsigned int m = preload_modes();
	enum secmem_backend b;

	b = SM(secmem_backend());
	if (b == SECMEM_BACKEND_NONE)
		preload_die("no secret-memory backend: %s; the modes asked for "
			    "(SECMEM_PRELOAD_MODE) cannot be served, not "
			    "running the program without them",
			    secmem_strerror(secmem_last_error()));
	/*
	 * fork() must leave the child what it would have without the
	 * preload: glibc's heap, OpenSSL's secure heap
	 * (CRYPTO_secure_malloc_init() maps it without MADV_DONTFORK) and
	 * libsodium's sodium_malloc() pages (plain mmap, mlock,
	 * MADV_DONTDUMP) are all inherited.  libsecmem's default,
	 * SECMEM_FORK_DROP, left a worker forked after the keys were loaded
	 * with faulting pointers, so every mode copies.  The live
	 * allocations of the openssl and sodium modes are few and small.
	 * The copy is made by libsecmem's pthread_atfork() handler: a child
	 * of _Fork() or a raw clone() runs none and shares the parent's
	 * pages (docs/preload.md).
	 */
	if (SM(secmem_set_fork_policy(SECMEM_FORK_COPY)) < 0)
		preload_die("secmem_set_fork_policy: %s",
			    secmem_strerror(secmem_last_error()));
	verbose = getenv("SECMEM_PRELOAD_VERBOSE") != NULL;
	if (verbose)
		fprintf(stderr, "libsecmem-preload[%d]: modes%s%s%s%s, "
			"backend %s\n", (int)getpid(),
			m & PRELOAD_OPENSSL ? " openssl" : "",
			m & PRELOAD_SODIUM ? " sodium" : "",
			m & PRELOAD_GCRYPT ? " gcrypt" : "",
			m & PRELOAD_HEAP ? " heap" : "", secmem_backend_name(b));
	preload_stats_init();
	if (m & PRELOAD_HEAP)
		preload_heap_init();
}

/*
 * The figures that show interposition really happened: allocations each
 * mode served, and (heap mode) those glibc served: before the constructor
 * or on libsecmem's behalf.
 */
__attribute__((destructor)) static void preload_report(void)
{
	struct secmem_stats st;

	if (!verbose || secmem_stats(&st))
		return;
	fprintf(stderr, "libsecmem-preload[%d]: served openssl %lu sodium %lu "
		"gcrypt %lu heap %lu, by glibc %lu; %llu bytes in use in %llu "
		"allocations at exit\n", (int)getpid(),
		atomic_load(&preload_served_openssl),
		atomic_load(&preload_served_sodium),
		atomic_load(&preload_served_gcrypt),
		atomic_load(&preload_served_heap),
		atomic_load(&preload_served_libc),
		(unsigned long long)st.bytes_in_use,
		(unsigned long long)st.allocations);
}
