// SPDX-License-Identifier: GPL-2.0
/*
 * secret-demo: an application keeps a key with libsecmem, then plays the
 * attacker and searches all of kernel RAM (/proc/kcore, root only) for it.
 * The key must be absent; the same bytes copied into ordinary malloc()
 * memory, the control, must be found, or the search proves nothing.
 *
 * Built in the guest the way an application is built:
 *
 *   cc -O2 -o secret-demo secret-demo.c kcore.c \
 *           $(pkg-config --cflags --libs libsecmem)
 *
 * kcore.c is tests/vm/guest/lib/kcore.c (the guest tests' RAM search).
 * Every line starts with "secret-demo: "; exit status 0 when the backend is
 * the unmapped memfd, the key is absent and the control present, 1 when any
 * of that does not hold, 2 when the search cannot run (not root, no
 * /proc/kcore) or no secure backend exists.
 */
#define _GNU_SOURCE
#include <secmem.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "kcore.h"

#define KEY_LEN	32

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("secret-demo: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int main(void)
{
	enum secmem_backend backend;
	unsigned char *control;
	struct kcore kc;
	unsigned char *key;
	uint64_t paddr;
	int status = 0;
	size_t i;
	int r;

	/* The application's part: a key in secmem memory. */
	key = secmem_malloc(KEY_LEN);
	if (!key) {
		say("secmem_malloc: %s", secmem_strerror(secmem_last_error()));
		return 2;
	}
	backend = secmem_backend();
	say("backend %s", secmem_backend_name(backend));
	if (backend != SECMEM_BACKEND_UNMAPPED_MEMFD) {
		say("FAIL: expected the unmapped-memfd backend (memfd_create(MFD_UNMAPPED))");
		status = 1;
	}
	/* Written by the kernel straight into the key: no other copy exists. */
	if (getrandom(key, KEY_LEN, 0) != KEY_LEN) {
		say("getrandom: %s", strerror(errno));
		return 1;
	}
	say("stored a %d-byte random key at %p (first byte %#04x)", KEY_LEN,
	    (void *)key, ((volatile unsigned char *)key)[0]);

	/* The attacker's part: read every byte of RAM the kernel maps. */
	r = kcore_open(&kc);
	if (r) {
		say("cannot read /proc/kcore: %s (run as root)", strerror(-r));
		return 2;
	}
	say("searching %llu MiB of kernel RAM through /proc/kcore for the key...",
	    (unsigned long long)(kcore_ram_bytes(&kc) >> 20));
	r = kcore_find(&kc, key, KEY_LEN, &paddr);
	if (r < 0) {
		say("scan failed: %s", strerror(-r));
		return 1;
	}
	if (r) {
		say("FAIL: key found at physical address %#llx", (unsigned long long)paddr);
		status = 1;
	} else {
		say("key absent: its page is not in the kernel's direct map");
	}

	/* The control: the same bytes in ordinary memory must be found. */
	control = malloc(4096);
	if (!control) {
		say("malloc: %s", strerror(errno));
		return 1;
	}
	for (i = 0; i < KEY_LEN; i++)
		control[i] = ((volatile unsigned char *)key)[i];
	say("copied the key into ordinary malloc() memory at %p, searching again...",
	    (void *)control);
	r = kcore_find(&kc, key, KEY_LEN, &paddr);
	if (r < 0) {
		say("scan failed: %s", strerror(-r));
		return 1;
	}
	if (r) {
		say("control found at physical address %#llx: the search sees ordinary memory",
		    (unsigned long long)paddr);
	} else {
		say("FAIL: control not found: the search cannot see ordinary memory either");
		status = 1;
	}
	kcore_close(&kc);
	memset(control, 0, 4096);
	free(control);
	secmem_free(key);
	say("%s", status ? "result: FAIL" : "result: pass");
	return status;
}
