# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154 # conf, unit, PAGEBLOCK: scenario.sh's
#
# The soak (make soak, make check's short form; docs/RELIABILITY.md case 5),
# sourced by scenario.sh in mode soak after secmemd is installed and
# running: it uses scenario.sh's helpers (check, result, wait_for, prop,
# status_json, ...).
#
# For secmem.soak_seconds= of the kernel command line [120]:
#   load     soak-load load: secrets allocated, checked and freed through
#            libsecmem; MFD_UNMAPPED memfds resized, punched, written and
#            checked page by page (tests/vm/debian/app/soak-load.c)
#   pressure soak-load hog: anonymous memory cycled up to MemAvailable
#            minus a reserve, held, freed
#   sampler  soak-load sample: every node's pool statistics, 10 times a
#            second (the refill gap)
#   here     systemctl reload secmemd every RELOAD s with /etc/secmem.conf
#            alternating between the shipped file and a second one (other
#            sizes, flush_on_free deferred), and SIGKILL of secmemd's main
#            process every KILL s, systemd restarting it (Restart=on-failure).
#            RELOAD = min(60, D / 6) and KILL = min(300, 5 D / 12): every
#            minute and every 5 minutes in the 30-minute soak, every 20 s
#            and 50 s (2 kills) in the 2-minute one. Before the load, two
#            reloads and a kill on the idle guest: the baseline of the
#            latencies (systemctl reload to secmemd's "reloaded", SIGKILL
#            to READY=1 of the new process) that are measured under it.
#
# Then asserts: no checksum failure, no lost secret, no OOM kill, no kernel
# splat in dmesg, every reload accepted and applied, secmemd back after
# every kill (and restarted by nothing else), active at the end, the pool
# counters consistent, no unmapped memory left in use once the load is
# gone. The figures go to "soak:" lines and to the TAP diagnostics.

soak_dir=/root/soak
mkdir -p "$soak_dir"
soak_seconds=$(sed -n 's/.*\bsecmem\.soak_seconds=\([0-9]\+\).*/\1/p' /proc/cmdline)
soak_seconds=${soak_seconds:-120}
soak_reload=$((soak_seconds / 6 < 60 ? soak_seconds / 6 : 60))
soak_kill=$((soak_seconds * 5 / 12 < 300 ? soak_seconds * 5 / 12 : 300))
[ "$soak_reload" -ge 5 ] || soak_reload=5
[ "$soak_kill" -ge 10 ] || soak_kill=10

# --- figures ----------------------------------------------------------------

# fig FILE KEY: the value after KEY on the "final" line of FILE.
fig() {
	awk -v k="$2" '/ final / { for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$1"
}

vmstat() {
	awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat
}

# Warnings, BUGs and traces in the kernel log (the host's judge checks the
# console too; this is the guest's own count, for the figures).
splats() {
	dmesg | grep -cE 'WARNING:|BUG:|Oops|Call Trace:|Kernel panic|KASAN|UBSAN|soft lockup|blocked for more than'
}

ooms() {
	dmesg | grep -cE 'Out of memory|oom-kill:|invoked oom-killer'
}

# node_stat NODE FILE
node_stat() {
	cat "/sys/devices/system/node/node$1/unmapped/$2"
}

pool_nodes() {
	local d
	for d in /sys/devices/system/node/node*/unmapped; do
		d=${d%/unmapped}
		echo "${d##*/node}"
	done
}

# Per node "unmapped_bytes - (conversions - restorations) x pageblock" and
# "unmapped_bytes - free_bytes" (in use), space-separated.
pool_bases() {
	local node u f c r
	for node in $(pool_nodes); do
		u=$(node_stat "$node" stats/unmapped_bytes)
		f=$(node_stat "$node" stats/free_bytes)
		c=$(node_stat "$node" stats/conversions)
		r=$(node_stat "$node" stats/restorations)
		echo "node$node base $((u - (c - r) * PAGEBLOCK)) in_use $((u - f))"
	done
}

