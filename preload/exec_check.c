// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whether LD_PRELOAD can reach a program (exec_check.h): shared by
 * secmem-run and secmemctl protect.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "exec_check.h"

enum elf_kind { ELF_DYNAMIC, ELF_STATIC, ELF_SCRIPT, ELF_OTHER };

/*
 * Whether @file has a program interpreter; a #! script names its own,
 * into @interp, parsed as the kernel does (binfmt_script): blanks and tabs
 * skipped, the name ends at a blank, a tab or the end of the line.  An
 * interpreter that does not fit @interp is not something we can read.
 */
static enum elf_kind classify(const char *file, char *interp, size_t len)
{
	enum elf_kind k = ELF_STATIC;
	char buf[PATH_MAX];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	ssize_t n;
	int fd, i;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ELF_OTHER;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 2 && buf[0] == '#' && buf[1] == '!') {
		char *p = buf + 2;
		size_t w;

		close(fd);
		buf[n] = '\0';	/* cppcheck-suppress unreadVariable */
		p += strspn(p, " \t");
		w = strcspn(p, " \t\n");
		if (w >= len)
			return ELF_OTHER;
		memcpy(interp, p, w);
		interp[w] = '\0';
		return ELF_SCRIPT;
	}
	if (n < (ssize_t)sizeof(eh) || memcmp(buf, ELFMAG, SELFMAG) ||
	    buf[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return ELF_OTHER;
	}
	memcpy(&eh, buf, sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + (size_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			k = ELF_DYNAMIC;
	}
	close(fd);
	return k;
}

/*
 * What exec would give @file beyond @c, as a phrase in @buf, or NULL if
 * nothing.  No gain under no_new_privs or on a nosuid mount, where the
 * bits are ignored; none from file capabilities for root, which already
 * holds them all.
 */
static const char *privilege_gain(const char *file, const struct exec_creds *c,
				  char *buf, size_t len)
{
	struct statvfs vfs;
	struct stat st;

	if (c->no_new_privs)
		return NULL;
	if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	if (statvfs(file, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != c->uid) {
		snprintf(buf, len, "set-user-ID (user %ld)", (long)st.st_uid);
		return buf;
	}
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) &&
	    st.st_gid != c->gid) {
		snprintf(buf, len, "set-group-ID (group %ld)", (long)st.st_gid);
		return buf;
	}
	if (c->uid != 0 && getxattr(file, "security.capability", NULL, 0) > 0) {
		snprintf(buf, len, "granted file capabilities");
		return buf;
	}
	return NULL;
}

enum exec_verdict exec_check(const char *file, const struct exec_creds *c,
			     char *prog, size_t proglen, char *why,
			     size_t whylen)
{
	enum exec_verdict v = EXEC_PRELOADABLE;
	char cur[PATH_MAX], interp[PATH_MAX];
	int depth;

	snprintf(cur, sizeof(cur), "%s", file);
	for (depth = 0; depth < 4; depth++) {
		enum elf_kind k = classify(cur, interp, sizeof(interp));

		if (k == ELF_SCRIPT) {
			snprintf(cur, sizeof(cur), "%s", interp);
			continue;
		}
		if (k == ELF_STATIC)
			v = EXEC_STATIC;
		else if (k == ELF_DYNAMIC && privilege_gain(cur, c, why, whylen))
			v = EXEC_PRIVILEGED;
		break;
	}
	snprintf(prog, proglen, "%s", cur);
	return v;
}
