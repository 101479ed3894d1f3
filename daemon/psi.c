// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PSI, see Documentation/accounting/psi.rst.  The trigger is the event
 * source (no polling of averages while memory is plentiful); the averages
 * say whether pressure is still there when the calm tick comes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "psi.h"

int psi_trigger_open(const char *path, const struct psi_trigger *t)
{
	struct statfs sfs;
	char spec[64];
	int fd, n;

	n = snprintf(spec, sizeof(spec), "%s %" PRIu32 " %" PRIu32,
		     t->kind == PSI_FULL ? "full" : "some", t->stall_us,
		     t->window_us);
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Triggers exist only in procfs; a test's plain file has none. */
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC) {
		close(fd);
		return -EOPNOTSUPP;
	}
	/* The kernel takes the terminating NUL as part of the write. */
	if (write(fd, spec, (size_t)n + 1) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* "avg10=12.34" -> 1234; the kernel prints exactly two decimals. */
static int parse_line(const char *line, const char *kind, unsigned int *out)
{
	unsigned int whole, frac;
	char tail;
	size_t klen = strlen(kind);

	if (strncmp(line, kind, klen) || line[klen] != ' ')
		return -EPROTO;
	if (sscanf(line + klen, " avg10=%u.%2u%c", &whole, &frac, &tail) != 3 ||
	    tail != ' ' || whole > 100)
		return -EPROTO;
	*out = whole * 100 + frac;
	return 0;
}

int psi_parse(const char *text, unsigned int *some, unsigned int *full)
{
	const char *nl = strchr(text, '\n');

	if (parse_line(text, "some", some))
		return -EPROTO;
	/* Kernels before 5.13 have no "full" line for the system as a whole. */
	*full = 0;
	if (nl && nl[1] && parse_line(nl + 1, "full", full))
		return -EPROTO;
	return 0;
}

int psi_read(const char *path, unsigned int *some, unsigned int *full)
{
	char buf[256];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return psi_parse(buf, some, full);
}
