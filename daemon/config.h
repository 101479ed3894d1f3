/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * secmem.conf: the administrator's policy for the unmapped pools.
 *
 * struct config is a plain value (no pointers): it can be copied with =,
 * compared with memcmp() after config_defaults(), and a failed parse never
 * touches the configuration the daemon is running with.
 */
#ifndef SECMEM_CONFIG_H
#define SECMEM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nodes beyond this are left alone (with a warning) by secmemd. */
#define CONFIG_MAX_NODES 64
/* No size in the configuration may exceed this (1 TiB). */
#define CONFIG_SIZE_MAX (UINT64_C(1) << 40)

enum flush_policy {
	FLUSH_IMMEDIATE,
	FLUSH_DEFERRED,
};

/*
 * Hibernation while secret files (memfd_secret, MFD_UNMAPPED) exist:
 * refused, as in mainline and on kernels without the knob, or allowed
 * after the kernel has wiped every secret file.
 */
enum hibernation_policy {
	HIBERNATION_REFUSE,
	HIBERNATION_WIPE,
};

/* What secmemd leaves in the kernel when it stops. */
enum exit_policy {
	EXIT_KEEP,	/* the pools stay as they are */
	EXIT_RESTORE,	/* the kernel's defaults are written back */
};

enum psi_kind {
	PSI_SOME,
	PSI_FULL,
};

/* A /proc/pressure/memory trigger, as in Documentation/accounting/psi.rst. */
struct psi_trigger {
	enum psi_kind kind;
	uint32_t stall_us;
	uint32_t window_us;
};

/* All sizes in bytes; the kernel rounds them up to whole pageblocks. */
struct node_policy {
	uint64_t pool_target;	/* what the pool is filled to when calm */
	uint64_t pool_min;	/* never shrink below, even under pressure */
	uint64_t pool_max;	/* never grow beyond, whatever the demand */
	uint64_t watermark_low;
	uint64_t watermark_high;
	uint64_t grow_step;	/* growth per low-watermark event */
};

struct config {
	enum flush_policy flush_on_free;
	enum hibernation_policy hibernation;
	enum exit_policy on_exit;
	int log_level;			/* syslog priority, LOG_ERR..LOG_DEBUG */
	unsigned int pressure_some_avg10; /* hundredths of a %, 0: not used */
	unsigned int pressure_full_avg10; /* hundredths of a %, 0: not used */
	struct psi_trigger pressure_trigger;
	uint64_t decay_interval_ms;	/* calm time before decaying */
	struct node_policy node[CONFIG_MAX_NODES]; /* [global] + [nodeN] */
	unsigned int node_line[CONFIG_MAX_NODES]; /* of [nodeN]; 0: none */
};

#define CONFIG_MAX_ERRORS 16
#define CONFIG_KEY_MAX 32

struct config_error {
	unsigned int line;		/* 1-based; 0: the file as a whole */
	char key[CONFIG_KEY_MAX];	/* "" when the line has no key */
	char msg[160];
};

struct config_errors {
	size_t count;			/* entries in err[] */
	size_t dropped;			/* errors beyond CONFIG_MAX_ERRORS */
	struct config_error err[CONFIG_MAX_ERRORS];
};

/* The built-in defaults, documented in secmem.conf(5). */
void config_defaults(struct config *cfg);

/*
 * Parse @len bytes of configuration text.  On success, returns 0 and sets
 * *@cfg.  On any error, returns -1, leaves *@cfg untouched and lists every
 * problem found (not only the first) in *@errs.
 */
int config_parse_buffer(const char *text, size_t len, struct config *cfg,
			struct config_errors *errs);

/*
 * Parse the file at @path, as config_parse_buffer().  A file that cannot
 * be read is reported as an error on line 0 with the errno text.
 */
int config_parse_file(const char *path, struct config *cfg,
		      struct config_errors *errs);

/*
 * The [nodeN] sections of @cfg for nodes not in @present (the nodes that
 * have an unmapped pool on this machine): one entry in *@errs per section,
 * on its line.  Returns the number of such sections.
 */
size_t config_check_nodes(const struct config *cfg,
			  const bool present[CONFIG_MAX_NODES],
			  struct config_errors *errs);

/* "FILE:LINE: KEY: MESSAGE" (or without LINE or KEY when absent). */
void config_error_format(const char *path, const struct config_error *e,
			 char *buf, size_t len);

const char *flush_policy_name(enum flush_policy f);
int flush_policy_parse(const char *s, enum flush_policy *f);
const char *hibernation_policy_name(enum hibernation_policy h);
int hibernation_policy_parse(const char *s, enum hibernation_policy *h);
const char *exit_policy_name(enum exit_policy e);
const char *log_level_name(int level);

#endif /* SECMEM_CONFIG_H */