# The counters agree with each other and with the start: free <= unmapped
# on every node, the global files are the sums of the nodes', vmstat's
# amounts equal them, and the base of every node is what it was.
counters_consistent() {
	local node k sum g bad=0 u f
	for node in $(pool_nodes); do
		u=$(node_stat "$node" stats/unmapped_bytes)
		f=$(node_stat "$node" stats/free_bytes)
		[ "$f" -le "$u" ] || { echo "node$node: free_bytes $f > unmapped_bytes $u"; bad=1; }
	done
	for k in unmapped_bytes free_bytes alloc_pool alloc_convert alloc_fail conversions restorations released_bytes; do
		sum=0
		for node in $(pool_nodes); do
			sum=$((sum + $(node_stat "$node" "stats/$k")))
		done
		g=$(cat "/sys/kernel/mm/unmapped/stats/$k")
		[ "$g" = "$sum" ] || { echo "stats/$k: global $g, sum of the nodes $sum"; bad=1; }
	done
	sum=$(cat /sys/kernel/mm/unmapped/stats/unmapped_bytes)
	[ "$(($(vmstat nr_unmapped) * 4096))" = "$sum" ] ||
		{ echo "vmstat nr_unmapped $(vmstat nr_unmapped) pages, stats/unmapped_bytes $sum"; bad=1; }
	sum=$(cat /sys/kernel/mm/unmapped/stats/free_bytes)
	[ "$(($(vmstat nr_free_unmapped) * 4096))" = "$sum" ] ||
		{ echo "vmstat nr_free_unmapped $(vmstat nr_free_unmapped) pages, stats/free_bytes $sum"; bad=1; }
	[ "$(pool_bases | sed 's/ in_use.*//')" = "$(sed 's/ in_use.*//' "$soak_dir/bases.start")" ] ||
		{ echo "unmapped_bytes - (conversions - restorations) x pageblock moved:" \
			"$(sed 's/ in_use.*//' "$soak_dir/bases.start" | paste -sd,) -> $(pool_bases | sed 's/ in_use.*//' | paste -sd,)"; bad=1; }
	return "$bad"
}

# No unmapped memory left in use: every node's in_use as at the start.
nothing_in_use() {
	[ "$(pool_bases | sed 's/.* in_use //')" = "$(sed 's/.* in_use //' "$soak_dir/bases.start")" ]
}

# --- the disruptions -------------------------------------------------------------

# Milliseconds since boot: CLOCK_BOOTTIME, which in a guest that never
# suspends is systemd's monotonic clock.
uptime_ms() {
	awk '{ printf "%d", $1 * 1000 }' /proc/uptime
}

reloads=0
reloads_ok=0
reload_fail=()
kills=0
kills_ok=0
kill_fail=()
restart_max=0

conf_variant=A
reload_max=0
# secmemd's "reloaded FILE" lines (SYSLOG_IDENTIFIER and MESSAGE matches
# are ANDed by journalctl; -u would OR in other units' fields).
reloaded_count() {
	journalctl SYSLOG_IDENTIFIER=secmemd "MESSAGE=reloaded $conf" -o cat --no-pager 2>/dev/null | wc -l
}

reloaded_since() {
	[ "$(reloaded_count)" -gt "$1" ]
}

soak_reload_once() {
	local before want rc t0 dt
	reloads=$((reloads + 1))
	if [ "$conf_variant" = A ]; then conf_variant=B; else conf_variant=A; fi
	cp "$soak_dir/secmem.conf.$conf_variant" "$conf"
	want=$(conf_get flush_on_free)
	before=$(reloaded_count)
	t0=$(uptime_ms)
	systemctl reload "$unit" >"$soak_dir/reload.out" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && wait_for 60 flush_is "$want" && wait_for 30 reloaded_since "$before"; then
		# From the systemctl call to secmemd's "reloaded" line.
		dt=$(journalctl SYSLOG_IDENTIFIER=secmemd "MESSAGE=reloaded $conf" -o json -n 1 --no-pager |
			jq -r --argjson t0 "$t0" '(.__MONOTONIC_TIMESTAMP | tonumber) / 1000 - $t0 | floor')
		case $dt in
		'' | *[!0-9]*) dt="(unknown)" ;;
		*) [ "$dt" -gt "$reload_max" ] && reload_max=$dt ;;
		esac
		reloads_ok=$((reloads_ok + 1))
		echo "    soak: $((SECONDS - soak_t0)) s: reload $reloads (config $conf_variant, flush_on_free $want): secmemd reloaded $dt ms after systemctl reload"
	else
		reload_fail+=("reload $reloads at $((SECONDS - soak_t0)) s (config $conf_variant): exit $rc, flush_on_free $(status_json | jq -r .flush_on_free), want $want; $(head -c 200 "$soak_dir/reload.out")")
		echo "    soak: $((SECONDS - soak_t0)) s: reload $reloads FAILED (exit $rc)"
	fi
}

