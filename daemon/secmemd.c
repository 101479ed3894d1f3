// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmemd: keeps pools of unmapped pageblocks sized for the applications
 * and gives them back under memory pressure.  See secmemd(8).
 *
 * This file only wires the pieces: config.c (what the administrator
 * wants), policy.c (what to do), sysfs.c (the kernel's knobs), netlink.c
 * and psi.c (what happens), log.c and runtime.c (what we tell people).
 * Every decision starts from a fresh read of sysfs, so a restarted daemon
 * (even after SIGKILL) carries on from the kernel's state, not from ours.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "netlink.h"
#include "policy.h"
#include "psi.h"
#include "runtime.h"
#include "sysfs.h"
#include "units.h"

#define CONFIG_PATH_DEFAULT "/etc/secmem.conf"

/* Exit statuses, documented in secmemd(8) and used by the unit. */
#define EXIT_CONFIG 2		/* bad configuration or usage */
#define EXIT_NO_FEATURE 3	/* the kernel lacks the pool control */
#define EXIT_LOCKED 4		/* another secmemd is running */

struct daemon {
	const char *config_path;
	const char *sysfs;
	const char *rundir;
	const char *psi_path;
	bool kernel_events;

	struct config cfg;	/* the loaded configuration */
	bool present[CONFIG_MAX_NODES];
	uint64_t last_grow_ms[CONFIG_MAX_NODES];
	uint64_t last_shrink_ms[CONFIG_MAX_NODES];
	struct history history;
	bool hibernation_warned; /* the kernel cannot apply the config's */

	int lock_fd;
	int signal_fd;
	int tick_fd;
	int watchdog_fd;
	int psi_fd;
	struct nl_sock *events;
};

static uint64_t now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool load_config(const char *path, struct config *cfg)
{
	struct config_errors errs;
	char line[512];
	size_t i;

	if (config_parse_file(path, cfg, &errs) == 0)
		return true;
	for (i = 0; i < errs.count; i++) {
		config_error_format(path, &errs.err[i], line, sizeof(line));
		log_msg_id(SECMEM_MSG_CONFIG_INVALID, LOG_ERR, "%s", line);
	}
	if (errs.dropped)
		log_msg_id(SECMEM_MSG_CONFIG_INVALID, LOG_ERR,
			   "%s: %zu more errors", path, errs.dropped);
	return false;
}

/*
 * [nodeN] sections for nodes this machine does not have: a warning for
 * the daemon (the other nodes are fine), an error for -t.  Returns their
 * number.
 */
static size_t check_nodes(const struct daemon *d, const struct config *cfg,
			  int prio)
{
	struct config_errors errs;
	char line[512];
	size_t count = config_check_nodes(cfg, d->present, &errs), i;

	for (i = 0; i < errs.count; i++) {
		config_error_format(d->config_path, &errs.err[i], line,
				    sizeof(line));
		log_msg(prio, "%s%s", line,
			prio == LOG_ERR ? "" : "; its settings are not used");
	}
	return count;
}

/* Build the policy's view from sysfs (and PSI), plus our timestamps. */
static int observe(struct daemon *d, struct observed_state *st)
{
	struct sysfs_global g;
	struct sysfs_node sn;
	int n, r;

	memset(st, 0, sizeof(*st));
	st->now_ms = now_ms(CLOCK_MONOTONIC);
	r = sysfs_read_global(d->sysfs, &g);
	if (r) {
		log_msg(LOG_ERR, "reading %s/kernel/mm/unmapped: %s", d->sysfs,
			strerror(-r));
		return r;
	}
	st->flush_on_free = g.flush_on_free;
	st->hibernation_present = g.hibernation_present;
	st->hibernation = g.hibernation;
	st->pageblock_bytes = g.pageblock_bytes;
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		struct node_state *ns = &st->node[n];

		if (!d->present[n])
			continue;
		r = sysfs_read_node(d->sysfs, n, &sn);
		if (r) {
			log_msg(LOG_ERR, "reading node %d: %s", n, strerror(-r));
			return r;
		}
		ns->present = true;
		ns->pool_target = sn.knob[KNOB_POOL_TARGET];
		ns->watermark_low = sn.knob[KNOB_WATERMARK_LOW];
		ns->watermark_high = sn.knob[KNOB_WATERMARK_HIGH];
		ns->last_grow_ms = d->last_grow_ms[n];
		ns->last_shrink_ms = d->last_shrink_ms[n];
	}
	/* Without PSI the pools simply never shrink for pressure. */
	if (psi_read(d->psi_path, &st->psi_some_avg10, &st->psi_full_avg10))
		st->psi_some_avg10 = st->psi_full_avg10 = 0;
	return 0;
}

