// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * heap_torture: the corners of the malloc family that the heap mode of
 * libsecmem-preload.so must get right, run by test.sh with and without
 * the preload (the behaviour must be glibc's either way).  Not linked
 * with libsecmem, libcrypto or libsodium: it asks nothing of the preload
 * and loads the crypto libraries itself.
 *
 *   heap_torture usable      malloc_usable_size() of ours and glibc's
 *   heap_torture align       posix_memalign/aligned_alloc/memalign/valloc/
 *                            pvalloc with odd and huge alignments
 *   heap_torture realloc     realloc to 0, from NULL, too big, across sizes
 *   heap_torture enomem      impossible sizes, then 256 MiB (more than
 *                            RLIMIT_MEMLOCK allows secret memory): ENOMEM
 *   heap_torture forkthreads fork() from two threads while four allocate,
 *                            and system() from another
 *   heap_torture dlopen      libcrypto.so.3 and libsodium.so.23 loaded
 *                            RTLD_LOCAL at run time, then used
 *   heap_torture libc        glibc functions that allocate, grow or free
 *                            the caller's memory (getline, open_memstream,
 *                            scandir, getaddrinfo, regcomp, glob...)
 *   heap_torture valloc      10000 valloc() and 10000 pvalloc(), for the
 *                            preload's count of what it served
 *   heap_torture dlerror     a failed dlsym() (ld.so allocates the message)
 *                            just before the preload's own first dlsym()
 *
 * Exit 0 when every check holds, else the number of the failed check.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <netdb.h>
#include <regex.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(n, cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "heap_torture: check %d failed: %s\n", \
				(n), #cond);				\
			return (n);					\
		}							\
	} while (0)

/* glibc's allocator itself, as a pointer made before the preload's
 * constructor would come from it. */
extern void *__libc_malloc(size_t size);

/*
 * Write all @n bytes, which may be more than the caller asked for (the
 * usable size): out of _FORTIFY_SOURCE's sight, which knows only that.
 */
__attribute__((noinline)) static void fill(void *p, int c, size_t n)
{
	memset(p, c, n);
}

static int do_usable(void)
{
	unsigned char *p = malloc(100), *g = __libc_malloc(100), *r;
	size_t i;

	CHECK(1, p && g);
	CHECK(2, malloc_usable_size(p) >= 100);
	CHECK(3, malloc_usable_size(g) >= 100);
	CHECK(4, malloc_usable_size(NULL) == 0);
	fill(p, 1, malloc_usable_size(p));
	fill(g, 2, malloc_usable_size(g));
	/* glibc's pointer goes through realloc and free like any other. */
	r = realloc(g, 5000);
	CHECK(5, r && malloc_usable_size(r) >= 5000);
	for (i = 0; i < 100; i++)
		CHECK(6, r[i] == 2);
	free(r);
	free(p);
	return 0;
}

static int do_align(void)
{
	static const size_t bad[] = { 0, 1, 2, 3, 4, 12, 24, 48, 4097 };
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *p;
	size_t i, a;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 1234;
		p = (void *)1;
		CHECK(1, posix_memalign(&p, bad[i], 10) == EINVAL);
		/* posix_memalign() leaves errno and *memptr alone. */
		CHECK(2, errno == 1234 && p == (void *)1);
	}
	for (a = sizeof(void *); a <= ((size_t)1 << 20); a <<= 1) {
		CHECK(3, posix_memalign(&p, a, a + 3) == 0);
		CHECK(4, !((uintptr_t)p % a) && malloc_usable_size(p) >= a + 3);
		memset(p, 0x77, a + 3);
		free(p);
	}
	/* Impossible alignments: an error, not a crash or a bad pointer. */
	errno = 1234;
	CHECK(5, posix_memalign(&p, (size_t)1 << 62, 1) == ENOMEM &&
		 errno == 1234);
	errno = 0;
	CHECK(6, !aligned_alloc((size_t)1 << 62, 1) && errno == ENOMEM);
	/* memalign() rounds a bad alignment up to a power of two... */
	p = memalign(24, 10);
	CHECK(8, p && !((uintptr_t)p % 32));
	free(p);
	p = memalign(0, 10);
	CHECK(9, p);
	free(p);
	/* ... but one above the largest power of two is EINVAL (glibc). */
	errno = 0;
	CHECK(10, !memalign(SIZE_MAX / 2 + 2, 1) && errno == EINVAL);
	errno = 0;
	CHECK(11, !memalign(SIZE_MAX, 1) && errno == EINVAL);
	/* Alignments below a pointer's: fine for all but posix_memalign(). */
	for (a = 1; a < sizeof(void *); a <<= 1) {
		p = aligned_alloc(a, 3);
		CHECK(17, p && !((uintptr_t)p % a));
		free(p);
		p = memalign(a, 3);
		CHECK(18, p && !((uintptr_t)p % a));
		free(p);
	}
	p = aligned_alloc(64, 100);	/* size not a multiple: C17 allows */
	CHECK(12, p && !((uintptr_t)p % 64));
	free(p);
	p = valloc(1);
	CHECK(13, p && !((uintptr_t)p % pg));
	free(p);
	p = pvalloc(1);
	CHECK(14, p && !((uintptr_t)p % pg) && malloc_usable_size(p) >= pg);
	fill(p, 1, pg);
	free(p);
	p = pvalloc(0);
	CHECK(15, p && !((uintptr_t)p % pg));
	free(p);
	errno = 0;
	CHECK(16, !pvalloc(SIZE_MAX - 10) && errno == ENOMEM);
	return 0;
}

