#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The edits below are called through changes() and keeps().
# shellcheck disable=SC2317
#
# The kernel cache key (kernel/scripts/kbuild.sh key) changes with every
# input that changes what a kernel build makes, and only with those: a
# cache entry must never be reused for a kernel built from other inputs,
# and an edit to the documentation must not cost a kernel build.
#
# Works on a copy of kernel/ and scripts/lib/ in a scratch directory, edits
# one input at a time there and compares the key with the unedited one.
# Builds nothing. TAP on stdout and in TAP_FILE.
#
# Usage: key-test.sh [TAP_FILE]
top=$(cd "$(dirname "$0")/../../.." && pwd)
tap=${1:-/dev/null}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
failed=0

result() { # result OK NAME [DETAIL]
	n=$((n + 1))
	local line="ok $n - $2"
	if [ "$1" != 0 ]; then
		failed=$((failed + 1))
		line="not ok $n - $2${3:+ # $3}"
	fi
	echo "$line" | tee -a "$work/results"
}

# fresh: a pristine copy of what the key reads, in $work/t.
fresh() {
	rm -rf "$work/t"
	mkdir -p "$work/t/scripts"
	cp -a "$top/kernel" "$work/t/kernel"
	cp -a "$top/scripts/lib" "$work/t/scripts/lib"
}

key() { # key FLAVOR VARIANT
	env BUILD="$work/build" SECMEM_CACHE= "$work/t/kernel/scripts/kbuild.sh" key "$1" "$2"
}

# edited WANT NAME FLAVOR VARIANT EDIT...: run EDIT in a pristine copy
# ($work/t); WANT "new" expects the key of FLAVOR-VARIANT to differ from
# the pristine one, "same" expects it unchanged.
edited() {
	local want=$1 name=$2 flavor=$3 variant=$4 before after ok=1
	shift 4
	fresh
	before=$(key "$flavor" "$variant")
	(cd "$work/t" && "$@") || {
		result 1 "$name" "the edit failed"
		return
	}
	after=$(key "$flavor" "$variant")
	if [ -n "$before" ] && [ -n "$after" ]; then
		case $want in
		new) [ "$before" != "$after" ] && ok=0 ;;
		same) [ "$before" = "$after" ] && ok=0 ;;
		esac
	fi
	result "$ok" "$name: $flavor-$variant key $before -> $after" \
		"wanted a $want key: '$before' -> '$after'"
}
changes() { edited new "$@"; }
keeps() { edited same "$@"; }

first_patch() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' kernel/patches/series | head -n 1
}
edit_patch() {
	local p
	p=kernel/patches/$(first_patch)
	# One more line of context-free text in the commit message.
	sed -i '0,/^$/s//\nAn edited commit message.\n/' "$p"
}
swap_patches() {
	local a b
	a=$(first_patch)
	b=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' kernel/patches/series | sed -n 2p)
	sed -i -e "s/^$a\$/@@/" -e "s/^$b\$/$a/" -e "s/^@@\$/$b/" kernel/patches/series
}
drop_last_patch() {
	local last
	last=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' kernel/patches/series | tail -n 1)
	sed -i "/^$last\$/d" kernel/patches/series
}
bump_version() {
	sed -i 's/^LINUX_SOURCE_VERSION=\(.*\)$/LINUX_SOURCE_VERSION=\1+secmemtest1/' kernel/base.conf
}
append() { # append FILE LINE
	echo "$2" >>"$1"
}
edit_recipe() {
	# One more make flag in compile_kernel().
	# shellcheck disable=SC2016
	sed -i '/^compile_kernel() {/,/^}/s/-j"\$jobs" bzImage/-j"$jobs" -k bzImage/' \
		kernel/scripts/kbuild.sh
	grep -q -- '-k bzImage' kernel/scripts/kbuild.sh
}
other_compiler() {
	mkdir -p "$work/bin"
	cat >"$work/bin/gcc" <<'EOS'
#!/bin/sh
echo "gcc (Debian 99.1.0-1) 99.1.0"
EOS
	chmod +x "$work/bin/gcc"
}
other_linker() {
	mkdir -p "$work/bin"
	cat >"$work/bin/ld" <<'EOS'
#!/bin/sh
echo "GNU ld (GNU Binutils for Debian) 9.99"
EOS
	chmod +x "$work/bin/ld"
}

