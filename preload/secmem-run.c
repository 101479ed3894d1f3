// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * secmem-run: run an unmodified program with libsecmem-preload.so, after
 * checking that the protection asked for can really be given: a secret
 * memory backend exists, the memory lock limit allows an arena, and the
 * program is dynamically linked (LD_PRELOAD cannot reach a static one)
 * and does not gain privileges on exec (the dynamic loader ignores
 * LD_PRELOAD in secure-execution mode: Debian's ssh-agent is set-group-ID).
 *
 * Exit status, as env(1): 125 if secmem-run itself fails, 126 if the
 * program cannot be run, 127 if it is not found; else the program's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "exec_check.h"
#include "mode_list.h"
#include "secmem.h"

/* PRELOAD_PATH and SECMEM_VERSION: common.mk, as for secmemctl. */

#define EXIT_RUN_FAILED	125
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127

static const char *prog = "secmem-run";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--mode MODE[,MODE...]] [--no-new-privs] [--verbose] [--] COMMAND [ARG...]\n"
		"Run COMMAND with its secrets in memory outside the kernel's direct map.\n"
		"\n"
		"  -m, --mode MODES  openssl (OpenSSL 3's secure heap), sodium\n"
		"                    (sodium_malloc and friends), gcrypt (libgcrypt's\n"
		"                    secure memory), heap (the whole malloc family);\n"
		"                    comma-separated; default openssl,sodium\n"
		"  -n, --no-new-privs  run a set-user-ID, set-group-ID or file-capability\n"
		"                    program without those privileges (PR_SET_NO_NEW_PRIVS),\n"
		"                    so that the preload applies; else such a program is refused\n"
		"  -v, --verbose     say what is preloaded and which backend serves it\n"
		"  -h, --help        this help\n"
		"      --version     the version\n"
		"\n"
		"See secmem-run(1).\n", prog);
}

/* @cmd resolved as execvp() would, into @out; false if not found. */
static bool resolve(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p;

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return access(out, F_OK) == 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p += strcspn(p, ":") + 1) {
		size_t n = strcspn(p, ":");

		snprintf(out, len, "%.*s%s%s", (int)n, n ? p : ".", "/", cmd);
		if (access(out, X_OK) == 0)
			return true;
		if (!p[n])
			return false;
	}
}

static int check_target(const char *cmd, bool no_new_privs)
{
	struct exec_creds c = {
		.uid = geteuid(),
		.gid = getegid(),
		.no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1,
	};
	char file[PATH_MAX], why[64];

	if (!resolve(cmd, file, sizeof(file))) {
		fprintf(stderr, "%s: %s: command not found\n", prog, cmd);
		return EXIT_NOT_FOUND;
	}
	switch (exec_check(file, &c, file, sizeof(file), why, sizeof(why))) {
	case EXEC_PRELOADABLE:
		return 0;
	case EXEC_PRIVILEGED:
		if (no_new_privs)
			return 0;
		fprintf(stderr,
			"%s: %s is %s: the dynamic loader ignores "
			"LD_PRELOAD for it (secure-execution mode), so it "
			"would run without secret memory. Not running it; "
			"--no-new-privs runs it without that privilege.\n",
			prog, file, why);
		return EXIT_RUN_FAILED;
	case EXEC_STATIC:
		fprintf(stderr,
			"%s: %s is statically linked: LD_PRELOAD cannot "
			"interpose its allocator, so it would run "
			"without secret memory. Not running it.\n",
			prog, file);
		return EXIT_RUN_FAILED;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "no-new-privs", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	const char *modes = "openssl,sodium", *lib, *old;
	bool verbose = false, no_new_privs = false;
	char *preload, why[128];
	void *probe;
	int c, r;

	/* "+": options stop at COMMAND, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+m:nvh", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			modes = optarg;
			break;
		case 'n':
			no_new_privs = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("secmem-run %s\n", SECMEM_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_RUN_FAILED;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command given\n", prog);
		usage(stderr);
		return EXIT_RUN_FAILED;
	}
	if (!preload_mode_list_parse(modes, why, sizeof(why))) {
		fprintf(stderr, "%s: --mode: mode list '%s': %s: "
			PRELOAD_MODES_HELP "\n", prog, modes, why);
		return EXIT_RUN_FAILED;
	}
	lib = getenv("SECMEM_PRELOAD_LIB");
	if (!lib || !*lib)
		lib = PRELOAD_PATH;
	if (access(lib, R_OK) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, lib, strerror(errno));
		return EXIT_RUN_FAILED;
	}
	r = check_target(argv[optind], no_new_privs);
	if (r)
		return r;
	/* Inherited across exec and irrevocable: the set-id bits and file
	 * capabilities of COMMAND are then ignored, and LD_PRELOAD applies. */
	if (no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "%s: PR_SET_NO_NEW_PRIVS: %s\n", prog, strerror(errno));
		return EXIT_RUN_FAILED;
	}
	/*
	 * One real allocation: it proves the backend and that the memory
	 * lock limit allows an arena, and its error says what to change.
	 */
	probe = secmem_malloc(1);
	if (!probe) {
		fprintf(stderr, "%s: no secret memory for %s: %s\n", prog,
			argv[optind], secmem_strerror(secmem_last_error()));
		return EXIT_RUN_FAILED;
	}
	if (verbose)
		fprintf(stderr, "%s: %s with %s (modes %s), backend %s\n", prog,
			argv[optind], lib, modes,
			secmem_backend_name(secmem_backend()));
	secmem_free(probe);
	old = getenv("LD_PRELOAD");
	if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "",
		     old ? old : "") < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_RUN_FAILED;
	}
	if (setenv("LD_PRELOAD", preload, 1) ||
	    setenv("SECMEM_PRELOAD_MODE", modes, 1) ||
	    (verbose && setenv("SECMEM_PRELOAD_VERBOSE", "1", 1))) {
		fprintf(stderr, "%s: setenv: %s\n", prog, strerror(errno));
		return EXIT_RUN_FAILED;
	}
	execvp(argv[optind], argv + optind);
	r = errno;
	fprintf(stderr, "%s: %s: %s\n", prog, argv[optind], strerror(r));
	return r == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}
