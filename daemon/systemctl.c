// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemctl's output, read: `systemctl show -p NAME...` prints one
 * NAME=VALUE line per property, ExecStart= as "{ path=/usr/bin/x ;
 * argv[]=... }" groups, Environment= as blank-separated assignments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subprocess.h"
#include "systemctl.h"
#include "units.h"

#define SYSTEMCTL_OUT_MAX 65536

static void copy_value(char *dst, size_t len, const char *v)
{
	snprintf(dst, len, "%s", v);
}

/* ExecStart={ path=/usr/bin/x ; argv[]=... } (one or more per line). */
static void parse_exec(struct unit_info *u, const char *v)
{
	const char *p = v;

	while ((p = strstr(p, "path=")) && u->nexec < UNIT_MAX_EXEC) {
		size_t n;

		p += 5;
		n = strcspn(p, " ;}");
		snprintf(u->exec[u->nexec++], PATH_MAX, "%.*s", (int)n, p);
		p += n;
	}
}

int systemctl_show(const char *systemctl, const char *unit, struct unit_info *u,
		   char *err, size_t len)
{
	char *argv[] = { (char *)systemctl, "show", "--no-pager",
			 "-p", "LoadState", "-p", "ActiveState",
			 "-p", "User", "-p", "Group", "-p", "NoNewPrivileges",
			 "-p", "LimitMEMLOCK", "-p", "Environment",
			 "-p", "ControlGroup", "-p", "ExecStart",
			 (char *)unit, NULL };
	char *out, errout[512], *line, *save = NULL;
	int r;

	memset(u, 0, sizeof(*u));
	out = malloc(SYSTEMCTL_OUT_MAX);
	if (!out) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	r = subprocess_run(argv, out, SYSTEMCTL_OUT_MAX, errout, sizeof(errout));
	if (r) {
		if (r < 0)
			snprintf(err, len, "running %s: %s", systemctl,
				 strerror(-r));
		else
			snprintf(err, len, "%s show %s failed (status %d)%s%s",
				 systemctl, unit, r, *errout ? ": " : "",
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
int systemctl_load(const char *systemctl, const char *unit, struct unit_info *u,
		   char *err, size_t len)
{
	char probe[300];
	int r;

	if (unit_is_template(unit))
		snprintf(probe, sizeof(probe), "%.*s@secmemctl-check.service",
			 (int)(strlen(unit) - 9), unit);
	else
		snprintf(probe, sizeof(probe), "%s", unit);
	r = systemctl_show(systemctl, probe, u, err, len);
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

int systemctl_daemon_reload(const char *systemctl, char *err, size_t len,
			    const char *what)
{
	char *argv[] = { (char *)systemctl, "daemon-reload", NULL };
	char out[256], errout[512];
	int r = subprocess_run(argv, out, sizeof(out), errout, sizeof(errout));

	if (!r)
		return 0;
	if (r < 0)
		snprintf(err, len, "%s, but running %s daemon-reload failed: %s; "
			 "systemd goes on with the old settings until it reloads",
			 what, systemctl, strerror(-r));
	else
		snprintf(err, len, "%s, but %s daemon-reload failed (status %d%s%s); "
			 "systemd goes on with the old settings until it reloads",
			 what, systemctl, r, *errout ? ": " : "", errout);
	return -EIO;
}

int systemctl_instances(const char *systemctl, const char *unit,
			char out[][UNIT_NAME_MAX], int max)
{
	char pattern[300], *buf, errout[256], *line, *save = NULL;
	char *argv[] = { (char *)systemctl, "list-units", "--all",
			 "--plain", "--no-legend", "--full", "--no-pager",
			 pattern, NULL };
	int n = 0;

	snprintf(pattern, sizeof(pattern), "%.*s@*.service",
		 (int)(strlen(unit) - 9), unit);
	buf = malloc(SYSTEMCTL_OUT_MAX);
	if (!buf)
		return 0;
	if (subprocess_run(argv, buf, SYSTEMCTL_OUT_MAX, errout, sizeof(errout)) == 0) {
		for (line = strtok_r(buf, "\n", &save); line && n < max;
		     line = strtok_r(NULL, "\n", &save)) {
			line += strspn(line, " ");
			snprintf(out[n++], UNIT_NAME_MAX, "%.*s", (int)strcspn(line, " "),
				 line);
		}
	}
	free(buf);
	return n;
}

bool systemctl_env_value(const char *env, const char *name, char *v,
			 size_t len)
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

uint64_t systemd_limit_bytes(const char *s)
{
	uint64_t v;

	if (!strcmp(s, "infinity"))
		return UINT64_MAX;
	return parse_size(s, &v) ? 0 : v;
}

/* systemd reads K, M, G (base 1024) as parse_size() does. */
void systemd_limit_string(uint64_t v, char *buf, size_t len)
{
	if (v == UINT64_MAX)
		snprintf(buf, len, "infinity");
	else
		format_size(v, buf, len);
}
