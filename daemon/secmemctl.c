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
#include "runtime.h"
#include "sysfs.h"
#include "units.h"

#define EXIT_USAGE 2
#define EXIT_NO_FEATURE 3

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: secmemctl [OPTIONS] status [--json]\n"
		"       secmemctl [OPTIONS] set KEY VALUE [--node N]\n"
		"\n"
		"KEY is pool_target, watermark_low, watermark_high (sizes such as 64M;\n"
		"every node unless --node) or flush_on_free (immediate or deferred).\n"
		"\n"
		"Options:\n"
		"  --sysfs-root DIR   sysfs mount point (default " SYSFS_ROOT_DEFAULT ")\n"
		"  --runtime-dir DIR  secmemd's runtime directory (default " RUNTIME_DIR_DEFAULT ")\n"
		"  -h, --help         this text\n");
}

static int exit_status(int r)
{
	return r == -ENOENT ? EXIT_NO_FEATURE : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysfs-root", required_argument, NULL, 'S' },
		{ "runtime-dir", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "node", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *sysfs = SYSFS_ROOT_DEFAULT, *rundir = RUNTIME_DIR_DEFAULT;
	bool json = false;
	int node = -1, c, r;
	char err[512];
	uint64_t v;

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

	if (argc == 1 && !strcmp(argv[0], "status") && node < 0) {
		r = ctl_status(stdout, sysfs, rundir, json, err, sizeof(err));
	} else if (argc == 3 && !strcmp(argv[0], "set") && !json) {
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
	if (fflush(stdout)) {
		perror("secmemctl: stdout");
		return 1;
	}
	return 0;
}
