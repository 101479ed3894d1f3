// SPDX-License-Identifier: GPL-2.0
/*
 * soak-load: the three processes of the soak (tests/vm/debian/, make soak,
 * docs/RELIABILITY.md case 5). Built in the guest like any application:
 *
 *   cc -O2 -pthread -o soak-load soak-load.c $(pkg-config --cflags --libs libsecmem)
 *
 *   soak-load load [--threads N] [--memfd-threads N] [--live N] [--memfd-max BYTES]
 *                  [--burst-max BYTES] [--progress SECONDS]
 *       N threads allocate secrets with libsecmem (secmem_malloc() of 16 B
 *       to 64 KiB, secmem_alloc_pages() of up to 256 KiB), fill each with a
 *       pattern from its own seed, record a 64-bit checksum of it, and check
 *       it again before freeing it and on a periodic audit of every live
 *       secret; M threads create MFD_UNMAPPED memfds and resize them
 *       (ftruncate, fallocate), punch holes (FALLOC_FL_PUNCH_HOLE, at any
 *       offset), write them through mmap() and pwrite(), and check every
 *       4 KiB page against a copy kept in ordinary memory, through read()
 *       (the mermap) and through the mapping; now and then they also
 *       allocate a second memfd of up to --burst-max bytes whole
 *       (fallocate), read it back (zeroes) and close it: bursts of demand
 *       that drain the pools.
 *   soak-load hog [--reserve-mb N] [--step-mb N] [--hold-ms N] [--rest-ms N]
 *       cycles anonymous memory up to MemAvailable - reserve, holds it,
 *       frees it, rests; oom_score_adj 1000, so that it is the OOM killer's
 *       choice should the reserve not suffice (an OOM kill fails the soak).
 *   soak-load sample [--interval-ms N] [--pressure-pct N]
 *       samples every node's pool statistics (sysfs) and MemAvailable; see
 *       the refill gap below.
 *
 * Each runs until SIGTERM or SIGINT, then prints one line of figures,
 * "soak-ROLE: key value key value ...", and exits 0 (1 if a check failed
 * in load, 2 on a usage or setup error).
 *
 * Figures of load:
 *   checksum_failures  verifications that found other content than was
 *                      written: a secret whose checksum differs, or a 4 KiB
 *                      page of a memfd that differs from its copy
 *   lost_secrets       secrets that were changed (checksum), or that the
 *                      library no longer owned (secmem_owns()), when checked;
 *                      each secret counts once
 *   alloc_failures     allocations refused (NULL, ENOMEM): not lost data,
 *                      the caller knows
 *
 * The refill gap of sample: a node's pool is "starved" at a sample when its
 * free_bytes is below its watermark_low, i.e. the kernel owes it a refill.
 * A stretch of starved samples ends at the first sample where the node's
 * conversions counter moved (a pageblock was converted: a refill) or
 * free_bytes is back at or above watermark_low. The gap is the time from
 * the stretch's first starved sample to the sample that ends it (or, for a
 * stretch that ends with a refill, the time to that refill; a new stretch
 * starts there if the pool is still below watermark_low). max_gap_ms is the
 * longest over all nodes and the whole run; max_gap_pressure_ms the
 * longest among stretches with at least one sample under memory pressure
 * (MemAvailable below --pressure-pct of MemTotal). The resolution is the
 * sampling interval. The first stretches are printed as they end.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <secmem.h>
#include <secmem/uapi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define MAX_NODES	64
#define MAX_REPORTS	10

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("soak-load: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* splitmix64: a seed's pattern, and each thread's random numbers. */
static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? mix(s) % n : 0;
}

static void fill(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t s = seed, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		w = mix(&s);
		memcpy(p + i, &w, 8);
	}
	w = mix(&s);
	memcpy(p + i, &w, len - i);
}

/* 64-bit FNV-1a over 8-byte words, the tail byte by byte. */
static uint64_t checksum(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ^ len;
}

