// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmemctl protect and unprotect.
 *
 * protect writes /etc/systemd/system/UNIT.d/50-secmem-preload.conf
 * (dropin.h), the drop-in a systemd administrator would write by hand:
 *
 *   [Service]
 *   Environment=LD_PRELOAD=<PRELOADDIR>/libsecmem-preload.so
 *   Environment=SECMEM_PRELOAD_MODE=<mode>
 *   LimitMEMLOCK=<size>
 *   NoNewPrivileges=yes            (only with --no-new-privs)
 *
 * after refusing, with a message, everything that would make the service
 * run without the protection while looking protected: no secret-memory
 * backend on this kernel, an ExecStart= program that is statically linked
 * or gains privileges on exec (ld.so then ignores LD_PRELOAD), a memory
 * lock limit below one arena, a unit systemd does not know, a drop-in of
 * that name that secmemctl did not write, and a setting that still
 * overrides ours after the reload.  The checks of the program are
 * secmem-run's, the same code (preload/exec_check.c), with the unit's
 * User=/Group= as the credentials it runs with.
 *
 * systemctl.c asks systemd, dropin.c reads and writes the file, and
 * protected_units.c lists the protected units for secmemctl status.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dropin.h"
#include "exec_check.h"
#include "mode_list.h"
#include "protect.h"
#include "secmem.h"
#include "systemctl.h"
#include "units.h"

void protect_env_default(struct protect_env *env)
{
	const char *s = getenv("SECMEMCTL_SYSTEMCTL");
	const char *p = getenv("SECMEM_PRELOAD_LIB");

	env->unit_dir = PROTECT_UNIT_DIR;
	env->systemctl = s && *s ? s : "systemctl";
	/* PRELOAD_PATH: common.mk, as for secmem-run. */
	env->preload = p && *p ? p : PRELOAD_PATH;
	env->config = PROTECT_CONFIG;
	env->proc = PROTECT_PROC;
	env->cgroup = PROTECT_CGROUP;
	env->probe = NULL;
}

bool protect_valid_modes(const char *s)
{
	return preload_valid_mode_list(s);
}

int protect_unit_name(const char *in, char *out, size_t outlen, char *err,
		      size_t len)
{
	static const char *const other[] = {
		".socket", ".target", ".timer", ".mount", ".automount",
		".path", ".slice", ".scope", ".device", ".swap",
	};
	const char *p;
	size_t i;

	if (!*in || strlen(in) > 240 || *in == '.' || *in == '@') {
		snprintf(err, len, "'%s' is not a unit name", in);
		return -EINVAL;
	}
	for (p = in; *p; p++) {
		if (!isalnum((unsigned char)*p) && !strchr(":-_.\\@", *p)) {
			snprintf(err, len,
				 "'%s' is not a unit name (character '%c')", in,
				 *p);
			return -EINVAL;
		}
	}
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		if (name_has_suffix(in, other[i])) {
			snprintf(err, len,
				 "%s: only service units run programs that the preload can protect",
				 in);
			return -EINVAL;
		}
	}
	/* As systemctl does: a name without a unit type is a service. */
	snprintf(out, outlen, "%s%s", in,
		 name_has_suffix(in, ".service") ? "" : ".service");
	if (name_has_suffix(out, "@.service") && strchr(out, '@') != out + strlen(out) - 9) {
		snprintf(err, len, "'%s' is not a unit name", in);
		return -EINVAL;
	}
	return 0;
}

/* --- the program ----------------------------------------------------------- */

static bool id_of(const char *name, bool group, unsigned int *id)
{
	char *end;
	unsigned long v;

	if (!*name) {
		*id = 0;	/* systemd's default: root */
		return true;
	}
	errno = 0;
	v = strtoul(name, &end, 10);
	if (!errno && !*end && v < UINT_MAX) {
		*id = (unsigned int)v;
		return true;
	}
	if (group) {
		struct group *g = getgrnam(name);

		if (g)
			*id = g->gr_gid;
		return g != NULL;
	} else {
		struct passwd *p = getpwnam(name);

		if (p)
			*id = p->pw_uid;
		return p != NULL;
	}
}

