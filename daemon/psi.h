/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory pressure from /proc/pressure/memory: a poll()able trigger, as
 * systemd-oomd uses, and the avg10 figures for the calm/pressure test.
 */
#ifndef SECMEM_PSI_H
#define SECMEM_PSI_H

#include "config.h"

#define PSI_MEMORY_PATH "/proc/pressure/memory"

/*
 * Open @path and arm @t on it.  The returned fd signals POLLPRI when the
 * trigger fires (and POLLERR if the trigger goes away).  -errno on error:
 * -ENOENT when the kernel has no PSI.
 */
int psi_trigger_open(const char *path, const struct psi_trigger *t);

/* Read avg10 of the "some" and "full" lines, in hundredths of a percent. */
int psi_read(const char *path, unsigned int *some, unsigned int *full);

/* The parser behind psi_read(), for tests: -EPROTO on a foreign format. */
int psi_parse(const char *text, unsigned int *some, unsigned int *full);

#endif /* SECMEM_PSI_H */