changes "a patch's content" patched debug edit_patch
changes "the order of the series" patched debug swap_patches
changes "a patch dropped from the series" patched release drop_last_patch
changes "the pinned source version" patched release bump_version
changes "the pinned source version" stock release bump_version
changes "base.config" patched release append kernel/config/base.config "CONFIG_PRINTK_TIME=y"
changes "base.config" stock debug append kernel/config/base.config "CONFIG_PRINTK_TIME=y"
changes "the variant's fragment" patched debug append kernel/config/debug.config "CONFIG_DEBUG_KMEMLEAK=y"
changes "the variant's fragment" patched release append kernel/config/release.config "CONFIG_SLUB_DEBUG=y"
changes "secmem.config" patched release append kernel/config/secmem.config "# a comment"
changes "secmem-debug.config" patched debug append kernel/config/secmem-debug.config "CONFIG_FAILSLAB=y"
changes "the build recipe (compile_kernel)" patched debug edit_recipe
changes "the build recipe (compile_kernel)" stock release edit_recipe

# The compiler and the linker: a stand-in first in PATH.
fresh
before=$(key patched debug)
other_compiler
after=$(PATH=$work/bin:$PATH key patched debug)
[ -n "$before" ] && [ -n "$after" ] && [ "$before" != "$after" ]
result $? "the compiler's version: patched-debug key $before -> $after"
rm -rf "${work:?}/bin"
other_linker
after=$(PATH=$work/bin:$PATH key patched debug)
[ -n "$before" ] && [ -n "$after" ] && [ "$before" != "$after" ]
result $? "the linker's version: patched-debug key $before -> $after"
rm -rf "${work:?}/bin"

# Every kernel has a key of its own.
fresh
keys=$(for f in patched stock; do for v in release debug lockstat; do key $f $v; done; done)
[ "$(echo "$keys" | sort -u | wc -l)" = 6 ]
result $? "six flavor-variant pairs, six different keys"

# What does not go into a kernel keeps its key.
keeps "the kernel README" patched debug append kernel/README.md "More text."
keeps "another variant's fragment" patched debug append kernel/config/release.config "CONFIG_SLUB_DEBUG=y"
keeps "another variant's fragment" stock release append kernel/config/secmem.config "CONFIG_PRINTK_TIME=y"
keeps "the series for a stock kernel" stock debug edit_patch
keeps "a comment in the series file" patched release append kernel/patches/series "# a comment"

# The key is the same from another clone: it hashes content, not paths.
fresh
a=$(key patched release)
mv "$work/t" "$work/elsewhere"
b=$(env BUILD="$work/build2" SECMEM_CACHE= "$work/elsewhere/kernel/scripts/kbuild.sh" key patched release)
[ -n "$a" ] && [ "$a" = "$b" ]
result $? "a copy in another directory has the same key ($a, $b)"
rm -rf "$work/elsewhere"

# The cache: an entry stored under a kernel's key is restored into a new
# clone's build directory with no source and no compiler run, marked as
# having no object tree; the oldest entries beyond SECMEM_CACHE_KEEP go.
fresh
k=$(key patched debug)
cache=$work/cache
entry=$cache/kernel-$k
mkdir -p "$entry/arch/x86/boot" "$entry/include/config" "$entry/usr/include/linux"
for f in arch/x86/boot/bzImage System.map Module.symvers \
	include/config/kernel.release usr/include/linux/memfd.h; do
	echo "stored $f" >"$entry/$f"
done
# A restore checks the config against the fragments, like a build.
cat "$work/t/kernel/config/base.config" "$work/t/kernel/config/debug.config" \
	"$work/t/kernel/config/secmem.config" "$work/t/kernel/config/secmem-debug.config" \
	>"$entry/.config"
