# SPDX-License-Identifier: GPL-2.0
#
# secmem: memory outside the kernel's direct map.
#
#   make run      build what is stale, boot the patched release kernel in
#                 QEMU and run the demonstration (the main job)
#   make check    build everything and run every test: host unit tests,
#                 checkpatch, and the guest tests on the patched debug kernel
#   make shell    boot the patched release kernel to an interactive shell
#
# Both run/check install their Debian packages first (make deps, as root).
# See README.md for the rest of the targets.

BUILD ?= $(CURDIR)/build
export BUILD

KBUILD := kernel/scripts/kbuild.sh
kernel_dir = $(BUILD)/kernel/$(1)-$(2)
bzimage = $(call kernel_dir,$(1),$(2))/arch/x86/boot/bzImage

# Guest tests to run, comma-separated globs (make check FILTER=memfd*).
FILTER ?=
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps run shell check check-unit check-guest lint clean distclean \
	kernel kernel-debug kernel-release kernel-stock kernel-tree \
	kernel-export kernel-checkpatch userspace guest initramfs install

all: userspace

deps:
	@scripts/deps.sh

# --- kernel ------------------------------------------------------------
# kbuild.sh decides whether anything needs rebuilding (cache key of source
# version, series and config fragments), so these are always "run".

kernel: kernel-debug kernel-release

kernel-debug:
	@$(KBUILD) build patched debug

kernel-release:
	@$(KBUILD) build patched release

# The same configs on the unpatched source, for side-by-side comparisons.
kernel-stock:
	@$(KBUILD) build stock release
	@$(KBUILD) build stock debug

kernel-tree:
	@$(KBUILD) tree

kernel-export:
	@$(KBUILD) export

kernel-checkpatch:
	@$(KBUILD) checkpatch

# --- userspace ---------------------------------------------------------

userspace:
	@$(MAKE) -s -C libsecmem all BUILD=$(BUILD)
	@$(MAKE) -s -C daemon all BUILD=$(BUILD)

install: userspace
	@$(MAKE) -s -C libsecmem install BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	@$(MAKE) -s -C daemon install BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# Everything that goes into the guest's initramfs, built against the
# patched tree's uapi headers (KVARIANT picks which kernel's).
KVARIANT ?= debug
guest:
	@$(KBUILD) source
	@$(MAKE) -s -C tests/vm guest BUILD=$(BUILD) KSRC=$(BUILD)/src/patched \
		KHDR=$(call kernel_dir,patched,$(KVARIANT))/usr/include
	@$(MAKE) -s -C daemon guest BUILD=$(BUILD)

initramfs: guest
	@tests/vm/mkinitramfs.sh $(BUILD)/initramfs.cpio.gz $(BUILD)/guest

# --- the two commands --------------------------------------------------

run: deps
	@$(MAKE) -s kernel-release
	@$(MAKE) -s initramfs KVARIANT=release
	@tests/vm/run-vm.sh --kernel $(call bzimage,patched,release) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode demo \
		--log $(BUILD)/logs/run.log

shell: deps
	@$(MAKE) -s kernel-release
	@$(MAKE) -s initramfs KVARIANT=release
	@tests/vm/run-vm.sh --kernel $(call bzimage,patched,release) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode shell \
		--log $(BUILD)/logs/shell.log

check: deps
	@FILTER='$(FILTER)' scripts/check.sh

# Pieces of check, for quick iteration.
check-unit:
	@$(MAKE) -s -C libsecmem check BUILD=$(BUILD)
	@$(MAKE) -s -C daemon check BUILD=$(BUILD)

check-guest: kernel-debug initramfs
	@tests/vm/run-vm.sh --kernel $(call bzimage,patched,debug) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode check \
		$(if $(FILTER),--filter '$(FILTER)') \
		--log $(BUILD)/logs/check-guest.log --results $(BUILD)/results/guest.tap

lint:
	@$(MAKE) -s -C libsecmem lint BUILD=$(BUILD)
	@$(MAKE) -s -C daemon lint BUILD=$(BUILD)
	@shellcheck -x scripts/*.sh kernel/scripts/*.sh tests/vm/*.sh

clean:
	rm -rf $(BUILD)/libsecmem $(BUILD)/daemon $(BUILD)/guest $(BUILD)/results $(BUILD)/logs \
		$(BUILD)/initramfs.cpio.gz

# Also drops the kernel trees and builds (a full rebuild takes minutes).
distclean:
	rm -rf $(BUILD)
