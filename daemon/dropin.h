/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The drop-in of secmemctl protect: UNIT_DIR/UNIT.d/DROPIN_NAME, a file
 * whose first line is DROPIN_MARKER (how secmemctl tells its own drop-ins
 * from an administrator's, which it never touches).  The name says whose
 * it is, and its "50-" sorts it before the "override.conf" of systemctl
 * edit and any later-numbered local drop-in, which therefore win.
 *
 * DROPIN_LEGACY_NAME is the name older versions of secmemctl wrote, the
 * same as /etc/secmem.conf's: such a drop-in, if it is ours, is still
 * listed, and protect and unprotect remove it.  A file of that name
 * without the marker is an administrator's and no business of secmemctl.
 */
#ifndef SECMEM_DROPIN_H
#define SECMEM_DROPIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DROPIN_NAME		"50-secmem-preload.conf"
#define DROPIN_LEGACY_NAME	"secmem.conf"
#define DROPIN_MARKER		"# Written by secmemctl protect"

/* @unit's drop-in directory, file and legacy file under @unit_dir. */
void dropin_paths(const char *unit_dir, const char *unit, char *dir, char *file,
		  char *legacy, size_t len);

/*
 * Read @path, not following a symbolic link, into @buf (at most @len - 1
 * bytes, NUL-terminated).  Returns the length or -errno.
 */
ssize_t dropin_read(const char *path, char *buf, size_t len);

/* Whether @text, a drop-in's contents, was written by secmemctl. */
bool dropin_is_ours(const char *text);

/*
 * dropin_read() of a file that counts only if it is ours (the legacy
 * name): -ENOENT if it is missing or an administrator's.
 */
ssize_t dropin_read_ours(const char *path, char *buf, size_t len);

/*
 * @unit's drop-in of ours under @unit_dir, by its name or else by the
 * legacy one: its path in @file and its contents in @text.  Returns 0 or
 * -ENOENT.
 */
int dropin_find(const char *unit_dir, const char *unit, char *file,
		size_t filelen, char *text, size_t textlen);

/* The value of the first "KEY=" line (@key ends in '=') of @text. */
bool dropin_value(const char *text, const char *key, char *v, size_t len);

/*
 * Replace @path in directory @dir (created if missing) with @text, mode
 * 0644 (file_replace.h).  Returns 0 or -errno, the message in @err.
 */
int dropin_write(const char *dir, const char *path, const char *text, char *err,
		 size_t len);

/*
 * The units under @unit_dir with a drop-in of ours (dropin_find()),
 * sorted, at most @max
 * (strdup()ed: the caller frees them).  A missing @unit_dir has none.
 * Returns 0 or -errno.
 */
int dropin_list_units(const char *unit_dir, char **names, int max, int *count);

#endif /* SECMEM_DROPIN_H */
