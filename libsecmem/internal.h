/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsecmem internals shared between the source files.  Nothing here is
 * exported: the library is built with -fvisibility=hidden and only the
 * functions marked SECMEM_API in secmem.h are visible.
 *
 * Vocabulary:
 *  arena - one memfd, mapped once, with an anonymous PROT_NONE guard page
 *          on each side; carved into page runs.  An empty arena is kept
 *          as a spare for reuse (within a budget) or returned.
 *  run   - consecutive pages of an arena: a slab of one size class, a large
 *          allocation, or a guarded secmem_alloc_pages() block.
 *  heap  - a lock, a list of arenas and per-size-class lists of slabs with
 *          free chunks.  Each thread is bound to the heap with the fewest
 *          live threads; there is no global lock on the allocation path.
 */
#ifndef SECMEM_INTERNAL_H
#define SECMEM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secmem.h"

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>	/* glibc 2.32 */
#define SM_HAVE_SINGLE_THREADED 1
#endif
#endif

#define SM_MAX_HEAPS	8
#define SM_MAX_ARENAS	1024
/*
 * Arenas grow geometrically per heap, from 1 MiB up to 256 MiB, so that
 * ten million small secrets fit in ten arenas (21 lines of
 * /proc/self/maps when the guards of neighbouring arenas merge) while a
 * process that keeps one key does not lock more than 1 MiB.
 */
#define SM_ARENA_MIN	(1UL << 20)
#define SM_ARENA_MAX	(256UL << 20)
/*
 * Empty arenas a heap keeps for reuse: at most one arena of the size it
 * would map next, and never more than SM_SPARE_MAX, so that a heap whose
 * arenas have grown to SM_ARENA_MAX does not keep as much again mapped
 * and locked for reuse.  Spares are returned first when RLIMIT_MEMLOCK
 * refuses a new arena.
 */
#define SM_SPARE_MAX	(32UL << 20)
/*
 * The page map (run of every page) is two-level, with leaves of 4096
 * pointers (32 KiB): malloc() serves them from its heap, where one array
 * per large arena would be an mmap() of its own between two arenas.
 */
#define SM_OWNER_SHIFT	12
#define SM_OWNER_LEAF	(1UL << SM_OWNER_SHIFT)

#define SM_CANARY_SIZE	sizeof(uint64_t)
#define SM_ALIGN	16
#define SM_NCLASSES	36	/* at most 64: bits of sm_heap.idle_slabs */
#define SM_SMALL_MAX	16384	/* largest size class, canary included */

enum sm_run_kind {
	SM_RUN_SLAB = 1,
	SM_RUN_LARGE,
	SM_RUN_PAGES,
};

struct sm_arena;

struct sm_run {
	struct sm_run *prev, *next;	/* heap->partial[cls], slabs only */
	struct sm_arena *arena;
	size_t first_page, npages;
	enum sm_run_kind kind;
	unsigned int cls;		/* slabs: size class index */
	unsigned int nchunks, nfree;	/* slabs */
	unsigned int hint;		/* slabs: first word that may be free */
	int prot;			/* pages: SECMEM_NOACCESS... */
	size_t usable;			/* large and pages: usable bytes */
	uint64_t bitmap[];		/* slabs: bit set = chunk in use */
};

/*
 * The heap lock: a futex word, 0 free, 1 held, 2 held with waiters
 * (Drepper, "Futexes Are Tricky", mutex #2), taken and released inline.
 * Each malloc/free pair takes a heap lock twice, and
 * pthread_mutex_lock()/unlock() cost about 55 instructions a pair
 * (callgrind: a call through the PLT, the mutex type and owner checks)
 * for the one locked instruction each that is needed.  Like a default
 * pthread mutex it does not spin and is not fair; like it, it is
 * re-initialised in a fork child (arena.c) after the parent's fork
 * handler took every heap lock.
 */
typedef struct {
	_Atomic int v;
} sm_lock_t;

void sm_lock_slow(sm_lock_t *l);
void sm_unlock_wake(sm_lock_t *l);

static inline void sm_lock_init(sm_lock_t *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_relaxed);
}

