# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # work, unit, conf, pc, exp_*: set by scenario.sh
#
# The package lifecycle, in the spirit of piuparts but on the running
# system, with systemd and the secmem kernel: sourced by scenario.sh in
# check mode, after section 10, with secmemd VERSION installed by apt,
# stopped, and /etc/secmem.conf as shipped. Uses scenario.sh's helpers
# (check, result, show, prop, knobs_are, pools_filled, journal_has...).
#
#   11. upgrade to the next version while a program linked with libsecmem
#       runs: the program keeps working, the daemon is restarted into the
#       new binary, the pools stay
#   12. an upgrade with a broken /etc/secmem.conf: dpkg succeeds, the old
#       daemon keeps running with its policy
#   13. remove: the daemon stops and gives its pools back to the kernel
#   14. purge: the conffile and the state are gone
#   15. install on a kernel without the pools (for the unit: an empty
#       /sys/kernel/mm): dpkg succeeds, the daemon says so, exits 3 and is
#       not restarted
#   16. reinstalled on the pool kernel: running, pools up
#   17. the kernel package runs the /etc/kernel hooks (GRUB, initramfs)
#
# After it, secmemd is installed, active, with the shipped config.

lc_next=/etc/apt/sources.list.d/secmem-next.list
lc_dropin=/etc/systemd/system/secmemd.service.d/stock-kernel.conf
next_version=$(apt-cache show --no-all-versions secmemd 2>/dev/null | sed -n 's/^Version: //p')
first_version=$(dpkg-query -W -f='${Version}' secmemd)

# apt_step ID DESCRIPTION APT-ARGS...: run apt-get, show its output, one
# assertion on its status.
apt_step() {
	local id=$1 desc=$2 rc
	shift 2
	echo "  # apt-get $*"
	DEBIAN_FRONTEND=noninteractive apt-get "$@" >"$work/apt.out" 2>&1
	rc=$?
	indent <"$work/apt.out"
	result "$rc" "$id" "$desc (apt-get $*: status $rc)"
}

# The kernel's knobs, read without secmemctl (gone once secmemd is removed).
sysfs_knobs_zero() {
	local d
	for d in /sys/devices/system/node/node*/unmapped; do
		[ "$(cat "$d/pool_target")/$(cat "$d/watermark_low")/$(cat "$d/watermark_high")" = 0/0/0 ] ||
			return 1
	done
}

sysfs_pools_empty() {
	local d
	for d in /sys/devices/system/node/node*/unmapped; do
		[ "$(cat "$d/stats/free_bytes")" -lt "$PAGEBLOCK" ] || return 1
	done
}

sysfs_free() {
	cat /sys/devices/system/node/node*/unmapped/stats/free_bytes | awk '{ s += $1 } END { print s }'
}

unit_state() {
	echo "$(prop ActiveState)/$(prop Result)/$(prop ExecMainStatus)/$(prop NRestarts)"
}

heading "11. upgrade $first_version -> next while a program linked with libsecmem runs"
show systemctl start "$unit"
result $? life.start "systemctl start secmemd (the version built, the shipped config)"
wait_for 60 pools_filled
check life.filled "pools filled before the upgrade ($(knobs_now))" pools_filled
expect_from_conf
# shellcheck disable=SC2086 # $pc is a list of flags
show cc -O2 -Wall -o "$work/upgrade-holder" /usr/local/src/secmem-demo/upgrade-holder.c $pc
result $? life.holder-build "upgrade-holder.c built against the installed libsecmem-dev"
rm -f "$work/holder.fifo"
mkfifo "$work/holder.fifo"
"$work/upgrade-holder" "$work/holder.fifo" >"$work/holder.out" 2>&1 &
holder=$!
wait_for 10 grep -q '^upgrade-holder: ready' "$work/holder.out"
check life.holder-ready "upgrade-holder (pid $holder) holds a secret in secmem memory" \
	grep -q '^upgrade-holder: ready' "$work/holder.out"
pid_before=$(prop MainPID)
echo "deb [trusted=yes] file:/var/lib/secmem-apt/repo-next ./" >"$lc_next"
show apt-get update
next_version=$(apt-cache show --no-all-versions secmemd | sed -n 's/^Version: //p')
check life.next-seen "apt sees secmemd $next_version in repo-next" \
	dpkg --compare-versions "$next_version" gt "$first_version"
apt_step life.upgrade "upgrade to $next_version" install -y --only-upgrade libsecmem0 libsecmem-dev secmemd secmem-run
check life.upgraded "every package at $next_version: $(pkg_versions libsecmem0 libsecmem-dev secmemd secmem-run)" \
	[ "$(dpkg-query -W -f='${Version}\n' libsecmem0 libsecmem-dev secmemd secmem-run | sort -u)" = "$next_version" ]