static int do_realloc(void)
{
	/* Hidden from the compiler, which rejects such sizes. */
	volatile size_t max = SIZE_MAX;
	unsigned char *p, *q;
	size_t sizes[] = { 1, 16, 17, 100, 500, 2048, 4000, 5000, 70000,
			   1 << 20, 3000, 10, 1 };
	size_t i, j, have;

	/* realloc(p, 0) frees p and returns NULL (glibc). */
	p = malloc(100);
	CHECK(1, p);
	errno = 0;
	CHECK(2, realloc(p, 0) == NULL);
	p = realloc(NULL, 0);
	CHECK(3, p);
	free(p);
	/* Too big: NULL, ENOMEM, the old block intact and still ours. */
	p = malloc(64);
	CHECK(4, p);
	memset(p, 0x3c, 64);
	errno = 0;
	CHECK(5, realloc(p, max / 2) == NULL && errno == ENOMEM);
	errno = 0;
	CHECK(6, realloc(p, max - 4096) == NULL && errno == ENOMEM);
	for (i = 0; i < 64; i++)
		CHECK(7, p[i] == 0x3c);
	errno = 0;
	CHECK(8, !reallocarray(p, max / 2, 3) && errno == ENOMEM);
	errno = 0;
	CHECK(9, !calloc(max / 2, 3) && errno == ENOMEM);
	errno = 0;
	CHECK(10, !malloc(max) && errno == ENOMEM);
	/* Through every size class and to pages and back, data kept. */
	for (j = 0; j < 64; j++)
		p[j] = (unsigned char)(j * 7);
	have = 64;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		q = realloc(p, sizes[i]);
		CHECK(11, q);
		for (j = 0; j < (have < sizes[i] ? have : sizes[i]); j++)
			CHECK(12, q[j] == (unsigned char)(j * 7));
		for (j = 0; j < sizes[i]; j++)
			q[j] = (unsigned char)(j * 7);
		have = sizes[i];
		p = q;
	}
	free(p);
	return 0;
}

