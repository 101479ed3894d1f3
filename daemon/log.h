/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secmemd's log: the journal with structured fields when stderr is
 * connected to it, stderr with a priority prefix otherwise.
 */
#ifndef SECMEM_LOG_H
#define SECMEM_LOG_H

#include "policy.h"

/* Pick the sink from the environment; @level is a syslog priority. */
void log_setup(int level);
void log_set_level(int level);

void log_msg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A decision that was applied, with SECMEM_* journal fields. */
void log_decision(const struct decision *d, const char *event);

#endif /* SECMEM_LOG_H */
