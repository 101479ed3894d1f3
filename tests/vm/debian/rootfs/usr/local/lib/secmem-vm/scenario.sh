#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The secmem end-to-end scenario on a Debian 12 guest with systemd, run by
# secmem-scenario@MODE.service (tests/vm/debian/README in tests/vm/README.md):
#
#   demo   apt-get install secmemd libsecmem-dev secmem-run from the local
#          repository (make deb), which enables and starts secmemd; pools
#          from /etc/secmem.conf; an application built with pkg-config
#          stores a key, /proc/kcore does not show it; a changed config
#          applied by systemctl reload
#   check  the same, then a bad config on reload, systemctl stop with
#          on_exit=keep and on_exit=restore, systemd-analyze, and the
#          package lifecycle (lifecycle.sh): upgrade, upgrade with a
#          broken config, remove, purge, install on a kernel without
#          the pools, reinstall
#   soak   the install, then the soak (soak.sh: make soak, and make
#          check's 2-minute form): load through libsecmem and unmapped
#          memfds, memory pressure, reloads and SIGKILLs of secmemd
#
# Every assertion prints one TAP line, "ok N ID - what" or "not ok N ID -
# what", at the start of a line; everything else is indented. The host
# (tests/vm/debian/judge.py) reads them between "secmem-systemd: start" and
# "secmem-systemd: done". Exit status 0 when every assertion passed.
set -u
export LC_ALL=C.UTF-8 SYSTEMD_COLORS=0 SYSTEMD_PAGER=cat COLUMNS=110
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

mode=${1:-demo}
conf=/etc/secmem.conf
unit=secmemd.service
work=/root/secmem-demo
mkdir -p "$work"
n=0
failed=0
failures=()
t_start=$SECONDS

# --- output -------------------------------------------------------------------

indent() {
	sed -u 's/^/    /'
}

heading() {
	echo
	echo "== $* ($((SECONDS - t_start)) s)"
}

# Show a command as typed, then its output, indented.
show() {
	echo "  # $*"
	"$@" 2>&1 | indent
	return "${PIPESTATUS[0]}"
}

# result STATUS ID DESCRIPTION [DIAGNOSTIC...]: STATUS 0 is ok.
result() {
	local status=$1 id=$2 desc=$3
	shift 3
	n=$((n + 1))
	if [ "$status" = 0 ]; then
		echo "ok $n $id - $desc"
	else
		echo "not ok $n $id - $desc"
		failed=$((failed + 1))
		failures+=("$id")
	fi
	local d
	for d in "$@"; do
		[ -n "$d" ] && echo "    # $d"
	done
	return "$status"
}

# check ID DESCRIPTION COMMAND...: ok when COMMAND succeeds.
check() {
	local id=$1 desc=$2
	shift 2
	if "$@"; then
		result 0 "$id" "$desc"
	else
		result 1 "$id" "$desc" "failed: $*"
	fi
}

# wait_for SECONDS COMMAND...: poll twice a second until COMMAND succeeds.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.5
	done
}

# The plan, the verdict, and the exit status: 0 when every assertion passed.
finish() {
	echo "1..$n"
	echo "secmem-systemd: $((n - failed)) of $n assertions passed in $((SECONDS - t_start)) s"
	if [ "$failed" = 0 ]; then
		echo "secmem-systemd: result: pass"
	else
		echo "secmem-systemd: result: FAIL (${failures[*]})"
	fi
	echo "secmem-systemd: done"
	[ "$failed" = 0 ]
}

# --- sizes and the configuration ---------------------------------------------

PAGEBLOCK=$(cat /sys/kernel/mm/unmapped/pageblock_bytes 2>/dev/null || echo 2097152)

bytes() {
	local v=${1^^}
	case $v in
	*K) echo $((${v%K} << 10)) ;;
	*M) echo $((${v%M} << 20)) ;;
	*G) echo $((${v%G} << 30)) ;;
	*T) echo $((${v%T} << 40)) ;;
	*) echo "$v" ;;
	esac
}

# Rounded up to whole pageblocks, as the kernel reads the knobs back.
blocks() {
	echo $((($1 + PAGEBLOCK - 1) / PAGEBLOCK * PAGEBLOCK))
}

