#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unmodified Debian programs under secmem-run, judged by the attacker's
# view: a root scan of /proc/kcore for the secret values as the program
# holds them.  Sourced by scenario.sh (its check/result/show/indent).
#
# openssl s_server serves handshakes with a fresh RSA-3072 and a P-256 key,
# without the preload (the control), with --mode openssl and --mode heap.
# The needles are the 32 least significant bytes of each secret bignum in
# memory order (x86-64 BN limbs are little-endian words, so the value's
# bytes reversed).  The guest boots with init_on_free=1, so copies freed
# by other processes are zeroed and do not count.

# shellcheck disable=SC2016,SC2154 # sh -c scripts expand their own "$1"; $work is scenario.sh's
rp_dir=$work/realprogs
mkdir -p "$rp_dir"

# bn_needle FILE FIELD: LE hex of FIELD of "openssl pkey -text", 32 bytes.
bn_needle() {
	openssl pkey -in "$1" -text -noout 2>/dev/null | awk -v f="$2:" '
		$1 == f { on = 1; next }
		on && /^ +[0-9a-f:]+$/ { gsub(/[ :]/, ""); hex = hex $0; next }
		on { exit }
		END { print hex }' |
		sed 's/^\(00\)*//' | fold -w2 | tac | head -32 | tr -d '\n'
}

rp_server() {	# rp_server PREFIX...: start s_server, wait until it serves
	"$@" openssl s_server -quiet -www -accept 4433 \
		-key "$rp_dir/rsa.pem" -cert "$rp_dir/rsa.crt" \
		-dkey "$rp_dir/ec.pem" -dcert "$rp_dir/ec.crt" \
		>"$rp_dir/server.out" 2>&1 &
	rp_pid=$!
	for _ in $(seq 50); do
		openssl s_client -connect 127.0.0.1:4433 </dev/null >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

rp_handshakes() {	# N handshakes with each key type; prints how many worked
	local ok=0
	for _ in $(seq "$1"); do
		openssl s_client -connect 127.0.0.1:4433 -sigalgs rsa_pss_rsae_sha256 \
			</dev/null 2>/dev/null | grep -q 'Verification\|Server certificate' && ok=$((ok + 1))
		openssl s_client -connect 127.0.0.1:4433 -sigalgs ecdsa_secp256r1_sha256 \
			</dev/null 2>/dev/null | grep -q 'Verification\|Server certificate' && ok=$((ok + 1))
	done
	echo "$ok"
}

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072 -out "$rp_dir/rsa.pem" 2>/dev/null
openssl req -new -x509 -key "$rp_dir/rsa.pem" -subj /CN=secmem-rsa -days 2 -out "$rp_dir/rsa.crt" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$rp_dir/ec.pem" 2>/dev/null
openssl req -new -x509 -key "$rp_dir/ec.pem" -subj /CN=secmem-ec -days 2 -out "$rp_dir/ec.crt" 2>/dev/null
needles=()
for f in privateExponent prime1 prime2 exponent1 exponent2 coefficient; do
	needles+=("rsa.$f=$(bn_needle "$rp_dir/rsa.pem" $f)")
done
needles+=("ec.priv=$(bn_needle "$rp_dir/ec.pem" priv)")
check realprogs.needles "secret values of the fresh RSA-3072 and P-256 keys extracted (${#needles[@]})" \
	sh -c '[ "$(printf "%s\n" "$@" | grep -c "=[0-9a-f]\{64\}$")" = 7 ]' - "${needles[@]}"
cc -O2 -Wall -o "$rp_dir/kcore-find" /usr/local/src/secmem-demo/kcore-find.c \
	/usr/local/src/secmem-demo/kcore.c
result $? realprogs.scanner "kcore-find built"
echo "  # openssl s_server -www -key rsa.pem -cert rsa.crt -dkey ec.pem -dcert ec.crt; 5 RSA + 5 ECDSA handshakes; kcore-find"

for rp_mode in none openssl heap; do
	if [ "$rp_mode" = none ]; then
		prefix=(env) how="without the preload (control)"
	else
		prefix=(secmem-run -v --mode "$rp_mode") how="under secmem-run --mode $rp_mode"
	fi
	rp_server "${prefix[@]}"
	result $? "realprogs.$rp_mode.serve" "openssl s_server $how accepts connections"
	hs=$(rp_handshakes 5)
	check "realprogs.$rp_mode.handshakes" "10 handshakes, RSA and ECDSA ($hs worked)" [ "$hs" = 10 ]
	"$rp_dir/kcore-find" "${needles[@]}" >"$rp_dir/scan.$rp_mode" 2>&1
	result $? "realprogs.$rp_mode.scan" "root scan of /proc/kcore ($(tail -1 "$rp_dir/scan.$rp_mode"))"
	indent <"$rp_dir/scan.$rp_mode"
	kill "$rp_pid" 2>/dev/null
	wait "$rp_pid" 2>/dev/null
	grep 'secmem-run:' "$rp_dir/server.out" | indent
done
check realprogs.control "control: the scan finds RSA d and the EC scalar in a plain s_server" \
	sh -c 'grep -q "rsa.privateExponent found" "$1" && grep -q "ec.priv found" "$1"' - "$rp_dir/scan.none"
check realprogs.heap.absent "--mode heap: none of the 7 secret values is in kernel RAM" \
	sh -c '! grep -q " found at" "$1"' - "$rp_dir/scan.heap"
check realprogs.openssl.d-absent "--mode openssl: RSA d and the EC scalar are not in kernel RAM" \
	sh -c '! grep -q "rsa.privateExponent found\|ec.priv found" "$1"' - "$rp_dir/scan.openssl"
# What OpenSSL keeps outside its secure heap: the Montgomery contexts of
# p and q (BN_MONT_CTX_set_locked copies them into ordinary bignums).
rp_left=$(grep ' found at' "$rp_dir/scan.openssl" | awk '{print $2}' | tr '\n' ' ')
echo "  --mode openssl still leaves in kernel RAM: ${rp_left:-nothing} (--mode heap removes them)"
