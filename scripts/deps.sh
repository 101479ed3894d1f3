#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deps: install every Debian package secmem's build and tests need.
# Idempotent and quick when everything is present; prints what it installs.
# The kernel source package is pinned to an exact version in
# kernel/base.conf and installed by kernel/scripts/kbuild.sh.
set -euo pipefail

packages=(
	# toolchain and kernel build
	build-essential git xz-utils bc bison flex cpio kmod libelf-dev libssl-dev
	python3 ccache pkg-config
	# guest harness; the Debian guest image (tests/vm/debian/mkimage.sh)
	qemu-system-x86 busybox-static debootstrap e2fsprogs
	# the guest's kexec and kdump test loads its next kernel with kexec
	kexec-tools
	# userspace libraries and their tests
	check libsubunit-dev libinih-dev libnl-genl-3-dev libsystemd-dev
	# the preload's tests run Debian's own openssl, libcrypto and libsodium
	openssl libgcrypt20-dev
	# benchmarks compare against these; make bench draws its chart with gnuplot
	libsodium-dev gnuplot-nox
	# static analysis run by make lint
	cppcheck clang-tidy shellcheck
	# make deb: the userspace source package (debian/), lintian, the local
	# apt repository (apt-ftparchive); the kernel's bindeb-pkg also wants
	# rsync and its own Build-Depends (bc bison flex kmod libelf-dev
	# libssl-dev cpio, above)
	debhelper devscripts lintian dpkg-dev apt-utils fakeroot rsync
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} = 0 ]; then
	echo "deps: all ${#packages[@]} packages are installed"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run 'make deps' as root (apt-get) to install them" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# kexec-tools asks whether it should handle reboots; unasked, it answers
# yes, and this machine's reboots would become kexecs. The tests need only
# the kexec binary: answer no for a first install (an admin's earlier
# answer stays).
if [[ " ${missing[*]} " == *" kexec-tools "* ]]; then
	echo "kexec-tools kexec-tools/load_kexec boolean false" | debconf-set-selections
fi
apt_install() {
	apt-get install -y -q --no-install-recommends "${missing[@]}"
}
# A fresh machine may have no package lists yet: update only when needed.
if ! apt_install; then
	echo "deps: apt-get install failed; refreshing package lists and retrying"
	apt-get update -q
	apt_install
fi
echo "deps: installed ${missing[*]}"
