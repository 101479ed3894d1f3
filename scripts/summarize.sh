#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Count the top-level TAP results of every *.tap file in a directory and
# print "N passed, N failed[, N skipped]"; list each failure; exit 1 if
# anything failed or no result exists at all.
set -euo pipefail

dir=${1:?usage: summarize.sh RESULTS_DIR}
pass=0
fail=0
skip=0
shopt -s nullglob
for f in "$dir"/*.tap; do
	name=${f##*/}
	name=${name%.tap}
	while IFS= read -r line; do
		case "$line" in
		"not ok "*)
			fail=$((fail + 1))
			echo "FAILED: $name: ${line#not ok }"
			;;
		"ok "*"# SKIP"* | "ok "*"# skip"*)
			skip=$((skip + 1))
			;;
		"ok "*)
			pass=$((pass + 1))
			;;
		esac
	done <"$f"
done

line="$pass passed, $fail failed"
[ "$skip" = 0 ] || line="$line, $skip skipped"
echo "$line"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