/*
 * In a process with one thread no other can take or wait for the lock:
 * glibc's __libc_single_threaded says so (it turns false before a second
 * thread starts, from the only thread, and true again in a fork child),
 * and then a plain load and store do, as glibc's malloc does with its own
 * locks.  The locked cmpxchg and xchg cost 6 ns a malloc/free pair in a
 * single-threaded program (alloc_bench's alloc_free_ns_64, static link).
 * A lock taken plainly and released after a thread started is released
 * with the xchg, which wakes that thread if it waits: the flag is read
 * at each end.
 */
static inline bool sm_single_threaded(void)
{
#ifdef SM_HAVE_SINGLE_THREADED
	return __libc_single_threaded;
#else
	return false;
#endif
}

static inline void sm_lock(sm_lock_t *l)
{
	int free_v = 0;

	if (sm_single_threaded() &&
	    !atomic_load_explicit(&l->v, memory_order_relaxed)) {
		atomic_store_explicit(&l->v, 1, memory_order_relaxed);
		return;
	}
	if (!atomic_compare_exchange_strong_explicit(&l->v, &free_v, 1,
						     memory_order_acquire,
						     memory_order_relaxed))
		sm_lock_slow(l);
}

static inline void sm_unlock(sm_lock_t *l)
{
	if (sm_single_threaded()) {
		atomic_store_explicit(&l->v, 0, memory_order_relaxed);
		return;
	}
	if (atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2)
		sm_unlock_wake(l);
}

struct sm_heap;

/*
 * Arena slots and heaps are cache-line aligned: otherwise heap 0's
 * counters share a line with heap 1's lock, and two threads on two heaps
 * pay about 8x the one-thread cost per allocation.
 */
#define SM_CACHELINE	64

struct sm_arena {
	/* Read without the heap lock by sm_arena_lookup(): atomics. */
	_Alignas(SM_CACHELINE) _Atomic uintptr_t base;	/* 0: slot unused */
	_Atomic size_t size;
	struct sm_heap *_Atomic heap;
	/* The rest is protected by heap->lock. */
	int fd;
	/*
	 * The kernel wiped the file (secmem_wiped()): the arena is on
	 * heap->dead, gives no new memory and is never read or written
	 * again.  Beside base, in the cache line every free loads.
	 */
	bool wiped;
	size_t npages, pages_used;
	size_t hint;			/* first bitmap word that may be free */
	uint64_t *used;			/* bit set = page in use */
	/* Run of every page, NULL if free: owner[p >> SHIFT][p % LEAF]. */
	struct sm_run ***owner;
	struct sm_arena *next;		/* heap->arenas, spares or dead */
};

struct sm_heap {
	_Alignas(SM_CACHELINE) sm_lock_t lock;
	struct sm_arena *arenas;	/* arenas to allocate from */
	struct sm_arena *spares;	/* empty arenas kept for reuse */
	struct sm_arena *dead;		/* wiped arenas with live allocations */
	struct sm_run *partial[SM_NCLASSES];
	/*
	 * Bit c: an empty slab of class c is kept on partial[c] (at most
	 * one per class), so that a malloc/free pair with nothing else live
	 * does not build and tear down a slab, and retire its arena, each
	 * time.  Only slabs of arenas of at most SM_ARENA_MIN are kept.
	 */
	uint64_t idle_slabs;
	/*
	 * Written under the lock only; atomic because secmem_stats() reads
	 * them without it (relaxed: plain loads and stores, no lock prefix).
	 */
	_Atomic uint64_t in_use;	/* usable bytes handed out */
	_Atomic uint64_t nallocs;	/* live allocations */
	size_t mapped;			/* bytes of this heap's arenas, spares too */
	size_t spare_bytes;		/* bytes of its spares */
};

/* backend.c */
struct sm_region {
	int fd;
	void *base;
	size_t size;
};
enum secmem_backend sm_backend_get(void);
bool sm_ipc_lock_effective(void);
bool sm_secret_ipc_lock_exempts(void);
int sm_backend_probe(unsigned int flags);
void sm_refuse_insecure(void);
bool sm_insecure_is_refused(void);
int sm_region_map(struct sm_region *r, size_t size);
void sm_region_unmap(struct sm_region *r);
int sm_backend_memfd(size_t size, bool seal, bool cloexec);
int sm_region_copy(struct sm_region *r, const uint64_t *used);
int sm_fd_wiped(int fd);
void sm_fail_wiped_probe(int err);
extern _Atomic int sm_fork_policy;

