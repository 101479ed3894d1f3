// SPDX-License-Identifier: GPL-2.0
/*
 * alloc_bench: what a secret costs with libsecmem, libsodium's
 * sodium_malloc(), OpenSSL's secure heap and plain glibc malloc().
 *
 * Every allocator runs in forked children (one per timing run, one for
 * live_32b_max), so that one allocator's state, mappings and failures
 * never touch another's; timing run r of every allocator comes before run
 * r + 1 of any, so a burst of outside load hits all of them alike.  libsodium and libcrypto are dlopen()ed only in
 * the children that measure them: the libsecmem and glibc children carry
 * no foreign libraries in /proc/self/maps.  Results come back through a
 * shared anonymous mapping.  bench/README.md defines every figure.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <gnu/libc-version.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <sodium.h>

#include "secmem.h"

/* --- figures ------------------------------------------------------------- */

enum fig {
	F_NS32, F_NS64, F_NS256, F_NS4096, F_NS64_PAIR, F_NS64_T1, F_NS64_T2,
	F_NS64_T4, F_NS64_T8,
	F_LIVE_MAX, F_MAPPINGS, F_RSS,
	NFIGS
};

static const char *const fig_name[NFIGS] = {
	[F_NS32] = "alloc_free_ns_32",
	[F_NS64] = "alloc_free_ns_64",
	[F_NS256] = "alloc_free_ns_256",
	[F_NS4096] = "alloc_free_ns_4096",
	[F_NS64_PAIR] = "alloc_free_ns_64_pair",
	[F_NS64_T1] = "alloc_free_ns_64_t1",
	[F_NS64_T2] = "alloc_free_ns_64_t2",
	[F_NS64_T4] = "alloc_free_ns_64_t4",
	[F_NS64_T8] = "alloc_free_ns_64_t8",
	[F_LIVE_MAX] = "live_32b_max",
	[F_MAPPINGS] = "mappings",
	[F_RSS] = "rss_bytes_per_secret",
};

/*
 * Request size of each timing figure; threads of each; whether they are
 * started for the run (_t1 ... _t8) rather than the child's main thread,
 * which made the allocations of the figures before; whether each
 * allocation is freed at once (_pair) rather than in batches.
 */
#define F_TIMING_LAST	F_NS64_T8
static const size_t fig_size[F_TIMING_LAST + 1] = { 32, 64, 256, 4096, 64, 64, 64, 64, 64 };
static const int fig_threads[F_TIMING_LAST + 1] = { 1, 1, 1, 1, 1, 1, 2, 4, 8 };
static const bool fig_spawn[F_TIMING_LAST + 1] = {
	[F_NS64_T1] = true, [F_NS64_T2] = true, [F_NS64_T4] = true, [F_NS64_T8] = true,
};
static const bool fig_pairs[F_TIMING_LAST + 1] = { [F_NS64_PAIR] = true };
/*
 * _t4 and _t8 only when asked for (--figures): make bench measures them in
 * its scaling boots, with 8 vCPUs (bench/guest/bench.d/30-scale).
 */
#define DEFAULT_FIGS	(((1U << NFIGS) - 1) & ~(1U << F_NS64_T4 | 1U << F_NS64_T8))

#define LIVE_SIZE	32
#define NTHREADS_MAX	8

static bool fig_is_timing(int f)
{
	return f <= F_TIMING_LAST;
}

static bool fig_is_int(int f)
{
	return f == F_LIVE_MAX || f == F_MAPPINGS;
}

/* --- results, shared between the parent and its children ----------------- */

#define MAX_RUNS	63

struct fig_res {
	int state;			/* 0 not run, 1 measured, -1 failed */
	double med, min, max;		/* timing: over runs; live: one value */
	double cpu_med;			/* timing: median of the CPU-time figure */
	int runs;
	char err[256];
	/* timing: one value per run, filled by the run's child */
	double wall[MAX_RUNS], cpu[MAX_RUNS];
};

struct alloc_res {
	struct fig_res fig[NFIGS];
	char backend[32];		/* libsecmem backend in use */
	char version[128];
	char note[256];			/* e.g. OpenSSL arena not locked */
	size_t timing_arena;		/* openssl_secure: arena of the timing child */
	size_t live_arena;		/* openssl_secure: arena of the live child */
	/* live_32b_max details */
	_Atomic unsigned long live_count;	/* progress, survives a crash */
	char live_stop[256];
	double live_seconds;
	long live_maps_base, live_maps_end;
	long long live_rss_base, live_rss_end;
	bool live_done;
};

/* --- options --------------------------------------------------------------- */

static struct {
	bool quick;
	const char *json;
	unsigned int allocs;		/* bitmask over allocators[] */
	unsigned int figs;		/* bitmask over enum fig */
	int runs;
	size_t batch;
	double min_ms;
	unsigned long live_max;
	double live_timeout;
} opt = {
	.runs = 11,
	.batch = 1000,
	.min_ms = 30,
	.live_max = 10000000,
	.live_timeout = 60,
};

