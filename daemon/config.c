// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * secmem.conf parser, on top of inih.
 *
 * inih does the tokenising; this file adds what a system daemon needs and
 * inih does not do: line numbers for every error (a reader callback that
 * counts lines, since inih calls the handler once per line just read),
 * duplicate section and key detection, per-node sections that inherit from
 * [global] whatever order they appear in, and cross-key checks on the
 * values each node ends up with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "units.h"

/* A configuration file larger than this is surely a mistake. */
#define CONFIG_FILE_MAX (1024L * 1024)

enum node_key {
	NK_POOL_TARGET,
	NK_POOL_MIN,
	NK_POOL_MAX,
	NK_WATERMARK_LOW,
	NK_WATERMARK_HIGH,
	NK_GROW_STEP,
	NK_COUNT,
};

static const struct {
	const char *name;
	size_t offset;
	uint64_t min;
} node_keys[NK_COUNT] = {
	[NK_POOL_TARGET] = { "pool_target",
			     offsetof(struct node_policy, pool_target), 0 },
	[NK_POOL_MIN] = { "pool_min", offsetof(struct node_policy, pool_min),
			  0 },
	[NK_POOL_MAX] = { "pool_max", offsetof(struct node_policy, pool_max),
			  0 },
	[NK_WATERMARK_LOW] = { "watermark_low",
			       offsetof(struct node_policy, watermark_low), 0 },
	[NK_WATERMARK_HIGH] = { "watermark_high",
				offsetof(struct node_policy, watermark_high),
				0 },
	/* A zero step would make growth a silent no-op. */
	[NK_GROW_STEP] = { "grow_step",
			   offsetof(struct node_policy, grow_step), 1 },
};

static uint64_t *node_field(struct node_policy *p, enum node_key k)
{
	return (uint64_t *)((char *)p + node_keys[k].offset);
}

/* The node keys that one section sets, and on which line. */
struct layer {
	struct node_policy val;
	unsigned int line[NK_COUNT];	/* 0: not set in this section */
};

/* Keys only [global] may carry; each parser explains a refusal in @why. */
typedef int (*global_parser)(const char *v, struct config *cfg, char *why,
			     size_t len);

struct global_key {
	const char *name;
	global_parser parse;
};

#define SECTION_NONE (-3)	/* before the first section header */
#define SECTION_BAD (-2)	/* unknown or duplicate: keys are skipped */
#define SECTION_GLOBAL (-1)	/* >= 0: a node number */

struct parser {
	const char *text;
	size_t len;
	size_t pos;
	unsigned int line;	/* of the line last handed to inih */
	int section;		/* SECTION_* or a node number */
	unsigned int global_header;		/* line of [global], 0 if none */
	unsigned int node_header[CONFIG_MAX_NODES];
	struct layer global;
	struct layer node[CONFIG_MAX_NODES];
	unsigned int global_line[16];	/* per global_keys[] entry */
	struct config cfg;		/* global-only keys land here */
	struct config_errors *errs;
};

