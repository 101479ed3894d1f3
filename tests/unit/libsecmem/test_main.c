// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsecmem Check suite runner.
 *
 * Usage: libsecmem_test [TAP-FILE]
 * Environment: SECMEM_TEST_EXPECT_BACKEND=unmapped-memfd (or memfd-secret)
 * makes the secure suite fail unless that backend is the one in use; the
 * guest harness sets it.
 *
 * Exit status: 0 all passed (or skipped with a reason), 1 a test failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

enum test_mode test_mode;
static bool test_secure_missing;
static int test_skip_fd = -1;

void test_skip(const char *reason)
{
	char line[512];
	int n;

	n = snprintf(line, sizeof(line), "%s:%s\t%s\n", tcase_name(),
		     test_mode == TEST_MODE_SECURE ? "secure" : "mlock", reason);
	if (test_skip_fd >= 0 && write(test_skip_fd, line, (size_t)n) < 0)
		perror("skip file");
	fprintf(stderr, "SKIP %s", line);
}

bool test_backend_missing(void)
{
	if (test_mode == TEST_MODE_SECURE && test_secure_missing) {
		test_skip("this kernel has no secure backend (neither "
			  "MFD_UNMAPPED nor memfd_secret)");
		return true;
	}
	return false;
}

bool test_under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#else
	return false;
#endif
}

int test_count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	int c, n = 0;

	ck_assert_ptr_nonnull(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

bool test_find_map(const void *addr, unsigned long *start, unsigned long *end,
		   char perms[5])
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long a = (unsigned long)addr;
	char line[512];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", start, end, perms) == 3 &&
		    a >= *start && a < *end)
			found = true;
	}
	fclose(f);
	return found;
}

int test_in_child(void (*fn)(void *), void *arg, char *err, size_t errlen)
{
	int pipefd[2], status = 0;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* No core files from the deaths we provoke on purpose. */
		struct rlimit rl = { 0, 0 };

		setrlimit(RLIMIT_CORE, &rl);
		close(pipefd[0]);
		dup2(pipefd[1], STDERR_FILENO);
		fn(arg);
		_exit(0);
	}
	close(pipefd[1]);
	while (got + 1 < errlen &&
	       (n = read(pipefd[0], err + got, errlen - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = '\0';
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

bool test_set_memlock(unsigned long long bytes)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return false;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < bytes)
		rl.rlim_max = bytes;	/* needs CAP_SYS_RESOURCE */
	rl.rlim_cur = bytes;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		return true;
	/* Without CAP_SYS_RESOURCE: go as high as the hard limit allows. */
	getrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_MEMLOCK, &rl);
	return false;
}

bool test_drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	data[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	data[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &hdr, data) == 0;
}

/*
 * Whether this kernel lets a process with CAP_IPC_LOCK fault memfd_secret
 * pages beyond RLIMIT_MEMLOCK, asked in a child with a soft limit of 0:
 * upstream checks the limit at mmap() with the exemption, some kernels
 * (Debian's 6.12) charge each faulted page with none.  The page is
 * faulted by read(), which gets EFAULT where a store would get SIGBUS.
 */
bool test_kernel_exempts_secret(void)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl;
		int fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);
		int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		char *p;

		getrlimit(RLIMIT_MEMLOCK, &rl);
		rl.rlim_cur = 0;
		if (fd < 0 || zero < 0 || ftruncate(fd, 4096) < 0 ||
		    setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
			_exit(2);
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0);
		_exit(p != MAP_FAILED && read(zero, p, 4096) == 4096 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) < 2,
		      "memfd_secret probe child: status 0x%x", status);
	return WEXITSTATUS(status) == 0;
}

bool test_have_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	return syscall(SYS_capget, &hdr, data) == 0 &&
	       (data[CAP_IPC_LOCK / 32].effective &
		(1U << (CAP_IPC_LOCK % 32)));
}

static void setup_secure(void)
{
	test_mode = TEST_MODE_SECURE;
	if (test_secure_missing)
		return;
	ck_assert_msg(secmem_init(0) == 0, "secmem_init(0): %s",
		      secmem_strerror(secmem_last_error()));
}

static void setup_mlock(void)
{
	test_mode = TEST_MODE_MLOCK;
	ck_assert_msg(secmem_init(SECMEM_INIT_FORCE_INSECURE) == 0,
		      "secmem_init(FORCE_INSECURE): %s",
		      secmem_strerror(secmem_last_error()));
	ck_assert_int_eq(secmem_backend(), SECMEM_BACKEND_MLOCK);
}

static void setup_probe(void)
{
	test_mode = TEST_MODE_SECURE;
}

