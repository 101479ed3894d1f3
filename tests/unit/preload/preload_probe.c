// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload_probe: run under libsecmem-preload.so (or not) by test.sh, and
 * report through its exit status whether the Debian 12 libraries really
 * were interposed.  It calls libcrypto.so.3 and libsodium.so.23 as any
 * program would, and asks libsecmem (the same instance the preload uses)
 * whether the memory they returned is secret memory.
 *
 *   preload_probe openssl   CRYPTO_secure_* served by libsecmem
 *   preload_probe sodium    sodium_malloc() semantics on secret memory
 *   preload_probe heap      malloc family, threads and fork
 *   preload_probe plain     nothing interposed (the control)
 *   preload_probe forkkeys  keys in the secure heap and sodium_malloc()
 *                           memory, used and freed by a fork child (a
 *                           pre-forking server)
 *   preload_probe hold      heap mode: 300000 bytes allocated, a forked
 *                           child with allocations of its own; prints
 *                           "PARENT CHILD" and waits for EOF on stdin
 *                           (for secmemctl status, which reads the
 *                           statistics page of each)
 *   preload_probe overflow|underflow|noaccess|readonly
 *                           sodium faults that must kill the process
 *
 * Exit 0 when every check holds, else the number of the failed check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/bn.h>
#include <sodium.h>

#include "secmem.h"

#define CHECK(n, cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "preload_probe: check %d failed: %s\n", \
				(n), #cond);				\
			return (n);					\
		}							\
	} while (0)

static int do_openssl(void)
{
	void *p, *z;
	BIGNUM *bn;

	/* No CRYPTO_secure_malloc_init(): the preload's heap needs none. */
	CHECK(1, CRYPTO_secure_malloc_initialized() == 1);
	p = CRYPTO_secure_malloc(100, __FILE__, __LINE__);
	CHECK(2, p && secmem_owns(p));
	CHECK(3, CRYPTO_secure_allocated(p) == 1);
	CHECK(4, CRYPTO_secure_actual_size(p) >= 100);
	CHECK(5, CRYPTO_secure_used() >= 100);
	z = CRYPTO_secure_zalloc(64, __FILE__, __LINE__);
	CHECK(6, z && secmem_owns(z) && !((unsigned char *)z)[63]);
	/* A BN_FLG_SECURE bignum: its limbs are secret memory. */
	bn = BN_secure_new();
	CHECK(7, bn && BN_set_word(bn, 0x1234567890abcdefULL));
	CHECK(8, BN_lshift(bn, bn, 2000));
	CHECK(9, BN_get_flags(bn, BN_FLG_SECURE));
	BN_clear_free(bn);
	/* Ordinary memory passed to the secure free is still freed. */
	CRYPTO_secure_free(CRYPTO_malloc(32, __FILE__, __LINE__), __FILE__,
			   __LINE__);
	CHECK(10, CRYPTO_secure_allocated(&bn) == 0);
	CRYPTO_secure_clear_free(p, 100, __FILE__, __LINE__);
	CRYPTO_secure_free(z, __FILE__, __LINE__);
	CHECK(11, !secmem_owns(p));
	CHECK(12, CRYPTO_secure_malloc_init(4096, 32) == 1);
	return 0;
}

static int do_plain(void)
{
	void *p = CRYPTO_secure_malloc(100, __FILE__, __LINE__);
	void *m = malloc(100);
	void *s;

	CHECK(1, sodium_init() >= 0);
	s = sodium_malloc(100);
	CHECK(2, p && !secmem_owns(p));
	CHECK(3, m && !secmem_owns(m));
	CHECK(4, s && !secmem_owns(s));
	CHECK(5, CRYPTO_secure_malloc_initialized() == 0);
	sodium_free(s);
	free(m);
	CRYPTO_secure_free(p, __FILE__, __LINE__);
	return 0;
}

static int do_sodium(void)
{
	unsigned char *p, *q;
	size_t i;

	CHECK(1, sodium_init() >= 0);
	p = sodium_malloc(100);
	CHECK(2, p && secmem_owns(p));
	for (i = 0; i < 100; i++)
		CHECK(3, p[i] == 0xdb);
	/* The data ends at the guard page. */
	CHECK(4, ((uintptr_t)(p + 100) & (sysconf(_SC_PAGESIZE) - 1)) == 0);
	memset(p, 0x42, 100);
	CHECK(5, sodium_mprotect_readonly(p) == 0 && p[99] == 0x42);
	CHECK(6, sodium_mprotect_noaccess(p) == 0);
	CHECK(7, sodium_mprotect_readwrite(p) == 0 && p[0] == 0x42);
	q = sodium_allocarray(1000, 40);
	CHECK(8, q && secmem_owns(q));
	CHECK(9, !sodium_allocarray(SIZE_MAX / 2, 3) && errno == ENOMEM);
	sodium_free(q);
	CHECK(10, sodium_mprotect_noaccess(p) == 0);
	sodium_free(p);		/* frees a NOACCESS block, as libsodium does */
	CHECK(11, !secmem_owns(p));
	sodium_free(NULL);
	return 0;
}

