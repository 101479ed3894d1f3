#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the Debian 12 guest image for the systemd scenario (make run,
# make check-systemd, make shell-systemd): a minbase root file system with
# systemd and secmem's apt repository (make deb), as an ext4 image. secmem
# comes to the guest only as Debian packages: the kernel is installed here
# with apt-get, the userspace by the scenario in the running guest.
#
#   mkimage.sh [--force]     prints the image path on its last line
#
# Three layers, each rebuilt only when its inputs change:
#
#   BUILD/debian/root/       debootstrap --variant=minbase of bookworm with
#                            the packages in tests/vm/debian/packages, then
#                            the settings below (root without password,
#                            hostname, machine-id, multi-user.target).
#                            Key: the package list, suite, mirror and the
#                            functions that build it. The .debs are kept in BUILD/debian/cache,
#                            so a changed list downloads only what is new.
#   BUILD/debian/overlay/    BUILD/deb/repo and repo-next (the apt
#                            repositories of make deb) in /var/lib/secmem-apt
#                            with a sources.list that names only them,
#                            tests/vm/debian/rootfs/ (the scenario units and
#                            scripts) and the example programs' sources in
#                            /usr/local/src/secmem-demo. Rebuilt every run
#                            (seconds), copied over root/ when it changed;
#                            files a previous overlay left are removed first.
#                            Then apt-get installs linux-image-*-secmem from
#                            the repository; BUILD/debian/vmlinuz is a copy of
#                            its /boot/vmlinuz, which boot.sh boots.
#   BUILD/debian/secmem.img  mkfs.ext4 -d root/: no loop mount, no bootloader
#                            (QEMU boots the packaged kernel with root=/dev/vda).
#                            Key: the root key and the overlay's contents.
#
# The guest boots it with snapshot=on: every boot starts from the same state
# and nothing the guest writes reaches the image.
#
# Needs root (debootstrap, chroot, file ownership) and the Debian archive.
# The root layer also goes to the build cache outside the clone
# (scripts/lib/cache.sh), by its key.
#
# Environment: BUILD, DEBIAN_MIRROR (default http://deb.debian.org/debian),
# DEBIAN_SUITE (bookworm), IMAGE_SIZE (2G), SECMEM_CACHE.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
# shellcheck source=scripts/lib/cache.sh
. "$top/scripts/lib/cache.sh"
build=${BUILD:-$top/build}
out=$build/debian
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${DEBIAN_SUITE:-bookworm}
image_size=${IMAGE_SIZE:-2G}
force=0

die() {
	echo "mkimage: error: $*" >&2
	exit 1
}

info() {
	echo "mkimage: $*" >&2
}

case ${1:-} in
--force) force=1 ;;
'') ;;
*) die "usage: $0 [--force]" ;;
esac

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot); run as root"
for tool in debootstrap mkfs.ext4 chroot; do
	command -v "$tool" >/dev/null ||
		die "$tool not found: run 'make deps' (apt-get install debootstrap e2fsprogs)"
done

mkdir -p "$out"
# One builder at a time (make run and make check may overlap).
exec 9>"$out/.lock"
flock 9

packages() {
	sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages" | grep -v '^$'
}

# --- layer 1: the root file system ----------------------------------------

