/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether LD_PRELOAD can reach a program: the one decision behind the
 * refusals of secmem-run (preload/secmem-run.c) and of secmemctl protect
 * (daemon/protect.c, which compiles this file too).  Each prints its own
 * message; what they refuse is decided here, so that the two agree.
 *
 * A statically linked program has no dynamic loader to load the preload,
 * and one that gains privileges on exec (set-user-ID, set-group-ID, file
 * capabilities) runs in secure-execution mode (AT_SECURE), where ld.so
 * ignores LD_PRELOAD.  Either would run without secret memory while
 * looking protected.
 */
#ifndef SECMEM_EXEC_CHECK_H
#define SECMEM_EXEC_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The credentials the program will be started with. */
struct exec_creds {
	uid_t uid;		/* effective; (uid_t)-1 matches no file owner */
	gid_t gid;		/* effective; (gid_t)-1 matches no file group */
	bool no_new_privs;	/* already in effect: exec grants nothing */
};

enum exec_verdict {
	/*
	 * Dynamically linked and gaining nothing: ld.so loads the preload.
	 * Also what is not an ELF file this can read (a missing #!
	 * interpreter, a 32-bit program...): exec itself decides.
	 */
	EXEC_PRELOADABLE,
	EXEC_STATIC,		/* no program interpreter (PT_INTERP) */
	EXEC_PRIVILEGED,	/* gains privileges on exec: AT_SECURE */
};

/*
 * Decide for @file, following #! scripts to their interpreter (which is
 * what gets the preload) as the kernel does, at most four deep.  @prog
 * receives the program the verdict is about (@file or an interpreter; it
 * may be the same buffer as @file); @why, for EXEC_PRIVILEGED, what exec
 * would grant, as a phrase: "set-group-ID (group 105)".
 */
enum exec_verdict exec_check(const char *file, const struct exec_creds *c,
			     char *prog, size_t proglen, char *why,
			     size_t whylen);

#endif /* SECMEM_EXEC_CHECK_H */
