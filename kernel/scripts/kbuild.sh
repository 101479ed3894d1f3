#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The secmem kernel pipeline: pinned Debian source -> git tree -> series
# applied -> config merged from fragments -> bzImage, cached by a key of
# (source version, series content, config fragments, build recipe).
#
#   kbuild.sh source                  extract the pinned source, apply the series
#   kbuild.sh build [--objects] FLAVOR VARIANT
#                                     FLAVOR: patched|stock, VARIANT: release|debug|lockstat;
#                                     --objects: also the object tree (out-of-tree
#                                     modules, bindeb-pkg), not only the artifacts
#   kbuild.sh key FLAVOR VARIANT      print the build's cache key (builds nothing)
#   kbuild.sh ready FLAVOR VARIANT    exit 0 if build would compile nothing
#   kbuild.sh tree                    developer work tree (base + one commit per patch)
#   kbuild.sh export                  write the developer tree back to kernel/patches
#   kbuild.sh checkpatch              scripts/checkpatch.pl --strict on every patch
#   kbuild.sh path FLAVOR VARIANT     print the output directory
#   kbuild.sh series VARIANT          build the tree after each patch in turn
#
# A finished kernel's artifacts also go to the build cache outside the
# clone (scripts/lib/cache.sh, SECMEM_CACHE), by the same key: another
# clone with the same inputs restores them instead of building.
#
# Environment: BUILD (default <repo>/build), JOBS (default nproc),
# SECMEM_CACHE (default /var/cache/secmem, empty: no cache).
set -euo pipefail
# A failure inside $(...) fails the assignment: a key computed from part
# of its inputs must never be used.
shopt -s inherit_errexit

top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$top/kernel
# shellcheck source=scripts/lib/cache.sh
. "$top/scripts/lib/cache.sh"
build=${BUILD:-$top/build}
jobs=${JOBS:-$(nproc)}

# shellcheck source=kernel/base.conf
. "$kdir/base.conf"

src=$build/src/base          # pristine source, git repo, tag "base" (stock)
patched=$build/src/patched   # git worktree: base + series (what we build)
devtree=$build/linux         # git worktree for developers (make kernel-tree)
scratch=$build/src/apply     # git worktree where the series is applied
stepwise=$build/src/series   # git worktree for building patch by patch
# Bump when ensure_base() changes what it commits as "base".
base_recipe=2
# Bump when do_build() changes what a kernel build produces.
build_recipe=2

die() {
	echo "kbuild: error: $*" >&2
	exit 1
}

info() {
	echo "kbuild: $*"
}

# The patches named by kernel/patches/series, in order, comments skipped.
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$kdir/patches/series" | grep -v '^$' || true
}

# The patches' names in order and their contents: comments in the series
# file do not count.
series_hash() {
	{
		series_patches
		series_patches | while read -r p; do
			[ -f "$kdir/patches/$p" ] ||
				die "kernel/patches/series names $p, which does not exist"
			cat "$kdir/patches/$p"
		done
	} | sha256sum | cut -c1-16
}

apt_install_pinned() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		--allow-downgrades "$LINUX_SOURCE_PACKAGE=$LINUX_SOURCE_VERSION" >&2
}