# conf_get KEY: the value in [global] of the config file.
conf_get() {
	awk -v key="$1" '
		/^[[:space:]]*\[/ { sect = $0; gsub(/[][[:space:]]/, "", sect) }
		sect == "global" && $0 ~ "^[[:space:]]*" key "[[:space:]]*=" {
			sub(/^[^=]*=[[:space:]]*/, ""); sub(/[[:space:]]*([#;].*)?$/, ""); print; exit
		}' "$conf"
}

# conf_set KEY VALUE: change KEY in [global].
conf_set() {
	sed -i "s|^\([[:space:]]*$1[[:space:]]*=\).*|\1 $2|" "$conf"
}

# What the daemon must write for the current [global] section: the
# policy's "low = min(low, target), high = max(high, target)", rounded.
expect_from_conf() {
	local t l h
	t=$(bytes "$(conf_get pool_target)")
	l=$(bytes "$(conf_get watermark_low)")
	h=$(bytes "$(conf_get watermark_high)")
	[ "$l" -le "$t" ] || l=$t
	[ "$h" -ge "$t" ] || h=$t
	exp_target=$(blocks "$t")
	exp_low=$(blocks "$l")
	exp_high=$(blocks "$h")
	exp_flush=$(conf_get flush_on_free)
}

status_json() {
	secmemctl status --json
}

# knobs_are TARGET LOW HIGH: every node's knobs, as read from sysfs.
knobs_are() {
	status_json | jq -e --argjson t "$1" --argjson l "$2" --argjson h "$3" \
		'(.nodes | length > 0) and all(.nodes[]; .pool_target == $t and
		 .watermark_low == $l and .watermark_high == $h)' >/dev/null
}

# One line per node, sizes as 32M: "node0 target 32M low 8M high 64M free 32M".
knobs_now() {
	local node t l h f
	status_json | jq -r '.nodes[] | "\(.node) \(.pool_target) \(.watermark_low) \(.watermark_high) \(.stats.free_bytes)"' |
		while read -r node t l h f; do
			echo "node$node target $(hsize "$t") low $(hsize "$l") high $(hsize "$h") free $(hsize "$f")"
		done | paste -sd ';' - | sed 's/;/; /g'
}

# 33554432 -> 32M, as secmemctl prints sizes.
hsize() {
	local v=$1 u d
	for u in G M K; do
		case $u in G) d=$((1 << 30)) ;; M) d=$((1 << 20)) ;; K) d=1024 ;; esac
		if [ "$v" -gt 0 ] && [ $((v % d)) = 0 ]; then
			echo "$((v / d))$u"
			return
		fi
	done
	echo "$v"
}

pools_filled() {
	status_json | jq -e 'all(.nodes[]; .pool_target > 0 and .stats.free_bytes >= .pool_target)' >/dev/null
}

pools_empty() {
	status_json | jq -e --argjson pb "$PAGEBLOCK" \
		'all(.nodes[]; .stats.free_bytes < $pb)' >/dev/null
}

flush_is() {
	[ "$(status_json | jq -r .flush_on_free)" = "$1" ]
}

nodes() {
	status_json | jq -r '.nodes[].node'
}

# --- packages ---------------------------------------------------------------

# pkgs_installed PKG...: every PKG is "install ok installed".
pkgs_installed() {
	local p
	for p in "$@"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || return 1
	done
}

pkg_versions() {
	dpkg-query -W -f='${Package} ${Version}\n' "$@" 2>/dev/null | paste -sd, - | sed 's/,/, /g'
}

# --- systemd and the journal -------------------------------------------------

prop() {
	systemctl show -P "$1" "$unit"
}

# journal JQ_FILTER: secmemd's journal as one JSON array, filtered.
journal() {
	journalctl -u "$unit" -o json --no-pager 2>/dev/null | jq -s "$1"
}

journal_match() {
	[ "$(journal "any(.[]; $1)")" = true ]
}

not() {
	! "$@"
}

# journal_has SECONDS JQ_CONDITION: some entry satisfies the condition
# (journald writes asynchronously: poll).
journal_has() {
	wait_for "$1" journal_match "$2"
}

show_journal() {
	journalctl -u "$unit" -o short-monotonic --no-pager -n "${1:-20}" 2>&1 | indent
}

# --- the scenario --------------------------------------------------------------

echo "secmem-systemd: start $mode"
echo "Debian $(cat /etc/debian_version), systemd $(systemctl --version | awk 'NR == 1 { print $2 }'), Linux $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"

heading "1. the kernel"
check kernel.pool-sysfs "the kernel has the unmapped pool controls (/sys/kernel/mm/unmapped)" \
	test -d /sys/kernel/mm/unmapped