static int do_sodium_fault(const char *how)
{
	unsigned char *p;

	if (sodium_init() < 0)
		return 1;
	p = sodium_malloc(100);
	if (!p || !secmem_owns(p))
		return 2;
	if (!strcmp(how, "overflow"))
		((volatile unsigned char *)p)[100] = 1;
	else if (!strcmp(how, "underflow"))
		p[-1] = 1, sodium_free(p);	/* canary: abort */
	else if (!strcmp(how, "noaccess"))
		sodium_mprotect_noaccess(p), (void)((volatile unsigned char *)p)[0];
	else if (!strcmp(how, "readonly"))
		sodium_mprotect_readonly(p), ((volatile unsigned char *)p)[0] = 1;
	return 3;	/* survived: the fault did not happen */
}

static void *heap_thread(void *arg)
{
	uintptr_t bad = 0;
	int i;

	for (i = 0; i < 20000; i++) {
		size_t n = (size_t)(i % 500) + 1;
		unsigned char *p = malloc(n);

		if (!p || !secmem_owns(p)) {
			bad++;
			continue;
		}
		memset(p, (int)(uintptr_t)arg, n);
		p = realloc(p, n * 3);
		if (!p || p[n - 1] != (unsigned char)(uintptr_t)arg)
			bad++;
		free(p);
	}
	return (void *)bad;
}

static int do_heap(void)
{
	char *s = strdup("a heap secret"), *c;
	void *a = NULL, *r;
	pthread_t t[4];
	int i, st, fds[2];
	pid_t pid;
	char buf[32] = "";

	CHECK(1, s && secmem_owns(s));
	c = calloc(10, 10);
	CHECK(2, c && secmem_owns(c) && !c[99]);
	CHECK(3, posix_memalign(&a, 4096, 100) == 0 && secmem_owns(a) &&
		 !((uintptr_t)a % 4096));
	CHECK(4, malloc_usable_size(c) >= 100);
	CHECK(5, posix_memalign(&r, 3, 10) == EINVAL);
	r = aligned_alloc(64, 64);
	CHECK(6, r && secmem_owns(r) && !((uintptr_t)r % 64));
	free(r);
	r = valloc(10);
	CHECK(7, r && !((uintptr_t)r % (uintptr_t)sysconf(_SC_PAGESIZE)));
	free(r);
	for (i = 0; i < 4; i++)
		CHECK(8, !pthread_create(&t[i], NULL, heap_thread,
					 (void *)(uintptr_t)(i + 1)));
	for (i = 0; i < 4; i++) {
		CHECK(9, !pthread_join(t[i], &r));
		CHECK(10, r == NULL);
	}
	/* fork: the child has the heap, its writes stay its own. */
	CHECK(11, pipe(fds) == 0);
	pid = fork();
	CHECK(12, pid >= 0);
	if (pid == 0) {
		char *mine = strdup("child's");

		if (strcmp(s, "a heap secret") || !mine || !secmem_owns(mine))
			_exit(40);
		strcpy(s, "child wrote");
		if (write(fds[1], s, strlen(s) + 1) < 0)
			_exit(41);
		free(mine);
		free(c);
		_exit(0);
	}
	close(fds[1]);
	CHECK(13, read(fds[0], buf, sizeof(buf)) > 0 &&
		  !strcmp(buf, "child wrote"));
	CHECK(14, waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		  !WEXITSTATUS(st));
	CHECK(15, !strcmp(s, "a heap secret"));
	/* system() uses posix_spawn (vfork): no copy needed, must work. */
	CHECK(16, system("exit 3") >> 8 == 3);
	free(a);
	free(c);
	free(s);
	return 0;
}

/*
 * A server that loads its keys, then forks workers: each worker uses the
 * parent's keys and frees them on its way out, as it may with memory that
 * OpenSSL's secure heap or libsodium gave it (both are inherited by
 * fork()).  Run with or without the preload: the same must hold.
 */
