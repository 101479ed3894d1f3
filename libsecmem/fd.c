// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Raw secret files for another process or a VMM (guest memory).
 */
#define _GNU_SOURCE
#include <errno.h>

#include "internal.h"

SECMEM_API int secmem_fd_create(size_t size, unsigned int flags)
{
	if (!size || (flags & ~(SECMEM_FD_SEAL | SECMEM_FD_NOCLOEXEC))) {
		sm_fail(SECMEM_EINVAL, EINVAL);
		return -1;
	}
	if (size > PTRDIFF_MAX) {
		sm_fail(SECMEM_ENOMEM, ENOMEM);
		return -1;
	}
	if (sm_ensure_init() < 0)
		return -1;
	return sm_backend_memfd(sm_round_up(size, sm_page_size),
				flags & SECMEM_FD_SEAL,
				!(flags & SECMEM_FD_NOCLOEXEC));
}

SECMEM_API int secmem_fd_wiped(int fd)
{
	int r = sm_fd_wiped(fd);

	if (r < 0) {
		sm_fail_wiped_probe(-r);
		return -1;
	}
	return r;
}
