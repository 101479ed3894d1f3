// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmemctl: look at and adjust the unmapped pools.  See secmemctl(8).
 *
 * Exit status: 0 success, 1 failure, 2 usage error, 3 the kernel lacks
 * the feature (the same as secmemd).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ctl.h"
#include "protect.h"
#include "runtime.h"
#include "sysfs.h"
#include "units.h"

#define EXIT_USAGE 2
#define EXIT_NO_FEATURE 3

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: secmemctl [OPTIONS] status [--json] [--units]\n"
		"       secmemctl [OPTIONS] secrets [--json]\n"
		"       secmemctl [OPTIONS] set KEY VALUE [--node N]\n"
		"       secmemctl [OPTIONS] protect UNIT [--mode MODES] [--memlock SIZE] [--no-new-privs]\n"
		"       secmemctl [OPTIONS] unprotect UNIT\n"
		"\n"
		"KEY is pool_target, watermark_low, watermark_high (sizes such as 64M;\n"
		"every node unless --node), flush_on_free (immediate or deferred) or\n"
		"hibernation (refuse or wipe: what hibernation does to secret files).\n"
		"protect runs a service with libsecmem-preload (a systemd drop-in);\n"
		"MODES: openssl, sodium, heap, comma-separated (default openssl,sodium).\n"
		"status --units: only the protected units (no pools needed).\n"
		"secrets: the open secret files, who holds them and whether the\n"
		"kernel would hibernate (no pools needed; run as root to see all).\n"
		"\n"
		"Options:\n"
		"  --sysfs-root DIR   sysfs mount point (default " SYSFS_ROOT_DEFAULT ")\n"
		"  --runtime-dir DIR  secmemd's runtime directory (default " RUNTIME_DIR_DEFAULT ")\n"
		"  --unit-dir DIR     where drop-ins go (default " PROTECT_UNIT_DIR ")\n"
		"  --config FILE      secmem.conf, for pool_max (default " PROTECT_CONFIG ")\n"
		"  --proc-root DIR    procfs mount point (default " PROTECT_PROC ")\n"
		"  --cgroup-root DIR  cgroup2 mount point (default " PROTECT_CGROUP ")\n"
		"  -h, --help         this text\n");
}

static int exit_status(int r)
{
	return r == -ENOENT ? EXIT_NO_FEATURE : 1;
}

/* protect/unprotect: only a missing backend is the kernel's lack. */
static int protect_exit_status(int r)
{
	return r == -ENOTSUP ? EXIT_NO_FEATURE : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'S' },
		{ "runtime-dir", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "node", required_argument, NULL, 'n' },
		{ "units", no_argument, NULL, 'u' },
		{ "mode", required_argument, NULL, 'm' },
		{ "memlock", required_argument, NULL, 'l' },
		{ "no-new-privs", no_argument, NULL, 'N' },
		{ "unit-dir", required_argument, NULL, 'U' },
		{ "config", required_argument, NULL, 'C' },
		{ "proc-root", required_argument, NULL, 'P' },
		{ "cgroup-root", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *sysfs = SYSFS_ROOT_DEFAULT, *rundir = RUNTIME_DIR_DEFAULT;
	struct protect_opts po = { .mode = NULL };
	bool json = false, units_only = false, pflags = false;
	struct protect_env env;
	int node = -1, c, r;
	char err[1024];
	uint64_t v;

	protect_env_default(&env);

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			sysfs = optarg;
			break;
		case 'R':
			rundir = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'n':
			if (parse_uint(optarg, CONFIG_MAX_NODES - 1, &v)) {
				fprintf(stderr,
					"secmemctl: --node: '%s' is not a node number in [0, %d]\n",
					optarg, CONFIG_MAX_NODES - 1);
				return EXIT_USAGE;
			}
			node = (int)v;
			break;
		case 'u':
			units_only = true;
			break;
		case 'm':
			if (!protect_valid_modes(optarg)) {
				fprintf(stderr,
					"secmemctl: --mode %s: modes are openssl, sodium and heap, comma-separated\n",
					optarg);
				return EXIT_USAGE;
			}
			po.mode = optarg;
			pflags = true;
			break;
		case 'l':
			if (parse_size(optarg, &v) || v > CONFIG_SIZE_MAX) {
				fprintf(stderr,
					"secmemctl: --memlock: '%s' is not a size in [1M, 1T] (e.g. 64M)\n",
					optarg);
				return EXIT_USAGE;
			}
			po.memlock = v ? v : 1;	/* 0: refused as too low */
			pflags = true;
			break;
		case 'N':
			po.no_new_privs = true;
			pflags = true;
			break;
		case 'U':
			env.unit_dir = optarg;
			break;
		case 'C':
			env.config = optarg;
			break;
		case 'P':
			env.proc = optarg;
			break;
		case 'G':
			env.cgroup = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;

	if (argc == 2 && !strcmp(argv[0], "protect") && !json && node < 0 &&
	    !units_only) {
		if (!po.mode)
			po.mode = "openssl,sodium";
		r = ctl_protect(stdout, &env, argv[1], &po, err, sizeof(err));
		goto done_protect;
	} else if (argc == 2 && !strcmp(argv[0], "unprotect") && !json &&
		   node < 0 && !units_only && !pflags) {
		r = ctl_unprotect(stdout, &env, argv[1], err, sizeof(err));
		goto done_protect;
	} else if (argc == 1 && !strcmp(argv[0], "status") && node < 0 &&
		   units_only && !pflags) {
		r = ctl_units(stdout, &env, json, err, sizeof(err));
		if (!r && json)
			putchar('\n');
	} else if (argc == 1 && !strcmp(argv[0], "status") && node < 0 &&
		   !pflags) {
		r = ctl_status(stdout, sysfs, env.proc, rundir, json, &env, err,
			       sizeof(err));
	} else if (argc == 1 && !strcmp(argv[0], "secrets") && node < 0 &&
		   !units_only && !pflags) {
		r = ctl_secrets(stdout, sysfs, env.proc, json, err, sizeof(err));
	} else if (argc == 3 && !strcmp(argv[0], "set") && !json &&
		   !units_only && !pflags) {
		r = ctl_set(sysfs, rundir, argv[1], argv[2], node, err,
			    sizeof(err));
	} else {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (r) {
		fprintf(stderr, "secmemctl: %s\n", err);
		return exit_status(r);
	}
	goto flush;
done_protect:
	if (r) {
		fflush(stdout);
		fprintf(stderr, "secmemctl: %s\n", err);
		return protect_exit_status(r);
	}
flush:
	if (fflush(stdout)) {
		perror("secmemctl: stdout");
		return 1;
	}
	return 0;
}
