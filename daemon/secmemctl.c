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
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ctl.h"
#include "json.h"
#include "mode_list.h"
#include "protect.h"
#include "runtime.h"
#include "sysfs.h"
#include "units.h"

#define EXIT_USAGE 2
#define EXIT_NO_FEATURE 3

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: secmemctl [OPTIONS] status [--json[=MODE]] [--units [--no-legend]]\n"
		"       secmemctl [OPTIONS] secrets [--json[=MODE]] [--no-legend]\n"
		"       secmemctl [OPTIONS] set KEY VALUE [--node N]\n"
		"       secmemctl [OPTIONS] protect UNIT [--mode MODES] [--memlock SIZE] [--no-new-privs]\n"
		"       secmemctl [OPTIONS] unprotect UNIT\n"
		"\n"
		"KEY is pool_target, watermark_low, watermark_high (sizes such as 64M;\n"
		"every node unless --node), flush_on_free (immediate or deferred) or\n"
		"hibernation (refuse or wipe: what hibernation does to secret files).\n"
		"protect runs a service with libsecmem-preload (a systemd drop-in);\n"
		"MODES: openssl, sodium, gcrypt, heap, comma-separated (default openssl,sodium).\n"
		"status --units: only the protected units (no pools needed).\n"
		"secrets: the open secret files, who holds them and whether the\n"
		"kernel would hibernate (no pools needed; run as root to see all).\n"
		"--json=MODE: short (one line, also a bare --json), pretty or off.\n"
		"--no-legend: the rows of a listing without its header and hints.\n"
		"\n"
		"Options:\n"
		"  --sysfs-root DIR   sysfs mount point (default " SYSFS_ROOT_DEFAULT ")\n"
		"  --runtime-dir DIR  secmemd's runtime directory (default " RUNTIME_DIR_DEFAULT ")\n"
		"  --unit-dir DIR     where drop-ins go (default " PROTECT_UNIT_DIR ")\n"
		"  --config FILE      secmem.conf, for pool_max (default " PROTECT_CONFIG ")\n"
		"  --proc-root DIR    procfs mount point (default " PROTECT_PROC ")\n"
		"  --cgroup-root DIR  cgroup2 mount point (default " PROTECT_CGROUP ")\n"
		"  -h, --help         this text\n"
		"      --version      print the version and exit\n");
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
		{ "json", optional_argument, NULL, 'j' },
		{ "no-legend", no_argument, NULL, 'L' },
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
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *sysfs = SYSFS_ROOT_DEFAULT, *rundir = RUNTIME_DIR_DEFAULT;
	struct protect_opts po = { .mode = NULL };
	bool units_only = false, pflags = false, legend = true, json, listing;
	enum json_mode jmode = JSON_OFF;
	struct protect_env env;
	int node = -1, c, r;
	char err[1024], *buf = NULL;
	size_t buflen = 0;
	FILE *out = stdout;
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
			if (json_mode_parse(optarg, &jmode)) {
				fprintf(stderr,
					"secmemctl: --json=%s: one of short, pretty, off\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L':
			legend = false;
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
			/* The preload's parser, and its reason for a refusal. */
			if (!preload_mode_list_parse(optarg, err, sizeof(err))) {
				fprintf(stderr,
					"secmemctl: --mode '%s': %s: " PRELOAD_MODES_HELP "\n",
					optarg, err);
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
		case 'V':
			printf("secmemctl %s\n", SECMEM_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	json = jmode != JSON_OFF;
	/* status (a report: no --no-legend), status --units and secrets. */
	listing = argc == 1 && node < 0 && !pflags &&
		  ((!strcmp(argv[0], "status") && (units_only || legend)) ||
		   (!strcmp(argv[0], "secrets") && !units_only));

	if (argc == 2 && !strcmp(argv[0], "protect") && !json && node < 0 &&
	    !units_only && legend) {
		if (!po.mode)
			po.mode = "openssl,sodium";
		r = ctl_protect(stdout, &env, argv[1], &po, err, sizeof(err));
		goto done_protect;
	} else if (argc == 2 && !strcmp(argv[0], "unprotect") && !json &&
		   node < 0 && !units_only && !pflags && legend) {
		r = ctl_unprotect(stdout, &env, argv[1], err, sizeof(err));
		goto done_protect;
	} else if (argc == 3 && !strcmp(argv[0], "set") && !json &&
		   !units_only && !pflags && legend) {
		/* Before sysfs: a mistyped key is a usage error anywhere. */
		if (!ctl_set_key_known(argv[1], err, sizeof(err))) {
			fprintf(stderr, "secmemctl: set: %s\n", err);
			return EXIT_USAGE;
		}
		r = ctl_set(sysfs, rundir, argv[1], argv[2], node, err,
			    sizeof(err));
		goto done;
	} else if (argc == 1 && !strcmp(argv[0], "status") && !units_only &&
		   !legend) {
		fprintf(stderr,
			"secmemctl: status is a report, not a listing: --no-legend is for status --units and secrets\n");
		return EXIT_USAGE;
	} else if (!listing) {
		usage(stderr);
		return EXIT_USAGE;
	}

	/* The listings; pretty JSON is the compact text, re-indented. */
	if (jmode == JSON_PRETTY) {
		out = open_memstream(&buf, &buflen);
		if (!out) {
			perror("secmemctl");
			return 1;
		}
	}
	if (!strcmp(argv[0], "secrets")) {
		r = ctl_secrets(out, sysfs, env.proc, json, legend, err,
				sizeof(err));
	} else if (units_only) {
		r = ctl_units(out, &env, json, legend, err, sizeof(err));
		if (!r && json)
			fputc('\n', out);
	} else {
		r = ctl_status(out, sysfs, env.proc, rundir, json, &env, err,
			       sizeof(err));
	}
	if (out != stdout) {
		if (fclose(out) && !r) {
			r = -errno;
			snprintf(err, sizeof(err), "%s", strerror(-r));
		}
		if (!r)
			json_pretty(stdout, buf);
		free(buf);
	}
done:
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