lib_maps=$(grep -m1 'libsecmem\.so' "/proc/$holder/maps" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; print }' | sed 's/^ *//')
check life.lib-replaced "the running program maps the library file the upgrade replaced: $lib_maps" \
	sh -c "echo '$lib_maps' | grep -q '(deleted)\$'"
echo go >"$work/holder.fifo"
wait "$holder"
rc=$?
indent <"$work/holder.out"
check life.holder-survived "upgrade-holder, started before the upgrade: secret intact, new allocations after it work (status $rc)" \
	[ "$rc" = 0 ]
check life.holder-backend "upgrade-holder used the unmapped memfd throughout" \
	grep -qx 'upgrade-holder: ok unmapped-memfd' "$work/holder.out"
wait_for 20 sh -c "[ \"\$(systemctl show -P ActiveState $unit)\" = active ] && [ \"\$(systemctl show -P MainPID $unit)\" != $pid_before ]"
pid_new=$(prop MainPID)
check life.restarted "secmemd restarted into the new binary: pid $pid_before -> $pid_new, $(prop ActiveState)" \
	[ "$pid_new" != "$pid_before" ] && [ "$pid_new" != 0 ] && [ "$(prop ActiveState)" = active ]
check life.new-binary "the running secmemd is the upgraded file (/proc/$pid_new/exe: $(readlink "/proc/$pid_new/exe"))" \
	[ "$(readlink "/proc/$pid_new/exe")" = /usr/sbin/secmemd ]
check life.pools-kept "the pools kept their policy across the upgrade ($(knobs_now))" \
	knobs_are "$exp_target" "$exp_low" "$exp_high"
wait_for 60 pools_filled
check life.pools-filled "pools filled after the upgrade" pools_filled

heading "12. an upgrade with a broken $conf: dpkg succeeds, the old daemon keeps its policy"
cp "$conf" "$work/secmem.conf.good"
echo "  # sed -i 's/^pool_target = .*/pool_target = plenty/' $conf"
conf_set pool_target plenty
pid_before=$(prop MainPID)
apt_step life.broken-dpkg "reinstall (configure as after an upgrade) with the broken file" \
	install -y --reinstall secmemd
check life.broken-reported "the postinst names the error and does not restart" \
	sh -c "grep -q 'secmemd: not restarted: $conf has errors' '$work/apt.out' && grep -q 'pool_target' '$work/apt.out'"
check life.broken-configured "dpkg: secmemd is configured (not half-configured): $(dpkg-query -W -f='${Status}' secmemd)" \
	pkgs_installed secmemd
check life.broken-same-daemon "the old daemon keeps running: pid $pid_before, $(prop ActiveState)" \
	[ "$(prop MainPID)/$(prop ActiveState)" = "$pid_before/active" ]
check life.broken-policy "its policy stays: pool_target $exp_target, low $exp_low, high $exp_high" \
	knobs_are "$exp_target" "$exp_low" "$exp_high"
cp "$work/secmem.conf.good" "$conf"

heading "13. apt-get remove secmemd: the daemon stops and gives the pools back"
check life.pools-before-remove "pools filled before the removal ($(knobs_now))" pools_filled
apt_step life.remove "remove" remove -y secmemd
check life.removed-state "dpkg: secmemd is removed, its conffile kept: $(dpkg-query -W -f='${Status}' secmemd)" \
	[ "$(dpkg-query -W -f='${Status}' secmemd)" = "deinstall ok config-files" ]
check life.removed-stopped "no secmemd process is left" not pgrep -x secmemd
check life.removed-knobs "pool_target, watermark_low, watermark_high are 0 on every node (sysfs)" \
	sysfs_knobs_zero
check life.removed-flush "flush_on_free is back to immediate ($(cat /sys/kernel/mm/unmapped/flush_on_free))" \
	grep -q '\[immediate\]' /sys/kernel/mm/unmapped/flush_on_free
wait_for 60 sysfs_pools_empty
check life.removed-drained "the kernel took the pools back: free unmapped bytes $(sysfs_free), under one pageblock per node" \
	sysfs_pools_empty
check life.removed-conffile "$conf is kept until purge" test -f "$conf"
check life.removed-lib "libsecmem0 stays (libsecmem-dev and secmem-run need it)" pkgs_installed libsecmem0

heading "14. apt-get purge secmemd: the conffile and the state are gone"
apt_step life.purge "purge" purge -y secmemd
check life.purged-state "dpkg: secmemd is not installed, no config-files left" \
	sh -c "! dpkg-query -W -f='\${Status}' secmemd 2>/dev/null | grep -q 'ok \\(installed\\|config-files\\)'"