ensure_package() {
	local have
	have=$(dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PACKAGE" 2>/dev/null || true)
	[ "$have" = "$LINUX_SOURCE_VERSION" ] && return 0
	info "installing $LINUX_SOURCE_PACKAGE=$LINUX_SOURCE_VERSION (have: ${have:-none})"
	# A fresh machine may have stale or no package lists: refresh once.
	if ! apt_install_pinned && ! { apt-get update -q >&2 && apt_install_pinned; }; then
		echo "kbuild: error: cannot install $LINUX_SOURCE_PACKAGE=$LINUX_SOURCE_VERSION," \
			"the version kernel/base.conf pins." >&2
		echo "kbuild: versions apt can install now:" >&2
		apt-cache policy "$LINUX_SOURCE_PACKAGE" >&2 || true
		echo "kbuild: to move the pin, set LINUX_SOURCE_VERSION in kernel/base.conf to one" \
			"of them and refresh the series (see kernel/README.md)." >&2
		exit 1
	fi
}

# Extract the pinned tarball into a git repository whose first commit,
# tagged "base", is the pristine tree. Done once per pinned version.
ensure_base() {
	if [ -f "$src/.git/secmem-version" ] &&
		[ "$(cat "$src/.git/secmem-version")" = "$LINUX_SOURCE_VERSION $base_recipe" ]; then
		return 0
	fi
	[ ! -d "$devtree" ] ||
		die "$devtree was made from an older base; 'make kernel-export' what you need, remove it, retry"
	ensure_package
	info "extracting $LINUX_SOURCE_TARBALL ($LINUX_SOURCE_VERSION) into $src"
	rm -rf "$src" "$src.tmp" "$patched" "$scratch"
	mkdir -p "$src.tmp"
	tar -xJf "$LINUX_SOURCE_TARBALL" -C "$src.tmp" --strip-components=1
	(
		cd "$src.tmp"
		git init -q -b base-branch
		git config user.name "secmem kbuild"
		git config user.email "kbuild@secmem.invalid"
		git config core.autocrlf false
		git config gc.auto 0
		# Debian's tarball ignores every top-level path (its .gitignore
		# serves Debian's packaging repository): new files in the series
		# would be invisible to git. Drop that stanza; nothing is built
		# from .gitignore.
		sed -i '/^# Debian packaging/,/^!\/debian\//d' .gitignore
		git add -A -f .
		git commit -q -m "Linux $LINUX_SOURCE_VERSION ($LINUX_SOURCE_PACKAGE)"
		git tag base
	)
	mv "$src.tmp" "$src"
	# Worktrees record absolute paths; none exist yet for this repo.
	git -C "$src" worktree prune
	echo "$LINUX_SOURCE_VERSION $base_recipe" >"$src/.git/secmem-version"
}

# Apply the series with git am, one commit per patch, on top of "base" in
# $1. Fails naming the first patch that does not apply.
apply_series() {
	local tree=$1 n=0 p
	git -C "$tree" am --abort >/dev/null 2>&1 || true
	git -C "$tree" reset -q --hard base
	git -C "$tree" clean -q -fdx
	for p in $(series_patches); do
		n=$((n + 1))
		if ! git -C "$tree" am -q --keep-cr "$kdir/patches/$p" >"$build/src/am.log" 2>&1; then
			git -C "$tree" am --abort >/dev/null 2>&1 || true
			sed 's/^/  /' "$build/src/am.log" >&2
			die "patch $n of the series, kernel/patches/$p, does not apply on $LINUX_SOURCE_VERSION"
		fi
	done
	echo "$n"
}

ensure_patched() {
	local want have n commit
	ensure_base
	want=$(series_hash)
	have=$(cat "$patched/.secmem-series" 2>/dev/null || true)
	[ -d "$patched" ] && [ "$have" = "$want" ] && return 0

	# Apply the series in a scratch worktree, then move the build tree to
	# the result with one checkout: git rewrites only the files that
	# differ, so a changed patch rebuilds what it touches, not every file
	# that includes a header some earlier patch changed.
	info "applying kernel/patches/series"
	[ -d "$scratch" ] || git -C "$src" worktree add -q --detach "$scratch" base
	n=$(apply_series "$scratch")
	commit=$(git -C "$scratch" rev-parse HEAD)
	if [ ! -d "$patched" ]; then
		git -C "$src" worktree add -q --detach "$patched" "$commit"
	else
		git -C "$patched" checkout -q -f --detach "$commit"
	fi
	# Untracked, so git leaves it alone.
	echo "$want" >"$patched/.secmem-series"
	info "applied $n patch(es) to $patched"
}

fragments() {
	local flavor=$1 variant=$2
	echo "$kdir/config/base.config"
	echo "$kdir/config/$variant.config"
	# Options that only exist with the series applied, for every variant
	# and for this one (a stock debug kernel has no mermap to check).
	if [ "$flavor" = patched ]; then
		echo "$kdir/config/secmem.config"
		[ -f "$kdir/config/secmem-$variant.config" ] &&
			echo "$kdir/config/secmem-$variant.config"
	fi
	return 0
}

# Every option a fragment asks for must survive olddefconfig: a silently
# dropped option (missing dependency) would make a test pass for nothing.
verify_config() {
	local config=$1 frag name line sym bad=0
	shift
	for frag in "$@"; do
		name=${frag##*/}
		while read -r line; do
			case "$line" in
			CONFIG_*=*)
				if ! grep -qxF "$line" "$config"; then
					sym=${line%%=*}
					echo "kbuild: $name: wanted $line, got:" \
						"$(grep -E "^(# )?${sym}[= ]" "$config" || echo "$sym absent")" >&2
					bad=1
				fi
				;;
			"# CONFIG_"*" is not set")
				sym=${line#\# }
				sym=${sym%% *}
				if grep -q "^$sym=" "$config"; then
					echo "kbuild: $name: wanted $sym unset, got:" \
						"$(grep "^$sym=" "$config")" >&2
					bad=1
				fi
				;;
			esac
		done <"$frag"
	done
	[ "$bad" = 0 ] || die "the merged config lost options asked for (see above)"
}

outdir() {
	echo "$build/kernel/$1-$2"
}

# What the cache stores of an output directory: everything the guests,
# the uapi check and the packaging read, but not the objects.
artifacts=(arch/x86/boot/bzImage .config System.map Module.symvers
	include/config/kernel.release usr/include)

# The compiler and linker the build uses: a new gcc or binutils makes
# other code from the same source.
toolchain_id() {
	gcc --version | sed -n 1p
	ld --version | sed -n 1p
}

# build_key FLAVOR VARIANT: a hash of every input of that kernel. The
# recipe is compile_kernel() itself and the functions that make its
# source tree, so an edit to how a kernel is built is a new key.
build_key() {
	local flavor=$1 variant=$2 frags
	mapfile -t frags < <(fragments "$flavor" "$variant")
	{
		echo "$LINUX_SOURCE_PACKAGE $LINUX_SOURCE_VERSION $flavor $variant"
		[ "$flavor" = patched ] && series_hash
		cat "${frags[@]}"
		toolchain_id
		echo "recipe $build_recipe base $base_recipe"
		declare -f compile_kernel ensure_base ensure_patched apply_series \
			series_patches series_hash fragments
		declare -p artifacts kernel_env
	} | sha256sum | cut -c1-16
}

check_flavor_variant() {
	case "$1" in
	patched | stock) ;;
	*) die "unknown flavor '$1' (patched or stock)" ;;
	esac
	case "$2" in
	release | debug | lockstat) ;;
	*) die "unknown variant '$2' (release, debug or lockstat)" ;;
	esac
}