static unsigned long parse_num(const char *opt, const char *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-')
		die("%s wants a whole number, not '%s'", opt, v);
	return n;
}

/* --- load -------------------------------------------------------------------- */

static atomic_uint_fast64_t n_ops, n_allocated, n_freed, n_verified,
	n_checksum_failures, n_lost, n_alloc_failures, n_audits,
	n_memfds, n_memfd_ops, n_pages_checked, n_memfd_enomem, n_bytes_live,
	n_bursts, n_burst_bytes;
static atomic_int reports;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void report(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&reports, 1) >= MAX_REPORTS)
		return;
	fputs("soak-load: FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

struct slot {
	unsigned char *p;
	size_t size;
	uint64_t seed;
	uint64_t sum;
	bool pages;
};

struct secret_args {
	unsigned int id;
	unsigned int live;
};

/* True if the secret is as written; counts the check either way. */
static bool secret_ok(struct slot *s, unsigned int id, const char *when)
{
	uint64_t got;

	atomic_fetch_add(&n_verified, 1);
	if (!secmem_owns(s->p)) {
		atomic_fetch_add(&n_checksum_failures, 1);
		report("thread %u: %s: secret %p (%zu bytes) no longer owned by libsecmem",
		       id, when, (void *)s->p, s->size);
		return false;
	}
	got = checksum(s->p, s->size);
	if (got != s->sum) {
		atomic_fetch_add(&n_checksum_failures, 1);
		report("thread %u: %s: secret %p (%zu bytes, %s, seed %016" PRIx64 ") checksum %016" PRIx64
		       ", written %016" PRIx64 ", first bytes %02x %02x %02x %02x",
		       id, when, (void *)s->p, s->size, s->pages ? "pages" : "malloc", s->seed, got,
		       s->sum, s->p[0], s->p[1 % s->size], s->p[2 % s->size], s->p[3 % s->size]);
		return false;
	}
	return true;
}

static void secret_drop(struct slot *s, unsigned int id, const char *when)
{
	if (!secret_ok(s, id, when))
		atomic_fetch_add(&n_lost, 1);
	/* A secret the library disowns is not handed back to it. */
	if (secmem_owns(s->p))
		secmem_free(s->p);
	atomic_fetch_add(&n_freed, 1);
	atomic_fetch_sub(&n_bytes_live, s->size);
	s->p = NULL;
}

static void *secret_thread(void *arg)
{
	struct secret_args *a = arg;
	struct slot *slots = calloc(a->live, sizeof(*slots));
	uint64_t rng = now_ms() * 1000003 + a->id, ops = 0;
	unsigned int i;

	if (!slots)
		die("out of memory for %u slots", a->live);
	while (!stop) {
		struct slot *s = &slots[below(&rng, a->live)];
		uint64_t r = below(&rng, 1000);

		if (s->p)
			secret_drop(s, a->id, "before free");
		if (r < 900)
			s->size = 16 + below(&rng, 1009);
		else if (r < 990)
			s->size = 1024 + below(&rng, 63 * 1024);
		else
			s->size = PAGE + below(&rng, 252 * 1024);
		s->pages = r >= 990;
		s->p = s->pages ? secmem_alloc_pages(s->size) : secmem_malloc(s->size);
		atomic_fetch_add(&n_ops, 1);
		if (!s->p) {
			atomic_fetch_add(&n_alloc_failures, 1);
			sleep_ms(1);
			continue;
		}
		s->seed = mix(&rng);
		fill(s->p, s->size, s->seed);
		s->sum = checksum(s->p, s->size);
		atomic_fetch_add(&n_allocated, 1);
		atomic_fetch_add(&n_bytes_live, s->size);
		/* Every live secret again, now and then: the long-lived ones too. */
		if (++ops % 4096 == 0) {
			atomic_fetch_add(&n_audits, 1);
			for (i = 0; i < a->live; i++) {
				if (slots[i].p && !secret_ok(&slots[i], a->id, "audit")) {
					atomic_fetch_add(&n_lost, 1);
					if (secmem_owns(slots[i].p))
						secmem_free(slots[i].p);
					atomic_fetch_add(&n_freed, 1);
					atomic_fetch_sub(&n_bytes_live, slots[i].size);
					slots[i].p = NULL;
				}
			}
		}
	}
	for (i = 0; i < a->live; i++)
		if (slots[i].p)
			secret_drop(&slots[i], a->id, "at the end");
	free(slots);
	return NULL;
}

struct memfd_args {
	unsigned int id;
	size_t max;
	size_t burst_max;
};

/* Pages of [0, size) that differ from the copy; counts each page checked. */
static uint64_t compare(const unsigned char *got, const unsigned char *want, size_t size,
			unsigned int id, const char *how, uint64_t file)
{
	uint64_t bad = 0;
	size_t off, n;

	for (off = 0; off < size; off += PAGE) {
		n = size - off < PAGE ? size - off : PAGE;
		atomic_fetch_add(&n_pages_checked, 1);
		if (checksum(got + off, n) != checksum(want + off, n)) {
			bad++;
			report("memfd thread %u, file %" PRIu64 ": %s: page at %zu of %zu differs from what was written "
			       "(first byte %02x, want %02x)", id, file, how, off, size, got[off], want[off]);
		}
	}
	atomic_fetch_add(&n_checksum_failures, bad);
	return bad;
}

static void memfd_verify(int fd, const unsigned char *map, const unsigned char *shadow,
			 unsigned char *buf, size_t size, unsigned int id, uint64_t file, bool by_read)
{
	size_t done = 0;
	ssize_t n;
	struct stat st;

	if (fstat(fd, &st) < 0 || (size_t)st.st_size != size) {
		atomic_fetch_add(&n_checksum_failures, 1);
		report("memfd thread %u, file %" PRIu64 ": size %lld, want %zu", id, file,
		       (long long)st.st_size, size);
		return;
	}
	if (!by_read) {
		compare(map, shadow, size, id, "mmap", file);
		return;
	}
	while (done < size) {
		n = pread(fd, buf + done, size - done, (off_t)done);
		if (n < 0 && (errno == EINTR || errno == ENOMEM)) {
			if (errno == ENOMEM)
				atomic_fetch_add(&n_memfd_enomem, 1);
			sleep_ms(1);
			continue;
		}
		if (n <= 0) {
			atomic_fetch_add(&n_checksum_failures, 1);
			report("memfd thread %u, file %" PRIu64 ": pread at %zu of %zu: %s", id, file, done,
			       size, n ? strerror(errno) : "end of file");
			return;
		}
		done += (size_t)n;
	}
	compare(buf, shadow, size, id, "read", file);
}

/*
 * A burst of demand on the pool: a second memfd of up to burst_max bytes,
 * allocated whole with fallocate(), read back (all zeroes) and closed.
 */
static void memfd_burst(struct memfd_args *a, uint64_t *rng, unsigned char *buf)
{
	static const unsigned char zero[PAGE];
	size_t len = PAGE + below(rng, a->burst_max - PAGE + 1), done = 0, off, n;
	int fd = memfd_create("soak-burst", MFD_CLOEXEC | MFD_UNMAPPED);
	ssize_t got;

	if (fd < 0) {
		if (errno != ENOMEM)
			die("memfd_create(MFD_UNMAPPED): %s", strerror(errno));
		atomic_fetch_add(&n_alloc_failures, 1);
		return;
	}
	if (fallocate(fd, 0, 0, (off_t)len) < 0) {
		if (errno != ENOMEM)
			die("fallocate(%zu) of a burst: %s", len, strerror(errno));
		atomic_fetch_add(&n_memfd_enomem, 1);
		close(fd);
		return;
	}
	atomic_fetch_add(&n_bursts, 1);
	atomic_fetch_add(&n_burst_bytes, len);
	while (done < len) {
		got = pread(fd, buf, len - done < a->max ? len - done : a->max, (off_t)done);
		if (got < 0 && (errno == EINTR || errno == ENOMEM)) {
			if (errno == ENOMEM)
				atomic_fetch_add(&n_memfd_enomem, 1);
			sleep_ms(1);
			continue;
		}
		if (got <= 0) {
			atomic_fetch_add(&n_checksum_failures, 1);
			report("memfd thread %u: burst: pread at %zu of %zu: %s", a->id, done, len,
			       got ? strerror(errno) : "end of file");
			break;
		}
		for (off = 0; off < (size_t)got; off += PAGE) {
			n = (size_t)got - off < PAGE ? (size_t)got - off : PAGE;
			atomic_fetch_add(&n_pages_checked, 1);
			if (memcmp(buf + off, zero, n)) {
				atomic_fetch_add(&n_checksum_failures, 1);
				report("memfd thread %u: burst: page at %zu of %zu is not zero", a->id,
				       done + off, len);
			}
		}
		done += (size_t)got;
	}
	close(fd);
}

/*
 * One file at a time: random operations, the copy kept in step with what
 * each call reports it did, and the whole file checked every few steps
 * and before it is closed. Beyond the size the copy is kept zero, so a
 * file that grows reads zeroes there.
 */
static void *memfd_thread(void *arg)
{
	struct memfd_args *a = arg;
	unsigned char *shadow = calloc(1, a->max), *buf = malloc(a->max);
	uint64_t rng = now_ms() * 7919 + a->id, file = 0;

	if (!shadow || !buf)
		die("out of memory for the copy of a %zu-byte memfd", a->max);
	while (!stop) {
		int fd = memfd_create("soak", MFD_CLOEXEC | MFD_UNMAPPED);
		unsigned char *map;
		size_t size = 0;
		int step;

		if (fd < 0) {
			if (errno != ENOMEM)
				die("memfd_create(MFD_UNMAPPED): %s", strerror(errno));
			atomic_fetch_add(&n_alloc_failures, 1);
			sleep_ms(10);
			continue;
		}
		map = mmap(NULL, a->max, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			die("mmap of an unmapped memfd: %s", strerror(errno));
		file++;
		atomic_fetch_add(&n_memfds, 1);
		memset(shadow, 0, a->max);
		for (step = 0; step < 48 && !stop; step++) {
			size_t off = size ? below(&rng, size) : 0;
			size_t len = 1 + below(&rng, 256 * 1024);
			size_t ns;
			ssize_t n;

			if (off + len > size)
				len = size - off;
			atomic_fetch_add(&n_memfd_ops, 1);
			atomic_fetch_add(&n_ops, 1);
			switch (below(&rng, a->burst_max ? 9 : 8)) {
			case 0:	/* resize, to any byte */
				ns = below(&rng, a->max + 1);
				if (ftruncate(fd, (off_t)ns) < 0) {
					if (errno != ENOMEM)
						die("ftruncate(%zu): %s", ns, strerror(errno));
					atomic_fetch_add(&n_memfd_enomem, 1);
					break;
				}
				if (ns < size)
					memset(shadow + ns, 0, size - ns);
				size = ns;
				break;
			case 1:	/* write() through the mermap */
				if (!len)
					break;
				fill(buf, len, mix(&rng));
				n = pwrite(fd, buf, len, (off_t)off);
				if (n < 0) {
					if (errno != ENOMEM && errno != EINTR)
						die("pwrite(%zu at %zu): %s", len, off, strerror(errno));
					atomic_fetch_add(&n_memfd_enomem, 1);
					break;
				}
				memcpy(shadow + off, buf, (size_t)n);
				break;
			case 2:	/* stores through the mapping */
				if (!len)
					break;
				fill(shadow + off, len, mix(&rng));
				memcpy(map + off, shadow + off, len);
				break;
			case 3:	/* punch a hole, at any offset, maybe past the end */
			case 4:
				len = 1 + below(&rng, 512 * 1024);
				if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					      (off_t)off, (off_t)len) < 0) {
					if (errno != ENOMEM)
						die("punch(%zu at %zu): %s", len, off, strerror(errno));
					atomic_fetch_add(&n_memfd_enomem, 1);
					break;
				}
				if (off < size)
					memset(shadow + off, 0, (off + len > size ? size : off + len) - off);
				break;
			case 5:	/* allocate, which may grow the file */
				off = below(&rng, a->max);
				len = 1 + below(&rng, a->max - off);
				if (fallocate(fd, 0, (off_t)off, (off_t)len) < 0) {
					if (errno != ENOMEM)
						die("fallocate(%zu at %zu): %s", len, off, strerror(errno));
					atomic_fetch_add(&n_memfd_enomem, 1);
					break;
				}
				if (off + len > size)
					size = off + len;
				break;
			case 6:
				memfd_verify(fd, map, shadow, buf, size, a->id, file, true);
				break;
			case 7:
				memfd_verify(fd, map, shadow, buf, size, a->id, file, false);
				break;
			case 8:
				memfd_burst(a, &rng, buf);
				break;
			}
		}
		memfd_verify(fd, map, shadow, buf, size, a->id, file, true);
		memfd_verify(fd, map, shadow, buf, size, a->id, file, false);
		munmap(map, a->max);
		close(fd);
	}
	free(shadow);
	free(buf);
	return NULL;
}

