// SPDX-License-Identifier: GPL-2.0
/*
 * kcore-find: search all of kernel RAM, through /proc/kcore, for secret
 * values given on the command line, in one pass, the way an attacker who
 * can read kernel memory would.
 *
 *   kcore-find NAME=HEX [NAME=HEX...]
 *
 * Prints "kcore-find: NAME found at PADDR" or "kcore-find: NAME absent"
 * for each.  The patterns are kept only bit-inverted in this process, so
 * the scanner's own memory cannot match them.  Exit 0 when the scan ran
 * (whatever it found), 2 when it could not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcore.h"

#define MAX_NEEDLES	32
#define MAX_LEN		256

static unsigned char store[MAX_NEEDLES][MAX_LEN];

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int main(int argc, char **argv)
{
	struct kcore_needle nd[MAX_NEEDLES];
	const char *names[MAX_NEEDLES];
	struct kcore kc;
	uint64_t scanned;
	int i, r, nr = argc - 1;

	if (nr < 1 || nr > MAX_NEEDLES) {
		fprintf(stderr, "usage: kcore-find NAME=HEX... (at most %d)\n",
			MAX_NEEDLES);
		return 2;
	}
	for (i = 0; i < nr; i++) {
		char *eq = strchr(argv[i + 1], '=');
		size_t len, j;

		if (!eq || !eq[1] || strlen(eq + 1) % 2 ||
		    strlen(eq + 1) / 2 > MAX_LEN) {
			fprintf(stderr, "kcore-find: %s: want NAME=HEX (even "
				"length, at most %d bytes)\n", argv[i + 1],
				MAX_LEN);
			return 2;
		}
		*eq = 0;
		names[i] = argv[i + 1];
		len = strlen(eq + 1) / 2;
		for (j = 0; j < len; j++) {
			int hi = hexval(eq[1 + 2 * j]), lo = hexval(eq[2 + 2 * j]);

			if (hi < 0 || lo < 0) {
				fprintf(stderr, "kcore-find: %s: not hex\n",
					names[i]);
				return 2;
			}
			store[i][j] = (unsigned char)((hi << 4 | lo) ^ 0xff);
		}
		/* Wipe the plain hex from argv: it is ordinary memory. */
		memset(eq + 1, 'x', strlen(eq + 1));
		nd[i] = (struct kcore_needle){ .bytes = store[i], .len = len,
					       .xor = 0xff };
	}
	r = kcore_open(&kc);
	if (r) {
		fprintf(stderr, "kcore-find: /proc/kcore: %s\n", strerror(-r));
		return 2;
	}
	r = kcore_find_all(&kc, nd, (unsigned int)nr, &scanned);
	if (r < 0) {
		fprintf(stderr, "kcore-find: scan failed: %s\n", strerror(-r));
		return 2;
	}
	for (i = 0; i < nr; i++) {
		if (nd[i].found)
			printf("kcore-find: %s found at %#llx\n", names[i],
			       (unsigned long long)nd[i].paddr);
		else
			printf("kcore-find: %s absent\n", names[i]);
	}
	printf("kcore-find: %d of %d found in %llu MiB\n", r, nr,
	       (unsigned long long)(scanned >> 20));
	kcore_close(&kc);
	return 0;
}
