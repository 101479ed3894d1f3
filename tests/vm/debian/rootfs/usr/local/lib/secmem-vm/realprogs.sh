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

# --- ssh-agent (OpenSSH 9.2) ---------------------------------------------------
# An Ed25519 key added with ssh-add, a signature made through the agent
# (ssh-keygen -Y sign with the public key), then the scan while the agent
# holds the key. The needle is the 32-byte seed as the key file stores it
# (offset 161 of the unencrypted openssh-key-v1 blob: the private half of
# "ssh-ed25519" is seed || public key). OpenSSH (8.2 and later) shields
# keys it holds: between uses the private key is kept encrypted under a
# 16 KiB random pre-key (sshkey_shield_private), so even a plain agent
# has no plain seed in RAM; the control asserts that. What an attacker
# reading kernel memory needs is then the pre-key and the shielded blob,
# both in the agent's heap: under --mode heap that heap is an unmapped
# memfd, which the agent's maps show while it holds the key.
# Debian's ssh-agent is set-group-ID _ssh, so ld.so would drop LD_PRELOAD:
# secmem-run refuses it, and --no-new-privs runs it without the group.

# hex_at OFFSET: 32 bytes at OFFSET of stdin, lowercase hex. Decoded keys
# only pass through pipes: a decoded copy in a file would stay in the page
# cache, and the scan would find that instead of the program's.
hex_at() {
	od -An -v -tx1 -j"$1" -N32 | tr -d ' \n'
}

ssh-keygen -q -t ed25519 -N '' -C secmem-test -f "$rp_dir/id_ed25519" >/dev/null
ssh_seed=$(sed '1d;$d' "$rp_dir/id_ed25519" | base64 -d | hex_at 161)
ssh_pub=$(sed '1d;$d' "$rp_dir/id_ed25519" | base64 -d | hex_at 193)
check realprogs.ssh.needle "the Ed25519 seed read from the key file (its public half matches the .pub file)" \
	sh -c '[ "$(printf %s "$1" | wc -c)" = 64 ] &&
		[ "$(awk "{print \$2}" "$3" | base64 -d | od -An -v -tx1 -j19 -N32 | tr -d " \n")" = "$2" ]' \
	- "$ssh_seed" "$ssh_pub" "$rp_dir/id_ed25519.pub"
"$(command -v secmem-run)" --mode heap ssh-agent -D -a "$rp_dir/refused.sock" >/dev/null 2>"$rp_dir/refused.err"
rc=$?
indent <"$rp_dir/refused.err"
check realprogs.ssh.setgid-refused "secmem-run refuses the set-group-ID ssh-agent without --no-new-privs (status $rc)" \
	sh -c '[ "$1" = 125 ] && grep -q "is set-group-ID" "$2"' - "$rc" "$rp_dir/refused.err"
echo data >"$rp_dir/signed"
for rp_mode in none heap; do
	if [ "$rp_mode" = none ]; then
		prefix=(env) how="without the preload (control)"
	else
		prefix=(secmem-run -v --no-new-privs --mode heap) how="under secmem-run --no-new-privs --mode heap"
	fi
	sock=$rp_dir/agent.$rp_mode.sock
	rm -f "$sock" "$rp_dir/signed.sig"
	"${prefix[@]}" ssh-agent -D -a "$sock" >"$rp_dir/agent.out" 2>&1 &
	rp_pid=$!
	wait_for 10 test -S "$sock"
	SSH_AUTH_SOCK=$sock ssh-add "$rp_dir/id_ed25519" >/dev/null 2>&1 &&
		SSH_AUTH_SOCK=$sock ssh-keygen -q -Y sign -f "$rp_dir/id_ed25519.pub" -n file "$rp_dir/signed" 2>/dev/null &&
		ssh-keygen -Y check-novalidate -n file -f "$rp_dir/id_ed25519.pub" \
			-s "$rp_dir/signed.sig" <"$rp_dir/signed" >/dev/null 2>&1
	result $? "realprogs.ssh.$rp_mode.sign" "ssh-agent $how: ssh-add, then a signature made by the agent verifies"
	# Arenas only: the preload's statistics page is /memfd:secmem-stats.
	grep -c '/memfd:secmem (deleted)$' "/proc/$rp_pid/maps" >"$rp_dir/maps.ssh.$rp_mode"
	"$rp_dir/kcore-find" "ssh.ed25519-seed=$ssh_seed" >"$rp_dir/scan.ssh.$rp_mode" 2>&1
	result $? "realprogs.ssh.$rp_mode.scan" "root scan of /proc/kcore ($(tail -1 "$rp_dir/scan.ssh.$rp_mode"))"
	indent <"$rp_dir/scan.ssh.$rp_mode"
	kill "$rp_pid" 2>/dev/null
	wait "$rp_pid" 2>/dev/null
	grep 'secmem-run:\|libsecmem-preload' "$rp_dir/agent.out" | indent
