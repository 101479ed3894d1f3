#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Copy the shared libraries a dynamically linked program needs, plus the
# ones it dlopen()s, into the guest tree's lib/ (LD_LIBRARY_PATH=/secmem/lib
# in the guest; mkinitramfs.sh links the loader at its usual path).
#
#   guest-libs.sh DEST_LIB_DIR PROGRAM [SONAME...]
#
# SONAMEs (libsodium.so.23, libcrypto.so.3) are found with ldconfig -p;
# their own dependencies come along. A missing SONAME is a warning: the
# program reports that allocator as not measured.
set -euo pipefail

[ $# -ge 2 ] || {
	echo "usage: $0 DEST_LIB_DIR PROGRAM [SONAME...]" >&2
	exit 2
}
dest=$1
prog=$2
shift 2

# Paths of everything ldd lists for $1: "name => /path (addr)" and the loader.
deps() {
	LC_ALL=C ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}

files=("$prog")
for soname in "$@"; do
	path=$(ldconfig -p | awk -v n="$soname" '$1 == n && /x86-64/ && !p { p = $NF } END { print p }')
	if [ -z "$path" ]; then
		echo "guest-libs: warning: $soname not found (ldconfig -p)" >&2
		continue
	fi
	files+=("$path")
done

rm -rf "$dest"
mkdir -p "$dest"
for f in "${files[@]}"; do
	[ "$f" = "$prog" ] || cp -L "$f" "$dest/"
	deps "$f" | while read -r lib; do
		cp -L "$lib" "$dest/$(basename "$lib")"
	done
done
echo "guest-libs: $(find "$dest" -maxdepth 1 -type f | wc -l) libraries in $dest"