/*
 * The credentials the unit's programs start with, for exec_check(): its
 * User= and Group= (or User='s primary group), root when unset, and
 * NoNewPrivileges=.  A user or group that does not exist yet
 * (DynamicUser=) matches no file's owner.
 */
static void unit_creds(const struct unit_info *u, struct exec_creds *c)
{
	unsigned int uid, gid;

	if (!id_of(u->user, false, &uid))
		uid = UINT_MAX;
	if (*u->group) {
		if (!id_of(u->group, true, &gid))
			gid = UINT_MAX;
	} else if (*u->user) {
		struct passwd *p = getpwnam(u->user);

		gid = p ? p->pw_gid : UINT_MAX;
	} else {
		gid = 0;
	}
	c->uid = (uid_t)uid;
	c->gid = (gid_t)gid;
	c->no_new_privs = !strcmp(u->nnp, "yes");
}

/* Each ExecStart= program: dynamically linked, and no privilege gain. */
static int check_programs(const char *unit, const struct unit_info *u,
			  bool no_new_privs, bool *needs_nnp, char *err,
			  size_t len)
{
	struct exec_creds c;
	int i;

	*needs_nnp = false;
	if (!u->nexec) {
		snprintf(err, len, "%s: the unit has no ExecStart=: nothing to protect",
			 unit);
		return -EINVAL;
	}
	unit_creds(u, &c);
	for (i = 0; i < u->nexec; i++) {
		char file[PATH_MAX], why[64];

		if (access(u->exec[i], F_OK) < 0) {
			snprintf(err, len, "%s: ExecStart= program %s: %s", unit,
				 u->exec[i], strerror(errno));
			return -ENOENT;
		}
		switch (exec_check(u->exec[i], &c, file, sizeof(file), why,
				   sizeof(why))) {
		case EXEC_PRELOADABLE:
			break;
		case EXEC_STATIC:
			snprintf(err, len,
				 "%s: %s is statically linked: LD_PRELOAD cannot interpose its allocator, so the service would run without secret memory. Not protecting it.",
				 unit, file);
			return -EINVAL;
		case EXEC_PRIVILEGED:
			if (!no_new_privs) {
				snprintf(err, len,
					 "%s: %s is %s: the dynamic loader ignores LD_PRELOAD for it (secure-execution mode), so the service would run without secret memory. Not protecting it; --no-new-privs adds NoNewPrivileges=yes, which runs it without that privilege.",
					 unit, file, why);
				return -EPERM;
			}
			*needs_nnp = true;
			break;
		}
	}
	return 0;
}

/* --- the backend ------------------------------------------------------------ */

/*
 * The secret-memory backend libsecmem, and so the preload, finds on this
 * kernel: its name, or NULL if there is none.  mlock()ed memory, which
 * SECMEM_ALLOW_INSECURE=1 in secmemctl's environment would make libsecmem
 * accept, is not secret memory.
 */
static const char *library_backend(void)
{
	enum secmem_backend b = secmem_backend();

	if (b != SECMEM_BACKEND_UNMAPPED_MEMFD &&
	    b != SECMEM_BACKEND_MEMFD_SECRET)
		return NULL;
	return secmem_backend_name(b);
}

/*
 * LimitMEMLOCK= for @mode: the unmapped memfd and memfd_secret are both
 * charged to RLIMIT_MEMLOCK, and libsecmem counts every arena byte.  The
 * heap mode may put all of the program's heap there: as much as the
 * configured pool may ever hold (pool_max of [global]).  The other modes
 * serve a library's allocations (secure heaps, libgcrypt's memory), which
 * are small: 64M, or pool_max if smaller.
 */
