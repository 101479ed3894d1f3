// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gcrypt_probe: run by test.sh under libsecmem-preload.so in gcrypt mode
 * (or without it), against Debian 12's libgcrypt.so.20.  It uses
 * libgcrypt as any program does, after gcry_check_version() and
 * GCRYCTL_INIT_SECMEM as gpg-agent does, and asks libsecmem (the instance
 * the preload uses) whether the memory libgcrypt holds its secrets in is
 * secret memory.
 *
 *   gcrypt_probe secure   the allocation API: gcry_malloc_secure,
 *                         gcry_calloc_secure, gcry_xmalloc_secure,
 *                         gcry_xcalloc_secure, gcry_realloc, gcry_is_secure,
 *                         gcry_free; gcry_malloc, whose memory libsecmem
 *                         serves too
 *   gcrypt_probe mpi      secure MPIs: limbs of gcry_mpi_snew() grown by
 *                         libgcrypt, the result of gcry_mpi_powm() that
 *                         libgcrypt allocates inside the computation, a
 *                         copy, GCRYMPI_FLAG_SECURE set on an MPI
 *   gcrypt_probe genkey   an RSA key made by gcry_pk_genkey(), a signature
 *                         with it that verifies; then no copy of the
 *                         private exponent in memory that is not
 *                         libsecmem's (gcry_pk_sign() copies the key into
 *                         ordinary allocations)
 *   gcrypt_probe early    gcry_malloc_secure() before gcry_check_version()
 *   gcrypt_probe misuse   libgcrypt's pool used before gcry_check_version()
 *                         (a secure hash context, secure MPI limbs), then
 *                         freed and grown under the mode
 *   gcrypt_probe ownhandler  the program's own gcry_set_allocation_handler()
 *   gcrypt_probe plain    the control: the same secrets, none of them in
 *                         libsecmem's memory, the private exponent found
 *                         in ordinary memory
 *   gcrypt_probe forcefips   GCRYCTL_FORCE_FIPS_MODE, then
 *                         gcry_check_version(); prints "initialized"
 *
 * Exit 0 when every check holds, else the number of the failed check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gcrypt.h>

#include "secmem.h"

#define CHECK(n, cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "gcrypt_probe: check %d failed: %s\n", \
				(n), #cond);				\
			return (n);					\
		}							\
	} while (0)

/*
 * libgcrypt's struct gcry_mpi (mpi/mpi.h), the same from 1.5 to 1.11:
 * the limbs are where an MPI's value lives, and what a scan of memory
 * for a key finds.  limbs() checks the view against the value.
 */
struct mpi_view {
	int alloced;
	int nlimbs;
	int sign;
	unsigned int flags;
	uint64_t *d;
};

/* @a's limbs, or NULL if the view does not match its low limb @low. */
static const uint64_t *limbs(gcry_mpi_t a, uint64_t low)
{
	const struct mpi_view *v = (const void *)a;

	if (!v->d || v->nlimbs < 1 || v->d[0] != low)
		return NULL;
	return v->d;
}

/* The low 64 bits of @a, through libgcrypt's export, not the view. */
static uint64_t low_limb(gcry_mpi_t a)
{
	unsigned char buf[1024];
	uint64_t low = 0;
	size_t n = 0, i;

	if (gcry_mpi_print(GCRYMPI_FMT_USG, buf, sizeof(buf), &n, a))
		return 0;
	for (i = 0; i < 8 && i < n; i++)
		low |= (uint64_t)buf[n - 1 - i] << (8 * i);
	return low;
}

static int init(void)
{
	CHECK(90, gcry_check_version(GCRYPT_VERSION));
	/* gpg-agent's pool size. */
	CHECK(91, gcry_control(GCRYCTL_INIT_SECMEM, 32768, 0) == 0);
	CHECK(92, gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0) == 0);
	return 0;
}

