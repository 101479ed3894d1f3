// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Page-granular secrets for callers that want sodium_mprotect()-style
 * protection: a run of the arena with a PROT_NONE guard page on each side.
 * The guards live inside the arena (the arena is one shared mapping, so
 * they cannot be anonymous memory); mprotect() splits the mapping, which
 * is why ordinary allocations do not get per-allocation guards.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>

#include "internal.h"
#include "sanitize.h"

const int sm_pages_prot[3] = {
	[SECMEM_NOACCESS] = PROT_NONE,
	[SECMEM_READONLY] = PROT_READ,
	[SECMEM_READWRITE] = PROT_READ | PROT_WRITE,
};

void *sm_pages_alloc_locked(struct sm_heap *h, size_t size, bool grow)
{
	size_t pg = sm_page_size;
	size_t npages = sm_round_up(size, pg) / pg;
	struct sm_run *run;
	char *start;

	run = sm_run_alloc(h, npages + 2, 1, sizeof(*run), grow);
	if (!run)
		return NULL;
	start = sm_run_addr(run);
	if (mprotect(start, pg, PROT_NONE) < 0 ||
	    mprotect(start + (npages + 1) * pg, pg, PROT_NONE) < 0) {
		/* ENOMEM: the split would exceed vm.max_map_count. */
		mprotect(start, (npages + 2) * pg, PROT_READ | PROT_WRITE);
		sm_run_release(h, run);
		sm_fail(SECMEM_ENOMEM, ENOMEM);
		return NULL;
	}
	run->kind = SM_RUN_PAGES;
	run->usable = npages * pg;
	run->prot = SECMEM_READWRITE;
	sm_unpoison(start + pg, run->usable);
	return start + pg;
}

void sm_pages_free_locked(struct sm_heap *h, struct sm_run *run)
{
	size_t pg = sm_page_size;
	char *start = sm_run_addr(run);
	size_t len = run->npages * pg;

	/*
	 * Back to the arena's protection, so the mapping can merge again.  If
	 * this fails the pages are leaked rather than handed out unusable.
	 */
	if (mprotect(start, len, PROT_READ | PROT_WRITE) < 0)
		return;
	secmem_memzero(start + pg, run->usable);
	sm_vg_free(start + pg);
	sm_vg_defined(start, len);
	sm_poison(start, len);
	sm_run_release(h, run);
}

SECMEM_API int secmem_protect(void *ptr, int prot)
{
	struct sm_arena *a;
	struct sm_heap *h;
	struct sm_run *run;
	int r = -1;

	if (prot < SECMEM_NOACCESS || prot > SECMEM_READWRITE) {
		sm_fail(SECMEM_EINVAL, EINVAL);
		return -1;
	}
	a = ptr ? sm_arena_lookup(ptr, &h) : NULL;
	if (!a) {
		sm_fail(SECMEM_EINVAL, EINVAL);
		return -1;
	}
	run = sm_run_of(a, ptr);
	if (!run || run->kind != SM_RUN_PAGES ||
	    (char *)ptr != (char *)sm_run_addr(run) + sm_page_size) {
		sm_fail(SECMEM_EINVAL, EINVAL);
	} else if (mprotect(ptr, run->usable, sm_pages_prot[prot]) < 0) {
		sm_fail(SECMEM_ENOMEM, errno);
	} else {
		run->prot = prot;
		r = 0;
	}
	sm_unlock(&h->lock);
	return r;
}