static int default_memlock(const struct protect_env *env, const char *mode,
			   uint64_t *bytes, char *err, size_t len)
{
	struct config_errors errs = { 0 };
	struct config cfg;
	uint64_t pool_max;

	if (access(env->config, F_OK) < 0 && errno == ENOENT) {
		config_defaults(&cfg);
	} else if (config_parse_file(env->config, &cfg, &errs)) {
		char msg[256];

		config_error_format(env->config, &errs.err[0], msg, sizeof(msg));
		snprintf(err, len, "%s (the pool size sets LimitMEMLOCK=; or give --memlock)",
			 msg);
		return -EINVAL;
	}
	pool_max = cfg.node[0].pool_max;
	*bytes = strstr(mode, "heap") ? pool_max :
		 pool_max < PROTECT_MEMLOCK_LIBS ? pool_max :
						   PROTECT_MEMLOCK_LIBS;
	if (*bytes < PROTECT_MEMLOCK_MIN) {
		char a[SIZE_STR_MAX];

		snprintf(err, len,
			 "pool_max in %s is %s: a memory lock limit that low is below one libsecmem arena (1M), so every secret allocation would fail; raise pool_max or give --memlock",
			 env->config, format_size(pool_max, a, sizeof(a)));
		return -EINVAL;
	}
	return 0;
}

