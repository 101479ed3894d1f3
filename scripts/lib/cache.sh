# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The build cache: finished build outputs stored by a key of everything
# that went into them, outside any clone of the repository, so that a
# second clone or a CI run on the same machine reuses a kernel whose
# inputs did not change instead of building it again. Sourced by
# kernel/scripts/kbuild.sh and scripts/deb.sh.
#
# An entry is a directory SECMEM_CACHE/NAME (NAME = KIND-KEY, KIND one of
# kernel, kernel-deb, debian-root). It appears whole or not at all: it is
# filled under a temporary name and renamed. Every use touches it; of each
# kind, the SECMEM_CACHE_KEEP most recently used stay. A miss is never an
# error: the caller builds.
#
# Environment: SECMEM_CACHE (default /var/cache/secmem; empty turns the
# cache off), SECMEM_CACHE_KEEP (default 6 entries of each kind).

secmem_cache=${SECMEM_CACHE-/var/cache/secmem}
secmem_cache_keep=${SECMEM_CACHE_KEEP:-6}

# cache_usable: the cache is on and its directory can be written.
cache_usable() {
	[ -n "$secmem_cache" ] || return 1
	mkdir -p "$secmem_cache" 2>/dev/null && [ -w "$secmem_cache" ]
}

# cache_has NAME: an entry of that name exists.
cache_has() {
	[ -n "$secmem_cache" ] && [ -f "$secmem_cache/$1/.secmem-cache" ]
}

# cache_get NAME DEST PATH...: copy the entry's PATHs (relative, as stored)
# into DEST, keeping their relative paths. Fails, copying nothing, on a
# miss.
cache_get() {
	local name=$1 dest=$2 entry
	shift 2
	cache_has "$name" || return 1
	entry=$secmem_cache/$name
	mkdir -p "$dest"
	(cd "$entry" && cp -a --parents -- "$@" "$dest/") || return 1
	cache_touch "$name"
}

# cache_touch NAME: mark the entry used (it is kept longer), if it exists
# and can be written.
cache_touch() {
	! cache_has "$1" || touch "$secmem_cache/$1" 2>/dev/null || true
}

# cache_put NAME SRC PATH...: store SRC's PATHs as entry NAME. A cache
# that cannot be written is reported and skipped: the build still
# succeeded.
cache_put() {
	local name=$1 src=$2 tmp
	shift 2
	if ! cache_usable; then
		[ -z "$secmem_cache" ] ||
			echo "cache: $secmem_cache cannot be written, $name not stored" >&2
		return 0
	fi
	cache_has "$name" && return 0
	tmp=$(mktemp -d "$secmem_cache/.new-$name.XXXXXX") && chmod 755 "$tmp" || return 0
	if ! (cd "$src" && cp -a --parents -- "$@" "$tmp/"); then
		rm -rf "$tmp"
		echo "cache: could not copy $name into $secmem_cache, not stored" >&2
		return 0
	fi
	echo "$name stored $(date -u +%FT%TZ) from $src" >"$tmp/.secmem-cache"
	# Another run may have stored the same entry meanwhile: keep that one.
	mv -T "$tmp" "$secmem_cache/$name" 2>/dev/null || rm -rf "$tmp"
	cache_prune
}

# cache_prune: of each kind, keep the SECMEM_CACHE_KEEP most recently used
# entries; drop what an interrupted cache_put left.
cache_prune() {
	local kind e
	find "$secmem_cache" -mindepth 1 -maxdepth 1 -name '.new-*' -mmin +120 \
		-exec rm -rf {} + 2>/dev/null || true
	for kind in kernel kernel-deb debian-root; do
		# Entry names are KIND-KEY, KEY hexadecimal: no spaces, and
		# kernel-deb-* never matches kernel-KEY.
		# shellcheck disable=SC2012,SC2010
		ls -1t "$secmem_cache" | grep -E "^$kind-[0-9a-f]+\$" |
			tail -n +"$((secmem_cache_keep + 1))" | while read -r e; do
				rm -rf "${secmem_cache:?}/$e"
			done
	done
}

# cache_path NAME: the entry's directory (for listing what it holds).
cache_path() {
	echo "$secmem_cache/$1"
}
