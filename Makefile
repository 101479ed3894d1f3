# SPDX-License-Identifier: GPL-2.0
#
# secmem: memory outside the kernel's direct map.
#
#   make run      build what is stale, boot Debian 12 with systemd on the
#                 patched release kernel in QEMU and run the end-to-end
#                 demonstration: secmemd under systemd, an application
#                 linked with libsecmem (the main job)
#   make check    build everything and run every test: host unit tests,
#                 checkpatch, the guest tests on the patched debug kernel,
#                 the systemd scenario and the soak's 2-minute form on
#                 the patched release kernel
#   make shell    boot the patched release kernel to an interactive shell
#   make demo     the busybox initramfs demonstration (memfd_secret, kcore)
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

.PHONY: all deps run shell check check-quick check-unit check-guest lint clean distclean \
	kernel kernel-debug kernel-release kernel-stock kernel-tree \
	kernel-export kernel-checkpatch kernel-series userspace guest initramfs install bench \
	check-guest-release check-guest-numa check-guest-hibernate check-guest-kexec \
	check-guest-frag print-numa-guest-tests \
	soak check-soak

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

# Each patch building on its own, for bisection: long (a full build after
# every patch that changes a widely included header), so not in make check.
kernel-series:
	@$(KBUILD) series release

# --- userspace ---------------------------------------------------------

userspace:
	@$(MAKE) -s -C libsecmem all BUILD=$(BUILD)
	@$(MAKE) -s -C daemon all BUILD=$(BUILD)
	@$(MAKE) -s -C preload all BUILD=$(BUILD)

install: userspace
	@$(MAKE) -s -C libsecmem install BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	@$(MAKE) -s -C daemon install BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	@$(MAKE) -s -C preload install BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

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

# --- the Debian guest with systemd --------------------------------------

.PHONY: demo image shell-systemd check-systemd

# The Debian 12 guest image with systemd and secmem installed
# (tests/vm/debian/mkimage.sh): debootstrap once, then rebuilt in seconds
# when secmem or the scenario changes. secmem goes in as the packages of
# make deb (quiet here: make deb prints the packages and lintian's
# summary, and skips what is up to date). Needs root and the Debian archive.
image:
	@scripts/deb.sh >/dev/null
	@tests/vm/debian/mkimage.sh >/dev/null

# init_on_free=1: the kcore scans of realprogs.sh must not count copies of
# a secret that an earlier process freed.
# The kernel is linux-image-*-secmem as apt installed it in the image.
DEBIAN_BOOT = tests/vm/debian/boot.sh --kernel $(BUILD)/debian/vmlinuz \
	--image $(BUILD)/debian/secmem.img --append init_on_free=1

# --- the two commands --------------------------------------------------

run: deps
	@$(MAKE) -s kernel-release
	@scripts/deb.sh
	@$(MAKE) -s image
	@$(DEBIAN_BOOT) --mode demo --log $(BUILD)/logs/run.log

# The busybox initramfs demonstration (memfd_secret and the unmapped
# pageblocks, seen through /proc/kcore and /proc/vmstat).
demo: deps
	@$(MAKE) -s kernel-release
	@$(MAKE) -s initramfs KVARIANT=release
	@tests/vm/run-vm.sh --kernel $(call bzimage,patched,release) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode demo \
		--log $(BUILD)/logs/demo.log

shell: deps
	@$(MAKE) -s kernel-release
	@$(MAKE) -s initramfs KVARIANT=release
	@tests/vm/run-vm.sh --kernel $(call bzimage,patched,release) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode shell \
		--log $(BUILD)/logs/shell.log

# The Debian guest with systemd, to a root login on the serial console.
shell-systemd: deps
	@$(MAKE) -s kernel-release
	@$(MAKE) -s image
	@$(DEBIAN_BOOT) --mode shell --log $(BUILD)/logs/shell-systemd.log

check: deps
	@FILTER='$(FILTER)' scripts/check.sh

# The developers' inner loop (scripts/check-quick.sh): unit suites, lint,
# checkpatch and the guest programs changed since main (or FILTER) on the
# debug kernel already built. Not CI's command.
check-quick:
	@FILTER='$(FILTER)' scripts/check-quick.sh

