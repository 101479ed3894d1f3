// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Arenas and heaps: global state, initialisation, page runs, pointer
 * lookup and fork handling.
 *
 * Locking: the global lock serialises initialisation, arena slot claims and
 * fork; it is never taken on the allocation path once a heap has memory.
 * Each heap has its own lock protecting its arenas' page maps and its slab
 * lists.  Arena slots are never freed, only emptied, so the lock-free
 * lookup in sm_arena_lookup() never dereferences freed memory; it re-checks
 * what it found once it holds the heap lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sanitize.h"

size_t sm_page_size;
uint64_t sm_canary_key;

static struct {
	pthread_mutex_t lock;
	_Atomic bool ready;		/* backend probed successfully */
	unsigned int flags;		/* secmem_init() flags */
	unsigned int nheaps;
	_Atomic unsigned int next_heap;
	_Atomic unsigned int slots_hw;	/* arenas[] in use are below this */
	struct sm_heap heaps[SM_MAX_HEAPS];
	struct sm_arena arenas[SM_MAX_ARENAS];
} sm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t sm_once = PTHREAD_ONCE_INIT;
static _Thread_local int sm_home = -1;
static _Thread_local int sm_last_slot;

static void arena_fork_prepare(void);
static void arena_fork_parent(void);
static void arena_fork_child(void);

static void arena_once(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int i;

	sm_page_size = (size_t)sysconf(_SC_PAGESIZE);
	sm_canary_key = sm_random_u64();
	sm.nheaps = ncpu < 1 ? 1 :
		    ncpu > SM_MAX_HEAPS ? SM_MAX_HEAPS : (unsigned int)ncpu;
	for (i = 0; i < SM_MAX_HEAPS; i++)
		pthread_mutex_init(&sm.heaps[i].lock, NULL);
	for (i = 0; i < SM_MAX_ARENAS; i++)
		sm.arenas[i].fd = -1;
	pthread_atfork(arena_fork_prepare, arena_fork_parent,
		       arena_fork_child);
}