static void errmsg(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void errmsg(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

/* --- allocators ------------------------------------------------------------ */

struct allocator {
	const char *name;
	/* Before any baseline is taken: load libraries. */
	int (*load)(struct alloc_res *r, char *err, size_t n);
	/* Prepare to hold up to @bytes at once (OpenSSL's arena is fixed). */
	int (*init)(size_t bytes, bool live, struct alloc_res *r, char *err,
		    size_t n);
	void *(*alloc)(size_t size);
	void (*release)(void *p);
	/* Why the last allocation failed; @err is its errno. */
	const char *(*why)(int err);
};

static const char *why_errno(int err)
{
	return strerror(err);
}

static int load_nothing(struct alloc_res *r, char *err, size_t n)
{
	(void)r, (void)err, (void)n;
	return 0;
}

/* Copy a dlsym() result into a function pointer without a cast warning. */
static int sym(void *lib, const char *name, void *fp, size_t fpsize,
	       char *err, size_t n)
{
	void *s = dlsym(lib, name);

	if (!s) {
		errmsg(err, n, "dlsym(%s): %s", name, dlerror());
		return -1;
	}
	memcpy(fp, &s, fpsize);
	return 0;
}

#define SYM(lib, name, err, n) \
	sym(lib, #name, &p_##name, sizeof(p_##name), err, n)

static void *dlopen_first(const char *const *names, char *err, size_t n)
{
	void *h = NULL;

	for (; *names && !h; names++)
		h = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		errmsg(err, n, "dlopen: %s", dlerror());
	return h;
}

/* libsecmem: default probing, or the mlock backend forced */

static int lsm_init_flags(unsigned int flags, struct alloc_res *r, char *err,
			  size_t n)
{
	enum secmem_backend b;

	if (secmem_init(flags) < 0) {
		errmsg(err, n, "secmem_init: %s",
		       secmem_strerror(secmem_last_error()));
		return -1;
	}
	b = secmem_backend();
	snprintf(r->backend, sizeof(r->backend), "%s", secmem_backend_name(b));
	snprintf(r->version, sizeof(r->version), "libsecmem (this tree)");
	if (b == SECMEM_BACKEND_NONE) {
		errmsg(err, n, "no backend: %s",
		       secmem_strerror(secmem_last_error()));
		return -1;
	}
	return 0;
}

static int lsm_init(size_t bytes, bool live, struct alloc_res *r, char *err,
		    size_t n)
{
	(void)bytes, (void)live;
	return lsm_init_flags(0, r, err, n);
}

static int lsm_mlock_init(size_t bytes, bool live, struct alloc_res *r,
			  char *err, size_t n)
{
	(void)bytes, (void)live;
	return lsm_init_flags(SECMEM_INIT_FORCE_INSECURE, r, err, n);
}

static void *lsm_alloc(size_t size)
{
	return secmem_malloc(size);
}

static void lsm_free(void *p)
{
	secmem_free(p);
}

static const char *lsm_why(int err)
{
	(void)err;
	return secmem_strerror(secmem_last_error());
}

/* libsodium */

static __typeof__(sodium_init) *p_sodium_init;
static __typeof__(sodium_malloc) *p_sodium_malloc;
static __typeof__(sodium_free) *p_sodium_free;
static __typeof__(sodium_version_string) *p_sodium_version_string;

static int sod_load(struct alloc_res *r, char *err, size_t n)
{
	static const char *const names[] = {
		"libsodium.so.23", "libsodium.so", NULL
	};
	void *h = dlopen_first(names, err, n);

	(void)r;
	if (!h || SYM(h, sodium_init, err, n) || SYM(h, sodium_malloc, err, n) ||
	    SYM(h, sodium_free, err, n) ||
	    SYM(h, sodium_version_string, err, n))
		return -1;
	return 0;
}

static int sod_init(size_t bytes, bool live, struct alloc_res *r, char *err,
		    size_t n)
{
	(void)bytes, (void)live;
	if (p_sodium_init() < 0) {
		errmsg(err, n, "sodium_init failed");
		return -1;
	}
	snprintf(r->version, sizeof(r->version), "libsodium %s",
		 p_sodium_version_string());
	return 0;
}

static void *sod_alloc(size_t size)
{
	return p_sodium_malloc(size);
}

static void sod_free(void *p)
{
	p_sodium_free(p);
}

/* OpenSSL's secure heap */

static __typeof__(CRYPTO_secure_malloc_init) *p_CRYPTO_secure_malloc_init;
static __typeof__(CRYPTO_secure_malloc) *p_CRYPTO_secure_malloc;
static __typeof__(CRYPTO_secure_free) *p_CRYPTO_secure_free;
static __typeof__(OpenSSL_version) *p_OpenSSL_version;

static int ossl_load(struct alloc_res *r, char *err, size_t n)
{
	static const char *const names[] = {
		"libcrypto.so.3", "libcrypto.so", NULL
	};
	void *h = dlopen_first(names, err, n);

	(void)r;
	if (!h || SYM(h, CRYPTO_secure_malloc_init, err, n) ||
	    SYM(h, CRYPTO_secure_malloc, err, n) ||
	    SYM(h, CRYPTO_secure_free, err, n) ||
	    SYM(h, OpenSSL_version, err, n))
		return -1;
	return 0;
}

/*
 * The arena is a power of two (a buddy allocator), fixed at init.  Try the
 * smallest that fits @bytes, then smaller ones if init refuses it.
 */
static int ossl_init(size_t bytes, bool live, struct alloc_res *r, char *err,
		     size_t n)
{
	size_t size = 1UL << 20;
	int rc = 0;

	while (size < bytes && size < (SIZE_MAX >> 2))
		size <<= 1;
	for (; size >= (1UL << 16); size >>= 1) {
		rc = p_CRYPTO_secure_malloc_init(size, 16);
		if (rc)
			break;
	}
	snprintf(r->version, sizeof(r->version), "%s",
		 p_OpenSSL_version(OPENSSL_VERSION));
	if (!rc) {
		errmsg(err, n, "CRYPTO_secure_malloc_init refused every arena "
		       "size up to %zu bytes", bytes);
		return -1;
	}
	if (live)
		r->live_arena = size;
	else
		r->timing_arena = size;
	if (rc == 2)
		snprintf(r->note, sizeof(r->note), "CRYPTO_secure_malloc_init "
			 "returned 2: arena not fully locked/guarded");
	return 0;
}

static void *ossl_alloc(size_t size)
{
	return p_CRYPTO_secure_malloc(size, __FILE__, __LINE__);
}

static void ossl_free(void *p)
{
	p_CRYPTO_secure_free(p, __FILE__, __LINE__);
}

static const char *ossl_why(int err)
{
	(void)err;
	return "CRYPTO_secure_malloc returned NULL (arena full)";
}

/* glibc */

static int glibc_init(size_t bytes, bool live, struct alloc_res *r, char *err,
		      size_t n)
{
	(void)bytes, (void)live, (void)err, (void)n;
	snprintf(r->version, sizeof(r->version), "glibc %s",
		 gnu_get_libc_version());
	return 0;
}

static void *glibc_alloc(size_t size)
{
	return malloc(size);
}

static void glibc_free(void *p)
{
	free(p);
}

enum { A_SECMEM, A_SODIUM, A_OPENSSL, A_GLIBC, A_SECMEM_MLOCK, NALLOCS };

/* Run when --allocators is not given. */
#define DEFAULT_ALLOCS ((1U << A_SECMEM) | (1U << A_SODIUM) | \
			(1U << A_OPENSSL) | (1U << A_GLIBC))

static const struct allocator allocators[NALLOCS] = {
	[A_SECMEM] = { "libsecmem", load_nothing, lsm_init, lsm_alloc,
		       lsm_free, lsm_why },
	[A_SODIUM] = { "sodium_malloc", sod_load, sod_init, sod_alloc,
		       sod_free, why_errno },
	[A_OPENSSL] = { "openssl_secure", ossl_load, ossl_init, ossl_alloc,
			ossl_free, ossl_why },
	[A_GLIBC] = { "glibc_malloc", load_nothing, glibc_init, glibc_alloc,
		      glibc_free, why_errno },
	/* Not in the default set: libsecmem with SECMEM_INIT_FORCE_INSECURE. */
	[A_SECMEM_MLOCK] = { "libsecmem_mlock", load_nothing, lsm_mlock_init,
			     lsm_alloc, lsm_free, lsm_why },
};

/* --- clocks, /proc ---------------------------------------------------------- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU time of the calling thread, user and system. */
static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Read a small /proc file into @buf without allocating. */
static ssize_t read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = 0;
	return got;
}

static long long rss_bytes(void)
{
	char buf[256];
	long long size, resident;

	if (read_small("/proc/self/statm", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%lld %lld", &size, &resident) != 2)
		return -1;
	return resident * sysconf(_SC_PAGESIZE);
}

/* Lines of /proc/self/maps, counted without allocating. */
static long count_maps(void)
{
	char buf[65536];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	long lines = 0;
	ssize_t got;

	if (fd < 0)
		return -1;
	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < got; i++)
			lines += buf[i] == '\n';
	}
	close(fd);
	return got < 0 ? -1 : lines;
}

/* --- timing ------------------------------------------------------------------ */

/*
 * One round: @n allocations of @size bytes, each written at its first and
 * last byte, then the @n frees in allocation order; with @pairs, each
 * allocation is freed right after it is written, so nothing else is live.
 * On failure everything is freed and -1 returned with *@why set.
 */
static int bench_round(const struct allocator *a, size_t size, size_t n,
		       bool pairs, void **ptrs, const char **why)
{
	size_t i;

	for (i = 0; pairs && i < n; i++) {
		volatile unsigned char *p = a->alloc(size);

		if (!p) {
			*why = a->why(errno);
			return -1;
		}
		p[0] = (unsigned char)i;
		p[size - 1] = (unsigned char)i;
		a->release((void *)p);
	}
	if (pairs)
		return 0;
	for (i = 0; i < n; i++) {
		volatile unsigned char *p = a->alloc(size);

		if (!p) {
			*why = a->why(errno);
			while (i-- > 0)
				a->release(ptrs[i]);
			return -1;
		}
		p[0] = (unsigned char)i;
		p[size - 1] = (unsigned char)i;
		ptrs[i] = (void *)p;
	}
	for (i = 0; i < n; i++)
		a->release(ptrs[i]);
	return 0;
}

struct worker {
	pthread_t tid;
	int id;
	const struct allocator *a;
	size_t size;
	bool pairs;
	void **ptrs;
	double min_ns;
	pthread_barrier_t *start;
	atomic_bool *stop;
	/* out */
	unsigned long rounds;
	double elapsed, cpu;
	const char *why;
	bool failed;
};

/*
 * Rounds until @min_ns have passed (thread 0 decides and raises *stop, the
 * others run until they see it), so all threads overlap for the whole run.
 */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	double t0, t, c0;

	if (w->start)
		pthread_barrier_wait(w->start);
	c0 = cpu_ns();
	t0 = now_ns();
	for (;;) {
		if (bench_round(w->a, w->size, opt.batch, w->pairs, w->ptrs,
				&w->why) < 0) {
			w->failed = true;
			atomic_store(w->stop, true);
			break;
		}
		w->rounds++;
		t = now_ns();
		if (w->id == 0 && t - t0 >= w->min_ns)
			atomic_store(w->stop, true);
		if (atomic_load(w->stop))
			break;
	}
	w->elapsed = now_ns() - t0;
	w->cpu = cpu_ns() - c0;
	return NULL;
}