static int do_enomem(void)
{
	volatile size_t max = SIZE_MAX;
	void *p = malloc(10);

	CHECK(1, p);
	errno = 0;
	CHECK(2, !malloc(max) && errno == ENOMEM);
	errno = 0;
	CHECK(3, !calloc(max / 2, 3) && errno == ENOMEM);
	errno = 0;
	CHECK(4, !realloc(p, max / 2) && errno == ENOMEM);
	CHECK(5, posix_memalign(&p, (size_t)1 << 62, 1) == ENOMEM);
	errno = 0;
	p = malloc((size_t)256 << 20);
	CHECK(6, !p && errno == ENOMEM);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * glibc's own allocations go through the interposed malloc family, and it
 * grows or frees memory the caller allocated (getline's buffer): a path
 * that used glibc's allocator directly would crash on a heap-mode block.
 */
static int do_libc(void)
{
	char *line = malloc(4), *buf, *s, *r;
	size_t cap = 4, len;
	struct dirent **names;
	struct addrinfo *ai;
	regex_t re;
	glob_t g;
	FILE *f;
	int *a, i, n;

	f = fopen("/proc/self/maps", "r");
	CHECK(1, line && f);
	while (getline(&line, &cap, f) > 0)
		;
	fclose(f);
	free(line);
	f = open_memstream(&buf, &len);
	CHECK(2, f);
	for (i = 0; i < 10000; i++)
		fprintf(f, "%d ", i);
	CHECK(3, !fclose(f) && len > 10000);
	free(buf);
	CHECK(4, asprintf(&s, "%0*d", 100000, 1) == 100000);
	free(s);
	n = scandir("/proc/self", &names, NULL, alphasort);
	CHECK(5, n > 0);
	while (n-- > 0)
		free(names[n]);
	free(names);
	a = malloc(100000 * sizeof(*a));	/* qsort allocates for this */
	CHECK(6, a);
	for (i = 0; i < 100000; i++)
		a[i] = rand();
	qsort(a, 100000, sizeof(*a), cmp_int);
	for (i = 1; i < 100000; i++)
		CHECK(7, a[i - 1] <= a[i]);
	free(a);
	CHECK(8, !regcomp(&re, "^(a|b)+[0-9]{2,5}$", REG_EXTENDED));
	CHECK(9, !regexec(&re, "abab123", 0, NULL, 0));
	regfree(&re);
	CHECK(10, !glob("/proc/self/*", 0, NULL, &g) && g.gl_pathc > 0);
	globfree(&g);
	CHECK(11, !getaddrinfo("localhost", "80", NULL, &ai));
	freeaddrinfo(ai);
	r = realpath("/proc/self/../self", NULL);
	CHECK(12, r);
	free(r);
	r = getcwd(NULL, 0);
	CHECK(13, r);
	free(r);
	return 0;
}

/* --- fork from threads while others allocate ---------------------------- */

static atomic_bool stop;
static char *shared_secret;

static void *churn(void *arg)
{
	uintptr_t bad = 0, seed = (uintptr_t)arg;
	void *keep[64] = { 0 };
	unsigned int i = 0;

	while (!atomic_load(&stop)) {
		unsigned int k = i++ % 64;
		size_t n = (size_t)((seed * 2654435761U + i) % 3000) + 1;

		if (keep[k]) {
			unsigned char *old = keep[k];

			if (old[0] != (unsigned char)seed)
				bad++;
			free(keep[k]);
		}
		keep[k] = malloc(n);
		if (!keep[k]) {
			bad++;
			continue;
		}
		memset(keep[k], (int)seed, n);
	}
	for (i = 0; i < 64; i++)
		free(keep[i]);
	return (void *)bad;
}

/* The child: a parent's pointer, an allocation, stdio, exit() handlers. */
static void child(void)
{
	char *mine = malloc(1000);

	if (!mine || strcmp(shared_secret, "parent's secret"))
		_exit(40);
	snprintf(mine, 1000, "child %d", (int)getpid());
	free(shared_secret);
	free(mine);
	exit(0);
}

static void *forker(void *arg)
{
	uintptr_t bad = 0;
	int i, st;

	(void)arg;
	for (i = 0; i < 25; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			bad++;
			continue;
		}
		if (pid == 0)
			child();
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad++;
	}
	return (void *)bad;
}

static void *systemer(void *arg)
{
	uintptr_t bad = 0;
	int i;

	(void)arg;
	for (i = 0; i < 10; i++)
		if (system("exit 7") >> 8 != 7)
			bad++;
	return (void *)bad;
}

static int do_forkthreads(void)
{
	pthread_t churners[4], forkers[2], sys;
	void *r;
	int i;

	shared_secret = strdup("parent's secret");
	CHECK(1, shared_secret);
	for (i = 0; i < 4; i++)
		CHECK(2, !pthread_create(&churners[i], NULL, churn,
					 (void *)(uintptr_t)(i + 1)));
	for (i = 0; i < 2; i++)
		CHECK(3, !pthread_create(&forkers[i], NULL, forker, NULL));
	CHECK(4, !pthread_create(&sys, NULL, systemer, NULL));
	for (i = 0; i < 2; i++) {
		CHECK(5, !pthread_join(forkers[i], &r));
		CHECK(6, r == NULL);
	}
	CHECK(7, !pthread_join(sys, &r) && r == NULL);
	atomic_store(&stop, true);
	for (i = 0; i < 4; i++) {
		CHECK(8, !pthread_join(churners[i], &r));
		CHECK(9, r == NULL);
	}
	CHECK(10, !strcmp(shared_secret, "parent's secret"));
	free(shared_secret);
	return 0;
}

/* --- the crypto libraries loaded at run time, RTLD_LOCAL ----------------- */

/*
 * As a module linked with the library but loaded RTLD_LOCAL (a Python
 * extension) sees a symbol: the global scope first, where the preload's
 * definitions are, then the library's own.
 */
#define SYM(h, name)							\
	({								\
		void *_s = dlsym(RTLD_DEFAULT, (name));			\
		if (!_s)						\
			_s = dlsym((h), (name));			\
		if (!_s) {						\
			fprintf(stderr, "heap_torture: %s: %s\n", (name), \
				dlerror());				\
			return 99;					\
		}							\
		_s;							\
	})

static int do_dlopen(void)
{
	void *(*sec_malloc)(size_t, const char *, int);
	void (*sec_free)(void *, const char *, int);
	int (*sec_allocated)(const void *);
	void *(*bn_secure_new)(void);
	int (*bn_set_word)(void *, unsigned long);
	int (*bn_lshift)(void *, const void *, int);
	void (*bn_clear_free)(void *);
	int (*sod_init)(void);
	void *(*sod_malloc)(size_t);
	void *(*sod_allocarray)(size_t, size_t);
	void (*sod_free)(void *);
	void *crypto, *sodium, *p, *bn;

	crypto = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
	CHECK(1, crypto);
	sec_malloc = SYM(crypto, "CRYPTO_secure_malloc");
	sec_free = SYM(crypto, "CRYPTO_secure_free");
	sec_allocated = SYM(crypto, "CRYPTO_secure_allocated");
	bn_secure_new = SYM(crypto, "BN_secure_new");
	bn_set_word = SYM(crypto, "BN_set_word");
	bn_lshift = SYM(crypto, "BN_lshift");
	bn_clear_free = SYM(crypto, "BN_clear_free");
	p = sec_malloc(100, __FILE__, __LINE__);
	CHECK(2, p);
	memset(p, 1, 100);
	(void)sec_allocated(p);
	sec_free(p, __FILE__, __LINE__);
	/* libcrypto's own calls of its secure heap (BN_FLG_SECURE). */
	bn = bn_secure_new();
	CHECK(3, bn && bn_set_word(bn, 0x1234567890abcdefUL) &&
		 bn_lshift(bn, bn, 3000));
	bn_clear_free(bn);

	sodium = dlopen("libsodium.so.23", RTLD_NOW | RTLD_LOCAL);
	CHECK(4, sodium);
	sod_init = SYM(sodium, "sodium_init");
	sod_malloc = SYM(sodium, "sodium_malloc");
	sod_free = SYM(sodium, "sodium_free");
	sod_allocarray = SYM(sodium, "sodium_allocarray");
	CHECK(5, sod_init() >= 0);
	p = sod_malloc(100);
	CHECK(6, p);
	memset(p, 2, 100);
	sod_free(p);
	/* libsodium's own call of sodium_malloc(), through its PLT. */
	p = sod_allocarray(10, 10);
	CHECK(8, p);
	memset(p, 3, 100);
	sod_free(p);
	CHECK(9, !dlclose(sodium));
	return 0;
}

/*
 * A failed dlsym() leaves its message in memory ld.so allocated with
 * malloc() (the heap mode's), and the next dl* call of the thread frees
 * it.  Here that next call is the preload's own, forwarding
 * CRYPTO_secure_malloc() to libcrypto for the first time.
 */
static int do_dlerror(void)
{
	void *(*sec_malloc)(size_t, const char *, int);
	void (*sec_free)(void *, const char *, int);
	void *crypto, *p;
	int i;

	crypto = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_GLOBAL);
	CHECK(1, crypto);
	sec_malloc = SYM(crypto, "CRYPTO_secure_malloc");
	sec_free = SYM(crypto, "CRYPTO_secure_free");
	/* Messages of different lengths: different chunks. */
	for (i = 0; i < 3; i++) {
		static const char *const missing[] = {
			"no_such_symbol", "no_such_symbol_either_really",
			"and_a_third_no_such_symbol_with_a_long_name_here" };

		CHECK(2, !dlsym(crypto, missing[i]));
		p = sec_malloc((size_t)100 << i, __FILE__, __LINE__);
		CHECK(3, p);
		sec_free(p, __FILE__, __LINE__);
	}
	return 0;
}

static int do_valloc(void)
{
	int i;

	for (i = 0; i < 10000; i++) {
		void *p = valloc(100), *q = pvalloc(100);

		CHECK(1, p && q);
		free(p);
		free(q);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 100;
	if (!strcmp(argv[1], "usable"))
		return do_usable();
	if (!strcmp(argv[1], "align"))
		return do_align();
	if (!strcmp(argv[1], "realloc"))
		return do_realloc();
	if (!strcmp(argv[1], "enomem"))
		return do_enomem();
	if (!strcmp(argv[1], "forkthreads"))
		return do_forkthreads();
	if (!strcmp(argv[1], "dlopen"))
		return do_dlopen();
	if (!strcmp(argv[1], "libc"))
		return do_libc();
	if (!strcmp(argv[1], "valloc"))
		return do_valloc();
	if (!strcmp(argv[1], "dlerror"))
		return do_dlerror();
	return 100;
}
