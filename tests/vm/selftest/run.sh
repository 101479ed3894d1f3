#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of check-log.py: run it on every selftest/NAME.log and compare
# with NAME.expect, which holds
#   args: EXTRA CHECKER ARGUMENTS     (optional)
#   exit: STATUS                      (the checker's exit status)
#   output: TEXT                      (any number: must appear in its output)
#   tap: TEXT                         (any number: must appear in the TAP it
#                                      writes, which the run's summary shows)
# Lines starting with "#" are comments.
#
# Prints TAP and writes it to $BUILD/results/vm-checker.tap as well.
# Environment: BUILD (default <repo>/build), PYTHON (default python3).
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=${BUILD:-$top/build}
python=${PYTHON:-python3}
checker=$here/../check-log.py
results=$build/results/vm-checker.tap

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-checker.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

logs=("$here"/*.log)
[ -e "${logs[0]}" ] || {
	echo "vm-checker: error: no sample logs in $here" >&2
	exit 1
}

# check_one NAME: run the checker on NAME.log; prints why it fails, if so.
check_one() {
	local name=$1 expect=$here/$1.expect line key value want_exit=
	local -a args=() wants=() tap_wants=()
	[ -f "$expect" ] || {
		echo "missing $name.expect"
		return 1
	}
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		'#'* | '') continue ;;
		esac
		key=${line%%:*}
		value=${line#*: }
		case $key in
		args) read -r -a args <<<"$value" ;;
		exit) want_exit=$value ;;
		output) wants+=("$value") ;;
		tap) tap_wants+=("$value") ;;
		*)
			echo "$name.expect: unknown key '$key'"
			return 1
			;;
		esac
	done <"$expect"
	[ -n "$want_exit" ] || {
		echo "$name.expect: no 'exit:' line"
		return 1
	}

	local out=$tmp/$name.out tap=$tmp/$name.tap status=0 want bad=0
	"$python" "$checker" "${args[@]}" --results "$tap" "$here/$name.log" >"$out" 2>&1 ||
		status=$?
	if [ "$status" != "$want_exit" ]; then
		echo "exit status $status, expected $want_exit"
		bad=1
	fi
	for want in "${wants[@]}"; do
		if ! grep -qF -- "$want" "$out"; then
			echo "output lacks: $want"
			bad=1
		fi
	done
	for want in "${tap_wants[@]}"; do
		if ! grep -qF -- "$want" "$tap" 2>/dev/null; then
			echo "TAP lacks: $want"
			bad=1
		fi
	done
	if ! tail -n 1 "$out" | grep -qE '^guest: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$'; then
		echo "last line is not the 'guest: N passed, N failed' summary"
		bad=1
	fi
	if ! head -n 1 "$tap" 2>/dev/null | grep -qx 'TAP version 13'; then
		echo "no TAP written to --results"
		bad=1
	fi
	if [ "$bad" = 1 ]; then
		echo "checker output:"
		sed 's/^/  /' "$out"
		echo "TAP written:"
		sed 's/^/  /' "$tap" 2>/dev/null || true
	fi
	return "$bad"
}

mkdir -p "$(dirname "$results")"
n=0
passed=0
failed=0
{
	echo "TAP version 13"
	echo "1..${#logs[@]}"
} >"$results"
for log in "${logs[@]}"; do
	name=$(basename "$log" .log)
	n=$((n + 1))
	if why=$(check_one "$name"); then
		echo "ok $n vm-checker.$name"
		passed=$((passed + 1))
	else
		echo "not ok $n vm-checker.$name"
		printf '%s\n' "$why" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
done | tee -a "$results"
passed=$(grep -c '^ok ' "$results" || true)
failed=$(grep -c '^not ok ' "$results" || true)
echo "vm-checker: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ $((passed + failed)) = "${#logs[@]}" ]