/* arena.c */
extern size_t sm_page_size;
extern unsigned int sm_page_shift;	/* log2(sm_page_size) */
extern uint64_t sm_canary_key;
int sm_ensure_init(void);
struct sm_heap *sm_heap_home(void);
struct sm_heap *sm_heap_at(unsigned int i);
unsigned int sm_heap_count(void);
struct sm_arena *sm_arena_lookup(const void *ptr, struct sm_heap **locked);
bool sm_fenced(const void *ptr);
struct sm_run *sm_run_alloc(struct sm_heap *h, size_t npages,
			    size_t align_pages, size_t desc_size, bool grow);
void sm_run_release(struct sm_heap *h, struct sm_run *run);
bool sm_spares_release(void);

/*
 * Inline, with a shift for the page number: on the path of every free and
 * secmem_owns(), where a call into arena.c and a division by the run-time
 * page size would cost more than the rest of the lookup.
 */
static inline void *sm_run_addr(const struct sm_run *run)
{
	return (char *)atomic_load_explicit(&run->arena->base,
					    memory_order_relaxed) +
	       (run->first_page << sm_page_shift);
}

/* The run holding @ptr, which lies in @a (its heap locked); NULL if free. */
static inline struct sm_run *sm_run_of(struct sm_arena *a, const void *ptr)
{
	size_t p = ((uintptr_t)ptr - atomic_load(&a->base)) >> sm_page_shift;

	/* heap_find_in() dies on a NULL @a: cppcheck misses the _Noreturn. */
	// cppcheck-suppress nullPointerRedundantCheck
	return a->owner[p >> SM_OWNER_SHIFT][p & (SM_OWNER_LEAF - 1)];
}

/* heap.c */
bool sm_heap_drop_idle_slabs(struct sm_heap *h);
void sm_heap_drop_slabs_of(struct sm_heap *h, const struct sm_arena *a);

/* pages.c */
extern const int sm_pages_prot[3];	/* SECMEM_NOACCESS... -> PROT_* */
void *sm_pages_alloc_locked(struct sm_heap *h, size_t size, bool grow);
void sm_pages_free_locked(struct sm_heap *h, struct sm_run *run);

/* stats.c */
struct sm_counters {
	_Atomic uint64_t bytes_mapped;
	_Atomic uint64_t charged;
	_Atomic uint64_t arenas;
	_Atomic uint64_t fds;
	_Atomic uint64_t mappings;
	_Atomic uint64_t spares;	/* spare arenas of all heaps */
	_Atomic uint64_t wiped_arenas;	/* dead arenas of all heaps */
	_Atomic uint64_t wiped_bytes;	/* their bytes */
};
extern struct sm_counters sm_count;
size_t sm_memlock_charge_upto(size_t want, size_t min);
void sm_memlock_uncharge(size_t bytes);
void sm_counters_reset(void);

/* util.c */
struct sm_error {
	int code;
	int sys_errno;
	/*
	 * SECMEM_ESYSCALL: the operation that failed; SECMEM_EINVAL: NULL,
	 * or the sentence secmem_strerror() gives for this refusal.
	 */
	const char *what;
	uint64_t limit, in_use, requested;
};
void *sm_fail(int code, int err);
void sm_fail_syscall(const char *what, int err);
void sm_fail_einval(int err, const char *why);
void sm_fail_memlock(uint64_t limit, uint64_t in_use, uint64_t requested);
struct sm_error *sm_error_get(void);
_Noreturn void sm_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
uint64_t sm_random_u64(void);

/*
 * Cancellation: close(), read(), write(), fallocate(), getrandom() and
 * waitpid() are cancellation points, and libsecmem makes them with a lock
 * held or its bookkeeping half done: a thread cancelled in one would
 * leave the lock held for good.  Like malloc(3), no libsecmem function is
 * a cancellation point: such calls run with cancellation disabled, and a
 * pending request is acted on at the caller's next cancellation point.
 */
static inline int sm_cancel_off(void)
{
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void sm_cancel_restore(int old)
{
	pthread_setcancelstate(old, NULL);
}

/* close() that is no cancellation point; errno is kept. */
void sm_close(int fd);

static inline size_t sm_round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

#endif /* SECMEM_INTERNAL_H */
