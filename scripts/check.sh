#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: build everything and run every test, keep going past a
# failed step so one run shows all problems, then print one combined
# "N passed, N failed" line over every TAP result under build/results/.
# Each step is itself a result: a build that breaks is a failure, never a
# silently missing test.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
build=${BUILD:-$top/build}
export BUILD=$build
results=$build/results
logs=$build/logs
filter=${FILTER:-}

rm -rf "$results"
mkdir -p "$results" "$logs"
steps=()
start=$(date +%s)
: >"$logs/step-times"

# step NAME COMMAND...: run one step, its output shown and logged, its
# time recorded for the budget table (scripts/budget.sh).
step() {
	local name=$1 t0 rc secs
	shift
	t0=$(date +%s)
	echo "==> $name"
	"$@" 2>&1 | tee "$logs/step-$name.log"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - t0))
	echo "$name $secs $rc" >>"$logs/step-times"
	if [ "$rc" = 0 ]; then
		steps+=("ok step.$name")
		echo "==> $name: ok ($secs s)"
	else
		steps+=("not ok step.$name")
		echo "==> $name: FAILED with status $rc ($secs s), log: $logs/step-$name.log"
	fi
	return "$rc"
}

step kernel-debug kernel/scripts/kbuild.sh build patched debug
kernel_ok=$?
# The cache key changes with every input of a kernel (a stale kernel
# would test the wrong code) and with nothing else.
step kbuild-key tests/unit/kbuild/key-test.sh "$results/kbuild-key.tap"
step checkpatch kernel/scripts/kbuild.sh checkpatch
if [ "$kernel_ok" = 0 ]; then
	step uapi tests/uapi/check-drift.sh \
		"$(kernel/scripts/kbuild.sh path patched debug)/usr/include" \
		"$results/uapi.tap"
else
	steps+=("not ok step.uapi # the debug kernel did not build")
fi
step libsecmem make -s -C libsecmem all check-unit check-abi example-check BUILD="$build"
step libsecmem-asan make -s -C libsecmem check-asan BUILD="$build"
step daemon make -s -C daemon check BUILD="$build"
step preload make -s -C preload check BUILD="$build"
# The release kernel on its own line of the budget; make deb packages it.
step kernel-release kernel/scripts/kbuild.sh build patched release
# The Debian packages (make deb) and lintian on every .deb and .changes;
# the systemd guest below installs them with apt.
step deb scripts/deb.sh
step vm-checker make -s -C tests/vm selftest BUILD="$build"
if [ "$kernel_ok" = 0 ]; then
	step guest make -s check-guest FILTER="$filter"
else
	steps+=("not ok step.guest # the debug kernel did not build")
fi

# The pool controls, events and secmemd again on two NUMA nodes.
if [ "$kernel_ok" = 0 ]; then
	step guest-numa make -s check-guest-numa
else
	steps+=("not ok step.guest-numa # the debug kernel did not build")
fi

# Hibernation with secrets held (issue 20): a boot with a scratch disk,
# where the image is written, restored and then scanned.
if [ "$kernel_ok" = 0 ]; then
	step guest-hibernate make -s check-guest-hibernate
else
	steps+=("not ok step.guest-hibernate # the debug kernel did not build")
fi

# Kexec and kdump with secrets held (issue 20): two kernels per boot, the
# second scans what the first left it.
if [ "$kernel_ok" = 0 ]; then
	step guest-kexec make -s check-guest-kexec
else
	steps+=("not ok step.guest-kexec # the debug kernel did not build")
fi

# libsecmem's suite on the patched release kernel, where the backend must
# be the unmapped memfd. The release kernel because the suite's stress
# cases take tens of minutes under TCG on the debug one.
step guest-release make -s check-guest-release

# Debian 12 with systemd on the patched release kernel: secmemd as a unit,
# an application built with pkg-config (tests/vm/debian/). The first run
# bootstraps the image (about 2 minutes); the release kernel is the one
# guest-release built.
step systemd make -s check-systemd

# The soak's 2-minute form (docs/RELIABILITY.md, case 5; make soak runs
# 30 minutes): the same image on 4 vCPUs and 2 NUMA nodes, secrets and
# unmapped memfds checked under memory pressure while secmemd is
# reloaded and SIGKILLed. About 3.5 minutes with the boot.
step soak make -s check-soak

{
	echo "TAP version 13"
	echo "1..${#steps[@]}"
	n=0
	for s in "${steps[@]}"; do
		n=$((n + 1))
		echo "${s/ step./ $n step.}"
	done
} >"$results/steps.tap"

scripts/budget.sh "$logs" "$(($(date +%s) - start))"
echo "==> results ($(($(date +%s) - start)) s in all)"
exec scripts/summarize.sh "$results"
