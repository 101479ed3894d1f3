/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sub-tests for secmem guest tests, on top of tap.h: a table of named
 * sub-tests, selected by id on the command line (none given: all), each
 * run in a forked child under an alarm so that a crash, a hang or a leaked
 * resource stays inside it.
 *
 *	static const struct subtest subtests[] = {
 *		{ "create", "memfd_create() with the flag succeeds", test_create },
 *	};
 *
 *	int main(int argc, char **argv)
 *	{
 *		unsigned int planned = subtest_select(subtests,
 *						      ARRAY_SIZE(subtests),
 *						      argc, argv);
 *		... checks that may skip or bail out the whole program ...
 *		tap_plan(planned);
 *		for (i = 0; i < ARRAY_SIZE(subtests); i++)
 *			if (subtest_selected(&subtests[i], argc, argv))
 *				tap_report(subtest_run(&subtests[i], TIMEOUT),
 *					   subtests[i].name, skip_reason);
 *		return tap_finish();
 *	}
 *
 * A sub-test that skips writes its reason to skip_reason (see skip()):
 * it lives in shared memory, so the child's reason reaches the parent.
 */
#ifndef SECMEM_TEST_SUBTEST_H
#define SECMEM_TEST_SUBTEST_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "tap.h"

struct subtest {
	const char *id;		/* command-line name */
	const char *name;	/* TAP description */
	enum tap_result (*run)(void);
};

#define SUBTEST_SKIP_REASON_SIZE 4096

/* Why the running sub-test skipped, shared with the forked child. */
static char *skip_reason;

/* Record why the current sub-test skips; returns TAP_SKIP. */
static inline __attribute__((format(printf, 1, 2)))
enum tap_result skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, SUBTEST_SKIP_REASON_SIZE, fmt, ap);
	va_end(ap);
	return TAP_SKIP;
}

static inline __attribute__((noreturn))
void subtest_usage(const char *prog, const struct subtest *t, size_t n)
{
	size_t i;

	fprintf(stderr, "usage: %s [SUBTEST...]\nsub-tests (default: all):\n", prog);
	for (i = 0; i < n; i++)
		fprintf(stderr, "  %-24s %s\n", t[i].id, t[i].name);
	exit(KSFT_FAIL);
}

/* Is sub-test @st selected by the command line (none given: all are)? */
static inline bool subtest_selected(const struct subtest *st, int argc,
				    char **argv)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], st->id))
			return true;
	return false;
}

/*
 * Check that every argument names one of the @n sub-tests of @t (usage and
 * exit otherwise), set up skip_reason, and return how many will run.
 */
static inline unsigned int subtest_select(const struct subtest *t, size_t n,
					  int argc, char **argv)
{
	unsigned int planned = 0;
	size_t i;
	int arg;

	for (arg = 1; arg < argc; arg++) {
		for (i = 0; i < n; i++)
			if (!strcmp(argv[arg], t[i].id))
				break;
		if (i == n)
			subtest_usage(argv[0], t, n);
	}
	for (i = 0; i < n; i++)
		planned += subtest_selected(&t[i], argc, argv);

	skip_reason = mmap(NULL, SUBTEST_SKIP_REASON_SIZE, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (skip_reason == MAP_FAILED)
		tap_bail("mmap: %m");
	return planned;
}

/*
 * Run @st in a child, killed by SIGALRM after @timeout seconds. A child
 * that dies of a signal or times out fails; its exit code is the result.
 */
static inline enum tap_result subtest_run(const struct subtest *st,
					  unsigned int timeout)
{
	int status;
	pid_t pid;

	skip_reason[0] = '\0';
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_diag("fork: %m");
		return TAP_FAIL;
	}
	if (!pid) {
		enum tap_result res;

		alarm(timeout);
		res = st->run();
		fflush(stdout);
		_exit(res == TAP_PASS ? KSFT_PASS : res == TAP_SKIP ? KSFT_SKIP : KSFT_FAIL);
	}
	if (waitpid(pid, &status, 0) != pid) {
		tap_diag("waitpid: %m");
		return TAP_FAIL;
	}
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			tap_diag("timed out after %u s", timeout);
		else
			tap_diag("killed by signal %d (%s)", WTERMSIG(status),
				 strsignal(WTERMSIG(status)));
		return TAP_FAIL;
	}
	switch (WEXITSTATUS(status)) {
	case KSFT_PASS:
		return TAP_PASS;
	case KSFT_SKIP:
		return TAP_SKIP;
	default:
		return TAP_FAIL;
	}
}

#endif /* SECMEM_TEST_SUBTEST_H */