static int do_secure(void)
{
	unsigned char *p, *z, *x;
	void *o;
	size_t i;
	int r = init();

	if (r)
		return r;
	p = gcry_malloc_secure(100);
	CHECK(1, p && secmem_owns(p) && gcry_is_secure(p));
	for (i = 0; i < 100; i++)
		p[i] = (unsigned char)i;
	/* Grown and shrunk, it stays secure and keeps its contents. */
	p = gcry_realloc(p, 100000);
	CHECK(2, p && secmem_owns(p) && gcry_is_secure(p));
	for (i = 0; i < 100; i++)
		CHECK(3, p[i] == (unsigned char)i);
	p = gcry_realloc(p, 50);
	CHECK(4, p && secmem_owns(p) && p[49] == 49);
	z = gcry_calloc_secure(10, 100);
	CHECK(5, z && secmem_owns(z) && !z[999]);
	x = gcry_xmalloc_secure(64);
	CHECK(6, x && secmem_owns(x));
	gcry_free(x);
	x = gcry_xcalloc_secure(8, 8);
	CHECK(7, x && secmem_owns(x) && !x[63]);
	/* libgcrypt refuses a size of 0, with or without the mode. */
	CHECK(8, !gcry_malloc_secure(0));
	/*
	 * libgcrypt's ordinary allocations are libsecmem's too (libgcrypt
	 * copies secure S-expressions into them), and so count as secure.
	 */
	o = gcry_malloc(100);
	CHECK(9, o && secmem_owns(o) && gcry_is_secure(o));
	o = gcry_realloc(o, 200000);
	CHECK(10, o && secmem_owns(o));
	gcry_free(o);
	CHECK(13, !gcry_malloc(0));
	/* Memory that is not libgcrypt's is not called secure. */
	CHECK(14, !gcry_is_secure(&o));
	gcry_free(p);
	CHECK(11, !secmem_owns(p));
	gcry_free(z);
	gcry_free(x);
	CHECK(12, !secmem_owns(z) && !secmem_owns(x));
	return 0;
}

static int do_mpi(void)
{
	gcry_mpi_t a, b, e, m, r, c, n;
	const uint64_t *d;
	uint64_t low;
	int rc = init();

	if (rc)
		return rc;
	/*
	 * Limbs that libgcrypt allocates and grows for a secure MPI (not
	 * gcry_mpi_set_ui(), which clears the MPI's secure flag).
	 */
	a = gcry_mpi_snew(0);
	gcry_mpi_randomize(a, 256, GCRY_WEAK_RANDOM);
	gcry_mpi_lshift(a, a, 4000);
	CHECK(1, gcry_mpi_get_flag(a, GCRYMPI_FLAG_SECURE));
	gcry_mpi_add(a, a, a);
	low = low_limb(a);
	d = limbs(a, low);
	CHECK(2, d && secmem_owns(d));
	/* A result libgcrypt creates inside the computation. */
	b = gcry_mpi_snew(0);
	gcry_mpi_randomize(b, 2048, GCRY_WEAK_RANDOM);
	e = gcry_mpi_set_ui(NULL, 65537);
	m = gcry_mpi_new(0);
	gcry_mpi_randomize(m, 2048, GCRY_WEAK_RANDOM);
	gcry_mpi_set_bit(m, 0);
	r = gcry_mpi_snew(0);
	gcry_mpi_powm(r, b, e, m);
	low = low_limb(r);
	d = limbs(r, low);
	CHECK(3, low && d && secmem_owns(d));
	CHECK(4, gcry_mpi_get_flag(r, GCRYMPI_FLAG_SECURE));
	/* A copy of a secure MPI is secure. */
	c = gcry_mpi_copy(r);
	d = limbs(c, low);
	CHECK(5, d && secmem_owns(d));
	/* An ordinary MPI made secure moves its limbs to secure memory. */
	n = gcry_mpi_set_ui(NULL, 0xfeedf00d);
	gcry_mpi_set_flag(n, GCRYMPI_FLAG_SECURE);
	d = limbs(n, 0xfeedf00d);
	CHECK(7, d && secmem_owns(d) &&
		 gcry_mpi_get_flag(n, GCRYMPI_FLAG_SECURE));
	/* An ordinary MPI's limbs are libsecmem's memory too. */
	d = limbs(m, low_limb(m));
	CHECK(8, d && secmem_owns(d));
	d = limbs(r, low);
	gcry_mpi_release(r);
	CHECK(9, !secmem_owns(d));
	gcry_mpi_release(a);
	gcry_mpi_release(b);
	gcry_mpi_release(c);
	gcry_mpi_release(e);
	gcry_mpi_release(m);
	gcry_mpi_release(n);
	return 0;
}

/*
 * Where copies of @needle (@len bytes) are in this process's memory that
 * is not a live libsecmem allocation: every readable mapping, read through
 * /proc/self/mem (which skips what cannot be read instead of faulting).
 * Prints each hit to stderr; returns how many there were.
 */
