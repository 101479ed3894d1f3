/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parsing and printing of the values that the configuration, secmemctl and
 * the kernel's sysfs files exchange.  One set of rules everywhere, so that
 * a value that secmem.conf accepts is also accepted on the command line.
 */
#ifndef SECMEM_UNITS_H
#define SECMEM_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse a size: decimal digits with an optional K, M, G or T suffix
 * (binary multiples, either case), as the kernel's memparse() reads them.
 * Leading and trailing blanks are not accepted.
 * Returns 0, -EINVAL (empty, sign, junk) or -ERANGE (overflow).
 */
int parse_size(const char *s, uint64_t *bytes);

/*
 * Format a size for people: with the largest suffix that divides it
 * exactly ("64M", "1536K"), else in bytes.  Returns @buf.
 */
const char *format_size(uint64_t bytes, char *buf, size_t len);
#define SIZE_STR_MAX 24

/* Parse a decimal integer in [0, @max].  Same errors as parse_size(). */
int parse_uint(const char *s, uint64_t max, uint64_t *out);

/*
 * Parse a percentage "N" or "N.N" or "N.NN" in [0, 100] into hundredths
 * of a percent (10.5 -> 1050), the resolution of /proc/pressure.
 */
int parse_percent(const char *s, unsigned int *hundredths);

/*
 * Parse a duration: an integer with a unit suffix "ms", "s" or "m"
 * (a bare number is seconds) into milliseconds.
 */
int parse_duration_ms(const char *s, uint64_t *ms);

#endif /* SECMEM_UNITS_H */