check life.purged-conffile "$conf is gone" not test -e "$conf"
check life.purged-rundir "/run/secmemd is gone" not test -e /run/secmemd
check life.purged-enable "the enable link is gone (multi-user.target.wants)" \
	not test -e /etc/systemd/system/multi-user.target.wants/secmemd.service
check life.purged-unit "systemd no longer knows the unit: LoadState=$(prop LoadState)" \
	[ "$(prop LoadState)" = not-found ]

heading "15. install on a kernel without the pools: dpkg succeeds, the daemon says so and stays down"
# For this one unit the kernel lacks the feature: /sys/kernel/mm is an
# empty tmpfs in its mount namespace (and it no longer asks for the knobs
# to be writable), as on a stock kernel.
mkdir -p "${lc_dropin%/*}"
printf '%s\n' '# lifecycle.sh: simulate a kernel without the secmem pools' '[Service]' \
	'ReadWritePaths=' 'TemporaryFileSystem=/sys/kernel/mm:ro' >"$lc_dropin"
sed 's/^/    /' "$lc_dropin"
apt_step life.stock-dpkg "install on a kernel without the pools" install -y secmemd
check life.stock-installed "dpkg: secmemd installed and configured ($(pkg_versions secmemd))" pkgs_installed secmemd
wait_for 20 sh -c "[ \"\$(systemctl show -P ActiveState $unit)\" = failed ]"
check life.stock-message "journal: \"this kernel lacks unmapped pools\", PRIORITY=3" \
	journal_has 10 '.PRIORITY == "3" and (.MESSAGE | test("this kernel lacks unmapped pools"))'
sleep 3
check life.stock-exit "the unit failed once with status 3 and is not restarted: $(unit_state) (ActiveState/Result/status/NRestarts)" \
	[ "$(unit_state)" = failed/exit-code/3/0 ]
check life.stock-enabled "the unit stays enabled for the next boot on a secmem kernel" \
	[ "$(systemctl is-enabled "$unit")" = enabled ]

heading "16. the same package on the pool kernel: running, pools up"
rm -f "$lc_dropin"
rmdir "${lc_dropin%/*}" 2>/dev/null
systemctl daemon-reload
systemctl reset-failed "$unit"
show systemctl start "$unit"
result $? life.reinstall-start "systemctl start secmemd without the simulation"
check life.reinstall-active "secmemd active: $(prop ActiveState)/$(prop SubState)" \
	[ "$(prop ActiveState)/$(prop SubState)" = active/running ]
check life.reinstall-conffile "$conf is the shipped file again (same as after the first install)" \
	cmp -s "$conf" "$work/secmem.conf.shipped"
expect_from_conf
wait_for 60 pools_filled
check life.reinstall-pools "pools from the shipped config: pool_target $exp_target ($(knobs_now))" \
	knobs_are "$exp_target" "$exp_low" "$exp_high" && pools_filled
rm -f "$lc_next"
apt-get update >/dev/null 2>&1
show secmemctl status

heading "17. the kernel package beside a distribution kernel: the /etc/kernel hooks run"
# Debian's boot loaders hook in through /etc/kernel/postinst.d (GRUB's
# zz-update-grub, initramfs-tools): a package that runs them with the
# version and image path is installable next to linux-image-amd64 and
# bootable through GRUB. A recording hook stands in for them here.
kpkg=linux-image-$(uname -r)
mkdir -p /etc/kernel/postinst.d
# shellcheck disable=SC2016 # expanded by the hook, not here
printf '#!/bin/sh\necho "$0 $*" >>/run/kernel-hook.log\n' >/etc/kernel/postinst.d/zz-secmem-record
chmod 0755 /etc/kernel/postinst.d/zz-secmem-record
rm -f /run/kernel-hook.log
apt_step life.kernel-reinstall "reinstall $kpkg" install -y --reinstall "$kpkg"
sed 's/^/    hook: /' /run/kernel-hook.log 2>/dev/null
check life.kernel-hook "the postinst ran /etc/kernel/postinst.d with $(uname -r) and /boot/vmlinuz-$(uname -r)" \
	grep -qx "/etc/kernel/postinst.d/zz-secmem-record $(uname -r) /boot/vmlinuz-$(uname -r)" /run/kernel-hook.log
check life.kernel-files "$kpkg installs its image, config and System.map under versioned names" \
	test -f "/boot/vmlinuz-$(uname -r)" -a -f "/boot/config-$(uname -r)" -a -f "/boot/System.map-$(uname -r)"
rm -f /etc/kernel/postinst.d/zz-secmem-record
