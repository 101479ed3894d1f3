#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the Debian packages, all in BUILD/deb/ (issue 17):
#
#   secmem userspace   dpkg-buildpackage -us -uc -b of debian/ (libsecmem0,
#                      libsecmem-dev, secmemd, secmem-run once preload/
#                      exists), built in a copy of the tree so that the
#                      checkout gets no debian/ build debris
#   next version       the same source rebuilt as VERSION+1 (a changelog
#                      entry added to the copy) for the upgrade test, in
#                      BUILD/deb/next/ and the apt repository repo-next/
#   the kernel         the kernel's own `make bindeb-pkg` of the patched
#                      tree with the release config make run boots, with
#                      LOCALVERSION=-secmem: linux-image-6.12.118-secmem
#                      (and linux-libc-dev), in a copy of the release
#                      build directory (BUILD/deb/kernel/linux-obj) so
#                      that make run's bzImage stays as kbuild made it
#   repo/, repo-next/  apt repositories (apt-ftparchive: Packages,
#                      Packages.gz, Release) for
#                      deb [trusted=yes] file:BUILD/deb/repo ./
#   lintian            on every .deb and .changes; the summary is printed
#                      and any error or warning fails (overrides, each
#                      with its reason, in debian/*.lintian-overrides)
#
#   deb.sh [--no-kernel]
#
# Each part is rebuilt only when its inputs changed (a key of the files
# that go into it). Exit status 0 when everything built and lintian is clean.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/cache.sh
. "$top/scripts/lib/cache.sh"
build=${BUILD:-$top/build}
out=$build/deb
with_kernel=1
case ${1:-} in
--no-kernel) with_kernel=0 ;;
'') ;;
*) echo "usage: $0 [--no-kernel]" >&2; exit 2 ;;
esac

die() {
	echo "deb: error: $*" >&2
	exit 1
}
info() {
	echo "deb: $*"
}

for tool in dpkg-buildpackage dh lintian apt-ftparchive rsync; do
	command -v "$tool" >/dev/null || die "$tool not found: run 'make deps'"
