// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmemctl protect / unprotect / status of the protected units, against
 * a temporary unit directory, fake-systemctl.sh as systemctl, and fake
 * /proc and cgroup trees.  The real-process side (a preloaded program's
 * statistics page read through the real /proc) is in
 * tests/unit/preload/test.sh.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "fake_sysfs.h"
#include "mode_list.h"
#include "protect.h"
#include "secmem.h"
#include "stats_export.h"

static char dir[PATH_MAX];
static char unit_dir[PATH_MAX + 16], preload[PATH_MAX + 32];
static char config[PATH_MAX + 16], proc[PATH_MAX + 16], cgroup[PATH_MAX + 16];
static char err[1024];
static struct protect_env env;
static char *out;
static size_t outlen;
static FILE *outf;

/* fake_write() of @rel under the temporary directory, parents created. */
static void put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2], *p;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	fake_write(dir, rel, text);
}

static const char *have_backend(void)
{
	return "unmapped-memfd";
}

static const char *no_backend(void)
{
	return NULL;
}

#define EXEC_LINE(p) \
	"ExecStart={ path=" p " ; argv[]=" p " -D ; ignore_errors=no ; " \
	"start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n"

/* units/NAME for fake-systemctl.sh: a loaded, running unit. */
static void unit(const char *name, const char *exec, const char *extra)
{
	char rel[512], text[16384];

	snprintf(rel, sizeof(rel), "units/%s", name);
	snprintf(text, sizeof(text),
		 "LoadState=loaded\nActiveState=active\nUser=\nGroup=\n"
		 "NoNewPrivileges=no\nEnvironment=LANG=C.UTF-8\n"
		 "ControlGroup=/system.slice/%s\n" EXEC_LINE("%s") "%s",
		 name, exec, exec, extra ? extra : "");
	put(rel, text);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/secmem-protect-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(unit_dir, sizeof(unit_dir), "%s/unit-dir", dir);
	snprintf(preload, sizeof(preload), "%s/lib/secmem/libsecmem-preload.so",
		 dir);
	snprintf(config, sizeof(config), "%s/secmem.conf", dir);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(cgroup, sizeof(cgroup), "%s/cgroup", dir);
	ck_assert_int_eq(mkdir(unit_dir, 0755), 0);
	put("lib/secmem/libsecmem-preload.so", "");
	setenv("FAKE_SYSTEMD", dir, 1);
	env = (struct protect_env){
		.unit_dir = unit_dir,
		.systemctl = SRC_TOP "/tests/unit/daemon/fake-systemctl.sh",
		.preload = preload,
		.config = config,
		.proc = proc,
		.cgroup = cgroup,
		.probe = have_backend,
	};
	unit("foo.service", "/bin/true", NULL);
	out = NULL;
	outf = open_memstream(&out, &outlen);
	err[0] = '\0';
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	fclose(outf);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *output(void)
{
	fflush(outf);
	return out ? out : "";
}

static const char *slurp_rel(const char *rel)
{
	static char buf[8192];

	return fake_read(dir, rel, buf, sizeof(buf));
}

static bool exists(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return access(path, F_OK) == 0;
}

/* How many lines of fake-systemctl's log are exactly @line. */
static int calls(const char *line)
{
	char path[PATH_MAX + 8], buf[1024];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/log", dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		n += !strcmp(buf, line);
	}
	fclose(f);
	return n;
}

static int protect(const char *name, const char *mode, uint64_t memlock,
		   bool nnp)
{
	struct protect_opts o = { .mode = mode, .memlock = memlock,
				  .no_new_privs = nnp };

	return ctl_protect(outf, &env, name, &o, err, sizeof(err));
}

#define DROPIN "unit-dir/foo.service.d/50-secmem-preload.conf"
/* The name an older secmemctl gave it, beside /etc/secmem.conf's. */
#define LEGACY "unit-dir/foo.service.d/secmem.conf"

