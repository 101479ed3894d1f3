/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What secmemd shares with secmemctl under its runtime directory
 * (/run/secmemd): the lock that keeps a second instance out, the pid
 * file, and the list of its last decisions.
 */
#ifndef SECMEM_RUNTIME_H
#define SECMEM_RUNTIME_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define RUNTIME_DIR_DEFAULT "/run/secmemd"
#define RUNTIME_HISTORY 16

/*
 * Take the instance lock in @dir (created 0755 if missing; the lock file
 * is 0600 and must be ours) and record our pid in @dir/secmemd.pid.
 * Returns the lock fd (kept open for the life of the process), -EBUSY
 * with *@holder set (its pid, or a negative errno if unknown) if another
 * process holds it, -EPERM if the lock file belongs to another user, or
 * another -errno.
 */
int runtime_lock(const char *dir, pid_t *holder);

/*
 * The pid of the running daemon, 0 if none holds the lock, or -errno.
 * Takes no lock and opens nothing the daemon locks, so it never gets in
 * the way of a daemon starting; any user may call it.
 */
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
