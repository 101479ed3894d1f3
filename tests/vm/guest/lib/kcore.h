/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Search the kernel's RAM, as /proc/kcore shows it, for a byte pattern.
 *
 * Used to show that memory taken out of the direct map (memfd_secret and
 * the secmem series) cannot be found by a reader of kernel memory, and that
 * the same bytes in ordinary memory can.
 */
#ifndef SECMEM_TEST_KCORE_H
#define SECMEM_TEST_KCORE_H

#include <stddef.h>
#include <stdint.h>

#define KCORE_MAX_SEGS	64

/* One PT_LOAD program header of /proc/kcore that covers physical RAM. */
struct kcore_seg {
	uint64_t vaddr;		/* direct-map address of the first byte */
	uint64_t paddr;		/* physical address of the first byte */
	uint64_t offset;	/* file offset in /proc/kcore */
	uint64_t size;
};

struct kcore {
	int fd;
	unsigned int nr_segs;
	struct kcore_seg segs[KCORE_MAX_SEGS];
};

/*
 * Open /proc/kcore and collect its RAM segments. Returns 0, or a negative
 * errno (-ENOENT without CONFIG_PROC_KCORE, -EPERM without CAP_SYS_RAWIO,
 * -EINVAL if the file is not the ELF64 image this code expects).
 */
int kcore_open(struct kcore *kc);
void kcore_close(struct kcore *kc);

/* Total bytes of RAM the segments cover. */
uint64_t kcore_ram_bytes(const struct kcore *kc);

/*
 * Search every RAM segment for the @len bytes at @needle (1 <= len <= 4096).
 * Returns 1 and stores the physical address of the first match in @paddr,
 * 0 if the pattern is nowhere in RAM, or a negative errno.
 *
 * @needle is read one byte at a time through a volatile pointer so that the
 * compiler never loads the whole pattern into a vector register: a task's
 * register state is saved into ordinary kernel memory on a context switch,
 * where the scan would then find it.
 */
int kcore_find(const struct kcore *kc, const volatile unsigned char *needle,
	       size_t len, uint64_t *paddr);

/*
 * One pattern for kcore_find_all() and kcore_search_mem(). The pattern is
 * bytes[i] ^ xor: with xor 0xff a test can keep only a bit-inverted copy of
 * a secret in ordinary memory, which a scan for the secret itself can never
 * match, and still search for the secret. @bytes is read one byte at a time
 * through a volatile pointer, as in kcore_find().
 */
struct kcore_needle {
	const volatile unsigned char *bytes;
	size_t len;			/* 1..4096 */
	unsigned char xor;
	/* Results, written by the search. */
	int found;			/* 1 if the pattern was seen */
	uint64_t paddr;			/* where first seen */
};

/*
 * Read every RAM segment once and look for all @nr needles (clearing their
 * results first). Stops early once every needle has been found. Returns
 * how many needles were found, or a negative errno; @scanned (if not NULL)
 * gets the number of bytes of /proc/kcore read.
 */
int kcore_find_all(const struct kcore *kc, struct kcore_needle *needles,
		   unsigned int nr, uint64_t *scanned);

/*
 * The same search in @n bytes of the caller's memory at @buf, e.g. memory
 * it has just allocated. Needles already found keep their result; a new
 * match stores @base + its offset in @paddr. Returns how many needles were
 * found in @buf.
 */
unsigned int kcore_search_mem(const void *buf, size_t n,
			      struct kcore_needle *needles, unsigned int nr,
			      uint64_t base);

/*
 * Read @fd from where it is to its end (a disk, /proc/vmcore) and look for
 * all @nr needles, clearing their results first; a match's @paddr is its
 * offset from where the read began. Chunks overlap by the longest needle
 * less one byte, so no match across a chunk boundary is missed. Returns
 * how many needles were found, or a negative errno (a read error, or
 * -EINVAL for a needle of 0 or more than 4096 bytes); @scanned (if not
 * NULL) gets the number of bytes read, also on a read error.
 */
int kcore_search_fd(int fd, struct kcore_needle *needles, unsigned int nr,
		    uint64_t *scanned);

/*
 * Read @len bytes of RAM at physical address @paddr through /proc/kcore.
 * Returns 0, -ERANGE if no RAM segment holds the whole range, or a
 * negative errno.
 */
int kcore_read_phys(const struct kcore *kc, uint64_t paddr, void *buf,
		    size_t len);

#endif /* SECMEM_TEST_KCORE_H */
