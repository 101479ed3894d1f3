// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading and writing the drop-ins of secmemctl protect.  A drop-in is
 * replaced (file_replace.h), so systemd never reads half of one.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dropin.h"
#include "file_replace.h"
#include "systemctl.h"

void dropin_paths(const char *unit_dir, const char *unit, char *dir, char *file,
		  char *legacy, size_t len)
{
	snprintf(dir, len, "%s/%s.d", unit_dir, unit);
	snprintf(file, len, "%s/%s.d/" DROPIN_NAME, unit_dir, unit);
	snprintf(legacy, len, "%s/%s.d/" DROPIN_LEGACY_NAME, unit_dir, unit);
}

ssize_t dropin_read(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1 &&
	       (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

bool dropin_is_ours(const char *text)
{
	return !strncmp(text, DROPIN_MARKER, strlen(DROPIN_MARKER));
}

ssize_t dropin_read_ours(const char *path, char *buf, size_t len)
{
	ssize_t n = dropin_read(path, buf, len);

	return n >= 0 && !dropin_is_ours(buf) ? -ENOENT : n;
}

int dropin_find(const char *unit_dir, const char *unit, char *file,
		size_t filelen, char *text, size_t textlen)
{
	static const char *const names[] = { DROPIN_NAME, DROPIN_LEGACY_NAME };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(file, filelen, "%s/%s.d/%s", unit_dir, unit, names[i]);
		if (dropin_read_ours(file, text, textlen) >= 0)
			return 0;
	}
	return -ENOENT;
}

bool dropin_value(const char *text, const char *key, char *v, size_t len)
{
	size_t k = strlen(key);
	const char *p = text;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, k)) {
			snprintf(v, len, "%.*s", (int)strcspn(p + k, "\n"), p + k);
			return true;
		}
	}
	return false;
}

int dropin_write(const char *dir, const char *path, const char *text, char *err,
		 size_t len)
{
	int r;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, len, "creating %s: %s", dir, strerror(-r));
		return r;
	}
	r = file_replace(path, text, strlen(text), 0644);
	if (r)
		snprintf(err, len, "writing %s: %s", path, strerror(-r));
	return r;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int dropin_list_units(const char *unit_dir, char **names, int max, int *count)
{
	struct dirent *d;
	DIR *dh;

	*count = 0;
	dh = opendir(unit_dir);
	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dh)) && *count < max) {
		char unit[NAME_MAX + 1], path[PATH_MAX], text[256];
		size_t n = strlen(d->d_name);

		if (n < 10 || !name_has_suffix(d->d_name, ".service.d"))
			continue;
		snprintf(unit, sizeof(unit), "%.*s", (int)(n - 2), d->d_name);
		if (dropin_find(unit_dir, unit, path, sizeof(path), text,
				sizeof(text)))
			continue;
		names[*count] = strdup(unit);
		if (names[*count])
			(*count)++;
	}
	closedir(dh);
	qsort(names, (size_t)*count, sizeof(*names), cmp_names);
	return 0;
}
