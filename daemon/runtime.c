// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The lock is an flock() on the pid file: the kernel drops it when the
 * holder dies, even by SIGKILL, so a stale pid file never blocks a
 * restart and no "is that pid still alive" guessing is needed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

#define PID_FILE "secmemd.pid"
#define HISTORY_FILE "decisions"

static pid_t read_pid(int fd)
{
	char buf[24];
	ssize_t n;
	long v;
	char *end;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -EPROTO;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || v <= 0 || (*end && *end != '\n'))
		return -EPROTO;
	return (pid_t)v;
}

int runtime_lock(const char *dir, pid_t *holder)
{
	char path[4096], pid[24];
	int fd, n;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/" PID_FILE, dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EBUSY : -errno;

		*holder = read_pid(fd);
		close(fd);
		return r;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

pid_t runtime_daemon_pid(const char *dir)
{
	char path[4096];
	pid_t pid;
	int fd;

	snprintf(path, sizeof(path), "%s/" PID_FILE, dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* If we can lock it, nobody holds it: the file is stale. */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		close(fd);
		return 0;
	}
	pid = errno == EWOULDBLOCK ? read_pid(fd) : -errno;
	close(fd);
	return pid;
}

void history_add(struct history *h, time_t when, const char *reason)
{
	h->e[h->head].when = when;
	snprintf(h->e[h->head].reason, sizeof(h->e[0].reason), "%s", reason);
	h->head = (h->head + 1) % RUNTIME_HISTORY;
	if (h->count < RUNTIME_HISTORY)
		h->count++;
}

int runtime_write_history(const char *dir, const struct history *h)
{
	char path[4096], tmp[4096];
	unsigned int i;
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "%s/" HISTORY_FILE, dir);
	snprintf(tmp, sizeof(tmp), "%s/." HISTORY_FILE ".tmp", dir);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	for (i = 0; i < h->count; i++) {
		unsigned int k = (h->head + RUNTIME_HISTORY - h->count + i) %
				 RUNTIME_HISTORY;

		fprintf(f, "%lld\t%s\n", (long long)h->e[k].when,
			h->e[k].reason);
	}
	if (ferror(f))
		r = -EIO;
	if (fclose(f) && !r)
		r = -errno;
	/* rename() so that secmemctl never reads a half-written list. */
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

int runtime_read_history(const char *dir, struct history *h)
{
	char path[4096], line[256];
	FILE *f;

	memset(h, 0, sizeof(*h));
	snprintf(path, sizeof(path), "%s/" HISTORY_FILE, dir);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		char *nl = strchr(line, '\n');

		if (!tab)
			continue;
		if (nl)
			*nl = '\0';
		history_add(h, (time_t)strtoll(line, NULL, 10), tab + 1);
	}
	fclose(f);
	return 0;
}
