#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the guest initramfs: busybox (static) with its applet links, our
# /init, and a copy of the guest build tree under /secmem.
#
#   mkinitramfs.sh OUT.cpio.gz BUILD_GUEST_DIR
#
# BUILD_GUEST_DIR (normally build/guest) is copied as is to /secmem in the
# initramfs: tests/ (run by secmem.mode=check), demo.d/ (secmem.mode=demo),
# bin/ (first in PATH), lib/ (LD_LIBRARY_PATH; a loader there is also
# linked at /lib64/ld-linux-x86-64.so.2 for dynamically linked programs),
# and whatever else other components put there (etc/, ...).
#
# Needs no root: ownership is set to 0:0 in the archive, and the one device
# node the kernel needs before /init runs, /dev/console, is written into
# the archive directly rather than created with mknod.
#
# Environment: BUSYBOX (default /bin/busybox, must be static).
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

die() {
	echo "mkinitramfs: error: $*" >&2
	exit 1
}

usage() {
	echo "usage: $0 OUT.cpio.gz BUILD_GUEST_DIR" >&2
	exit 2
}

[ $# = 2 ] || usage
out=$1
guest=$2

[ -d "$guest" ] || die "guest directory $guest does not exist (run 'make -C tests/vm guest' first)"
[ -d "$guest/tests" ] || echo "mkinitramfs: warning: $guest has no tests/ directory" >&2
[ -x "$busybox" ] || die "$busybox not found: apt-get install busybox-static"
if ! file_type=$(LC_ALL=C readelf -d "$busybox" 2>&1) || [[ $file_type == *NEEDED* ]]; then
	die "$busybox is not a static binary: install busybox-static, or set BUSYBOX"
fi
for tool in cpio gzip; do
	command -v "$tool" >/dev/null || die "$tool not found"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/secmem-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# Skeleton. /dev stays empty: /init mounts devtmpfs over it.
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,run,root,etc,secmem}
chmod 1777 "$stage/tmp"
chmod 0700 "$stage/root"

install -m 0755 "$busybox" "$stage/bin/busybox"
"$busybox" --list-full | while read -r applet; do
	[ "$applet" = bin/busybox ] && continue
	[ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
done
[ -e "$stage/bin/sh" ] || die "$busybox has no sh applet"

install -m 0755 "$here/guest/init" "$stage/init"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' \
	>"$stage/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' >"$stage/etc/group"

cp -a "$guest/." "$stage/secmem/"
# Dynamically linked programs ask for the loader at its usual path; the
# libraries are found through LD_LIBRARY_PATH=/secmem/lib (set by /init).
if [ -e "$guest/lib/ld-linux-x86-64.so.2" ]; then
	mkdir -p "$stage/lib64"
	ln -s /secmem/lib/ld-linux-x86-64.so.2 "$stage/lib64/ld-linux-x86-64.so.2"
fi
# Same inputs, same archive.
find "$stage" -mindepth 1 -exec touch -h -d "@${SOURCE_DATE_EPOCH:-0}" {} +

# One newc header (see the kernel's Documentation/driver-api/early-userspace/
# buffer-format.rst) for an entry without data: NAME MODE RDEVMAJOR RDEVMINOR.
newc_entry() {
	local name=$1 mode=$2 major=$3 minor=$4 namesize pad
	namesize=$((${#name} + 1))
	# ino mode uid gid nlink mtime filesize devmajor devminor rdevmajor
	# rdevminor namesize check
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		0 "$mode" 0 0 1 0 0 0 0 "$major" "$minor" "$namesize" 0
	printf '%s\0' "$name"
	# The header (110 bytes) plus the name is padded to a multiple of 4.
	pad=$(((4 - (110 + namesize) % 4) % 4))
	head -c "$pad" /dev/zero
}

tmp_out=$out.tmp
mkdir -p "$(dirname "$out")"
trap 'rm -rf "$stage" "$tmp_out"' EXIT
{
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0 --reproducible)
	# A second archive, appended: the kernel unpacks them in turn.
	newc_entry dev/console $((0020600)) 5 1
	newc_entry TRAILER!!! 0 0 0
} | gzip -9 -n >"$tmp_out"
mv "$tmp_out" "$out"
echo "mkinitramfs: $out ($(du -h "$out" | cut -f1)):" \
	"$(find "$guest" -mindepth 2 -maxdepth 2 -path '*/tests/*' | wc -l) test(s) from $guest"
