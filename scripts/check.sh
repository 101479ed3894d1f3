#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: build everything and run every test, keep going past a
# failed step so one run shows all problems, then print one combined
# "N passed, N failed" line over every TAP result under build/results/.
# Each step is itself a result: a build that breaks is a failure, never a
# silently missing test.
#
# A QEMU guest under TCG keeps about one host core busy, and the machine
# has two. So once the debug kernel and the guests' programs are built, the
# steps run in two lanes at once (docs/TESTING.md):
#
#   debug lane     the debug kernel's boots, one after another
#   release lane   the release kernel, the packages and the release
#                  kernel's boots
#
# with the host suites and the fragmentation boot in the release lane when
# the release kernel comes from the cache, else in the debug lane.
#
# and the soak, which keeps four vCPUs busy, runs last, alone. The kexec
# step boots both kernels: it waits for the release lane's kernel. A lane's
# steps write their output to build/logs/step-NAME.log; the console shows
# when each starts and ends, and the end of the log of a step that failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
build=${BUILD:-$top/build}
export BUILD=$build
results=$build/results
logs=$build/logs
filter=${FILTER:-}

mkdir -p "$build"
# One make check or make check-quick at a time in a build directory: each
# rewrites what the other reads.
exec 9>"$build/.check.lock"
flock -n 9 || {
	echo "check: another make check or make check-quick is running in $build" >&2
	exit 1
}
rm -rf "$results"
mkdir -p "$results" "$logs"
start=$(date +%s)
# One line per step, "NAME SECONDS STATUS", appended by both lanes (short
# appends: whole lines). steps.tap and the budget table are made from it.
times=$logs/step-times
: >"$times"
touch "$logs/.check-start"
rm -f "$logs/release-kernel.done"

# step NAME COMMAND...: run one step with its output on the console and in
# its log, and record it.
step() {
	local name=$1 t0 rc secs
	shift
	t0=$(date +%s)
	echo "==> $name"
	"$@" 2>&1 | tee "$logs/step-$name.log"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - t0))
	record "$name" "$secs" "$rc"
	return "$rc"
}

# lane_step NAME COMMAND...: the same, inside a lane: output to the log
# only, its tail shown if it failed.
lane_step() {
	local name=$1 t0 rc secs
	shift
	t0=$(date +%s)
	echo "==> $name: started"
	"$@" >"$logs/step-$name.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	[ "$rc" = 0 ] || tail -n 40 "$logs/step-$name.log" | sed "s/^/[$name] /"
	record "$name" "$secs" "$rc"
	return "$rc"
}

record() {
	echo "$1 $2 $3" >>"$times"
	if [ "$3" = 0 ]; then
		echo "==> $1: ok ($2 s)"
	else
		echo "==> $1: FAILED with status $3 ($2 s), log: $logs/step-$1.log"
	fi
}

# not_run NAME WHY: a step that could not run is a failure, with the reason.
not_run() {
	echo "$1 0 not-run:$2" >>"$times"
	echo "==> $1: not run: $2"
}

step kernel-debug kernel/scripts/kbuild.sh build patched debug
kernel_ok=$?
# The cache key changes with every input of a kernel (a stale kernel
# would test the wrong code) and with nothing else.
step kbuild-key tests/unit/kbuild/key-test.sh "$results/kbuild-key.tap"
# The guests' programs and initramfs, once, before the lanes share them:
# the lanes' make calls say PREBUILT=1, so that neither rebuilds what the
# other is reading.
guest_ok=1
if [ "$kernel_ok" = 0 ]; then
	step guest-build make -s initramfs && guest_ok=0
else
	not_run guest-build "the debug kernel did not build"
fi

# The host suites and the fragmentation boot: in the release lane when
# its kernel needs no build, else in the debug lane, which is then the
# shorter one.
host_suites() {
	lane_step checkpatch kernel/scripts/kbuild.sh checkpatch
	if [ "$kernel_ok" = 0 ]; then
		lane_step uapi tests/uapi/check-drift.sh \
			"$(kernel/scripts/kbuild.sh path patched debug)/usr/include" \
			"$results/uapi.tap"
	else
		not_run uapi "the debug kernel did not build"
	fi
	lane_step libsecmem make -s -C libsecmem all check-unit check-abi example-check BUILD="$build"
	lane_step libsecmem-asan make -s -C libsecmem check-asan BUILD="$build"
	lane_step daemon make -s -C daemon check BUILD="$build"
	lane_step preload make -s -C preload check BUILD="$build"
	lane_step vm-checker make -s -C tests/vm selftest BUILD="$build"
	# The fragmentation cases, in a debug boot sized for them.
	if [ "$guest_ok" = 0 ]; then
		lane_step guest-frag make -s check-guest-frag PREBUILT=1
	else
		not_run guest-frag "the debug kernel or the guest programs did not build"
	fi
}
if kernel/scripts/kbuild.sh ready patched release; then
	suites_lane=release
