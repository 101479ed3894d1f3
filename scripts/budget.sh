#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The end of make check: where its time went, against the budget
# (docs/TESTING.md). Reads LOGS/step-times ("NAME SECONDS STATUS" per step,
# written by scripts/check.sh) and the guests' logs, and prints
#
#   - the slowest guest programs, from the "# NAME ran for N s" lines the
#     guest's init prints after each program;
#   - one line per step: its seconds and its share of the budget, and
#     "over" where it took more than its share (a finding to fix, not a
#     test to drop);
#   - the total against the budget.
#
# The lanes of scripts/check.sh run steps at the same time, so the steps'
# seconds add up to more than the total: the budget is the total's, and a
# share is what a step may take with the other lane running beside it.
#
# Informational: it never fails make check (timing is not a test).
#
#   budget.sh LOGS TOTAL_SECONDS
set -uo pipefail

logs=${1:?usage: budget.sh LOGS TOTAL_SECONDS}
total=${2:?usage: budget.sh LOGS TOTAL_SECONDS}

# Each step's share of the 40-minute budget of a fresh clone on the 2-core
# machine (no ccache, no kernel cache): what it may take, beside the other
# lane's step, for the total to fit. A step over its share is where the
# next cut must come from (docs/TESTING.md, "Where the time goes"). With
# the kernel cache hit, kernel-debug and kernel-release take seconds and
# the whole run has 25 minutes.
budget_total=2400
budget_cached=1500
declare -A share=(
	[kernel-debug]=660 [kbuild-key]=15 [guest-build]=150 [checkpatch]=45 [uapi]=5
	[libsecmem]=60 [libsecmem-asan]=60 [daemon]=30 [preload]=30
	[kernel-release]=480 [deb]=90 [vm-checker]=10
	[guest]=300 [guest-numa]=150 [guest-hibernate]=120 [guest-kexec]=100
	[guest-release]=120 [guest-frag]=240 [systemd]=300 [soak]=180
)

echo "==> the slowest guest programs (guest init's 'ran for' lines)"
shopt -s nullglob
for f in "$logs"/check-guest*.log; do
	# This run's logs only (check.sh marks its start).
	[ "$f" -nt "$logs/.check-start" ] || continue
	boot=${f##*/check-}
	boot=${boot%.log}
	sed -n 's/^.*# \([A-Za-z0-9_.-]*\) ran for \([0-9.]*\) s\r*$/\2 \1/p' "$f" |
		while read -r secs prog; do
			echo "$secs $prog $boot"
		done
done | sort -rn | head -n 12 | while read -r secs prog boot; do
	printf '  %8s s  %-36s %s\n' "$secs" "$prog" "$boot"
done

echo "==> time per step against the budget"
printf '  %-18s %8s %8s\n' step seconds share
kernels=0
while read -r name secs rc; do
	s=${share[$name]:-0}
	case $name in kernel-*) kernels=$((kernels + secs)) ;; esac
	note=
	[ "$s" -gt 0 ] || note="no share in scripts/budget.sh"
	[ "$s" = 0 ] || [ "$secs" -le "$s" ] || note="over its share by $((secs - s)) s"
	[ "$rc" = 0 ] || note="${note:+$note, }failed"
	printf '  %-18s %8s %8s  %s\n' "$name" "$secs" "$s" "$note"
done <"$logs/step-times"
printf '  %-18s %8s %8s\n' total "$total" "$budget_total"
load=$(cut -d' ' -f1-3 /proc/loadavg)
# Did any step compile a kernel (make deb builds the release kernel's
# objects when its packages are not in the cache)?
if [ "$kernels" -lt 60 ] && ! grep -qs '^kbuild: building kernel' "$logs/step-deb.log"; then
	# The kernels came from the cache (or were up to date).
	verdict="kernels cached: budget $budget_cached s"
	limit=$budget_cached
else
	verdict="kernels built: budget $budget_total s"
	limit=$budget_total
fi
if [ "$total" -le "$limit" ]; then
	echo "==> $total s of $limit s ($verdict); load average now $load"
else
	echo "==> $total s, over the budget by $((total - limit)) s ($verdict); load average now $load"
fi
exit 0
