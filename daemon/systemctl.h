/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What systemd says about a unit, asked through systemctl (the program
 * named by @systemctl, a fake one in the tests): `systemctl show` parsed
 * into struct unit_info, daemon-reload, the loaded instances of a
 * template, and systemd's syntax for environment lists and limits.
 */
#ifndef SECMEM_SYSTEMCTL_H
#define SECMEM_SYSTEMCTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define UNIT_MAX_EXEC 8
#define UNIT_NAME_MAX 256

/* The properties protect and status need; "" when systemctl shows none. */
struct unit_info {
	char load_state[32];
	char active_state[32];
	char user[64];
	char group[64];
	char nnp[8];
	char limit_memlock[32];
	char environment[2048];
	char cgroup[PATH_MAX];
	char exec[UNIT_MAX_EXEC][PATH_MAX];	/* ExecStart= programs */
	int nexec;
};

static inline bool name_has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Whether @unit is a template service ("foo@.service"). */
static inline bool unit_is_template(const char *unit)
{
	return name_has_suffix(unit, "@.service");
}

/*
 * systemctl show @unit.  Returns 0, -ENOMEM or -EIO (systemctl could not
 * run or failed; the message is in @err).
 */
int systemctl_show(const char *systemctl, const char *unit, struct unit_info *u,
		   char *err, size_t len);

/*
 * The unit systemd would load for @unit, which must be loaded: a template
 * is looked at through an instance that is never started.  Returns 0,
 * -ENOENT (no unit file), -EPERM (masked), -EINVAL (not loaded) or an
 * error of systemctl_show(); the message is in @err.
 */
int systemctl_load(const char *systemctl, const char *unit, struct unit_info *u,
		   char *err, size_t len);

/*
 * systemctl daemon-reload, after @what ("wrote the drop-in").  Returns 0
 * or -EIO with a message that starts with @what.
 */
int systemctl_daemon_reload(const char *systemctl, char *err, size_t len,
			    const char *what);

/* The names of the instances of template @unit that systemd has loaded. */
int systemctl_instances(const char *systemctl, const char *unit,
			char out[][UNIT_NAME_MAX], int max);

/*
 * The value of variable @name in @env, an Environment= property as
 * systemctl show prints it ("A=1 B=2").
 */
bool systemctl_env_value(const char *env, const char *name, char *v,
			 size_t len);

/* Bytes of a systemd limit: "infinity" is UINT64_MAX, "" or junk 0. */
uint64_t systemd_limit_bytes(const char *s);

/* A limit as systemd reads it: K, M, G (base 1024) or "infinity". */
void systemd_limit_string(uint64_t v, char *buf, size_t len);

#endif /* SECMEM_SYSTEMCTL_H */
