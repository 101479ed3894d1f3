// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The instance lock is an flock() on secmemd.lock, mode 0600: the kernel
 * drops it when the holder dies, even by SIGKILL, so a stale file never
 * blocks a restart, and only root can open the file, so only root could
 * hold it.  It is not the pid file, which is 0644: any user could open
 * that and flock(LOCK_SH) it to keep the daemon from starting.
 *
 * Nobody else takes any lock: whether the daemon runs, and its pid, come
 * from /proc/locks, where the kernel lists the lock with its holder's pid,
 * found by the lock file's device and inode (stat() needs no permission on
 * the file).  That is what the kernel says at that instant: no pid file
 * written a moment after the lock, no window in which a starting daemon
 * holds the lock but has not said so yet.
 *
 * secmemd.pid (0644) is for people and scripts, and the fallback when
 * /proc/locks shows no pid (a lock taken in another pid namespace).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "file_replace.h"
#include "runtime.h"

#define LOCK_FILE "secmemd.lock"
#define PID_FILE "secmemd.pid"
#define HISTORY_FILE "decisions"
#define PROC_LOCKS "/proc/locks"

static pid_t parse_pid(const char *buf)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || v <= 0 || (*end && *end != '\n'))
		return -EPROTO;
	return (pid_t)v;
}

static pid_t read_pid_file(const char *dir)
{
	char path[4096], buf[24];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/" PID_FILE, dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return -EPROTO;
	buf[n] = '\0';
	return parse_pid(buf);
}

/*
 * Whether someone holds an flock() on the file @st describes, from
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE 141 00:19:1234 0 EOF"; waiters
 * are listed with "->" and skipped).  Returns 1 with the holder's pid in
 * *@pid (0 if it is in a pid namespace we cannot see), 0 if nobody holds
 * it, or -errno.
 */
static int lock_holder(const struct stat *st, pid_t *pid)
{
	char line[256], type[16], mode[16];
	unsigned int maj, min;
	uintmax_t ino;
	int held = 0;
	FILE *f;
	long p;

	*pid = 0;
	f = fopen(PROC_LOCKS, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "->"))
			continue;
		if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%ju", type, mode,
			   &p, &maj, &min, &ino) != 6)
			continue;
		if (strcmp(type, "FLOCK") || strcmp(mode, "WRITE") ||
		    maj != major(st->st_dev) || min != minor(st->st_dev) ||
		    ino != (uintmax_t)st->st_ino)
			continue;
		*pid = p > 0 ? (pid_t)p : 0;
		held = 1;
		break;
	}
	fclose(f);
	return held;
}

/* The pid of the holder: from /proc/locks, else from the pid file. */
static pid_t holder_pid(const char *dir, const struct stat *st)
{
	pid_t pid;
	int r = lock_holder(st, &pid);

	if (r <= 0)
		return r;
	return pid > 0 ? pid : read_pid_file(dir);
}

/* Readable by every user whatever the umask: secmemctl status. */
static int write_pid_file(const char *dir)
{
	char path[4096], pid[24];
	int n;

	snprintf(path, sizeof(path), "%s/" PID_FILE, dir);
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	return file_replace(path, pid, (size_t)n, 0644);
}

int runtime_lock(const char *dir, pid_t *holder)
{
	char path[4096];
	struct stat st;
	int fd, r;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/" LOCK_FILE, dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		  0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	/* A file someone else made could be held open by them. */
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		r = -EPERM;
		goto fail;
	}
	if ((st.st_mode & 077) && fchmod(fd, 0600) < 0) {
		r = -errno;
		goto fail;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (r == -EBUSY)
			*holder = holder_pid(dir, &st);
		goto fail;
	}
	r = write_pid_file(dir);
	if (r)
		goto fail;
	return fd;
fail:
	close(fd);
	return r;
}

pid_t runtime_daemon_pid(const char *dir)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/" LOCK_FILE, dir);
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	return holder_pid(dir, &st);
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
	char path[4096], text[RUNTIME_HISTORY * (24 + sizeof(h->e[0].reason))];
	size_t off = 0;
	unsigned int i;

	snprintf(path, sizeof(path), "%s/" HISTORY_FILE, dir);
	for (i = 0; i < h->count; i++) {
		unsigned int k = (h->head + RUNTIME_HISTORY - h->count + i) %
				 RUNTIME_HISTORY;

		off += (size_t)snprintf(text + off, sizeof(text) - off,
					"%lld\t%s\n", (long long)h->e[k].when,
					h->e[k].reason);
	}
	/* Replaced whole, so that secmemctl never reads a half-written list. */
	return file_replace(path, text, off, 0644);
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
