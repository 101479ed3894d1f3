// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmemctl protect / unprotect, and the protected units in status.
 *
 * protect writes /etc/systemd/system/UNIT.d/secmem.conf, the drop-in a
 * systemd administrator would write by hand:
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
 * status finds the units by their drop-ins, their processes by their
 * cgroups, and each process's figures in the page its preload maps
 * (preload/stats_export.h), read through /proc/PID/map_files (root) or
 * /proc/PID/mem.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "exec_check.h"
#include "mode_list.h"
#include "protect.h"
#include "secmem/uapi.h"
#include "stats_export.h"
#include "units.h"

#ifndef SECRETMEM_MAGIC
#define SECRETMEM_MAGIC 0x5345434dU
#endif

#define MAX_EXEC 8
#define MAX_UNITS 256
#define MAX_PIDS 256
#define OUT_MAX 65536

void protect_env_default(struct protect_env *env)
{
	const char *s = getenv("SECMEMCTL_SYSTEMCTL");
	const char *p = getenv("SECMEM_PRELOAD_LIB");

	env->unit_dir = PROTECT_UNIT_DIR;
	env->systemctl = s && *s ? s : "systemctl";
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

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
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
		if (has_suffix(in, other[i])) {
			snprintf(err, len,
				 "%s: only service units run programs that the preload can protect",
				 in);
			return -EINVAL;
		}
	}
	/* As systemctl does: a name without a unit type is a service. */
	snprintf(out, outlen, "%s%s", in,
		 has_suffix(in, ".service") ? "" : ".service");
	if (has_suffix(out, "@.service") && strchr(out, '@') != out + strlen(out) - 9) {
		snprintf(err, len, "'%s' is not a unit name", in);
		return -EINVAL;
	}
	return 0;
}

static bool is_template(const char *unit)
{
	return has_suffix(unit, "@.service");
}

/* --- running systemctl --------------------------------------------------- */

/*
 * Run @argv (argv[0] looked up in PATH), its stdout in @out and its stderr
 * in @errout (both NUL-terminated, truncated).  Returns its exit status,
 * or -errno if it could not be run.
 */