echo "kernel-$k stored by key-test" >"$entry/.secmem-cache"
out=$(env BUILD="$work/build" SECMEM_CACHE="$cache"\
	"$work/t/kernel/scripts/kbuild.sh" build patched debug 2>&1)
d=$work/build/kernel/patched-debug
[ "$(cat "$d/arch/x86/boot/bzImage" 2>/dev/null)" = "stored arch/x86/boot/bzImage" ] &&
	[ "$(cat "$d/usr/include/linux/memfd.h" 2>/dev/null)" = "stored usr/include/linux/memfd.h" ] &&
	[ "$(cat "$d/.secmem-key")" = "$k" ] && [ -f "$d/.secmem-no-objects" ] &&
	[ ! -d "$work/build/src" ]
result $? "an entry with the kernel's key is restored, nothing extracted or built" "$out"
out=$(env BUILD="$work/build" SECMEM_CACHE="$cache" "$work/t/kernel/scripts/kbuild.sh" build patched debug 2>&1)
case $out in *"up to date (key $k)"*) r=0 ;; *) r=1 ;; esac
result $r "a restored kernel is then up to date" "$out"
for i in 1 2 3; do
	mkdir -p "$cache/kernel-000000000000000$i"
	echo x >"$cache/kernel-000000000000000$i/.secmem-cache"
	touch -d "-$i hour" "$cache/kernel-000000000000000$i"
done
# Another kind, older than all: pruned with its own kind only.
mkdir -p "$cache/kernel-deb-00000000000000d1"
echo x >"$cache/kernel-deb-00000000000000d1/.secmem-cache"
touch -d "-9 hour" "$cache/kernel-deb-00000000000000d1"
(
	# shellcheck source=/dev/null
	SECMEM_CACHE=$cache SECMEM_CACHE_KEEP=2 . "$work/t/scripts/lib/cache.sh"
	cache_prune
)
[ -d "$entry" ] && [ -d "$cache/kernel-0000000000000001" ] &&
	[ ! -e "$cache/kernel-0000000000000002" ] && [ ! -e "$cache/kernel-0000000000000003" ] &&
	[ -d "$cache/kernel-deb-00000000000000d1" ]
result $? "pruning keeps the most recently used entries of each kind"

# A restore replaces the artifacts: a header the stored kernel does not
# have is gone afterwards.
echo stale >"$d/usr/include/linux/stale.h"
rm -f "$d/.secmem-key"
env BUILD="$work/build" SECMEM_CACHE="$cache" "$work/t/kernel/scripts/kbuild.sh" build patched debug >/dev/null 2>&1
[ ! -e "$d/usr/include/linux/stale.h" ] && [ -f "$d/usr/include/linux/memfd.h" ]
result $? "a restore leaves no file of an earlier kernel among the artifacts"

# The environment the kernel's Makefile reads is not in the key: the
# build runs without it.
a=$(key patched debug)
b=$(KCFLAGS=-Og LLVM=1 LOCALVERSION=-x KCONFIG_ALLCONFIG=/dev/null MAKEFLAGS='W=1' key patched debug)
# The script's text, not an expansion:
# shellcheck disable=SC2016
[ -n "$a" ] && [ "$a" = "$b" ] && grep -q '^kernel_env=(MAKEFLAGS.*KCFLAGS' "$work/t/kernel/scripts/kbuild.sh" &&
	grep -q '	kmake -s -C "$tree" O="$out" CC="$cc" -j"$jobs" bzImage' "$work/t/kernel/scripts/kbuild.sh"
result $? "KCFLAGS, LLVM, LOCALVERSION, MAKEFLAGS: not in the key, and not passed to the kernel's make"

if [ "$tap" != /dev/null ]; then
	{
		echo "TAP version 13"
		echo "1..$n"
		cat "$work/results"
	} >"$tap"
fi
echo "kbuild key: $((n - failed)) passed, $failed failed"
exit $((failed > 0))