kpkg=$(dpkg-query -S "/boot/vmlinuz-$(uname -r)" 2>/dev/null | cut -d: -f1)
check kernel.packaged "the running kernel $(uname -r) is the one of package ${kpkg:-none} (installed with apt)" \
	[ "$kpkg" = "linux-image-$(uname -r)" ] && [ "${kpkg%-secmem}" != "$kpkg" ]
grep '^unmapped_' /proc/vmstat | head -4 | indent

heading "2. apt-get install secmemd libsecmem-dev secmem-run"
pkgs=(secmemd libsecmem-dev secmem-run)
show apt-get update
result $? apt.update "apt-get update: the local secmem repository ($(grep -h '^deb ' /etc/apt/sources.list.d/*.list | head -1))"
t0=$SECONDS
echo "  # apt-get install -y ${pkgs[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y "${pkgs[@]}" >"$work/apt-install.log" 2>&1
rc=$?
indent <"$work/apt-install.log"
result "$rc" apt.install "apt-get install ${pkgs[*]} returned $rc after $((SECONDS - t0)) s"
check apt.installed "dpkg: libsecmem0 libsecmem-dev secmemd secmem-run installed ($(pkg_versions libsecmem0 libsecmem-dev secmemd secmem-run))" \
	pkgs_installed libsecmem0 libsecmem-dev secmemd secmem-run
check apt.resolved "apt resolved libsecmem0 as a dependency (apt-mark showauto)" \
	sh -c 'apt-mark showauto | grep -qx libsecmem0'
cp "$conf" "$work/secmem.conf.shipped"
check apt.conffile "dpkg: /etc/secmem.conf is a conffile of secmemd" \
	sh -c "dpkg-query -W -f='\${Conffiles}' secmemd | grep -q '^ /etc/secmem.conf '"
check unit.enabled "secmemd.service is enabled (by the package)" [ "$(systemctl is-enabled "$unit")" = enabled ]
state="Type=$(prop Type) ActiveState=$(prop ActiveState) SubState=$(prop SubState)"
check unit.active "secmemd.service is active (started by the package): $state" \
	[ "$state" = "Type=notify ActiveState=active SubState=running" ]
# Type=notify: "Started" (MESSAGE_ID 39f53479...) is logged when READY=1
# arrives, and STATUS= is what secmemd sent after it.
check unit.ready "readiness: systemd logged \"Started\" (job done) after READY=1; STATUS=\"$(prop StatusText)\"" \
	journal_has 10 '.MESSAGE_ID == "39f53479d3a045ac8e11786248231fbf" and .JOB_RESULT == "done"'
show systemctl status "$unit" --no-pager -n 0

if [ "$mode" = soak ]; then
	# shellcheck source=/dev/null
	. /usr/local/lib/secmem-vm/soak.sh
	finish
	exit
fi

heading "3. the pools, from $conf"
expect_from_conf
grep -E '^(pool_target|pool_min|pool_max|watermark_low|watermark_high|flush_on_free|on_exit) ' "$conf" | indent
# secmemd writes the knobs before READY=1; the kernel's worker then fills.
check pool.config "pool sizes equal the config: pool_target $exp_target, watermark_low $exp_low, watermark_high $exp_high" \
	knobs_are "$exp_target" "$exp_low" "$exp_high" && wait_for 60 pools_filled
check pool.filled "every node's pool filled to its target (pool_target > 0, free >= pool_target)" pools_filled
check pool.flush "flush_on_free is $exp_flush, as configured" flush_is "$exp_flush"
show secmemctl status

heading "4. secmemd in the journal (structured fields)"
show_journal 8
check journal.started "journal: \"started: $conf applied\" from SYSLOG_IDENTIFIER=secmemd, PRIORITY=6" \
	journal_has 10 '.SYSLOG_IDENTIFIER == "secmemd" and .PRIORITY == "6" and (.MESSAGE | startswith("started: '"$conf"' applied"))'
for node in $(nodes); do
	check "journal.decision-node$node" "journal: decision for node $node with SECMEM_EVENT=start SECMEM_CAUSE=apply SECMEM_POOL_TARGET=$exp_target SECMEM_WATERMARK_LOW=$exp_low SECMEM_WATERMARK_HIGH=$exp_high" \
		journal_has 10 ".SECMEM_EVENT == \"start\" and .SECMEM_CAUSE == \"apply\" and .SECMEM_NODE == \"$node\" and .SECMEM_POOL_TARGET == \"$exp_target\" and .SECMEM_WATERMARK_LOW == \"$exp_low\" and .SECMEM_WATERMARK_HIGH == \"$exp_high\" and .PRIORITY == \"5\""
