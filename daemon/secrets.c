// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Who holds secret files (secrets.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "json.h"
#include "secrets.h"
#include "units.h"

#ifndef SECRETMEM_MAGIC
#define SECRETMEM_MAGIC 0x5345434d	/* "SECM", linux/magic.h since 5.14 */
#endif

/* The files of one process seen so far: (dev, ino) pairs. */
struct file_set {
	struct {
		dev_t dev;
		ino_t ino;
	} *f;
	size_t nr, cap;
};

/* Add (dev, ino) unless there; 1 if added, 0 if there, -ENOMEM. */
static int file_set_add(struct file_set *set, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < set->nr; i++)
		if (set->f[i].dev == dev && set->f[i].ino == ino)
			return 0;
	if (set->nr == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 8;
		void *p = realloc(set->f, cap * sizeof(*set->f));

		if (!p)
			return -ENOMEM;
		set->f = p;
		set->cap = cap;
	}
	set->f[set->nr].dev = dev;
	set->f[set->nr].ino = ino;
	set->nr++;
	return 1;
}

/*
 * Only what the link's text allows to be a secret file is looked at any
 * further: a memfd_secret() file reads "/secretmem (deleted)", an
 * MFD_UNMAPPED memfd "/memfd:NAME (deleted)". statfs() of anything else
 * could block, on a FUSE file whose server hangs for one. A link into
 * /proc (another process's fd, as a fake /proc in the tests has) is
 * followed, a few levels at most; nothing outside /proc is. Returns 1
 * (maybe), 0 (no) or -EPERM/-EACCES (the link may not be read).
 */
static int maybe_secret(int dir, const char *name)
{
	char link[PATH_MAX], next[PATH_MAX];
	ssize_t n = readlinkat(dir, name, link, sizeof(link) - 1);
	int depth;

	/* A link we may not read: the caller reports what stays hidden. */
	if (n < 0 && (errno == EPERM || errno == EACCES))
		return -errno;
	for (depth = 0; n > 0 && depth < 4; depth++) {
		link[n] = '\0';
		if (!strncmp(link, "/secretmem", strlen("/secretmem")) ||
		    !strncmp(link, "/memfd:", strlen("/memfd:")))
			return 1;
		if (strncmp(link, "/proc/", strlen("/proc/")))
			return 0;
		memcpy(next, link, (size_t)n + 1);
		n = readlink(next, link, sizeof(link) - 1);
	}
	return 0;
}

/*
 * Look at every entry of @dir (a process's fd/ or map_files/): each
 * names a file through a magic link, which statfs() and stat() follow.
 * Returns 0, or -EACCES when the directory may not be read.
 */
static int scan_links(int dir, struct file_set *set, struct secret_holder *h)
{
	DIR *d = fdopendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		int r = -errno;

		close(dir);
		return r;
	}
	for (;;) {
		struct statfs sfs;
		struct stat st;
		int fd, r;

		/*
		 * map_files/ opens for anyone but refuses its listing without
		 * CAP_SYS_ADMIN: readdir() fails with EPERM, which the caller
		 * must hear.
		 */
		errno = 0;
		e = readdir(d);
		if (!e) {
			if (errno)
				ret = -errno;
			break;
		}
		if (e->d_name[0] == '.')
			continue;
		r = maybe_secret(dirfd(d), e->d_name);
		if (r < 0)
			ret = r;
		if (r <= 0)
			continue;
		/*
		 * openat(O_PATH) through the magic link gives the file itself,
		 * without opening it for I/O (a secret file may be opened
		 * again, but nothing here needs to).
		 */
		fd = openat(dirfd(d), e->d_name, O_PATH | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstatfs(fd, &sfs) == 0 && sfs.f_type == SECRETMEM_MAGIC &&
		    fstat(fd, &st) == 0) {
			r = file_set_add(set, st.st_dev, st.st_ino);
			if (r > 0) {
				h->files++;
				h->bytes += st.st_size > 0 ? (uint64_t)st.st_size : 0;
			}
		}
		close(fd);
	}
	closedir(d);
	return ret;
}