static int find_outside(const unsigned char *needle, size_t len,
			const char *what)
{
	char line[512], *buf;
	FILE *maps = fopen("/proc/self/maps", "r");
	int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC), found = 0;
	const size_t chunk = 1 << 20;

	buf = malloc(chunk + len);
	if (!maps || mem < 0 || !buf)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[5], name[256] = "";
		uintptr_t at;

		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %255[^\n]", &lo, &hi,
			   perms, name) < 3 || perms[0] != 'r' ||
		    strstr(name, "[vvar") || strstr(name, "[vsyscall]"))
			continue;
		for (at = lo; at < hi; at += chunk) {
			size_t want = hi - at < chunk + len ? hi - at :
							      chunk + len;
			ssize_t got = pread(mem, buf, want, (off_t)at);
			size_t i;

			for (i = 0; got > 0 && i + len <= (size_t)got; i++) {
				const unsigned char *hit =
					(const unsigned char *)at + i;

				if (memcmp(buf + i, needle, len) ||
				    hit == needle || secmem_owns(hit))
					continue;
				/* The scan's own buffer holds what it read. */
				if ((char *)hit >= buf &&
				    (char *)hit < buf + chunk + len)
					continue;
				fprintf(stderr, "gcrypt_probe: %s at %p in %s "
					"%s\n", what, (const void *)hit,
					perms, *name ? name : "[anonymous]");
				found++;
			}
		}
	}
	free(buf);
	close(mem);
	fclose(maps);
	return found;
}

/*
 * The private exponent of the key S-expression @key, big-endian, from its
 * canonical form: copied into libsecmem's memory (@be, @n bytes) without
 * the S-expression functions, which would copy the key into ordinary
 * memory (gcry_sexp_find_token() and the rest allocate their results with
 * gcry_malloc()).
 */
static int private_exponent(gcry_sexp_t key, unsigned char **be, size_t *n)
{
	size_t len = gcry_sexp_sprint(key, GCRYSEXP_FMT_CANON, NULL, 0), i;
	unsigned char *canon = secmem_malloc(len);
	unsigned long dlen = 0;
	int r = -1;

	if (!canon || gcry_sexp_sprint(key, GCRYSEXP_FMT_CANON, canon, len) !=
			      len - 1)
		goto out;
	for (i = 0; i + 4 < len; i++)
		if (!memcmp(canon + i, "(1:d", 4))
			break;
	for (i += 4; i < len && canon[i] >= '0' && canon[i] <= '9'; i++)
		dlen = dlen * 10 + (canon[i] - '0');
	if (i >= len || canon[i] != ':' || dlen < 96 || i + 1 + dlen > len)
		goto out;
	*be = secmem_malloc(dlen);
	if (!*be)
		goto out;
	memcpy(*be, canon + i + 1, dlen);
	*n = dlen;
	r = 0;
out:
	secmem_free(canon);
	return r;
}

/*
 * Copies outside libsecmem of the secret @be (@n bytes, big-endian): as
 * libgcrypt's limbs keep it (little-endian) and as S-expressions and
 * exports hold it (big-endian).  32-byte windows from the middle of
 * each: the ends of a number may be shared with what is not secret.  The
 * needles live in libsecmem's memory, which the scan leaves out.
 */
static int scan_for(const unsigned char *be, size_t n)
{
	unsigned char *le = secmem_malloc(n);
	size_t i;
	int found, more;

	if (!le)
		return -1;
	for (i = 0; i < n; i++)
		le[i] = be[n - 1 - i];
	found = find_outside(le + n / 2 / 8 * 8, 32,
			     "the private exponent's limbs (little-endian)");
	more = find_outside(be + n / 2, 32,
			    "the private exponent (big-endian)");
	secmem_free(le);
	return found < 0 || more < 0 ? -1 : found + more;
}

/*
 * An RSA key made by gcry_pk_genkey(), used to sign, the signature
 * checked: the secret S-expression is in libsecmem's memory, and then
 * neither form of the private exponent is anywhere else.  @control: no
 * gcrypt mode, where the key is in libgcrypt's pool, ordinary memory.
 */
static int do_genkey(bool control)
{
	gcry_sexp_t parms, key, data, sig;
	unsigned char *be = NULL;
	size_t n = 0;
	int found;

	CHECK(1, !gcry_sexp_build(&parms, NULL,
				  "(genkey (rsa (nbits 4:2048)))"));
	CHECK(2, !gcry_pk_genkey(&key, parms));
	gcry_sexp_release(parms);
	CHECK(3, gcry_is_secure(key));
	CHECK(4, control != !!secmem_owns(key));
	CHECK(5, !private_exponent(key, &be, &n));
	/* The key works: a signature made with it verifies. */
	CHECK(6, !gcry_sexp_build(&data, NULL,
				  "(data (flags pkcs1) (hash sha256 %b))", 32,
				  "0123456789abcdef0123456789abcdef"));
	CHECK(7, !gcry_pk_sign(&sig, data, key));
	CHECK(8, !gcry_pk_verify(sig, data, key));
	found = scan_for(be, n);
	CHECK(9, found >= 0);
	/* The control finds it in libgcrypt's pool; the mode, nowhere. */
	CHECK(10, control ? found > 0 : found == 0);
	secmem_free(be);
	gcry_sexp_release(sig);
	gcry_sexp_release(data);
	gcry_sexp_release(key);
	return 0;
}

