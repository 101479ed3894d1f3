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
 *
 * Empty arenas: an arena whose last run is released moves from the heap's
 * arena list to its spare list if the spare budget allows (see
 * arena_spare_budget()), and is destroyed otherwise.  arena_grow() reuses
 * a spare before it maps anything, and returns the heap's spares when
 * RLIMIT_MEMLOCK refuses a new arena; heap_alloc() then returns the other
 * heaps' spares too (sm_spares_release()) before it gives up, so spares
 * never cause a failure that returning them would avoid.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "sanitize.h"

size_t sm_page_size;
unsigned int sm_page_shift;
uint64_t sm_canary_key;
_Atomic int sm_fork_policy = SECMEM_FORK_DROP;
/* SECMEM_FORK_COPY: the parent waits on [0] until the child closes [1]. */
static int sm_fork_sync[2] = { -1, -1 };
/* The forking thread's cancellation state, from prepare to parent/child. */
static int sm_fork_cancel;

static struct {
	pthread_mutex_t lock;
	_Atomic bool ready;		/* backend probed successfully */
	unsigned int flags;		/* secmem_init() flags */
	unsigned int nheaps;
	/* Live threads bound to each heap (under lock). */
	unsigned int heap_threads[SM_MAX_HEAPS];
	_Atomic unsigned int slots_hw;	/* arenas[] in use are below this */
	struct sm_heap heaps[SM_MAX_HEAPS];
	struct sm_arena arenas[SM_MAX_ARENAS];
} sm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t sm_once = PTHREAD_ONCE_INIT;
/*
 * Unbinds a thread from its heap when it exits: value home heap + 1.  Its
 * destructor is code of this object, so the key lives no longer than the
 * object: libsecmem.so is linked -z nodelete (dlclose() leaves it
 * loaded), and arena_unload() deletes the key when the object holding
 * this code goes, a plugin that linked libsecmem.a included.
 * sm_thread_key_live: the key exists and may be set.
 */
static pthread_key_t sm_thread_key;
static _Atomic bool sm_thread_key_live;

/*
 * The parent's arenas that this fork child reserved (arena_fork_fence()),
 * [lo, hi) with their guards: PROT_NONE here and holding nothing else, so
 * an address in one is a parent's pointer.  Written only in a fork child
 * before it has a second thread; a child's children inherit the table
 * with the reservations.  If the table is full the last entry widens to
 * cover a new range: an address between the two is then taken for a
 * parent's, which only a pointer outside every arena of this process
 * can be.
 */
#define SM_MAX_FENCES	SM_MAX_ARENAS
static struct {
	uintptr_t lo, hi;
} sm_fences[SM_MAX_FENCES];
static unsigned int sm_nfences;
/*
 * initial-exec: read on every allocation and free, where the default
 * model of a shared library (global-dynamic) called __tls_get_addr()
 * each time, about 10% of a malloc/free pair under libsecmem-preload.
 * Eight bytes of the static TLS surplus glibc keeps for libraries
 * loaded later, dlopen() included (libsecmem-preload does the same).
 */
#define SM_TLS_IE __attribute__((tls_model("initial-exec")))
static _Thread_local int sm_home SM_TLS_IE = -1;
static _Thread_local int sm_last_slot SM_TLS_IE;

static void arena_fork_prepare(void);
static void arena_fork_parent(void);
static void arena_fork_child(void);

static void arena_thread_exit(void *home_plus_one);

static void arena_once(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int i;

	sm_page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (!sm_page_size || (sm_page_size & (sm_page_size - 1)))
		sm_die("page size %zu is not a power of two", sm_page_size);
	sm_page_shift = (unsigned int)__builtin_ctzll(sm_page_size);
	sm_canary_key = sm_random_u64();
	sm.nheaps = ncpu < 1 ? 1 :
		    ncpu > SM_MAX_HEAPS ? SM_MAX_HEAPS : (unsigned int)ncpu;
	for (i = 0; i < SM_MAX_HEAPS; i++)
		sm_lock_init(&sm.heaps[i].lock);
	for (i = 0; i < SM_MAX_ARENAS; i++)
		sm.arenas[i].fd = -1;
	if (pthread_key_create(&sm_thread_key, arena_thread_exit))
		sm_die("pthread_key_create failed: no key for thread exit");
	atomic_store(&sm_thread_key_live, true);
	pthread_atfork(arena_fork_prepare, arena_fork_parent,
		       arena_fork_child);
}

/*
 * The object is being unloaded (or the process exits): no thread may run
 * arena_thread_exit() after this.  glibc drops the fork handlers of an
 * unloaded object itself.
 */
