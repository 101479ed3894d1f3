// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

long long procfs_read_key(const char *path, const char *key)
{
	size_t len = strlen(key);
	long long val = -1;
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, len) &&
		    (line[len] == ' ' || line[len] == ':')) {
			val = strtoll(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}