else
	suites_lane=debug
fi
echo "==> lanes: the host suites go with the $suites_lane lane"

debug_lane() {
	[ "$suites_lane" != debug ] || host_suites
	if [ "$guest_ok" != 0 ]; then
		for s in guest guest-numa guest-hibernate guest-kexec; do
			not_run "$s" "the debug kernel or the guest programs did not build"
		done
		return
	fi
	lane_step guest make -s check-guest PREBUILT=1 FILTER="$filter"
	# The pool controls, events and secmemd on two NUMA nodes.
	lane_step guest-numa make -s check-guest-numa PREBUILT=1
	# Hibernation with secrets held: the image written, restored and
	# scanned in one boot.
	lane_step guest-hibernate make -s check-guest-hibernate PREBUILT=1
	# Kexec and kdump with secrets held: the release kernel is the next
	# kernel.
	while [ ! -e "$logs/release-kernel.done" ] && kill -0 "$release_pid" 2>/dev/null; do
		sleep 5
	done
	if [ "$(cat "$logs/release-kernel.done" 2>/dev/null)" = 0 ]; then
		lane_step guest-kexec make -s check-guest-kexec PREBUILT=1
	else
		not_run guest-kexec "the release kernel did not build"
	fi
}

release_lane() {
	[ "$suites_lane" != release ] || host_suites
	local krc
	lane_step kernel-release kernel/scripts/kbuild.sh build patched release
	krc=$?
	# The Debian packages (make deb) and lintian on every .deb and
	# .changes; the systemd guest installs them with apt. On a miss in
	# the packages' cache it builds the release kernel's objects, which
	# relinks its bzImage: the kexec step waits until it is done.
	lane_step deb scripts/deb.sh
	echo "$krc" >"$logs/release-kernel.done.tmp"
	mv "$logs/release-kernel.done.tmp" "$logs/release-kernel.done"
	if [ "$krc" != 0 ]; then
		not_run guest-release "the release kernel did not build"
		not_run systemd "the release kernel did not build"
		return
	fi
	# libsecmem's suite on the release kernel, where its stress cases
	# take minutes, not tens of minutes.
	lane_step guest-release make -s check-guest-release PREBUILT=1
	# Debian 12 with systemd on the release kernel: secmemd as a unit, an
	# application built with pkg-config (tests/vm/debian/).
	lane_step systemd make -s check-systemd
}

# Each lane in a process group of its own, so that an interrupted make
# check stops both.
set -m
release_lane &
release_pid=$!
debug_lane &
debug_pid=$!
set +m
trap 'kill -TERM -- "-$release_pid" "-$debug_pid" 2>/dev/null; exit 130' INT TERM
wait "$debug_pid"
debug_rc=$?
wait "$release_pid"
release_rc=$?
trap - INT TERM
[ "$debug_rc" = 0 ] || echo "==> the debug lane exited with status $debug_rc"
[ "$release_rc" = 0 ] || echo "==> the release lane exited with status $release_rc"

# The soak's 2-minute form (docs/RELIABILITY.md, case 5): 4 vCPUs and 2
# NUMA nodes, secrets checked under memory pressure while secmemd is
# reloaded and SIGKILLed. Alone: it keeps both host cores busy.
step soak make -s check-soak

# A step that never ran (a lane that died) is a failure, not a gap.
for name in kernel-debug kbuild-key guest-build checkpatch uapi libsecmem libsecmem-asan \
	daemon preload vm-checker guest-frag guest guest-numa guest-hibernate guest-kexec \
	kernel-release deb guest-release systemd soak; do
	grep -q "^$name " "$times" || not_run "$name" "its lane ended before it"
done

{
	echo "TAP version 13"
	echo "1..$(wc -l <"$times")"
	n=0
	while read -r name _ rc; do
		n=$((n + 1))
		case $rc in
		0) echo "ok $n step.$name" ;;
		not-run:*) echo "not ok $n step.$name # ${rc#not-run:}" ;;
		*) echo "not ok $n step.$name" ;;
		esac
	done <"$times"
} >"$results/steps.tap"

scripts/budget.sh "$logs" "$(($(date +%s) - start))"
echo "==> results ($(($(date +%s) - start)) s in all)"
exec scripts/summarize.sh "$results"