# The environment a kernel build must not inherit: what the kernel's
# Makefile reads from it changes the kernel, and none of it is in the key.
kernel_env=(MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES KCFLAGS KCPPFLAGS KAFLAGS
	KRUSTFLAGS KBUILD_CFLAGS LLVM LLVM_IAS ARCH SUBARCH CROSS_COMPILE CC LD
	LOCALVERSION KCONFIG_ALLCONFIG KCONFIG_CONFIG KBUILD_BUILD_VERSION W C)

# kmake ARGS...: make for the kernel, without kernel_env.
kmake() {
	local unset=() v
	for v in "${kernel_env[@]}"; do
		unset+=(-u "$v")
	done
	env "${unset[@]}" make "$@"
}

# compile_kernel TREE OUT FLAVOR VARIANT: configure and build in OUT.
compile_kernel() {
	local tree=$1 out=$2 frags cc=gcc
	mapfile -t frags < <(fragments "$3" "$4")
	# Paths below $build hash as relative ones, so that another clone
	# (CI, a second checkout) hits the same ccache entries.
	command -v ccache >/dev/null && cc="ccache gcc" &&
		export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$build}
	kmake -s -C "$tree" O="$out" CC="$cc" tinyconfig >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
	kmake -s -C "$tree" O="$out" CC="$cc" olddefconfig
	verify_config "$out/.config" "${frags[@]}"
	# "modules" builds none (nothing is =m) but writes Module.symvers,
	# which out-of-tree modules such as bench/kmod link against.
	kmake -s -C "$tree" O="$out" CC="$cc" -j"$jobs" bzImage modules headers
}

# is_ready FLAVOR VARIANT: succeeds when do_build would compile nothing
# (up to date, or in the cache).
is_ready() {
	local out key
	out=$(outdir "$1" "$2")
	key=$(build_key "$1" "$2")
	{ [ "$(cat "$out/.secmem-key" 2>/dev/null)" = "$key" ] &&
		[ -f "$out/arch/x86/boot/bzImage" ]; } || cache_has "kernel-$key"
}

