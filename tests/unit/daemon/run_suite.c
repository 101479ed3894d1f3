// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Runner shared by the daemon's Check suites: each test_NAME.c provides
 * test_suite(); this writes TAP to argv[1] and exits 1 if a test failed.
 */
#include <check.h>
#include <stdlib.h>

#include "fake_sysfs.h"

int main(int argc, char **argv)
{
	SRunner *sr = srunner_create(test_suite());
	int failed;

	if (argc > 1)
		srunner_set_tap(sr, argv[1]);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
