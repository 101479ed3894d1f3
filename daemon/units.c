// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Strict number parsing: strtoull() alone accepts blanks, signs and
 * trailing junk, all of which we want to reject with a message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

/* Parse the leading digits of @s; *end points after them. */
static int parse_digits(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (p == s)
		return -EINVAL;
	*end = p;
	*out = v;
	return 0;
}

int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int r;

	r = parse_digits(s, &end, &v);
	if (r)
		return r;
	if (*end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	const char *end;
	unsigned int shift = 0;
	uint64_t v;
	int r;

	r = parse_digits(s, &end, &v);
	if (r)
		return r;
	switch (*end) {
	case 'T': case 't':
		shift = 40;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'K': case 'k':
		shift = 10;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (shift && end[1])
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*bytes = v << shift;
	return 0;
}

const char *format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		unsigned int shift = 10 * (unsigned int)(i + 1);
		uint64_t unit = UINT64_C(1) << shift;

		if (bytes && bytes % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", bytes >> shift,
				 suffix[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64, bytes);
	return buf;
}

int parse_percent(const char *s, unsigned int *hundredths)
{
	const char *end;
	uint64_t whole, frac = 0;
	int r, ndig = 0;

	r = parse_digits(s, &end, &whole);
	if (r)
		return r;
	if (*end == '.') {
		const char *p = end + 1;

		for (; *p >= '0' && *p <= '9' && ndig < 2; p++, ndig++)
			frac = frac * 10 + (uint64_t)(*p - '0');
		if (ndig == 0 || *p)
			return -EINVAL;
		if (ndig == 1)
			frac *= 10;
	} else if (*end) {
		return -EINVAL;
	}
	if (whole > 100 || (whole == 100 && frac))
		return -ERANGE;
	*hundredths = (unsigned int)(whole * 100 + frac);
	return 0;
}

int parse_duration_ms(const char *s, uint64_t *ms)
{
	const char *end;
	uint64_t v, mult;
	int r;

	r = parse_digits(s, &end, &v);
	if (r)
		return r;
	if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "s") || !*end)
		mult = 1000;
	else if (!strcmp(end, "m"))
		mult = 60000;
	else
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*ms = v * mult;
	return 0;
}