static int run(char *const argv[], char *out, size_t outlen, char *errout,
	       size_t errlen)
{
	int po[2], pe[2], status, r;
	size_t no = 0, ne = 0;
	struct pollfd fds[2];
	pid_t pid;

	out[0] = errout[0] = '\0';
	if (pipe2(po, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		r = -errno;
		close(po[0]);
		close(po[1]);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		return r;
	}
	if (pid == 0) {
		if (dup2(po[1], STDOUT_FILENO) < 0 ||
		    dup2(pe[1], STDERR_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		dprintf(STDERR_FILENO, "%s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	fds[0] = (struct pollfd){ .fd = po[0], .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = pe[0], .events = POLLIN };
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		char buf[4096];
		ssize_t n;
		int i;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			char *dst = i ? errout : out;
			size_t cap = i ? errlen : outlen, *used = i ? &ne : &no;

			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			n = read(fds[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				continue;
			}
			if (*used + 1 < cap) {
				size_t k = (size_t)n < cap - 1 - *used ?
						   (size_t)n :
						   cap - 1 - *used;

				memcpy(dst + *used, buf, k);
				*used += k;
				dst[*used] = '\0';
			}
		}
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	/* One line for messages: systemctl's own, without its newline. */
	while (ne && (errout[ne - 1] == '\n' || errout[ne - 1] == ' '))
		errout[--ne] = '\0';
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

struct unit_info {
	char load_state[32];
	char active_state[32];
	char user[64];
	char group[64];
	char nnp[8];
	char limit_memlock[32];
	char environment[2048];
	char cgroup[PATH_MAX];
	char exec[MAX_EXEC][PATH_MAX];
	int nexec;
};

static void copy_value(char *dst, size_t len, const char *v)
{
	snprintf(dst, len, "%s", v);
}

/* ExecStart={ path=/usr/bin/x ; argv[]=... } (one or more per line). */
static void parse_exec(struct unit_info *u, const char *v)
{
	const char *p = v;

	while ((p = strstr(p, "path=")) && u->nexec < MAX_EXEC) {
		size_t n;

		p += 5;
		n = strcspn(p, " ;}");
		snprintf(u->exec[u->nexec++], PATH_MAX, "%.*s", (int)n, p);
		p += n;
	}
}

/* systemctl show @unit: the properties protect and status need. */
static int unit_show(const struct protect_env *env, const char *unit,
		     struct unit_info *u, char *err, size_t len)
{
	char *argv[] = { (char *)env->systemctl, "show", "--no-pager",
			 "-p", "LoadState", "-p", "ActiveState",
			 "-p", "User", "-p", "Group", "-p", "NoNewPrivileges",
			 "-p", "LimitMEMLOCK", "-p", "Environment",
			 "-p", "ControlGroup", "-p", "ExecStart",
			 (char *)unit, NULL };
	char *out, errout[512], *line, *save = NULL;
	int r;

	memset(u, 0, sizeof(*u));
	out = malloc(OUT_MAX);
	if (!out) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	r = run(argv, out, OUT_MAX, errout, sizeof(errout));
	if (r) {
		if (r < 0)
			snprintf(err, len, "running %s: %s", env->systemctl,
				 strerror(-r));
		else
			snprintf(err, len, "%s show %s failed (status %d)%s%s",
				 env->systemctl, unit, r, *errout ? ": " : "",
				 errout);
		free(out);
		return -EIO;
	}
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(line, '=');

		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "LoadState"))
			copy_value(u->load_state, sizeof(u->load_state), v);
		else if (!strcmp(line, "ActiveState"))
			copy_value(u->active_state, sizeof(u->active_state), v);
		else if (!strcmp(line, "User"))
			copy_value(u->user, sizeof(u->user), v);
		else if (!strcmp(line, "Group"))
			copy_value(u->group, sizeof(u->group), v);
		else if (!strcmp(line, "NoNewPrivileges"))
			copy_value(u->nnp, sizeof(u->nnp), v);
		else if (!strcmp(line, "LimitMEMLOCK"))
			copy_value(u->limit_memlock, sizeof(u->limit_memlock), v);
		else if (!strcmp(line, "Environment"))
			copy_value(u->environment, sizeof(u->environment), v);
		else if (!strcmp(line, "ControlGroup"))
			copy_value(u->cgroup, sizeof(u->cgroup), v);
		else if (!strcmp(line, "ExecStart"))
			parse_exec(u, v);
	}
	free(out);
	return 0;
}

/*
 * The unit systemd would load for @unit: a template is looked at through
 * an instance that is never started (the template itself has no
 * properties), whose ExecStart= is the template's with %i filled in.
 */
static int unit_load(const struct protect_env *env, const char *unit,
		     struct unit_info *u, char *err, size_t len)
{
	char probe[300];
	int r;

	if (is_template(unit))
		snprintf(probe, sizeof(probe), "%.*s@secmemctl-check.service",
			 (int)(strlen(unit) - 9), unit);
	else
		snprintf(probe, sizeof(probe), "%s", unit);
	r = unit_show(env, probe, u, err, len);
	if (r)
		return r;
	if (!strcmp(u->load_state, "not-found")) {
		snprintf(err, len, "%s: no such unit (systemd has no unit file for it)",
			 unit);
		return -ENOENT;
	}
	if (!strcmp(u->load_state, "masked")) {
		snprintf(err, len, "%s: the unit is masked", unit);
		return -EPERM;
	}
	if (strcmp(u->load_state, "loaded")) {
		snprintf(err, len, "%s: systemd could not load the unit (LoadState=%s): see systemctl status %s",
			 unit, *u->load_state ? u->load_state : "?", unit);
		return -EINVAL;
	}
	return 0;
}

static int daemon_reload(const struct protect_env *env, char *err, size_t len,
			 const char *what)
{
	char *argv[] = { (char *)env->systemctl, "daemon-reload", NULL };
	char out[256], errout[512];
	int r = run(argv, out, sizeof(out), errout, sizeof(errout));

	if (!r)
		return 0;
	if (r < 0)
		snprintf(err, len, "%s, but running %s daemon-reload failed: %s; "
			 "systemd goes on with the old settings until it reloads",
			 what, env->systemctl, strerror(-r));
	else
		snprintf(err, len, "%s, but %s daemon-reload failed (status %d%s%s); "
			 "systemd goes on with the old settings until it reloads",
			 what, env->systemctl, r, *errout ? ": " : "", errout);
	return -EIO;
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

/* libsecmem's probe (libsecmem/backend.c): the name, or NULL if none. */
static const char *probe_backend(void)
{
	struct statfs sfs;
	int fd;

	fd = memfd_create("secmem-probe", MFD_CLOEXEC | MFD_UNMAPPED);
	if (fd >= 0) {
		bool ok = fstatfs(fd, &sfs) == 0 && sfs.f_type == SECRETMEM_MAGIC;

		close(fd);
		if (ok)
			return "unmapped-memfd";
	}
#ifdef SYS_memfd_secret
	fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return "memfd-secret";
	}
#endif
	return NULL;
}

/* --- the drop-in ------------------------------------------------------------ */

static void dropin_paths(const struct protect_env *env, const char *unit,
			 char *dir, char *file, size_t len)
{
	snprintf(dir, len, "%s/%s.d", env->unit_dir, unit);
	snprintf(file, len, "%s/%s.d/" PROTECT_DROPIN, env->unit_dir, unit);
}

/* Read @path (at most @len - 1 bytes).  -errno, or the length. */
static ssize_t read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1 &&
	       (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

static bool ours(const char *text)
{
	return !strncmp(text, PROTECT_MARKER, strlen(PROTECT_MARKER));
}

/* The value of the first "KEY=" line of our drop-in @text, into @v. */
static bool dropin_value(const char *text, const char *key, char *v,
			 size_t len)
{
	size_t k = strlen(key);
	const char *p = text;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, k)) {
			snprintf(v, len, "%.*s", (int)strcspn(p + k, "\n"), p + k);
			return true;
		}
	}
	return false;
}

/* The environment variable @name in systemctl's Environment= @env. */
static bool env_value(const char *env, const char *name, char *v, size_t len)
{
	size_t k = strlen(name);
	const char *p = env;

	while (*p) {
		size_t n = strcspn(p, " ");

		if (n > k && !strncmp(p, name, k) && p[k] == '=') {
			snprintf(v, len, "%.*s", (int)(n - k - 1), p + k + 1);
			return true;
		}
		p += n + (p[n] == ' ');
	}
	return false;
}

static int write_file(const char *dir, const char *path, const char *text,
		      char *err, size_t len)
{
	char tmp[PATH_MAX + 32];
	size_t n = strlen(text);
	int fd, r = 0;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, len, "creating %s: %s", dir, strerror(-r));
		return r;
	}
	/* A name systemd ignores (no .conf) until the rename. */
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, PROTECT_DROPIN);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0) {
		r = -errno;
		snprintf(err, len, "writing %s: %s", tmp, strerror(-r));
		return r;
	}
	if (fchmod(fd, 0644) < 0 || write(fd, text, n) != (ssize_t)n ||
	    fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r) {
		unlink(tmp);
		snprintf(err, len, "writing %s: %s", path, strerror(-r));
	}
	return r;
}

