#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check-drift.sh KHDR [RESULTS.tap]
#
# The project carries a userspace copy of the kernel ABI it uses
# (include/secmem/uapi.h: the memfd flag, the netlink family). Compare every
# constant in it with the patched kernel's exported uapi headers in KHDR
# ('make headers' output), so that the two cannot drift apart: each constant
# is printed by one program built against the kernel's headers and by one
# built against ours, and the outputs must be identical.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
khdr=${1:?usage: $0 KHDR [RESULTS.tap]}
results=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -f "$khdr/linux/secmem.h" ] || { echo "no $khdr/linux/secmem.h: not the patched kernel's headers" >&2; exit 2; }

# NAME FORMAT pairs: every constant of include/secmem/uapi.h.
names='MFD_UNMAPPED SECMEM_GENL_NAME SECMEM_GENL_VERSION SECMEM_GENL_MCGRP_EVENTS
SECMEM_CMD_UNSPEC SECMEM_CMD_GET_STATS SECMEM_CMD_EVENT_LOW_WATERMARK
SECMEM_CMD_EVENT_POOL_EXHAUSTED SECMEM_CMD_EVENT_ALLOC_FAIL
SECMEM_CMD_EVENT_RECLAIM SECMEM_CMD_EVENT_SECRETS_WIPED SECMEM_CMD_MAX
SECMEM_ATTR_UNSPEC SECMEM_ATTR_PAD SECMEM_ATTR_NODE SECMEM_ATTR_POOL_TARGET
SECMEM_ATTR_FREE_BYTES SECMEM_ATTR_UNMAPPED_BYTES SECMEM_ATTR_WATERMARK_LOW
SECMEM_ATTR_WATERMARK_HIGH SECMEM_ATTR_ALLOC_POOL SECMEM_ATTR_ALLOC_CONVERT
SECMEM_ATTR_ALLOC_FAIL SECMEM_ATTR_CONVERSIONS SECMEM_ATTR_RESTORATIONS
SECMEM_ATTR_TLB_FLUSH_CONVERT SECMEM_ATTR_TLB_FLUSH_MERMAP
SECMEM_ATTR_RELEASED_BYTES SECMEM_ATTR_WIPED_FILES SECMEM_ATTR_WIPED_BYTES
SECMEM_ATTR_MAX'

gen() { # gen INCLUDES... > program.c
	printf '%s\n' '#include <stdint.h>' '#include <stdio.h>'
	for h in "$@"; do printf '#include <%s>\n' "$h"; done
	# Strings print as strings, everything else as a number.
	printf '%s\n' '#define P(x) _Generic((x), char *: printf("%s %s\n", #x, (const char *)(uintptr_t)(x)), default: printf("%s %lld\n", #x, (long long)(uintptr_t)(x)))'
	printf '%s\n' 'int main(void)' '{'
	for n in $names; do printf '\tP(%s);\n' "$n"; done
	printf '%s\n' '	return 0;' '}'
}

gen linux/memfd.h linux/secmem.h >"$tmp/kernel.c"
gen secmem/uapi.h >"$tmp/ours.c"
cc -std=gnu11 -Wall -Werror -isystem "$khdr" -o "$tmp/kernel" "$tmp/kernel.c"
cc -std=gnu11 -Wall -Werror -I"$top/include" -o "$tmp/ours" "$tmp/ours.c"
"$tmp/kernel" >"$tmp/kernel.out"
"$tmp/ours" >"$tmp/ours.out"

n=0 bad=0
{
	echo "TAP version 13"
	echo "1..$(wc -l <"$tmp/kernel.out")"
	while read -r name kval; do
		n=$((n + 1))
		oval=$(awk -v n="$name" '$1 == n { $1 = ""; sub(/^ /, ""); print }' "$tmp/ours.out")
		if [ "$kval" = "$oval" ]; then
			echo "ok $n uapi.$name"
		else
			echo "not ok $n uapi.$name # kernel: $kval, include/secmem/uapi.h: $oval"
			bad=$((bad + 1))
		fi
	done <"$tmp/kernel.out"
} >"$tmp/out.tap"
cat "$tmp/out.tap"
[ -z "$results" ] || cp "$tmp/out.tap" "$results"
! grep -q '^not ok' "$tmp/out.tap"