restarted() {
	local pid
	pid=$(prop MainPID)
	[ "$pid" != 0 ] && [ "$pid" != "$1" ] && [ "$(prop ActiveState)" = active ] &&
		[ "$(prop NRestarts)" -gt "$2" ]
}

soak_kill_once() {
	local pid nr t0 ready dt
	kills=$((kills + 1))
	pid=$(prop MainPID)
	nr=$(prop NRestarts)
	t0=$(uptime_ms)
	if [ "$pid" = 0 ] || ! kill -KILL "$pid"; then
		kill_fail+=("kill $kills at $((SECONDS - soak_t0)) s: no main process to kill (MainPID $pid, $(prop ActiveState))")
		return
	fi
	if wait_for 120 restarted "$pid" "$nr"; then
		# From the SIGKILL to READY=1 of the new process (Type=notify).
		ready=$(prop ActiveEnterTimestampMonotonic)
		dt=$((${ready:-0} / 1000 - t0))
		[ "$dt" -gt "$restart_max" ] && restart_max=$dt
		kills_ok=$((kills_ok + 1))
		echo "    soak: $((SECONDS - soak_t0)) s: kill $kills: SIGKILL to pid $pid, systemd restarted secmemd as pid $(prop MainPID) (NRestarts $((nr + 1))), ready $dt ms after the kill"
	else
		kill_fail+=("kill $kills at $((SECONDS - soak_t0)) s: pid $pid killed, secmemd not back in 120 s: MainPID $(prop MainPID), $(prop ActiveState)/$(prop SubState), NRestarts $(prop NRestarts)")
		echo "    soak: $((SECONDS - soak_t0)) s: kill $kills: secmemd NOT restarted"
	fi
}

# --- the run ------------------------------------------------------------------------

heading "3. soak: build the load (libsecmem, pkg-config)"
nodes_n=$(pool_nodes | wc -l)
echo "  $(nproc) CPUs, $nodes_n node(s) with pools, $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo); $soak_seconds s of load, reload every $soak_reload s, SIGKILL every $soak_kill s"
check setup "the guest has 4 CPUs and 2 NUMA nodes with pools ($(nproc) CPUs, $nodes_n nodes)" \
	[ "$(nproc)" = 4 ] && [ "$nodes_n" = 2 ]
cp /usr/local/src/secmem-demo/soak-load.c "$soak_dir/"
# shellcheck disable=SC2046 # pkg-config prints a list of flags
show cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -o "$soak_dir/soak-load" "$soak_dir/soak-load.c" \
	$(pkg-config --cflags --libs libsecmem)
result $? build "soak-load.c built with cc -Wall -Wextra -Werror \$(pkg-config --cflags --libs libsecmem)"

# The two configurations reload alternates between: the shipped one (A)
# and one with other pool sizes and the other flush_on_free (B).
cp "$conf" "$soak_dir/secmem.conf.A"
sed -e 's/^pool_target = .*/pool_target = 64M/' -e 's/^watermark_low = .*/watermark_low = 16M/' \
	-e 's/^watermark_high = .*/watermark_high = 128M/' -e 's/^flush_on_free = .*/flush_on_free = deferred/' \
	"$conf" >"$soak_dir/secmem.conf.B"