# Stock and patched release kernels side by side, and the allocators on the
# host and in the guest: bench/README.md, docs/PERFORMANCE.md. Builds what
# is stale (only the stock *release* kernel: kernel-stock would also build
# the stock debug one, which no benchmark boots; and the patched lockstat
# variant, whose /proc/lock_stat the scaling boots read). The release
# kernels with their object trees (--objects): bench/kmod builds against
# them. BENCH_OPTS goes
# to bench/run.py, e.g. BENCH_OPTS='--runs 3 --vcpus 4'.
BENCH_OPTS ?=
bench: deps
	@$(KBUILD) build --objects patched release
	@$(KBUILD) build --objects stock release
	@$(KBUILD) build patched lockstat
	@$(MAKE) -s -C bench full BUILD=$(BUILD) \
		KHDR=$(call kernel_dir,patched,release)/usr/include RUN_ARGS='$(BENCH_OPTS)'
	@$(MAKE) -s -C bench preload BUILD=$(BUILD)

# Pieces of check, for quick iteration.
check-unit:
	@$(MAKE) -s -C libsecmem check BUILD=$(BUILD)
	@$(MAKE) -s -C daemon check BUILD=$(BUILD)
	@$(MAKE) -s -C preload check BUILD=$(BUILD)

# The debug kernel's guests boot with 4-level paging. With TCG's -cpu max
# (LA57) and KASAN, an interrupt that lands while identify_cpu() has
# cleared boot_cpu_data's capabilities (arch_cpu_finalize_init(), with
# interrupts on) sees X86_FEATURE_LA57 off, so KASAN computes its shadow
# start for 47-bit addresses and reports the 5-level direct map's per-CPU
# data as a wild access: a panic before user space, seen once in six
# boots under load (docs/RELIABILITY.md). It is the base kernel's, not
# the series'; no5lvl keeps the capability and the paging mode in step.
DEBUG_GUEST_APPEND := no5lvl

# What the guest targets build first. make check builds the kernels and the
# guest programs once and then runs boots two at a time (scripts/check.sh):
# PREBUILT=1 takes them as built, so that no boot rebuilds what another
# is reading.
debug_prereq = $(if $(PREBUILT),,kernel-debug initramfs)

# The pool control plane on two NUMA nodes: per-node targets, statistics
# and events for real (the main guest run has one node). These programs
# run here only: two nodes exercise what one node does and the per-node
# paths besides. The reliability cases that inject faults or need the DIMM
# run in check-guest, those that fill all of memory in check-guest-frag.
# The KVM guest test fills every node's pool, so that a vCPU's faults find
# a warm pool whichever node they come from.
NUMA_GUEST_TESTS = unmapped_pool_test,unmapped_events_test,unmapped_pressure_test,$\
	unmapped_reclaim_hold_test,$\
	unmapped_hotplug_test,unmapped_boundary_test,secmemd_test,unmapped_meminfo_test,$\
	kvm_gmem_no_direct_map_test
print-numa-guest-tests:
	@echo '$(NUMA_GUEST_TESTS)'

check-guest-numa: $(debug_prereq)
	@VM_NUMA=2 tests/vm/run-vm.sh --kernel $(call bzimage,patched,debug) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode check \
		--filter '$(NUMA_GUEST_TESTS)' --append '$(DEBUG_GUEST_APPEND)' \
		--log $(BUILD)/logs/check-guest-numa.log \
		--results $(BUILD)/results/guest-numa.tap

# Hibernation with secrets held: a 256 MiB scratch disk becomes the swap
# and resume device, /sys/power/disk test_resume writes the image there
# and restores it in the same boot, and the test scans the disk
# (tests/vm/guest/unmapped_hibernate_test.c). The main guest runs only the
# knob's part of that test. Writing the image keeps one vCPU in virtio
# completions and the RCU callbacks the preallocation left, each free
# unwinding its stack for KASAN: under TCG that has held a CPU for 22 s,
# so the soft lockup and RCU stall detectors wait 90 s here, not 20 and 21.
HIBERNATE_APPEND := watchdog_thresh=45 rcupdate.rcu_cpu_stall_timeout=90
check-guest-hibernate: $(debug_prereq)
	@VM_SWAP=256M tests/vm/run-vm.sh --kernel $(call bzimage,patched,debug) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode check \
		--filter unmapped_hibernate_test \
		--append '$(DEBUG_GUEST_APPEND) $(HIBERNATE_APPEND) kunit.enable=0' \
		--log $(BUILD)/logs/check-guest-hibernate.log \
		--results $(BUILD)/results/guest-hibernate.tap