/* Bytes of a systemd limit ("infinity" is UINT64_MAX; "" or junk 0). */
static uint64_t limit_bytes(const char *s)
{
	uint64_t v;

	if (!strcmp(s, "infinity"))
		return UINT64_MAX;
	return parse_size(s, &v) ? 0 : v;
}

/*
 * LimitMEMLOCK= for @mode: the unmapped memfd and memfd_secret are both
 * charged to RLIMIT_MEMLOCK, and libsecmem counts every arena byte.  The
 * heap mode may put all of the program's heap there: as much as the
 * configured pool may ever hold (pool_max of [global]).  The openssl and
 * sodium secure heaps are small: 64M, or pool_max if smaller.
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

/* systemd reads K, M, G (base 1024) like parse_size(). */
static void limit_string(uint64_t v, char *buf, size_t len)
{
	if (v == UINT64_MAX)
		snprintf(buf, len, "infinity");
	else
		format_size(v, buf, len);
}

int ctl_protect(FILE *out, const struct protect_env *env, const char *name,
		const struct protect_opts *o, char *err, size_t len)
{
	char unit[256], dir[PATH_MAX], file[PATH_MAX], old[4096], text[4096];
	char preload[2600], mem[SIZE_STR_MAX], prev[64] = "", v[1200];
	const char *backend;
	struct unit_info u;
	uint64_t memlock = o->memlock, theirs;
	bool nnp;
	ssize_t n;
	int r;

	r = protect_unit_name(name, unit, sizeof(unit), err, len);
	if (r)
		return r;
	if (!protect_valid_modes(o->mode)) {
		snprintf(err, len, "--mode %s: modes are openssl, sodium and heap, comma-separated",
			 o->mode ? o->mode : "");
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
	dropin_paths(env, unit, dir, file, sizeof(dir));
	n = read_file(file, old, sizeof(old));
	if (n < 0 && n != -ENOENT) {
		snprintf(err, len, "reading %s: %s", file, strerror((int)-n));
		return (int)n;
	}
	if (n >= 0 && !ours(old)) {
		snprintf(err, len, "%s exists and was not written by secmemctl (no \"%s\" line): not overwriting it",
			 file, PROTECT_MARKER);
		return -EEXIST;
	}
	if (n >= 0)
		dropin_value(old, "LimitMEMLOCK=", prev, sizeof(prev));
	r = unit_load(env, unit, &u, err, len);
	if (r)
		return r;
	/*
	 * What systemd shows includes our own drop-in: its
	 * NoNewPrivileges=yes must not excuse a set-id program now, or a
	 * re-protect without --no-new-privs would drop it and leave the
	 * program unprotected.
	 */
	if (n >= 0 && dropin_value(old, "NoNewPrivileges=", v, sizeof(v)))
		u.nnp[0] = '\0';
	r = check_programs(unit, &u, o->no_new_privs, &nnp, err, len);
	if (r)
		return r;
	if (!memlock) {
		r = default_memlock(env, o->mode, &memlock, err, len);
		if (r)
			return r;
		/* Never lower what the unit already allows (ours aside). */
		theirs = limit_bytes(u.limit_memlock);
		if (theirs > memlock && (!*prev || theirs != limit_bytes(prev))) {
			fprintf(out, "%s: keeping its LimitMEMLOCK=%s, above the %s secmemctl would set\n",
				unit, u.limit_memlock,
				format_size(memlock, mem, sizeof(mem)));
			memlock = theirs;
		}
	}
	backend = env->probe ? env->probe() : probe_backend();
	if (!backend) {
		snprintf(err, len, "%s: this kernel has no secret-memory backend (neither the unmapped memfd nor memfd_secret(2)): the preload would stop the service (status 125). Not protecting it.",
			 unit);
		return -ENOTSUP;
	}
	limit_string(memlock, mem, sizeof(mem));
	/* Another preload the unit sets stays, after ours (as secmem-run). */
	snprintf(preload, sizeof(preload), "%s", env->preload);
	if (env_value(u.environment, "LD_PRELOAD", v, sizeof(v)) &&
	    strcmp(v, env->preload)) {
		size_t k = strlen(env->preload);

		/* Ours first already (a re-protect): keep the rest. */
		if (!strncmp(v, env->preload, k) && v[k] == ':')
			snprintf(preload, sizeof(preload), "%s", v);
		else
			snprintf(preload, sizeof(preload), "%s:%s", env->preload, v);
	}
	snprintf(text, sizeof(text),
		 PROTECT_MARKER " for %s; remove it with\n"
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
	if (n >= 0 && !strcmp(old, text)) {
		fprintf(out, "%s: already protected, %s unchanged\n", unit, file);
		return 0;
	}
	r = write_file(dir, file, text, err, len);
	if (r)
		return r;
	r = daemon_reload(env, err, len, "wrote the drop-in");
	if (r) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, len, "%s: %s", file, msg);
		return r;
	}
	/* What systemd now runs the unit with: another drop-in may win. */
	r = unit_load(env, unit, &u, err, len);
	if (r)
		return r;
	if (!env_value(u.environment, "LD_PRELOAD", v, sizeof(v)) ||
	    strcmp(v, preload) ||
	    !env_value(u.environment, "SECMEM_PRELOAD_MODE", v, sizeof(v)) ||
	    strcmp(v, o->mode) || limit_bytes(u.limit_memlock) != memlock) {
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
	char unit[256], dir[PATH_MAX], file[PATH_MAX], old[4096];
	struct unit_info u;
	ssize_t n;
	int r;

	r = protect_unit_name(name, unit, sizeof(unit), err, len);
	if (r)
		return r;
	dropin_paths(env, unit, dir, file, sizeof(dir));
	n = read_file(file, old, sizeof(old));
	if (n == -ENOENT) {
		fprintf(out, "%s: not protected (no %s): nothing to do\n", unit,
			file);
		return 0;
	}
	if (n < 0) {
		snprintf(err, len, "reading %s: %s", file, strerror((int)-n));
		return (int)n;
	}
	if (!ours(old)) {
		snprintf(err, len, "%s was not written by secmemctl (no \"%s\" line): not removing it",
			 file, PROTECT_MARKER);
		return -EEXIST;
	}
	if (unlink(file) < 0) {
		r = -errno;
		snprintf(err, len, "removing %s: %s", file, strerror(-r));
		return r;
	}
	rmdir(dir);	/* only if nothing else is in it */
	r = daemon_reload(env, err, len, "removed the drop-in");
	if (r) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, len, "%s: %s", file, msg);
		return r;
	}
	fprintf(out, "%s: unprotected, %s removed\n", unit, file);
	if (!unit_load(env, unit, &u, err, len) &&
	    !strcmp(u.active_state, "active"))
		fprintf(out, "%s: running with the preload until restarted: systemctl restart %s\n",
			unit, unit);
	err[0] = '\0';
	return 0;
}

