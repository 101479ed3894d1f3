// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * JSON output of secmemctl: see json.h.  json_pretty() only re-indents:
 * it needs valid input and does not check it, which holds for the text
 * secmemctl itself has just written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "json.h"

int json_mode_parse(const char *s, enum json_mode *mode)
{
	if (!s || !strcmp(s, "short"))
		*mode = JSON_SHORT;
	else if (!strcmp(s, "pretty"))
		*mode = JSON_PRETTY;
	else if (!strcmp(s, "off"))
		*mode = JSON_OFF;
	else
		return -EINVAL;
	return 0;
}

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void newline(FILE *out, int depth)
{
	fputc('\n', out);
	while (depth-- > 0)
		fputc('\t', out);
}

void json_pretty(FILE *out, const char *s)
{
	bool in_string = false, escaped = false;
	int depth = 0;

	for (; *s; s++) {
		char c = *s;

		if (in_string) {
			fputc(c, out);
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
			continue;
		}
		switch (c) {
		case '"':
			in_string = true;
			fputc(c, out);
			break;
		case '{':
		case '[':
			fputc(c, out);
			/* An empty object or array stays on its line. */
			if (s[1] == (c == '{' ? '}' : ']')) {
				fputc(*++s, out);
				break;
			}
			newline(out, ++depth);
			break;
		case '}':
		case ']':
			newline(out, --depth);
			fputc(c, out);
			break;
		case ',':
			fputc(c, out);
			newline(out, depth);
			break;
		case ':':
			fputs(" : ", out);
			break;
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			break;
		default:
			fputc(c, out);
		}
	}
	fputc('\n', out);
}