echo "  config B: $(grep -E '^(pool_target|watermark_low|watermark_high|flush_on_free) ' "$soak_dir/secmem.conf.B" | paste -sd, | sed 's/,/, /g')"
check configs "the two configurations differ in pool sizes and flush_on_free, and B passes secmemd --test-config" \
	sh -c "! cmp -s $soak_dir/secmem.conf.A $soak_dir/secmem.conf.B &&
		[ \"\$(grep -c '^flush_on_free = deferred' $soak_dir/secmem.conf.B)\" = 1 ] &&
		secmemd --test-config -c $soak_dir/secmem.conf.B"
wait_for 60 pools_filled

# The same disruptions on the idle guest first: what a reload and a
# restart cost without the load, to compare with the figures under it.
# They count with the others (and are asserted with them).
nr_start=$(prop NRestarts)
soak_t0=$SECONDS
echo "  the idle guest (A -> B -> A, one kill):"
soak_reload_once
soak_reload_once
soak_kill_once
idle_reload=$reload_max
idle_restart=$restart_max
reload_max=0
restart_max=0
wait_for 60 pools_filled

heading "4. soak: $soak_seconds s of load, memory pressure, reloads and kills"
oom_start=$(vmstat oom_kill)
ooms_start=$(ooms)
splats_start=$(splats)
pool_bases >"$soak_dir/bases.start"
sed 's/^/    start: /' "$soak_dir/bases.start"
"$soak_dir/soak-load" sample --interval-ms 100 >"$soak_dir/sample.out" 2>&1 &
sample_pid=$!
"$soak_dir/soak-load" load --threads 2 --memfd-threads 2 --progress 30 >"$soak_dir/load.out" 2>&1 &
load_pid=$!
"$soak_dir/soak-load" hog --reserve-mb 256 >"$soak_dir/hog.out" 2>&1 &
hog_pid=$!
soak_t0=$SECONDS
next_reload=$((soak_t0 + soak_reload))
next_kill=$((soak_t0 + soak_kill))
shown=0
while [ $((SECONDS - soak_t0)) -lt "$soak_seconds" ]; do
	sleep 1
	kill -0 "$load_pid" 2>/dev/null || break
	if [ "$SECONDS" -ge "$next_kill" ]; then
		soak_kill_once
		next_kill=$((next_kill + soak_kill))
	fi
	if [ "$SECONDS" -ge "$next_reload" ] && [ $((SECONDS - soak_t0)) -lt "$soak_seconds" ]; then
		soak_reload_once
		next_reload=$((next_reload + soak_reload))
	fi
	# The load's progress lines, as they come.
	n_lines=$(wc -l <"$soak_dir/load.out")
	if [ "$n_lines" -gt "$shown" ]; then
		sed -n "$((shown + 1)),${n_lines}p" "$soak_dir/load.out" | indent
		shown=$n_lines
	fi
done
soak_elapsed=$((SECONDS - soak_t0))
kill -TERM "$hog_pid" 2>/dev/null
wait "$hog_pid"
hog_rc=$?
kill -TERM "$load_pid" 2>/dev/null
wait "$load_pid"
load_rc=$?
sed -n "$((shown + 1)),\$p" "$soak_dir/load.out" | indent
# The pools settle (the worker refills, secmemd may move targets) before
# the sampler's last reading.
sleep 3
kill -TERM "$sample_pid" 2>/dev/null
wait "$sample_pid"
sample_rc=$?
indent <"$soak_dir/hog.out"
indent <"$soak_dir/sample.out"

heading "5. soak: the results"
ops=$(fig "$soak_dir/load.out" ops)
cks=$(fig "$soak_dir/load.out" checksum_failures)
lost=$(fig "$soak_dir/load.out" lost_secrets)
secrets=$(fig "$soak_dir/load.out" secrets_allocated)
freed=$(fig "$soak_dir/load.out" secrets_freed)
memfd_ops=$(fig "$soak_dir/load.out" memfd_ops)
pages=$(fig "$soak_dir/load.out" pages_checked)
afail=$(fig "$soak_dir/load.out" alloc_failures)
enomem=$(fig "$soak_dir/load.out" memfd_enomem)
bursts=$(fig "$soak_dir/load.out" bursts)
burst_mib=$(fig "$soak_dir/load.out" burst_mib)
a_pool=$(fig "$soak_dir/sample.out" alloc_pool)
a_conv=$(fig "$soak_dir/sample.out" alloc_convert)
a_fail=$(fig "$soak_dir/sample.out" alloc_fail)
gap=$(fig "$soak_dir/sample.out" max_gap_ms)
gap_p=$(fig "$soak_dir/sample.out" max_gap_pressure_ms)
stretches=$(fig "$soak_dir/sample.out" starved_stretches)
psamples=$(fig "$soak_dir/sample.out" pressure_samples)
samples=$(fig "$soak_dir/sample.out" samples)
cycles=$(fig "$soak_dir/hog.out" cycles)
min_avail=$(fig "$soak_dir/hog.out" min_available_mib)
oom_kills=$(($(vmstat oom_kill) - oom_start))
oom_lines=$(($(ooms) - ooms_start))
splat_n=$(($(splats) - splats_start))
hit=none
[ -n "$a_pool" ] && [ $((a_pool + a_conv)) -gt 0 ] &&
	hit=$(awk -v p="$a_pool" -v c="$a_conv" 'BEGIN { printf "%.2f%%", 100 * p / (p + c) }')

result "$load_rc" load "soak-load load exited 0 after $soak_elapsed s (status $load_rc): $ops operations ($((${ops:-0} / (soak_elapsed > 0 ? soak_elapsed : 1)))/s), $secrets secrets allocated and $freed freed, each checked, $memfd_ops memfd operations, $pages pages checked"
check checksums "checksum failures: ${cks:-none reported} (must be 0)" [ "${cks:-x}" = 0 ]
check lost "lost secrets: ${lost:-none reported} (must be 0); every allocated secret checked and freed ($secrets allocated, $freed freed)" \
	[ "${lost:-x}" = 0 ] && [ -n "$secrets" ] && [ "$secrets" = "$freed" ] && [ "$secrets" -gt 0 ]
check ooms "OOM kills: $oom_kills (vmstat oom_kill), $oom_lines OOM lines in dmesg (must be 0)" \
	[ "$oom_kills" = 0 ] && [ "$oom_lines" = 0 ]
check splats "kernel splats in dmesg: $splat_n (must be 0)" [ "$splat_n" = 0 ]
check pressure "the hog reached memory pressure: $cycles cycles, MemAvailable down to $min_avail MiB, $psamples of $samples samples under 25% (status $hog_rc)" \
	[ "$hog_rc" = 0 ] && [ "${cycles:-0}" -gt 0 ] && [ "${psamples:-0}" -gt 0 ]
result "$sample_rc" sampler "pool sampler: $samples samples; hit rate $hit ($a_pool from the pool, $a_conv converting, $a_fail failed); max time without a refill with the pool below watermark_low ${gap} ms (${gap_p} ms under memory pressure, $stretches stretches)"
st=0
[ "$reloads" -gt 0 ] && [ "$reloads_ok" = "$reloads" ] || st=1
result "$st" reloads "reloads: $reloads_ok of $reloads accepted and applied (systemctl reload 0, flush_on_free as configured, \"reloaded\" in the journal; at most $reload_max ms after systemctl reload under the load, $idle_reload ms idle)" \
	"${reload_fail[@]}"
st=0
[ "$kills" -gt 0 ] && [ "$kills_ok" = "$kills" ] || st=1
result "$st" kills "SIGKILLs: secmemd back after $kills_ok of $kills (ready again at most $restart_max ms after the kill under the load, $idle_restart ms idle)" "${kill_fail[@]}"
nr_end=$(prop NRestarts)
check restarts "systemd restarted secmemd only for the kills: NRestarts $nr_start -> $nr_end, $kills kills (no watchdog or crash restart)" \
	[ "$((nr_end - nr_start))" = "$kills" ]
state="$(prop ActiveState)/$(prop SubState)"
check active "secmemd active at the end ($state), STATUS=\"$(prop StatusText)\"" [ "$state" = active/running ]
wait_for 30 nothing_in_use
pool_bases | sed 's/^/    end: /'
check no-leak "no unmapped memory left in use with the load gone (every node's unmapped_bytes - free_bytes as at the start)" \
	nothing_in_use
wait_for 30 counters_consistent >/dev/null
counters_consistent >"$soak_dir/counters.out"
result $? counters "pool counters consistent: free <= unmapped, global = sum of the nodes, = vmstat, unmapped - (conversions - restorations) x pageblock unchanged" \
	"$(cat "$soak_dir/counters.out")"
show secmemctl status

summary_line() {
	printf '  %-22s %s\n' "$1" "$2"
}
heading "summary"
summary_line "setup" "$(nproc) CPUs, $nodes_n NUMA nodes, $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo), $soak_elapsed s"
summary_line "load" "$ops operations ($((${ops:-0} / (soak_elapsed > 0 ? soak_elapsed : 1)))/s): $secrets secrets, $memfd_ops memfd operations ($bursts bursts, $burst_mib MiB), $pages pages checked; $afail allocations refused, $enomem memfd ENOMEM"
summary_line "integrity" "$cks checksum failures, $lost lost secrets"
summary_line "memory" "$oom_kills OOM kills, $cycles hog cycles, MemAvailable down to $min_avail MiB"
summary_line "kernel" "$splat_n splats in dmesg"
summary_line "pool" "hit rate $hit ($a_pool pool, $a_conv converting, $a_fail failed); max refill gap $gap ms, $gap_p ms under pressure"
summary_line "secmemd" "$reloads_ok/$reloads reloads (within $reload_max ms; idle $idle_reload ms), $kills_ok/$kills kills survived (ready again within $restart_max ms; idle $idle_restart ms), $(prop ActiveState) at the end"
echo "soak: ops $ops checksum_failures $cks lost_secrets $lost oom_kills $oom_kills splats $splat_n hit_rate $hit max_gap_ms $gap max_gap_pressure_ms $gap_p reloads $reloads_ok/$reloads reload_max_ms $reload_max kills $kills_ok/$kills restart_max_ms $restart_max seconds $soak_elapsed"