/* Allocated before gcry_check_version(): the first call libgcrypt gets. */
static int do_early(void)
{
	void *p = gcry_malloc_secure(64);
	int r;

	CHECK(1, p && secmem_owns(p));
	r = init();
	if (r)
		return r;
	CHECK(2, gcry_is_secure(p));
	gcry_free(p);
	CHECK(3, !secmem_owns(p));
	return 0;
}

/*
 * libgcrypt used before gcry_check_version(), against its rules: a secure
 * hash context and secure MPI limbs in libgcrypt's own pool, then freed
 * and grown through libsecmem's handlers.
 */
static int do_misuse(void)
{
	gcry_md_hd_t h;
	gcry_mpi_t x, y;
	const uint64_t *d;
	int r;

	CHECK(1, !gcry_md_open(&h, GCRY_MD_SHA256, GCRY_MD_FLAG_SECURE));
	CHECK(2, gcry_is_secure(h) && !secmem_owns(h));
	x = gcry_mpi_set_ui(NULL, 0xabcdef);
	gcry_mpi_set_flag(x, GCRYMPI_FLAG_SECURE);
	d = limbs(x, 0xabcdef);
	CHECK(3, d && gcry_is_secure(d) && !secmem_owns(d));
	r = init();
	if (r)
		return r;
	gcry_md_write(h, "abc", 3);
	CHECK(4, gcry_md_read(h, 0)[0] == 0xba);	/* SHA-256("abc") */
	gcry_md_close(h);
	/* Grown through the handlers: the limbs move to libsecmem. */
	gcry_mpi_lshift(x, x, 4000);
	y = gcry_mpi_new(0);
	gcry_mpi_rshift(y, x, 4000);
	CHECK(5, !gcry_mpi_cmp_ui(y, 0xabcdef));
	d = limbs(x, 0);
	CHECK(6, d && secmem_owns(d));
	gcry_mpi_release(x);
	gcry_mpi_release(y);
	return 0;
}

static int own_calls;

static void *own_alloc(size_t n)
{
	own_calls++;
	return malloc(n);
}

static int own_is_secure(const void *p)
{
	(void)p;
	own_calls++;
	return 0;
}

static void *own_realloc(void *p, size_t n)
{
	own_calls++;
	return realloc(p, n);
}

static void own_free(void *p)
{
	own_calls++;
	free(p);
}

/* Under the mode the handlers stay libsecmem's; without it, the program's. */
static int do_ownhandler(bool control)
{
	void *p;
	int r;

	gcry_set_allocation_handler(own_alloc, own_alloc, own_is_secure,
				    own_realloc, own_free);
	r = init();
	if (r)
		return r;
	p = gcry_malloc_secure(64);
	CHECK(1, p);
	CHECK(2, control ? own_calls > 0 && !secmem_owns(p) :
			   own_calls == 0 && secmem_owns(p));
	gcry_free(p);
	return 0;
}

static int do_plain(void)
{
	gcry_mpi_t a;
	const uint64_t *d;
	void *p;
	int r = init();

	if (r)
		return r;
	p = gcry_malloc_secure(100);
	CHECK(1, p && !secmem_owns(p) && gcry_is_secure(p));
	gcry_free(p);
	p = gcry_malloc(100);
	CHECK(4, p && !secmem_owns(p) && !gcry_is_secure(p));
	gcry_free(p);
	a = gcry_mpi_snew(0);
	gcry_mpi_randomize(a, 256, GCRY_WEAK_RANDOM);
	gcry_mpi_lshift(a, a, 4000);
	CHECK(2, gcry_mpi_get_flag(a, GCRYMPI_FLAG_SECURE));
	d = limbs(a, low_limb(a));
	CHECK(3, d && !secmem_owns(d));
	gcry_mpi_release(a);
	return do_genkey(true);
}

static int do_forcefips(void)
{
	gcry_control(GCRYCTL_FORCE_FIPS_MODE, 0);
	if (!gcry_check_version(NULL))
		return 1;
	printf("initialized\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 100;
	if (!strcmp(argv[1], "secure"))
		return do_secure();
	if (!strcmp(argv[1], "mpi"))
		return do_mpi();
	if (!strcmp(argv[1], "genkey"))
		return init() ? 99 : do_genkey(false);
	if (!strcmp(argv[1], "early"))
		return do_early();
	if (!strcmp(argv[1], "misuse"))
		return do_misuse();
	if (!strcmp(argv[1], "ownhandler"))
		return do_ownhandler(false);
	if (!strcmp(argv[1], "ownhandler-control"))
		return do_ownhandler(true);
	if (!strcmp(argv[1], "plain"))
		return do_plain();
	if (!strcmp(argv[1], "forcefips"))
		return do_forcefips();
	return 100;
}