static void update_status(struct daemon *d)
{
	char status[256], a[SIZE_STR_MAX], b[SIZE_STR_MAX];
	size_t off = 0;
	int n;

	for (n = 0; n < CONFIG_MAX_NODES && off < sizeof(status); n++) {
		struct sysfs_node sn;

		if (!d->present[n] || sysfs_read_node(d->sysfs, n, &sn))
			continue;
		off += (size_t)snprintf(status + off, sizeof(status) - off,
				"%snode%d pool %s/%s", off ? ", " : "", n,
				format_size(sn.stat[STAT_FREE_BYTES], a, sizeof(a)),
				format_size(sn.knob[KNOB_POOL_TARGET], b, sizeof(b)));
	}
	sd_notifyf(0, "STATUS=%s", off ? status : "no pools");
}

static void apply(struct daemon *d, const struct observed_state *st,
		  const struct decisions *ds, const char *event)
{
	unsigned int i;
	bool changed = false;

	for (i = 0; i < ds->count; i++) {
		const struct decision *dc = &ds->d[i];
		enum sysfs_knob failed = KNOB_POOL_TARGET;
		int r;

		if (dc->kind == DECISION_FLUSH) {
			r = sysfs_write_flush(d->sysfs, dc->flush_on_free);
			if (r)
				log_msg(LOG_ERR, "writing flush_on_free: %s",
					strerror(-r));
		} else if (dc->kind == DECISION_HIBERNATION) {
			r = sysfs_write_hibernation(d->sysfs, dc->hibernation);
			if (r)
				log_msg(LOG_ERR, "writing hibernation: %s",
					strerror(-r));
		} else {
			const struct node_state *ns = &st->node[dc->node];
			uint64_t cur[KNOB_COUNT] = {
				[KNOB_POOL_TARGET] = ns->pool_target,
				[KNOB_WATERMARK_LOW] = ns->watermark_low,
				[KNOB_WATERMARK_HIGH] = ns->watermark_high,
			};
			const uint64_t want[KNOB_COUNT] = {
				[KNOB_POOL_TARGET] = dc->pool_target,
				[KNOB_WATERMARK_LOW] = dc->watermark_low,
				[KNOB_WATERMARK_HIGH] = dc->watermark_high,
			};

			r = sysfs_set_node(d->sysfs, dc->node, cur, want,
					   &failed);
			if (r)
				log_msg(LOG_ERR,
					"node %d: the kernel refused %s = %" PRIu64 ": %s (wanted: %s)",
					dc->node, sysfs_knob_names[failed],
					want[failed], strerror(-r), dc->reason);
			else if (dc->cause == CAUSE_GROW)
				d->last_grow_ms[dc->node] = st->now_ms;
			else if (dc->cause == CAUSE_SHRINK)
				d->last_shrink_ms[dc->node] = st->now_ms;
		}
		if (r)
			continue;
		log_decision(dc, event);
		history_add(&d->history, (time_t)(now_ms(CLOCK_REALTIME) / 1000),
			    dc->reason);
		changed = true;
	}
	if (changed) {
		int r = runtime_write_history(d->rundir, &d->history);

		if (r)
			log_msg(LOG_WARNING, "writing %s/decisions: %s",
				d->rundir, strerror(-r));
		update_status(d);
	}
}