done
check realprogs.ssh.shielded "control: OpenSSH's key shielding, the seed is not in plain form even in a plain agent" \
	grep -q 'ssh.ed25519-seed absent' "$rp_dir/scan.ssh.none"
check realprogs.ssh.heap.absent "--mode heap: the seed is not in kernel RAM while the agent holds the key" \
	grep -q 'ssh.ed25519-seed absent' "$rp_dir/scan.ssh.heap"
check realprogs.ssh.heap.mapped "--mode heap: the agent's heap (pre-key, shielded key) is on the unmapped memfd: $(cat "$rp_dir/maps.ssh.heap") memfd:secmem mappings, $(cat "$rp_dir/maps.ssh.none") in the plain agent" \
	sh -c '[ "$(cat "$1")" -gt 0 ] && [ "$(cat "$2")" = 0 ]' - "$rp_dir/maps.ssh.heap" "$rp_dir/maps.ssh.none"

# --- ssh-agent as a system service, under secmemctl protect ---------------------
# The same agent as a systemd service, protected as an administrator
# would: secmemctl protect writes /etc/systemd/system/UNIT.d/50-secmem-preload.conf
# and reloads systemd, which starts the agent with the preload. Debian's
# ssh-agent is set-group-ID _ssh: protect refuses it, as secmem-run does,
# until --no-new-privs writes NoNewPrivileges=yes. secmemctl status then
# reads the agent's backend and bytes in use from the statistics page its
# preload maps (docs/preload.md). unprotect removes the drop-in.

svc=secmem-ssh-agent.service
svc_sock=/run/secmem-agent.sock
svc_dropin=/etc/systemd/system/$svc.d/50-secmem-preload.conf
rm -f "$svc_sock" "$rp_dir/signed.sig"
printf '%s\n' "[Unit]" "Description=ssh-agent for the secmem guest test" "" \
	"[Service]" "ExecStart=/usr/bin/ssh-agent -D -a $svc_sock" >"/etc/systemd/system/$svc"
echo "  # /etc/systemd/system/$svc:"
indent <"/etc/systemd/system/$svc"
systemctl daemon-reload
secmemctl protect "$svc" --mode heap >"$rp_dir/protect.out" 2>&1
rc=$?
indent <"$rp_dir/protect.out"
check realprogs.svc.setgid-refused "secmemctl protect refuses the set-group-ID ssh-agent without --no-new-privs (status $rc), writes nothing" \
	sh -c '[ "$1" = 1 ] && grep -q "is set-group-ID" "$2" && [ ! -e "$3" ]' - "$rc" "$rp_dir/protect.out" "$svc_dropin"
show secmemctl protect "$svc" --mode heap --no-new-privs
result $? realprogs.svc.protect "secmemctl protect $svc --mode heap --no-new-privs"
echo "  # $svc_dropin:"
indent <"$svc_dropin"
svc_lib=$(sed -n 's/^Environment=LD_PRELOAD=//p' "$svc_dropin")
check realprogs.svc.dropin "the drop-in preloads the packaged library (${svc_lib:-none}) in heap mode, with NoNewPrivileges=yes" \
	sh -c 'dpkg -S "$2" | grep -q "^secmem-run: " && grep -qx "Environment=SECMEM_PRELOAD_MODE=heap" "$1" &&
		grep -qx "NoNewPrivileges=yes" "$1" && head -1 "$1" | grep -q "^# Written by secmemctl protect"' \
	- "$svc_dropin" "$svc_lib"
svc_limit=$(sed -n 's/^LimitMEMLOCK=//p' "$svc_dropin")
check realprogs.svc.systemd "systemd runs the unit with it: Environment has LD_PRELOAD, LimitMEMLOCK=${svc_limit:-none}" \
	sh -c 'systemctl show -p Environment --value "$1" | grep -q "LD_PRELOAD=$2" &&
		[ "$(systemctl show -p LimitMEMLOCK --value "$1")" = "$3" ]' - "$svc" "$svc_lib" "$(bytes "$svc_limit")"
