# SPDX-License-Identifier: GPL-2.0-or-later
# What daemon/Makefile and preload/Makefile must agree on, defined once
# here.  Included after TOP and LIBDIR are set.

# The release: libsecmem/Makefile's VERSION (that of the shared
# library's file name), which secmemd, secmemctl and secmem-run --version
# print.
SECMEM_VERSION	:= $(shell sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' \
		   $(TOP)/libsecmem/Makefile)

# Where preload/Makefile installs libsecmem-preload.so, the path that
# secmem-run and secmemctl protect put in LD_PRELOAD.  A private
# directory: the preload is a module for LD_PRELOAD, not a library anyone
# links with, so it has no versioned soname and stays out of the linker's
# search path (Debian policy 8.1, lintian).
PRELOADDIR	?= $(LIBDIR)/secmem
PRELOAD_PATH	= $(PRELOADDIR)/libsecmem-preload.so

# For the C files that print or use them (their defaults are these only).
SECMEM_DEFS	= -DSECMEM_VERSION='"$(SECMEM_VERSION)"' \
		  -DPRELOAD_PATH='"$(PRELOAD_PATH)"'