static int holder_add(struct secret_scan *s, const struct secret_holder *h,
		      size_t *cap)
{
	if (s->nr == *cap) {
		size_t n = *cap ? 2 * *cap : 16;
		void *p = realloc(s->holder, n * sizeof(*s->holder));

		if (!p)
			return -ENOMEM;
		s->holder = p;
		*cap = n;
	}
	s->holder[s->nr++] = *h;
	return 0;
}

static void read_comm(int piddir, char *comm, size_t len)
{
	int fd = openat(piddir, "comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = read(fd, comm, len - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(comm, len, "?");
		return;
	}
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = ((const struct secret_holder *)a)->pid;
	pid_t y = ((const struct secret_holder *)b)->pid;

	return (x > y) - (x < y);
}

int secret_scan(const char *proc, struct secret_scan *s)
{
	struct file_set set = { 0 };
	size_t cap = 0;
	struct dirent *e;
	DIR *d;
	int r = 0;

	memset(s, 0, sizeof(*s));
	d = opendir(proc);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct secret_holder h = { 0 };
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		int piddir, fdd, mfd, r1, r2;

		if (*end || pid <= 0)
			continue;
		piddir = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (piddir < 0)
			continue;
		h.pid = (pid_t)pid;
		set.nr = 0;
		fdd = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r1 = fdd < 0 ? -errno : scan_links(fdd, &set, &h);
		mfd = openat(piddir, "map_files", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r2 = mfd < 0 ? -errno : scan_links(mfd, &set, &h);
		/*
		 * map_files/ needs CAP_SYS_ADMIN, and a process of another
		 * user hides fd/: count what we could not look into.
		 */
		if (r1 == -EACCES || r1 == -EPERM)
			s->unreadable++;
		if (r2 == -EACCES || r2 == -EPERM)
			s->maps_hidden = true;
		if (h.files) {
			read_comm(piddir, h.comm, sizeof(h.comm));
			r = holder_add(s, &h, &cap);
		}
		close(piddir);
		if (r)
			break;
	}
	closedir(d);
	free(set.f);
	if (r) {
		secret_scan_free(s);
		return r;
	}
	if (s->nr)
		qsort(s->holder, s->nr, sizeof(*s->holder), cmp_pid);
	return 0;
}

void secret_scan_free(struct secret_scan *s)
{
	free(s->holder);
	memset(s, 0, sizeof(*s));
}

/* One number from a file; -1 when absent or not a number. */
static long long read_number(const char *path)
{
	char buf[64], *end;
	long long v;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || v < 0)
		return -1;
	return v;
}

void secret_kernel_read(const char *sysfs, const char *proc,
			struct secret_kernel *k)
{
	char path[512], line[256];
	FILE *f;

	k->open_files = k->secretmem = k->unmapped = k->unmapped_free = -1;
	k->hibernation = -1;
	snprintf(path, sizeof(path), "%s/kernel/mm/unmapped/secret_files", sysfs);
	k->open_files = read_number(path);

	snprintf(path, sizeof(path), "%s/meminfo", proc);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		static const struct {
			const char *key;
			size_t off;
		} keys[] = {
			{ "SecretMem:", offsetof(struct secret_kernel, secretmem) },
			{ "Unmapped:", offsetof(struct secret_kernel, unmapped) },
			{ "UnmappedFree:", offsetof(struct secret_kernel, unmapped_free) },
		};
		size_t i;

		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n = strlen(keys[i].key);
			unsigned long long kb;

			if (strncmp(line, keys[i].key, n) ||
			    sscanf(line + n, "%llu kB", &kb) != 1)
				continue;
			*(long long *)((char *)k + keys[i].off) = (long long)kb * 1024;
		}
	}
	if (f)
		fclose(f);

	/*
	 * /sys/power/disk reads "[disabled]" when hibernation_available()
	 * is false, which an open secret file makes it; absent, the kernel
	 * cannot hibernate at all.
	 */
	snprintf(path, sizeof(path), "%s/power/disk", sysfs);
	f = fopen(path, "re");
	if (f) {
		k->hibernation = fgets(line, sizeof(line), f) &&
				 !strstr(line, "[disabled]");
		fclose(f);
	}
}