secmemctl protect "$svc" --mode heap --no-new-privs >"$rp_dir/protect.again" 2>&1
check realprogs.svc.idempotent "protecting again changes nothing: $(head -1 "$rp_dir/protect.again")" \
	grep -q "already protected" "$rp_dir/protect.again"
systemctl start "$svc"
wait_for 10 test -S "$svc_sock"
svc_pid=$(systemctl show -p MainPID --value "$svc")
check realprogs.svc.started "$svc started (pid ${svc_pid:-none}), its socket is there" \
	sh -c '[ "$1" -gt 0 ] && test -S "$2"' - "${svc_pid:-0}" "$svc_sock"
check realprogs.svc.process "the agent runs preloaded, without the set-group-ID privilege, with the memory lock limit" \
	sh -c 'grep -q libsecmem-preload "/proc/$1/maps" && grep -q "^NoNewPrivs:[[:space:]]*1" "/proc/$1/status" &&
		[ "$(awk "/^Max locked memory/ {print \$4}" "/proc/$1/limits")" = "$2" ]' - "${svc_pid:-0}" "$(bytes "$svc_limit")"
SSH_AUTH_SOCK=$svc_sock ssh-add "$rp_dir/id_ed25519" >/dev/null 2>&1
result $? realprogs.svc.add "ssh-add the Ed25519 key to the service's agent"
SSH_AUTH_SOCK=$svc_sock ssh-add -l >"$rp_dir/svc.list" 2>&1
indent <"$rp_dir/svc.list"
check realprogs.svc.list "ssh-add -l lists it" grep -q 'secmem-test (ED25519)' "$rp_dir/svc.list"
SSH_AUTH_SOCK=$svc_sock ssh-keygen -q -Y sign -f "$rp_dir/id_ed25519.pub" -n file "$rp_dir/signed" 2>/dev/null &&
	ssh-keygen -Y check-novalidate -n file -f "$rp_dir/id_ed25519.pub" \
		-s "$rp_dir/signed.sig" <"$rp_dir/signed" >/dev/null 2>&1
result $? realprogs.svc.sign "a signature made by the service's agent (ssh-keygen -Y sign) verifies"
grep -c '/memfd:secmem (deleted)$' "/proc/${svc_pid:-0}/maps" >"$rp_dir/maps.svc" 2>/dev/null
check realprogs.svc.mapped "the agent's heap is on the unmapped memfd ($(cat "$rp_dir/maps.svc") memfd:secmem mappings)" \
	[ "$(cat "$rp_dir/maps.svc")" -gt 0 ]
secmemctl status --units >"$rp_dir/svc.status" 2>&1
echo "  # secmemctl status --units"
indent <"$rp_dir/svc.status"
check realprogs.svc.status "secmemctl status lists $svc: heap, pid ${svc_pid:-none}, backend unmapped-memfd, bytes in use > 0" \
	awk -v u="$svc" -v p="${svc_pid:-0}" '$1 == u && $2 == "heap" && $4 == "active" && $5 == p &&
		$6 == "unmapped-memfd" && $7 > 0 { ok = 1 } END { exit !ok }' "$rp_dir/svc.status"
secmemctl status --json >"$rp_dir/svc.json"
check realprogs.svc.json "secmemctl status --json has the unit next to the pools' figures" \
	grep -q "\"units\":\[.*{\"unit\":\"$svc\",\"mode\":\"heap\",.*\"processes\":\[{\"pid\":${svc_pid:-0},\"backend\":\"unmapped-memfd\",\"bytes_in_use\":[1-9]" \
	"$rp_dir/svc.json"
"$rp_dir/kcore-find" "ssh.ed25519-seed=$ssh_seed" >"$rp_dir/scan.svc" 2>&1
result $? realprogs.svc.scan "root scan of /proc/kcore while the service holds the key ($(tail -1 "$rp_dir/scan.svc"))"
indent <"$rp_dir/scan.svc"
check realprogs.svc.absent "the seed is not in kernel RAM" grep -q 'ssh.ed25519-seed absent' "$rp_dir/scan.svc"
systemctl stop "$svc"
show secmemctl unprotect "$svc"
result $? realprogs.svc.unprotect "secmemctl unprotect $svc"
check realprogs.svc.removed "the drop-in is gone, and systemd no longer preloads the unit" \
	sh -c '[ ! -e "$1" ] && [ ! -e "${1%/*}" ] && ! systemctl show -p Environment --value "$2" | grep -q LD_PRELOAD' \
	- "$svc_dropin" "$svc"
