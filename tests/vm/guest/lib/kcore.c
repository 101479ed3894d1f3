// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kcore RAM search, see kcore.h.
 *
 * /proc/kcore is an ELF64 core file. fs/proc/kcore.c emits one PT_LOAD per
 * region: RAM as seen through the direct map (p_paddr = __pa(p_vaddr)), the
 * kernel image (KCORE_TEXT, p_paddr = __pa_symbol(), at __START_KERNEL_map),
 * and vmalloc/vmemmap/module space (p_paddr = -1). RAM is exactly the set of
 * direct-map segments; the kernel image lies inside them too, so the
 * KCORE_TEXT segment is skipped rather than scanned twice. Pages the direct
 * map does not cover read back as zeroes (copy_from_kernel_nofault() fails
 * on them), which is what makes unmapped memory invisible here.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcore.h"

/* __START_KERNEL_map on x86-64: the kernel image mapping, not the direct map. */
#define KERNEL_IMAGE_MAP	0xffffffff80000000ULL
#define CHUNK			(1UL << 20)

static int read_exact(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += n;
	}
	return 0;
}

int kcore_open(struct kcore *kc)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned int i;
	int ret;

	memset(kc, 0, sizeof(*kc));
	kc->fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (kc->fd < 0)
		return -errno;

	ret = read_exact(kc->fd, &eh, sizeof(eh), 0);
	if (ret)
		goto err;
	ret = -EINVAL;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_type != ET_CORE || eh.e_phentsize != sizeof(Elf64_Phdr))
		goto err;

	for (i = 0; i < eh.e_phnum; i++) {
		ret = read_exact(kc->fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph));
		if (ret)
			goto err;
		if (ph.p_type != PT_LOAD || ph.p_paddr == (Elf64_Addr)-1 ||
		    ph.p_vaddr >= KERNEL_IMAGE_MAP || !ph.p_filesz)
			continue;
		ret = -E2BIG;
		if (kc->nr_segs == KCORE_MAX_SEGS)
			goto err;
		kc->segs[kc->nr_segs++] = (struct kcore_seg){
			.vaddr = ph.p_vaddr,
			.paddr = ph.p_paddr,
			.offset = ph.p_offset,
			.size = ph.p_filesz,
		};
	}
	ret = -EINVAL;
	if (!kc->nr_segs)
		goto err;
	return 0;
err:
	close(kc->fd);
	kc->fd = -1;
	return ret;
}

void kcore_close(struct kcore *kc)
{
	if (kc->fd >= 0)
		close(kc->fd);
	kc->fd = -1;
}

uint64_t kcore_ram_bytes(const struct kcore *kc)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < kc->nr_segs; i++)
		sum += kc->segs[i].size;
	return sum;
}

/* Offset of the first match of @nd's pattern in @buf, or -1. */
static long find_in(const unsigned char *buf, size_t n,
		    const struct kcore_needle *nd)
{
	const volatile unsigned char *needle = nd->bytes;
	const unsigned char x = nd->xor;
	const size_t len = nd->len;
	const unsigned char first = needle[0] ^ x;
	const unsigned char *p = buf, *end = buf + n;
	size_t k;

	while ((size_t)(end - p) >= len) {
		p = memchr(p, first, end - p - len + 1);
		if (!p)
			return -1;
		for (k = 1; k < len && p[k] == (unsigned char)(needle[k] ^ x); k++)
			;
		if (k == len)
			return p - buf;
		p++;
	}
	return -1;
}

unsigned int kcore_search_mem(const void *buf, size_t n,
			      struct kcore_needle *needles, unsigned int nr,
			      uint64_t base)
{
	unsigned int i, hits = 0;
	long at;

	for (i = 0; i < nr; i++) {
		at = find_in(buf, n, &needles[i]);
		if (at < 0)
			continue;
		hits++;
		if (!needles[i].found) {
			needles[i].found = 1;
			needles[i].paddr = base + at;
		}
	}
	return hits;
}


