// SPDX-License-Identifier: GPL-2.0-or-later
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_sysfs.h"
#include "sysfs.h"

static void mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(tmp, 0755);
		*p = '/';
	}
	mkdir(tmp, 0755);
}

void fake_write(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot create %s", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

const char *fake_read(const char *root, const char *rel, char *buf,
		      size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

static void fill_unmapped_dir(const char *root, const char *dir, int base)
{
	char path[PATH_MAX], val[32];
	int i;

	snprintf(path, sizeof(path), "%s/%s/stats", root, dir);
	mkdir_p(path);
	for (i = 0; i < STAT_COUNT; i++) {
		snprintf(path, sizeof(path), "%s/stats/%s", dir,
			 sysfs_stat_names[i]);
		snprintf(val, sizeof(val), "%d\n", base + i);
		fake_write(root, path, val);
	}
}

void fake_sysfs_create(char *root, int nodes)
{
	char dir[256], path[PATH_MAX];
	int n, k;

	snprintf(root, PATH_MAX, "/tmp/secmem-sysfs-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	fill_unmapped_dir(root, "kernel/mm/unmapped", 0);
	fake_write(root, "kernel/mm/unmapped/flush_on_free",
		   "[immediate] deferred\n");
	fake_write(root, "kernel/mm/unmapped/pageblock_bytes", "2097152\n");
	fake_write(root, "kernel/mm/unmapped/hibernation", "[refuse] wipe\n");
	fake_write(root, "kernel/mm/unmapped/hibernation_wiped_files", "0\n");
	for (n = 0; n < nodes; n++) {
		snprintf(dir, sizeof(dir), "devices/system/node/node%d/unmapped",
			 n);
		fill_unmapped_dir(root, dir, n * 1000);
		for (k = 0; k < KNOB_COUNT; k++) {
			snprintf(path, sizeof(path), "%s/%s", dir,
				 sysfs_knob_names[k]);
			fake_write(root, path, "0\n");
		}
	}
	/* A node without pools, and an entry that is not a node at all. */
	snprintf(path, sizeof(path), "%s/devices/system/node/node%d", root,
		 nodes);
	mkdir_p(path);
	fake_write(root, "devices/system/node/possible", "0-9\n");
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void fake_sysfs_destroy(const char *root)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void slurp(int fd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off + 1 < len && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += (size_t)n;
	buf[off] = '\0';
}

int run_capture(char *const argv[], char *out, size_t outlen, char *err,
		size_t errlen)
{
	char opath[] = "/tmp/secmem-out-XXXXXX", epath[] = "/tmp/secmem-err-XXXXXX";
	int ofd = mkstemp(opath), efd = mkstemp(epath), status;
	pid_t pid;

	ck_assert(ofd >= 0 && efd >= 0);
	unlink(opath);
	unlink(epath);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(ofd, STDOUT_FILENO);
		dup2(efd, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	lseek(ofd, 0, SEEK_SET);
	lseek(efd, 0, SEEK_SET);
	slurp(ofd, out, outlen);
	slurp(efd, err, errlen);
	close(ofd);
	close(efd);
	ck_assert_msg(WIFEXITED(status), "%s did not exit", argv[0]);
	return WEXITSTATUS(status);
}