done
echo "  # journalctl -u secmemd -o json | jq 'select(.SECMEM_EVENT) | {MESSAGE, SECMEM_...}' | head -1"
journal '[.[] | select(.SECMEM_EVENT and .SECMEM_NODE == "0")][0] // empty | with_entries(select(.key | test("^(MESSAGE|PRIORITY|SECMEM_.*)$")))' |
	jq -c . | indent

heading "5. an application linked with libsecmem"
mkdir -p "$work"
cp /usr/local/src/secmem-demo/* "$work/"
cd "$work" || exit 1
echo "  # pkg-config --cflags --libs libsecmem"
pc=$(pkg-config --cflags --libs libsecmem 2>&1)
echo "$pc" | indent
t0=$SECONDS
# shellcheck disable=SC2086 # $pc is a list of flags
show cc -O2 -Wall -o hello hello.c $pc && show ./hello
rc=$?
result "$rc" app.hello "docs/example/hello.c built with pkg-config and run (status $rc)"
# shellcheck disable=SC2086
show cc -O2 -Wall -o secret-demo secret-demo.c kcore.c $pc
rc=$?
result "$rc" app.build "secret-demo.c built with cc \$(pkg-config --cflags --libs libsecmem) (status $rc, $((SECONDS - t0)) s for both)"
before=$(status_json | jq '.total.alloc_pool')
./secret-demo >"$work/out" 2>&1
rc=$?
indent <"$work/out"
after=$(status_json | jq '.total.alloc_pool')
lib=$(readlink -f "$(ldd ./secret-demo | awk '/libsecmem/ { print $3 }')")
check app.linked "secret-demo runs with the packaged library ($lib, from $(dpkg-query -S "$lib" 2>/dev/null | cut -d: -f1))" \
	[ "$(dpkg-query -S "$lib" 2>/dev/null | cut -d: -f1)" = libsecmem0 ]
check app.backend "secmem_backend() is the unmapped memfd" grep -qx 'secret-demo: backend unmapped-memfd' "$work/out"
check app.key-absent "root scan of /proc/kcore: the key is absent from kernel RAM" \
	grep -q '^secret-demo: key absent' "$work/out"
check app.control-present "root scan of /proc/kcore: the control copy in ordinary memory is present" \
	grep -q '^secret-demo: control found' "$work/out"
check app.from-pool "its memory came from the pool (alloc_pool $before -> $after)" [ "$after" -gt "$before" ]
result "$rc" app.exit "secret-demo exited with status $rc"
cd / || exit 1

heading "5b. unmodified programs under secmem-run: openssl s_server, ssh-agent, minisign"
# shellcheck source=/dev/null
. /usr/local/lib/secmem-vm/realprogs.sh

heading "6. change $conf, systemctl reload secmemd"
old_target=$exp_target
new_target=48M
[ "$(conf_get pool_target)" = 48M ] && new_target=40M
echo "  # sed -i 's/^pool_target = .*/pool_target = $new_target/' $conf"
conf_set pool_target "$new_target"
expect_from_conf
pid_before=$(prop MainPID)
show systemctl reload "$unit"
result $? reload.command "systemctl reload secmemd"
reload_target=$exp_target
wait_for 20 knobs_are "$exp_target" "$exp_low" "$exp_high"
check reload.applied "reload applied: pool_target $old_target -> $exp_target on every node" \
	knobs_are "$exp_target" "$exp_low" "$exp_high" && wait_for 60 pools_filled
check reload.filled "every node's pool filled to the new target" pools_filled
check reload.same-process "the same process (pid $pid_before), still active" \
	[ "$(prop MainPID)/$(prop ActiveState)" = "$pid_before/active" ]
check reload.journal "journal: \"reloaded $conf\" from secmemd" \
	journal_has 10 '.SYSLOG_IDENTIFIER == "secmemd" and .MESSAGE == "reloaded '"$conf"'"'
for node in $(nodes); do
	check "reload.decision-node$node" "journal: decision for node $node with SECMEM_EVENT=reload SECMEM_POOL_TARGET=$exp_target" \
		journal_has 10 ".SECMEM_EVENT == \"reload\" and .SECMEM_NODE == \"$node\" and .SECMEM_POOL_TARGET == \"$exp_target\""
