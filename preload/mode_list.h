/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mode list of SECMEM_PRELOAD_MODE as the launchers accept it:
 * "openssl", "sodium" and "heap", comma-separated, none empty.  The
 * preload parses the variable itself (common.c) and stops the program on
 * an unknown word; secmem-run --mode and secmemctl protect --mode check
 * the list first with this, so that a typo is a usage error there and
 * never reaches a running service.
 */
#ifndef SECMEM_PRELOAD_MODE_LIST_H
#define SECMEM_PRELOAD_MODE_LIST_H

#include <stdbool.h>
#include <string.h>

static inline bool preload_valid_mode_list(const char *s)
{
	const char *p = s;

	if (!s || !*s)
		return false;
	while (*p) {
		size_t n = strcspn(p, ",");

		if (!((n == 7 && !strncmp(p, "openssl", n)) ||
		      (n == 6 && !strncmp(p, "sodium", n)) ||
		      (n == 4 && !strncmp(p, "heap", n))))
			return false;
		p += n + (p[n] == ',');
	}
	return true;
}

#endif /* SECMEM_PRELOAD_MODE_LIST_H */