static void add_error(struct config_errors *errs, unsigned int line,
		      const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_error(struct config_errors *errs, unsigned int line,
		      const char *key, const char *fmt, ...)
{
	struct config_error *e;
	va_list ap;

	if (errs->count == CONFIG_MAX_ERRORS) {
		errs->dropped++;
		return;
	}
	e = &errs->err[errs->count++];
	e->line = line;
	snprintf(e->key, sizeof(e->key), "%s", key ? key : "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

/* --- global keys -------------------------------------------------------- */

int flush_policy_parse(const char *s, enum flush_policy *f)
{
	if (!strcmp(s, "immediate"))
		*f = FLUSH_IMMEDIATE;
	else if (!strcmp(s, "deferred"))
		*f = FLUSH_DEFERRED;
	else
		return -EINVAL;
	return 0;
}

const char *flush_policy_name(enum flush_policy f)
{
	return f == FLUSH_DEFERRED ? "deferred" : "immediate";
}

int hibernation_policy_parse(const char *s, enum hibernation_policy *h)
{
	if (!strcmp(s, "refuse"))
		*h = HIBERNATION_REFUSE;
	else if (!strcmp(s, "wipe"))
		*h = HIBERNATION_WIPE;
	else
		return -EINVAL;
	return 0;
}

const char *hibernation_policy_name(enum hibernation_policy h)
{
	return h == HIBERNATION_WIPE ? "wipe" : "refuse";
}

const char *exit_policy_name(enum exit_policy e)
{
	return e == EXIT_RESTORE ? "restore" : "keep";
}

static const char *const log_levels[] = {
	[LOG_ERR] = "err",	   [LOG_WARNING] = "warning",
	[LOG_NOTICE] = "notice", [LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

const char *log_level_name(int level)
{
	if (level >= LOG_ERR && level <= LOG_DEBUG)
		return log_levels[level];
	return "?";
}

static int parse_flush(const char *v, struct config *cfg, char *why,
		       size_t len)
{
	if (flush_policy_parse(v, &cfg->flush_on_free) == 0)
		return 0;
	snprintf(why, len, "'%s' is not one of: immediate, deferred", v);
	return -1;
}

static int parse_hibernation(const char *v, struct config *cfg, char *why,
			     size_t len)
{
	if (hibernation_policy_parse(v, &cfg->hibernation) == 0)
		return 0;
	snprintf(why, len, "'%s' is not one of: refuse, wipe", v);
	return -1;
}

static int parse_on_exit(const char *v, struct config *cfg, char *why,
			 size_t len)
{
	if (!strcmp(v, "keep")) {
		cfg->on_exit = EXIT_KEEP;
	} else if (!strcmp(v, "restore")) {
		cfg->on_exit = EXIT_RESTORE;
	} else {
		snprintf(why, len, "'%s' is not one of: keep, restore", v);
		return -1;
	}
	return 0;
}

static int parse_log_level(const char *v, struct config *cfg, char *why,
			   size_t len)
{
	int i;

	for (i = LOG_ERR; i <= LOG_DEBUG; i++) {
		if (!strcmp(v, log_levels[i])) {
			cfg->log_level = i;
			return 0;
		}
	}
	snprintf(why, len,
		 "'%s' is not one of: err, warning, notice, info, debug", v);
	return -1;
}

static int percent(const char *v, unsigned int *out, char *why, size_t len)
{
	int r = parse_percent(v, out);

	if (r == -ERANGE)
		snprintf(why, len, "%s is out of range [0, 100]", v);
	else if (r)
		snprintf(why, len,
			 "'%s' is not a percentage (e.g. 10 or 12.5)", v);
	return r ? -1 : 0;
}

static int parse_some(const char *v, struct config *cfg, char *why,
		      size_t len)
{
	return percent(v, &cfg->pressure_some_avg10, why, len);
}

static int parse_full(const char *v, struct config *cfg, char *why,
		      size_t len)
{
	return percent(v, &cfg->pressure_full_avg10, why, len);
}

/*
 * "some|full STALL_US WINDOW_US", written to /proc/pressure/memory as is.
 * The limits are the kernel's (psi_trigger_create()): checking them here
 * turns a write error at run time into a message at parse time.
 */
static int parse_trigger(const char *v, struct config *cfg, char *why,
			 size_t len)
{
	char kind[8], stall[16], window[16], extra;
	uint64_t s, w;
	struct psi_trigger t;

	if (sscanf(v, "%7s %15s %15s %c", kind, stall, window, &extra) != 3)
		goto syntax;
	if (!strcmp(kind, "some"))
		t.kind = PSI_SOME;
	else if (!strcmp(kind, "full"))
		t.kind = PSI_FULL;
	else
		goto syntax;
	if (parse_uint(stall, UINT32_MAX, &s) ||
	    parse_uint(window, UINT32_MAX, &w))
		goto syntax;
	if (w < 500000 || w > 10000000) {
		snprintf(why, len, "window %s us is out of range [500000, 10000000]",
			 window);
		return -1;
	}
	if (s == 0 || s > w) {
		snprintf(why, len, "stall %s us is out of range [1, window]",
			 stall);
		return -1;
	}
	t.stall_us = (uint32_t)s;
	t.window_us = (uint32_t)w;
	cfg->pressure_trigger = t;
	return 0;
syntax:
	snprintf(why, len,
		 "'%s' is not \"some|full STALL_US WINDOW_US\" (e.g. \"some 150000 1000000\")",
		 v);
	return -1;
}

static int parse_decay(const char *v, struct config *cfg, char *why,
		       size_t len)
{
	uint64_t ms;
	int r = parse_duration_ms(v, &ms);

	if (r == -EINVAL) {
		snprintf(why, len, "'%s' is not a duration (e.g. 30s, 500ms, 2m)",
			 v);
		return -1;
	}
	if (r || ms < 1000 || ms > UINT64_C(3600000)) {
		snprintf(why, len, "%s is out of range [1s, 60m]", v);
		return -1;
	}
	cfg->decay_interval_ms = ms;
	return 0;
}

static const struct global_key global_keys[] = {
	{ "flush_on_free", parse_flush },
	{ "hibernation", parse_hibernation },
	{ "on_exit", parse_on_exit },
	{ "log_level", parse_log_level },
	{ "pressure_some_avg10", parse_some },
	{ "pressure_full_avg10", parse_full },
	{ "pressure_trigger", parse_trigger },
	{ "decay_interval", parse_decay },
};

_Static_assert(sizeof(global_keys) / sizeof(global_keys[0]) <=
		       sizeof(((struct parser *)0)->global_line) /
			       sizeof(unsigned int),
	       "global_line[] too small");

/* --- inih callbacks ----------------------------------------------------- */

static const char *section_name(int section, char *buf, size_t len)
{
	if (section == SECTION_GLOBAL)
		snprintf(buf, len, "[global]");
	else
		snprintf(buf, len, "[node%d]", section);
	return buf;
}

/* "node" followed by a node number without leading zeros. */
static int parse_node_section(const char *name)
{
	uint64_t n;

	if (strncmp(name, "node", 4) || (name[4] == '0' && name[5]))
		return -EINVAL;
	if (parse_uint(name + 4, CONFIG_MAX_NODES - 1, &n))
		return name[4] >= '0' && name[4] <= '9' ? -ERANGE : -EINVAL;
	return (int)n;
}

/* A section header on line p->line: check it and make it current. */
static void enter_section(struct parser *p, const char *name)
{
	unsigned int *header;
	int node;

	p->section = SECTION_BAD;
	if (!strcmp(name, "global")) {
		header = &p->global_header;
		node = SECTION_GLOBAL;
	} else {
		node = parse_node_section(name);
		if (node == -ERANGE) {
			add_error(p->errs, p->line, NULL,
				  "[%s]: node number out of range [0, %d]",
				  name, CONFIG_MAX_NODES - 1);
			return;
		}
		if (node < 0) {
			add_error(p->errs, p->line, NULL,
				  "[%s]: unknown section (expected [global] or [nodeN])",
				  name);
			return;
		}
		header = &p->node_header[node];
	}
	if (*header) {
		add_error(p->errs, p->line, NULL,
			  "[%s]: duplicate section (first on line %u)", name,
			  *header);
		return;
	}
	*header = p->line;
	p->section = node;
}

/*
 * Look at a line before inih does: count it, find section headers, and
 * refuse what inih would silently accept or misread.  A refused line is
 * handed to inih as an empty line so that it is reported once.
 */
static char *reader(char *str, int num, void *stream)
{
	struct parser *p = stream;
	const char *start = p->text + p->pos;
	const char *nl, *line;
	size_t n, cap = (size_t)num - 1;

	if (p->pos >= p->len)
		return NULL;
	nl = memchr(start, '\n', p->len - p->pos);
	n = nl ? (size_t)(nl - start) + 1 : p->len - p->pos;
	p->pos += n;
	p->line++;

	if (memchr(start, '\0', n)) {
		add_error(p->errs, p->line, NULL, "NUL byte in line");
		goto refuse;
	}
	if (n > cap) {
		add_error(p->errs, p->line, NULL, "line longer than %zu characters",
			  cap - 1);
		goto refuse;
	}
	memcpy(str, start, n);
	str[n] = '\0';
	line = str;
	if (p->line == 1 && !strncmp(line, "\xef\xbb\xbf", 3))
		line += 3;

	/* inih would take an indented line as the continuation of a value. */
	if (*line == ' ' || *line == '\t') {
		const char *s = line + strspn(line, " \t\r\n");

		if (*s && *s != '#' && *s != ';') {
			add_error(p->errs, p->line, NULL,
				  "indented line (continuation lines are not supported)");
			goto refuse;
		}
	}
	if (*line == '[') {
		const char *end = strchr(line, ']');
		char name[64];

		/* A header without ']' is inih's syntax error to report. */
		if (end) {
			size_t l = (size_t)(end - line - 1);

			if (l >= sizeof(name))
				l = sizeof(name) - 1;
			memcpy(name, line + 1, l);
			name[l] = '\0';
			enter_section(p, name);
		}
	}
	return str;
refuse:
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

static int handle_node_key(struct parser *p, struct layer *l, const char *key,
			   const char *value)
{
	uint64_t v;
	int k, r;

	for (k = 0; k < NK_COUNT; k++)
		if (!strcmp(key, node_keys[k].name))
			break;
	if (k == NK_COUNT)
		return -ENOENT;
	if (l->line[k]) {
		add_error(p->errs, p->line, key, "duplicate key (first on line %u)",
			  l->line[k]);
		return 0;
	}
	r = parse_size(value, &v);
	if (r == -EINVAL) {
		add_error(p->errs, p->line, key,
			  "'%s' is not a size (e.g. 4096, 512K, 64M, 1G)",
			  value);
		return 0;
	}
	if (r || v > CONFIG_SIZE_MAX || v < node_keys[k].min) {
		add_error(p->errs, p->line, key, "%s is out of range [%s, 1T]",
			  value, node_keys[k].min ? "1" : "0");
		return 0;
	}
	*node_field(&l->val, (enum node_key)k) = v;
	l->line[k] = p->line;
	return 0;
}

static int handler(void *user, const char *section, const char *key,
		   const char *value)
{
	struct parser *p = user;
	char why[160], sec[24];
	size_t i;

	(void)section; /* the reader tracked it, with its line */
	if (p->section == SECTION_BAD)
		return 1;
	if (p->section == SECTION_NONE) {
		add_error(p->errs, p->line, key, "key outside of any section");
		return 1;
	}
	if (!*value) {
		add_error(p->errs, p->line, key, "empty value");
		return 1;
	}
	if (handle_node_key(p, p->section == SECTION_GLOBAL ?
				       &p->global : &p->node[p->section],
			    key, value) == 0)
		return 1;

	for (i = 0; i < sizeof(global_keys) / sizeof(global_keys[0]); i++)
		if (!strcmp(key, global_keys[i].name))
			break;
	if (i == sizeof(global_keys) / sizeof(global_keys[0])) {
		add_error(p->errs, p->line, key, "unknown key in %s",
			  section_name(p->section, sec, sizeof(sec)));
		return 1;
	}
	if (p->section != SECTION_GLOBAL) {
		add_error(p->errs, p->line, key, "only allowed in [global]");
		return 1;
	}
	if (p->global_line[i]) {
		add_error(p->errs, p->line, key, "duplicate key (first on line %u)",
			  p->global_line[i]);
		return 1;
	}
	p->global_line[i] = p->line;
	if (global_keys[i].parse(value, &p->cfg, why, sizeof(why)))
		add_error(p->errs, p->line, key, "%s", why);
	return 1;
}

/* --- resolving and cross-checks ----------------------------------------- */

/* @base with what @l sets; lines[] tells where each value came from. */
static void overlay(struct node_policy *out, unsigned int *lines,
		    const struct layer *l)
{
	int k;

	for (k = 0; k < NK_COUNT; k++) {
		if (!l->line[k])
			continue;
		*node_field(out, (enum node_key)k) =
			*node_field((struct node_policy *)&l->val,
				    (enum node_key)k);
		lines[k] = l->line[k];
	}
}

/*
 * Check that @a <= @b on the values a node ends up with.  The error goes
 * to the line that set either value last in the file, so it points at
 * what the administrator most likely just edited.  With @own, it is only
 * reported if this section set one of the two (otherwise the same error
 * was already reported for [global]).  Returns true if it was reported.
 */
static bool check_order(struct parser *p, const struct node_policy *np,
			const unsigned int *lines, const bool *own, int section,
			enum node_key a, enum node_key b)
{
	uint64_t va = *node_field((struct node_policy *)np, a);
	uint64_t vb = *node_field((struct node_policy *)np, b);
	char sa[SIZE_STR_MAX], sb[SIZE_STR_MAX], sec[24];
	enum node_key k = lines[a] >= lines[b] ? a : b;

	if (va <= vb || (own && !own[a] && !own[b]))
		return false;
	add_error(p->errs, lines[k], node_keys[k].name,
		  "%s %s is above %s %s (%s)", node_keys[a].name,
		  format_size(va, sa, sizeof(sa)), node_keys[b].name,
		  format_size(vb, sb, sizeof(sb)),
		  section_name(section, sec, sizeof(sec)));
	return true;
}

/*
 * pool_min <= pool_target <= pool_max and watermark_low <= pool_target <=
 * watermark_high.  One mistake often breaks several of these: only the
 * first is reported, in an order that names the most direct conflict.
 */
static void check_node(struct parser *p, const struct node_policy *np,
		       const unsigned int *lines, const bool *own, int section)
{
	static const enum node_key order[][2] = {
		{ NK_POOL_MIN, NK_POOL_MAX },
		{ NK_WATERMARK_LOW, NK_WATERMARK_HIGH },
		{ NK_POOL_MIN, NK_POOL_TARGET },
		{ NK_POOL_TARGET, NK_POOL_MAX },
		{ NK_WATERMARK_LOW, NK_POOL_TARGET },
		{ NK_POOL_TARGET, NK_WATERMARK_HIGH },
	};
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (check_order(p, np, lines, own, section, order[i][0],
				order[i][1]))
			return;
}

/* Build every node's values and check them; returns the error count. */
static size_t resolve(struct parser *p)
{
	struct node_policy global = p->cfg.node[0];
	unsigned int glines[NK_COUNT] = { 0 };
	int n, k;

	overlay(&global, glines, &p->global);
	check_node(p, &global, glines, NULL, SECTION_GLOBAL);
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		unsigned int lines[NK_COUNT];
		bool own[NK_COUNT];

		p->cfg.node[n] = global;
		if (!p->node_header[n])
			continue;
		memcpy(lines, glines, sizeof(lines));
		overlay(&p->cfg.node[n], lines, &p->node[n]);
		for (k = 0; k < NK_COUNT; k++)
			own[k] = p->node[n].line[k] != 0;
		check_node(p, &p->cfg.node[n], lines, own, n);
	}
	return p->errs->count;
}

/* --- entry points ------------------------------------------------------- */

void config_defaults(struct config *cfg)
{
	int n;

	memset(cfg, 0, sizeof(*cfg));
	cfg->flush_on_free = FLUSH_IMMEDIATE;
	cfg->hibernation = HIBERNATION_REFUSE;	/* the kernel's default */
	cfg->on_exit = EXIT_KEEP;
	cfg->log_level = LOG_INFO;
	cfg->pressure_some_avg10 = 1000;
	cfg->pressure_full_avg10 = 500;
	cfg->pressure_trigger = (struct psi_trigger){ PSI_SOME, 200000,
						      2000000 };
	cfg->decay_interval_ms = 30000;
	for (n = 0; n < CONFIG_MAX_NODES; n++)
		cfg->node[n] = (struct node_policy){
			.pool_target = 32ULL << 20,
			.pool_min = 0,
			.pool_max = 256ULL << 20,
			.watermark_low = 8ULL << 20,
			.watermark_high = 64ULL << 20,
			.grow_step = 16ULL << 20,
		};
}

int config_parse_buffer(const char *text, size_t len, struct config *cfg,
			struct config_errors *errs)
{
	struct parser *p;
	int r;

	errs->count = 0;
	errs->dropped = 0;
	/* ~10 KiB: too much for the stack of a fuzzer or a small thread. */
	p = calloc(1, sizeof(*p));
	if (!p) {
		add_error(errs, 0, NULL, "out of memory");
		return -1;
	}
	p->text = text;
	p->len = len;
	p->section = SECTION_NONE;
	p->errs = errs;
	config_defaults(&p->cfg);

	r = ini_parse_stream(reader, p, handler, p);
	/* The handler never fails, so r > 0 is inih's own syntax error. */
	if (r > 0)
		add_error(p->errs, (unsigned int)r, NULL,
			  "syntax error (expected [section], key = value or a comment)");
	else if (r < 0)
		add_error(p->errs, 0, NULL, "out of memory");
	if (!errs->count && resolve(p) == 0) {
		memcpy(p->cfg.node_line, p->node_header,
		       sizeof(p->cfg.node_line));
		*cfg = p->cfg;
	}
	free(p);
	return errs->count ? -1 : 0;
}

static const char *file_type(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a file";
}

int config_parse_file(const char *path, struct config *cfg,
		      struct config_errors *errs)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n = 0;
	int fd, r;

	errs->count = 0;
	errs->dropped = 0;
	/*
	 * O_NONBLOCK: opening a FIFO with no writer would otherwise block
	 * forever (and a SIGHUP reload with it, SIGTERM included).  O_NOCTTY:
	 * a terminal named by mistake must not become ours.  The type is
	 * checked on the fd, not the path, so nothing can swap it.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		add_error(errs, 0, NULL, "is a directory");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		add_error(errs, 0, NULL, "not a regular file (%s)",
			  file_type(st.st_mode));
		goto out;
	}
	if (st.st_size > CONFIG_FILE_MAX) {
		errno = EFBIG;
		goto fail;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		goto fail;
	/* One read past the size: a file that grew is read to its end. */
	while ((size_t)n <= (size_t)st.st_size) {
		ssize_t m = read(fd, buf + n, (size_t)st.st_size + 1 - (size_t)n);

		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			goto fail;
		if (m == 0)
			break;
		n += m;
	}
	if ((size_t)n > (size_t)st.st_size) {
		errno = EAGAIN;	/* changing under us: try again later */
		goto fail;
	}
	close(fd);
	r = config_parse_buffer(buf, (size_t)n, cfg, errs);
	free(buf);
	return r;
fail:
	add_error(errs, 0, NULL, "cannot read: %s", strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return -1;
}

/* "0-1, 3" into @buf: the nodes in @present, as ranges. */
static const char *node_list(const bool *present, char *buf, size_t len)
{
	size_t off = 0;
	int n = 0, end;

	buf[0] = '\0';
	while (n < CONFIG_MAX_NODES && off < len) {
		if (!present[n]) {
			n++;
			continue;
		}
		for (end = n; end + 1 < CONFIG_MAX_NODES && present[end + 1];)
			end++;
		off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? ", " : "", n);
		if (end > n && off < len)
			off += (size_t)snprintf(buf + off, len - off, "-%d", end);
		n = end + 1;
	}
	return *buf ? buf : "none";
}

size_t config_check_nodes(const struct config *cfg,
			  const bool present[CONFIG_MAX_NODES],
			  struct config_errors *errs)
{
	char buf[64];
	const char *nodes = node_list(present, buf, sizeof(buf));
	size_t count = 0;
	int n;

	errs->count = 0;
	errs->dropped = 0;
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		if (!cfg->node_line[n] || present[n])
			continue;
		add_error(errs, cfg->node_line[n], NULL,
			  "[node%d]: this machine has no node %d with an unmapped pool (pools on nodes: %s)",
			  n, n, nodes);
		count++;
	}
	return count;
}

void config_error_format(const char *path, const struct config_error *e,
			 char *buf, size_t len)
{
	char line[16] = "";

	if (e->line)
		snprintf(line, sizeof(line), "%u:", e->line);
	snprintf(buf, len, "%s:%s %s%s%s", path, line, e->key,
		 *e->key ? ": " : "", e->msg);
}