/*
 * One run of figure @f: ns per pair as seen by each thread (wall clock in
 * *@ns, the thread's CPU time in *@cpu), averaged over the threads.
 */
static int timing_run(const struct allocator *a, int f, double min_ns,
		      void **ptrs[], double *ns, double *cpu, char *err,
		      size_t n)
{
	size_t size = fig_size[f];
	int nthreads = fig_threads[f];
	bool spawn = fig_spawn[f];
	struct worker w[NTHREADS_MAX];
	pthread_barrier_t start;
	atomic_bool stop = false;
	double sum = 0, csum = 0;
	int i, rc = 0;

	memset(w, 0, sizeof(w));
	if (nthreads > 1)
		pthread_barrier_init(&start, NULL, (unsigned int)nthreads);
	for (i = 0; i < nthreads; i++) {
		w[i] = (struct worker){
			.id = i, .a = a, .size = size, .pairs = fig_pairs[f],
			.ptrs = ptrs[i], .min_ns = min_ns, .stop = &stop,
			.start = nthreads > 1 ? &start : NULL,
		};
	}
	if (!spawn) {
		worker_run(&w[0]);
	} else {
		for (i = 0; i < nthreads; i++) {
			rc = pthread_create(&w[i].tid, NULL, worker_run, &w[i]);
			if (rc) {
				/* The barrier would never open: give up. */
				fprintf(stderr, "alloc_bench: pthread_create: "
					"%s\n", strerror(rc));
				abort();
			}
		}
		for (i = 0; i < nthreads; i++)
			pthread_join(w[i].tid, NULL);
		if (nthreads > 1)
			pthread_barrier_destroy(&start);
	}
	for (i = 0; i < nthreads; i++) {
		if (w[i].failed) {
			errmsg(err, n, "allocation of %zu bytes failed "
			       "(thread %d): %s", size, i, w[i].why);
			return -1;
		}
		sum += w[i].elapsed / ((double)w[i].rounds * (double)opt.batch);
		csum += w[i].cpu / ((double)w[i].rounds * (double)opt.batch);
	}
	*ns = sum / nthreads;
	*cpu = csum / nthreads;
	return rc;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run @run of figure @f: a warm-up, then one measured run. */
static void timing_figure(const struct allocator *a, int f, int run,
			  void **ptrs[], struct fig_res *res)
{
	double warm, wcpu;

	/* Warm-up: arenas created, pages faulted, caches hot. */
	if (timing_run(a, f, opt.min_ms * 1e6 / 4, ptrs, &warm, &wcpu,
		       res->err, sizeof(res->err)) < 0 ||
	    timing_run(a, f, opt.min_ms * 1e6, ptrs, &res->wall[run],
		       &res->cpu[run], res->err, sizeof(res->err)) < 0) {
		res->state = -1;
		return;
	}
	res->runs = run + 1;
}

/* After all runs: median, min and max of each timing figure. */
static void timing_summary(struct fig_res *res)
{
	double v[MAX_RUNS];
	int n = res->runs;

	if (res->state < 0 || n < 1)
		return;
	memcpy(v, res->wall, sizeof(v[0]) * (size_t)n);
	res->med = median(v, n);
	res->min = v[0];
	res->max = v[n - 1];
	memcpy(v, res->cpu, sizeof(v[0]) * (size_t)n);
	res->cpu_med = median(v, n);
	res->state = 1;
}

/* --- children ------------------------------------------------------------------ */

static void fail_all(struct alloc_res *r, bool timing, const char *msg)
{
	for (int f = 0; f < NFIGS; f++) {
		if (!(opt.figs & (1U << f)) || fig_is_timing(f) != timing ||
		    r->fig[f].state)
			continue;
		r->fig[f].state = -1;
		snprintf(r->fig[f].err, sizeof(r->fig[f].err), "%s", msg);
	}
}

static int timing_run_index;	/* which run the timing child measures */

/* The most threads any figure asked for runs at once. */
static int threads_needed(void)
{
	int f, n = 1;

	for (f = 0; f <= F_TIMING_LAST; f++) {
		if ((opt.figs & (1U << f)) && fig_threads[f] > n)
			n = fig_threads[f];
	}
	return n;
}

static void child_timing(const struct allocator *a, struct alloc_res *r)
{
	char err[256];
	void **ptrs[NTHREADS_MAX];
	size_t need;
	int f, i;

	if (a->load(r, err, sizeof(err)) < 0) {
		fail_all(r, true, err);
		return;
	}
	/* Every thread's batches of the largest size, with buddy slack. */
	need = (size_t)threads_needed() * opt.batch * 2 * fig_size[F_NS4096] * 2;
	if (a->init(need, false, r, err, sizeof(err)) < 0) {
		fail_all(r, true, err);
		return;
	}
	for (i = 0; i < NTHREADS_MAX; i++) {
		ptrs[i] = calloc(opt.batch, sizeof(void *));
		if (!ptrs[i]) {
			fail_all(r, true, "out of memory for the pointer array");
			return;
		}
	}
	for (f = 0; f <= F_TIMING_LAST; f++) {
		if (!(opt.figs & (1U << f)) || r->fig[f].state < 0)
			continue;
		timing_figure(a, f, timing_run_index, ptrs, &r->fig[f]);
	}
}

static void child_live(const struct allocator *a, struct alloc_res *r)
{
	unsigned long i, max = opt.live_max;
	void **ptrs;
	double t0;

	/* On failure live_done stays false and live_stop says why. */
	if (a->load(r, r->live_stop, sizeof(r->live_stop)) < 0)
		return;
	/* The pointer array is faulted in before the baseline. */
	ptrs = mmap(NULL, max * sizeof(void *), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (ptrs == MAP_FAILED) {
		snprintf(r->live_stop, sizeof(r->live_stop),
			 "cannot map the pointer array");
		return;
	}
	r->live_rss_base = rss_bytes();
	r->live_maps_base = count_maps();
	if (a->init(max * LIVE_SIZE, true, r, r->live_stop,
		    sizeof(r->live_stop)) < 0)
		return;
	snprintf(r->live_stop, sizeof(r->live_stop), "reached --live-max");
	t0 = now_ns();
	for (i = 0; i < max; i++) {
		void *p = a->alloc(LIVE_SIZE);

		if (!p) {
			snprintf(r->live_stop, sizeof(r->live_stop),
				 "allocation %lu failed: %s", i + 1,
				 a->why(errno));
			break;
		}
		memset(p, 0x5a, LIVE_SIZE);
		ptrs[i] = p;
		if (i % 4096 == 0) {
			atomic_store(&r->live_count, i);
			if (now_ns() - t0 > opt.live_timeout * 1e9) {
				snprintf(r->live_stop, sizeof(r->live_stop),
					 "stopped by --live-timeout %.0f s",
					 opt.live_timeout);
				break;
			}
		}
	}
	r->live_seconds = (now_ns() - t0) / 1e9;
	atomic_store(&r->live_count, i);
	r->live_rss_end = rss_bytes();
	r->live_maps_end = count_maps();
	r->live_done = true;
	/* The memory is left to the process exit: nothing to measure there. */
}

/* Run @fn in a child; returns a message if the child did not exit cleanly. */
static void run_child(const struct allocator *a, struct alloc_res *r,
		      void (*fn)(const struct allocator *, struct alloc_res *),
		      unsigned int timeout_s, char *msg, size_t n)
{
	pid_t pid;
	int status;

	msg[0] = 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		errmsg(msg, n, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		alarm(timeout_s);
		fn(a, r);
		fflush(NULL);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			errmsg(msg, n, "waitpid: %s", strerror(errno));
			return;
		}
	}
	if (WIFSIGNALED(status))
		errmsg(msg, n, "child killed by signal %d (%s)%s",
		       WTERMSIG(status), strsignal(WTERMSIG(status)),
		       WTERMSIG(status) == SIGALRM ? ", timeout" : "");
	else if (WEXITSTATUS(status))
		errmsg(msg, n, "child exited with status %d",
		       WEXITSTATUS(status));
}

/* --- output ------------------------------------------------------------------- */

static bool fig_value(const struct alloc_res *r, int f, double *v)
{
	if (r->fig[f].state != 1)
		return false;
	*v = r->fig[f].med;
	return true;
}

static void fmt_num(char *buf, size_t n, int f, double v)
{
	if (fig_is_int(f) || v >= 1000)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.1f", v);
}

#define COLW 24

static void print_table(const struct alloc_res *res)
{
	char cell[128], a[32], b[32], c[32];
	int f, i;

	printf("\n%-22s", "figure");
	for (i = 0; i < NALLOCS; i++) {
		if (opt.allocs & (1U << i))
			printf(" %-*s", COLW, allocators[i].name);
	}
	printf("\n");
	for (f = 0; f < NFIGS; f++) {
		if (!(opt.figs & (1U << f)))
			continue;
		printf("%-22s", fig_name[f]);
		for (i = 0; i < NALLOCS; i++) {
			const struct fig_res *fr = &res[i].fig[f];

			if (!(opt.allocs & (1U << i)))
				continue;
			if (fr->state != 1) {
				snprintf(cell, sizeof(cell), "%s",
					 fr->state ? "FAILED" : "-");
			} else if (fig_is_timing(f)) {
				fmt_num(a, sizeof(a), f, fr->med);
				fmt_num(b, sizeof(b), f, fr->min);
				fmt_num(c, sizeof(c), f, fr->max);
				snprintf(cell, sizeof(cell), "%s [%s..%s]",
					 a, b, c);
			} else {
				fmt_num(cell, sizeof(cell), f, fr->med);
			}
			printf(" %-*s", COLW, cell);
		}
		printf("\n");
	}
	printf("\ntiming cells: median [min..max] wall-clock ns per alloc+free "
	       "pair over %d runs of >= %.0f ms, batches of %zu\n", opt.runs,
	       opt.min_ms, opt.batch);

	/* The same runs in thread CPU time: what other load cannot inflate. */
	if (opt.figs & ((1U << (F_TIMING_LAST + 1)) - 1)) {
		printf("\n%-22s", "cpu time (median)");
		for (i = 0; i < NALLOCS; i++) {
			if (opt.allocs & (1U << i))
				printf(" %-*s", COLW, allocators[i].name);
		}
		printf("\n");
	}
	for (f = 0; f <= F_TIMING_LAST; f++) {
		if (!(opt.figs & (1U << f)))
			continue;
		printf("%-22s", fig_name[f]);
		for (i = 0; i < NALLOCS; i++) {
			if (!(opt.allocs & (1U << i)))
				continue;
			if (res[i].fig[f].state == 1)
				fmt_num(cell, sizeof(cell), f,
					res[i].fig[f].cpu_med);
			else
				snprintf(cell, sizeof(cell), "-");
			printf(" %-*s", COLW, cell);
		}
		printf("\n");
	}
	printf("\n");

	for (i = 0; i < NALLOCS; i++) {
		const struct alloc_res *r = &res[i];

		if (!(opt.allocs & (1U << i)))
			continue;
		printf("%s: %s%s%s", allocators[i].name,
		       r->version[0] ? r->version : "?",
		       r->backend[0] ? ", backend " : "", r->backend);
		if (r->timing_arena || r->live_arena)
			printf(", arena %zu MiB (timing) / %zu MiB (live)",
			       r->timing_arena >> 20, r->live_arena >> 20);
		if (r->note[0])
			printf(", %s", r->note);
		printf("\n");
		if (r->live_done || r->live_stop[0])
			printf("  live: %s, %.1f s, maps %ld -> %ld, "
			       "rss %.1f -> %.1f MiB\n", r->live_stop,
			       r->live_seconds, r->live_maps_base,
			       r->live_maps_end, r->live_rss_base / 1048576.0,
			       r->live_rss_end / 1048576.0);
		for (f = 0; f < NFIGS; f++) {
			if (r->fig[f].state == -1)
				printf("  %s failed: %s\n", fig_name[f],
				       r->fig[f].err);
		}
	}
}

static void json_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(o, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(o, "\\u%04x", ch);
		else
			fputc(ch, o);
	}
	fputc('"', o);
}

