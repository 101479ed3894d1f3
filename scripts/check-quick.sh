#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-quick: the developers' inner loop, in at most 10 minutes. Not
# CI's command (that is make check, which builds and runs everything).
#
#   - the host unit suites (libsecmem with ASan, the daemon, the preload),
#     the kernel cache key test, the log checker's self-test;
#   - make lint and checkpatch --strict;
#   - the guest programs whose sources changed since BASE (default main;
#     uncommitted and untracked files included), or those FILTER names,
#     in a boot of the debug kernel already built, without KUnit (on two
#     NUMA nodes for the programs make check runs there).
#
# It builds no kernel: with none built, or one older than the series, it
# says so and runs the guest programs on what is there only when asked
# (QUICK_STALE_KERNEL=1). A change to a shared guest header or library
# runs no guest program by itself: name them with FILTER.
#
# Environment: BUILD, FILTER (comma-separated globs), BASE (a git ref).
# Ends with "N passed, N failed" over this run's results.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
build=${BUILD:-$top/build}
export BUILD=$build
results=$build/results-quick
logs=$build/logs
filter=${FILTER:-}
# What "changed" is measured against: BASE, else the branch's upstream,
# else main. On main itself with no upstream, only what is not committed
# yet counts (BASE=HEAD~3 to look further back).
base=${BASE:-$(git rev-parse --abbrev-ref --symbolic-full-name '@{upstream}' 2>/dev/null || echo main)}
start=$(date +%s)

mkdir -p "$build"
exec 9>"$build/.check.lock"
flock -n 9 || {
	echo "check-quick: a make check or make check-quick is running in $build" >&2
	exit 1
}
rm -rf "$results"
mkdir -p "$results" "$logs"
steps=()

step() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	echo "==> $name"
	"$@" 2>&1 | tee "$logs/quick-$name.log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 0 ]; then
		steps+=("ok step.$name")
		echo "==> $name: ok ($(($(date +%s) - t0)) s)"
	else
		steps+=("not ok step.$name")
		echo "==> $name: FAILED with status $rc ($(($(date +%s) - t0)) s)"
	fi
}

# The unit suites write their TAP to BUILD/results: collect it from there.
unit_results=$build/results
mkdir -p "$unit_results"
step libsecmem make -s -C libsecmem all check-unit check-asan check-abi BUILD="$build"
step daemon make -s -C daemon check-unit check-daemon BUILD="$build"
step preload make -s -C preload check BUILD="$build"
step kbuild-key tests/unit/kbuild/key-test.sh "$results/kbuild-key.tap"
step vm-checker make -s -C tests/vm selftest BUILD="$build"
step lint make -s lint
step checkpatch kernel/scripts/kbuild.sh checkpatch
for f in unit-libsecmem unit-libsecmem-asan unit-preload vm-checker vm-qemu-lib; do
	[ ! -f "$unit_results/$f.tap" ] || cp "$unit_results/$f.tap" "$results/"
done
cp "$unit_results"/unit-daemon-*.tap "$results/" 2>/dev/null || true