# Kexec and kdump with secrets held: the debug kernel holds the secrets;
# the release kernel goes in a tar on a read-only disk (VM_TAR), the test
# loads it with kexec -p and crashes, or with kexec -l and runs kexec -e,
# and that next kernel scans /proc/vmcore or /proc/kcore for the secrets
# (tests/vm/guest/unmapped_kexec_test.c). The zeroing under test is the
# first kernel's; the second only reads 1 GiB, which under KASAN and TCG
# took a minute and a half per run.
# Only the second kernel's results are judged (check-log.py --handover).
# The third run is the negative control: secretmem.kexec_zero=0 turns the
# zeroing off, and every secret still held must then be found in
# /proc/vmcore, while the pages freed at exit, zeroed when freed, must not.
KEXEC_TAR = $(BUILD)/kexec-image.tar
KEXEC_HANDOVER = secmem-kexec-handover
# $(call kexec_run,NAME,APPEND): one run, log and TAP named after NAME.
kexec_run = VM_TAR=$(KEXEC_TAR) tests/vm/run-vm.sh --kernel $(call bzimage,patched,debug) \
	--initrd $(BUILD)/initramfs.cpio.gz --mode check \
	--filter unmapped_kexec_test --handover '$(KEXEC_HANDOVER)' \
	--append '$(DEBUG_GUEST_APPEND) kunit.enable=0 $(2)' \
	--log $(BUILD)/logs/check-guest-$(1).log --results $(BUILD)/results/guest-$(1).tap
check-guest-kexec: $(debug_prereq) $(if $(PREBUILT),,kernel-release)
	@tar -cf $(KEXEC_TAR) -C $(dir $(call bzimage,patched,release)) bzImage
	@$(call kexec_run,kdump,secmem.kexec=crash crashkernel=384M)
	@$(call kexec_run,kexec,secmem.kexec=kexec)
	@$(call kexec_run,kdump-nozero,secmem.kexec=crash crashkernel=384M secretmem.kexec_zero=0)

# libsecmem's Check suite on the patched release kernel, where its backend
# must be the unmapped memfd. The debug kernel's KASAN under TCG makes the
# suite take over 25 minutes; on the release kernel it takes about 2.
RELEASE_GUEST = $(BUILD)/release-guest

check-guest-release: $(if $(PREBUILT),,kernel-release)
	@# The suite goes to bin/, the wrapper that sets the expected
	@# backend to tests/: the wrapper must never be taken for the suite.
	@$(MAKE) -s -C libsecmem guest BUILD=$(RELEASE_GUEST) \
		GUEST_BIN=$(RELEASE_GUEST)/guest/bin/libsecmem-suite
	@rm -rf $(RELEASE_GUEST)/guest/tests
	@install -D -m 0755 tests/vm/guest-release/libsecmem_test \
		$(RELEASE_GUEST)/guest/tests/libsecmem_test
	@tests/vm/mkinitramfs.sh $(RELEASE_GUEST)/initramfs.cpio.gz \
		$(RELEASE_GUEST)/guest
	@VM_TEST_TIMEOUT=900 VM_TIMEOUT=1200 tests/vm/run-vm.sh \
		--kernel $(call bzimage,patched,release) \
		--initrd $(RELEASE_GUEST)/initramfs.cpio.gz --mode check \
		--log $(BUILD)/logs/check-guest-release.log \
		--results $(BUILD)/results/guest-release.tap

# The check guest also has a 512 MiB pc-dimm, hotplugged memory the kernel
# adds at boot and leaves offline: unmapped_memhotplug_test (reliability
# case 4) onlines it, offlines it and leaves it offline again, so no other
# test sees it. VM_DIMM= (empty) boots without it.
# The run takes about 7 minutes alone, 9 beside the other lane's boot:
# VM_TIMEOUT leaves room for a slower host, each program being bounded by
# its own timeout, 420 s.
CHECK_GUEST_DIMM ?= 512M

# The fragmentation cases (reliability case 1) fill all of the guest's
# memory, so their time grows with it: they run in a debug boot of their
# own, FRAG_GUEST_MEM just big enough to show the property, without KUnit
# (the check guest runs it). On the release kernel the cases do not hold
# as they are written: compaction outpaces the filler, so memory is not
# left fragmented, or allocation outpaces compaction and the per-page
# fallback serves half the pages (docs/RELIABILITY.md).
FRAG_GUEST_TESTS = unmapped_frag_test,unmapped_frag_pinned_test
FRAG_GUEST_MEM ?= 512M
check-guest-frag: $(debug_prereq)
	@VM_MEM=$(FRAG_GUEST_MEM) VM_TEST_TIMEOUT=420 tests/vm/run-vm.sh \
		--kernel $(call bzimage,patched,debug) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode check \
		--filter '$(FRAG_GUEST_TESTS)' --append '$(DEBUG_GUEST_APPEND) kunit.enable=0' \
		--log $(BUILD)/logs/check-guest-frag.log --results $(BUILD)/results/guest-frag.tap

