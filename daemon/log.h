/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secmemd's log: the journal with structured fields when stderr is
 * connected to it, stderr with a priority prefix otherwise.
 *
 * log_msg(), log_msg_id() and log_decision() are macros, so that the
 * journal's CODE_FILE=, CODE_LINE= and CODE_FUNC= name the line that
 * logged, not this wrapper.
 */
#ifndef SECMEM_LOG_H
#define SECMEM_LOG_H

#include "policy.h"

/*
 * MESSAGE_IDs of the entries an administrator may look for (journalctl
 * MESSAGE_ID=...), explained in systemd/secmemd.catalog.  An ID is an
 * interface: it never changes meaning.
 */
#define SECMEM_MSG_STARTED		"930dc61f844244888e3e85bc105ac891"
#define SECMEM_MSG_DECISION		"4af1844836d54ebcab5d5d353de41803"
#define SECMEM_MSG_CONFIG_INVALID	"6e971dbf09df4aec871360cee09768f4"
#define SECMEM_MSG_NO_FEATURE		"455a819f2aaf49d9a0b84e12798682b7"
#define SECMEM_MSG_ALLOC_FAILED		"5f10c3ec5bdd4bc1ba564da1a6954828"
#define SECMEM_MSG_SECRETS_WIPED	"fa065f34e8fd48b0bf0e570c1ec75ea7"

/* Pick the sink from the environment; @level is a syslog priority. */
void log_setup(int level);
void log_set_level(int level);

#define LOG_STR_(x) #x
#define LOG_STR(x) LOG_STR_(x)
/* The caller's location, as sd_journal_sendv_with_location() takes it. */
#define LOG_HERE "CODE_FILE=" __FILE__, "CODE_LINE=" LOG_STR(__LINE__), __func__

/* A message at syslog priority @prio. */
#define log_msg(prio, ...) log_at(LOG_HERE, NULL, prio, __VA_ARGS__)
/* The same with MESSAGE_ID=@id, one of SECMEM_MSG_*. */
#define log_msg_id(id, prio, ...) log_at(LOG_HERE, id, prio, __VA_ARGS__)
/* A decision that was applied, with SECMEM_* journal fields. */
#define log_decision(d, event) log_decision_at(LOG_HERE, d, event)

void log_at(const char *file, const char *line, const char *func,
	    const char *id, int prio, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void log_decision_at(const char *file, const char *line, const char *func,
		     const struct decision *d, const char *event);

#endif /* SECMEM_LOG_H */
