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

const char *procfs_cmdline_get(const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);
	char line[4096], *word, *save;
	const char *val = NULL;
	FILE *f = fopen("/proc/cmdline", "re");

	if (!f)
		return NULL;
	if (fgets(line, sizeof(line), f)) {
		for (word = strtok_r(line, " \n", &save); word && !val;
		     word = strtok_r(NULL, " \n", &save)) {
			if (!strncmp(word, key, klen) && word[klen] == '=') {
				snprintf(buf, len, "%s", word + klen + 1);
				val = buf;
			}
		}
	}
	fclose(f);
	return val;
}