START_TEST(unit_names)
{
	char n[256];

	ck_assert_int_eq(protect_unit_name("foo", n, sizeof(n), err, sizeof(err)), 0);
	ck_assert_str_eq(n, "foo.service");
	ck_assert_int_eq(protect_unit_name("ssh-agent.service", n, sizeof(n), err, sizeof(err)), 0);
	ck_assert_str_eq(n, "ssh-agent.service");
	ck_assert_int_eq(protect_unit_name("getty@tty1", n, sizeof(n), err, sizeof(err)), 0);
	ck_assert_str_eq(n, "getty@tty1.service");
	ck_assert_int_eq(protect_unit_name("getty@.service", n, sizeof(n), err, sizeof(err)), 0);
	ck_assert_str_eq(n, "getty@.service");
	ck_assert_int_eq(protect_unit_name("sshd.socket", n, sizeof(n), err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "sshd.socket: only service units run programs that the preload can protect");
	ck_assert_int_eq(protect_unit_name("../etc/passwd", n, sizeof(n), err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(protect_unit_name("a b", n, sizeof(n), err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(protect_unit_name("", n, sizeof(n), err, sizeof(err)), -EINVAL);
	ck_assert(protect_valid_modes("openssl,sodium,heap"));
	ck_assert(!protect_valid_modes(","));
	ck_assert(!protect_valid_modes("hep"));
	ck_assert(!protect_valid_modes(""));
}
END_TEST

START_TEST(protect_writes_the_dropin_and_reloads)
{
	char want[8192];

	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	snprintf(want, sizeof(want),
		 "# Written by secmemctl protect for foo.service; remove it with\n"
		 "# `secmemctl unprotect foo.service`.  secmemctl(8) overwrites changes made here.\n"
		 "# libsecmem-preload puts the heap allocations of the service in secret\n"
		 "# memory (backend unmapped-memfd when this was written); LimitMEMLOCK= lets the\n"
		 "# memory lock accounting of that memory reach 256M.\n"
		 "[Service]\n"
		 "Environment=LD_PRELOAD=%s\n"
		 "Environment=SECMEM_PRELOAD_MODE=heap\n"
		 "LimitMEMLOCK=256M",
		 preload);
	ck_assert_str_eq(slurp_rel(DROPIN), want);
	ck_assert_int_eq(calls("daemon-reload"), 1);
	ck_assert_msg(strstr(output(), "foo.service: protected (mode heap, LimitMEMLOCK=256M)"),
		      "%s", output());
	ck_assert_msg(strstr(output(), "running without it until restarted: systemctl restart foo.service"),
		      "%s", output());
	/* The same again: nothing written, no reload. */
	ck_assert_int_eq(protect("foo.service", "heap", 0, false), 0);
	ck_assert_int_eq(calls("daemon-reload"), 1);
	ck_assert_msg(strstr(output(), "foo.service: already protected"), "%s", output());
	/* Another mode: rewritten; the secure heaps get 64M. */
	ck_assert_int_eq(protect("foo", "openssl,sodium", 0, false), 0);
	ck_assert_int_eq(calls("daemon-reload"), 2);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nEnvironment=SECMEM_PRELOAD_MODE=openssl,sodium\nLimitMEMLOCK=64M"));
	ck_assert_ptr_null(strstr(slurp_rel(DROPIN), "NoNewPrivileges"));
}
END_TEST

START_TEST(protect_keeps_another_preload_after_ours)
{
	char want[PATH_MAX * 2];

	unit("bar.service", "/bin/true", NULL);
	put("units/bar.service",
		   "LoadState=loaded\nActiveState=inactive\nUser=\nGroup=\n"
		   "Environment=LD_PRELOAD=/usr/lib/libjemalloc.so.2\n"
		   EXEC_LINE("/bin/true"));
	ck_assert_int_eq(protect("bar", "openssl", 0, false), 0);
	snprintf(want, sizeof(want), "\nEnvironment=LD_PRELOAD=%s:/usr/lib/libjemalloc.so.2\n",
		 preload);
	ck_assert_msg(strstr(slurp_rel("unit-dir/bar.service.d/50-secmem-preload.conf"), want),
		      "%s", slurp_rel("unit-dir/bar.service.d/50-secmem-preload.conf"));
	ck_assert_msg(!strstr(output(), "restart"), "inactive: %s", output());
	/* Re-protecting in another mode keeps it (systemd now shows ours:it). */
	ck_assert_int_eq(protect("bar", "heap", 0, false), 0);
	ck_assert_msg(strstr(slurp_rel("unit-dir/bar.service.d/50-secmem-preload.conf"), want),
		      "%s", slurp_rel("unit-dir/bar.service.d/50-secmem-preload.conf"));
}
END_TEST

START_TEST(memlock_follows_the_pool)
{
	put("secmem.conf", "[global]\npool_max = 128M\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nLimitMEMLOCK=128M"));
	put("secmem.conf", "[global]\npool_target = 4M\nwatermark_low = 1M\n"
	    "watermark_high = 8M\ngrow_step = 4M\npool_max = 16M\n");
	ck_assert_int_eq(protect("foo", "openssl", 0, false), 0);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nLimitMEMLOCK=16M"));
	/* --memlock wins over the pool. */
	ck_assert_int_eq(protect("foo", "heap", UINT64_C(1) << 30, false), 0);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nLimitMEMLOCK=1G"));
}
END_TEST

START_TEST(memlock_too_low_is_refused)
{
	ck_assert_int_eq(protect("foo", "heap", 512 << 10, false), -EINVAL);
	ck_assert_str_eq(err, "--memlock 512K: a memory lock limit below one libsecmem arena (1M) makes every secret allocation fail");
	put("secmem.conf", "[global]\npool_target = 0\nwatermark_low = 0\n"
	    "watermark_high = 0\ngrow_step = 512K\npool_max = 512K\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EINVAL);
	ck_assert_msg(strstr(err, "pool_max in ") && strstr(err, "is 512K: a memory lock limit that low is below one libsecmem arena (1M)"),
		      "%s", err);
	put("secmem.conf", "[global]\npool_max = lots\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EINVAL);
	ck_assert_msg(strstr(err, "secmem.conf:2: pool_max"), "%s", err);
	ck_assert(!exists(DROPIN));
	ck_assert_int_eq(calls("daemon-reload"), 0);
}
END_TEST

START_TEST(memlock_of_the_unit_is_not_lowered)
{
	unit("foo.service", "/bin/true", "LimitMEMLOCK=1073741824\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nLimitMEMLOCK=1G"));
	ck_assert_msg(strstr(output(), "keeping its LimitMEMLOCK=1073741824, above the 256M secmemctl would set"),
		      "%s", output());
}
END_TEST

START_TEST(refusals_write_nothing)
{
	char elf[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	char path[PATH_MAX + 16], cmd[PATH_MAX * 3];
	FILE *f;

	/* Unknown unit. */
	ck_assert_int_eq(protect("nope", "heap", 0, false), -ENOENT);
	ck_assert_str_eq(err, "nope.service: no such unit (systemd has no unit file for it)");
	/* Masked. */
	put("units/masked.service", "LoadState=masked\n");
	ck_assert_int_eq(protect("masked", "heap", 0, false), -EPERM);
	/* A statically linked program: ELF without PT_INTERP. */
	snprintf(path, sizeof(path), "%s/static-prog", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite(elf, 1, sizeof(elf), f), sizeof(elf));
	fclose(f);
	chmod(path, 0755);
	unit("foo.service", path, NULL);
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EINVAL);
	ck_assert_msg(strstr(err, "is statically linked: LD_PRELOAD cannot interpose its allocator"),
		      "%s", err);
	/* ... also behind a #! script. */
	snprintf(cmd, sizeof(cmd), "printf '#!%s -x\\necho\\n' > %s/script", path, dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/script", dir);
	unit("foo.service", path, NULL);
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EINVAL);
	ck_assert_msg(strstr(err, "static-prog is statically linked"), "%s", err);
	/* A program that does not exist. */
	unit("foo.service", "/nonexistent/prog", NULL);
	ck_assert_int_eq(protect("foo", "heap", 0, false), -ENOENT);
	ck_assert_str_eq(err, "foo.service: ExecStart= program /nonexistent/prog: No such file or directory");
	/* No backend on this kernel. */
	unit("foo.service", "/bin/true", NULL);
	env.probe = no_backend;
	ck_assert_int_eq(protect("foo", "heap", 0, false), -ENOTSUP);
	ck_assert_msg(strstr(err, "this kernel has no secret-memory backend"), "%s", err);
	env.probe = have_backend;
	/* No preload library. */
	env.preload = "/nonexistent/libsecmem-preload.so";
	ck_assert_int_eq(protect("foo", "heap", 0, false), -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/libsecmem-preload.so: No such file or directory (is libsecmem-preload installed?)");
	ck_assert(!exists("unit-dir/foo.service.d"));
	ck_assert(!exists("unit-dir/nope.service.d"));
	ck_assert_int_eq(calls("daemon-reload"), 0);
}
END_TEST

/* A copy of /bin/true that is set-group-ID to a group other than root's. */
static void setgid_prog(char *path, size_t len)
{
	char cmd[PATH_MAX * 2];

	snprintf(path, len, "%s/sgid-true", dir);
	snprintf(cmd, sizeof(cmd), "cp /bin/true %s", path);
	ck_assert_int_eq(system(cmd), 0);
	if (getegid() == 0)
		ck_assert_int_eq(chown(path, (uid_t)-1, 4242), 0);
	ck_assert_int_eq(chmod(path, 02755), 0);
}

START_TEST(setid_programs_need_no_new_privs)
{
	char path[PATH_MAX + 16], extra[128];
	struct stat st;

	setgid_prog(path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	unit("foo.service", path, NULL);
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EPERM);
	ck_assert_msg(strstr(err, "is set-group-ID (group ") &&
		      strstr(err, "the dynamic loader ignores LD_PRELOAD for it") &&
		      strstr(err, "--no-new-privs adds NoNewPrivileges=yes"),
		      "%s", err);
	ck_assert(!exists(DROPIN));
	ck_assert_int_eq(protect("foo", "heap", 0, true), 0);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nNoNewPrivileges=yes"));
	/* Our own NoNewPrivileges=yes (systemd shows it) excuses nothing. */
	ck_assert_int_eq(protect("foo", "openssl", 0, false), -EPERM);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nNoNewPrivileges=yes"));
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "SECMEM_PRELOAD_MODE=heap"));
	ck_assert_int_eq(protect("foo", "openssl", 0, true), 0);
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nNoNewPrivileges=yes"));
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	/* The unit already runs it without privileges (the last line wins). */
	unit("foo.service", path, "NoNewPrivileges=yes\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert_ptr_null(strstr(slurp_rel(DROPIN), "NoNewPrivileges"));
	/* Group= the program's group: exec gains nothing. */
	snprintf(extra, sizeof(extra), "Group=%ld\n", (long)st.st_gid);
	unit("baz.service", path, extra);
	ck_assert_int_eq(protect("baz", "heap", 0, false), 0);
}
END_TEST

START_TEST(foreign_dropin_is_left_alone)
{
	put(DROPIN, "[Service]\nEnvironment=FOO=1\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EEXIST);
	ck_assert_msg(strstr(err, "50-secmem-preload.conf exists and was not written by secmemctl"),
		      "%s", err);
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), -EEXIST);
	ck_assert_str_eq(slurp_rel(DROPIN), "[Service]\nEnvironment=FOO=1");
	ck_assert_int_eq(calls("daemon-reload"), 0);
}
END_TEST

START_TEST(reload_failure_is_an_error)
{
	put("reload-fails", "");
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EIO);
	ck_assert_msg(strstr(err, "wrote the drop-in, but ") &&
		      strstr(err, "daemon-reload failed (status 1: Failed to reload daemon: Access denied); systemd goes on with the old settings"),
		      "%s", err);
	unlink(strcat(strcpy(err, dir), "/reload-fails"));
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	put("reload-fails", "");
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), -EIO);
	ck_assert_msg(strstr(err, "removed the drop-in, but "), "%s", err);
}
END_TEST

START_TEST(an_overriding_dropin_is_detected)
{
	put("unit-dir/foo.service.d/zz-local.conf",
		   "[Service]\nEnvironment=SECMEM_PRELOAD_MODE=openssl\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), -EEXIST);
	ck_assert_msg(strstr(err, "written and reloaded, but systemd does not run the unit with it") &&
		      strstr(err, "SECMEM_PRELOAD_MODE=openssl"),
		      "%s", err);
}
END_TEST

START_TEST(unprotect_removes_and_is_idempotent)
{
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	ck_assert(!exists(DROPIN));
	ck_assert(!exists("unit-dir/foo.service.d"));
	ck_assert_int_eq(calls("daemon-reload"), 2);
	ck_assert_msg(strstr(output(), "foo.service: unprotected, "), "%s", output());
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	ck_assert_msg(strstr(output(), "foo.service: not protected (no "), "%s", output());
	ck_assert_int_eq(calls("daemon-reload"), 2);
	/* Another drop-in of the admin's in the directory stays. */
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	put("unit-dir/foo.service.d/local.conf", "[Service]\n");
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	ck_assert(exists("unit-dir/foo.service.d/local.conf"));
}
END_TEST

/* A drop-in as an older secmemctl wrote it, under the legacy name. */
static void legacy_dropin(const char *rel, const char *mode, bool nnp)
{
	char text[PATH_MAX + 512];

	snprintf(text, sizeof(text),
		 "# Written by secmemctl protect for foo.service; remove it with\n"
		 "# `secmemctl unprotect foo.service`.  secmemctl(8) overwrites changes made here.\n"
		 "[Service]\n"
		 "Environment=LD_PRELOAD=%s\n"
		 "Environment=SECMEM_PRELOAD_MODE=%s\n"
		 "LimitMEMLOCK=256M\n%s",
		 preload, mode, nnp ? "NoNewPrivileges=yes\n" : "");
	put(rel, text);
}

/*
 * UNIT.d/secmem.conf, the name older versions used: protect moves it to
 * 50-secmem-preload.conf, unprotect removes it, status lists it, and an
 * administrator's file of that name is none of secmemctl's business.
 */
START_TEST(legacy_dropin_is_migrated)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	legacy_dropin(LEGACY, "openssl", false);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_units(f, &env, false, true, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\nfoo.service                      openssl          256M     active"),
		      "%s", buf);
	free(buf);

	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert(exists(DROPIN));
	ck_assert(!exists(LEGACY));
	ck_assert_ptr_nonnull(strstr(slurp_rel(DROPIN), "\nEnvironment=SECMEM_PRELOAD_MODE=heap\n"));
	ck_assert_int_eq(calls("daemon-reload"), 1);
	ck_assert_msg(strstr(output(), "foo.service: removed " ) &&
		      strstr(output(), "/foo.service.d/secmem.conf, the drop-in's old name\n"),
		      "%s", output());
	/* Both names: the old one goes even when the new one is current. */
	legacy_dropin(LEGACY, "heap", false);
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert(!exists(LEGACY));
	ck_assert_int_eq(calls("daemon-reload"), 2);

	/* unprotect: the legacy drop-in alone, then both. */
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	legacy_dropin(LEGACY, "heap", false);
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	ck_assert(!exists(LEGACY));
	ck_assert(!exists("unit-dir/foo.service.d"));
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	legacy_dropin(LEGACY, "heap", false);
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	ck_assert(!exists(DROPIN));
	ck_assert(!exists(LEGACY));

	/* An administrator's secmem.conf: left alone, in the way of nothing. */
	put(LEGACY, "[Service]\nEnvironment=FOO=1\n");
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert_str_eq(slurp_rel(LEGACY), "[Service]\nEnvironment=FOO=1");
	ck_assert_int_eq(ctl_unprotect(outf, &env, "foo", err, sizeof(err)), 0);
	ck_assert(!exists(DROPIN));
	ck_assert_str_eq(slurp_rel(LEGACY), "[Service]\nEnvironment=FOO=1");
}
END_TEST

/* The legacy drop-in's NoNewPrivileges=yes excuses a set-id program no more than ours. */
START_TEST(legacy_dropin_nnp_is_not_an_excuse)
{
	char path[PATH_MAX + 16];

	setgid_prog(path, sizeof(path));
	unit("foo.service", path, NULL);
	legacy_dropin(LEGACY, "heap", true);
	ck_assert_int_eq(protect("foo", "heap", 0, true), 0);
	ck_assert(!exists(LEGACY));
	/* systemd has loaded it: the merged NoNewPrivileges=yes is ours. */
	legacy_dropin(LEGACY, "heap", true);
	ck_assert_int_eq(unlink(strcat(strcpy(path, dir), "/" DROPIN)), 0);
	ck_assert_int_eq(protect("foo", "openssl", 0, false), -EPERM);
	ck_assert(exists(LEGACY));
	ck_assert(!exists(DROPIN));
}
END_TEST

START_TEST(templates_are_checked_through_an_instance)
{
	unit("agent@.service", "/bin/true", NULL);
	ck_assert_int_eq(protect("agent@.service", "heap", 0, false), 0);
	ck_assert(exists("unit-dir/agent@.service.d/50-secmem-preload.conf"));
	ck_assert_int_ge(calls("show --no-pager -p LoadState -p ActiveState -p User -p Group -p NoNewPrivileges -p LimitMEMLOCK -p Environment -p ControlGroup -p ExecStart agent@secmemctl-check.service"),
			 1);
}
END_TEST

/* A process as fake /proc shows it, with the page its preload exports. */
static void fake_process(long pid, long page_pid, uint64_t in_use)
{
	struct secmem_stats_export e = { .version = SECMEM_STATS_VERSION,
					 .size = sizeof(e), .seq = 4,
					 .pid = (int32_t)page_pid,
					 .backend = 1, .updates = 2,
					 .bytes_in_use = in_use,
					 .peak_bytes_in_use = in_use * 2,
					 .bytes_mapped = 1 << 20,
					 .allocations = 7, .arenas = 1,
					 .updated_ns = 1 };
	char rel[128], text[512], path[PATH_MAX * 2];
	FILE *f;

	memcpy(e.magic, SECMEM_STATS_MAGIC, sizeof(e.magic));
	strcpy(e.backend_name, "unmapped-memfd");
	snprintf(rel, sizeof(rel), "proc/%ld/maps", pid);
	snprintf(text, sizeof(text),
		 "55d0c0000000-55d0c0001000 r-xp 00000000 08:01 1 /usr/bin/x\n"
		 "7f0000000000-7f0000100000 rw-s 00000000 00:01 25 /memfd:secmem (deleted)\n"
		 "7f1000000000-7f1000001000 rw-s 00000000 00:01 26 /memfd:secmem-stats (deleted)\n");
	put(rel, text);
	snprintf(rel, sizeof(rel), "proc/%ld/map_files/x", pid);
	put(rel, "");
	snprintf(path, sizeof(path), "%s/proc/%ld/map_files/7f1000000000-7f1000001000",
		 dir, pid);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fwrite(&e, sizeof(e), 1, f), 1);
	fclose(f);
}