static void print_load(const char *tag, uint64_t t0)
{
	printf("soak-load: %s seconds %" PRIu64 " ops %" PRIu64 " secrets_allocated %" PRIu64
	       " secrets_freed %" PRIu64 " verifications %" PRIu64 " audits %" PRIu64
	       " memfds %" PRIu64 " memfd_ops %" PRIu64 " pages_checked %" PRIu64
	       " checksum_failures %" PRIu64 " lost_secrets %" PRIu64 " alloc_failures %" PRIu64
	       " memfd_enomem %" PRIu64 " bursts %" PRIu64 " burst_mib %" PRIu64
	       " live_bytes %" PRIu64 "\n", tag,
	       (now_ms() - t0) / 1000, (uint64_t)n_ops, (uint64_t)n_allocated, (uint64_t)n_freed,
	       (uint64_t)n_verified, (uint64_t)n_audits, (uint64_t)n_memfds, (uint64_t)n_memfd_ops,
	       (uint64_t)n_pages_checked, (uint64_t)n_checksum_failures, (uint64_t)n_lost,
	       (uint64_t)n_alloc_failures, (uint64_t)n_memfd_enomem, (uint64_t)n_bursts,
	       (uint64_t)n_burst_bytes >> 20, (uint64_t)n_bytes_live);
	fflush(stdout);
}