secmemctl unprotect "$svc" >"$rp_dir/unprotect.again" 2>&1
check realprogs.svc.unprotect-again "unprotect of an unprotected unit: status 0, says so" \
	grep -q "not protected" "$rp_dir/unprotect.again"
rm -f "/etc/systemd/system/$svc" "$svc_sock"
systemctl daemon-reload

# --- minisign 0.11 (libsodium) -------------------------------------------------
# A key pair without a password (-W), then minisign -S with the message a
# FIFO: it loads the secret key (into sodium_malloc memory) and blocks on
# the message, and the scan runs while it holds the key. The needle is the
# Ed25519 seed: offset 62 of the decoded secret-key line (signature, KDF
# and checksum algorithms, salt, opslimit, memlimit, key id, then sk).

minisign -G -W -p "$rp_dir/mini.pub" -s "$rp_dir/mini.key" >/dev/null 2>&1
mini_seed=$(sed -n 2p "$rp_dir/mini.key" | base64 -d | hex_at 62)
check realprogs.mini.needle "the minisign Ed25519 seed read from the unencrypted secret key" \
	[ "$(printf %s "$mini_seed" | wc -c)" = 64 ]
echo "signed by minisign under secmem" >"$rp_dir/mini.msg"
for rp_mode in none sodium sodium,heap; do
	if [ "$rp_mode" = none ]; then
		prefix=(env) how="without the preload (control)"
	else
		prefix=(secmem-run -v --mode "$rp_mode") how="under secmem-run --mode $rp_mode"
	fi
	rm -f "$rp_dir/mini.fifo" "$rp_dir/mini.sig"
	mkfifo "$rp_dir/mini.fifo"
	timeout 120 "${prefix[@]}" minisign -S -s "$rp_dir/mini.key" -m "$rp_dir/mini.fifo" -x "$rp_dir/mini.sig" \
		>"$rp_dir/mini.out" 2>&1 &
	rp_pid=$!
	# minisign has loaded the key once it waits for a writer on the FIFO.
	wait_for 10 sh -c 'grep -q "^wait_for_partner\|^fifo_open" "/proc/$1/wchan" 2>/dev/null' - "$rp_pid"
	"$rp_dir/kcore-find" "mini.ed25519-seed=$mini_seed" >"$rp_dir/scan.mini.$rp_mode" 2>&1
	result $? "realprogs.mini.$rp_mode.scan" "minisign -S $how, blocked on its message: root scan of /proc/kcore ($(tail -1 "$rp_dir/scan.mini.$rp_mode"))"
	indent <"$rp_dir/scan.mini.$rp_mode"
	timeout 20 sh -c 'cat "$1" >"$2"' - "$rp_dir/mini.msg" "$rp_dir/mini.fifo"
	wait "$rp_pid"
	rc=$?
	cp "$rp_dir/mini.sig" "$rp_dir/mini.msg.minisig" 2>/dev/null
	minisign -V -q -p "$rp_dir/mini.pub" -m "$rp_dir/mini.msg" >/dev/null 2>&1
	result $((rc || $?)) "realprogs.mini.$rp_mode.sign" "minisign -S $how: exit $rc, the signature verifies"
	grep 'secmem-run:\|libsecmem-preload' "$rp_dir/mini.out" | indent
done
check realprogs.mini.control "control: the scan finds the seed in a plain minisign" \
	grep -q 'mini.ed25519-seed found' "$rp_dir/scan.mini.none"
check realprogs.mini.sodium.absent "--mode sodium: the seed is not in kernel RAM while minisign holds it" \
	grep -q 'mini.ed25519-seed absent' "$rp_dir/scan.mini.sodium"
check realprogs.mini.sodium-heap.absent "--mode sodium,heap: the seed is not in kernel RAM" \
	grep -q 'mini.ed25519-seed absent' "$rp_dir/scan.mini.sodium,heap"