static void json_num(FILE *o, int f, double v)
{
	if (!isfinite(v))
		fputs("null", o);
	else if (fig_is_int(f))
		fprintf(o, "%.0f", v);
	else
		fprintf(o, "%.2f", v);
}

/*
 * The targets for libsecmem: relative to another allocator's
 * figure (ref >= 0, scaled by @factor), to another figure of its own
 * (ref == REF_SELF, figure @ref_fig, scaled by @factor) or absolute
 * (ref < 0, @factor is the bound).  @strict: "<" instead of "<=";
 * @at_least: ">=".
 */
#define REF_SELF	(-2)
static const struct target_def {
	int fig, ref;
	double factor;
	bool strict, at_least;
	const char *text;
	int ref_fig;
} target_defs[] = {
	{ F_NS64, A_SODIUM, 1.0 / 20, false, false,
	  "alloc_free_ns_64 <= sodium_malloc / 20", -1 },
	{ F_NS64, A_OPENSSL, 1, false, false,
	  "alloc_free_ns_64 <= openssl_secure", -1 },
	{ F_NS64_T2, A_OPENSSL, 2.0 / 3, false, false,
	  "alloc_free_ns_64_t2 <= 2/3 openssl_secure", -1 },
	{ F_NS64_T2, REF_SELF, 1.3, false, false,
	  "alloc_free_ns_64_t2 <= 1.3 x alloc_free_ns_64_t1", F_NS64_T1 },
	{ F_LIVE_MAX, -1, 1e7, false, true, "live_32b_max = 10,000,000", -1 },
	{ F_MAPPINGS, -1, 64, true, false, "mappings < 64", -1 },
	{ F_RSS, -1, 64, false, false, "rss_bytes_per_secret <= 64", -1 },
};