int ctl_protect(FILE *out, const struct protect_env *env, const char *name,
		const struct protect_opts *o, char *err, size_t len)
{
	char unit[256], dir[PATH_MAX], file[PATH_MAX], legacy[PATH_MAX];
	char old[4096], lold[4096], text[4096], preload[2600];
	char mem[SIZE_STR_MAX], prev[64] = "", v[1200], why[128];
	const char *backend;
	struct unit_info u;
	uint64_t memlock = o->memlock, theirs;
	bool nnp;
	ssize_t n, ln;
	int r;

	r = protect_unit_name(name, unit, sizeof(unit), err, len);
	if (r)
		return r;
	if (!preload_mode_list_parse(o->mode, why, sizeof(why))) {
		snprintf(err, len, "--mode '%s': %s: " PRELOAD_MODES_HELP,
			 o->mode ? o->mode : "", why);
		return -EINVAL;
	}
	if (o->memlock && o->memlock < PROTECT_MEMLOCK_MIN) {
		snprintf(err, len, "--memlock %s: a memory lock limit below one libsecmem arena (1M) makes every secret allocation fail",
			 format_size(o->memlock, mem, sizeof(mem)));
		return -EINVAL;
	}
	if (access(env->preload, R_OK) < 0) {
		r = -errno;
		snprintf(err, len, "%s: %s (is libsecmem-preload installed?)",
			 env->preload, strerror(-r));
		return r;
	}
	if (strpbrk(env->preload, " \t\n\"'\\%$")) {
		snprintf(err, len, "%s: a path with blanks, quotes, %% or $ cannot go into Environment= as it is",
			 env->preload);
		return -EINVAL;
	}
	dropin_paths(env->unit_dir, unit, dir, file, legacy, sizeof(dir));
	n = dropin_read(file, old, sizeof(old));
	ln = dropin_read_ours(legacy, lold, sizeof(lold));
	if (n < 0 && n != -ENOENT) {
		snprintf(err, len, "reading %s: %s", file, strerror((int)-n));
		return (int)n;
	}
	if (ln < 0 && ln != -ENOENT) {
		snprintf(err, len, "reading %s: %s", legacy, strerror((int)-ln));
		return (int)ln;
	}
	if (n >= 0 && !dropin_is_ours(old)) {
		snprintf(err, len, "%s exists and was not written by secmemctl (no \"%s\" line): not overwriting it",
			 file, DROPIN_MARKER);
		return -EEXIST;
	}
	if (n >= 0)
		dropin_value(old, "LimitMEMLOCK=", prev, sizeof(prev));
	else if (ln >= 0)
		dropin_value(lold, "LimitMEMLOCK=", prev, sizeof(prev));
	r = systemctl_load(env->systemctl, unit, &u, err, len);
	if (r)
		return r;
	/*
	 * What systemd shows includes our own drop-ins, under either name:
	 * their NoNewPrivileges=yes must not excuse a set-id program now, or
	 * a re-protect without --no-new-privs would drop it and leave the
	 * program unprotected.
	 */
	if ((n >= 0 && dropin_value(old, "NoNewPrivileges=", v, sizeof(v))) ||
	    (ln >= 0 && dropin_value(lold, "NoNewPrivileges=", v, sizeof(v))))
		u.nnp[0] = '\0';
	r = check_programs(unit, &u, o->no_new_privs, &nnp, err, len);
	if (r)
		return r;
	if (!memlock) {
		r = default_memlock(env, o->mode, &memlock, err, len);
		if (r)
			return r;
		/* Never lower what the unit already allows (ours aside). */
		theirs = systemd_limit_bytes(u.limit_memlock);
		if (theirs > memlock && (!*prev || theirs != systemd_limit_bytes(prev))) {
			fprintf(out, "%s: keeping its LimitMEMLOCK=%s, above the %s secmemctl would set\n",
				unit, u.limit_memlock,
				format_size(memlock, mem, sizeof(mem)));
			memlock = theirs;
		}
	}
	backend = env->probe ? env->probe() : library_backend();
	if (!backend) {
		snprintf(err, len, "%s: this kernel has no secret-memory backend (neither the unmapped memfd nor memfd_secret(2)): the preload would stop the service (status 125). Not protecting it.",
			 unit);
		return -ENOTSUP;
	}
	systemd_limit_string(memlock, mem, sizeof(mem));
	/* Another preload the unit sets stays, after ours (as secmem-run). */
	snprintf(preload, sizeof(preload), "%s", env->preload);
	if (systemctl_env_value(u.environment, "LD_PRELOAD", v, sizeof(v)) &&
	    strcmp(v, env->preload)) {
		size_t k = strlen(env->preload);

		/* Ours first already (a re-protect): keep the rest. */
		if (!strncmp(v, env->preload, k) && v[k] == ':')
			snprintf(preload, sizeof(preload), "%s", v);
		else
			snprintf(preload, sizeof(preload), "%s:%s", env->preload, v);
	}
	snprintf(text, sizeof(text),
		 DROPIN_MARKER " for %s; remove it with\n"
		 "# `secmemctl unprotect %s`.  secmemctl(8) overwrites changes made here.\n"
		 "# libsecmem-preload puts the %s allocations of the service in secret\n"
		 "# memory (backend %s when this was written); LimitMEMLOCK= lets the\n"
		 "# memory lock accounting of that memory reach %s.\n"
		 "[Service]\n"
		 "Environment=LD_PRELOAD=%s\n"
		 "Environment=SECMEM_PRELOAD_MODE=%s\n"
		 "LimitMEMLOCK=%s\n"
		 "%s",
		 unit, unit, o->mode, backend, mem, preload, o->mode, mem,
		 nnp ? "# Its program gains privileges on exec; without them ld.so honours\n"
		       "# LD_PRELOAD (secmemctl protect --no-new-privs).\n"
		       "NoNewPrivileges=yes\n" : "");
	if (n >= 0 && !strcmp(old, text) && ln < 0) {
		fprintf(out, "%s: already protected, %s unchanged\n", unit, file);
		return 0;
	}
	if (n < 0 || strcmp(old, text)) {
		r = dropin_write(dir, file, text, err, len);
		if (r)
			return r;
	}
	if (ln >= 0) {
		if (unlink(legacy) < 0) {
			r = -errno;
			snprintf(err, len, "%s written, but removing %s, the drop-in's old name: %s",
				 file, legacy, strerror(-r));
			return r;
		}
		fprintf(out, "%s: removed %s, the drop-in's old name\n", unit,
			legacy);
	}
	r = systemctl_daemon_reload(env->systemctl, err, len, "wrote the drop-in");
	if (r) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, len, "%s: %s", file, msg);
		return r;
	}
	/* What systemd now runs the unit with: another drop-in may win. */
	r = systemctl_load(env->systemctl, unit, &u, err, len);
	if (r)
		return r;
	if (!systemctl_env_value(u.environment, "LD_PRELOAD", v, sizeof(v)) ||
	    strcmp(v, preload) ||
	    !systemctl_env_value(u.environment, "SECMEM_PRELOAD_MODE", v, sizeof(v)) ||
	    strcmp(v, o->mode) || systemd_limit_bytes(u.limit_memlock) != memlock) {
		snprintf(err, len, "%s: written and reloaded, but systemd does not run the unit with it (Environment=%s, LimitMEMLOCK=%s): another drop-in or an EnvironmentFile= overrides it; see systemctl cat %s",
			 file, u.environment, u.limit_memlock, unit);
		return -EEXIST;
	}
	fprintf(out, "%s: protected (mode %s, LimitMEMLOCK=%s%s), %s\n", unit,
		o->mode, mem, nnp ? ", NoNewPrivileges=yes" : "", file);
	if (!strcmp(u.active_state, "active") ||
	    !strcmp(u.active_state, "reloading") ||
	    !strcmp(u.active_state, "activating"))
		fprintf(out, "%s: running without it until restarted: systemctl restart %s\n",
			unit, unit);
	return 0;
}

