// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The journal is detected as systemd documents it (JOURNAL_STREAM names
 * the device and inode of our stderr): a daemon started by hand from a
 * service's shell still logs to its terminal.
 *
 * The two variables here are part of the loaded configuration (log_level)
 * and of how the process was started; nothing else in secmemd is global.
 *
 * Entries go out with sd_journal_sendv_with_location(): the location is
 * the caller's (log.h), and each field is formatted here, so nothing
 * depends on how a va_list is passed on.
 */
#define _GNU_SOURCE
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"

static int log_level = LOG_INFO;
static bool log_journal;

static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

void log_setup(int level)
{
	log_level = level;
	log_journal = stderr_is_journal();
}

void log_set_level(int level)
{
	log_level = level;
}

static const char *prio_prefix(int prio)
{
	switch (prio) {
	case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR:
		return "error: ";
	case LOG_WARNING:
		return "warning: ";
	default:
		return "";
	}
}

/* One journal entry's fields, each "NAME=value" in a buffer of its own. */
struct fields {
	struct iovec iov[12];
	char buf[12][600];
	int n;
};

static void add(struct fields *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct fields *f, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (f->n == (int)(sizeof(f->iov) / sizeof(f->iov[0])))
		return;
	va_start(ap, fmt);
	/* clang-analyzer 14 misses the va_start() just above. */
	k = vsnprintf(f->buf[f->n], sizeof(f->buf[0]), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	if (k < 0)
		return;
	f->iov[f->n].iov_base = f->buf[f->n];
	f->iov[f->n].iov_len = strnlen(f->buf[f->n], sizeof(f->buf[0]));
	f->n++;
}

static void send_fields(const char *file, const char *line, const char *func,
			const char *id, int prio, const char *msg,
			struct fields *f)
{
	add(f, "MESSAGE=%s", msg);
	if (id)
		add(f, "MESSAGE_ID=%s", id);
	add(f, "PRIORITY=%d", prio);
	add(f, "SYSLOG_IDENTIFIER=secmemd");
	sd_journal_sendv_with_location(file, line, func, f->iov, f->n);
}

void log_at(const char *file, const char *line, const char *func,
	    const char *id, int prio, const char *fmt, ...)
{
	struct fields f = { .n = 0 };
	char msg[512];
	va_list ap;

	if (prio > log_level)
		return;
	va_start(ap, fmt);
	/* clang-analyzer 14 misses the va_start() just above. */
	vsnprintf(msg, sizeof(msg), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	if (log_journal)
		send_fields(file, line, func, id, prio, msg, &f);
	else
		fprintf(stderr, "secmemd: %s%s\n", prio_prefix(prio), msg);
}

void log_decision_at(const char *file, const char *line, const char *func,
		     const struct decision *d, const char *event)
{
	static const char *const causes[] = {
		[CAUSE_APPLY] = "apply", [CAUSE_GROW] = "grow",
		[CAUSE_SHRINK] = "shrink", [CAUSE_DECAY] = "decay",
	};
	struct fields f = { .n = 0 };

	if (LOG_NOTICE > log_level)
		return;
	if (!log_journal) {
		fprintf(stderr, "secmemd: %s\n", d->reason);
		return;
	}
	add(&f, "SECMEM_EVENT=%s", event);
	add(&f, "SECMEM_CAUSE=%s", causes[d->cause]);
	add(&f, "SECMEM_NODE=%d", d->node);
	add(&f, "SECMEM_POOL_TARGET=%" PRIu64, d->pool_target);
	add(&f, "SECMEM_WATERMARK_LOW=%" PRIu64, d->watermark_low);
	add(&f, "SECMEM_WATERMARK_HIGH=%" PRIu64, d->watermark_high);
	send_fields(file, line, func, SECMEM_MSG_DECISION, LOG_NOTICE,
		    d->reason, &f);
}
