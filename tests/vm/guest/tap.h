/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP 13 producer for secmem guest tests.
 *
 * A guest test is one program. It prints a plan, one result line per
 * sub-test and diagnostics as "# " comments, and exits with the kselftest
 * codes below; the guest runner (tests/vm/guest/init) turns the exit code
 * into the program's single result and indents everything it printed.
 *
 * Diagnostics go to stdout, like results, so that the two keep their order
 * when stdout is a pipe; tap_plan() makes stdout line buffered for the same
 * reason and so that output printed before a hang still reaches the console.
 *
 * Everything is static: each test is a single translation unit.
 */
#ifndef SECMEM_TEST_TAP_H
#define SECMEM_TEST_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kselftest exit codes (tools/testing/selftests/kselftest.h). */
#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

enum tap_result {
	TAP_PASS,
	TAP_FAIL,
	TAP_SKIP,
};

static unsigned int tap_planned, tap_count, tap_passed, tap_failed, tap_skipped;

static inline __attribute__((format(printf, 1, 0)))
void tap_vdiag(const char *fmt, va_list ap)
{
	char line[1024];
	char *s, *nl;

	vsnprintf(line, sizeof(line), fmt, ap);
	/* Prefix every line of a multi-line message. */
	for (s = line; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl) {
			printf("# %s\n", s);
			break;
		}
		printf("# %.*s\n", (int)(nl - s), s);
	}
}

/* A "# " diagnostic line; a trailing newline in @fmt is optional. */
static inline __attribute__((format(printf, 1, 2)))
void tap_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
}

static inline void tap_plan(unsigned int n)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_planned = n;
	printf("TAP version 13\n1..%u\n", n);
}

/* Report one sub-test. @reason is printed after "# SKIP" for TAP_SKIP. */
static inline void tap_report(enum tap_result res, const char *name,
			      const char *reason)
{
	tap_count++;
	switch (res) {
	case TAP_PASS:
		tap_passed++;
		printf("ok %u %s\n", tap_count, name);
		break;
	case TAP_SKIP:
		tap_skipped++;
		printf("ok %u %s # SKIP %s\n", tap_count, name,
		       reason ? reason : "");
		break;
	case TAP_FAIL:
	default:
		tap_failed++;
		printf("not ok %u %s\n", tap_count, name);
		break;
	}
}

/* Abort the whole program: TAP "Bail out!", exit code KSFT_FAIL. */
static inline __attribute__((format(printf, 1, 2), noreturn))
void tap_bail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("Bail out! %s\n", msg);
	fflush(stdout);
	exit(KSFT_FAIL);
}

/* Skip the whole program, e.g. when the feature under test is absent. */
static inline __attribute__((format(printf, 1, 2), noreturn))
void tap_skip_all(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("1..0 # SKIP %s\n", msg);
	fflush(stdout);
	exit(KSFT_SKIP);
}

/*
 * Print the totals and return the program's exit code: fail if any
 * sub-test failed or the plan was not met, skip if every sub-test skipped.
 */
static inline int tap_finish(void)
{
	printf("# Totals: pass:%u fail:%u skip:%u total:%u\n",
	       tap_passed, tap_failed, tap_skipped, tap_count);
	if (tap_count != tap_planned) {
		printf("# planned %u sub-tests, ran %u\n", tap_planned, tap_count);
		return KSFT_FAIL;
	}
	if (tap_failed)
		return KSFT_FAIL;
	if (tap_count && tap_skipped == tap_count)
		return KSFT_SKIP;
	return KSFT_PASS;
}

#endif /* SECMEM_TEST_TAP_H */
