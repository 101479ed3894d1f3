/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running another program and collecting what it prints: how secmemctl
 * asks systemctl (systemctl.c).
 */
#ifndef SECMEM_SUBPROCESS_H
#define SECMEM_SUBPROCESS_H

#include <stddef.h>

/*
 * Run @argv (argv[0] looked up in PATH), its stdout in @out and its stderr
 * in @errout (both NUL-terminated, truncated; @errout on one line, without
 * its trailing newlines and blanks).  Returns its exit status, 128 plus
 * the signal that killed it, or -errno if it could not be run.
 */
int subprocess_run(char *const argv[], char *out, size_t outlen, char *errout,
		   size_t errlen);

#endif /* SECMEM_SUBPROCESS_H */
