// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability case 1, its "pinned" sub-test (see unmapped_frag_test.c):
 * a program of its own so that each fits the guest's per-program timeout.
 */
#define FRAG_PINNED 1
#include "unmapped_frag_test.c"