static int run_load(int argc, char **argv)
{
	unsigned long threads = 2, mthreads = 2, live = 256, max = 8UL << 20, progress = 30;
	unsigned long burst = 32UL << 20;
	struct secret_args *sa;
	struct memfd_args *ma;
	pthread_t *tids;
	unsigned long i, n;
	uint64_t t0 = now_ms(), last;

	for (i = 0; i < (unsigned long)argc; i += 2) {
		if (i + 1 >= (unsigned long)argc)
			die("%s needs a value", argv[i]);
		if (!strcmp(argv[i], "--threads"))
			threads = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--memfd-threads"))
			mthreads = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--live"))
			live = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--memfd-max"))
			max = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--burst-max"))
			burst = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--progress"))
			progress = parse_num(argv[i], argv[i + 1]);
		else
			die("load: unknown option '%s'", argv[i]);
	}
	if (!threads && !mthreads)
		die("load: no threads");
	if (!live || max < PAGE || max > (1UL << 30) || !progress ||
	    (burst && (burst < PAGE || burst > (1UL << 30))))
		die("load: --live and --progress above 0, --memfd-max from 4096 to 1 GiB, --burst-max 0 or that");
	if (secmem_init(0) != 0)
		die("secmem_init: %s", secmem_strerror(secmem_last_error()));
	if (secmem_backend() != SECMEM_BACKEND_UNMAPPED_MEMFD)
		die("libsecmem's backend is %s, not the unmapped memfd",
		    secmem_backend_name(secmem_backend()));
	printf("soak-load: backend %s, %lu secret threads x %lu live, %lu memfd threads up to %lu bytes, bursts up to %lu\n",
	       secmem_backend_name(secmem_backend()), threads, live, mthreads, max, burst);
	fflush(stdout);

	tids = calloc(threads + mthreads, sizeof(*tids));
	sa = calloc(threads ? threads : 1, sizeof(*sa));
	ma = calloc(mthreads ? mthreads : 1, sizeof(*ma));
	if (!tids || !sa || !ma)
		die("out of memory");
	for (n = 0; n < threads; n++) {
		sa[n] = (struct secret_args){ .id = (unsigned int)n, .live = (unsigned int)live };
		if (pthread_create(&tids[n], NULL, secret_thread, &sa[n]))
			die("pthread_create failed");
	}
	for (i = 0; i < mthreads; i++, n++) {
		ma[i] = (struct memfd_args){ .id = (unsigned int)i, .max = max, .burst_max = burst };
		if (pthread_create(&tids[n], NULL, memfd_thread, &ma[i]))
			die("pthread_create failed");
	}
	last = now_ms();
	while (!stop) {
		sleep_ms(200);
		if (now_ms() - last >= progress * 1000) {
			last = now_ms();
			print_load("progress", t0);
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	print_load("final", t0);
	free(tids);
	free(sa);
	free(ma);
	return n_checksum_failures || n_lost ? 1 : 0;
}

/* --- meminfo, for hog and sample ---------------------------------------------- */

/* MemAvailable and MemTotal in KiB. */
static void meminfo(uint64_t *avail, uint64_t *total)
{
	char line[256];
	unsigned long long v;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	*avail = *total = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
			*avail = v;
		else if (sscanf(line, "MemTotal: %llu kB", &v) == 1)
			*total = v;
	}
	fclose(f);
}

/* --- hog ---------------------------------------------------------------------- */

static int run_hog(int argc, char **argv)
{
	unsigned long reserve = 192, step = 32, hold = 3000, rest = 2000;
	uint64_t avail, total, min_avail = UINT64_MAX, cycles = 0, peak = 0, held, i;
	void **chunks;
	size_t nchunks = 0, cap;
	int fd;

	for (i = 0; i < (uint64_t)argc; i += 2) {
		if (i + 1 >= (uint64_t)argc)
			die("%s needs a value", argv[i]);
		if (!strcmp(argv[i], "--reserve-mb"))
			reserve = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--step-mb"))
			step = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--hold-ms"))
			hold = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--rest-ms"))
			rest = parse_num(argv[i], argv[i + 1]);
		else
			die("hog: unknown option '%s'", argv[i]);
	}
	if (!step)
		die("hog: --step-mb must be above 0");
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd < 0 || write(fd, "1000", 4) != 4)
		die("oom_score_adj: %s", strerror(errno));
	close(fd);
	meminfo(&avail, &total);
	cap = total / 1024 / step + 1;
	chunks = calloc(cap, sizeof(*chunks));
	if (!chunks)
		die("out of memory");
	while (!stop) {
		/* Up to the reserve, a step at a time, every page touched. */
		for (;;) {
			meminfo(&avail, &total);
			if (avail < min_avail)
				min_avail = avail;
			if (stop || nchunks == cap || avail / 1024 < reserve + step)
				break;
			chunks[nchunks] = mmap(NULL, step << 20, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (chunks[nchunks] == MAP_FAILED)
				break;
			memset(chunks[nchunks], 0x5a, step << 20);
			nchunks++;
		}
		held = nchunks * step;
		if (held > peak)
			peak = held;
		if (nchunks)
			cycles++;
		/* Hold; should the others grow meanwhile, give a step back. */
		for (i = 0; i < hold / 100 && !stop; i++) {
			sleep_ms(100);
			meminfo(&avail, &total);
			if (avail < min_avail)
				min_avail = avail;
			if (avail / 1024 < reserve / 2 && nchunks)
				munmap(chunks[--nchunks], step << 20);
		}
		while (nchunks)
			munmap(chunks[--nchunks], step << 20);
		for (i = 0; i < rest / 100 && !stop; i++)
			sleep_ms(100);
	}
	printf("soak-hog: final cycles %" PRIu64 " peak_mib %" PRIu64 " min_available_mib %" PRIu64
	       " total_mib %" PRIu64 " reserve_mib %lu\n", cycles, peak,
	       min_avail == UINT64_MAX ? 0 : min_avail / 1024, total / 1024, reserve);
	free(chunks);
	return 0;
}

/* --- sample -------------------------------------------------------------------- */

enum { S_FREE, S_UNMAPPED, S_POOL, S_CONVERT, S_FAIL, S_CONV, S_REST, S_RELEASED, S_LOW, S_NR };

static const char *const stat_file[S_NR] = {
	"stats/free_bytes", "stats/unmapped_bytes", "stats/alloc_pool", "stats/alloc_convert",
	"stats/alloc_fail", "stats/conversions", "stats/restorations", "stats/released_bytes",
	"watermark_low",
};

struct node {
	int id;
	uint64_t first[S_NR], v[S_NR];
	bool starved, pressure;
	uint64_t since, conv;	/* the stretch's start and conversions then */
	uint64_t free_at_start;
};

static uint64_t read_u64(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		die("%s: unreadable", path);
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

static void read_node(struct node *nd)
{
	char path[128];
	int k;

	for (k = 0; k < S_NR; k++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/unmapped/%s", nd->id,
			 stat_file[k]);
		nd->v[k] = read_u64(path);
	}
}

static int run_sample(int argc, char **argv)
{
	unsigned long interval = 100, pressure_pct = 25;
	struct node nodes[MAX_NODES];
	int nn = 0, k, i;
	uint64_t samples = 0, pressure_samples = 0, stretches = 0, refills_seen = 0;
	uint64_t max_gap = 0, max_gap_p = 0, starved_ms = 0, min_free = UINT64_MAX;
	uint64_t avail, total, t, prev = 0, d[S_NR] = { 0 }, t_start = now_ms();
	struct dirent *de;
	DIR *dir;

	for (i = 0; i < argc; i += 2) {
		if (i + 1 >= argc)
			die("%s needs a value", argv[i]);
		if (!strcmp(argv[i], "--interval-ms"))
			interval = parse_num(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--pressure-pct"))
			pressure_pct = parse_num(argv[i], argv[i + 1]);
		else
			die("sample: unknown option '%s'", argv[i]);
	}
	if (!interval)
		die("sample: --interval-ms must be above 0");
	dir = opendir("/sys/devices/system/node");
	if (!dir)
		die("/sys/devices/system/node: %s", strerror(errno));
	while ((de = readdir(dir)) && nn < MAX_NODES) {
		char path[300];
		int id;

		if (sscanf(de->d_name, "node%d", &id) != 1)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s/unmapped", de->d_name);
		if (access(path, F_OK))
			continue;
		memset(&nodes[nn], 0, sizeof(nodes[nn]));
		nodes[nn].id = id;
		read_node(&nodes[nn]);
		memcpy(nodes[nn].first, nodes[nn].v, sizeof(nodes[nn].first));
		nn++;
	}
	closedir(dir);
	if (!nn)
		die("no node has unmapped/ in sysfs: not a secmem kernel");

	while (!stop) {
		bool pressure;

		meminfo(&avail, &total);
		t = now_ms();
		pressure = avail * 100 < total * pressure_pct;
		samples++;
		pressure_samples += pressure;
		for (k = 0; k < nn; k++) {
			struct node *nd = &nodes[k];
			bool below_low;

			read_node(nd);
			below_low = nd->v[S_FREE] < nd->v[S_LOW];
			if (nd->v[S_FREE] < min_free)
				min_free = nd->v[S_FREE];
			if (nd->starved) {
				uint64_t gap = t - nd->since;
				bool refill = nd->v[S_CONV] != nd->conv;

				starved_ms += t - prev;
				nd->pressure |= pressure;
				if (refill || !below_low) {
					refills_seen += refill;
					if (stretches <= MAX_REPORTS)
						printf("soak-sample: node %d: pool below watermark_low at %.1f s for %" PRIu64
						       " ms (free %" PRIu64 " of low %" PRIu64 "%s), ended by %s\n",
						       nd->id, (nd->since - t_start) / 1000.0, gap, nd->free_at_start,
						       nd->v[S_LOW], nd->pressure ? ", memory pressure" : "",
						       refill ? "a conversion" : "frees");
					if (gap > max_gap)
						max_gap = gap;
					if (nd->pressure && gap > max_gap_p)
						max_gap_p = gap;
					nd->starved = false;
				}
			}
			if (!nd->starved && below_low) {
				nd->starved = true;
				nd->pressure = pressure;
				nd->since = t;
				nd->conv = nd->v[S_CONV];
				nd->free_at_start = nd->v[S_FREE];
				stretches++;
			}
		}
		prev = t;
		sleep_ms(interval);
	}
	/* A stretch still open at the end counts to the last sample. */
	for (k = 0; k < nn; k++) {
		struct node *nd = &nodes[k];

		if (nd->starved && prev - nd->since > max_gap)
			max_gap = prev - nd->since;
		if (nd->starved && nd->pressure && prev - nd->since > max_gap_p)
			max_gap_p = prev - nd->since;
		for (i = 0; i < S_NR; i++)
			d[i] += nd->v[i] - nd->first[i];
	}
	printf("soak-sample: final nodes %d samples %" PRIu64 " interval_ms %lu pressure_samples %" PRIu64
	       " starved_stretches %" PRIu64 " refills_seen %" PRIu64 " starved_ms %" PRIu64
	       " max_gap_ms %" PRIu64 " max_gap_pressure_ms %" PRIu64 " min_free_bytes %" PRIu64
	       " alloc_pool %" PRIu64 " alloc_convert %" PRIu64 " alloc_fail %" PRIu64
	       " conversions %" PRIu64 " restorations %" PRIu64 " released_bytes %" PRIu64 "\n",
	       nn, samples, interval, pressure_samples, stretches, refills_seen, starved_ms, max_gap,
	       max_gap_p, min_free == UINT64_MAX ? 0 : min_free, d[S_POOL], d[S_CONVERT], d[S_FAIL],
	       d[S_CONV], d[S_REST], d[S_RELEASED]);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (argc < 2)
		die("usage: soak-load load|hog|sample [options] (see the source's head comment)");
	if (!strcmp(argv[1], "load"))
		return run_load(argc - 2, argv + 2);
	if (!strcmp(argv[1], "hog"))
		return run_hog(argc - 2, argv + 2);
	if (!strcmp(argv[1], "sample"))
		return run_sample(argc - 2, argv + 2);
	die("unknown role '%s': load, hog or sample", argv[1]);
}
