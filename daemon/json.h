/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secmemctl's JSON: written compact, one object or array on one line
 * (--json=short), and reformatted for people as systemd's tools do
 * (--json=pretty: a tab per level, "key" : value, one member a line).
 */
#ifndef SECMEM_JSON_H
#define SECMEM_JSON_H

#include <stdio.h>

enum json_mode {
	JSON_OFF,	/* a table */
	JSON_SHORT,	/* compact, one line */
	JSON_PRETTY,	/* indented */
};

/*
 * Parse the argument of --json: "short", "pretty" or "off"; NULL (a bare
 * --json) is short.  Returns 0 or -EINVAL.
 */
int json_mode_parse(const char *s, enum json_mode *mode);

/*
 * Print @s to @out as a JSON string: quoted, with '"' and '\' escaped
 * and control characters as \u00XX.
 */
void json_string(FILE *out, const char *s);

/*
 * Print @json, compact JSON as secmemctl writes it, indented, followed
 * by a newline.  Blanks outside strings are dropped.
 */
void json_pretty(FILE *out, const char *json);

#endif /* SECMEM_JSON_H */