# do_build [--objects] FLAVOR VARIANT. Up to date when the output
# directory's key matches; else restored from the cache when it holds the
# key (artifacts only: .secmem-no-objects marks a directory whose objects
# are not the artifacts'); else built, and stored in the cache. --objects
# builds over a restored directory (incremental, with ccache) so that the
# object tree matches.
do_build() {
	local objects=0 flavor variant tree out key start frags a
	if [ "${1:-}" = --objects ]; then
		objects=1
		shift
	fi
	[ $# = 2 ] || die "usage: $0 build [--objects] patched|stock release|debug|lockstat"
	flavor=$1 variant=$2
	check_flavor_variant "$flavor" "$variant"
	out=$(outdir "$flavor" "$variant")
	# One build of a kernel at a time; a second caller waits, then finds
	# it up to date. The key is computed under the lock, so that it is
	# the inputs of now.
	mkdir -p "${out%/*}"
	exec 8>"$out.lock"
	flock 8
	key=$(build_key "$flavor" "$variant")
	if [ -f "$out/.secmem-key" ] && [ "$(cat "$out/.secmem-key")" = "$key" ] &&
		[ -f "$out/arch/x86/boot/bzImage" ] &&
		{ [ "$objects" = 0 ] || [ ! -e "$out/.secmem-no-objects" ]; }; then
		cache_touch "kernel-$key"
		info "kernel $flavor-$variant is up to date (key $key), not rebuilding"
		return 0
	fi
	rm -f "$out/.secmem-key"
	if [ "$objects" = 0 ] && cache_has "kernel-$key"; then
		# The artifacts replace what is there: a header the series no
		# longer has must not stay behind.
		for a in "${artifacts[@]}"; do
			rm -rf "${out:?}/$a"
		done
		if cache_get "kernel-$key" "$out" "${artifacts[@]}"; then
			mapfile -t frags < <(fragments "$flavor" "$variant")
			verify_config "$out/.config" "${frags[@]}"
			echo "$key" >"$out/.secmem-no-objects"
			echo "$key" >"$out/.secmem-key"
			info "kernel $flavor-$variant restored from the cache" \
				"($secmem_cache/kernel-$key), not rebuilding"
			return 0
		fi
	fi
	# The source trees: changed only under the exclusive lock, read by
	# compiles under the shared one.
	exec 7>"$build/src.lock"
	flock -x 7
	case "$flavor" in
	patched) ensure_patched; tree=$patched ;;
	stock) ensure_base; tree=$src ;;
	esac
	flock -s 7
	start=$(date +%s)
	info "building kernel $flavor-$variant in $out (key $key)"
	mkdir -p "$out"
	compile_kernel "$tree" "$out" "$flavor" "$variant"
	flock -u 7
	rm -f "$out/.secmem-no-objects"
	# kernel/ edited while it built: what was built has no key.
	[ "$(build_key "$flavor" "$variant")" = "$key" ] ||
		die "kernel/ changed during the build of $flavor-$variant: run it again"
	echo "$key" >"$out/.secmem-key"
	info "kernel $flavor-$variant built in $(($(date +%s) - start)) s:" \
		"$out/arch/x86/boot/bzImage"
	cache_put "kernel-$key" "$out" "${artifacts[@]}"
}

# Every patch must build on its own (bisection depends on it): check out
# base + patches 1..k for each k in turn and build vmlinux and the uapi
# headers, all in one output directory, so that each step recompiles only
# what its patch changed. A step fails on a build error or on a compiler
# warning, naming the patch; the last step's config is verified like
# do_build()'s. Options of later patches are simply absent at earlier
# steps, which is what olddefconfig does with them.
do_series() {
	local variant=$1 out log n=0 total c subject start cc=gcc frags commits
	case "$variant" in
	release | debug) ;;
	*) die "unknown variant '$variant' (release or debug)" ;;
	esac
	ensure_base
	out=$build/kernel/series-$variant
	log=$out/step.log
	mapfile -t frags < <(fragments patched "$variant")
	[ -d "$stepwise" ] || git -C "$src" worktree add -q --detach "$stepwise" base
	apply_series "$stepwise" >/dev/null
	mapfile -t commits < <(git -C "$stepwise" rev-list --reverse base..HEAD)
	total=${#commits[@]}
	mkdir -p "$out"
	command -v ccache >/dev/null && cc="ccache gcc" &&
		export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$build}
	info "building $total patch(es) one by one ($variant config) in $out"
	for c in "${commits[@]}"; do
		n=$((n + 1))
		subject=$(git -C "$stepwise" log -1 --format=%s "$c")
		git -C "$stepwise" checkout -q -f --detach "$c"
		start=$(date +%s)
		make -s -C "$stepwise" O="$out" CC="$cc" tinyconfig >/dev/null
		"$stepwise/scripts/kconfig/merge_config.sh" -m -O "$out" \
			"$out/.config" "${frags[@]}" >/dev/null
		if ! make -s -C "$stepwise" O="$out" CC="$cc" olddefconfig >"$log" 2>&1 ||
			! make -s -C "$stepwise" O="$out" CC="$cc" -j"$jobs" \
				vmlinux headers >>"$log" 2>&1; then
			tail -n 40 "$log" >&2
			die "the tree does not build after patch $n/$total, '$subject' (log: $log)"
		fi
		if grep -q 'warning:' "$log"; then
			grep -A3 'warning:' "$log" >&2
			die "patch $n/$total, '$subject', builds with warnings (log: $log)"
		fi
		info "patch $n/$total builds ($(($(date +%s) - start)) s): $subject"
	done
	verify_config "$out/.config" "${frags[@]}"
	info "all $total patch(es) build one by one"
}

