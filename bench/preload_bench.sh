#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unmodified programs with and without libsecmem-preload, side by side in
# one run (secmem-run(1)): openssl speed for RSA-3072 and ECDSA P-256 sign
# per mode, and a malloc-heavy workload under --mode heap against glibc.
# Prints a table; the ratios are the figures of docs/preload.md.
#
# Usage: preload_bench.sh BUILD_DIR [SECONDS]
set -eu
build=${1:?usage: preload_bench.sh BUILD_DIR [SECONDS]}
secs=${2:-3}
run=$build/preload/secmem-run
export LD_LIBRARY_PATH=$build/libsecmem
export SECMEM_PRELOAD_LIB=$build/preload/libsecmem-preload.so
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

speed() {	# speed PREFIX...: "rsa_sign ec_sign" per second
	"$@" openssl speed -seconds "$secs" -mr rsa3072 ecdsap256 2>/dev/null >"$out/s"
	rsa=$(awk -F: '/^\+F2:/ && $3 == 3072 {print $4}' "$out/s" | head -1)
	ec=$(awk -F: '/^\+F4:/ && $3 == 256 {print $4}' "$out/s" | head -1)
	# -mr: +F2:index:bits:sign/s:verify/s (RSA), +F4 the same for ECDSA.
	awk -v r="$rsa" -v e="$ec" 'BEGIN { printf "%.1f %.1f\n", r, e }'
}

echo "backend: $("$run" -v true 2>&1 | sed -n 's/.*backend \([a-z-]*\).*/\1/p' | head -1), openssl speed -seconds $secs"
read -r base_rsa base_ec < <(speed env)
printf '%-22s %14s %14s %10s %10s\n' mode "rsa3072 sign/s" "p256 sign/s" "rsa ratio" "ec ratio"
printf '%-22s %14s %14s %10s %10s\n' "none (glibc, OpenSSL)" "$base_rsa" "$base_ec" 1.00 1.00
for m in openssl heap; do
	read -r rsa ec < <(speed "$run" --mode "$m")
	printf '%-22s %14s %14s %10s %10s\n' "--mode $m" "$rsa" "$ec" \
		"$(awk -v a="$rsa" -v b="$base_rsa" 'BEGIN{printf "%.3f", a/b}')" \
		"$(awk -v a="$ec" -v b="$base_ec" 'BEGIN{printf "%.3f", a/b}')"
done
echo
w=$build/bench/malloc_workload
glibc=$("$w" | awk '{print $4}')
heap=$("$run" --mode heap "$w" | awk '{print $4}')
printf '%-22s %12s %12s\n' "malloc workload" "ns/op" "ops/s ratio"
printf '%-22s %12s %12s\n' glibc "$glibc" 1.00
printf '%-22s %12s %12s\n' "--mode heap" "$heap" "$(awk -v a="$glibc" -v b="$heap" 'BEGIN{printf "%.3f", a/b}')"

# The same comparison in instructions (valgrind --tool=callgrind), which
# do not depend on the machine's load: a fixed number of signatures
# (sign_driver, only its signing loop counted) and the malloc workload
# (its main()).  Valgrind knows no memfd_secret(2), so these runs use
# libsecmem's mlock backend (SECMEM_ALLOW_INSECURE=1): the backend only
# decides how an arena is mapped, not a single instruction of the
# allocation paths.  PRELOAD_CALLGRIND=0 skips them (about 80 s).
if [ "${PRELOAD_CALLGRIND:-1}" = 0 ] || ! command -v valgrind >/dev/null; then
	echo
	echo "instruction counts skipped (PRELOAD_CALLGRIND=0 or no valgrind)"
	exit 0
fi
ir() {	# ir MODE TOGGLE CMD...: instructions callgrind collected
	local mode=$1 tog=$2 pre=()
	shift 2
	[ -n "$mode" ] && pre=("LD_PRELOAD=$SECMEM_PRELOAD_LIB" "SECMEM_PRELOAD_MODE=$mode")
	env "${pre[@]}" SECMEM_ALLOW_INSECURE=1 valgrind --tool=callgrind \
		--toggle-collect="$tog" --callgrind-out-file=/dev/null "$@" 2>&1 |
		awk '/Collected :/ { print $NF }'
}
echo
printf '%-22s %16s %16s %16s\n' "instructions" "none (glibc)" "--mode openssl" "--mode heap"
for job in "ec 1000" "rsa 20"; do
	read -r alg n <<<"$job"
	base=$(ir "" sign_loop "$build/bench/sign_driver" "$alg" "$n")
	o=$(ir openssl sign_loop "$build/bench/sign_driver" "$alg" "$n")
	h=$(ir heap sign_loop "$build/bench/sign_driver" "$alg" "$n")
	printf '%-22s %16s %16s %16s\n' "$n $alg signs" "$base" \
		"$o ($(awk -v a="$o" -v b="$base" 'BEGIN{printf "%.4f", a/b}'))" \
		"$h ($(awk -v a="$h" -v b="$base" 'BEGIN{printf "%.4f", a/b}'))"
done
base=$(ir "" main "$w")
h=$(ir heap main "$w")
printf '%-22s %16s %16s %16s\n' "malloc workload" "$base" - \
	"$h ($(awk -v a="$h" -v b="$base" 'BEGIN{printf "%.4f", a/b}'))"
echo "(ratios: instructions against none; lower is better)"