/*
 * Clear the results of @nr needles. Returns the longest needle, or 0 when
 * one is empty or longer than 4096 bytes.
 */
static size_t needles_reset(struct kcore_needle *needles, unsigned int nr)
{
	size_t maxlen = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!needles[i].len || needles[i].len > 4096)
			return 0;
		if (needles[i].len > maxlen)
			maxlen = needles[i].len;
		needles[i].found = 0;
		needles[i].paddr = 0;
	}
	return maxlen;
}

int kcore_find_all(const struct kcore *kc, struct kcore_needle *needles,
		   unsigned int nr, uint64_t *scanned)
{
	unsigned int i, left = nr;
	uint64_t bytes = 0;
	size_t maxlen = 0;
	unsigned char *buf;
	int ret = 0;

	maxlen = needles_reset(needles, nr);
	if (nr && !maxlen)
		return -EINVAL;
	if (scanned)
		*scanned = 0;
	if (!nr)
		return 0;
	buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;

	for (i = 0; i < kc->nr_segs && left && !ret; i++) {
		const struct kcore_seg *s = &kc->segs[i];
		uint64_t pos = 0;

		while (pos < s->size) {
			size_t n = s->size - pos < CHUNK ? s->size - pos : CHUNK;
			unsigned int j;
			long at;

			ret = read_exact(kc->fd, buf, n, s->offset + pos);
			if (ret)
				break;
			bytes += n;
			for (j = 0; j < nr; j++) {
				if (needles[j].found)
					continue;
				at = find_in(buf, n, &needles[j]);
				if (at < 0)
					continue;
				needles[j].found = 1;
				needles[j].paddr = s->paddr + pos + at;
				left--;
			}
			if (!left || pos + n >= s->size)
				break;
			/* Overlap chunks so a match across a boundary is seen. */
			pos += n - (maxlen - 1);
		}
	}
	free(buf);
	if (scanned)
		*scanned = bytes;
	return ret ? ret : (int)(nr - left);
}

int kcore_search_fd(int fd, struct kcore_needle *needles, unsigned int nr,
		    uint64_t *scanned)
{
	size_t maxlen = 0, keep = 0;
	int err = 0, found = 0;
	unsigned char *buf;
	uint64_t bytes = 0;
	unsigned int i;
	ssize_t n;

	if (scanned)
		*scanned = 0;
	maxlen = needles_reset(needles, nr);
	if (nr && !maxlen)
		return -EINVAL;
	buf = malloc(CHUNK + maxlen);
	if (!buf)
		return -ENOMEM;
	while ((n = read(fd, buf + keep, CHUNK)) > 0) {
		size_t have = keep + (size_t)n;

		kcore_search_mem(buf, have, needles, nr, bytes - keep);
		bytes += (uint64_t)n;
		/* A match may straddle two reads. */
		keep = have < maxlen - 1 ? have : maxlen - 1;
		memmove(buf, buf + have - keep, keep);
	}
	if (n < 0)
		err = -errno;
	free(buf);
	if (scanned)
		*scanned = bytes;
	if (err)
		return err;
	for (i = 0; i < nr; i++)
		found += needles[i].found;
	return found;
}

int kcore_find(const struct kcore *kc, const volatile unsigned char *needle,
	       size_t len, uint64_t *paddr)
{
	struct kcore_needle nd = { .bytes = needle, .len = len };
	int ret;

	ret = kcore_find_all(kc, &nd, 1, NULL);
	if (ret == 1)
		*paddr = nd.paddr;
	return ret;
}

int kcore_read_phys(const struct kcore *kc, uint64_t paddr, void *buf,
		    size_t len)
{
	unsigned int i;

	for (i = 0; i < kc->nr_segs; i++) {
		const struct kcore_seg *s = &kc->segs[i];

		if (paddr >= s->paddr && paddr - s->paddr <= s->size &&
		    len <= s->size - (paddr - s->paddr))
			return read_exact(kc->fd, buf, len,
					  s->offset + (paddr - s->paddr));
	}
	return -ERANGE;
}