/*
 * A hibernation policy the kernel has no knob for: a warning once, not on
 * every reload, and again only after a reload to a configuration that did
 * not ask for it.  The rest of the configuration applies all the same.
 */
static void warn_hibernation(struct daemon *d, const struct observed_state *st)
{
	char why[256];

	if (!policy_hibernation_unsupported(&d->cfg, st, why, sizeof(why))) {
		d->hibernation_warned = false;
		return;
	}
	if (d->hibernation_warned)
		return;
	log_msg(LOG_WARNING, "%s: %s (no %s/kernel/mm/unmapped/hibernation)",
		d->config_path, why, d->sysfs);
	d->hibernation_warned = true;
}

static int handle(struct daemon *d, enum event_type type, int node)
{
	const struct event ev = { .type = type, .node = node };
	struct observed_state st;
	struct decisions ds;
	int r;

	r = observe(d, &st);
	if (r)
		return r;
	policy_decide(&d->cfg, &st, &ev, &ds);
	apply(d, &st, &ds, event_name(type));
	if (type == EVENT_START || type == EVENT_RELOAD)
		warn_hibernation(d, &st);
	return 0;
}

static int arm_timer(int fd, uint64_t ms)
{
	struct itimerspec its = {
		.it_value = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 },
		.it_interval = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 },
	};

	return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

static void open_psi(struct daemon *d)
{
	const struct psi_trigger *t = &d->cfg.pressure_trigger;

	if (d->psi_fd >= 0)
		close(d->psi_fd);
	d->psi_fd = psi_trigger_open(d->psi_path, t);
	if (d->psi_fd < 0)
		log_msg(LOG_WARNING,
			"no PSI trigger on %s (%s): pressure is only checked every decay_interval",
			d->psi_path, strerror(-d->psi_fd));
}

static void reload(struct daemon *d)
{
	struct config cfg;

	sd_notify(0, "RELOADING=1");
	if (!load_config(d->config_path, &cfg)) {
		log_msg_id(SECMEM_MSG_CONFIG_INVALID, LOG_ERR,
			   "reload failed: keeping the running configuration");
		sd_notify(0, "READY=1\nSTATUS=reload failed, running the previous configuration");
		return;
	}
	check_nodes(d, &cfg, LOG_WARNING);
	if (memcmp(&cfg.pressure_trigger, &d->cfg.pressure_trigger,
		   sizeof(cfg.pressure_trigger))) {
		d->cfg.pressure_trigger = cfg.pressure_trigger;
		open_psi(d);
	}
	if (cfg.decay_interval_ms != d->cfg.decay_interval_ms)
		arm_timer(d->tick_fd, cfg.decay_interval_ms);
	d->cfg = cfg;
	log_set_level(cfg.log_level);
	log_msg(LOG_INFO, "reloaded %s", d->config_path);
	handle(d, EVENT_RELOAD, -1);
	sd_notify(0, "READY=1");
	update_status(d);
}

/* on_exit = restore: the kernel's boot defaults (docs/secmemd.md). */
static void restore_defaults(struct daemon *d)
{
	static const uint64_t zero[KNOB_COUNT];
	struct observed_state st;
	enum sysfs_knob failed;
	int n, r;

	if (observe(d, &st))
		return;
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		uint64_t cur[KNOB_COUNT] = {
			[KNOB_POOL_TARGET] = st.node[n].pool_target,
			[KNOB_WATERMARK_LOW] = st.node[n].watermark_low,
			[KNOB_WATERMARK_HIGH] = st.node[n].watermark_high,
		};

		if (!st.node[n].present)
			continue;
		r = sysfs_set_node(d->sysfs, n, cur, zero, &failed);
		if (r)
			log_msg(LOG_ERR, "node %d: restoring %s: %s", n,
				sysfs_knob_names[failed], strerror(-r));
	}
	r = sysfs_write_flush(d->sysfs, FLUSH_IMMEDIATE);
	if (r)
		log_msg(LOG_ERR, "restoring flush_on_free: %s", strerror(-r));
	if (st.hibernation_present) {
		r = sysfs_write_hibernation(d->sysfs, HIBERNATION_REFUSE);
		if (r)
			log_msg(LOG_ERR, "restoring hibernation: %s",
				strerror(-r));
	}
	log_msg(LOG_NOTICE, "on_exit=restore: pools released, kernel defaults restored");
}

