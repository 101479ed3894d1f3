// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one way secmemd and secmemctl write a file that others read: see
 * file_replace.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_replace.h"

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int file_replace(const char *path, const void *data, size_t len, mode_t mode)
{
	const char *base = strrchr(path, '/');
	char tmp[PATH_MAX];
	int fd, r;

	base = base ? base + 1 : path;
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp", (int)(base - path), path,
		     base) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  mode);
	if (fd < 0)
		return -errno;
	r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (!r)
		r = write_all(fd, data, len);
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}