done
show secmemctl status

if [ "$mode" = check ]; then
	heading "7. a bad config on reload is refused, the old pool stays"
	cp "$conf" "$work/secmem.conf.good"
	good_target=$exp_target good_low=$exp_low good_high=$exp_high
	echo "  # sed -i 's/^pool_target = .*/pool_target = plenty/' $conf"
	conf_set pool_target plenty
	show systemctl reload "$unit"
	rc=$?
	check bad.command "systemctl reload secmemd fails (exit status $rc): ExecReload= checks the file first" \
		[ "$rc" != 0 ]
	check bad.rejected "journal: \"$conf: invalid configuration\" from secmemd -t, PRIORITY=3" \
		journal_has 20 '.MESSAGE == "'"$conf"': invalid configuration" and .PRIORITY == "3"'
	check bad.error-visible "journal: the error names the file, line and key ($conf:N pool_target: ...), PRIORITY=3" \
		journal_has 10 '.PRIORITY == "3" and (.MESSAGE | test("^'"$conf"':[0-9]+: ?pool_target"))'
	journalctl -u "$unit" -p err -o short-monotonic --no-pager -n 4 | indent
	check bad.not-signalled "the daemon was not signalled: no \"reload failed\" from it" \
		not journal_match '.MESSAGE == "reload failed: keeping the running configuration"'
	check bad.old-pool "the old pool is kept: pool_target $good_target, low $good_low, high $good_high" \
		knobs_are "$good_target" "$good_low" "$good_high"
	check bad.still-running "secmemd still active, same pid, no restart; STATUS=\"$(prop StatusText)\"" \
		[ "$(prop ActiveState)/$(prop MainPID)/$(prop NRestarts)" = "active/$pid_before/0" ]
	cp "$work/secmem.conf.good" "$conf"

	heading "8. systemctl stop with on_exit = $(conf_get on_exit): the pools stay as they are"
	check stop.keep-config "the shipped config says on_exit = keep" [ "$(conf_get on_exit)" = keep ]
	show systemctl stop "$unit"
	result $? stop.command "systemctl stop secmemd"
	check stop.clean "stopped cleanly: $(prop ActiveState), Result=$(prop Result), exit status $(prop ExecMainStatus)" \
		[ "$(prop ActiveState)/$(prop Result)/$(prop ExecMainStatus)" = inactive/success/0 ]
	check stop.journal "journal: \"Terminated: stopping\"" \
		journal_has 10 '.SYSLOG_IDENTIFIER == "secmemd" and .MESSAGE == "Terminated: stopping"'
	check stop.keep-knobs "on_exit=keep: every knob unchanged ($(knobs_now))" \
		knobs_are "$good_target" "$good_low" "$good_high"
	check stop.keep-flush "on_exit=keep: flush_on_free unchanged ($exp_flush)" flush_is "$exp_flush"
	check stop.not-running "secmemctl status: secmemd not running" \
		sh -c 'secmemctl status --json | jq -e ".daemon_pid == null" >/dev/null'
	show secmemctl status

	heading "9. systemctl stop with on_exit = restore: the kernel's defaults"
	echo "  # sed -i -e 's/^on_exit = .*/on_exit = restore/' -e 's/^flush_on_free = .*/flush_on_free = deferred/' $conf"
	conf_set on_exit restore
	conf_set flush_on_free deferred
	show systemctl start "$unit"
	result $? restore.start "systemctl start secmemd (on_exit = restore, flush_on_free = deferred)"
	wait_for 10 flush_is deferred
	check restore.deferred "flush_on_free is deferred while it runs" flush_is deferred
	show systemctl stop "$unit"
	result $? restore.stop "systemctl stop secmemd"
	check restore.clean "stopped cleanly: $(prop ActiveState), Result=$(prop Result), exit status $(prop ExecMainStatus)" \
		[ "$(prop ActiveState)/$(prop Result)/$(prop ExecMainStatus)" = inactive/success/0 ]
	check restore.knobs "on_exit=restore: pool_target, watermark_low, watermark_high 0 on every node" \
		knobs_are 0 0 0
	check restore.flush "on_exit=restore: flush_on_free back to immediate" flush_is immediate
	wait_for 60 pools_empty
	check restore.drained "the kernel gave the pools back: free below one pageblock ($(knobs_now))" pools_empty
	check restore.journal "journal: \"on_exit=restore: pools released, kernel defaults restored\"" \
		journal_has 10 '.MESSAGE == "on_exit=restore: pools released, kernel defaults restored" and .PRIORITY == "5"'
	show secmemctl status
	cp "$work/secmem.conf.good" "$conf"

	heading "10. systemd-analyze"
	show systemd-analyze verify --man=no "$unit"
	result $? analyze.verify "systemd-analyze verify --man=no secmemd.service"
	# (--man=no: the guest has no man-db; the pages themselves:)
	check analyze.man "the unit's Documentation= pages are installed by the package" \
		test -f /usr/share/man/man8/secmemd.8.gz -a -f /usr/share/man/man5/secmem.conf.5.gz \
		-a -f /usr/share/man/man8/secmemctl.8.gz