static void on_kernel_events(struct daemon *d)
{
	struct event_batch b;
	unsigned int i;
	int r;

	r = events_receive(d->events, &b);
	if (r)
		log_msg(LOG_WARNING, "receiving kernel events: %s", strerror(-r));
	if (b.dropped)
		log_msg(LOG_WARNING, "%u malformed or excess kernel events dropped",
			b.dropped);
	for (i = 0; i < b.count; i++) {
		const struct kernel_event *ke = &b.ev[i];

		log_msg(LOG_DEBUG, "kernel event %s on node %d",
			kernel_event_name(ke->type), ke->node);
		switch (ke->type) {
		case KEV_LOW_WATERMARK:
			handle(d, EVENT_LOW_WATERMARK, ke->node);
			break;
		case KEV_POOL_EXHAUSTED:
			handle(d, EVENT_POOL_EXHAUSTED, ke->node);
			break;
		case KEV_RECLAIM:
			handle(d, EVENT_RECLAIM, ke->node);
			break;
		case KEV_ALLOC_FAIL:
			/*
			 * No pool size helps when conversion itself fails:
			 * say what it costs, the event is rate-limited.
			 */
			log_msg_id(SECMEM_MSG_ALLOC_FAILED, LOG_WARNING,
				"node %d: an unmapped allocation failed: no pageblock could be unmapped, memfd_secret and MFD_UNMAPPED fall back to unmapping single pages (a TLB flush each, the direct map split)",
				ke->node);
			break;
		case KEV_SECRETS_WIPED:
			/* Relayed to the journal, where an admin looks. */
			log_msg_id(SECMEM_MSG_SECRETS_WIPED, LOG_WARNING,
				"hibernation = wipe: the kernel wiped %" PRIu64 " secret files (%" PRIu64 " bytes) before hibernating; their processes get SIGBUS on access and EIO from read() and write(), and libsecmem's secmem_wiped() returns 1",
				ke->wiped_files, ke->wiped_bytes);
			break;
		}
	}
}

/* Returns true when the daemon should stop. */
static bool on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	if (read(d->signal_fd, &si, sizeof(si)) != sizeof(si))
		return false;
	switch (si.ssi_signo) {
	case SIGHUP:
		reload(d);
		return false;
	case SIGUSR1:
		log_msg(LOG_INFO, "pool settings changed from outside (pid %u)",
			si.ssi_pid);
		update_status(d);
		return false;
	default:
		log_msg(LOG_INFO, "%s: stopping", strsignal((int)si.ssi_signo));
		return true;
	}
}

static void drain(int fd)
{
	uint64_t ticks;

	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		log_msg(LOG_WARNING, "timer: %s", strerror(errno));
}

