#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Count the top-level TAP results of every *.tap file in a directory and
# print "N passed, N failed[, N skipped]"; list each failure with the first
# "# " lines under it (a checker's reasons, tests/vm/check-log.py); exit 1
# if anything failed or no result exists at all.
set -euo pipefail

dir=${1:?usage: summarize.sh RESULTS_DIR}
pass=0
fail=0
skip=0
shopt -s nullglob
for f in "$dir"/*.tap; do
	name=${f##*/}
	name=${name%.tap}
	failed=0
	while IFS= read -r line; do
		case "$line" in
		"# "*)
			# What a checker wrote under a failure: why it failed.
			if [ "$failed" -gt 0 ] && [ "$failed" -le 6 ]; then
				echo "    ${line#\# }"
				failed=$((failed + 1))
			fi
			continue
			;;
		"not ok "*)
			fail=$((fail + 1))
			echo "FAILED: $name: ${line#not ok }"
			failed=1
			continue
			;;
		"ok "*"# SKIP"* | "ok "*"# skip"*)
			skip=$((skip + 1))
			;;
		"ok "*)
			pass=$((pass + 1))
			;;
		esac
		failed=0
	done <"$f"
done

line="$pass passed, $fail failed"
[ "$skip" = 0 ] || line="$line, $skip skipped"
echo "$line"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
