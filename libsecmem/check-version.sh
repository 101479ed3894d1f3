#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-version.sh VERSION HEADER MAP TOP: part of make check-abi.
#
# One release number, written in four places, must be the same in all:
#   - VERSION, libsecmem/Makefile's (the shared library's file name, the
#     .pc file, secmemd --version);
#   - SECMEM_VERSION_MAJOR/MINOR/PATCH and SECMEM_VERSION_STRING in
#     secmem.h, which programs test with #if;
#   - the upstream part of the newest entry of debian/changelog, the
#     version of the packages.
# The version nodes of libsecmem.map follow it: SECMEM_X.Y holds what
# release X.Y.0 added, so no node may be newer than VERSION, the nodes
# come in ascending order and each inherits the one before.  For every
# release whose ABI is recorded (debian/libsecmem0.abi-X.Y.Z, the
# functions a released libsecmem0 exported), the nodes up to SECMEM_X.Y
# hold exactly those functions: a function moved to another node would
# break the programs linked against that release.
set -eu

version=$1
header=$2
map=$3
top=$4
fail=0

bad() {
	echo "check-abi: $*" >&2
	fail=1
}

# X.Y.Z -> a number that orders releases.
vnum() {
	echo "$1" | awk -F. '{ printf "%d\n", ($1 * 65536) + ($2 * 256) + $3 }'
}

macro() {
	sed -n "s/^#define $1[[:space:]][[:space:]]*\\(.*\\)\$/\\1/p" "$header"
}

echo "$version" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' ||
	bad "VERSION '$version' is not MAJOR.MINOR.PATCH"
h="$(macro SECMEM_VERSION_MAJOR).$(macro SECMEM_VERSION_MINOR).$(macro SECMEM_VERSION_PATCH)"
[ "$h" = "$version" ] ||
	bad "secmem.h's SECMEM_VERSION_MAJOR/MINOR/PATCH say $h, libsecmem/Makefile's VERSION $version"
s=$(macro SECMEM_VERSION_STRING)
[ "$s" = "\"$version\"" ] ||
	bad "secmem.h's SECMEM_VERSION_STRING is $s, VERSION is $version"

# "secmem (1:0.2.0+dfsg-1) unstable; ..." -> 0.2.0: no epoch, no revision,
# no repack suffix.
changelog=$top/debian/changelog
if [ -f "$changelog" ]; then
	d=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$changelog" |
		sed -e 's/^[0-9]*://' -e 's/-[^-]*$//' -e 's/[+~].*//')
	[ "$d" = "$version" ] ||
		bad "debian/changelog's newest entry is upstream version '$d', VERSION is $version"
fi

# The nodes, in the order of the script: "NODE PARENT" (PARENT "-" for
# the first).
nodes=$(awk '
	/^SECMEM_[0-9]+\.[0-9]+[[:space:]]*[{]/ { node = $1 }
	/^}/ && node != "" {
		parent = $2; sub(/;$/, "", parent)
		print node, (parent == "" || parent == ";") ? "-" : parent
		node = ""
	}' "$map")
[ -n "$nodes" ] || bad "$(basename "$map") has no SECMEM_X.Y node"
prev=- prevnum=-1
echo "$nodes" | {
	rc=0
	while read -r node parent; do
		[ -n "$node" ] || continue
		n=$(vnum "${node#SECMEM_}.0")
		if [ "$n" -gt "$(vnum "$version")" ]; then
			echo "check-abi: version node $node is newer than release $version" >&2
			rc=1
		fi
		if [ "$n" -le "$prevnum" ]; then
			echo "check-abi: version node $node comes after $prev" >&2
			rc=1
		fi
		if [ "$parent" != "$prev" ]; then
			echo "check-abi: version node $node inherits '$parent', not the node before it ('$prev')" >&2
			rc=1
		fi
		prev=$node prevnum=$n
	done
	exit $rc
} || fail=1

# The functions of the nodes up to @1 (X.Y), sorted.
functions_upto() {
	awk -v upto="$(vnum "$1.0")" '
		/^SECMEM_[0-9]+\.[0-9]+[[:space:]]*[{]/ {
			split(substr($1, 8), v, ".")
			keep = v[1] * 65536 + v[2] * 256 <= upto
		}
		keep && /^[[:space:]]*secmem_[a-z0-9_]*;$/ {
			sub(/;/, "", $1); print $1
		}' "$map" | sort
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for abi in "$top"/debian/libsecmem0.abi-*; do
	[ -f "$abi" ] || continue
	rel=${abi##*.abi-}
	if [ "$(vnum "$rel")" -gt "$(vnum "$version")" ]; then
		bad "$(basename "$abi") records release $rel, newer than VERSION $version"
		continue
	fi
	mm=${rel%.*}
	functions_upto "$mm" >"$tmp"
	if ! sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$abi" | sort |
		diff -u - "$tmp" >&2; then
		bad "the nodes up to SECMEM_$mm (+) differ from release $rel's ABI in $(basename "$abi") (-)"
	fi
done

[ "$fail" = 0 ] || exit 1
echo "check-abi: release $version in secmem.h, libsecmem/Makefile and debian/changelog; nodes $(echo "$nodes" | cut -d' ' -f1 | paste -sd' ') up to it"
