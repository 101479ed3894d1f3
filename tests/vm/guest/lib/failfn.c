// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "failfn.h"
#include "tap.h"

static int failfn_write(const char *rel, const char *val)
{
	char path[256];
	size_t len = strlen(val);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), FAILFN_DIR "/%s", rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n == (ssize_t)len ? 0 : n < 0 ? (int)n : -EIO;
}

int failfn_inject(const char *func, const char *retval)
{
	const char *settings[][2] = {
		{ "probability", "0" },
		{ "inject", func },
		{ NULL, retval },	/* FUNC/retval */
		{ "times", "-1" },
		{ "interval", "1" },
		{ "space", "0" },
		{ "verbose", "0" },
		{ "task-filter", "N" },
		{ "probability", "100" },
	};
	char rel[128];
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const char *name = settings[i][0];

		if (!name) {
			snprintf(rel, sizeof(rel), "%s/retval", func);
			name = rel;
		}
		err = failfn_write(name, settings[i][1]);
		if (err) {
			tap_diag("%s/%s: %s", FAILFN_DIR, name, strerror(-err));
			failfn_stop();
			return -1;
		}
	}
	return 0;
}

void failfn_stop(void)
{
	failfn_write("probability", "0");
	failfn_write("inject", "\n");
}