static Suite *test_suite(const char *name, void (*setup)(void),
			 TCase *(*const tcases[])(const char *),
			 const char *const names[])
{
	Suite *s = suite_create(name);

	for (int i = 0; tcases[i]; i++) {
		TCase *tc = tcases[i](names[i]);

		tcase_add_checked_fixture(tc, setup, NULL);
		suite_add_tcase(s, tc);
	}
	return s;
}

/* Append " # SKIP reason" to the TAP lines of the tests that skipped. */
static void test_tap_mark_skips(const char *tap, const char *skips)
{
	char line[1024], skip[1024], out[4096], key[2100];
	FILE *in, *sf, *o;
	char *tmp;

	if (asprintf(&tmp, "%s.tmp", tap) < 0)
		return;
	in = fopen(tap, "re");
	o = fopen(tmp, "we");
	if (!in || !o)
		goto out;
	while (fgets(line, sizeof(line), in)) {
		const char *reason = NULL;

		line[strcspn(line, "\n")] = '\0';
		sf = fopen(skips, "re");
		while (sf && !reason && fgets(skip, sizeof(skip), sf)) {
			char *tab = strchr(skip, '\t'), *colon;

			if (!tab)
				continue;
			*tab = '\0';
			tab[1 + strcspn(tab + 1, "\n")] = '\0';
			/* skip = "test:mode" */
			colon = strrchr(skip, ':');
			if (!colon)
				continue;
			*colon = '\0';
			/* TAP: "ok N - file:mode-group:test: Passed" */
			snprintf(key, sizeof(key), ":%s-", colon + 1);
			if (strncmp(line, "ok ", 3) == 0 && strstr(line, key)) {
				snprintf(key, sizeof(key), ":%s:", skip);
				if (strstr(line, key))
					reason = tab + 1;
			}
			if (reason)
				snprintf(out, sizeof(out), "%s # SKIP %s", line,
					 reason);
		}
		if (sf)
			fclose(sf);
		fprintf(o, "%s\n", reason ? out : line);
	}
	fclose(o);
	o = NULL;
	if (rename(tmp, tap) < 0)
		perror("rename TAP");
out:
	if (in)
		fclose(in);
	if (o)
		fclose(o);
	free(tmp);
}

int main(int argc, char **argv)
{
	static TCase *(*const per_mode[])(const char *) = {
		test_heap_tcase, test_death_tcase, test_pages_tcase,
		test_fd_tcase, test_misc_tcase, test_wiped_tcase,
		test_api_tcase, NULL,
	};
	static const char *const secure_names[] = {
		"secure-heap", "secure-death", "secure-pages", "secure-fd",
		"secure-misc", "secure-wiped", "secure-api",
	};
	static const char *const mlock_names[] = {
		"mlock-heap", "mlock-death", "mlock-pages", "mlock-fd",
		"mlock-misc", "mlock-wiped", "mlock-api",
	};
	char skips[] = "/tmp/libsecmem-skips-XXXXXX";
	const char *tap = argc > 1 ? argv[1] : NULL;
	enum secmem_backend b;
	Suite *probe;
	SRunner *sr;
	int failed;

	/*
	 * Line-buffered, so that a run piped into a log (the guest) shows
	 * progress and a hang can be placed; CK_VERBOSITY picks the detail.
	 */
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Probe in a child, so the runner itself never initialises. */
	pid_t pid = fork();
	int status = 0;

	if (pid == 0)
		_exit(secmem_backend() == SECMEM_BACKEND_NONE ? 3 :
		      (int)secmem_backend());
	waitpid(pid, &status, 0);
	b = WIFEXITED(status) && WEXITSTATUS(status) != 3 ?
	    (enum secmem_backend)WEXITSTATUS(status) : SECMEM_BACKEND_NONE;
	test_secure_missing = b == SECMEM_BACKEND_NONE;
	printf("# libsecmem: secure backend on this kernel: %s\n",
	       secmem_backend_name(b));

	test_skip_fd = mkstemp(skips);
	probe = suite_create("libsecmem-probe");
	{
		TCase *tc = test_probe_tcase();

		tcase_add_checked_fixture(tc, setup_probe, NULL);
		suite_add_tcase(probe, tc);
	}
	sr = srunner_create(test_suite("libsecmem-secure", setup_secure,
				       per_mode, secure_names));
	srunner_add_suite(sr, test_suite("libsecmem-mlock", setup_mlock,
					 per_mode, mlock_names));
	srunner_add_suite(sr, probe);
	if (tap)
		srunner_set_tap(sr, tap);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (tap)
		test_tap_mark_skips(tap, skips);
	close(test_skip_fd);
	unlink(skips);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