/* --- status ------------------------------------------------------------------- */

struct proc_stats {
	long pid;
	int r;				/* 0: @s valid, else -errno */
	char why[96];
	struct secmem_stats_export s;
};

/* One consistent copy of the page at @off in @fd (seq even, unchanged). */
static int read_page(int fd, off_t off, long pid, struct secmem_stats_export *s,
		     char *why, size_t len)
{
	uint32_t seq;
	int i;

	for (i = 0; i < 100; i++) {
		ssize_t n = pread(fd, s, sizeof(*s), off);

		if (n != (ssize_t)sizeof(*s))
			return n < 0 ? -errno : -EIO;
		seq = s->seq;
		if (seq & 1)
			continue;
		if (pread(fd, &seq, sizeof(seq),
			  off + (off_t)offsetof(struct secmem_stats_export, seq)) !=
		    (ssize_t)sizeof(seq))
			return -EIO;
		if (seq == s->seq)
			break;
	}
	if (i == 100) {
		snprintf(why, len, "statistics changing too fast to read");
		return -EAGAIN;
	}
	if (memcmp(s->magic, SECMEM_STATS_MAGIC, sizeof(s->magic)) ||
	    s->version != SECMEM_STATS_VERSION || s->size < sizeof(*s)) {
		snprintf(why, len, "statistics page of another format");
		return -EPROTO;
	}
	if (s->pid != pid) {
		snprintf(why, len, "statistics page of pid %ld", (long)s->pid);
		return -ESRCH;
	}
	s->backend_name[sizeof(s->backend_name) - 1] = '\0';
	return 0;
}

