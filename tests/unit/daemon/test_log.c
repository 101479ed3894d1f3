// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * log.c's journal entries, caught on their way to the journal: this
 * program defines libsystemd's two sending functions that log.c may call,
 * so log.c calls these (the suite links no libsystemd) and they record
 * what would have been sent.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "fake_sysfs.h"
#include "log.h"
#include "policy.h"

#define MAX_FIELDS 32

static struct {
	int entries;		/* through sd_journal_sendv_with_location() */
	int varargs;		/* through sd_journal_send_with_location() */
	char file[256], line[64], func[64];
	int nfields;
	char field[MAX_FIELDS][256];
} sent;

int sd_journal_sendv_with_location(const char *file, const char *line,
				   const char *func, const struct iovec *iov,
				   int n)
{
	int i;

	sent.entries++;
	snprintf(sent.file, sizeof(sent.file), "%s", file);
	snprintf(sent.line, sizeof(sent.line), "%s", line);
	snprintf(sent.func, sizeof(sent.func), "%s", func);
	sent.nfields = n < MAX_FIELDS ? n : MAX_FIELDS;
	for (i = 0; i < sent.nfields; i++)
		snprintf(sent.field[i], sizeof(sent.field[i]), "%.*s",
			 (int)iov[i].iov_len, (const char *)iov[i].iov_base);
	return 0;
}

/* Where the entry came from is all that can be read portably here. */
int sd_journal_send_with_location(const char *file, const char *line,
				  const char *func, const char *format, ...)
{
	(void)format;
	sent.varargs++;
	snprintf(sent.file, sizeof(sent.file), "%s", file);
	snprintf(sent.line, sizeof(sent.line), "%s", line);
	snprintf(sent.func, sizeof(sent.func), "%s", func);
	return 0;
}

/* The value of field @name= of the entry, or NULL. */
static const char *field(const char *name)
{
	size_t k = strlen(name);
	int i;

	for (i = 0; i < sent.nfields; i++)
		if (!strncmp(sent.field[i], name, k) && sent.field[i][k] == '=')
			return sent.field[i] + k + 1;
	return NULL;
}