do_tree() {
	ensure_base
	if [ -d "$devtree" ]; then
		if [ "${FORCE:-0}" != 1 ]; then
			info "$devtree exists: edit it there, 'make kernel-export' to write the series back."
			info "to recreate it from kernel/patches (losing unexported commits): make kernel-tree FORCE=1"
			return 0
		fi
		git -C "$src" worktree remove --force "$devtree"
	fi
	git -C "$src" worktree add -q -B secmem "$devtree" base
	n=$(apply_series "$devtree")
	info "$devtree: base ($LINUX_SOURCE_VERSION) + $n commit(s), branch secmem"
}

do_export() {
	[ -d "$devtree" ] || die "no developer tree: run 'make kernel-tree' first"
	git -C "$devtree" diff --quiet HEAD ||
		die "$devtree has uncommitted changes: commit them (one commit per patch) first"
	local tmp
	tmp=$(mktemp -d)
	git -C "$devtree" format-patch -q --zero-commit --no-signature \
		-O"$kdir/scripts/orderfile" --output-directory "$tmp" base..HEAD
	rm -f "$kdir"/patches/*.patch
	{
		echo "# The secmem series, applied in this order on the tree kernel/base.conf pins."
		echo "# Written by 'make kernel-export'; edit the commits in build/linux instead."
		(cd "$tmp" && ls -- *.patch 2>/dev/null) || true
	} >"$kdir/patches/series"
	cp "$tmp"/*.patch "$kdir/patches/" 2>/dev/null || true
	rm -rf "$tmp"
	info "exported $(series_patches | wc -l) patch(es) to kernel/patches"
}

do_checkpatch() {
	local p bad=0
	ensure_base
	for p in $(series_patches); do
		if ! "$src/scripts/checkpatch.pl" --strict --quiet --no-tree --summary-file \
			"$kdir/patches/$p"; then
			bad=1
		else
			echo "checkpatch: $p: clean"
		fi
	done
	[ "$bad" = 0 ] || die "checkpatch --strict found problems (above)"
}

main() {
	case "${1:-}" in
	source)
		mkdir -p "$build"
		exec 7>"$build/src.lock"
		flock -x 7
		ensure_patched
		;;
	build) shift; do_build "$@" ;;
	key) [ $# = 3 ] || die "usage: $0 key FLAVOR VARIANT"; check_flavor_variant "$2" "$3"; build_key "$2" "$3" ;;
	ready) [ $# = 3 ] || die "usage: $0 ready FLAVOR VARIANT"; check_flavor_variant "$2" "$3"; is_ready "$2" "$3" ;;
	path) [ $# = 3 ] || die "usage: $0 path FLAVOR VARIANT"; outdir "$2" "$3" ;;
	tree) do_tree ;;
	export) do_export ;;
	checkpatch) do_checkpatch ;;
	series) [ $# = 2 ] || die "usage: $0 series release|debug"; do_series "$2" ;;
	*) die "usage: $0 source|build|key|ready|path|tree|export|checkpatch|series" ;;
	esac
}

# One line, parsed whole before it runs: editing this file while a build
# is running cannot make bash read on into the new text.
main "$@"; exit