static int forkkeys_child(unsigned char *sec, BIGNUM *bn, unsigned char *sod,
			  unsigned char *ro, unsigned char *na)
{
	unsigned char *mine;
	size_t i;

	for (i = 0; i < 32; i++)
		CHECK(21, sec[i] == (unsigned char)i && sod[i] == 0xa5 &&
			  ro[i] == 0x5a);
	CHECK(22, BN_is_word(bn, 0x1234567890abcdefULL));
	/* A sodium_mprotect_noaccess() block: still one, still there. */
	CHECK(26, sodium_mprotect_readwrite(na) == 0 && na[31] == 0x66);
	CHECK(23, BN_add_word(bn, 1) && BN_is_word(bn, 0x1234567890abcdf0ULL));
	memset(sec, 0xee, 32);
	memset(sod, 0xee, 32);
	mine = CRYPTO_secure_malloc(64, __FILE__, __LINE__);
	CHECK(24, mine);
	CRYPTO_secure_free(mine, __FILE__, __LINE__);
	mine = sodium_malloc(64);
	CHECK(25, mine);
	sodium_free(mine);
	CRYPTO_secure_clear_free(sec, 32, __FILE__, __LINE__);
	BN_clear_free(bn);
	sodium_free(sod);
	sodium_free(ro);	/* a read-only block, as libsodium allows */
	sodium_free(na);
	return 0;
}

static int do_forkkeys(void)
{
	unsigned char *sec, *sod, *ro, *na;
	BIGNUM *bn;
	size_t i;
	int st, w;
	pid_t pid;

	CHECK(1, sodium_init() >= 0);
	sec = CRYPTO_secure_malloc(32, __FILE__, __LINE__);
	bn = BN_secure_new();
	sod = sodium_malloc(32);
	ro = sodium_malloc(32);
	na = sodium_malloc(32);
	CHECK(2, sec && bn && sod && ro && na);
	memset(na, 0x66, 32);
	CHECK(10, sodium_mprotect_noaccess(na) == 0);
	for (i = 0; i < 32; i++)
		sec[i] = (unsigned char)i;
	memset(sod, 0xa5, 32);
	memset(ro, 0x5a, 32);
	CHECK(3, sodium_mprotect_readonly(ro) == 0);
	CHECK(4, BN_set_word(bn, 0x1234567890abcdefULL));
	for (w = 0; w < 3; w++) {
		pid = fork();
		CHECK(5, pid >= 0);
		if (pid == 0)
			_exit(forkkeys_child(sec, bn, sod, ro, na));
		CHECK(6, waitpid(pid, &st, 0) == pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "preload_probe: worker %d: %s %d\n", w,
				WIFSIGNALED(st) ? "killed by signal" :
						  "exit status",
				WIFSIGNALED(st) ? WTERMSIG(st) :
						  WEXITSTATUS(st));
			return 7;
		}
	}
	/* The workers' writes and frees were their own. */
	for (i = 0; i < 32; i++)
		CHECK(8, sec[i] == (unsigned char)i && sod[i] == 0xa5 &&
			 ro[i] == 0x5a);
	CHECK(9, BN_is_word(bn, 0x1234567890abcdefULL));
	CRYPTO_secure_clear_free(sec, 32, __FILE__, __LINE__);
	BN_clear_free(bn);
	sodium_free(sod);
	sodium_free(ro);
	sodium_free(na);	/* NOACCESS in the parent still */
	return 0;
}

/* An allocation the compiler cannot remove (it drops free(malloc(n))). */
static void allocate_once(void)
{
	void *volatile p = malloc(16);

	free(p);
}

/* Allocate, then allocate again more than 100 ms later: that refreshes
 * the statistics page (stats_export.c) with the first allocations. */
static int do_hold(void)
{
	char *keep[3], c;
	pid_t child;
	int i, st;

	for (i = 0; i < 3; i++) {
		keep[i] = malloc(100000);
		CHECK(1, keep[i] && secmem_owns(keep[i]));
		memset(keep[i], 0x5a, 100000);
	}
	usleep(150000);
	allocate_once();
	child = fork();
	CHECK(2, child >= 0);
	if (child == 0) {
		/* Its own page, at its first refresh after the fork. */
		char *mine;

		usleep(150000);
		mine = malloc(50000);
		if (!mine)
			_exit(3);
		usleep(150000);
		allocate_once();
		for (;;)
			pause();
	}
	printf("%ld %ld\n", (long)getpid(), (long)child);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	kill(child, SIGKILL);
	CHECK(4, waitpid(child, &st, 0) == child);
	for (i = 0; i < 3; i++)
		free(keep[i]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 100;
	if (!strcmp(argv[1], "openssl"))
		return do_openssl();
	if (!strcmp(argv[1], "sodium"))
		return do_sodium();
	if (!strcmp(argv[1], "heap"))
		return do_heap();
	if (!strcmp(argv[1], "forkkeys"))
		return do_forkkeys();
	if (!strcmp(argv[1], "plain"))
		return do_plain();
	if (!strcmp(argv[1], "hold"))
		return do_hold();
	return do_sodium_fault(argv[1]);
}
