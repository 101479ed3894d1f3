/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secmemctl protect / unprotect / the protected units of status: a
 * systemd drop-in that runs a service with libsecmem-preload, and the
 * statistics its processes export (preload/stats_export.h).
 *
 * Everything outside the process is reached through struct protect_env,
 * so that the tests run it against a temporary unit directory, a fake
 * systemctl script and fake /proc and cgroup trees.
 */
#ifndef SECMEM_PROTECT_H
#define SECMEM_PROTECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROTECT_UNIT_DIR	"/etc/systemd/system"
#define PROTECT_CONFIG		"/etc/secmem.conf"
#define PROTECT_PROC		"/proc"
#define PROTECT_CGROUP		"/sys/fs/cgroup"

/* LimitMEMLOCK= by mode unless --memlock: see secmemctl(8). */
#define PROTECT_MEMLOCK_LIBS	(UINT64_C(64) << 20)	/* modes without heap */
#define PROTECT_MEMLOCK_MIN	(UINT64_C(1) << 20)	/* one arena */

struct protect_env {
	const char *unit_dir;	/* where drop-ins go: /etc/systemd/system */
	const char *systemctl;	/* the program run as systemctl */
	const char *preload;	/* libsecmem-preload.so as installed */
	const char *config;	/* secmem.conf: pool_max */
	const char *proc;	/* /proc */
	const char *cgroup;	/* the cgroup2 mount: /sys/fs/cgroup */
	/* The backend's name, NULL if none; NULL: libsecmem's own answer. */
	const char *(*probe)(void);
};

/* The defaults above, with SECMEMCTL_SYSTEMCTL and SECMEM_PRELOAD_LIB. */
void protect_env_default(struct protect_env *env);

struct protect_opts {
	const char *mode;	/* SECMEM_PRELOAD_MODE, checked */
	uint64_t memlock;	/* bytes; 0: derived from mode and pool */
	bool no_new_privs;	/* NoNewPrivileges=yes for set-id programs */
};

/* Whether @modes is a valid SECMEM_PRELOAD_MODE (openssl,sodium,heap). */
bool protect_valid_modes(const char *modes);

/*
 * Normalise a unit name ("foo" -> "foo.service"); only service units.
 * Returns 0 or -EINVAL (message in @err).
 */
int protect_unit_name(const char *in, char *out, size_t outlen, char *err,
		      size_t len);

/*
 * Write (or confirm) the drop-in of @unit and reload systemd.  Progress
 * on @out.  Returns 0, -ENOTSUP when the kernel has no secret-memory
 * backend, or another -errno; the message is in @err.
 */
int ctl_protect(FILE *out, const struct protect_env *env, const char *unit,
		const struct protect_opts *o, char *err, size_t len);

/* Remove the drop-in of @unit (a no-op, said on @out, if it has none). */
int ctl_unprotect(FILE *out, const struct protect_env *env, const char *unit,
		  char *err, size_t len);

/*
 * The protected units, their processes and what each one's preload
 * exports: a table (without @legend its rows alone, no header and no
 * hint when there are none), or (@json) a JSON array for the "units"
 * member.
 */
int ctl_units(FILE *out, const struct protect_env *env, bool json,
	      bool legend, char *err, size_t len);

#endif /* SECMEM_PROTECT_H */