static void print_size_or_unknown(FILE *out, const char *name, long long v)
{
	char b[SIZE_STR_MAX];

	if (v >= 0)
		fprintf(out, "  %-13s %s\n", name, format_size((uint64_t)v, b, sizeof(b)));
}

static void json_number_or_null(FILE *out, const char *name, long long v)
{
	if (v >= 0)
		fprintf(out, "\"%s\":%lld", name, v);
	else
		fprintf(out, "\"%s\":null", name);
}

static void print_holders(FILE *out, const struct secret_scan *s,
			  const char *indent)
{
	char b[SIZE_STR_MAX];
	size_t i;

	for (i = 0; i < s->nr; i++)
		fprintf(out, "%s%-8ld %-16s %6u %10s\n", indent,
			(long)s->holder[i].pid, s->holder[i].comm,
			s->holder[i].files,
			format_size(s->holder[i].bytes, b, sizeof(b)));
}

void secret_print_holders(FILE *out, const struct secret_scan *s)
{
	print_holders(out, s, "");
}

void secret_print(FILE *out, const struct secret_kernel *k,
		  const struct secret_scan *s, bool json)
{
	unsigned int files = 0;
	size_t i;

	for (i = 0; i < s->nr; i++)
		files += s->holder[i].files;
	if (json) {
		json_number_or_null(out, "secret_files", k->open_files);
		fprintf(out, ",\"meminfo\":{");
		json_number_or_null(out, "SecretMem", k->secretmem);
		fputc(',', out);
		json_number_or_null(out, "Unmapped", k->unmapped);
		fputc(',', out);
		json_number_or_null(out, "UnmappedFree", k->unmapped_free);
		fprintf(out, "},\"hibernation\":%s,\"holders\":[",
			k->hibernation < 0 ? "null" : k->hibernation ? "true" : "false");
		for (i = 0; i < s->nr; i++) {
			const struct secret_holder *h = &s->holder[i];

			fprintf(out, "%s{\"pid\":%ld,\"comm\":", i ? "," : "", (long)h->pid);
			json_string(out, h->comm);
			fprintf(out, ",\"files\":%u,\"bytes\":%" PRIu64 "}", h->files, h->bytes);
		}
		fprintf(out, "],\"unreadable_processes\":%u,\"mappings_seen\":%s",
			s->unreadable, s->maps_hidden ? "false" : "true");
		return;
	}

	fprintf(out, "secret files (memfd_secret, MFD_UNMAPPED): ");
	if (k->open_files >= 0)
		fprintf(out, "%lld open", k->open_files);
	else
		fprintf(out, "%u seen in %zu processes", files, s->nr);
	if (k->hibernation == 0)
		fprintf(out, "; hibernation refused%s\n",
			(k->open_files > 0 || (k->open_files < 0 && files)) ?
				" while any is open" : "");
	else if (k->hibernation > 0)
		fprintf(out, "; hibernation available\n");
	else
		fprintf(out, "; this kernel cannot hibernate\n");
	print_size_or_unknown(out, "SecretMem", k->secretmem);
	print_size_or_unknown(out, "Unmapped", k->unmapped);
	print_size_or_unknown(out, "UnmappedFree", k->unmapped_free);
	if (s->nr) {
		fprintf(out, "  %-8s %-16s %6s %10s\n", "PID", "COMM", "FILES", "BYTES");
		print_holders(out, s, "  ");
	} else {
		fprintf(out, "  no process holds one\n");
	}
	if (s->unreadable)
		fprintf(out, "  (%u processes could not be inspected: their descriptors need root, with CAP_SYS_PTRACE)\n",
			s->unreadable);
	if (s->maps_hidden)
		fprintf(out, "  (some mappings could not be read: files only mapped, their descriptors closed, need CAP_SYS_ADMIN)\n");
}