/* The page the preload of @pid maps (stats_export.h), through /proc. */
static void proc_read(const struct protect_env *env, struct proc_stats *p)
{
	char path[PATH_MAX], line[512], range[64] = "";
	unsigned long long start = 0;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/%ld/maps", env->proc, p->pid);
	f = fopen(path, "re");
	if (!f) {
		p->r = -errno;
		snprintf(p->why, sizeof(p->why), "%s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/memfd:" SECMEM_STATS_NAME " (deleted)"))
			continue;
		snprintf(range, sizeof(range), "%.*s", (int)strcspn(line, " "),
			 line);
		start = strtoull(range, NULL, 16);
		break;
	}
	fclose(f);
	if (!*range) {
		p->r = -ENOENT;
		snprintf(p->why, sizeof(p->why), "no statistics (not preloaded, or no allocation yet)");
		return;
	}
	/* map_files needs CAP_SYS_ADMIN; /proc/PID/mem ptrace access. */
	snprintf(path, sizeof(path), "%s/%ld/map_files/%s", env->proc, p->pid,
		 range);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		p->r = read_page(fd, 0, p->pid, &p->s, p->why, sizeof(p->why));
	} else {
		snprintf(path, sizeof(path), "%s/%ld/mem", env->proc, p->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			p->r = -errno;
			snprintf(p->why, sizeof(p->why), "/proc/%ld/mem: %s",
				 p->pid, strerror(errno));
			return;
		}
		p->r = read_page(fd, (off_t)start, p->pid, &p->s, p->why,
				 sizeof(p->why));
	}
	if (p->r && !*p->why)
		snprintf(p->why, sizeof(p->why), "%s", strerror(-p->r));
	close(fd);
}

