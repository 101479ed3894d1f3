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
