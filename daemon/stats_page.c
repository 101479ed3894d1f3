// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The preload's page is found in /proc/PID/maps by its memfd's name and
 * read with pread(): a copy is consistent when its sequence count is even
 * and unchanged after the copy (the writer makes it odd while it writes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats_page.h"

/* One consistent copy of the page at @off in @fd (seq even, unchanged). */
static int read_page(int fd, off_t off, long pid, struct secmem_stats_export *s,
		     char *why, size_t len)
{
	uint32_t seq;
	int i;

	for (i = 0; i < 100; i++) {
		ssize_t n = pread(fd, s, sizeof(*s), off);

		if (n != (ssize_t)sizeof(*s))
			return n < 0 ? -errno : -EIO;
		seq = s->seq;
		if (seq & 1)
			continue;
		if (pread(fd, &seq, sizeof(seq),
			  off + (off_t)offsetof(struct secmem_stats_export, seq)) !=
		    (ssize_t)sizeof(seq))
			return -EIO;
		if (seq == s->seq)
			break;
	}
	if (i == 100) {
		snprintf(why, len, "statistics changing too fast to read");
		return -EAGAIN;
	}
	if (memcmp(s->magic, SECMEM_STATS_MAGIC, sizeof(s->magic)) ||
	    s->version != SECMEM_STATS_VERSION || s->size < sizeof(*s)) {
		snprintf(why, len, "statistics page of another format");
		return -EPROTO;
	}
	if (s->pid != pid) {
		snprintf(why, len, "statistics page of pid %ld", (long)s->pid);
		return -ESRCH;
	}
	s->backend_name[sizeof(s->backend_name) - 1] = '\0';
	return 0;
}

void stats_page_read(const char *proc, struct proc_stats *p)
{
	char path[PATH_MAX], line[512], range[64] = "";
	unsigned long long start = 0;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/%ld/maps", proc, p->pid);
	f = fopen(path, "re");
	if (!f) {
		p->r = -errno;
		snprintf(p->why, sizeof(p->why), "%s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/memfd:" SECMEM_STATS_NAME " (deleted)"))
			continue;
		snprintf(range, sizeof(range), "%.*s", (int)strcspn(line, " "),
			 line);
		start = strtoull(range, NULL, 16);
		break;
	}
	fclose(f);
	if (!*range) {
		p->r = -ENOENT;
		snprintf(p->why, sizeof(p->why), "no statistics (not preloaded, or no allocation yet)");
		return;
	}
	/* map_files needs CAP_SYS_ADMIN; /proc/PID/mem ptrace access. */
	snprintf(path, sizeof(path), "%s/%ld/map_files/%s", proc, p->pid,
		 range);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		p->r = read_page(fd, 0, p->pid, &p->s, p->why, sizeof(p->why));
	} else {
		snprintf(path, sizeof(path), "%s/%ld/mem", proc, p->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			p->r = -errno;
			snprintf(p->why, sizeof(p->why), "/proc/%ld/mem: %s",
				 p->pid, strerror(errno));
			return;
		}
		p->r = read_page(fd, (off_t)start, p->pid, &p->s, p->why,
				 sizeof(p->why));
	}
	if (p->r && !*p->why)
		snprintf(p->why, sizeof(p->why), "%s", strerror(-p->r));
	close(fd);
}
