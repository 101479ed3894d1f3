// SPDX-License-Identifier: GPL-2.0
/*
 * upgrade-holder: a program linked with libsecmem that keeps running while
 * the package lifecycle test (lifecycle.sh) upgrades libsecmem0 under it.
 *
 *   upgrade-holder FIFO
 *
 * It fills a secret with secmem_malloc(), prints "upgrade-holder: ready
 * PID" and blocks reading FIFO. When a line arrives (after the upgrade
 * replaced libsecmem.so.X.Y.Z on disk), it checks that the secret is
 * intact, allocates again (small and large, so a new arena is mapped
 * after the upgrade), checks those, frees everything and prints
 * "upgrade-holder: ok BACKEND". Exit status 0 on success, 1 when a check
 * fails, 2 on bad usage or when secmem has no backend.
 */
#define _GNU_SOURCE
#include <secmem.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECRET_LEN 4096
#define LARGE_LEN (3u << 20)

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)((i * 31u + seed) & 0xff);
}

static int intact(const unsigned char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (unsigned char)((i * 31u + seed) & 0xff))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	unsigned char *secret, *small, *large;
	char line[64];
	FILE *fifo;

	if (argc != 2) {
		fprintf(stderr, "usage: upgrade-holder FIFO\n");
		return 2;
	}
	if (secmem_init(0) != 0) {
		printf("upgrade-holder: secmem_init: %s\n", secmem_strerror(secmem_last_error()));
		return 2;
	}
	secret = secmem_malloc(SECRET_LEN);
	if (!secret) {
		printf("upgrade-holder: secmem_malloc: %s\n", strerror(errno));
		return 1;
	}
	fill(secret, SECRET_LEN, 7);
	printf("upgrade-holder: ready %ld\n", (long)getpid());
	fflush(stdout);

	/* Blocks until the lifecycle test writes a line, after the upgrade. */
	fifo = fopen(argv[1], "r");
	if (!fifo || !fgets(line, sizeof(line), fifo)) {
		printf("upgrade-holder: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	fclose(fifo);

	if (!intact(secret, SECRET_LEN, 7)) {
		printf("upgrade-holder: the secret changed across the upgrade\n");
		return 1;
	}
	small = secmem_malloc(100);
	large = secmem_malloc(LARGE_LEN);
	if (!small || !large) {
		printf("upgrade-holder: allocation after the upgrade failed: %s\n",
		       strerror(errno));
		return 1;
	}
	fill(small, 100, 11);
	fill(large, LARGE_LEN, 13);
	if (!intact(small, 100, 11) || !intact(large, LARGE_LEN, 13) ||
	    !intact(secret, SECRET_LEN, 7)) {
		printf("upgrade-holder: memory allocated after the upgrade is wrong\n");
		return 1;
	}
	secmem_free(large);
	secmem_free(small);
	secmem_free(secret);
	printf("upgrade-holder: ok %s\n", secmem_backend_name(secmem_backend()));
	return 0;
}