#define NTARGET_DEFS (sizeof(target_defs) / sizeof(target_defs[0]))
#define NTARGETS (2 * NTARGET_DEFS)	/* libsecmem and libsecmem_mlock */

struct target {
	char name[96];
	int state;		/* 1 met, 0 missed, -1 not evaluated */
	char detail[200];
};

static void eval_targets(const struct alloc_res *res, struct target *t)
{
	static const int who[2] = { A_SECMEM, A_SECMEM_MLOCK };
	size_t k, d;

	for (k = 0; k < 2; k++) {
		const struct alloc_res *s = &res[who[k]];

		for (d = 0; d < NTARGET_DEFS; d++) {
			const struct target_def *td = &target_defs[d];
			struct target *tt = &t[k * NTARGET_DEFS + d];
			double x, y, bound;

			tt->state = -1;
			snprintf(tt->name, sizeof(tt->name), "%s %s",
				 allocators[who[k]].name, td->text);
			if (!(opt.allocs & (1U << who[k])) ||
			    !fig_value(s, td->fig, &x))
				continue;
			if (td->ref == REF_SELF) {
				if (!fig_value(s, td->ref_fig, &y))
					continue;
				bound = y * td->factor;
				snprintf(tt->detail, sizeof(tt->detail),
					 "%.1f vs bound %.1f (%.3f x %s)", x,
					 bound, x / y, fig_name[td->ref_fig]);
			} else if (td->ref >= 0) {
				if (!(opt.allocs & (1U << td->ref)) ||
				    !fig_value(&res[td->ref], td->fig, &y))
					continue;
				bound = y * td->factor;
				snprintf(tt->detail, sizeof(tt->detail),
					 "%.1f vs bound %.1f (%.3f x %s)", x,
					 bound, x / y, allocators[td->ref].name);
			} else {
				bound = td->factor;
				/* A reduced --live-max (--quick) is the bound. */
				if (td->fig == F_LIVE_MAX &&
				    (double)opt.live_max < bound)
					bound = (double)opt.live_max;
				snprintf(tt->detail, sizeof(tt->detail),
					 fig_is_int(td->fig) ? "%.0f" : "%.1f",
					 x);
			}
			if (td->at_least)
				tt->state = x >= bound;
			else
				tt->state = td->strict ? x < bound : x <= bound;
			if (td->fig == F_MAPPINGS)
				snprintf(tt->detail + strlen(tt->detail),
					 sizeof(tt->detail) - strlen(tt->detail),
					 " (%ld before the first allocation)",
					 s->live_maps_base);
			if (td->fig == F_LIVE_MAX && opt.live_max < 10000000)
				snprintf(tt->detail + strlen(tt->detail),
					 sizeof(tt->detail) - strlen(tt->detail),
					 " (--live-max %lu)", opt.live_max);
		}
	}
}