__attribute__((destructor)) static void arena_unload(void)
{
	if (atomic_exchange(&sm_thread_key_live, false))
		pthread_key_delete(sm_thread_key);
}

int sm_ensure_init(void)
{
	int r = 0;

	/*
	 * ready is only ever set after arena_once() ran (here or in
	 * secmem_init(), both after pthread_once()): the acquire load
	 * orders its work before ours without pthread_once()'s call.
	 */
	if (atomic_load_explicit(&sm.ready, memory_order_acquire))
		return 0;
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

/*
 * Bind the calling thread to the heap with the fewest live threads (the
 * first such), so that threads share a heap, and its lock, only when
 * there are more threads than heaps, however many threads have come and
 * gone (the count drops at a thread's exit).  The global lock is taken
 * once per thread, on its first allocation, and at its exit.
 */
struct sm_heap *sm_heap_home(void)
{
	unsigned int i, best = 0;

	if (sm_home >= 0)
		return &sm.heaps[sm_home];
	pthread_mutex_lock(&sm.lock);
	for (i = 1; i < sm.nheaps; i++) {
		if (sm.heap_threads[i] < sm.heap_threads[best])
			best = i;
	}
	sm.heap_threads[best]++;
	pthread_mutex_unlock(&sm.lock);
	/*
	 * Bound before pthread_setspecific(), which may calloc(): under
	 * libsecmem-preload that comes back here and must find the heap.
	 */
	sm_home = (int)best;
	if (atomic_load_explicit(&sm_thread_key_live, memory_order_relaxed))
		pthread_setspecific(sm_thread_key,
				    (void *)(uintptr_t)(best + 1));
	return &sm.heaps[best];
}

/* Thread exit: the heap has one thread less.  No heap lock is held. */
static void arena_thread_exit(void *home_plus_one)
{
	unsigned int home = (unsigned int)(uintptr_t)home_plus_one - 1;

	pthread_mutex_lock(&sm.lock);
	if (home < sm.nheaps && sm.heap_threads[home])
		sm.heap_threads[home]--;
	pthread_mutex_unlock(&sm.lock);
	/* A destructor that allocates after this binds the thread anew. */
	sm_home = -1;
}

/* In a fork child: the calling thread is the only one left. */
static void arena_threads_reset(void)
{
	memset(sm.heap_threads, 0, sizeof(sm.heap_threads));
	if (sm_home >= 0)
		sm.heap_threads[sm_home] = 1;
}

struct sm_heap *sm_heap_at(unsigned int i)
{
	return &sm.heaps[i % sm.nheaps];
}

unsigned int sm_heap_count(void)
{
	return sm.nheaps;
}

static bool arena_page_used(const struct sm_arena *a, size_t p)
{
	return a->used[p / 64] & (1ULL << (p % 64));
}

static struct sm_run **arena_owner(const struct sm_arena *a, size_t p)
{
	return &a->owner[p >> SM_OWNER_SHIFT][p & (SM_OWNER_LEAF - 1)];
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
		*arena_owner(a, p) = run;
	}
}

static size_t arena_leaves(size_t npages)
{
	return (npages + SM_OWNER_LEAF - 1) >> SM_OWNER_SHIFT;
}

static void arena_meta_free(struct sm_arena *a)
{
	if (a->owner) {
		for (size_t i = 0; i < arena_leaves(a->npages); i++)
			free(a->owner[i]);
	}
	free(a->owner);
	free(a->used);
	a->owner = NULL;
	a->used = NULL;
}

/*
 * The page bitmap and the page map of an arena of @npages pages, in
 * @a->used and @a->owner; false (and nothing allocated) if out of memory.
 */
static bool arena_meta_alloc(struct sm_arena *a, size_t npages)
{
	size_t words = (npages + 63) / 64, nleaves = arena_leaves(npages), i;

	a->npages = npages;
	a->used = calloc(words, sizeof(*a->used));
	a->owner = calloc(nleaves, sizeof(*a->owner));
	if (!a->used || !a->owner)
		goto nomem;
	for (i = 0; i < nleaves; i++) {
		size_t n = npages - (i << SM_OWNER_SHIFT);

		/* A leaf: an array of pointers, one per page. */
		a->owner[i] = calloc(n < SM_OWNER_LEAF ? n : SM_OWNER_LEAF,
				     sizeof(**a->owner)); // NOLINT(bugprone-sizeof-expression)
		if (!a->owner[i])
			goto nomem;
	}
	/* Pages past npages in the last word are marked used forever. */
	if (npages % 64)
		a->used[words - 1] = ~0ULL << (npages % 64);
	return true;
nomem:
	arena_meta_free(a);
	return false;
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

/* Remove @a from @list; false if it is not there. */
static bool arena_unlink(struct sm_arena **list, struct sm_arena *a)
{
	struct sm_arena **pp;

	for (pp = list; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			a->next = NULL;
			return true;
		}
	}
	return false;
}

