#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# secmemd as a process against a fake sysfs tree: start, apply, second
# instance, reload (good and bad), pressure from a fake PSI file, SIGKILL
# and restart, SIGTERM with on_exit=restore, the hibernation policy with
# and without its kernel knob.  No kernel feature needed:
# --no-kernel-events, so the netlink part is left to the guest tests.
#
# Usage: daemon-test.sh SECMEMD SECMEMCTL > result.tap
set -u

secmemd=$1
secmemctl=$2
tmp=$(mktemp -d /tmp/secmemd-test.XXXXXX)
sys=$tmp/sys
run=$tmp/run
conf=$tmp/secmem.conf
psi=$tmp/psi
log=$tmp/log
pid=
n=0
failed=0

cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1))
	echo "not ok $n - $1"
	sed 's/^/# /' "$log" 2>/dev/null | tail -20
}
not() { ! "$@"; }
check() { # check NAME COMMAND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

fake_tree() {
	local d n
	rm -rf "$sys"
	mkdir -p "$sys/kernel/mm/unmapped/stats"
	echo "[immediate] deferred" >"$sys/kernel/mm/unmapped/flush_on_free"
	echo "[refuse] wipe" >"$sys/kernel/mm/unmapped/hibernation"
	echo 0 >"$sys/kernel/mm/unmapped/hibernation_wiped_files"
	echo 2097152 >"$sys/kernel/mm/unmapped/pageblock_bytes"
	for n in 0 1; do
		d=$sys/devices/system/node/node$n/unmapped
		mkdir -p "$d/stats"
		for k in pool_target watermark_low watermark_high; do
			echo 0 >"$d/$k"
		done
	done
	for d in "$sys/kernel/mm/unmapped" "$sys"/devices/system/node/node*/unmapped; do
		for s in unmapped_bytes free_bytes alloc_pool alloc_convert \
			alloc_fail conversions restorations tlb_flush_convert \
			tlb_flush_mermap released_bytes; do
			echo 0 >"$d/stats/$s"
		done
	done
}

knob() { cat "$sys/devices/system/node/node$1/unmapped/$2"; }
# The daemon logs what it did after doing it: a line may follow the knob.
logged() { # logged PATTERN: in the log within 5 s
	local _
	for _ in $(seq 50); do
		grep -q "$1" "$log" && return 0
		sleep 0.1
	done
	return 1
}
hibernation() { cat "$sys/kernel/mm/unmapped/hibernation"; }

# wait_for NODE KNOB VALUE: up to 5 s
wait_for() {
	local _
	for _ in $(seq 50); do
		[ "$(knob "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	echo "# node$1 $2 = $(knob "$1" "$2"), expected $3"
	return 1
}

# write_conf POOL_TARGET ON_EXIT [HIBERNATION] (no hibernation key without)
write_conf() {
	cat >"$conf" <<EOC
[global]
${3:+hibernation = $3}
pool_target = $1
pool_min = 4M
pool_max = 256M
watermark_low = 8M
watermark_high = 64M
decay_interval = 1s
on_exit = $2
log_level = debug
[node1]
pool_target = 48M
EOC
}

start() {
	"$secmemd" -c "$conf" --sysfs-root "$sys" --runtime-dir "$run" \
		--psi-file "$psi" --no-kernel-events 2>>"$log" &
	pid=$!
}

echo "TAP version 13"
fake_tree

out=$("$secmemd" --version 2>"$log")
check "secmemd --version: the release, status 0" [ $? = 0 -a "$out" = "secmemd ${SECMEM_VERSION:?}" ]

echo "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" >"$psi"
write_conf 32M keep wipe

# The unit is skipped, not failed, where the daemon would exit 3 at once:
# its ConditionPathIsDirectory= names the directory whose absence is what
# secmemd reports as the kernel lacking the feature.
unit=$(dirname "$0")/../../../systemd/secmemd.service
cond=$(sed -n 's/^ConditionPathIsDirectory=//p' "$unit")
check "unit: ConditionPathIsDirectory= on a directory under /sys ($cond)" \
	[ "$(echo "$cond" | wc -w)" = 1 -a "${cond#/sys/}" != "$cond" ]
if [ -n "$cond" ]; then
	mv "$sys${cond#/sys}" "$tmp/moved"
	"$secmemd" -c "$conf" --sysfs-root "$sys" --runtime-dir "$run" \
		--no-kernel-events >"$log" 2>&1
	rc=$?
	mv "$tmp/moved" "$sys${cond#/sys}"
else
	rc=none
fi
check "unit: without the condition's directory, secmemd exits 3 ($rc)" [ "$rc" = 3 ]
"$secmemctl" --sysfs-root "$tmp/nothing" --proc-root /proc secrets >"$log" 2>&1
check "no pools: secmemctl secrets still works" [ $? = 0 ]

"$secmemd" -t -c "$conf" >"$log" 2>&1
check "secmemd -t accepts a good configuration" [ $? = 0 ]

printf '[global]\npool_target = 32M\npool_max = 16M\n' >"$tmp/bad.conf"
"$secmemd" -t -c "$tmp/bad.conf" >"$log" 2>&1
rc=$?
check "bad configuration: exit status 2" [ $rc = 2 ]
check "bad configuration: message names file, line and key" \
	grep -q "bad.conf:3: pool_max: pool_target 32M is above pool_max 16M" "$log"
check "bad configuration: -t says the file is refused" \
	grep -q "bad.conf: invalid configuration" "$log"

printf '[global]\npool_target = 32M\n[node1]\npool_target = 16M\n[node5]\npool_target = 16M\n' >"$tmp/node5.conf"
"$secmemd" -t -c "$tmp/node5.conf" --sysfs-root "$sys" >"$log" 2>&1
rc=$?
check "[node5] on a 2-node machine: -t fails with status 2" [ $rc = 2 ]
check "[node5] on a 2-node machine: -t names the file, line and node" \
	grep -q "node5.conf:5: \[node5\]: this machine has no node 5 with an unmapped pool (pools on nodes: 0-1)" "$log"

"$secmemd" -c "$conf" --sysfs-root "$tmp/nothing" --runtime-dir "$run" >"$log" 2>&1
check "no sysfs interface: exit status 3" [ $? = 3 ]

"$secmemd" -c "$conf" --sysfs-root "$sys" --runtime-dir "$run" >"$log" 2>&1
rc=$?
check "no netlink family on this kernel: exit status 3" [ $rc = 3 ]
check "no netlink family: clear message" grep -q 'lacks the pool events' "$log"

: >"$log"
start
check "start: node0 filled to pool_target" wait_for 0 pool_target 33554432
check "start: node1 from [node1]" wait_for 1 pool_target 50331648
check "start: watermarks" [ "$(knob 0 watermark_low)" = 8388608 -a "$(knob 0 watermark_high)" = 67108864 ]
check "start: decision logged with its reason" logged "node 0: start: configured: pool_target 0 -> 32M"
check "start: no warning about nodes for a config that fits" not grep -q "no node" "$log"
check "start: hibernation set to wipe" [ "$(hibernation)" = wipe ]
check "start: hibernation decision logged" logged "start: hibernation refuse -> wipe (configured)"
check "start: the knob is there, no hibernation warning" not grep -q "no hibernation policy" "$log"

"$secmemd" -c "$conf" --sysfs-root "$sys" --runtime-dir "$run" --no-kernel-events >"$tmp/second" 2>&1
rc=$?
check "second instance refused: exit status 4" [ $rc = 4 ]
check "second instance names the first" grep -q "another secmemd is running (pid $pid" "$tmp/second"

"$secmemctl" --sysfs-root "$sys" --runtime-dir "$run" status --json >"$tmp/json"
check "secmemctl status --json: the daemon's pid and decisions" \
	grep -q "\"daemon_pid\":$pid,.*\"reason\":\"node 0: start: configured" "$tmp/json"

printf '[global]\npool_target = banana\n' >"$conf"
kill -HUP "$pid"
sleep 0.5
check "bad reload: still running" kill -0 "$pid"
check "bad reload: error with line and key" grep -q "secmem.conf:2: pool_target: 'banana' is not a size" "$log"
check "bad reload: old configuration kept" grep -q "keeping the running configuration" "$log"
check "bad reload: pools unchanged" [ "$(knob 0 pool_target)" = 33554432 ]

# A FIFO with no writer: refused at once, the daemon does not block on it.
rm -f "$conf"
mkfifo "$conf"
kill -HUP "$pid"
sleep 0.5
check "FIFO reload: refused with its type" grep -q "secmem.conf: not a regular file (a FIFO)" "$log"
rm -f "$conf"

write_conf 40M restore wipe
kill -HUP "$pid"
check "good reload: new target applied" wait_for 0 pool_target 41943040
check "good reload: hibernation still wipe" [ "$(hibernation)" = wipe ]

echo "some avg10=50.00 avg60=0.00 avg300=0.00 total=0" >"$psi"
# 4M + (40M - 4M) / 2 = 22M at the next calm tick (1 s)
check "pressure at the tick: shrink toward pool_min" wait_for 0 pool_target 23068672
echo "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" >"$psi"

kill -KILL "$pid"
wait "$pid" 2>/dev/null
: >"$log"
start
sleep 1
check "restart after SIGKILL: running" kill -0 "$pid"
check "restart after SIGKILL: carries on from sysfs" \
	grep -q "start: configured: pool_target 22M -> 40M" "$log"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
check "SIGTERM: exit status 0" [ $rc = 0 ]
check "SIGTERM with on_exit=restore: pools emptied" [ "$(knob 0 pool_target)" = 0 -a "$(knob 1 watermark_high)" = 0 ]
check "SIGTERM with on_exit=restore: hibernation back to refuse" [ "$(hibernation)" = refuse ]

cp "$tmp/node5.conf" "$conf"
: >"$log"
start
check "[node5] on a 2-node machine: the daemon starts, node1 configured" wait_for 1 pool_target 16777216
check "[node5] on a 2-node machine: a warning names the file, line and node" \
	grep -q "warning: .*secmem.conf:5: \[node5\]: this machine has no node 5 with an unmapped pool (pools on nodes: 0-1); its settings are not used" "$log"
kill -TERM "$pid"
wait "$pid"
pid=

# A kernel without the hibernation knob: wipe configured is a warning,
# once (not again on reload), and everything else applies; not
# configured, nothing is said; on_exit=restore does not complain.
rm -f "$sys/kernel/mm/unmapped/hibernation" "$sys/kernel/mm/unmapped/hibernation_wiped_files"
write_conf 24M restore wipe
: >"$log"
start
check "no hibernation knob: the daemon starts, pools applied" wait_for 0 pool_target 25165824
check "no hibernation knob: a warning names the file and the policy" \
	grep -q "warning: .*secmem.conf: hibernation = wipe is configured, but this kernel has no hibernation policy" "$log"
kill -HUP "$pid"
# The file is rewritten only once the first reload has read it.
for _ in $(seq 50); do
	grep -q "^secmemd: reloaded" "$log" && break
	sleep 0.1
done
write_conf 26M restore wipe
kill -HUP "$pid"
wait_for 0 pool_target 27262144 >/dev/null
check "no hibernation knob: warned once, not on every reload" [ "$(grep -c "no hibernation policy" "$log")" = 1 ]
check "no hibernation knob: no file created" [ ! -e "$sys/kernel/mm/unmapped/hibernation" ]
"$secmemctl" --sysfs-root "$sys" --runtime-dir "$run" status >"$tmp/status"
check "no hibernation knob: secmemctl status says absent" grep -q "^hibernation: absent$" "$tmp/status"
kill -TERM "$pid"
wait "$pid"
pid=
check "no hibernation knob: on_exit=restore without an error" not grep -q "restoring hibernation" "$log"
write_conf 24M keep
: >"$log"
start
check "no hibernation knob, not configured: started" wait_for 0 pool_target 25165824
check "no hibernation knob, not configured: no warning" not grep -q "warning: .*hibernation" "$log"
check "no hibernation knob, not configured: started line says refuse" \
	logged "applied, flush_on_free immediate, hibernation refuse, on_exit keep"
kill -TERM "$pid"
wait "$pid"
pid=

echo "1..$n"
[ "$failed" = 0 ]
