// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The malloc family: size classes carved from slabs, large allocations as
 * page runs, a canary at the end of every allocation.
 *
 * A chunk of class c holds c - 8 usable bytes followed by an 8-byte canary
 * (a per-process random key XORed with the canary's address), so an
 * overflow past the usable size is caught by secmem_free().  Whether a
 * chunk is live is kept in the slab's bitmap, outside the secret memory,
 * so a double free is detected even if the chunk was overwritten.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "sanitize.h"

static const uint32_t heap_class_size[SM_NCLASSES] = {
	16, 32, 48, 64, 80, 96, 112, 128,
	160, 192, 224, 256, 320, 384, 448, 512,
	640, 768, 896, 1024, 1280, 1536, 1792, 2048,
	2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
	10240, 12288, 14336, 16384,
};

_Static_assert(sizeof(heap_class_size) / sizeof(heap_class_size[0]) ==
	       SM_NCLASSES, "size class table");

/*
 * ceil(2^64 / size) per class: the chunk index of an offset in a slab is
 * (off * recip) >> 64, exact for every offset below 2^32 (Lemire et al.,
 * "Faster remainder by direct computation", 2019), where a division by
 * the class size, one or two per free, cost tens of cycles.  Slabs are at
 * most 8 chunks of 16 KiB: offsets stay far below 2^32.
 */
#define R(c) (UINT64_MAX / (c) + 1)
static const uint64_t heap_class_recip[SM_NCLASSES] = {
	R(16), R(32), R(48), R(64), R(80), R(96), R(112), R(128),
	R(160), R(192), R(224), R(256), R(320), R(384), R(448), R(512),
	R(640), R(768), R(896), R(1024), R(1280), R(1536), R(1792), R(2048),
	R(2560), R(3072), R(3584), R(4096), R(5120), R(6144), R(7168), R(8192),
	R(10240), R(12288), R(14336), R(16384),
};
#undef R

/* @off / the size of class @cls, for @off within a slab. */
static inline size_t heap_chunk_index(size_t off, unsigned int cls)
{
	return (size_t)(((unsigned __int128)heap_class_recip[cls] * off) >> 64);
}

/*
 * Smallest class of at least @need bytes (at most SM_SMALL_MAX), without
 * a search: 16-byte steps up to 128, then four classes in each power of
 * two (2^k, 2^(k+1)], 2^(k-2) apart: a few instructions, where a
 * linear search over the classes costs about 80 for an allocation of a
 * few hundred bytes.
 */
static unsigned int heap_class_min(size_t need)
{
	unsigned int k;

	if (need <= 128)
		return need ? (unsigned int)((need + 15) / 16) - 1 : 0;
	k = 63 - (unsigned int)__builtin_clzll((unsigned long long)need - 1);
	/* need - 2^k is in 1..2^k: steps of 2^(k-2), rounded up, 1..4. */
	return 8 + (k - 7) * 4 +
	       (unsigned int)((need - ((size_t)1 << k) - 1) >> (k - 2));
}

/* Smallest class of at least @need bytes that is a multiple of @align. */
static int heap_class_of(size_t need, size_t align)
{
	unsigned int i = heap_class_min(need);

	/* Every class is a multiple of SM_ALIGN: no search for malloc(). */
	if (align <= SM_ALIGN)
		return (int)i;
	for (; i < SM_NCLASSES; i++) {
		if (heap_class_size[i] % align == 0)
			return (int)i;
	}
	return -1;
}

/* Slabs of at least 16 KiB and 8 chunks: few runs, little waste. */
static size_t heap_slab_pages(unsigned int cls)
{
	size_t bytes = (size_t)heap_class_size[cls] * 8;

	if (bytes < 16384)
		bytes = 16384;
	return sm_round_up(bytes, sm_page_size) / sm_page_size;
}

static uint64_t heap_canary(const void *where)
{
	return sm_canary_key ^ (uint64_t)(uintptr_t)where;
}

static void heap_canary_set(void *where)
{
	uint64_t c = heap_canary(where);

	memcpy(where, &c, sizeof(c));
}

static void heap_canary_check(const void *where, const void *ptr)
{
	uint64_t c;

	memcpy(&c, where, sizeof(c));
	if (c != heap_canary(where))
		sm_die("canary after %p overwritten (heap buffer overflow)",
		       ptr);
}

static void heap_partial_push(struct sm_heap *h, struct sm_run *run)
{
	run->prev = NULL;
	run->next = h->partial[run->cls];
	if (run->next)
		run->next->prev = run;
	h->partial[run->cls] = run;
}

static void heap_partial_remove(struct sm_heap *h, struct sm_run *run)
{
	if (run->prev)
		run->prev->next = run->next;
	else
		h->partial[run->cls] = run->next;
	if (run->next)
		run->next->prev = run->prev;
	run->prev = run->next = NULL;
}

static struct sm_run *heap_slab_new(struct sm_heap *h, unsigned int cls,
				    bool grow)
{
	size_t npages = heap_slab_pages(cls);
	unsigned int nchunks = (unsigned int)(npages * sm_page_size /
					      heap_class_size[cls]);
	unsigned int words = (nchunks + 63) / 64;
	struct sm_run *run;

	run = sm_run_alloc(h, npages, 1,
			   sizeof(*run) + words * sizeof(uint64_t), grow);
	if (!run)
		return NULL;
	run->kind = SM_RUN_SLAB;
	run->cls = cls;
	run->nchunks = nchunks;
	run->nfree = nchunks;
	/* Chunks past nchunks in the last word never exist. */
	if (nchunks % 64)
		run->bitmap[words - 1] = ~0ULL << (nchunks % 64);
	heap_partial_push(h, run);
	return run;
}

static void *heap_slab_alloc(struct sm_heap *h, unsigned int cls, bool grow)
{
	struct sm_run *run = h->partial[cls];
	uint32_t csize = heap_class_size[cls];
	unsigned int w, idx;
	char *chunk;

	if (!run) {
		run = heap_slab_new(h, cls, grow);
		if (!run)
			return NULL;
	} else if (run->nfree == run->nchunks) {
		h->idle_slabs &= ~(1ULL << cls);	/* the idle slab, in use */
	}
	for (w = run->hint; run->bitmap[w] == UINT64_MAX; w++)
		;
	idx = w * 64 + (unsigned int)__builtin_ctzll(~run->bitmap[w]);
	run->bitmap[w] |= 1ULL << (idx % 64);
	run->hint = w;
	if (--run->nfree == 0)
		heap_partial_remove(h, run);

	chunk = (char *)sm_run_addr(run) + (size_t)idx * csize;
	sm_unpoison(chunk, csize);
	heap_canary_set(chunk + csize - SM_CANARY_SIZE);
	return chunk;
}

static void *heap_large_alloc(struct sm_heap *h, size_t need, size_t align,
			      bool grow)
{
	size_t npages = sm_round_up(need, sm_page_size) / sm_page_size;
	size_t align_pages = align > sm_page_size ? align / sm_page_size : 1;
	struct sm_run *run;
	char *p;

	run = sm_run_alloc(h, npages, align_pages, sizeof(*run), grow);
	if (!run)
		return NULL;
	run->kind = SM_RUN_LARGE;
	run->usable = npages * sm_page_size - SM_CANARY_SIZE;
	p = sm_run_addr(run);
	sm_unpoison(p, npages * sm_page_size);
	heap_canary_set(p + run->usable);
	return p;
}

static size_t heap_run_usable(const struct sm_run *run)
{
	if (run->kind == SM_RUN_SLAB)
		return heap_class_size[run->cls] - SM_CANARY_SIZE;
	return run->usable;
}

/*
 * Called with h->lock held, the only writers' lock: a relaxed load and
 * store each, not a locked read-modify-write.  The counters are atomic
 * only so that secmem_stats() may read them without the lock.
 */
static inline void heap_account(struct sm_heap *h, size_t usable, bool add)
{
	uint64_t in_use = atomic_load_explicit(&h->in_use,
					       memory_order_relaxed);
	uint64_t n = atomic_load_explicit(&h->nallocs, memory_order_relaxed);

	if (add) {
		in_use += usable;
		n++;
	} else {
		in_use -= usable;
		n--;
	}
	atomic_store_explicit(&h->in_use, in_use, memory_order_relaxed);
	atomic_store_explicit(&h->nallocs, n, memory_order_relaxed);
}

static void *heap_alloc_in(struct sm_heap *h, size_t need, size_t align,
			   bool grow, size_t *usable)
{
	int cls = -1;
	void *p;

	if (need <= SM_SMALL_MAX && align <= sm_page_size)
		cls = heap_class_of(need, align);
	if (cls >= 0) {
		p = heap_slab_alloc(h, (unsigned int)cls, grow);
		*usable = heap_class_size[cls] - SM_CANARY_SIZE;
		return p;
	}
	p = heap_large_alloc(h, need, align, grow);
	if (p)
		*usable = sm_round_up(need, sm_page_size) - SM_CANARY_SIZE;
	return p;
}

/*
 * The allocation path: the calling thread's home heap first (adding an
 * arena if needed), then the free space of the other heaps, which matters
 * when RLIMIT_MEMLOCK forbids a new arena.  If the home heap fails on
 * RLIMIT_MEMLOCK while spare arenas (its own are already gone) hold part
 * of it, they are returned and the home heap tried again first: spares
 * must neither make an allocation fail nor send a thread to another
 * heap's lock for good.  @pages selects a guarded secmem_alloc_pages()
 * block instead.
 */
static void *heap_alloc_slow(struct sm_heap *home, size_t size, size_t need,
			     size_t align, bool zeroed, bool pages)
{
	struct sm_error err = { 0 };
	bool drained = false;
	size_t usable = 0;
	struct sm_heap *h;
	unsigned int i;
	void *p;

again:
	for (i = 0, h = home; i <= sm_heap_count(); i++) {
		if (i)
			h = sm_heap_at(i - 1);
		if (i && h == home)
			continue;
		sm_lock(&h->lock);
		if (pages) {
			p = sm_pages_alloc_locked(h, size, i == 0);
			usable = p ? sm_round_up(size, sm_page_size) : 0;
		} else {
			p = heap_alloc_in(h, need, align, i == 0, &usable);
		}
		if (p) {
			heap_account(h, usable, true);
			sm_unlock(&h->lock);
			sm_vg_alloc(p, usable, zeroed);
			return p;
		}
		sm_unlock(&h->lock);
		if (i)
			continue;
		err = *sm_error_get();
		/* No lock is held here: the other heaps' may be taken. */
		if (err.code == SECMEM_EMEMLOCK && !drained) {
			drained = true;
			if (sm_spares_release())
				goto again;
		}
	}
	/* Report why the home heap could not grow, not the last probe. */
	*sm_error_get() = err;
	errno = err.sys_errno;
	return NULL;
}

/*
 * The first try, on the home heap, is inline: most allocations succeed
 * there, and the loop over the other heaps (with its error record, set
 * up on every call) cost about 20 instructions each.  A failure starts
 * over in heap_alloc_slow(), home heap first, as the loop always did.
 */
static void *heap_alloc(size_t size, size_t align, bool zeroed, bool pages)
{
	struct sm_heap *home;
	size_t need, usable = 0;

	if (sm_ensure_init() < 0)
		return NULL;
	/*
	 * Like malloc(): no object may be larger than PTRDIFF_MAX, and errno
	 * is ENOMEM.  The kernel was not asked, so the code says the size is
	 * impossible rather than that the kernel refused it.
	 */
	if (size > PTRDIFF_MAX - SM_SMALL_MAX || align > PTRDIFF_MAX / 2)
		return sm_fail(SECMEM_EOVERFLOW, ENOMEM);
	need = size + SM_CANARY_SIZE;
	home = sm_heap_home();
	if (!pages) {
		void *p;

		sm_lock(&home->lock);
		p = heap_alloc_in(home, need, align, true, &usable);
		if (p) {
			heap_account(home, usable, true);
			sm_unlock(&home->lock);
			sm_vg_alloc(p, usable, zeroed);
			return p;
		}
		sm_unlock(&home->lock);
	}
	return heap_alloc_slow(home, size, need, align, zeroed, pages);
}

/* What heap_find_in() returns NULL for instead of aborting. */
#define SM_FIND_FOREIGN	(1U << 0)	/* a pointer outside every arena */
#define SM_FIND_PARENT	(1U << 1)	/* the parent's, in a fork child */

/*
 * Find the live allocation at @ptr and return its run with its heap locked
 * in *@hp.  A pointer outside every arena is NULL if @flags allow it:
 * SM_FIND_PARENT for one in a range of the parent's arenas that this fork
 * child reserved (sm_fenced()), SM_FIND_FOREIGN for any.  Anything else
 * aborts: a double free, a foreign pointer, or an address in an arena
 * that is no allocation's start (a slab's tail past its last chunk
 * included).
 */
static struct sm_run *heap_find_in(const void *ptr, struct sm_heap **hp,
				   const char *who, unsigned int flags)
{
	struct sm_arena *a = sm_arena_lookup(ptr, hp);
	struct sm_run *run;
	size_t off, idx;
	uint32_t csize;

	if (!a) {
		if (flags & SM_FIND_FOREIGN)
			return NULL;
		if (sm_fenced(ptr)) {
			if (flags & SM_FIND_PARENT)
				return NULL;
			sm_die("%s(%p): memory of the parent process, which "
			       "this fork child did not inherit "
			       "(SECMEM_FORK_DROP)", who, ptr);
		}
		goto foreign;
	}
	run = sm_run_of(a, ptr);
	if (!run)
		goto dead;
	off = (size_t)((const char *)ptr - (const char *)sm_run_addr(run));
	switch (run->kind) {
	case SM_RUN_SLAB:
		csize = heap_class_size[run->cls];
		idx = heap_chunk_index(off, run->cls);
		if (idx >= run->nchunks)
			goto foreign;
		if (off != idx * csize)
			goto inside;
		if (!(run->bitmap[idx / 64] & (1ULL << (idx % 64))))
			goto dead;
		return run;
	case SM_RUN_LARGE:
		if (off)
			goto inside;
		return run;
	case SM_RUN_PAGES:
		if (off != sm_page_size)
			goto inside;
		return run;
	}
inside:
	sm_die("%p points inside an allocation, not to its start "
	       "(invalid free)", ptr);
dead:
	sm_die("%p is not a live allocation (double free or use after free)",
	       ptr);
foreign:
	sm_die("%s(%p): pointer not allocated by libsecmem", who, ptr);
}

static struct sm_run *heap_find(const void *ptr, struct sm_heap **hp,
				const char *who)
{
	return heap_find_in(ptr, hp, who, 0);
}

SECMEM_API void *secmem_malloc(size_t size)
{
	return heap_alloc(size, SM_ALIGN, false, false);
}

SECMEM_API void *secmem_calloc(size_t nmemb, size_t size)
{
	size_t total;

	/* errno as glibc's calloc() and secmem_malloc(SIZE_MAX): ENOMEM. */
	if (__builtin_mul_overflow(nmemb, size, &total))
		return sm_fail(SECMEM_EOVERFLOW, ENOMEM);
	/* Free chunks are zeroed and fresh arena pages are zero. */
	return heap_alloc(total, SM_ALIGN, true, false);
}

SECMEM_API void *secmem_aligned_alloc(size_t alignment, size_t size)
{
	if (!alignment || (alignment & (alignment - 1)))
		return sm_fail(SECMEM_EINVAL, EINVAL);
	return heap_alloc(size, alignment < SM_ALIGN ? SM_ALIGN : alignment,
			  false, false);
}

SECMEM_API void *secmem_alloc_pages(size_t size)
{
	if (!size)
		return sm_fail(SECMEM_EINVAL, EINVAL);
	return heap_alloc(size, sm_page_size, false, true);
}

/* Give the empty slab @run of @h (locked) back to its arena. */
static void heap_slab_release(struct sm_heap *h, struct sm_run *run)
{
	heap_partial_remove(h, run);
	sm_vg_defined(sm_run_addr(run), run->npages * sm_page_size);
	sm_run_release(h, run);
}

/*
 * Release the allocation at @ptr of @run, in an arena that the kernel
 * wiped (secmem_wiped()): bookkeeping only.  The pages are gone and any
 * access would raise SIGBUS, so the canary is not checked and nothing is
 * zeroed (the kernel zeroed the pages as it took them).  The arena's
 * slabs are on no partial list, so a freed chunk is never handed out
 * again; a slab goes back to the arena with its last chunk, and the
 * arena to the kernel with its last run (arena_retire()).  @h is locked.
 */
static void heap_free_wiped(struct sm_heap *h, struct sm_run *run, void *ptr)
{
	sm_vg_free(ptr);
	if (run->kind == SM_RUN_SLAB) {
		size_t idx = heap_chunk_index((size_t)((char *)ptr -
						       (char *)sm_run_addr(run)),
					      run->cls);

		run->bitmap[idx / 64] &= ~(1ULL << (idx % 64));
		if (++run->nfree < run->nchunks)
			return;
	}
	sm_run_release(h, run);
}

/* Zero and release the allocation at @ptr of @run; @h is locked. */
static void heap_free_locked(struct sm_heap *h, struct sm_run *run, void *ptr)
{
	size_t usable = heap_run_usable(run);
	uint32_t csize;
	size_t idx;

	heap_account(h, usable, false);
	if (run->arena->wiped) {
		heap_free_wiped(h, run, ptr);
		return;
	}
	if (run->kind == SM_RUN_PAGES) {
		sm_pages_free_locked(h, run);
		return;
	}
	heap_canary_check((char *)ptr + usable, ptr);
	if (run->kind == SM_RUN_LARGE) {
		secmem_memzero(ptr, run->npages * sm_page_size);
		sm_vg_free(ptr);
		sm_vg_defined(ptr, run->npages * sm_page_size);
		sm_poison(ptr, run->npages * sm_page_size);
		sm_run_release(h, run);
		return;
	}
	csize = heap_class_size[run->cls];
	secmem_memzero(ptr, csize);
	sm_vg_free(ptr);
	sm_poison(ptr, csize);
	idx = heap_chunk_index((size_t)((char *)ptr - (char *)sm_run_addr(run)),
			       run->cls);
	run->bitmap[idx / 64] &= ~(1ULL << (idx % 64));
	if (idx / 64 < run->hint)
		run->hint = (unsigned int)(idx / 64);
	if (run->nfree++ == 0)
		heap_partial_push(h, run);
	if (run->nfree == run->nchunks) {
		/*
		 * Empty: keep it if the class has no idle slab yet and its
		 * arena is one of the smallest (so an idle slab never holds
		 * a large arena that would otherwise be returned); else give
		 * the pages back so the arena can empty too.
		 */
		if (!(h->idle_slabs & (1ULL << run->cls)) &&
		    atomic_load_explicit(&run->arena->size,
					 memory_order_relaxed) <= SM_ARENA_MIN) {
			h->idle_slabs |= 1ULL << run->cls;
			return;
		}
		heap_slab_release(h, run);
	}
}

/*
 * Release the idle slabs of @h (locked), so that their arenas can be
 * retired: when RLIMIT_MEMLOCK is short and before secmem_init() drops
 * every arena.  False if there were none.
 */
bool sm_heap_drop_idle_slabs(struct sm_heap *h)
{
	bool any = h->idle_slabs != 0;
	unsigned int cls;

	for (cls = 0; h->idle_slabs; cls++) {
		struct sm_run *run, *next;

		if (!(h->idle_slabs & (1ULL << cls)))
			continue;
		h->idle_slabs &= ~(1ULL << cls);
		for (run = h->partial[cls]; run; run = next) {
			next = run->next;
			if (run->nfree == run->nchunks)
				heap_slab_release(h, run);
		}
	}
	return any;
}

/*
 * The kernel wiped @a (secmem_wiped()): take its slabs off the partial
 * lists of @h (locked), so that none of their chunks is handed out again,
 * and give back those that are empty, the idle slab of a class among them
 * (the only empty slabs kept).  Releasing the last run of @a unmaps it.
 * Full slabs are on no list; heap_free_wiped() releases the others.
 */
void sm_heap_drop_slabs_of(struct sm_heap *h, const struct sm_arena *a)
{
	unsigned int cls;

	for (cls = 0; cls < SM_NCLASSES; cls++) {
		struct sm_run *run, *next;

		for (run = h->partial[cls]; run; run = next) {
			next = run->next;
			if (run->arena != a)
				continue;
			heap_partial_remove(h, run);
			if (run->nfree == run->nchunks) {
				h->idle_slabs &= ~(1ULL << cls);
				sm_run_release(h, run);
			}
		}
	}
}

/*
 * In a fork child (SECMEM_FORK_DROP) the parent's allocations are absent:
 * freeing one is a no-op that touches no memory, so that the atexit()
 * handlers and destructors a child inherits may free them.
 */
SECMEM_API void secmem_free(void *ptr)
{
	struct sm_heap *h;
	struct sm_run *run;

	if (!ptr)
		return;
	run = heap_find_in(ptr, &h, "secmem_free", SM_FIND_PARENT);
	if (!run)
		return;
	heap_free_locked(h, run, ptr);
	sm_unlock(&h->lock);
}

/*
 * One lookup where secmem_owns() then secmem_free() took two: the free of
 * an allocator that shares free() with another one (libsecmem-preload).
 * A parent's allocation in a fork child is released as secmem_free()
 * releases it, without a touch, and is 1: the other allocator must not
 * get it.
 */
SECMEM_API int secmem_free_if_owned(void *ptr)
{
	struct sm_heap *h;
	struct sm_run *run;

	if (!ptr)
		return 0;
	run = heap_find_in(ptr, &h, "secmem_free_if_owned",
			   SM_FIND_FOREIGN);
	if (!run)
		return sm_fenced(ptr) ? 1 : 0;
	heap_free_locked(h, run, ptr);
	sm_unlock(&h->lock);
	return 1;
}

SECMEM_API size_t secmem_usable_size(const void *ptr)
{
	struct sm_heap *h;
	struct sm_run *run;
	size_t usable;

	if (!ptr)
		return 0;
	run = heap_find(ptr, &h, "secmem_usable_size");
	usable = heap_run_usable(run);
	sm_unlock(&h->lock);
	return usable;
}

/* Whether offset @off of @run lies in a live allocation's usable bytes. */
static bool heap_run_covers(const struct sm_run *run, size_t off)
{
	uint32_t csize;
	size_t idx;

	switch (run->kind) {
	case SM_RUN_SLAB:
		csize = heap_class_size[run->cls];
		idx = heap_chunk_index(off, run->cls);
		return idx < run->nchunks &&
		       (run->bitmap[idx / 64] & (1ULL << (idx % 64))) &&
		       off - idx * csize < csize - SM_CANARY_SIZE;
	case SM_RUN_LARGE:
		return off < run->usable;
	case SM_RUN_PAGES:
		return off >= sm_page_size && off - sm_page_size < run->usable;
	}
	return false;
}

SECMEM_API int secmem_owns(const void *ptr)
{
	struct sm_arena *a;
	struct sm_heap *h;
	struct sm_run *run;
	int owns = 0;

	if (!ptr)
		return 0;
	a = sm_arena_lookup(ptr, &h);
	if (!a)
		return 0;
	run = sm_run_of(a, ptr);
	if (run)
		owns = heap_run_covers(run, (size_t)((const char *)ptr -
					(const char *)sm_run_addr(run)));
	sm_unlock(&h->lock);
	return owns;
}

SECMEM_API char *secmem_strndup(const char *s, size_t n)
{
	size_t len;
	char *d;

	if (!s)
		return sm_fail(SECMEM_EINVAL, EINVAL);
	len = strnlen(s, n);
	d = secmem_malloc(len + 1);
	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

SECMEM_API char *secmem_strdup(const char *s)
{
	return secmem_strndup(s, SIZE_MAX);
}

SECMEM_API void *secmem_realloc(void *ptr, size_t size)
{
	struct sm_heap *h;
	struct sm_run *run;
	size_t usable;
	bool pages, keep;
	void *n;

	if (!ptr)
		return secmem_malloc(size);
	run = heap_find(ptr, &h, "secmem_realloc");
	if (run->arena->wiped) {
		/* Nothing to keep or copy: the contents are gone. */
		sm_unlock(&h->lock);
		return sm_fail(SECMEM_EWIPED, EIO);
	}
	/*
	 * A block that secmem_protect() made READONLY or NOACCESS is
	 * refused whatever @size: the shrink would write it, the move read
	 * it, and a new block would not carry the protection asked for.
	 */
	if (run->kind == SM_RUN_PAGES && run->prot != SECMEM_READWRITE) {
		sm_unlock(&h->lock);
		sm_fail_einval(EACCES,
			       "secmem_realloc() of a block that "
			       "secmem_protect() made SECMEM_READONLY or "
			       "SECMEM_NOACCESS: it is left as it is, contents "
			       "and protection; make it SECMEM_READWRITE with "
			       "secmem_protect() first, and protect the result "
			       "again");
		return NULL;
	}
	usable = heap_run_usable(run);
	pages = run->kind == SM_RUN_PAGES;
	/* Keep the block if the new size still makes good use of it. */
	if (pages)
		keep = size && size <= usable && size > usable - sm_page_size;
	else
		keep = size <= usable && size + SM_CANARY_SIZE > usable / 2;
	if (keep) {
		/* The bytes given up must not keep the old secret. */
		secmem_memzero((char *)ptr + size, usable - size);
		sm_unlock(&h->lock);
		return ptr;
	}
	sm_unlock(&h->lock);

	n = pages && size ? secmem_alloc_pages(size) : secmem_malloc(size);
	if (!n)
		return NULL;
	memcpy(n, ptr, size < usable ? size : usable);
	secmem_free(ptr);
	return n;
}