done
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
upstream=${version%-*}
revision=${version##*-}
next_version=$upstream-$((revision + 1))

# --- userspace -------------------------------------------------------------

# What goes into the source package: the tracked and new files, minus
# build/ and the kernel (which the userspace build does not read).
source_files() {
	(cd "$top" && git ls-files -co --exclude-standard) |
		grep -v -e '^build/' -e '^kernel/' -e '^bench/' -e '^tests/vm/' | LC_ALL=C sort
}

# build_userspace DIR VERSION [CHANGELOG_NOTE]: build the source package in
# DIR/secmem-UPSTREAM, outputs in DIR.
build_userspace() {
	local dir=$1 ver=$2 note=${3:-} src profiles=() opts=${DEB_BUILD_OPTIONS:-}
	src=$dir/secmem-$upstream
	rm -rf "$dir"
	mkdir -p "$src"
	(cd "$top" && source_files) | rsync -a --files-from=- "$top/" "$src/"
	if [ -n "$note" ]; then
		{
			echo "secmem ($ver) unstable; urgency=medium"
			echo
			echo "  * $note"
			echo
			echo " -- $(dpkg-parsechangelog -l "$top/debian/changelog" -S Maintainer)  $(date -R)"
			echo
			cat "$top/debian/changelog"
		} >"$src/debian/changelog"
		# The same source already passed its tests.
		opts="${opts:+$opts }nocheck"
	fi
	# secmem-run only when the tree has the preload library.
	[ -f "$src/preload/Makefile" ] || profiles+=(pkg.secmem.nopreload)
	info "building secmem $ver in $dir${profiles:+ (build profile ${profiles[*]}: no preload/ yet)}"
	if ! (cd "$src" && env -u BUILD -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		DEB_BUILD_OPTIONS="$opts" DEB_BUILD_PROFILES="${profiles[*]}" \
		dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$dir/build.log" 2>&1; then
		tail -40 "$dir/build.log" >&2
		die "dpkg-buildpackage of secmem $ver failed, log: $dir/build.log"
	fi
	grep -E '^dpkg-gensymbols|warning' "$dir/build.log" | sed 's/^/  /' || true
}

source_key=$({
	echo "recipe 1 $version"
	(cd "$top" && source_files | while IFS= read -r f; do
		if [ -f "$f" ]; then sha256sum "$f"; fi
	done)
	declare -f build_userspace
} | sha256sum | cut -c1-16)

if [ -f "$out/userspace/.key" ] && [ "$(cat "$out/userspace/.key")" = "$source_key" ]; then
	info "secmem $version and $next_version up to date (key $source_key), not rebuilding"
else
	rm -f "$out/userspace/.key"
	build_userspace "$out/userspace" "$version"
	build_userspace "$out/userspace-next" "$next_version" \
		"Rebuild as $next_version: the upgrade in the package lifecycle test."
	echo "$source_key" >"$out/userspace/.key"
fi

# --- the kernel --------------------------------------------------------------

localversion=-secmem
kver=

# drop_kernel_debs: no kernel package, and no key saying there is one.
drop_kernel_debs() {
	rm -f "$out/kernel/.key" "$out/kernel/"*.deb "$out/kernel/"*.changes "$out/kernel/"*.buildinfo
}

# restore_kernel_debs: the kernel packages of kernel_key from the build
# cache; fails, leaving no package behind, on a miss.
restore_kernel_debs() {
	local cached
	cache_has "kernel-deb-$kernel_key" || return 1
	drop_kernel_debs
	mapfile -t cached < <(cd "$(cache_path "kernel-deb-$kernel_key")" &&
		ls -- *.deb *.changes *.buildinfo 2>/dev/null)
	if [ ${#cached[@]} = 0 ] ||
		! cache_get "kernel-deb-$kernel_key" "$out/kernel" "${cached[@]}" kernel.release; then
		drop_kernel_debs
		return 1
	fi
	echo "$kernel_key" >"$out/kernel/.key"
}
if [ "$with_kernel" = 1 ]; then
	"$top/kernel/scripts/kbuild.sh" build patched release
	rel=$("$top/kernel/scripts/kbuild.sh" path patched release)
	ksrc=$build/src/patched
	# A kernel restored from the cache comes without its source tree.
	"$top/kernel/scripts/kbuild.sh" source >/dev/null
	kbase=$(make -s -C "$ksrc" kernelversion)
	kver=$kbase$localversion
	kobj=$out/kernel/linux-obj
	kernel_key=$(echo "recipe 2 $(cat "$rel/.secmem-key") $localversion" | sha256sum | cut -c1-16)
	if [ -f "$out/kernel/.key" ] && [ "$(cat "$out/kernel/.key")" = "$kernel_key" ] &&
		ls "$out/kernel/linux-image-${kver}_"*.deb >/dev/null 2>&1; then
		info "kernel packages for $kver up to date (key $kernel_key), not rebuilding"
	elif restore_kernel_debs; then
		info "kernel packages for $kver restored from the cache" \
			"($(cache_path "kernel-deb-$kernel_key")), not rebuilding"
	else
		drop_kernel_debs
		# bindeb-pkg needs the release build's objects, not only the
		# artifacts a cache hit restores.
		"$top/kernel/scripts/kbuild.sh" build --objects patched release
		# The release build's config and objects: copied when the
		# release kernel changed, else the previous package build's
		# objects are reused and bindeb-pkg only repacks.
		if [ "$(cat "$kobj/.secmem-key" 2>/dev/null)" != "$(cat "$rel/.secmem-key")" ]; then
			mkdir -p "$kobj"
			rsync -a --delete --exclude=/debian "$rel/" "$kobj/"
		fi
		# The kernel's mkdebian takes the maintainer from these.
		maint=$(sed -n 's/^Maintainer: //p' "$top/debian/control")
		export DEBFULLNAME=${maint% <*} DEBEMAIL=${maint##*<}
		DEBEMAIL=${DEBEMAIL%>}
		info "packaging linux-image-$kver with make bindeb-pkg in $kobj: the release" \
			"build's objects, recompiling what depends on the release string $kver"
		cc=gcc
		command -v ccache >/dev/null && cc="ccache gcc" && export CCACHE_BASEDIR=$build
		# The source tree is read under kbuild.sh's shared lock.
		if ! (cd "$out/kernel" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
			flock -s "$build/src.lock" make -C "$ksrc" O="$kobj" CC="$cc" LOCALVERSION="$localversion" \
			KDEB_SOURCENAME=linux-secmem KDEB_PKGVERSION="$kbase-1" -j"$(nproc)" bindeb-pkg) >"$out/kernel/bindeb.log" 2>&1; then
			tail -30 "$out/kernel/bindeb.log" >&2
			die "make bindeb-pkg failed, log: $out/kernel/bindeb.log"
		fi
		cp "$kobj/include/config/kernel.release" "$out/kernel/kernel.release"
		echo "$kernel_key" >"$out/kernel/.key"
		mapfile -t built < <(cd "$out/kernel" && ls -- *.deb *.changes *.buildinfo)
		cache_put "kernel-deb-$kernel_key" "$out/kernel" "${built[@]}" kernel.release
	fi
	got=$(cat "$out/kernel/kernel.release")
	[ "$got" = "$kver" ] || die "the packaged kernel's release is '$got', expected '$kver'"
fi

# --- the results and the repositories --------------------------------------

find "$out" -maxdepth 1 -type f \( -name '*.deb' -o -name '*.ddeb' -o -name '*.changes' \
	-o -name '*.buildinfo' \) -delete
cp "$out/userspace/"*.deb "$out/userspace/"*.changes "$out/userspace/"*.buildinfo "$out/"
cp "$out/userspace/"*.ddeb "$out/" 2>/dev/null || true
mkdir -p "$out/next"
rm -f "$out/next/"*
cp "$out/userspace-next/"*.deb "$out/userspace-next/"*.changes "$out/next/"
if [ "$with_kernel" = 1 ]; then
	cp "$out/kernel/"*.deb "$out/kernel/"*.changes "$out/kernel/"*.buildinfo "$out/"
fi

# make_repo DIR DEB...: a flat apt repository.
make_repo() {
	local dir=$1
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$@" "$dir/"
	(cd "$dir" &&
		apt-ftparchive packages . >Packages &&
		gzip -9n <Packages >Packages.gz &&
		apt-ftparchive -o APT::FTPArchive::Release::Origin=secmem \
			-o APT::FTPArchive::Release::Label=secmem \
			-o APT::FTPArchive::Release::Suite=local \
			release . >Release)
}
# Not linux-libc-dev: apt would take it as an upgrade of Debian's (6.1),
# which glibc's headers are built against. It stays in BUILD/deb.
repo_debs=()
for f in "$out"/*.deb; do
	case ${f##*/} in linux-libc-dev_*) ;; *) repo_debs+=("$f") ;; esac
done
make_repo "$out/repo" "${repo_debs[@]}"
make_repo "$out/repo-next" "$out/next/"*.deb

# --- lintian -------------------------------------------------------------------

lintian_out=$out/lintian.txt
lrc=0
# Errors and warnings fail, info and pedantic are shown; the userspace
# packages carry their overrides (debian/*.lintian-overrides), the
# kernel's generated packages cannot, so their suppressed tags are in
# debian/kernel.lintian-suppress, with the reasons, for their run only.
# (Two runs: lintian 2.116 exits 2 under --show-overrides even when
# only overridden tags remain, so the verdict comes from a run without it
# and the listing, overridden tags included, from one with it.)
lint() {
	lintian --fail-on error,warning --display-info "$@" "$out"/secmem_*.changes || return 1
	if ls "$out"/linux-secmem_*.changes >/dev/null 2>&1; then
		lintian --fail-on error,warning --display-info "$@" \
			--suppress-tags-from-file "$top/debian/kernel.lintian-suppress" \
			"$out"/linux-secmem_*.changes || return 1
	fi
}
# lintian's verdict is kept with the key of what it checked (both
# packages' keys, lintian's version): an unchanged set is not checked
# again (half a minute), its saved result is shown.
lint_key=$(echo "lint 1 $source_key ${kernel_key:-nokernel} $(dpkg-query -W -f='${Version}' lintian)" \
	"$(sha256sum <"$top/debian/kernel.lintian-suppress")" | sha256sum | cut -c1-16)
if [ "$(cat "$out/lintian.key" 2>/dev/null)" = "$lint_key" ] && [ -f "$lintian_out" ]; then
	lrc=$(cat "$out/lintian.rc")
	info "lintian: packages unchanged since the last check (key $lint_key), its result:"
else
	rm -f "$out/lintian.key"
	lint >/dev/null 2>&1 || lrc=1
	lint --show-overrides >"$lintian_out.raw" 2>&1 || true
	grep -v '^running with root privileges' "$lintian_out.raw" >"$lintian_out" || true
	rm -f "$lintian_out.raw"
	echo "$lrc" >"$out/lintian.rc"
	echo "$lint_key" >"$out/lintian.key"
fi
changes=("$out"/*.changes)
debs=("$out"/*.deb)
echo "deb: lintian on ${#changes[@]} .changes and their ${#debs[@]} .debs:"
for tag in E W I P O; do
	c=$(grep -c "^$tag: " "$lintian_out" || true)
	case $tag in
	E) name=errors ;; W) name=warnings ;; I) name=info ;; P) name=pedantic ;; O) name=overridden ;;
	esac
	echo "deb:   $name: $c"
done
grep -v "^N: " "$lintian_out" | sed "s/^/deb:     /" || true

echo "deb: packages in $out:"
for f in "$out"/*.deb; do
	printf 'deb:   %-52s %8s KiB  %s\n' "$(dpkg-deb -f "$f" Package)_$(dpkg-deb -f "$f" Version)" \
		"$(($(stat -c %s "$f") / 1024))" "installed $(dpkg-deb -f "$f" Installed-Size) KiB"
done
echo "deb: apt repository: deb [trusted=yes] file:$out/repo ./ (next version: repo-next)"
[ -z "$kver" ] || echo "deb: kernel: linux-image-$kver boots as uname -r $kver"
[ "$lrc" = 0 ] || die "lintian found errors or warnings (full output: $lintian_out)"