# Every guest program but those the NUMA guest and the fragmentation boot run
# (tests/vm/README.md has the table of which boot runs what, and why);
# FILTER runs what it names here, wherever make check runs it.
check-guest: $(debug_prereq)
	@VM_TIMEOUT=$${VM_TIMEOUT-1800} VM_TEST_TIMEOUT=$${VM_TEST_TIMEOUT-420} VM_DIMM=$${VM_DIMM-$(CHECK_GUEST_DIMM)} tests/vm/run-vm.sh --kernel $(call bzimage,patched,debug) \
		--initrd $(BUILD)/initramfs.cpio.gz --mode check \
		$(if $(FILTER),--filter '$(FILTER)',--exclude '$(NUMA_GUEST_TESTS),$(FRAG_GUEST_TESTS)') \
		--append '$(DEBUG_GUEST_APPEND)' \
		--log $(BUILD)/logs/check-guest.log --results $(BUILD)/results/guest.tap

# The make run scenario with every step asserted, plus a refused reload,
# systemctl stop (on_exit keep and restore) and systemd-analyze.
check-systemd: kernel-release image
	@$(DEBIAN_BOOT) --mode check --log $(BUILD)/logs/check-systemd.log \
		--results $(BUILD)/results/systemd.tap

# The soak (docs/RELIABILITY.md, case 5): the Debian guest with 4 vCPUs on
# 2 NUMA nodes, secmemd under systemd, load through libsecmem and unmapped
# memfds, a memory hog, systemctl reload every minute and SIGKILL of
# secmemd every 5 minutes (tests/vm/debian/rootfs/.../soak.sh). DURATION
# is in minutes, or in seconds with an s suffix (DURATION=90s); make check
# runs the 2-minute form (check-soak). TAP in build/results/soak.tap
# (soak-short.tap for check-soak), the console in build/logs/.
DURATION ?= 30
soak_seconds = $(shell echo '$(1)' | sed -n -e 's/^\([1-9][0-9]*\)s$$/\1/p;t' -e 's/^\([1-9][0-9]*\)$$/\1*60/p')
define soak_boot
	@s='$(call soak_seconds,$(1))'; \
	[ -n "$$s" ] || { echo "soak: DURATION=$(1) is not a number of minutes (30) or of seconds (90s)" >&2; exit 2; }; \
	s=$$(($(or $(call soak_seconds,$(1)),0))); VM_CPUS=4 VM_NUMA=2 VM_TIMEOUT=$$((s + 900)) tests/vm/debian/boot.sh \
		--kernel $(BUILD)/debian/vmlinuz --image $(BUILD)/debian/secmem.img \
		--mode soak --append "secmem.soak_seconds=$$s" \
		--log $(BUILD)/logs/$(2).log --results $(BUILD)/results/$(2).tap
endef

soak: deps
	@$(MAKE) -s kernel-release
	@$(MAKE) -s image
	$(call soak_boot,$(DURATION),soak)

check-soak: kernel-release image
	$(call soak_boot,2,soak-short)

# The Debian packages, the local apt repositories and lintian, all in
# $(BUILD)/deb (scripts/deb.sh).
.PHONY: deb
deb: deps
	@scripts/deb.sh

lint:
	@$(MAKE) -s -C libsecmem lint BUILD=$(BUILD)
	@$(MAKE) -s -C daemon lint BUILD=$(BUILD)
	@$(MAKE) -s -C preload lint BUILD=$(BUILD)
	@shellcheck -x scripts/*.sh scripts/lib/*.sh kernel/scripts/*.sh tests/vm/*.sh tests/vm/debian/*.sh \
		tests/unit/kbuild/*.sh \
		tests/vm/debian/rootfs/usr/local/lib/secmem-vm/*.sh tests/unit/preload/*.sh \
		bench/preload_bench.sh

clean:
	rm -rf $(BUILD)/libsecmem $(BUILD)/daemon $(BUILD)/guest $(BUILD)/results $(BUILD)/logs \
		$(BUILD)/initramfs.cpio.gz

# Also drops the kernel trees and builds (a full rebuild takes minutes).
distclean:
	rm -rf $(BUILD)