int sm_ensure_init(void)
{
	int r = 0;

	pthread_once(&sm_once, arena_once);
	if (atomic_load_explicit(&sm.ready, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&sm.lock);
	if (!atomic_load(&sm.ready)) {
		r = sm_backend_probe(sm.flags);
		if (r == 0)
			atomic_store_explicit(&sm.ready, true,
					      memory_order_release);
	}
	pthread_mutex_unlock(&sm.lock);
	return r ? -1 : 0;
}

struct sm_heap *sm_heap_home(void)
{
	if (sm_home < 0)
		sm_home = (int)(atomic_fetch_add(&sm.next_heap, 1) % sm.nheaps);
	return &sm.heaps[sm_home];
}

struct sm_heap *sm_heap_at(unsigned int i)
{
	return &sm.heaps[i % sm.nheaps];
}

unsigned int sm_heap_count(void)
{
	return sm.nheaps;
}

void *sm_run_addr(const struct sm_run *run)
{
	return (char *)atomic_load_explicit(&run->arena->base,
					    memory_order_relaxed) +
	       run->first_page * sm_page_size;
}

static bool arena_page_used(const struct sm_arena *a, size_t p)
{
	return a->used[p / 64] & (1ULL << (p % 64));
}

static void arena_mark(struct sm_arena *a, size_t first, size_t n,
		       struct sm_run *run)
{
	size_t p;

	for (p = first; p < first + n; p++) {
		if (run)
			a->used[p / 64] |= 1ULL << (p % 64);
		else
			a->used[p / 64] &= ~(1ULL << (p % 64));
		a->owner[p] = run;
	}
}

/* First fit for @n pages whose address is a multiple of @align pages. */
static bool arena_find_pages(struct sm_arena *a, size_t n, size_t align,
			     size_t *first)
{
	uintptr_t base = atomic_load_explicit(&a->base, memory_order_relaxed);
	size_t p = a->hint * 64, q;

	while (p + n <= a->npages) {
		if (p % 64 == 0 && a->used[p / 64] == UINT64_MAX) {
			p += 64;
			continue;
		}
		if (align > 1 && (base / sm_page_size + p) % align) {
			p += align - (base / sm_page_size + p) % align;
			continue;
		}
		for (q = p; q < p + n && !arena_page_used(a, q); q++)
			;
		if (q == p + n) {
			*first = p;
			return true;
		}
		p = q + 1;
	}
	return false;
}

static void arena_destroy(struct sm_heap *h, struct sm_arena *a)
{
	struct sm_arena **pp;
	struct sm_region r = {
		.fd = a->fd,
		.base = (void *)atomic_load(&a->base),
		.size = atomic_load(&a->size),
	};

	for (pp = &h->arenas; *pp != a; pp = &(*pp)->next)
		;
	*pp = a->next;
	if (h->spare == a)
		h->spare = NULL;
	h->mapped -= r.size;
	sm_unpoison(r.base, r.size);
	sm_region_unmap(&r);
	free(a->used);
	free(a->owner);
	a->used = NULL;
	a->owner = NULL;
	/* Lookups that race with this see base 0 once they hold h->lock. */
	pthread_mutex_lock(&sm.lock);
	atomic_store_explicit(&a->base, 0, memory_order_release);
	a->fd = -1;
	pthread_mutex_unlock(&sm.lock);
	sm_memlock_uncharge(r.size);
	atomic_fetch_sub(&sm_count.bytes_mapped, r.size);
	atomic_fetch_sub(&sm_count.arenas, 1);
	atomic_fetch_sub(&sm_count.fds, 1);
	atomic_fetch_sub(&sm_count.mappings, 3);
}

/* Add an arena of at least @min_bytes to @h (locked). */
static bool arena_grow(struct sm_heap *h, size_t min_bytes)
{
	size_t size = h->mapped < SM_ARENA_MIN ? SM_ARENA_MIN :
		      h->mapped > SM_ARENA_MAX ? SM_ARENA_MAX : h->mapped;
	size_t npages, words, i;
	struct sm_region r;
	struct sm_arena *a = NULL;
	uint64_t *used;
	struct sm_run **owner;

	min_bytes = sm_round_up(min_bytes, sm_page_size);
	if (size < min_bytes)
		size = sm_round_up(min_bytes, SM_ARENA_MIN);
	size = (size_t)sm_memlock_charge_upto(size, min_bytes);
	if (!size)
		return false;	/* error recorded */
	npages = size / sm_page_size;
	words = (npages + 63) / 64;
	used = calloc(words, sizeof(*used));
	/* An array of pointers, one per page. */
	owner = calloc(npages, sizeof(*owner)); // NOLINT(bugprone-sizeof-expression)
	if (!used || !owner)
		goto nomem;
	/* Pages past npages in the last word are marked used forever. */
	if (npages % 64)
		used[words - 1] = ~0ULL << (npages % 64);
	if (sm_region_map(&r, size) < 0)
		goto fail;

	pthread_mutex_lock(&sm.lock);
	for (i = 0; i < SM_MAX_ARENAS; i++) {
		if (!atomic_load(&sm.arenas[i].base) && sm.arenas[i].fd < 0) {
			a = &sm.arenas[i];
			break;
		}
	}
	if (a) {
		a->fd = r.fd;
		a->npages = npages;
		a->pages_used = 0;
		a->hint = 0;
		a->used = used;
		a->owner = owner;
		atomic_store(&a->size, size);
		atomic_store(&a->heap, h);
		atomic_store_explicit(&a->base, (uintptr_t)r.base,
				      memory_order_release);
		if (i + 1 > atomic_load(&sm.slots_hw))
			atomic_store(&sm.slots_hw, (unsigned int)i + 1);
	}
	pthread_mutex_unlock(&sm.lock);
	if (!a) {
		sm_region_unmap(&r);
		goto nomem;
	}
	a->next = h->arenas;
	h->arenas = a;
	h->mapped += size;
	atomic_fetch_add(&sm_count.bytes_mapped, size);
	atomic_fetch_add(&sm_count.arenas, 1);
	atomic_fetch_add(&sm_count.fds, 1);
	atomic_fetch_add(&sm_count.mappings, 3);
	return true;
nomem:
	sm_fail(SECMEM_ENOMEM, ENOMEM);
fail:
	free(used);
	free(owner);
	sm_memlock_uncharge(size);
	return false;
}

/*
 * Take @npages pages from @h (locked), adding an arena if @grow allows.
 * @desc_size is the size of the run descriptor to allocate (slabs carry
 * their chunk bitmap).  Returns NULL with the error recorded.
 */
struct sm_run *sm_run_alloc(struct sm_heap *h, size_t npages,
			    size_t align_pages, size_t desc_size, bool grow)
{
	struct sm_arena *a;
	struct sm_run *run;
	size_t first;
	bool tried_grow = false;

	if (npages > SIZE_MAX / sm_page_size - align_pages) {
		sm_fail(SECMEM_EOVERFLOW, EOVERFLOW);
		return NULL;
	}
	run = calloc(1, desc_size);
	if (!run) {
		sm_fail(SECMEM_ENOMEM, ENOMEM);
		return NULL;
	}
again:
	for (a = h->arenas; a; a = a->next) {
		if (a->npages - a->pages_used < npages)
			continue;
		if (arena_find_pages(a, npages, align_pages, &first))
			goto found;
	}
	if (grow && !tried_grow &&
	    arena_grow(h, (npages + align_pages) * sm_page_size)) {
		tried_grow = true;
		goto again;
	}
	if (!grow)
		sm_fail(SECMEM_ENOMEM, ENOMEM);
	free(run);
	return NULL;
found:
	if (h->spare == a)
		h->spare = NULL;
	run->arena = a;
	run->first_page = first;
	run->npages = npages;
	arena_mark(a, first, npages, run);
	a->pages_used += npages;
	if (first / 64 == a->hint && a->used[a->hint] == UINT64_MAX)
		a->hint++;
	return run;
}

/*
 * Give @run's pages (already zeroed by the caller) back to its arena, and
 * the arena back to the kernel if it is empty and @h already keeps a spare.
 */
void sm_run_release(struct sm_heap *h, struct sm_run *run)
{
	struct sm_arena *a = run->arena;

	arena_mark(a, run->first_page, run->npages, NULL);
	a->pages_used -= run->npages;
	if (run->first_page / 64 < a->hint)
		a->hint = run->first_page / 64;
	free(run);
	if (a->pages_used)
		return;
	if (!h->spare)
		h->spare = a;
	else
		arena_destroy(h, a);
}

struct sm_run *sm_run_of(struct sm_arena *a, const void *ptr)
{
	uintptr_t off = (uintptr_t)ptr - atomic_load(&a->base);

	return a->owner[off / sm_page_size];
}

static bool arena_contains(struct sm_arena *a, uintptr_t p, uintptr_t *base)
{
	uintptr_t b = atomic_load_explicit(&a->base, memory_order_acquire);

	*base = b;
	return b && p >= b && p - b < atomic_load(&a->size);
}

/*
 * Find the arena holding @ptr and return it with its heap locked in
 * *@locked, or NULL (nothing locked) if no arena holds @ptr.
 */
struct sm_arena *sm_arena_lookup(const void *ptr, struct sm_heap **locked)
{
	uintptr_t p = (uintptr_t)ptr, base;
	struct sm_arena *a;
	struct sm_heap *h;
	unsigned int i;
	int tries;

	if (!atomic_load(&sm.ready))
		return NULL;
	for (tries = 0; tries < 4; tries++) {
		unsigned int n = atomic_load(&sm.slots_hw);
		unsigned int start = (unsigned int)sm_last_slot < n ?
				     (unsigned int)sm_last_slot : 0;

		for (i = 0; i < n; i++) {
			a = &sm.arenas[(start + i) % n];
			if (!arena_contains(a, p, &base))
				continue;
			h = atomic_load(&a->heap);
			pthread_mutex_lock(&h->lock);
			/* Recheck: the slot may have been emptied or reused. */
			if (atomic_load(&a->heap) == h &&
			    arena_contains(a, p, &base)) {
				sm_last_slot = (int)((start + i) % n);
				*locked = h;
				return a;
			}
			/* Destroyed or reused meanwhile: scan again. */
			pthread_mutex_unlock(&h->lock);
			break;
		}
		if (i == n)
			return NULL;
	}
	return NULL;
}

/* Destroy all arenas if none holds an allocation; false if one does. */
static bool arena_drop_idle(void)
{
	bool idle = true;
	unsigned int i;

	for (i = 0; i < sm.nheaps; i++)
		pthread_mutex_lock(&sm.heaps[i].lock);
	for (i = 0; i < sm.nheaps && idle; i++) {
		for (struct sm_arena *a = sm.heaps[i].arenas; a; a = a->next)
			idle = idle && !a->pages_used;
	}
	for (i = 0; i < sm.nheaps; i++) {
		struct sm_heap *h = &sm.heaps[i];

		while (idle && h->arenas)
			arena_destroy(h, h->arenas);
		pthread_mutex_unlock(&h->lock);
	}
	return idle;
}

SECMEM_API int secmem_init(unsigned int flags)
{
	int r;

	pthread_once(&sm_once, arena_once);
	if (flags & ~(SECMEM_INIT_ALLOW_INSECURE | SECMEM_INIT_FORCE_INSECURE |
		      SECMEM_INIT_NO_UNMAPPED | SECMEM_INIT_NO_SECRET)) {
		sm_fail(SECMEM_EINVAL, EINVAL);
		return -1;
	}
	pthread_mutex_lock(&sm.lock);
	if (atomic_load(&sm.ready) && flags == sm.flags) {
		pthread_mutex_unlock(&sm.lock);
		return 0;
	}
	pthread_mutex_unlock(&sm.lock);
	/* Arenas of the old backend must go before another is chosen. */
	if (!arena_drop_idle()) {
		sm_fail(SECMEM_EBUSY, EBUSY);
		return -1;
	}
	pthread_mutex_lock(&sm.lock);
	sm.flags = flags;
	atomic_store(&sm.ready, false);
	r = sm_backend_probe(flags);
	if (r == 0)
		atomic_store_explicit(&sm.ready, true, memory_order_release);
	pthread_mutex_unlock(&sm.lock);
	return r ? -1 : 0;
}

SECMEM_API enum secmem_backend secmem_backend(void)
{
	if (sm_ensure_init() < 0)
		return SECMEM_BACKEND_NONE;
	return sm_backend_get();
}

/*
 * fork(): hold every lock across the fork so the child copies consistent
 * state, then give the child an empty allocator.  The arenas themselves are
 * MADV_DONTFORK and absent from the child; their descriptors are closed.
 */
static void arena_fork_prepare(void)
{
	unsigned int i;

	/* Same order as arena_grow(): heap locks before the global lock. */
	for (i = 0; i < sm.nheaps; i++)
		pthread_mutex_lock(&sm.heaps[i].lock);
	pthread_mutex_lock(&sm.lock);
}

static void arena_fork_parent(void)
{
	unsigned int i;

	pthread_mutex_unlock(&sm.lock);
	for (i = sm.nheaps; i-- > 0;)
		pthread_mutex_unlock(&sm.heaps[i].lock);
}

static void arena_fork_child(void)
{
	unsigned int i;
	size_t p;

	for (i = 0; i < SM_MAX_ARENAS; i++) {
		struct sm_arena *a = &sm.arenas[i];

		if (atomic_load(&a->base)) {
			for (p = 0; p < a->npages;) {
				struct sm_run *run = a->owner[p];

				/* Each run is freed once, at its first page. */
				p += run ? run->npages : 1;
				free(run);
			}
			free(a->used);
			free(a->owner);
			close(a->fd);
		}
		memset(a, 0, sizeof(*a));
		a->fd = -1;
	}
	for (i = 0; i < SM_MAX_HEAPS; i++) {
		memset(&sm.heaps[i], 0, sizeof(sm.heaps[i]));
		pthread_mutex_init(&sm.heaps[i].lock, NULL);
	}
	atomic_store(&sm.slots_hw, 0);
	sm_last_slot = 0;
	sm_counters_reset();
	pthread_mutex_init(&sm.lock, NULL);
}