/* The pids in cgroup @dir and below (a delegated subtree has children). */
static void cgroup_pids(const char *dir, long *pids, int *n, int depth)
{
	char path[PATH_MAX], line[32];
	struct dirent *d;
	DIR *dh;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f) {
		while (*n < MAX_PIDS && fgets(line, sizeof(line), f))
			if (atol(line) > 0)
				pids[(*n)++] = atol(line);
		fclose(f);
	}
	if (depth > 8 || !(dh = opendir(dir)))
		return;
	while ((d = readdir(dh))) {
		struct stat st;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			cgroup_pids(path, pids, n, depth + 1);
	}
	closedir(dh);
}

struct unit_status {
	char unit[256];
	char mode[64];
	char memlock[32];
	char file[PATH_MAX];
	char state[32];
	char why[256];			/* why the state is unknown */
	int npids;
	struct proc_stats p[MAX_PIDS];
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The units with a drop-in of ours, sorted; -errno if @dir is unreadable. */
static int list_units(const struct protect_env *env, char **names, int *count)
{
	struct dirent *d;
	DIR *dh;

	*count = 0;
	dh = opendir(env->unit_dir);
	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dh)) && *count < MAX_UNITS) {
		char path[PATH_MAX], text[256];
		size_t n = strlen(d->d_name);

		if (n < 10 || !has_suffix(d->d_name, ".service.d"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/" PROTECT_DROPIN,
			 env->unit_dir, d->d_name);
		if (read_file(path, text, sizeof(text)) < 0 || !ours(text))
			continue;
		names[*count] = strndup(d->d_name, n - 2);
		if (names[*count])
			(*count)++;
	}
	closedir(dh);
	qsort(names, (size_t)*count, sizeof(*names), cmp_names);
	return 0;
}

/* The instances of template @unit that systemd has loaded. */
static int instances(const struct protect_env *env, const char *unit,
		     char out[][256], int max)
{
	char pattern[300], *buf, errout[256], *line, *save = NULL;
	char *argv[] = { (char *)env->systemctl, "list-units", "--all",
			 "--plain", "--no-legend", "--full", "--no-pager",
			 pattern, NULL };
	int n = 0;

	snprintf(pattern, sizeof(pattern), "%.*s@*.service",
		 (int)(strlen(unit) - 9), unit);
	buf = malloc(OUT_MAX);
	if (!buf)
		return 0;
	if (run(argv, buf, OUT_MAX, errout, sizeof(errout)) == 0) {
		for (line = strtok_r(buf, "\n", &save); line && n < max;
		     line = strtok_r(NULL, "\n", &save)) {
			line += strspn(line, " ");
			snprintf(out[n++], 256, "%.*s", (int)strcspn(line, " "),
				 line);
		}
	}
	free(buf);
	return n;
}

static void unit_processes(const struct protect_env *env,
			   struct unit_status *us)
{
	char names[16][256], path[PATH_MAX * 2];
	long pids[MAX_PIDS] = { 0 };
	int i, k = 0, n = 1;
	struct unit_info u;

	if (is_template(us->unit))
		n = instances(env, us->unit, names, 16);
	else
		snprintf(names[0], sizeof(names[0]), "%s", us->unit);
	snprintf(us->state, sizeof(us->state), "%s", n ? "inactive" : "no instance");
	for (i = 0; i < n; i++) {
		if (unit_show(env, names[i], &u, us->why, sizeof(us->why))) {
			snprintf(us->state, sizeof(us->state), "unknown");
			return;
		}
		if (!is_template(us->unit) || !strcmp(u.active_state, "active"))
			snprintf(us->state, sizeof(us->state), "%s",
				 u.active_state);
		if (!*u.cgroup)
			continue;
		snprintf(path, sizeof(path), "%s%s", env->cgroup, u.cgroup);
		cgroup_pids(path, pids, &k, 0);
	}
	for (i = 0; i < k && us->npids < MAX_PIDS; i++) {
		struct proc_stats *p = &us->p[us->npids++];

		memset(p, 0, sizeof(*p));
		p->pid = pids[i];
		proc_read(env, p);
	}
}