static void print_targets(const struct target *t)
{
	printf("\ntargets%s:\n", opt.quick ? " (--quick: indicative only)" : "");
	for (size_t i = 0; i < NTARGETS; i++) {
		if (t[i].state < 0)
			continue;
		printf("  %-4s %-58s %s\n", t[i].state ? "met" : "MISS",
		       t[i].name, t[i].detail);
	}
}

static int write_json(const char *path, const struct alloc_res *res,
		      const struct target *t, const char *start_time,
		      const char *load0, const char *load1, const char *memlock)
{
	FILE *o = fopen(path, "w");
	struct utsname u;
	char line[256];
	int f, i;
	bool first;

	if (!o) {
		fprintf(stderr, "alloc_bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fputs("{\n  \"userspace\": {", o);
	first = true;
	for (i = 0; i < NALLOCS; i++) {
		bool ff = true;

		if (!(opt.allocs & (1U << i)))
			continue;
		fprintf(o, "%s\n    ", first ? "" : ",");
		json_str(o, allocators[i].name);
		fputs(": {", o);
		for (f = 0; f < NFIGS; f++) {
			if (!(opt.figs & (1U << f)))
				continue;
			fprintf(o, "%s\"%s\": ", ff ? "" : ", ", fig_name[f]);
			json_num(o, f, res[i].fig[f].state == 1 ?
				 res[i].fig[f].med : NAN);
			ff = false;
		}
		fputs("}", o);
		first = false;
	}
	fputs("\n  },\n  \"meta\": {\n", o);
	fputs("    \"tool\": \"bench/alloc_bench\",\n", o);
	fprintf(o, "    \"started\": \"%s\",\n", start_time);
	uname(&u);
	fprintf(o, "    \"host\": {\"kernel\": ");
	json_str(o, u.release);
	fprintf(o, ", \"machine\": ");
	json_str(o, u.machine);
	fprintf(o, ", \"cpus_online\": %ld", sysconf(_SC_NPROCESSORS_ONLN));
	if (read_small("/proc/sys/vm/max_map_count", line, sizeof(line)) > 0)
		fprintf(o, ", \"vm_max_map_count\": %ld", atol(line));
	fprintf(o, ", \"loadavg_start\": ");
	json_str(o, load0);
	fprintf(o, ", \"loadavg_end\": ");
	json_str(o, load1);
	fprintf(o, ", \"rlimit_memlock\": ");
	json_str(o, memlock);
	fputs("},\n", o);
	fprintf(o, "    \"params\": {\"quick\": %s, \"runs\": %d, "
		"\"batch\": %zu, \"min_run_ms\": %.1f, \"live_max\": %lu, "
		"\"live_size\": %d, \"live_timeout_s\": %.0f},\n",
		opt.quick ? "true" : "false", opt.runs, opt.batch, opt.min_ms,
		opt.live_max, LIVE_SIZE, opt.live_timeout);
	fputs("    \"units\": {\"alloc_free_ns_*\": \"wall-clock ns per "
	      "alloc+free pair, median over runs; _pair: each allocation freed "
	      "at once; _t1 ... _t8: per thread, 1 to 8 threads started for the "
	      "run (cpu_median: the same runs in thread CPU time)\", "
	      "\"live_32b_max\": \"allocations\", \"mappings\": "
	      "\"lines of /proc/self/maps\", \"rss_bytes_per_secret\": "
	      "\"bytes\"},\n", o);
	fputs("    \"libsecmem_backend\": ", o);
	json_str(o, res[A_SECMEM].backend[0] ? res[A_SECMEM].backend : "unknown");
	fputs(",\n    \"allocators\": {", o);
	first = true;
	for (i = 0; i < NALLOCS; i++) {
		const struct alloc_res *r = &res[i];
		bool ff = true;

		if (!(opt.allocs & (1U << i)))
			continue;
		fprintf(o, "%s\n      ", first ? "" : ",");
		json_str(o, allocators[i].name);
		fputs(": {\"version\": ", o);
		json_str(o, r->version);
		if (r->backend[0]) {
			fputs(", \"backend\": ", o);
			json_str(o, r->backend);
		}
		if (r->timing_arena)
			fprintf(o, ", \"arena_bytes_timing\": %zu",
				r->timing_arena);
		if (r->live_arena)
			fprintf(o, ", \"arena_bytes_live\": %zu", r->live_arena);
		if (r->note[0]) {
			fputs(", \"note\": ", o);
			json_str(o, r->note);
		}
		fputs(", \"spread\": {", o);
		for (f = 0; f <= F_TIMING_LAST; f++) {
			if (r->fig[f].state != 1)
				continue;
			fprintf(o, "%s\"%s\": {\"min\": %.2f, \"max\": %.2f, "
				"\"runs\": %d, \"cpu_median\": %.2f}",
				ff ? "" : ", ", fig_name[f], r->fig[f].min,
				r->fig[f].max, r->fig[f].runs,
				r->fig[f].cpu_med);
			ff = false;
		}
		fputs("}", o);
		if (r->live_stop[0]) {
			fputs(", \"live\": {\"stop\": ", o);
			json_str(o, r->live_stop);
			fprintf(o, ", \"seconds\": %.2f, \"mappings_before\": "
				"%ld, \"rss_before\": %lld, \"rss_after\": "
				"%lld}", r->live_seconds, r->live_maps_base,
				r->live_rss_base, r->live_rss_end);
		}
		fputs(", \"errors\": {", o);
		ff = true;
		for (f = 0; f < NFIGS; f++) {
			if (r->fig[f].state != -1)
				continue;
			fprintf(o, "%s\"%s\": ", ff ? "" : ", ", fig_name[f]);
			json_str(o, r->fig[f].err);
			ff = false;
		}
		fputs("}}", o);
		first = false;
	}
	fputs("\n    },\n    \"targets\": [", o);
	first = true;
	for (i = 0; i < (int)NTARGETS; i++) {
		if (t[i].state < 0)
			continue;
		fprintf(o, "%s\n      {\"target\": ", first ? "" : ",");
		json_str(o, t[i].name);
		fprintf(o, ", \"met\": %s, \"detail\": ",
			t[i].state ? "true" : "false");
		json_str(o, t[i].detail);
		fputs("}", o);
		first = false;
	}
	fputs("\n    ]\n  }\n}\n", o);
	if (fclose(o) != 0) {
		fprintf(stderr, "alloc_bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* --- main ------------------------------------------------------------------------- */

static void usage(FILE *o)
{
	fprintf(o,
"usage: alloc_bench [options]\n"
"  --json FILE          also write the results as JSON to FILE\n"
"  --quick              smoke run: 3 runs of >= 5 ms, batches of 256,\n"
"                       live_32b_max up to 100000 (overridable below)\n"
"  --allocators LIST    comma-separated list of: libsecmem,sodium_malloc,\n"
"                       openssl_secure,glibc_malloc (the default set) and\n"
"                       libsecmem_mlock (libsecmem with its mlock backend\n"
"                       forced, SECMEM_INIT_FORCE_INSECURE)\n"
"  --figures LIST       comma-separated subset of the figures (default: all);\n"
"                       live_32b_max, mappings and rss_bytes_per_secret come\n"
"                       from one run\n"
"  --runs N             runs per timing figure, median reported (default 11)\n"
"  --batch N            allocations per batch before they are freed (1000)\n"
"  --min-ms MS          minimum length of one timing run (default 30)\n"
"  --live-max N         stop live_32b_max at N allocations (10000000)\n"
"  --live-timeout S     stop live_32b_max after S seconds (default 60)\n"
"  --list               list the allocators and figures\n");
}

static int parse_list(const char *arg, const char *const *names, int count,
		      const char *what, unsigned int *mask)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int i;

	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < count; i++) {
			if (!strcmp(tok, names[i]))
				break;
		}
		if (i == count) {
			fprintf(stderr, "alloc_bench: unknown %s '%s'\n", what,
				tok);
			free(copy);
			return -1;
		}
		*mask |= 1U << i;
	}
	free(copy);
	return *mask ? 0 : -1;
}

static int parse_num(const char *arg, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || *v < lo || *v > hi) {
		fprintf(stderr, "alloc_bench: bad number '%s' (%g..%g)\n", arg,
			lo, hi);
		return -1;
	}
	return 0;
}

static void loadavg(char *buf, size_t n)
{
	char *nl;

	if (read_small("/proc/loadavg", buf, n) < 0)
		snprintf(buf, n, "?");
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
}

/*
 * Raise RLIMIT_MEMLOCK as far as allowed (unlimited needs CAP_SYS_RESOURCE
 * beyond the hard limit); children inherit it.
 */
static void raise_memlock(char *desc, size_t n)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	int err = 0;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0) {
		err = errno;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_MEMLOCK, &rl);
		}
	}
	getrlimit(RLIMIT_MEMLOCK, &rl);
	if (rl.rlim_cur == RLIM_INFINITY) {
		snprintf(desc, n, "unlimited");
		return;
	}
	snprintf(desc, n, "%llu", (unsigned long long)rl.rlim_cur);
	fprintf(stderr, "alloc_bench: warning: cannot raise RLIMIT_MEMLOCK "
		"above %llu KiB (%s); allocators that count locked memory "
		"against it (libsecmem with memfd_secret) hold less\n",
		(unsigned long long)rl.rlim_cur >> 10, strerror(err));
}

