/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Replacing a file so that its readers (systemd reading a drop-in,
 * secmemctl reading the pid file or the decisions) see either the old
 * contents or the new, never part of them.
 */
#ifndef SECMEM_FILE_REPLACE_H
#define SECMEM_FILE_REPLACE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Replace @path with the @len bytes at @data, mode @mode whatever the
 * umask.  They are written to DIR/.NAME.tmp beside it (a name that
 * neither systemd nor secmemctl reads), synced, and renamed over @path.
 * Neither the temporary file nor @path is followed if it is a symbolic
 * link.  Returns 0 or -errno; on failure @path is unchanged and the
 * temporary file is gone.
 */
int file_replace(const char *path, const void *data, size_t len, mode_t mode);

#endif /* SECMEM_FILE_REPLACE_H */