int ctl_unprotect(FILE *out, const struct protect_env *env, const char *name,
		  char *err, size_t len)
{
	char unit[256], dir[PATH_MAX], file[PATH_MAX], legacy[PATH_MAX];
	char old[4096], removed[2 * PATH_MAX + 8] = "";
	const char *paths[2];
	struct unit_info u;
	ssize_t n, ln;
	int i, r;

	r = protect_unit_name(name, unit, sizeof(unit), err, len);
	if (r)
		return r;
	dropin_paths(env->unit_dir, unit, dir, file, legacy, sizeof(dir));
	n = dropin_read(file, old, sizeof(old));
	if (n < 0 && n != -ENOENT) {
		snprintf(err, len, "reading %s: %s", file, strerror((int)-n));
		return (int)n;
	}
	if (n >= 0 && !dropin_is_ours(old)) {
		snprintf(err, len, "%s was not written by secmemctl (no \"%s\" line): not removing it",
			 file, DROPIN_MARKER);
		return -EEXIST;
	}
	ln = dropin_read_ours(legacy, old, sizeof(old));
	if (ln < 0 && ln != -ENOENT) {
		snprintf(err, len, "reading %s: %s", legacy, strerror((int)-ln));
		return (int)ln;
	}
	if (n < 0 && ln < 0) {
		fprintf(out, "%s: not protected (no %s): nothing to do\n", unit,
			file);
		return 0;
	}
	/* Ours under both names (the legacy one, see dropin.h): both go. */
	paths[0] = n >= 0 ? file : NULL;
	paths[1] = ln >= 0 ? legacy : NULL;
	for (i = 0; i < 2; i++) {
		if (!paths[i])
			continue;
		if (unlink(paths[i]) < 0) {
			r = -errno;
			snprintf(err, len, "removing %s: %s", paths[i],
				 strerror(-r));
			return r;
		}
		snprintf(removed + strlen(removed), sizeof(removed) - strlen(removed),
			 "%s%s", *removed ? " and " : "", paths[i]);
	}
	rmdir(dir);	/* only if nothing else is in it */
	r = systemctl_daemon_reload(env->systemctl, err, len, "removed the drop-in");
	if (r) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, len, "%s: %s", removed, msg);
		return r;
	}
	fprintf(out, "%s: unprotected, %s removed\n", unit, removed);
	if (!systemctl_load(env->systemctl, unit, &u, err, len) &&
	    !strcmp(u.active_state, "active"))
		fprintf(out, "%s: running with the preload until restarted: systemctl restart %s\n",
			unit, unit);
	err[0] = '\0';
	return 0;
}
