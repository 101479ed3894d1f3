// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The _r functions: each calls the function without _r and returns the
 * SECMEM_E* code of its failure, read from the calling thread's record in
 * the same call (so on the thread that failed), or SECMEM_OK with the
 * result in an output parameter.  On failure the output is not written.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "internal.h"

/*
 * The code the failed call just recorded.  Every failure path records
 * one; a failure that did not would still never read as success.
 */
static int result_failed(void)
{
	int code = sm_error_get()->code;

	return code ? code : SECMEM_ESYSCALL;
}

/* A NULL output parameter. */
static int result_no_output(void)
{
	sm_fail(SECMEM_EINVAL, EINVAL);
	return SECMEM_EINVAL;
}

/* @p from an allocation function: store it in *@out or report why not. */
static int result_ptr(void **out, void *p)
{
	if (!p)
		return result_failed();
	*out = p;
	return SECMEM_OK;
}

SECMEM_API int secmem_init_r(unsigned int flags)
{
	return secmem_init(flags) ? result_failed() : SECMEM_OK;
}

SECMEM_API int secmem_backend_r(enum secmem_backend *backend)
{
	if (!backend)
		return result_no_output();
	if (sm_ensure_init() < 0)
		return result_failed();
	*backend = sm_backend_get();
	return SECMEM_OK;
}

SECMEM_API int secmem_malloc_r(void **ptr, size_t size)
{
	return ptr ? result_ptr(ptr, secmem_malloc(size)) : result_no_output();
}

SECMEM_API int secmem_calloc_r(void **ptr, size_t nmemb, size_t size)
{
	return ptr ? result_ptr(ptr, secmem_calloc(nmemb, size)) :
		     result_no_output();
}

SECMEM_API int secmem_realloc_r(void **ptr, size_t size)
{
	return ptr ? result_ptr(ptr, secmem_realloc(*ptr, size)) :
		     result_no_output();
}

SECMEM_API int secmem_aligned_alloc_r(void **ptr, size_t alignment,
				      size_t size)
{
	return ptr ? result_ptr(ptr, secmem_aligned_alloc(alignment, size)) :
		     result_no_output();
}

SECMEM_API int secmem_alloc_pages_r(void **ptr, size_t size)
{
	return ptr ? result_ptr(ptr, secmem_alloc_pages(size)) :
		     result_no_output();
}

SECMEM_API int secmem_strndup_r(char **copy, const char *s, size_t n)
{
	char *d;

	if (!copy)
		return result_no_output();
	d = secmem_strndup(s, n);
	if (!d)
		return result_failed();
	*copy = d;
	return SECMEM_OK;
}

SECMEM_API int secmem_strdup_r(char **copy, const char *s)
{
	return secmem_strndup_r(copy, s, SIZE_MAX);
}

SECMEM_API int secmem_protect_r(void *ptr, int prot)
{
	return secmem_protect(ptr, prot) ? result_failed() : SECMEM_OK;
}

SECMEM_API int secmem_fd_create_r(int *fd, size_t size, unsigned int flags)
{
	int r;

	if (!fd)
		return result_no_output();
	r = secmem_fd_create(size, flags);
	if (r < 0)
		return result_failed();
	*fd = r;
	return SECMEM_OK;
}

SECMEM_API int secmem_wiped_r(int *wiped)
{
	int r;

	if (!wiped)
		return result_no_output();
	r = secmem_wiped();
	if (r < 0)
		return result_failed();
	*wiped = r;
	return SECMEM_OK;
}

SECMEM_API int secmem_fd_wiped_r(int fd, int *wiped)
{
	int r;

	if (!wiped)
		return result_no_output();
	r = secmem_fd_wiped(fd);
	if (r < 0)
		return result_failed();
	*wiped = r;
	return SECMEM_OK;
}