/* Return @a, already unlinked from @h's lists, to the kernel (@h locked). */
static void arena_destroy(struct sm_heap *h, struct sm_arena *a)
{
	struct sm_region r = {
		.fd = a->fd,
		.base = (void *)atomic_load(&a->base),
		.size = atomic_load(&a->size),
	};

	h->mapped -= r.size;
	sm_unpoison(r.base, r.size);
	sm_region_unmap(&r);
	arena_meta_free(a);
	/* Lookups that race with this see base 0 once they hold h->lock. */
	pthread_mutex_lock(&sm.lock);
	atomic_store_explicit(&a->base, 0, memory_order_release);
	a->fd = -1;
	a->wiped = false;
	pthread_mutex_unlock(&sm.lock);
	sm_memlock_uncharge(r.size);
	atomic_fetch_sub(&sm_count.bytes_mapped, r.size);
	atomic_fetch_sub(&sm_count.arenas, 1);
	atomic_fetch_sub(&sm_count.fds, 1);
	atomic_fetch_sub(&sm_count.mappings, 3);
}

static size_t arena_size(const struct sm_arena *a)
{
	return atomic_load_explicit(&a->size, memory_order_relaxed);
}

/* Destroy the first spare of @h (locked). */
static void arena_destroy_spare(struct sm_heap *h)
{
	struct sm_arena *a = h->spares;

	h->spares = a->next;
	h->spare_bytes -= arena_size(a);
	atomic_fetch_sub(&sm_count.spares, 1);
	arena_destroy(h, a);
}

/* Destroy every spare of @h (locked); false if it had none. */
static bool arena_drop_spares(struct sm_heap *h)
{
	bool any = h->spares != NULL;

	while (h->spares)
		arena_destroy_spare(h);
	return any;
}

/*
 * Move the smallest spare of @h (locked) holding at least @min_bytes to
 * its arena list; false if none does.  Best fit keeps the large spares for
 * large requests, and a batch that comes back fills the spares in the
 * order it filled them when they were new (smallest, oldest first), so it
 * finds the pages it faulted in rather than the untouched end of the last,
 * largest arena.
 */
static bool arena_reuse_spare(struct sm_heap *h, size_t min_bytes)
{
	struct sm_arena *a, *best = NULL;

	for (a = h->spares; a; a = a->next) {
		if (arena_size(a) >= min_bytes &&
		    (!best || arena_size(a) < arena_size(best)))
			best = a;
	}
	if (!best)
		return false;
	arena_unlink(&h->spares, best);
	h->spare_bytes -= arena_size(best);
	atomic_fetch_sub(&sm_count.spares, 1);
	best->hint = 0;
	best->next = h->arenas;
	h->arenas = best;
	return true;
}

/* Size of the next arena @h maps: as large as all it has, within bounds. */
static size_t arena_next_size(const struct sm_heap *h)
{
	return h->mapped < SM_ARENA_MIN ? SM_ARENA_MIN :
	       h->mapped > SM_ARENA_MAX ? SM_ARENA_MAX : h->mapped;
}

/*
 * Bytes of spare arenas @h may keep: one arena of the size it would map
 * next, bounded by SM_SPARE_MAX.  (A fraction of the bytes in use would
 * never be larger: they are at most h->mapped, and so is the next arena up
 * to SM_ARENA_MAX, well above SM_SPARE_MAX.)  A batch of allocations that
 * grew a heap and is then freed thus finds its arenas, and their faulted
 * pages, when it comes back, while a heap that held hundreds of MiB keeps
 * no more than SM_SPARE_MAX of them.
 */
static size_t arena_spare_budget(const struct sm_heap *h)
{
	size_t next = arena_next_size(h);

	return next < SM_SPARE_MAX ? next : SM_SPARE_MAX;
}

