// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The page of statistics secmemctl status reads (stats_export.h).
 *
 * It is refreshed from the allocation paths of the modes, at most every
 * REFRESH_MS: a coarse clock read and a compare are all an allocation pays
 * otherwise.  No thread, no timer, no signal: the preload must not change
 * how the program runs.  The figures are therefore those of the last
 * allocation at least REFRESH_MS after the previous refresh; the page
 * says when that was, and secmemctl shows the age.
 *
 * The memfd is mapped and its descriptor closed at once: the program's
 * descriptor numbers are its own (daemons close everything above 2, or
 * expect open() to return 0 after closing stdin), and the mapping alone
 * keeps the file.  secmemctl finds it in /proc/PID/maps.  The mapping is
 * MADV_DONTFORK: a child does not inherit it, and creates its own at its
 * first refresh.
 *
 * Every failure here only means no statistics: it is never fatal, and
 * never printed (a program under the preload must not see new output
 * because a root tool cannot read its counters).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "secmem.h"
#include "preload.h"
#include "stats_export.h"

#define REFRESH_MS 100

static struct secmem_stats_export *page;
static pid_t page_pid;
static _Atomic uint64_t last_ms;
static _Atomic pid_t writer;	/* pid of the thread's process writing */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct secmem_stats_export *page_create(pid_t me)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p = MAP_FAILED;
	int fd;

	if (pg <= 0 || (size_t)pg < sizeof(struct secmem_stats_export))
		return NULL;
	fd = memfd_create(SECMEM_STATS_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	/* The size is fixed before anyone can map it: no SIGBUS for root. */
	if (fchmod(fd, 0600) == 0 && ftruncate(fd, pg) == 0 &&
	    fcntl(fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
		p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, (size_t)pg, MADV_DONTFORK);
	page_pid = me;
	return p;
}

static void page_write(struct secmem_stats_export *e)
{
	struct secmem_stats st;
	struct timespec ts;
	const char *name;
	size_t n;

	if (secmem_stats(&st))
		memset(&st, 0, sizeof(st));
	clock_gettime(CLOCK_REALTIME, &ts);

	atomic_store_explicit((_Atomic uint32_t *)&e->seq, e->seq + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	if (!e->updates) {
		memcpy(e->magic, SECMEM_STATS_MAGIC, sizeof(e->magic));
		e->version = SECMEM_STATS_VERSION;
		e->size = sizeof(*e);
	}
	e->pid = (int32_t)page_pid;
	e->modes = preload_modes();
	e->backend = (uint32_t)st.backend;
	name = secmem_backend_name(st.backend);
	n = strnlen(name, sizeof(e->backend_name) - 1);
	memcpy(e->backend_name, name, n);
	e->backend_name[n] = '\0';
	e->updated_ns = (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
	e->updates++;
	e->bytes_in_use = st.bytes_in_use;
	if (st.bytes_in_use > e->peak_bytes_in_use)
		e->peak_bytes_in_use = st.bytes_in_use;
	e->bytes_mapped = st.bytes_mapped;
	e->memlock_charged = st.memlock_charged;
	e->memlock_limit = st.memlock_limit;
	e->allocations = st.allocations;
	e->arenas = st.arenas;
	e->served_openssl = atomic_load(&preload_served_openssl);
	e->served_sodium = atomic_load(&preload_served_sodium);
	e->served_heap = atomic_load(&preload_served_heap);
	e->served_libc = atomic_load(&preload_served_libc);
	e->served_gcrypt = atomic_load(&preload_served_gcrypt);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit((_Atomic uint32_t *)&e->seq, e->seq + 1,
			      memory_order_relaxed);
}

/*
 * Write the page, creating it first in a child of fork() (whose parent's
 * page is not mapped here: MADV_DONTFORK).  One writer at a time; a
 * writer that was busy in the parent when it forked does not exist in the
 * child, so its mark, which carries the parent's pid, is taken over.
 */
static void refresh(void)
{
	pid_t me, busy = 0;

	if (!page)
		return;
	me = getpid();
	if (!atomic_compare_exchange_strong(&writer, &busy, me) &&
	    (busy == me || !atomic_compare_exchange_strong(&writer, &busy, me)))
		return;
	preload_nested++;
	if (page_pid != me)
		page = page_create(me);
	if (page)
		page_write(page);
	preload_nested--;
	atomic_store(&writer, 0);
}

void preload_stats_init(void)
{
	preload_nested++;
	page = page_create(getpid());
	preload_nested--;
	atomic_store(&last_ms, now_ms());
	refresh();
}

void preload_stats_tick(void)
{
	uint64_t now, last;

	if (!page)
		return;
	now = now_ms();
	last = atomic_load_explicit(&last_ms, memory_order_relaxed);
	if (now - last < REFRESH_MS ||
	    !atomic_compare_exchange_strong(&last_ms, &last, now))
		return;
	refresh();
}