START_TEST(status_lists_units_processes_and_stats)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	unit("idle.service", "/bin/true", NULL);
	ck_assert_int_eq(protect("idle", "openssl", 0, false), 0);
	put("cgroup/system.slice/foo.service/cgroup.procs", "4242\n");
	put("cgroup/system.slice/foo.service/sub/cgroup.procs", "4243\n4244\n");
	fake_process(4242, 4242, 12345);
	fake_process(4243, 4242, 99);	/* a page it did not write */
	put("proc/4244/maps", "55d0c0000000-55d0c0001000 r-xp 00000000 08:01 1 /usr/bin/x\n");

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_units(f, &env, false, true, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "UNIT ") && strstr(buf, " BACKEND ") && strstr(buf, " IN_USE "),
		      "%s", buf);
	ck_assert_msg(strstr(buf, "\nfoo.service                      heap             256M     active     4242     unmapped-memfd         12345        24690      1048576 "),
		      "%s", buf);
	ck_assert_msg(strstr(buf, "4243     (statistics page of pid 4242)\n"), "%s", buf);
	ck_assert_msg(strstr(buf, "4244     (no statistics (not preloaded, or no allocation yet))\n"), "%s", buf);
	ck_assert_msg(strstr(buf, "\nidle.service                     openssl          64M      active     no processes\n"),
		      "%s", buf);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_units(f, &env, true, true, err, sizeof(err)), 0);
	fclose(f);