int main(int argc, char **argv)
{
	enum { O_JSON = 256, O_QUICK, O_ALLOCS, O_FIGS, O_RUNS, O_BATCH,
	       O_MINMS, O_LIVEMAX, O_LIVETO, O_LIST };
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, O_JSON },
		{ "quick", no_argument, NULL, O_QUICK },
		{ "allocators", required_argument, NULL, O_ALLOCS },
		{ "figures", required_argument, NULL, O_FIGS },
		{ "runs", required_argument, NULL, O_RUNS },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "min-ms", required_argument, NULL, O_MINMS },
		{ "live-max", required_argument, NULL, O_LIVEMAX },
		{ "live-timeout", required_argument, NULL, O_LIVETO },
		{ "list", no_argument, NULL, O_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *anames[NALLOCS];
	double v, runs = -1, batch = -1, minms = -1, livemax = -1;
	char start[64], load0[128], load1[128], memlock[64], msg[256];
	struct target targets[NTARGETS];
	struct alloc_res *res;
	time_t tnow = time(NULL);
	int c, i, f, run;
	bool live, timing;

	for (i = 0; i < NALLOCS; i++)
		anames[i] = allocators[i].name;
	opt.allocs = DEFAULT_ALLOCS;
	opt.figs = DEFAULT_FIGS;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			opt.json = optarg;
			break;
		case O_QUICK:
			opt.quick = true;
			break;
		case O_ALLOCS:
			if (parse_list(optarg, anames, NALLOCS, "allocator",
				       &opt.allocs) < 0)
				return 2;
			break;
		case O_FIGS:
			if (parse_list(optarg, fig_name, NFIGS, "figure",
				       &opt.figs) < 0)
				return 2;
			break;
		case O_RUNS:
			if (parse_num(optarg, 1, 63, &runs) < 0)
				return 2;
			break;
		case O_BATCH:
			if (parse_num(optarg, 1, 1e6, &batch) < 0)
				return 2;
			break;
		case O_MINMS:
			if (parse_num(optarg, 0.01, 1e5, &minms) < 0)
				return 2;
			break;
		case O_LIVEMAX:
			if (parse_num(optarg, 1, 1e9, &livemax) < 0)
				return 2;
			break;
		case O_LIVETO:
			if (parse_num(optarg, 1, 3600, &v) < 0)
				return 2;
			opt.live_timeout = v;
			break;
		case O_LIST:
			for (i = 0; i < NALLOCS; i++)
				printf("allocator %s\n", anames[i]);
			for (f = 0; f < NFIGS; f++)
				printf("figure %s\n", fig_name[f]);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (opt.quick) {
		opt.runs = 3;
		opt.min_ms = 5;
		opt.batch = 256;
		opt.live_max = 100000;
		opt.live_timeout = 20;
	}
	if (runs > 0)
		opt.runs = (int)runs;
	if (batch > 0)
		opt.batch = (size_t)batch;
	if (minms > 0)
		opt.min_ms = minms;
	if (livemax > 0)
		opt.live_max = (unsigned long)livemax;

	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", gmtime(&tnow));
	loadavg(load0, sizeof(load0));
	raise_memlock(memlock, sizeof(memlock));
	res = mmap(NULL, sizeof(*res) * NALLOCS, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("alloc_bench: mmap");
		return 1;
	}
	memset(res, 0, sizeof(*res) * NALLOCS);
	fprintf(stderr, "alloc_bench: RLIMIT_MEMLOCK %s, load average %s\n",
		memlock, load0);
	timing = opt.figs & ((1U << (F_TIMING_LAST + 1)) - 1);

	/*
	 * Timing: run r of every allocator, then run r + 1, so that a burst
	 * of load from other processes hits all allocators alike.
	 */
	for (run = 0; timing && run < opt.runs; run++) {
		fprintf(stderr, "alloc_bench: timing run %d of %d\n", run + 1,
			opt.runs);
		for (i = 0; i < NALLOCS; i++) {
			if (!(opt.allocs & (1U << i)))
				continue;
			timing_run_index = run;
			/* Generous: sodium_malloc is ~100x slower than malloc. */
			run_child(&allocators[i], &res[i], child_timing, 300,
				  msg, sizeof(msg));
			if (msg[0])
				fail_all(&res[i], true, msg);
		}
	}
	for (i = 0; i < NALLOCS; i++) {
		for (f = 0; timing && f <= F_TIMING_LAST; f++) {
			if (opt.figs & (1U << f))
				timing_summary(&res[i].fig[f]);
		}
	}

	live = opt.figs & (1U << F_LIVE_MAX | 1U << F_MAPPINGS | 1U << F_RSS);
	for (i = 0; live && i < NALLOCS; i++) {
		const struct allocator *a = &allocators[i];
		struct alloc_res *r = &res[i];

		if (!(opt.allocs & (1U << i)))
			continue;
		fprintf(stderr, "alloc_bench: %-15s live_32b_max (up to %lu)\n",
			a->name, opt.live_max);
		run_child(a, r, child_live,
			  (unsigned int)opt.live_timeout + 60, msg, sizeof(msg));
		if (!r->live_done) {
			unsigned long n = atomic_load(&r->live_count);

			if (msg[0])
				snprintf(r->live_stop, sizeof(r->live_stop),
					 "%.200s after about %lu allocations",
					 msg, n);
			else if (!r->live_stop[0])
				snprintf(r->live_stop, sizeof(r->live_stop),
					 "did not finish");
			fail_all(r, false, r->live_stop);
			continue;
		}
		if (msg[0])
			fprintf(stderr, "alloc_bench: %s: %s\n", a->name, msg);
		r->fig[F_LIVE_MAX].med = (double)atomic_load(&r->live_count);
		r->fig[F_MAPPINGS].med = (double)r->live_maps_end;
		r->fig[F_RSS].med = r->fig[F_LIVE_MAX].med > 0 ?
			(double)(r->live_rss_end - r->live_rss_base) /
			r->fig[F_LIVE_MAX].med : NAN;
		for (f = F_LIVE_MAX; f <= F_RSS; f++) {
			r->fig[f].min = r->fig[f].max = r->fig[f].med;
			r->fig[f].runs = 1;
			r->fig[f].state = isfinite(r->fig[f].med) ? 1 : -1;
		}
	}

	loadavg(load1, sizeof(load1));
	eval_targets(res, targets);
	print_table(res);
	print_targets(targets);
	printf("load average: %s at start, %s at end\n", load0, load1);
	if (opt.json && write_json(opt.json, res, targets, start, load0, load1,
				   memlock) < 0)
		return 1;
	return 0;
}