# Settings made once, in the freshly bootstrapped tree.
customize_root() {
	local r=$1

	# Log in as root on the serial console without a password (pam_unix
	# has nullok in Debian's common-auth).
	chroot "$r" passwd -d root >/dev/null
	echo secmem >"$r/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tsecmem\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
		>"$r/etc/hosts"
	# A fixed machine-id: not a first boot, so no systemd-firstboot prompts
	# on the console, and journalctl finds the same journal every time.
	tr -d - </proc/sys/kernel/random/uuid >"$r/etc/machine-id"
	# The kernel mounts the root read-write (root=/dev/vda rw); nothing else.
	echo "# / is mounted by the kernel: root=/dev/vda rw" >"$r/etc/fstab"
	chroot "$r" systemctl set-default multi-user.target >/dev/null 2>&1
	# Periodic jobs have nothing to do in a VM that lives for minutes, and
	# apt-daily would try the network.
	chroot "$r" systemctl disable apt-daily.timer apt-daily-upgrade.timer \
		e2scrub_all.timer e2scrub_reap.service fstrim.timer >/dev/null 2>&1 || true
	# Package lists and downloaded .debs (kept in the cache dir instead).
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin "$r"/var/cache/apt/archives/*.deb
	mkdir -p "$r/var/lib/secmem-vm"
}

build_root() {
	local t0=$SECONDS pkgs
	pkgs=$(packages | paste -sd, -)
	info "bootstrapping Debian $suite (minbase + $(packages | wc -l) packages) from $mirror"
	info "into $out/root; this takes a few minutes the first time"
	rm -rf "$out/root.new"
	mkdir -p "$out/cache"
	if ! debootstrap --variant=minbase --include="$pkgs" --cache-dir="$out/cache" \
		"$suite" "$out/root.new" "$mirror" >"$out/debootstrap.log" 2>&1; then
		tail -20 "$out/debootstrap.log" >&2
		die "debootstrap failed, log: $out/debootstrap.log"
	fi
	customize_root "$out/root.new"
	rm -rf "$out/root" "$out/secmem.img" "$out/secmem.img.key"
	mv "$out/root.new" "$out/root"
	echo "$root_key" >"$out/root.key"
	info "root file system built in $((SECONDS - t0)) s ($(du -sh "$out/root" | cut -f1))"
}

# The key covers what makes the root: the package list, suite, mirror and
# the two functions above (not the rest of this script, so that work on the
# overlay or the image does not cost a debootstrap).
root_key=$({
	echo "suite=$suite mirror=$mirror"
	cat "$here/packages"
	declare -f customize_root build_root
} | sha256sum | cut -c1-16)

# A root of the same key from the build cache (scripts/lib/cache.sh),
# stored as a tar to keep ownership and device nodes: another clone on
# this machine skips debootstrap.
# The entry's name: the root's key and the tar's format.
tar_flags=(--numeric-owner --xattrs --xattrs-include='*' --acls)
root_entry=debian-root-$(echo "$root_key ${tar_flags[*]}" | sha256sum | cut -c1-16)

restore_root() {
	cache_has "$root_entry" || return 1
	rm -rf "$out/root.new"
	mkdir -p "$out/root.new"
	if ! tar -C "$out/root.new" "${tar_flags[@]}" -xf "$(cache_path "$root_entry")/root.tar"; then
		rm -rf "$out/root.new"
		return 1
	fi
	cache_touch "$root_entry"
	rm -rf "$out/root" "$out/secmem.img" "$out/secmem.img.key"
	mv "$out/root.new" "$out/root"
	echo "$root_key" >"$out/root.key"
	info "root file system restored from the cache ($(cache_path "$root_entry")), not rebootstrapping"
}

store_root() {
	cache_usable || return 0
	rm -rf "$out/root-cache"
	mkdir -p "$out/root-cache"
	tar -C "$out/root" "${tar_flags[@]}" -cf "$out/root-cache/root.tar" . &&
		cache_put "$root_entry" "$out/root-cache" root.tar
	rm -rf "$out/root-cache"
}

if [ "$force" = 1 ] || [ ! -d "$out/root" ] ||
	[ "$(cat "$out/root.key" 2>/dev/null)" != "$root_key" ]; then
	if [ "$force" = 1 ] || ! restore_root; then
		build_root
		store_root
	fi
else
	info "root file system up to date ($out/root), not rebootstrapping"
fi

# --- layer 2: the secmem apt repository and the scenario -------------------

# secmem itself reaches the guest only as Debian packages (make deb): the
# apt repositories are copied into the image, the packaged kernel is
# installed from them here (QEMU boots its /boot/vmlinuz), and the
# scenario installs the userspace with apt-get in the running guest.
repo=$build/deb/repo
repo_next=$build/deb/repo-next
{ [ -f "$repo/Packages" ] && [ -f "$repo_next/Packages" ]; } ||
	die "no apt repository in $build/deb: run 'make deb' first"
kdeb=$(cd "$repo" && ls linux-image-*.deb 2>/dev/null) ||
	die "no linux-image package in $repo: run 'make deb' (not --no-kernel)"
[ "$(echo "$kdeb" | wc -l)" = 1 ] || die "more than one linux-image package in $repo"
kpkg=$(dpkg-deb -f "$repo/$kdeb" Package)
kver=${kpkg#linux-image-}

overlay=$out/overlay
rm -rf "$overlay"
mkdir -p "$overlay/var/lib/secmem-apt" "$overlay/etc/apt/sources.list.d"
cp -a "$repo" "$repo_next" "$overlay/var/lib/secmem-apt/"
# The guest has no network: debootstrap's mirror line would only make
# apt-get update fail there. The next version's repository is enabled by
# the lifecycle test, for the upgrade.
cat >"$overlay/etc/apt/sources.list" <<EOF
# The guest has no network: apt sees only the local secmem repository
# (sources.list.d/secmem.list) and what debootstrap installed.
EOF
cat >"$overlay/etc/apt/sources.list.d/secmem.list" <<EOF
# secmem, built by make deb (flat repository, unsigned: it never leaves
# this machine).
deb [trusted=yes] file:/var/lib/secmem-apt/repo ./
EOF
cp -a "$here/rootfs/." "$overlay/"
src=$overlay/usr/local/src/secmem-demo
mkdir -p "$src"
cp "$here/app/secret-demo.c" "$here/app/kcore-find.c" "$here/app/upgrade-holder.c" \
	"$here/app/soak-load.c" \
	"$top/tests/vm/guest/lib/kcore.c" "$top/tests/vm/guest/lib/kcore.h" \
	"$top/docs/example/hello.c" "$src/"
chown -R 0:0 "$overlay"

# Every file with its type, mode and content (or link target).
overlay_manifest() {
	(cd "$overlay" && find . -mindepth 1 -printf '%y %m %p %l\n' | LC_ALL=C sort)
	(cd "$overlay" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
overlay_key=$(overlay_manifest | sha256sum | cut -c1-16)

# The packaged kernel, with apt-get in the root (in a chroot, with /proc
# for dpkg's maintainer scripts). --reinstall: a rebuilt kernel keeps its
# package version, and must still replace the installed one.
install_kernel() {
	local log=$out/apt.log
	mount -t proc proc "$out/root/proc"
	if ! {
		chroot "$out/root" apt-get update &&
			DEBIAN_FRONTEND=noninteractive chroot "$out/root" \
				apt-get install -y --reinstall --no-install-recommends "$kpkg"
	} >"$log" 2>&1; then
		umount "$out/root/proc"
		tail -20 "$log" >&2
		die "apt-get install $kpkg in the image failed, log: $log"
	fi
	umount "$out/root/proc"
	rm -rf "$out"/root/var/cache/apt/archives/*.deb "$out"/root/var/cache/apt/*.bin
}
applied=$out/root/var/lib/secmem-vm/overlay

if [ "$(cat "$applied.key" 2>/dev/null)" != "$overlay_key" ]; then
	# Remove what the previous overlay installed, then copy the new one;
	# existing directories keep their owner and mode.
	if [ -f "$applied.files" ]; then
		while IFS= read -r f; do
			rm -f "$out/root/$f"
		done <"$applied.files"
	fi
	tar -C "$overlay" -cf - . | tar -C "$out/root" -xf - --no-overwrite-dir
	(cd "$overlay" && find . ! -type d) >"$applied.files"
	chroot "$out/root" ldconfig
	install_kernel
	echo "$overlay_key" >"$applied.key"
	info "apt repository in the image; $kpkg installed from it with apt-get"
fi
[ -f "$out/root/boot/vmlinuz-$kver" ] || die "$kpkg is not installed in $out/root"
# What boot.sh boots: the packaged kernel, as installed by dpkg.
cp "$out/root/boot/vmlinuz-$kver" "$out/vmlinuz.new"
mv "$out/vmlinuz.new" "$out/vmlinuz"

# --- layer 3: the disk image ----------------------------------------------

image=$out/secmem.img
image_key="$root_key-$overlay_key"
if [ "$force" = 0 ] && [ -f "$image" ] && [ "$(cat "$image.key" 2>/dev/null)" = "$image_key" ]; then
	info "image up to date ($image), not rebuilding"
else
	t0=$SECONDS
	rm -f "$image.new"
	truncate -s "$image_size" "$image.new"
	mkfs.ext4 -q -F -L secmem-root -d "$out/root" "$image.new" ||
		die "mkfs.ext4 -d failed"
	mv "$image.new" "$image"
	echo "$image_key" >"$image.key"
	info "image built in $((SECONDS - t0)) s: $image ($image_size, $(du -sh "$image" | cut -f1) used)"
fi
echo "$image"