#define JSON_HEAD "[{\"unit\":\"foo.service\",\"mode\":\"heap\",\"memlock\":268435456,\"dropin\":\""
	ck_assert_msg(!strncmp(buf, JSON_HEAD, strlen(JSON_HEAD)),
		      "%s", buf);
	ck_assert_msg(strstr(buf, "\"state\":\"active\",\"processes\":[{\"pid\":4242,\"backend\":\"unmapped-memfd\","
			     "\"bytes_in_use\":12345,\"peak_bytes_in_use\":24690,\"bytes_mapped\":1048576,"
			     "\"memlock_charged\":0,\"allocations\":7,\"arenas\":1,\"updated_ns\":1},"
			     "{\"pid\":4243,\"stats\":null,\"error\":\"statistics page of pid 4242\"},"
			     "{\"pid\":4244,\"stats\":null,"),
		      "%s", buf);
	ck_assert_msg(strstr(buf, "{\"unit\":\"idle.service\",\"mode\":\"openssl\",\"memlock\":67108864,"), "%s", buf);
	ck_assert_msg(strstr(buf, "\"processes\":[]}]"), "%s", buf);
	free(buf);
}
END_TEST

START_TEST(status_ignores_dropins_not_ours)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	put("unit-dir/other.service.d/50-secmem-preload.conf", "[Service]\n");
	put("unit-dir/other.service.d/secmem.conf", "[Service]\n");
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_units(f, &env, false, true, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_str_eq(buf, "no unit protected (secmemctl protect UNIT)\n");
	free(buf);
	/* No unit directory at all: nothing protected either. */
	env.unit_dir = "/nonexistent";
	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_units(f, &env, true, true, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_str_eq(buf, "[]");
	free(buf);
}
END_TEST

/*
 * Without a probe of the test's own, protect asks libsecmem: the backend
 * the drop-in names is the library's, and with none protect refuses.
 */
START_TEST(backend_is_the_librarys)
{
	enum secmem_backend b = secmem_backend();
	char want[128];

	env.probe = NULL;
	if (b == SECMEM_BACKEND_UNMAPPED_MEMFD || b == SECMEM_BACKEND_MEMFD_SECRET) {
		ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
		snprintf(want, sizeof(want), "# memory (backend %s when this was written)",
			 secmem_backend_name(b));
		ck_assert_msg(strstr(slurp_rel(DROPIN), want), "%s", slurp_rel(DROPIN));
	} else {
		ck_assert_int_eq(protect("foo", "heap", 0, false), -ENOTSUP);
		ck_assert(!exists(DROPIN));
	}
}
END_TEST

/* A template: the processes of its loaded instances. */
START_TEST(status_of_a_template)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	unit("agent@.service", "/bin/true", NULL);
	ck_assert_int_eq(protect("agent@.service", "openssl", 0, false), 0);
	put("list-units", "agent@a.service loaded active running x\n"
	    "agent@b.service loaded inactive dead x\n");
	put("units/agent@a.service", "LoadState=loaded\nActiveState=active\n"
	    "ControlGroup=/system.slice/system-agent.slice/agent@a.service\n");
	put("units/agent@b.service", "LoadState=loaded\nActiveState=inactive\n"
	    "ControlGroup=\n");
	put("cgroup/system.slice/system-agent.slice/agent@a.service/cgroup.procs", "4242\n");
	fake_process(4242, 4242, 777);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_units(f, &env, false, true, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\nagent@.service                   openssl          64M      active     4242     unmapped-memfd           777 "),
		      "%s", buf);
	ck_assert_int_eq(calls("list-units --all --plain --no-legend --full --no-pager agent@*.service"), 1);
	free(buf);
}
END_TEST

