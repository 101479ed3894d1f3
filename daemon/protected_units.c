// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The protected units of secmemctl status: found by their drop-ins
 * (dropin.c), their processes by their cgroups (a template's through its
 * loaded instances), and each process's figures in the page its preload
 * maps (stats_page.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dropin.h"
#include "json.h"
#include "protect.h"
#include "stats_page.h"
#include "systemctl.h"

#define MAX_UNITS 256
#define MAX_PIDS 256

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

static void unit_processes(const struct protect_env *env,
			   struct unit_status *us)
{
	char names[16][UNIT_NAME_MAX], path[PATH_MAX * 2];
	long pids[MAX_PIDS] = { 0 };
	int i, k = 0, n = 1;
	struct unit_info u;

	if (unit_is_template(us->unit))
		n = systemctl_instances(env->systemctl, us->unit, names, 16);
	else
		snprintf(names[0], sizeof(names[0]), "%s", us->unit);
	snprintf(us->state, sizeof(us->state), "%s", n ? "inactive" : "no instance");
	for (i = 0; i < n; i++) {
		if (systemctl_show(env->systemctl, names[i], &u, us->why,
				   sizeof(us->why))) {
			snprintf(us->state, sizeof(us->state), "unknown");
			return;
		}
		if (!unit_is_template(us->unit) || !strcmp(u.active_state, "active"))
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
		stats_page_read(env->proc, p);
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
		systemd_limit_bytes(us->memlock));
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

int ctl_units(FILE *out, const struct protect_env *env, bool json,
	      bool legend, char *err, size_t len)
{
	char *names[MAX_UNITS];
	struct unit_status *us;
	int i, n, r;

	r = dropin_list_units(env->unit_dir, names, MAX_UNITS, &n);
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
	else if (legend && n)
		fprintf(out, "%-32s %-16s %-8s %-10s %-8s %-15s %12s %12s %12s %6s\n",
			"UNIT", "MODE", "MEMLOCK", "STATE", "PID", "BACKEND",
			"IN_USE", "PEAK", "MAPPED", "AGE");
	else if (legend)
		fprintf(out, "no unit protected (secmemctl protect UNIT)\n");
	for (i = 0; i < n; i++) {
		char text[4096];

		memset(us, 0, sizeof(*us));
		snprintf(us->unit, sizeof(us->unit), "%s", names[i]);
		if (!dropin_find(env->unit_dir, names[i], us->file,
				 sizeof(us->file), text, sizeof(text))) {
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
