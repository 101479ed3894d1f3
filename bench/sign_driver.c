// SPDX-License-Identifier: GPL-2.0
/*
 * sign_driver: a fixed number of signatures the way openssl speed makes
 * them (one EVP_PKEY_CTX, EVP_PKEY_sign() in a loop: ECDSA P-256 over 20
 * bytes, RSA-3072 PKCS#1 over 36), to compare instruction counts
 * (valgrind --tool=callgrind) with and without libsecmem-preload.  Those
 * are repeatable on a loaded machine, where openssl speed's signatures
 * per second are not (preload_bench.sh, bench/README.md).
 *
 *   sign_driver ec|rsa N
 *
 * The key is generated first; the signatures are made in sign_loop(), a
 * function of its own so that callgrind --toggle-collect=sign_loop counts
 * them without the key generation, whose cost is random.  Prints
 * "sign ALG N us_per_sign X" (wall clock of the loop, for a quick look;
 * preload_bench.sh takes its wall-clock figures from openssl speed).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

__attribute__((noinline)) int sign_loop(EVP_PKEY_CTX *ctx, long n,
					size_t mlen);

int sign_loop(EVP_PKEY_CTX *ctx, long n, size_t mlen)
{
	unsigned char msg[36], sig[512];
	long i;

	memset(msg, 0x5a, sizeof(msg));
	for (i = 0; i < n; i++) {
		size_t len = sizeof(sig);

		msg[0] = (unsigned char)i;
		if (EVP_PKEY_sign(ctx, sig, &len, msg, mlen) != 1) {
			fprintf(stderr, "sign_driver: signature %ld failed\n", i);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	EVP_PKEY_CTX *ctx;
	EVP_PKEY *key;
	double us;
	long n;
	int rsa;

	if (argc != 3 || (strcmp(argv[1], "ec") && strcmp(argv[1], "rsa"))) {
		fprintf(stderr, "usage: sign_driver ec|rsa N\n");
		return 2;
	}
	rsa = !strcmp(argv[1], "rsa");
	n = atol(argv[2]);
	key = rsa ? EVP_RSA_gen(3072) : EVP_EC_gen("P-256");
	ctx = key ? EVP_PKEY_CTX_new(key, NULL) : NULL;
	if (!ctx || EVP_PKEY_sign_init(ctx) != 1) {
		fprintf(stderr, "sign_driver: key setup failed\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (sign_loop(ctx, n, rsa ? 36 : 20))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	us = ((double)(b.tv_sec - a.tv_sec) * 1e9 +
	      (double)(b.tv_nsec - a.tv_nsec)) / 1e3;
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(key);
	printf("sign %s %ld us_per_sign %.1f\n", argv[1], n, n ? us / (double)n : 0.0);
	return 0;
}
