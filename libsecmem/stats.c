// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Counters and RLIMIT_MEMLOCK accounting.
 *
 * The kernel charges memfd_secret and mlock()ed mappings against
 * RLIMIT_MEMLOCK and fails with EAGAIN (or, on some kernels, SIGBUS at
 * fault time) when the limit is reached.  libsecmem counts every arena byte
 * it maps and refuses an arena that would cross the soft limit, so the
 * caller gets SECMEM_EMEMLOCK and a sentence with the numbers instead.
 * The count is per process and ignores memory the application mlock()s
 * itself; the kernel's EAGAIN is reported the same way in that case.
 *
 * The rules mirror the kernel's: a process with CAP_IPC_LOCK is exempt.
 * With memfd_secret the rule depends on the kernel (upstream checks the
 * limit at mmap() and exempts CAP_IPC_LOCK; Debian's 6.12 charges every
 * faulted page with no exemption and delivers SIGBUS past the limit), so
 * the backend probe asks the running kernel (backend.c) and libsecmem
 * follows its answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

struct sm_counters sm_count;

static uint64_t stats_memlock_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return rl.rlim_cur;
}

static bool stats_exempt(void)
{
	if (sm_backend_get() == SECMEM_BACKEND_MEMFD_SECRET &&
	    !sm_secret_ipc_lock_exempts())
		return false;
	return sm_ipc_lock_effective();
}

/*
 * Charge up to @want bytes (at least @min) against the limit.  Returns the
 * bytes charged, a multiple of the page size, or 0 with SECMEM_EMEMLOCK
 * recorded.
 */
size_t sm_memlock_charge_upto(size_t want, size_t min)
{
	uint64_t limit = stats_exempt() ? UINT64_MAX : stats_memlock_limit();
	uint64_t cur = atomic_load(&sm_count.charged);
	uint64_t amount;

	do {
		uint64_t avail = limit > cur ? limit - cur : 0;
		if (avail < min) {
			sm_fail_memlock(limit, cur, min);
			return 0;
		}
		amount = avail < want ? avail / sm_page_size * sm_page_size :
					want;
		if (amount < min)
			amount = min;
	} while (!atomic_compare_exchange_weak(&sm_count.charged, &cur,
					       cur + amount));
	return (size_t)amount;
}

void sm_memlock_uncharge(size_t bytes)
{
	atomic_fetch_sub(&sm_count.charged, bytes);
}

void sm_counters_reset(void)
{
	atomic_store(&sm_count.bytes_mapped, 0);
	atomic_store(&sm_count.charged, 0);
	atomic_store(&sm_count.arenas, 0);
	atomic_store(&sm_count.fds, 0);
	atomic_store(&sm_count.mappings, 0);
	atomic_store(&sm_count.spares, 0);
	atomic_store(&sm_count.wiped_arenas, 0);
	atomic_store(&sm_count.wiped_bytes, 0);
}

SECMEM_API int secmem_stats(struct secmem_stats *st)
{
	unsigned int i;

	if (!st) {
		sm_fail(SECMEM_EINVAL, EINVAL);
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->backend = sm_backend_get();
	for (i = 0; i < sm_heap_count(); i++) {
		struct sm_heap *h = sm_heap_at(i);

		st->bytes_in_use += atomic_load_explicit(&h->in_use,
							 memory_order_relaxed);
		st->allocations += atomic_load_explicit(&h->nallocs,
							memory_order_relaxed);
	}
	st->bytes_mapped = atomic_load(&sm_count.bytes_mapped);
	st->memlock_charged = atomic_load(&sm_count.charged);
	st->memlock_limit = stats_memlock_limit();
	st->arenas = atomic_load(&sm_count.arenas);
	st->fds = atomic_load(&sm_count.fds);
	st->mappings = atomic_load(&sm_count.mappings);
	st->wiped_arenas = atomic_load(&sm_count.wiped_arenas);
	st->wiped_bytes = atomic_load(&sm_count.wiped_bytes);
	return 0;
}