static void print_unit_json(FILE *out, const struct unit_status *us)
{
	int i;

	fprintf(out, "{\"unit\":");
	json_string(out, us->unit);
	fprintf(out, ",\"mode\":");
	json_string(out, us->mode);
	fprintf(out, ",\"memlock\":%" PRIu64 ",\"dropin\":",
		limit_bytes(us->memlock));
	json_string(out, us->file);
	fprintf(out, ",\"state\":");
	json_string(out, us->state);
	fprintf(out, ",\"processes\":[");
	for (i = 0; i < us->npids; i++) {
		const struct proc_stats *p = &us->p[i];
		const struct secmem_stats_export *s = &p->s;

		fprintf(out, "%s{\"pid\":%ld", i ? "," : "", p->pid);
		if (p->r) {
			fprintf(out, ",\"stats\":null,\"error\":");
			json_string(out, p->why);
			fputc('}', out);
			continue;
		}
		fprintf(out, ",\"backend\":");
		json_string(out, s->backend_name);
		fprintf(out,
			",\"bytes_in_use\":%" PRIu64
			",\"peak_bytes_in_use\":%" PRIu64
			",\"bytes_mapped\":%" PRIu64
			",\"memlock_charged\":%" PRIu64
			",\"allocations\":%" PRIu64 ",\"arenas\":%" PRIu64
			",\"updated_ns\":%" PRIu64 "}",
			s->bytes_in_use, s->peak_bytes_in_use, s->bytes_mapped,
			s->memlock_charged, s->allocations, s->arenas,
			s->updated_ns);
	}
	fprintf(out, "]}");
}

static void print_unit_table(FILE *out, const struct unit_status *us)
{
	struct timespec now;
	int i;

	clock_gettime(CLOCK_REALTIME, &now);
	if (!us->npids) {
		fprintf(out, "%-32s %-16s %-8s %-10s %s\n", us->unit, us->mode,
			us->memlock, us->state,
			*us->why ? us->why : "no processes");
		return;
	}
	for (i = 0; i < us->npids; i++) {
		const struct proc_stats *p = &us->p[i];
		const struct secmem_stats_export *s = &p->s;
		uint64_t ns = (uint64_t)now.tv_sec * 1000000000 +
			      (uint64_t)now.tv_nsec;

		fprintf(out, "%-32s %-16s %-8s %-10s %-8ld ", us->unit,
			us->mode, us->memlock, us->state, p->pid);
		if (p->r)
			fprintf(out, "(%s)\n", p->why);
		else
			fprintf(out, "%-15s %12" PRIu64 " %12" PRIu64 " %12" PRIu64
				" %5" PRIu64 "s\n",
				s->backend_name, s->bytes_in_use,
				s->peak_bytes_in_use, s->bytes_mapped,
				ns > s->updated_ns ?
					(ns - s->updated_ns) / 1000000000 : 0);
	}
}

int ctl_units(FILE *out, const struct protect_env *env, bool json, char *err,
	      size_t len)
{
	char *names[MAX_UNITS];
	struct unit_status *us;
	int i, n, r;

	r = list_units(env, names, &n);
	if (r) {
		snprintf(err, len, "%s: %s", env->unit_dir, strerror(-r));
		return r;
	}
	us = malloc(sizeof(*us));
	if (!us) {
		for (i = 0; i < n; i++)
			free(names[i]);
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	if (json)
		fputc('[', out);
	else if (n)
		fprintf(out, "%-32s %-16s %-8s %-10s %-8s %-15s %12s %12s %12s %6s\n",
			"UNIT", "MODE", "MEMLOCK", "STATE", "PID", "BACKEND",
			"IN_USE", "PEAK", "MAPPED", "AGE");
	else
		fprintf(out, "no unit protected (secmemctl protect UNIT)\n");
	for (i = 0; i < n; i++) {
		char text[4096];

		memset(us, 0, sizeof(*us));
		snprintf(us->unit, sizeof(us->unit), "%s", names[i]);
		snprintf(us->file, sizeof(us->file), "%s/%s.d/" PROTECT_DROPIN,
			 env->unit_dir, names[i]);
		if (read_file(us->file, text, sizeof(text)) >= 0) {
			dropin_value(text, "Environment=SECMEM_PRELOAD_MODE=",
				     us->mode, sizeof(us->mode));
			dropin_value(text, "LimitMEMLOCK=", us->memlock,
				     sizeof(us->memlock));
		}
		unit_processes(env, us);
		if (json) {
			if (i)
				fputc(',', out);
			print_unit_json(out, us);
		} else {
			print_unit_table(out, us);
		}
		free(names[i]);
	}
	if (json)
		fputc(']', out);
	free(us);
	return ferror(out) ? -EIO : 0;
}