/* secmemctl status --json: the units are a member of the one object. */
START_TEST(status_json_has_units)
{
	char sys[PATH_MAX], *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	fake_sysfs_create(sys, 1);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_status(f, sys, "/nonexistent", "/nonexistent", true, &env, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\"decisions\":[],") &&
		      strstr(buf, "\"mappings_seen\":true,\"units\":[{\"unit\":\"foo.service\",") &&
		      !strcmp(buf + strlen(buf) - 6, "[]}]}\n"),
		      "%s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ctl_status(f, sys, "/nonexistent", "/nonexistent", false, &env, err, sizeof(err)), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\nprotected units:\nUNIT ") && strstr(buf, "\nfoo.service "),
		      "%s", buf);
	free(buf);
	fake_sysfs_destroy(sys);
}
END_TEST

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The binary: exit statuses of protect and unprotect. */
START_TEST(secmemctl_protect_binary)
{
	const char *bin = getenv("SECMEMCTL");
	char o[4096], e[2048];
	char *badmode[] = { (char *)bin, "--unit-dir", unit_dir, "protect", "foo",
			    "--mode", "hep", NULL };
	char *emptymode[] = { (char *)bin, "--unit-dir", unit_dir, "protect", "foo",
			      "--mode", "openssl,,heap", NULL };
	char *badmem[] = { (char *)bin, "protect", "foo", "--memlock", "lots", NULL };
	char *unknown[] = { (char *)bin, "--unit-dir", unit_dir, "protect", "nope", NULL };
	char *noarg[] = { (char *)bin, "protect", NULL };
	char *flagonstatus[] = { (char *)bin, "status", "--mode", "heap", NULL };
	char *unprot[] = { (char *)bin, "--unit-dir", unit_dir, "unprotect", "foo", NULL };
	char *units[] = { (char *)bin, "--unit-dir", unit_dir, "status", "--units", "--json", NULL };
	char *pretty[] = { (char *)bin, "--unit-dir", unit_dir, "status", "--units", "--json=pretty", NULL };
	char *nolegend[] = { (char *)bin, "--unit-dir", unit_dir, "--cgroup-root", cgroup,
			     "--proc-root", proc, "status", "--units", "--no-legend", NULL };

	ck_assert_msg(bin, "SECMEMCTL is not set");
	setenv("SECMEMCTL_SYSTEMCTL", env.systemctl, 1);
	setenv("SECMEM_PRELOAD_LIB", preload, 1);
	ck_assert_int_eq(run_capture(badmode, o, sizeof(o), e, sizeof(e)), 2);
	/* The preload's parser says what is wrong, as for secmem-run. */
	ck_assert_str_eq(e, "secmemctl: --mode 'hep': unknown mode 'hep': " PRELOAD_MODES_HELP "\n");
	ck_assert_int_eq(run_capture(emptymode, o, sizeof(o), e, sizeof(e)), 2);
	ck_assert_str_eq(e, "secmemctl: --mode 'openssl,,heap': an empty mode between two commas: " PRELOAD_MODES_HELP "\n");
	ck_assert_int_eq(run_capture(badmem, o, sizeof(o), e, sizeof(e)), 2);
	ck_assert_int_eq(run_capture(noarg, o, sizeof(o), e, sizeof(e)), 2);
	ck_assert_int_eq(run_capture(flagonstatus, o, sizeof(o), e, sizeof(e)), 2);
	ck_assert_int_eq(run_capture(unknown, o, sizeof(o), e, sizeof(e)), 1);
	ck_assert_str_eq(e, "secmemctl: nope.service: no such unit (systemd has no unit file for it)\n");
	ck_assert_int_eq(run_capture(unprot, o, sizeof(o), e, sizeof(e)), 0);
	ck_assert_msg(strstr(o, "foo.service: not protected"), "%s", o);
	ck_assert_int_eq(run_capture(units, o, sizeof(o), e, sizeof(e)), 0);
	ck_assert_str_eq(o, "[]\n");
	ck_assert_int_eq(run_capture(pretty, o, sizeof(o), e, sizeof(e)), 0);
	ck_assert_str_eq(o, "[]\n");
	/* --no-legend: no header, no hint; the rows alone. */
	ck_assert_int_eq(run_capture(nolegend, o, sizeof(o), e, sizeof(e)), 0);
	ck_assert_str_eq(o, "");
	ck_assert_int_eq(protect("foo", "heap", 0, false), 0);
	ck_assert_int_eq(run_capture(nolegend, o, sizeof(o), e, sizeof(e)), 0);
	ck_assert_msg(starts(o, "foo.service                      heap             256M     active     no processes\n") &&
		      !strstr(o, "UNIT"), "%s", o);
	ck_assert_int_eq(run_capture(pretty, o, sizeof(o), e, sizeof(e)), 0);
	ck_assert_msg(starts(o, "[\n\t{\n\t\t\"unit\" : \"foo.service\",\n\t\t\"mode\" : \"heap\",\n") &&
		      strstr(o, "\t\t\"processes\" : []\n\t}\n]\n"), "%s", o);
	unsetenv("SECMEMCTL_SYSTEMCTL");
	unsetenv("SECMEM_PRELOAD_LIB");
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("daemon-protect");
	TCase *tc = tcase_create("protect");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, unit_names);
	tcase_add_test(tc, protect_writes_the_dropin_and_reloads);
	tcase_add_test(tc, protect_keeps_another_preload_after_ours);
	tcase_add_test(tc, memlock_follows_the_pool);
	tcase_add_test(tc, memlock_too_low_is_refused);
	tcase_add_test(tc, memlock_of_the_unit_is_not_lowered);
	tcase_add_test(tc, refusals_write_nothing);
	tcase_add_test(tc, backend_is_the_librarys);
	tcase_add_test(tc, setid_programs_need_no_new_privs);
	tcase_add_test(tc, foreign_dropin_is_left_alone);
	tcase_add_test(tc, reload_failure_is_an_error);
	tcase_add_test(tc, an_overriding_dropin_is_detected);
	tcase_add_test(tc, unprotect_removes_and_is_idempotent);
	tcase_add_test(tc, legacy_dropin_is_migrated);
	tcase_add_test(tc, legacy_dropin_nnp_is_not_an_excuse);
	tcase_add_test(tc, templates_are_checked_through_an_instance);
	tcase_add_test(tc, status_lists_units_processes_and_stats);
	tcase_add_test(tc, status_ignores_dropins_not_ours);
	tcase_add_test(tc, status_of_a_template);
	tcase_add_test(tc, status_json_has_units);
	tcase_add_test(tc, secmemctl_protect_binary);
	suite_add_tcase(s, tc);
	return s;
}