static int run(struct daemon *d)
{
	enum { P_SIGNAL, P_TICK, P_WATCHDOG, P_PSI, P_EVENTS, P_COUNT };
	struct pollfd p[P_COUNT];

	for (;;) {
		p[P_SIGNAL] = (struct pollfd){ d->signal_fd, POLLIN, 0 };
		p[P_TICK] = (struct pollfd){ d->tick_fd, POLLIN, 0 };
		p[P_WATCHDOG] = (struct pollfd){ d->watchdog_fd, POLLIN, 0 };
		p[P_PSI] = (struct pollfd){ d->psi_fd, POLLPRI, 0 };
		p[P_EVENTS] = (struct pollfd){
			d->events ? events_fd(d->events) : -1, POLLIN, 0
		};
		if (poll(p, P_COUNT, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (p[P_SIGNAL].revents && on_signal(d))
			return 0;
		if (p[P_WATCHDOG].revents) {
			drain(d->watchdog_fd);
			sd_notify(0, "WATCHDOG=1");
		}
		if (p[P_EVENTS].revents)
			on_kernel_events(d);
		if (p[P_PSI].revents & POLLERR) {
			log_msg(LOG_WARNING, "the PSI trigger went away");
			close(d->psi_fd);
			d->psi_fd = -1;
		} else if (p[P_PSI].revents & POLLPRI) {
			handle(d, EVENT_PRESSURE, -1);
		}
		if (p[P_TICK].revents) {
			drain(d->tick_fd);
			handle(d, EVENT_CALM_TICK, -1);
		}
	}
}

static int setup(struct daemon *d)
{
	sigset_t mask;
	uint64_t usec;
	pid_t holder = 0;
	int ignored, r;

	d->lock_fd = runtime_lock(d->rundir, &holder);
	if (d->lock_fd == -EBUSY && holder > 0) {
		log_msg(LOG_ERR, "another secmemd is running (pid %ld, lock %s/secmemd.lock)",
			(long)holder, d->rundir);
		return EXIT_LOCKED;
	}
	if (d->lock_fd == -EBUSY) {
		log_msg(LOG_ERR, "another secmemd is running (pid unknown, lock %s/secmemd.lock)",
			d->rundir);
		return EXIT_LOCKED;
	}
	if (d->lock_fd == -EPERM) {
		log_msg(LOG_ERR, "%s/secmemd.lock: not a regular file of ours (uid %ld): refusing a lock others may hold",
			d->rundir, (long)geteuid());
		return 1;
	}
	if (d->lock_fd < 0) {
		log_msg(LOG_ERR, "%s: %s", d->rundir, strerror(-d->lock_fd));
		return 1;
	}

	r = sysfs_nodes(d->sysfs, d->present, &ignored);
	if (r == -ENOENT) {
		log_msg_id(SECMEM_MSG_NO_FEATURE, LOG_ERR,
			"%s/kernel/mm/unmapped does not exist: this kernel lacks unmapped pools (the secmem kernel series)",
			d->sysfs);
		return EXIT_NO_FEATURE;
	}
	if (r) {
		log_msg(LOG_ERR, "%s: %s", d->sysfs, strerror(-r));
		return 1;
	}
	if (ignored)
		log_msg(LOG_WARNING, "%d nodes numbered %d or more are left alone",
			ignored, CONFIG_MAX_NODES);

	if (d->kernel_events) {
		d->events = events_open(&r);
		if (r == -ENOENT) {
			log_msg_id(SECMEM_MSG_NO_FEATURE, LOG_ERR,
				"no generic netlink family \"secmem\" with group \"events\": this kernel lacks the pool events");
			return EXIT_NO_FEATURE;
		}
		if (r) {
			log_msg(LOG_ERR, "subscribing to kernel events: %s",
				strerror(-r));
			return 1;
		}
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return 1;
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->signal_fd < 0 || d->tick_fd < 0 ||
	    arm_timer(d->tick_fd, d->cfg.decay_interval_ms)) {
		log_msg(LOG_ERR, "signalfd/timerfd: %s", strerror(errno));
		return 1;
	}
	if (sd_watchdog_enabled(0, &usec) > 0) {
		d->watchdog_fd = timerfd_create(CLOCK_MONOTONIC,
						TFD_CLOEXEC | TFD_NONBLOCK);
		if (d->watchdog_fd < 0 ||
		    arm_timer(d->watchdog_fd, usec / 2000 ? usec / 2000 : 1)) {
			log_msg(LOG_ERR, "watchdog timer: %s", strerror(errno));
			return 1;
		}
	}
	open_psi(d);
	return 0;
}

/*
 * -t: what the parser checks, and what would go wrong on this machine
 * that the daemon itself only warns about.  Returns the exit status.
 */
static int test_config(struct daemon *d)
{
	bool sections = false;
	int n, ignored, r;

	for (n = 0; n < CONFIG_MAX_NODES; n++)
		sections |= d->cfg.node_line[n] != 0;
	r = sysfs_nodes(d->sysfs, d->present, &ignored);
	if (r && sections) {
		log_msg(LOG_WARNING,
			"%s/kernel/mm/unmapped: %s: the [nodeN] sections are not checked against this machine's nodes",
			d->sysfs, strerror(-r));
	} else if (!r && check_nodes(d, &d->cfg, LOG_ERR)) {
		log_msg(LOG_ERR, "%s: invalid configuration", d->config_path);
		return EXIT_CONFIG;
	}
	printf("%s: configuration OK\n", d->config_path);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: secmemd [OPTIONS]\n"
		"\n"
		"  -c, --config FILE     configuration (default " CONFIG_PATH_DEFAULT ")\n"
		"  -t, --test-config     check the configuration and exit\n"
		"      --sysfs-root DIR  sysfs mount point (default " SYSFS_ROOT_DEFAULT ")\n"
		"      --runtime-dir DIR lock and state (default " RUNTIME_DIR_DEFAULT ")\n"
		"      --psi-file FILE   memory PSI (default " PSI_MEMORY_PATH ")\n"
		"      --no-kernel-events  do not subscribe to the kernel's events\n"
		"  -h, --help            this text\n"
		"      --version         print the version and exit\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "test-config", no_argument, NULL, 't' },
		{ "sysfs-root", required_argument, NULL, 'S' },
		{ "runtime-dir", required_argument, NULL, 'R' },
		{ "psi-file", required_argument, NULL, 'P' },
		{ "no-kernel-events", no_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	struct daemon d = {
		.config_path = CONFIG_PATH_DEFAULT,
		.sysfs = SYSFS_ROOT_DEFAULT,
		.rundir = RUNTIME_DIR_DEFAULT,
		.psi_path = PSI_MEMORY_PATH,
		.kernel_events = true,
		.lock_fd = -1, .signal_fd = -1, .tick_fd = -1,
		.watchdog_fd = -1, .psi_fd = -1,
	};
	bool test_only = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "c:th", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d.config_path = optarg;
			break;
		case 't':
			test_only = true;
			break;
		case 'S':
			d.sysfs = optarg;
			break;
		case 'R':
			d.rundir = optarg;
			break;
		case 'P':
			d.psi_path = optarg;
			break;
		case 'E':
			d.kernel_events = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("secmemd %s\n", SECMEM_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_CONFIG;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return EXIT_CONFIG;
	}

	log_setup(LOG_INFO);
	if (!load_config(d.config_path, &d.cfg)) {
		if (test_only)
			log_msg(LOG_ERR, "%s: invalid configuration",
				d.config_path);
		return EXIT_CONFIG;
	}
	if (test_only)
		return test_config(&d);
	log_set_level(d.cfg.log_level);

	r = setup(&d);
	if (r == 0)
		check_nodes(&d, &d.cfg, LOG_WARNING);
	if (r == 0 && handle(&d, EVENT_START, -1)) {
		/* A missing file is the kernel lacking (part of) the ABI. */
		log_msg_id(SECMEM_MSG_NO_FEATURE, LOG_ERR,
			   "cannot apply %s: the kernel's pool interface is incomplete",
			   d.config_path);
		r = EXIT_NO_FEATURE;
	} else if (r == 0) {
		log_msg_id(SECMEM_MSG_STARTED, LOG_INFO,
			   "started: %s applied, flush_on_free %s, hibernation %s, on_exit %s",
			   d.config_path, flush_policy_name(d.cfg.flush_on_free),
			   hibernation_policy_name(d.cfg.hibernation),
			   exit_policy_name(d.cfg.on_exit));
		sd_notify(0, "READY=1");
		update_status(&d);
		r = run(&d);
		sd_notify(0, "STOPPING=1");
		if (d.cfg.on_exit == EXIT_RESTORE)
			restore_defaults(&d);
	}
	if (d.events)
		events_close(d.events);
	/* The other fds, the lock included, go with the process. */
	return r;
}
