/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secmemctl's commands, apart from its argument parsing so that the tests
 * can run them against a fake sysfs tree and read what they print.
 */
#ifndef SECMEM_CTL_H
#define SECMEM_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct protect_env;

/*
 * Print the pools under @sysfs, the daemon's last decisions from @rundir,
 * the secret files and who holds them (@proc, secrets.h) and, unless
 * @units is NULL, the units protected with secmemctl protect
 * (protect.h), as a table or as one JSON object.  Returns 0, -ENOENT
 * when the kernel lacks the feature, or another -errno (message in @err).
 */
int ctl_status(FILE *out, const char *sysfs, const char *proc,
	       const char *rundir, bool json, const struct protect_env *units,
	       char *err, size_t len);

/*
 * Only the secret files: how many are open, the memory they hold, whether
 * the kernel would hibernate, and which processes hold them; without
 * @legend only the rows of the holders.  Needs no pools: it works on a
 * stock kernel too.  Returns 0 or -errno.
 */
int ctl_secrets(FILE *out, const char *sysfs, const char *proc, bool json,
		bool legend, char *err, size_t len);

/*
 * Check and write one setting: a per-node size (pool_target,
 * watermark_low, watermark_high) on @node or, with @node < 0, on every
 * node; or flush_on_free or hibernation (no node).  Then ask a running
 * daemon to take the change into account.  Returns 0 or -errno (message
 * in @err): -EINVAL for an unknown key before anything else is looked
 * at, -ENOENT when the kernel lacks the knob.
 */
int ctl_set(const char *sysfs, const char *rundir, const char *key,
	    const char *value, int node, char *err, size_t len);

/*
 * Whether ctl_set() knows @key; if not, a message that lists the keys it
 * knows in @err.  Looks at nothing outside the process.
 */
bool ctl_set_key_known(const char *key, char *err, size_t len);

#endif /* SECMEM_CTL_H */
