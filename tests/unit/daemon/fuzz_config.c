// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the secmem.conf parser: no crash, no sanitizer
 * report, and the parser's own promises: success means no errors and a
 * configuration whose per-node invariants hold; failure means at least
 * one error and an untouched output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg, before;
	static struct config_errors errs;
	int n;

	memset(&cfg, 0xa5, sizeof(cfg));
	before = cfg;
	if (config_parse_buffer((const char *)data, size, &cfg, &errs)) {
		if (!errs.count || memcmp(&cfg, &before, sizeof(cfg)))
			abort();
		return 0;
	}
	if (errs.count)
		abort();
	for (n = 0; n < CONFIG_MAX_NODES; n++) {
		const struct node_policy *p = &cfg.node[n];

		if (p->pool_min > p->pool_target || p->pool_target > p->pool_max ||
		    p->watermark_low > p->pool_target ||
		    p->pool_target > p->watermark_high || !p->grow_step)
			abort();
	}
	return 0;
}
