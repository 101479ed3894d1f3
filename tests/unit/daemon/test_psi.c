// SPDX-License-Identifier: GPL-2.0-or-later
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_sysfs.h"
#include "psi.h"

START_TEST(parse_both_lines)
{
	unsigned int some, full;

	ck_assert_int_eq(psi_parse("some avg10=12.34 avg60=1.00 avg300=0.00 total=5\n"
				   "full avg10=0.05 avg60=0.00 avg300=0.00 total=1\n",
				   &some, &full), 0);
	ck_assert_uint_eq(some, 1234);
	ck_assert_uint_eq(full, 5);
	ck_assert_int_eq(psi_parse("some avg10=100.00 avg60=0.00 avg300=0.00 total=0\n",
				   &some, &full), 0);
	ck_assert_uint_eq(some, 10000);
	ck_assert_uint_eq(full, 0);
}
END_TEST

START_TEST(parse_refuses_foreign_text)
{
	unsigned int some, full;

	ck_assert_int_eq(psi_parse("", &some, &full), -EPROTO);
	ck_assert_int_eq(psi_parse("full avg10=1.00 avg60=0.00\n", &some, &full), -EPROTO);
	ck_assert_int_eq(psi_parse("some avg10=x avg60=0.00\n", &some, &full), -EPROTO);
	ck_assert_int_eq(psi_parse("some avg10=1.00 avg60=0.00\nbogus\n", &some, &full),
			 -EPROTO);
}
END_TEST

START_TEST(trigger_needs_procfs)
{
	const struct psi_trigger t = { PSI_SOME, 150000, 1000000 };
	char path[] = "/tmp/secmem-psi-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(psi_trigger_open(path, &t), -EOPNOTSUPP);
	unlink(path);
	ck_assert_int_eq(psi_trigger_open("/nonexistent", &t), -ENOENT);
	/*
	 * On the real file the default trigger is accepted, even without
	 * CAP_SYS_RESOURCE (then the window must be a multiple of 2 s).
	 */
	if (access(PSI_MEMORY_PATH, W_OK) == 0) {
		struct config cfg;

		config_defaults(&cfg);
		fd = psi_trigger_open(PSI_MEMORY_PATH, &cfg.pressure_trigger);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("daemon-psi");
	TCase *tc = tcase_create("psi");

	tcase_add_test(tc, parse_both_lines);
	tcase_add_test(tc, parse_refuses_foreign_text);
	tcase_add_test(tc, trigger_needs_procfs);
	suite_add_tcase(s, tc);
	return s;
}
