#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of qemu-lib.sh's vm_run, the QEMU launch of run-vm.sh and
# debian/boot.sh, with stand-in "QEMU" commands: a guest that powers off,
# a QEMU that fails, a guest that hangs past VM_TIMEOUT, and a bad
# VM_TIMEOUT. Each case checks the log vm_run writes, which is what the
# log checkers judge. Then the VM_MEM and VM_NUMA helpers (vm_mem_mib,
# vm_numa) on good and bad values.
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
	echo "1..7"

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

	why=
	for pair in 512M=512 512m=512 2G=2048 1g=1024 768=768; do
		got=$(vm_mem_mib "${pair%=*}") || got=refused
		[ "$got" = "${pair#*=}" ] || why+="vm_mem_mib ${pair%=*}: $got, expected ${pair#*=}"$'\n'
	done
	for bad in '' 0 0M 1.5G G -1G 2T 12x; do
		! got=$(vm_mem_mib "$bad") || why+="vm_mem_mib '$bad' accepted: $got"$'\n'
		[ -z "${got:-}" ] || why+="vm_mem_mib '$bad' printed '$got'"$'\n'
	done
	result mem-sizes "$why"

	why=
	vm_numa 2 1024 1 && [ "$vm_smp" = 2 ] && [ "${#vm_numa_args[@]}" = 0 ] ||
		why+="1 node: smp '$vm_smp', ${#vm_numa_args[*]} options"$'\n'
	vm_numa 4 2048 2 &&
		[ "$vm_smp" = 4,sockets=4,cores=1,threads=1 ] &&
		[ "${vm_numa_args[*]}" = "-object memory-backend-ram,id=mem0,size=1024M -numa node,nodeid=0,memdev=mem0,cpus=0-1 -object memory-backend-ram,id=mem1,size=1024M -numa node,nodeid=1,memdev=mem1,cpus=2-3" ] ||
		why+="4 CPUs, 2 nodes: smp '$vm_smp', '${vm_numa_args[*]}'"$'\n'
	# Memory that does not divide evenly goes to the last node; a node
	# without a CPU is memory-only.
	vm_numa 1 1000 3 &&
		[ "${vm_numa_args[*]}" = "-object memory-backend-ram,id=mem0,size=333M -numa node,nodeid=0,memdev=mem0 -object memory-backend-ram,id=mem1,size=333M -numa node,nodeid=1,memdev=mem1 -object memory-backend-ram,id=mem2,size=334M -numa node,nodeid=2,memdev=mem2,cpus=0-0" ] ||
		why+="1 CPU, 3 nodes: '${vm_numa_args[*]}'"$'\n'
	for bad in 0 x 2000; do
		! vm_numa 2 1024 "$bad" || why+="vm_numa with $bad nodes accepted"$'\n'
	done
	result numa-layout "$why"
} | tee "$results.tmp"
mv "$results.tmp" "$results"
passed=$(grep -c '^ok ' "$results" || true)
failed=$(grep -c '^not ok ' "$results" || true)
echo "vm-qemu-lib: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" = 7 ]