# The guest programs to run: FILTER, or those whose own sources changed.
if [ -z "$filter" ]; then
	mb=$(git merge-base "$base" HEAD 2>/dev/null) || {
		echo "check-quick: no git ref '$base' to compare with: set BASE or FILTER" >&2
		mb=HEAD
	}
	changed=$({
		git diff --name-only "$mb" --
		git ls-files --others --exclude-standard
	} | sort -u)
	# A changed source file -> the guest program built from it (as
	# tests/vm/Makefile names them), if it still exists.
	names=$(echo "$changed" | while read -r f; do
		case $f in
		tests/vm/guest/kvm/*.c) n=kvm_$(basename "$f" .c) ;;
		tests/vm/guest/kvm/private_mem_conversions_no_direct_map) n=kvm_private_mem_conversions_no_direct_map ;;
		tests/vm/guest/ksft/*) n=memfd_unmapped_ksft ;;
		tests/vm/guest/*_test.c) n=$(basename "$f" .c) ;;
		daemon/*.c | daemon/*.h) n=secmemd_test ;;
		*) continue ;;
		esac
		[ ! -e "$f" ] || echo "$n"
	done | sort -u | paste -sd, -)
	filter=$names
	[ "$mb" != "$(git rev-parse HEAD)" ] ||
		echo "check-quick: comparing with $base, which is HEAD: only uncommitted changes count" \
			"(BASE=HEAD~N, or FILTER=...)"
	if echo "$changed" | grep -q '^kernel/'; then
		echo "check-quick: the series changed since $base: make kernel-debug, then this," \
			"or make check for everything"
	fi
	if echo "$changed" | grep -q -e '^tests/vm/guest/lib/' -e '^tests/vm/guest/[^/]*\.h$' \
		-e '^tests/vm/guest/init$' -e '^tests/vm/Makefile$' -e '^tests/vm/guest/bin/' \
		-e '^libsecmem/'; then
		echo "check-quick: a shared guest file or libsecmem changed: no program is picked" \
			"for it; run its users with FILTER=..., or make check"
	fi
fi

kdir=$(kernel/scripts/kbuild.sh path patched debug)
if [ -z "$filter" ]; then
	echo "==> guest: no guest program changed since $base and no FILTER: no boot"
elif [ ! -f "$kdir/arch/x86/boot/bzImage" ]; then
	echo "==> guest: no debug kernel built (make kernel-debug): $filter not run"
	steps+=("not ok step.guest # no debug kernel built")
elif [ "$(cat "$kdir/.secmem-key" 2>/dev/null)" != "$(kernel/scripts/kbuild.sh key patched debug)" ] &&
	[ "${QUICK_STALE_KERNEL:-0}" != 1 ]; then
	echo "==> guest: the debug kernel is older than kernel/ (make kernel-debug, or" \
		"QUICK_STALE_KERNEL=1 to run on it anyway): $filter not run"
	steps+=("not ok step.guest # the debug kernel is stale")
else
	# The programs make check runs on two NUMA nodes boot on two here.
	numa_list=$(make -s print-numa-guest-tests)
	one=() two=()
	IFS=, read -r -a picked <<<"$filter"
	for n in "${picked[@]}"; do
		case ",$numa_list," in
		*",$n,"*) two+=("$n") ;;
		*) one+=("$n") ;;
		esac
	done
	echo "==> guest: ${filter}"
	step guest-build make -s initramfs
	if [ ${#one[@]} -gt 0 ]; then
		step guest env VM_DIMM="${VM_DIMM-512M}" VM_TEST_TIMEOUT="${VM_TEST_TIMEOUT-420}" \
			tests/vm/run-vm.sh --kernel "$kdir/arch/x86/boot/bzImage" \
			--initrd "$build/initramfs.cpio.gz" --mode check \
			--filter "$(IFS=,; echo "${one[*]}")" --append 'no5lvl kunit.enable=0' \
			--log "$logs/check-quick-guest.log" --results "$results/guest.tap"
	fi
	if [ ${#two[@]} -gt 0 ]; then
		step guest-numa env VM_NUMA=2 VM_TEST_TIMEOUT="${VM_TEST_TIMEOUT-420}" \
			tests/vm/run-vm.sh --kernel "$kdir/arch/x86/boot/bzImage" \
			--initrd "$build/initramfs.cpio.gz" --mode check \
			--filter "$(IFS=,; echo "${two[*]}")" --append 'no5lvl kunit.enable=0' \
			--log "$logs/check-quick-guest-numa.log" --results "$results/guest-numa.tap"
	fi
fi

{
	echo "TAP version 13"
	echo "1..${#steps[@]}"
	n=0
	for s in "${steps[@]}"; do
		n=$((n + 1))
		echo "${s/ step./ $n step.}"
	done
} >"$results/steps.tap"
echo "==> check-quick: $(($(date +%s) - start)) s"
exec scripts/summarize.sh "$results"