/* Log as under systemd: JOURNAL_STREAM names our stderr. */
static void setup(void)
{
	char v[64];
	struct stat st;

	memset(&sent, 0, sizeof(sent));
	ck_assert_int_eq(fstat(STDERR_FILENO, &st), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
	log_setup(LOG_DEBUG);
}

/* The entry came through the iovec sender, from @func at @line here. */
static void assert_from(const char *func, int line)
{
	char want[64];

	ck_assert_msg(sent.entries == 1 && !sent.varargs,
		      "%d entries, %d through the varargs sender (from %s %s %s)",
		      sent.entries, sent.varargs, sent.file, sent.line, sent.func);
	ck_assert_msg(strstr(sent.file, "CODE_FILE=") == sent.file &&
		      strstr(sent.file, "/test_log.c"), "%s", sent.file);
	snprintf(want, sizeof(want), "CODE_LINE=%d", line);
	ck_assert_str_eq(sent.line, want);
	ck_assert_str_eq(sent.func, func);
}

START_TEST(message_has_its_callers_location)
{
	int line = __LINE__ + 1;
	log_msg(LOG_WARNING, "pool %d: %s", 3, "low");

	assert_from(__func__, line);
	ck_assert_str_eq(field("MESSAGE"), "pool 3: low");
	ck_assert_str_eq(field("PRIORITY"), "4");
	ck_assert_str_eq(field("SYSLOG_IDENTIFIER"), "secmemd");
	ck_assert_ptr_null(field("MESSAGE_ID"));
}
END_TEST

START_TEST(decision_has_its_id_fields_and_location)
{
	struct decision d = { .kind = DECISION_NODE, .cause = CAUSE_GROW,
			      .node = 1, .pool_target = 64 << 20,
			      .watermark_low = 8 << 20,
			      .watermark_high = 128 << 20,
			      .reason = "node 1: grow: pool_target 32M -> 64M" };
	int line = __LINE__ + 1;
	log_decision(&d, "low_watermark");

	assert_from(__func__, line);
	ck_assert_str_eq(field("MESSAGE"), d.reason);
	ck_assert_str_eq(field("MESSAGE_ID"), "4af1844836d54ebcab5d5d353de41803");
	ck_assert_str_eq(field("PRIORITY"), "5");
	ck_assert_str_eq(field("SECMEM_EVENT"), "low_watermark");
	ck_assert_str_eq(field("SECMEM_CAUSE"), "grow");
	ck_assert_str_eq(field("SECMEM_NODE"), "1");
	ck_assert_str_eq(field("SECMEM_POOL_TARGET"), "67108864");
	ck_assert_str_eq(field("SECMEM_WATERMARK_LOW"), "8388608");
	ck_assert_str_eq(field("SECMEM_WATERMARK_HIGH"), "134217728");
}
END_TEST

START_TEST(message_id_when_asked)
{
	int line = __LINE__ + 1;
	log_msg_id(SECMEM_MSG_NO_FEATURE, LOG_ERR, "no %s", "pools");

	assert_from(__func__, line);
	ck_assert_str_eq(field("MESSAGE"), "no pools");
	ck_assert_str_eq(field("MESSAGE_ID"), "455a819f2aaf49d9a0b84e12798682b7");
	ck_assert_str_eq(field("PRIORITY"), "3");
}
END_TEST

/*
 * Every MESSAGE_ID has its entry in systemd/secmemd.catalog, with a
 * Subject: and a text, and the catalog explains no other.
 */
START_TEST(catalog_explains_every_id)
{
	static const char *const ids[] = {
		SECMEM_MSG_STARTED, SECMEM_MSG_DECISION,
		SECMEM_MSG_CONFIG_INVALID, SECMEM_MSG_NO_FEATURE,
		SECMEM_MSG_ALLOC_FAILED, SECMEM_MSG_SECRETS_WIPED,
	};
	char line[512], cur[64] = "";
	int seen[6] = { 0 }, entries = 0, subject = 0, text = 0, body = 0;
	size_t i;
	FILE *f = fopen(SRC_TOP "/systemd/secmemd.catalog", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "-- ", 3)) {
			ck_assert_msg(!*cur || (subject && text),
				      "%s: no Subject: or no text", cur);
			snprintf(cur, sizeof(cur), "%.40s", line + 3);
			for (i = 0; i < 6; i++)
				if (!strcmp(cur, ids[i]))
					break;
			ck_assert_msg(i < 6, "catalog entry %s: no such MESSAGE_ID", cur);
			ck_assert_int_eq(seen[i]++, 0);
			entries++;
			subject = text = body = 0;
		} else if (!body && !*line) {
			body = 1;		/* the headers end at a blank line */
		} else if (!body && !strncmp(line, "Subject: ", 9)) {
			subject = 1;
		} else if (body && *line) {
			text = 1;
		}
	}
	fclose(f);
	ck_assert_msg(subject && text, "%s: no Subject: or no text", cur);
	ck_assert_int_eq(entries, 6);
}
END_TEST

START_TEST(below_the_level_nothing_is_sent)
{
	log_set_level(LOG_NOTICE);
	log_msg(LOG_INFO, "not sent");
	ck_assert_int_eq(sent.entries + sent.varargs, 0);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("daemon-log");
	TCase *tc = tcase_create("log");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, message_has_its_callers_location);
	tcase_add_test(tc, decision_has_its_id_fields_and_location);
	tcase_add_test(tc, message_id_when_asked);
	tcase_add_test(tc, catalog_explains_every_id);
	tcase_add_test(tc, below_the_level_nothing_is_sent);
	suite_add_tcase(s, tc);
	return s;
}
