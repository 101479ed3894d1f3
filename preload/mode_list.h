/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mode list of SECMEM_PRELOAD_MODE, one parser for everything that
 * reads it: the preload (common.c), secmem-run --mode and secmemctl
 * protect --mode.  A list is one or more of "openssl", "sodium",
 * "gcrypt" and "heap", separated by single commas.  Anything else is
 * refused: the empty list, an empty mode (a leading, trailing or doubled
 * comma) and an unknown word.  A list that asks for protection is never read as
 * asking for less: the preload stops the program before main(), the
 * launchers refuse the list, each with the reason this parser gives.
 */
#ifndef SECMEM_PRELOAD_MODE_LIST_H
#define SECMEM_PRELOAD_MODE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define PRELOAD_OPENSSL	(1U << 0)
#define PRELOAD_SODIUM	(1U << 1)
#define PRELOAD_HEAP	(1U << 2)
#define PRELOAD_GCRYPT	(1U << 3)

/* What every message about a refused list ends with. */
#define PRELOAD_MODES_HELP \
	"the modes are openssl, sodium, gcrypt and heap, comma-separated"

/*
 * The PRELOAD_* bits of the list @s, never 0 for a valid list; 0 if @s is
 * not one, and then, if @why is not NULL, what is wrong with it goes
 * there (@whylen bytes at most, NUL-terminated).
 */
static inline unsigned int preload_mode_list_parse(const char *s, char *why,
						   size_t whylen)
{
	const char *p = s;
	unsigned int m = 0;

	if (!s || !*s) {
		if (why && whylen)
			snprintf(why, whylen, "the list is empty");
		return 0;
	}
	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 7 && !strncmp(p, "openssl", n))
			m |= PRELOAD_OPENSSL;
		else if (n == 6 && !strncmp(p, "sodium", n))
			m |= PRELOAD_SODIUM;
		else if (n == 6 && !strncmp(p, "gcrypt", n))
			m |= PRELOAD_GCRYPT;
		else if (n == 4 && !strncmp(p, "heap", n))
			m |= PRELOAD_HEAP;
		else if (!n) {
			if (why && whylen)
				snprintf(why, whylen, "an empty mode %s",
					 p == s ? "before the first comma" :
					 !*p ? "after the last comma" :
					       "between two commas");
			return 0;
		} else {
			if (why && whylen)
				snprintf(why, whylen, "unknown mode '%.*s'",
					 (int)n, p);
			return 0;
		}
		if (!p[n])
			return m;
		p += n + 1;
	}
}

static inline bool preload_valid_mode_list(const char *s)
{
	return preload_mode_list_parse(s, NULL, 0) != 0;
}

#endif /* SECMEM_PRELOAD_MODE_LIST_H */
