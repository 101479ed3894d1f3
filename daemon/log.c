// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The journal is detected as systemd documents it (JOURNAL_STREAM names
 * the device and inode of our stderr): a daemon started by hand from a
 * service's shell still logs to its terminal.
 *
 * The two variables here are part of the loaded configuration (log_level)
 * and of how the process was started; nothing else in secmemd is global.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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

void log_msg(int prio, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (prio > log_level)
		return;
	va_start(ap, fmt);
	/* clang-analyzer 14 misses the va_start() just above. */
	vsnprintf(msg, sizeof(msg), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	if (log_journal)
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio,
				"SYSLOG_IDENTIFIER=secmemd", NULL);
	else
		fprintf(stderr, "secmemd: %s%s\n", prio_prefix(prio), msg);
}

void log_decision(const struct decision *d, const char *event)
{
	static const char *const causes[] = {
		[CAUSE_APPLY] = "apply", [CAUSE_GROW] = "grow",
		[CAUSE_SHRINK] = "shrink", [CAUSE_DECAY] = "decay",
	};

	if (LOG_NOTICE > log_level)
		return;
	if (!log_journal) {
		fprintf(stderr, "secmemd: %s\n", d->reason);
		return;
	}
	sd_journal_send("MESSAGE=%s", d->reason, "PRIORITY=%d", LOG_NOTICE,
			"SYSLOG_IDENTIFIER=secmemd", "SECMEM_EVENT=%s", event,
			"SECMEM_CAUSE=%s", causes[d->cause],
			"SECMEM_NODE=%d", d->node,
			"SECMEM_POOL_TARGET=%" PRIu64, d->pool_target,
			"SECMEM_WATERMARK_LOW=%" PRIu64, d->watermark_low,
			"SECMEM_WATERMARK_HIGH=%" PRIu64, d->watermark_high,
			NULL);
}
