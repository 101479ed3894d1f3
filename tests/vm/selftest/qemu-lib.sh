#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of qemu-lib.sh's vm_run, the QEMU launch of run-vm.sh and
# debian/boot.sh, with stand-in "QEMU" commands: a guest that powers off,
# a QEMU that fails, a guest that hangs past VM_TIMEOUT, and a bad
# VM_TIMEOUT. Each case checks the log vm_run writes, which is what the
# log checkers judge.
#
# Prints TAP and writes it to $BUILD/results/vm-qemu-lib.tap as well.
# Environment: BUILD (default <repo>/build).
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=${BUILD:-$top/build}
results=$build/results/vm-qemu-lib.tap

# shellcheck source-path=SCRIPTDIR source=../qemu-lib.sh
. "$here/../qemu-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-qemu-lib.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
# result NAME WHY: WHY without a non-blank line means the case passed.
result() {
	local why
	why=$(printf '%s\n' "$2" | sed -e 's/^[[:space:]]*//' -e '/^$/d')
	n=$((n + 1))
	if [ -z "$why" ]; then
		echo "ok $n vm-qemu-lib.$1"
	else
		echo "not ok $n vm-qemu-lib.$1"
		printf '%s\n' "$why" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
}

# expect LOG PATTERN...: the reasons LOG lacks a line matching each PATTERN.
expect() {
	local log=$1 pat
	shift
	for pat in "$@"; do
		grep -qE -- "$pat" "$log" || echo "log lacks /$pat/"
	done
}

# reject LOG PATTERN...: the reasons LOG has a line matching a PATTERN.
reject() {
	local log=$1 pat
	shift
	for pat in "$@"; do
		! grep -qE -- "$pat" "$log" || echo "log has /$pat/"
	done
}

run_case() {
	local log=$tmp/$1.log
	shift
	vm_run "$log" "" "mode test, stand-in QEMU" "$@" >"$log.out" 2>&1
}

mkdir -p "$(dirname "$results")"
{
	echo "TAP version 13"
	echo "1..5"

	log=$tmp/sub/dir/poweroff.log
	vm_run "$log" "" "mode test, stand-in QEMU" sh -c 'echo "guest says hi"; exit 0' \
		>"$tmp/poweroff.out" 2>&1 || true
	result poweroff "$(expect "$log" \
		'^secmem-vm: [0-9T:-]+Z mode test, stand-in QEMU$' \
		"^secmem-vm: 'sh' '-c' 'echo \"guest says hi\"; exit 0'$" \
		'^guest says hi$' \
		'^secmem-vm: qemu ran for [0-9]+ s, log in ')
		$(reject "$log" '^secmem-vm: (timeout|qemu exited)')
		$(cmp -s "$log" "$tmp/poweroff.out" || echo "stdout differs from the log")"

	run_case failing sh -c 'echo boom >&2; exit 3' || true
	result qemu-fails "$(expect "$tmp/failing.log" '^boom$' \
		'^secmem-vm: qemu exited with status 3$' '^secmem-vm: qemu ran for ')"

	start=$SECONDS
	VM_TIMEOUT=1 run_case hang sh -c 'echo booting; exec sleep 60' || true
	result timeout "$(expect "$tmp/hang.log" '^booting$' \
		'^secmem-vm: timeout: the guest did not power off within 1 s, qemu killed$')
		$( [ $((SECONDS - start)) -lt 30 ] || echo "the hung guest was not killed")"

	status=0
	VM_TIMEOUT=soon run_case badtimeout sh -c 'echo ran' || status=$?
	result bad-timeout "$( [ "$status" = 2 ] || echo "status $status, expected 2")
		$( [ ! -e "$tmp/badtimeout.log" ] || echo "a log was written")
		$(grep -q 'VM_TIMEOUT=soon is not a positive number' "$tmp/badtimeout.log.out" ||
			echo "no error naming VM_TIMEOUT")"

	stdin=$tmp/stdin
	echo "typed by the user" >"$stdin"
	run_case stdin sh -c 'cat; echo read-done' <"$stdin" || true
	result batch-no-stdin "$(expect "$tmp/stdin.log" '^read-done$')
		$(reject "$tmp/stdin.log" 'typed by the user')"
} | tee "$results.tmp"
mv "$results.tmp" "$results"
passed=$(grep -c '^ok ' "$results" || true)
failed=$(grep -c '^not ok ' "$results" || true)
echo "vm-qemu-lib: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" = 5 ]