fi

if [ "$mode" = check ]; then
	# shellcheck source=/dev/null
	. /usr/local/lib/secmem-vm/lifecycle.sh
fi

[ "$mode" = check ] || heading "7. systemd-analyze security secmemd"
echo "  # systemd-analyze security secmemd.service"
systemd-analyze security --no-pager "$unit" >"$work/security" 2>&1
rc=$?
if [ "$mode" = check ]; then
	indent <"$work/security"
else
	grep 'Overall exposure' "$work/security" | indent
fi
overall=$(sed -n 's/.*Overall exposure level for [^:]*: *\([0-9.]*\) *\([A-Z]*\).*/\1 \2/p' "$work/security")
case ${overall#* } in
PERFECT | SAFE | OK) rating_ok=0 ;;
*) rating_ok=1 ;;
esac
result $((rc || rating_ok)) analyze.security "systemd-analyze security: overall exposure ${overall:-not printed} (OK or better)"

heading "summary"
summary_line() {
	printf '  %-22s %s\n' "$1" "$2"
}
summary_line "packages" "from apt: $(pkg_versions libsecmem0 libsecmem-dev secmemd secmem-run); kernel $(dpkg-query -W -f='${Package} ${Version}' "linux-image-$(uname -r)" 2>/dev/null)"
summary_line "secmemd.service" "$(systemctl is-enabled "$unit"), $(prop ActiveState) (Type=$(prop Type)); journal: $(journal '[.[] | select(.SECMEM_EVENT)] | length') structured decisions"
summary_line "pools" "$conf: pool_target $(hsize "$old_target") -> $(hsize "$reload_target") by systemctl reload; now $(knobs_now)"
summary_line "application" "$(sed -n 's/^secret-demo: backend /backend /p' "$work/out"); key $(grep -q '^secret-demo: key absent' "$work/out" && echo absent from || echo FOUND in) /proc/kcore; control copy $(grep -q '^secret-demo: control found' "$work/out" && echo found || echo NOT found)"
# shellcheck disable=SC2154 # rp_dir and rp_left are set by realprogs.sh
summary_line "unmodified openssl" "s_server kcore scan, secrets found of 7: plain $(grep -c ' found at' "$rp_dir/scan.none"), --mode openssl $(grep -c ' found at' "$rp_dir/scan.openssl") (${rp_left:-none}), --mode heap $(grep -c ' found at' "$rp_dir/scan.heap")"
summary_line "unmodified ssh-agent" "key shielded by OpenSSH (seed absent even plain); --no-new-privs --mode heap: heap on $(cat "$rp_dir/maps.ssh.heap") memfd:secmem mappings"
summary_line "ssh-agent service" "secmemctl protect --mode heap --no-new-privs; status: $(awk -v u=secmem-ssh-agent.service '$1 == u { print $6 ", " $7 " bytes in use"; exit }' "$rp_dir/svc.status" 2>/dev/null); kcore: $(grep -q 'seed absent' "$rp_dir/scan.svc" 2>/dev/null && echo seed absent || echo seed FOUND or not scanned)"
summary_line "unmodified minisign" "Ed25519 seed in kernel RAM: plain $(grep -q 'seed found' "$rp_dir/scan.mini.none" && echo found || echo absent), --mode sodium $(grep -q 'seed found' "$rp_dir/scan.mini.sodium" && echo found || echo absent), --mode sodium,heap $(grep -q 'seed found' "$rp_dir/scan.mini.sodium,heap" && echo found || echo absent)"
summary_line "systemd-analyze" "security: exposure ${overall:-?}"
finish
