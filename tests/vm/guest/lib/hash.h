/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The 64-bit finalizer of MurmurHash3: the guest tests derive the
 * expected contents of a page or a secret from its index and a seed with
 * it, so that a check needs no copy of what was written.
 */
#ifndef SECMEM_TEST_HASH_H
#define SECMEM_TEST_HASH_H

#include <stdint.h>

static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif /* SECMEM_TEST_HASH_H */