/* @a of @h (locked) has just become empty: keep it as a spare or return it. */
static void arena_retire(struct sm_heap *h, struct sm_arena *a)
{
	size_t size = arena_size(a);

	if (a->wiped) {
		/* Its file is empty for good: never a spare. */
		arena_unlink(&h->dead, a);
		atomic_fetch_sub(&sm_count.wiped_arenas, 1);
		atomic_fetch_sub(&sm_count.wiped_bytes, size);
		arena_destroy(h, a);
		return;
	}
	arena_unlink(&h->arenas, a);
	if (h->spare_bytes + size > arena_spare_budget(h)) {
		arena_destroy(h, a);
		return;
	}
	a->next = h->spares;
	h->spares = a;
	h->spare_bytes += size;
	atomic_fetch_add(&sm_count.spares, 1);
}

/*
 * Give @h (locked) an arena of at least @min_bytes: a spare of its own if
 * one is large enough, else, if @map allows, a new arena.  Returns false
 * with the error recorded (nothing recorded if !@map and no spare fits).
 */
static bool arena_grow(struct sm_heap *h, size_t min_bytes, bool map)
{
	size_t want = arena_next_size(h), size, i;
	struct sm_arena meta = { .fd = -1 }, *a = NULL;
	struct sm_region r;

	min_bytes = sm_round_up(min_bytes, sm_page_size);
	if (arena_reuse_spare(h, min_bytes))
		return true;
	if (!map)
		return false;
	if (want < min_bytes)
		want = sm_round_up(min_bytes, SM_ARENA_MIN);
charge:
	size = sm_memlock_charge_upto(want, min_bytes);
	if (!size) {
		/* The spares are all too small for this: their share is not. */
		if (arena_drop_spares(h))
			goto charge;
		return false;	/* error recorded */
	}
	if (!arena_meta_alloc(&meta, size / sm_page_size))
		goto nomem;
	if (sm_region_map(&r, size) < 0) {
		arena_meta_free(&meta);
		sm_memlock_uncharge(size);
		/* The kernel's own RLIMIT_MEMLOCK check (EAGAIN). */
		if (sm_error_get()->code == SECMEM_EMEMLOCK &&
		    arena_drop_spares(h))
			goto charge;
		return false;
	}

	pthread_mutex_lock(&sm.lock);
	for (i = 0; i < SM_MAX_ARENAS; i++) {
		if (!atomic_load(&sm.arenas[i].base) && sm.arenas[i].fd < 0) {
			a = &sm.arenas[i];
			break;
		}
	}
	if (a) {
		a->fd = r.fd;
		a->wiped = false;
		a->npages = meta.npages;
		a->pages_used = 0;
		a->hint = 0;
		a->used = meta.used;
		a->owner = meta.owner;
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
		arena_meta_free(&meta);
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
	sm_memlock_uncharge(size);
	return false;
}

/*
 * Take @npages pages from @h (locked), reusing a spare arena and, if
 * @grow allows, mapping a new one when its arenas are full.  @desc_size is
 * the size of the run descriptor to allocate (slabs carry their chunk
 * bitmap).  Returns NULL with the error recorded.
 */
struct sm_run *sm_run_alloc(struct sm_heap *h, size_t npages,
			    size_t align_pages, size_t desc_size, bool grow)
{
	struct sm_arena *a;
	struct sm_run *run;
	size_t first;
	bool tried_grow = false;

	if (npages > SIZE_MAX / sm_page_size - align_pages) {
		sm_fail(SECMEM_EOVERFLOW, ENOMEM);
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
	if (!tried_grow &&
	    arena_grow(h, (npages + align_pages) * sm_page_size, grow)) {
		tried_grow = true;
		goto again;
	}
	if (!grow)
		sm_fail(SECMEM_ENOMEM, ENOMEM);
	free(run);
	return NULL;
found:
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
 * the arena to the spares or the kernel if it is empty.
 */
void sm_run_release(struct sm_heap *h, struct sm_run *run)
{
	struct sm_arena *a = run->arena;

	arena_mark(a, run->first_page, run->npages, NULL);
	a->pages_used -= run->npages;
	if (run->first_page / 64 < a->hint)
		a->hint = run->first_page / 64;
	free(run);
	if (!a->pages_used)
		arena_retire(h, a);
}

/*
 * Return the idle slabs and the spare arenas of every heap to the kernel;
 * false if there were none.  Called with no heap lock held, when
 * RLIMIT_MEMLOCK refused memory.
 */
bool sm_spares_release(void)
{
	bool any = false;
	unsigned int i;

	for (i = 0; i < sm.nheaps; i++) {
		struct sm_heap *h = &sm.heaps[i];

		sm_lock(&h->lock);
		/* Idle slabs first: the arenas they alone held become spares. */
		any |= sm_heap_drop_idle_slabs(h);
		any |= arena_drop_spares(h);
		sm_unlock(&h->lock);
	}
	return any;
}

/*
 * Unmap every arena of @h (locked) that holds no allocation: its idle
 * slabs go first, so that an arena they alone held is retired, then the
 * spares.  Returns the bytes unmapped.  Dead (wiped) arenas hold live
 * allocations and stay.
 */
static size_t arena_trim_heap(struct sm_heap *h)
{
	size_t before = h->mapped;

	sm_heap_drop_idle_slabs(h);
	arena_drop_spares(h);
	return before - h->mapped;
}

/*
 * One heap lock at a time, as an allocation takes them.  Before the
 * backend is chosen, and after a secmem_init() that dropped every arena
 * and found no backend, there is nothing to unmap.  errno is the
 * caller's: munmap() and close() of our own mappings do not fail.
 */
SECMEM_API int secmem_trim(void)
{
	size_t unmapped = 0;
	int saved = errno;
	unsigned int i;

	if (!atomic_load_explicit(&sm.ready, memory_order_acquire))
		return 0;
	for (i = 0; i < sm.nheaps; i++) {
		struct sm_heap *h = &sm.heaps[i];

		sm_lock(&h->lock);
		unmapped += arena_trim_heap(h);
		sm_unlock(&h->lock);
	}
	errno = saved;
	return unmapped ? 1 : 0;
}

/* Whether @ptr lies in a range of the parent's arenas (sm_fences). */
bool sm_fenced(const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;
	unsigned int i;

	for (i = 0; i < sm_nfences; i++) {
		if (p >= sm_fences[i].lo && p < sm_fences[i].hi)
			return true;
	}
	return false;
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
		unsigned int slot = (unsigned int)sm_last_slot < n ?
				    (unsigned int)sm_last_slot : 0;

		/*
		 * From the slot that held this thread's last pointer, round
		 * to the slot before it; no division (slot % n) per slot.
		 */
		for (i = 0; i < n; i++, slot = slot + 1 == n ? 0 : slot + 1) {
			a = &sm.arenas[slot];
			if (!arena_contains(a, p, &base))
				continue;
			h = atomic_load(&a->heap);
			sm_lock(&h->lock);
			/* Recheck: the slot may have been emptied or reused. */
			if (atomic_load(&a->heap) == h &&
			    arena_contains(a, p, &base)) {
				sm_last_slot = (int)slot;
				*locked = h;
				return a;
			}
			/* Destroyed or reused meanwhile: scan again. */
			sm_unlock(&h->lock);
			break;
		}
		if (i == n)
			return NULL;
	}
	return NULL;
}

/*
 * The kernel wiped @a of @h (locked): move it to h->dead, where nothing is
 * allocated from it, and give back its empty slabs.  If they were all it
 * held, that unmaps it (arena_retire()); otherwise its last free does.
 */
static void arena_kill(struct sm_heap *h, struct sm_arena *a)
{
	arena_unlink(&h->arenas, a);
	a->wiped = true;
	a->next = h->dead;
	h->dead = a;
	atomic_fetch_add(&sm_count.wiped_arenas, 1);
	atomic_fetch_add(&sm_count.wiped_bytes, arena_size(a));
	sm_heap_drop_slabs_of(h, a);
}

/*
 * Probe the arenas of @h (locked) that are not known to be dead: a wiped
 * spare is unmapped at once, a wiped arena in use is killed.  The lock is
 * held across the probes so that no arena is destroyed, and its
 * descriptor number reused by another file, under them.  Returns 0 or
 * the -errno of the first probe that failed.
 */
static int arena_probe_heap(struct sm_heap *h)
{
	struct sm_arena **pp, *a, *next;
	int r, err = 0;

	for (pp = &h->spares; (a = *pp);) {
		r = sm_fd_wiped(a->fd);
		if (r == 1) {
			*pp = a->next;
			a->next = NULL;
			h->spare_bytes -= arena_size(a);
			atomic_fetch_sub(&sm_count.spares, 1);
			arena_destroy(h, a);
			continue;
		}
		if (r < 0 && !err)
			err = r;
		pp = &a->next;
	}
	for (a = h->arenas; a; a = next) {
		next = a->next;
		r = sm_fd_wiped(a->fd);
		if (r == 1)
			arena_kill(h, a);
		else if (r < 0 && !err)
			err = r;
	}
	return err;
}

/*
 * One heap lock at a time, as an allocation takes them: the arenas of a
 * heap are probed while its allocations wait.  The mlock backend's files
 * are ordinary memfds, which no kernel wipes: not probed.  errno is the
 * caller's unless this fails (unmapping a wiped spare makes system calls).
 */
SECMEM_API int secmem_wiped(void)
{
	int err = 0, saved = errno;
	bool wiped = false;
	unsigned int i;

	if (!atomic_load(&sm.ready) ||
	    sm_backend_get() == SECMEM_BACKEND_MLOCK)
		return 0;
	for (i = 0; i < sm.nheaps; i++) {
		struct sm_heap *h = &sm.heaps[i];
		int r;

		sm_lock(&h->lock);
		r = arena_probe_heap(h);
		wiped |= h->dead != NULL;
		sm_unlock(&h->lock);
		if (r < 0 && !err)
			err = r;
	}
	if (!wiped && err) {
		sm_fail_wiped_probe(-err);
		return -1;
	}
	errno = saved;
	return wiped ? 1 : 0;
}

/*
 * Destroy all arenas if none holds an allocation; false if one does.
 * Called with every heap lock held, so no allocation is under way.  Idle
 * slabs hold pages but no allocation: they go first, or a library with
 * nothing handed out would look busy after a single malloc/free pair.
 */
static bool arena_drop_idle_locked(void)
{
	unsigned int i;

	for (i = 0; i < sm.nheaps; i++) {
		if (atomic_load_explicit(&sm.heaps[i].nallocs,
					 memory_order_relaxed))
			return false;
	}
	for (i = 0; i < sm.nheaps; i++) {
		struct sm_heap *h = &sm.heaps[i];

		sm_heap_drop_idle_slabs(h);
		for (struct sm_arena *a = h->arenas; a; a = a->next)
			if (a->pages_used)
				return false;
		while (h->arenas) {
			struct sm_arena *a = h->arenas;

			h->arenas = a->next;
			arena_destroy(h, a);
		}
		arena_drop_spares(h);
	}
	return true;
}

/*
 * Every heap lock is held from the idle check to the end of the probe: an
 * allocation racing with this either finished before (and then the call
 * fails with EBUSY) or starts after, on the new backend.  Releasing the
 * locks in between let an allocation that had passed sm_ensure_init()
 * create its arena while the backend read NONE (spurious
 * SECMEM_ENOBACKEND), or on the old backend.
 */
SECMEM_API int secmem_init(unsigned int flags)
{
	const unsigned int insecure = SECMEM_INIT_ALLOW_INSECURE |
				      SECMEM_INIT_FORCE_INSECURE;
	unsigned int i;
	int r;

	pthread_once(&sm_once, arena_once);
	if ((flags & ~(insecure | SECMEM_INIT_NO_UNMAPPED |
		       SECMEM_INIT_NO_SECRET | SECMEM_INIT_REFUSE_INSECURE)) ||
	    ((flags & SECMEM_INIT_REFUSE_INSECURE) && (flags & insecure))) {
		sm_fail(SECMEM_EINVAL, EINVAL);
		return -1;
	}
	/*
	 * The refusal is part of every later call's flags, so that a call
	 * without it asks for the same policy and is not busy.
	 */
	if (flags & SECMEM_INIT_REFUSE_INSECURE)
		sm_refuse_insecure();
	if (sm_insecure_is_refused()) {
		if (flags & insecure) {
			sm_fail_einval(EPERM,
				       "The mlock() backend was refused with "
				       "secmem_init(SECMEM_INIT_REFUSE_INSECURE): "
				       "this process keeps secrets only outside "
				       "the kernel's direct map, so "
				       "SECMEM_INIT_ALLOW_INSECURE and "
				       "SECMEM_INIT_FORCE_INSECURE are refused");
			return -1;
		}
		flags |= SECMEM_INIT_REFUSE_INSECURE;
	}
	pthread_mutex_lock(&sm.lock);
	/*
	 * The same policy is no change, unless the backend in use is one
	 * that a refusal since forbids.
	 */
	if (atomic_load(&sm.ready) &&
	    (flags & ~SECMEM_INIT_REFUSE_INSECURE) ==
		    (sm.flags & ~SECMEM_INIT_REFUSE_INSECURE) &&
	    (!(flags & SECMEM_INIT_REFUSE_INSECURE) ||
	     sm_backend_get() != SECMEM_BACKEND_MLOCK)) {
		sm.flags = flags;
		pthread_mutex_unlock(&sm.lock);
		return 0;
	}
	pthread_mutex_unlock(&sm.lock);
	/* Heap locks before the global lock, as in arena_grow(). */
	for (i = 0; i < sm.nheaps; i++)
		sm_lock(&sm.heaps[i].lock);
	/* Arenas of the old backend must go before another is chosen. */
	if (!arena_drop_idle_locked()) {
		r = SECMEM_EBUSY;
		sm_fail(SECMEM_EBUSY, EBUSY);
		goto unlock;
	}
	pthread_mutex_lock(&sm.lock);
	sm.flags = flags;
	atomic_store(&sm.ready, false);
	r = sm_backend_probe(flags);
	if (r == 0)
		atomic_store_explicit(&sm.ready, true, memory_order_release);
	pthread_mutex_unlock(&sm.lock);
unlock:
	for (i = sm.nheaps; i-- > 0;)
		sm_unlock(&sm.heaps[i].lock);
	return r ? -1 : 0;
}

SECMEM_API enum secmem_backend secmem_backend(void)
{
	if (sm_ensure_init() < 0)
		return SECMEM_BACKEND_NONE;
	return sm_backend_get();
}

/*
 * Under SECMEM_FORK_COPY the arenas are inherited (shared with the parent),
 * and the child must have its own copy before anyone writes them.
 */
SECMEM_API int secmem_set_fork_policy(int policy)
{
	unsigned int i;

	if (policy != SECMEM_FORK_DROP && policy != SECMEM_FORK_COPY) {
		sm_fail(SECMEM_EINVAL, EINVAL);
		return -1;
	}
	pthread_once(&sm_once, arena_once);
	for (i = 0; i < sm.nheaps; i++)
		sm_lock(&sm.heaps[i].lock);
	pthread_mutex_lock(&sm.lock);
	for (i = 0; i < SM_MAX_ARENAS; i++) {
		struct sm_arena *a = &sm.arenas[i];
		uintptr_t base = atomic_load(&a->base);

		if (base)
			madvise((char *)base - sm_page_size,
				atomic_load(&a->size) + 2 * sm_page_size,
				policy == SECMEM_FORK_COPY ? MADV_DOFORK :
							     MADV_DONTFORK);
	}
	atomic_store(&sm_fork_policy, policy);
	pthread_mutex_unlock(&sm.lock);
	for (i = sm.nheaps; i-- > 0;)
		sm_unlock(&sm.heaps[i].lock);
	return 0;
}

/*
 * fork(): hold every lock across the fork so the child copies consistent
 * state.  Under SECMEM_FORK_DROP the child then gets an empty allocator:
 * the arenas are MADV_DONTFORK and absent from it, their descriptors are
 * closed.  Under SECMEM_FORK_COPY it copies them (arena_fork_copy()) while
 * the parent waits, with the locks still held, for it to finish.
 */
static void arena_fork_prepare(void)
{
	unsigned int i;

	/*
	 * The parent waits for the child's copy with read(), every lock
	 * held: no cancellation until the handlers are done, in either
	 * process (the child is a copy of this thread).
	 */
	sm_fork_cancel = sm_cancel_off();
	/* Same order as arena_grow(): heap locks before the global lock. */
	for (i = 0; i < sm.nheaps; i++)
		sm_lock(&sm.heaps[i].lock);
	pthread_mutex_lock(&sm.lock);
	if (atomic_load(&sm_fork_policy) == SECMEM_FORK_COPY &&
	    pipe2(sm_fork_sync, O_CLOEXEC) < 0)
		sm_fork_sync[0] = sm_fork_sync[1] = -1;
}

static void arena_fork_parent(void)
{
	unsigned int i;
	char c;

	if (sm_fork_sync[0] >= 0) {
		/* EOF once the child has copied (or died, or exec'd). */
		sm_close(sm_fork_sync[1]);
		while (read(sm_fork_sync[0], &c, 1) < 0 && errno == EINTR)
			;
		sm_close(sm_fork_sync[0]);
		sm_fork_sync[0] = sm_fork_sync[1] = -1;
	}
	pthread_mutex_unlock(&sm.lock);
	for (i = sm.nheaps; i-- > 0;)
		sm_unlock(&sm.heaps[i].lock);
	sm_cancel_restore(sm_fork_cancel);
}

/*
 * The parent's arena @a is absent from the child (MADV_DONTFORK), and its
 * range is free there: a new arena of the child could be mapped on it, so
 * that a stale parent pointer would read the child's own secret and
 * secmem_free() would accept it.  Reserve the range, guards included,
 * without access, so that such a pointer faults, and record it in
 * sm_fences, where secmem_free() finds it a parent's pointer and does
 * nothing.  Address space only: no memory, no RLIMIT_MEMLOCK.  If the
 * range is taken (it cannot be, this early) it is neither reserved nor
 * recorded.
 */
static void arena_fork_fence(const struct sm_arena *a)
{
	char *base = (char *)atomic_load(&a->base) - sm_page_size;
	size_t len = atomic_load(&a->size) + 2 * sm_page_size;
	uintptr_t lo = (uintptr_t)base, hi = lo + len;
	void *r;

	r = mmap(base, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		 MAP_FIXED_NOREPLACE, -1, 0);
	if (r == MAP_FAILED)
		return;
	if (r != base) {
		munmap(r, len);	/* kernels before 4.17 ignore the flag */
		return;
	}
	if (sm_nfences < SM_MAX_FENCES) {
		sm_fences[sm_nfences].lo = lo;
		sm_fences[sm_nfences++].hi = hi;
		return;
	}
	if (lo < sm_fences[SM_MAX_FENCES - 1].lo)
		sm_fences[SM_MAX_FENCES - 1].lo = lo;
	if (hi > sm_fences[SM_MAX_FENCES - 1].hi)
		sm_fences[SM_MAX_FENCES - 1].hi = hi;
}

/*
 * SECMEM_FORK_COPY, in the child: give every arena a file of its own with
 * the parent's live pages, then restore the guards and protections of the
 * secmem_alloc_pages() blocks, which the new mapping reset.  Sharing the
 * parent's pages would let each process overwrite the other's heap, so a
 * child that cannot copy must not go on.
 */
static void arena_fork_copy(void)
{
	unsigned int i;
	size_t p, pg = sm_page_size;
	int err;

	if (sm_fork_sync[1] < 0)
		sm_die("fork: cannot wait for the child's copy of secret memory "
		       "(pipe2 failed); refusing to share the parent's heap");
	for (i = 0; i < SM_MAX_ARENAS; i++) {
		struct sm_arena *a = &sm.arenas[i];
		struct sm_region r = {
			.fd = a->fd,
			.base = (void *)atomic_load(&a->base),
			.size = atomic_load(&a->size),
		};

		/*
		 * A dead arena cannot be read and needs no copy: its file
		 * stays empty for good, so the child shares it, and a free
		 * in it touches no memory (heap_free_wiped()).
		 */
		if (!r.base || a->wiped)
			continue;
		err = sm_region_copy(&r, a->used);
		if (err)
			sm_die("fork: cannot copy %zu bytes of secret memory "
			       "into the child: %s", r.size, strerror(-err));
		a->fd = r.fd;
		for (p = 0; p < a->npages;) {
			struct sm_run *run = *arena_owner(a, p);
			char *start;

			if (!run) {
				p++;
				continue;
			}
			p += run->npages;
			if (run->kind != SM_RUN_PAGES)
				continue;
			start = sm_run_addr(run);
			mprotect(start, pg, PROT_NONE);
			mprotect(start + (run->npages - 1) * pg, pg, PROT_NONE);
			if (run->prot != SECMEM_READWRITE)
				mprotect(start + pg, run->usable,
					 sm_pages_prot[run->prot]);
		}
	}
	sm_close(sm_fork_sync[0]);
	sm_close(sm_fork_sync[1]);	/* the parent goes on */
	sm_fork_sync[0] = sm_fork_sync[1] = -1;
	for (i = 0; i < SM_MAX_HEAPS; i++)
		sm_lock_init(&sm.heaps[i].lock);
	arena_threads_reset();
	pthread_mutex_init(&sm.lock, NULL);
}

static void arena_fork_child(void)
{
	unsigned int i;
	size_t p;

	if (atomic_load(&sm_fork_policy) == SECMEM_FORK_COPY) {
		arena_fork_copy();
		sm_cancel_restore(sm_fork_cancel);
		return;
	}
	for (i = 0; i < SM_MAX_ARENAS; i++) {
		struct sm_arena *a = &sm.arenas[i];

		if (atomic_load(&a->base)) {
			arena_fork_fence(a);
			for (p = 0; p < a->npages;) {
				struct sm_run *run = *arena_owner(a, p);

				/* Each run is freed once, at its first page. */
				p += run ? run->npages : 1;
				free(run);
			}
			arena_meta_free(a);
			sm_close(a->fd);
		}
		memset(a, 0, sizeof(*a));
		a->fd = -1;
	}
	for (i = 0; i < SM_MAX_HEAPS; i++) {
		memset(&sm.heaps[i], 0, sizeof(sm.heaps[i]));
		sm_lock_init(&sm.heaps[i].lock);
	}
	atomic_store(&sm.slots_hw, 0);
	sm_last_slot = 0;
	sm_counters_reset();
	arena_threads_reset();
	pthread_mutex_init(&sm.lock, NULL);
	sm_cancel_restore(sm_fork_cancel);
}
