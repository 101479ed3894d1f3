/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What secmemd shares with secmemctl under its runtime directory
 * (/run/secmemd): the lock and pid file that keeps a second instance out,
 * and the list of its last decisions.
 */
#ifndef SECMEM_RUNTIME_H
#define SECMEM_RUNTIME_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define RUNTIME_DIR_DEFAULT "/run/secmemd"
#define RUNTIME_HISTORY 16

/*
 * Take the instance lock in @dir (created if missing) and record our pid.
 * Returns the lock fd (kept open for the life of the process), -EBUSY
 * with *@holder set if another process holds it, or another -errno.
 */
int runtime_lock(const char *dir, pid_t *holder);

/* The pid of the running daemon, 0 if none holds the lock, or -errno. */
pid_t runtime_daemon_pid(const char *dir);

/* The last decisions, oldest first; @head is where the next one goes. */
struct history {
	unsigned int count;
	unsigned int head;
	struct {
		time_t when;
		char reason[192];
	} e[RUNTIME_HISTORY];
};

void history_add(struct history *h, time_t when, const char *reason);

/* Replace @dir/decisions with @h ("EPOCH<TAB>REASON" lines), atomically. */
int runtime_write_history(const char *dir, const struct history *h);

/* Read @dir/decisions back; a missing file is an empty history. */
int runtime_read_history(const char *dir, struct history *h);

#endif /* SECMEM_RUNTIME_H */
