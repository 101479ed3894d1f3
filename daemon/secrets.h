/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who holds secret files, and what that costs the machine.
 *
 * A secret file is a memfd_secret() file or an MFD_UNMAPPED memfd: both
 * live on the kernel's secretmem mount, so statfs() of one reports
 * SECRETMEM_MAGIC, on a stock kernel as on a patched one. While any is
 * open the kernel refuses to hibernate (unless its hibernation policy,
 * sysfs.h, is wipe: then it wipes them first). The scan walks /proc/PID/fd and
 * /proc/PID/map_files (a file whose descriptor was closed but which is
 * still mapped is still open), counting each file once per process.
 */
#ifndef SECMEM_SECRETS_H
#define SECMEM_SECRETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct secret_holder {
	pid_t pid;
	char comm[17];
	unsigned int files;	/* distinct secret files, open or mapped */
	uint64_t bytes;		/* the sum of their sizes */
};

struct secret_scan {
	struct secret_holder *holder;	/* by pid, ascending */
	size_t nr;
	unsigned int unreadable;	/* processes whose fds we may not see */
	bool maps_hidden;		/* map_files/ refused: not root */
};

/*
 * Scan @proc ("/proc") for processes holding secret files. Returns 0 or
 * -errno when @proc itself cannot be read; processes that vanish or that
 * we may not inspect are skipped (counted in ->unreadable when it was
 * for lack of permission). Free with secret_scan_free().
 */
int secret_scan(const char *proc, struct secret_scan *s);
void secret_scan_free(struct secret_scan *s);

/* What the kernel says: -1 for a line or file this kernel does not have. */
struct secret_kernel {
	long long open_files;	/* /sys/kernel/mm/unmapped/secret_files */
	long long secretmem;	/* /proc/meminfo SecretMem, bytes */
	long long unmapped;	/* Unmapped, bytes */
	long long unmapped_free; /* UnmappedFree, bytes */
	int hibernation;	/* 1: "disk" in /sys/power/state, 0: not, -1 */
};

void secret_kernel_read(const char *sysfs, const char *proc,
			struct secret_kernel *k);

/*
 * The "secret files" part of secmemctl status (and secmemctl secrets):
 * a table, or with @json the members "secret_files", "meminfo",
 * "hibernation", "holders", "unreadable_processes" and "mappings_seen"
 * of an object the caller opened and closes.
 */
void secret_print(FILE *out, const struct secret_kernel *k,
		  const struct secret_scan *s, bool json);

/* The rows of the holders' table alone: PID, COMM, FILES, BYTES. */
void secret_print_holders(FILE *out, const struct secret_scan *s);

#endif /* SECMEM_SECRETS_H */
