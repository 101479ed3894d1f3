#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# libsecmem-preload and secmem-run against Debian 12's own libcrypto.so.3,
# libsodium.so.23 and libgcrypt.so.20, on the host's backend (memfd_secret
# here; the patched kernel's unmapped memfd in the guest).  TAP on stdout.
#
# Usage: test.sh BUILD_DIR [TAP_FILE]
set -u
build=${1:?usage: test.sh BUILD_DIR [TAP_FILE]}
tap=${2:-}
run=$build/preload/secmem-run
probe=$build/preload/test/preload_probe
gprobe=$build/preload/test/gcrypt_probe
export LD_LIBRARY_PATH=$build/libsecmem
export SECMEM_PRELOAD_LIB=$build/preload/libsecmem-preload.so
n=0 failed=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ -n "$tap" ] || tap=$out/tap

result() {	# result OK NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2${3:+ # $3}"
	fi
}

expect() {	# expect STATUS NAME CMD...
	local want=$1 name=$2 st
	shift 2
	{ "$@" >"$out/o" 2>"$out/e"; } 2>/dev/null
	st=$?
	if [ "$st" = "$want" ]; then
		result 0 "$name"
	else
		result 1 "$name" "status $st, wanted $want: $(tr '\n' ' ' <"$out/e" | cut -c1-300)"
	fi
}

skip() {	# skip NAME REASON
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

grep_err() {	# grep_err NAME PATTERN: in the last command's stderr
	if grep -q -- "$2" "$out/e"; then result 0 "$1"; else
		result 1 "$1" "stderr: $(tr '\n' ' ' <"$out/e" | cut -c1-300)"
	fi
}

{
# The interposition points exist in the Debian binaries: libcrypto calls
# its secure heap through the PLT (JUMP_SLOT) and exports the functions;
# libsodium exports the sodium_malloc family.
crypto=$(ldconfig -p | awk '/libcrypto.so.3 .*x86-64/ {print $NF; exit}')
sodium=$(ldconfig -p | awk '/libsodium.so.23 .*x86-64/ {print $NF; exit}')
for f in CRYPTO_secure_malloc CRYPTO_secure_zalloc CRYPTO_secure_free \
	CRYPTO_secure_clear_free CRYPTO_secure_allocated; do
	objdump -R "$crypto" | grep -q "JUMP_SLOT *$f@" 
	result $? "libcrypto.so.3 calls $f through its PLT (interposable)"
done
for f in CRYPTO_secure_malloc_initialized CRYPTO_secure_actual_size CRYPTO_secure_used; do
	nm -D --defined-only "$crypto" | grep -q " T $f@@OPENSSL_3.0.0"
	result $? "libcrypto.so.3 exports $f (a program's call is interposable)"
done
for f in sodium_malloc sodium_allocarray sodium_free sodium_mprotect_noaccess \
	sodium_mprotect_readonly sodium_mprotect_readwrite; do
	nm -D --defined-only "$sodium" | grep -q " T $f$"
	result $? "libsodium.so.23 exports $f"
done
# libgcrypt allocates through the handlers of gcry_set_allocation_handler()
# and calls none of its allocation functions through its PLT: its own
# secure allocations reach the handlers only, never an interposed symbol.
gcrypt=$(ldconfig -p | awk '/libgcrypt.so.20 .*x86-64/ {print $NF; exit}')
for f in gcry_set_allocation_handler gcry_check_version gcry_malloc_secure \
	gcry_calloc_secure gcry_xmalloc_secure gcry_xcalloc_secure gcry_mpi_snew \
	gcry_malloc gcry_free gcry_control; do
	nm -D --defined-only "$gcrypt" | grep -q " T $f@@GCRYPT_1.6$"
	result $? "libgcrypt.so.20 exports $f@@GCRYPT_1.6"
done
! objdump -R "$gcrypt" | grep -Eq 'JUMP_SLOT +gcry_[a-z_]*(alloc|free|snew|_new)'
result $? "libgcrypt.so.20 calls no allocation function of its own through its PLT"
nm -D --defined-only "$SECMEM_PRELOAD_LIB" | awk '{print $3}' | sort >"$out/exports"
grep -qx 'CRYPTO_secure_malloc' "$out/exports" && grep -qx 'sodium_malloc' "$out/exports" &&
	grep -qx 'gcry_check_version' "$out/exports" &&
	grep -qx 'malloc' "$out/exports" && ! grep -q '^sm_\|^preload_' "$out/exports"
result $? "libsecmem-preload.so exports the interposed functions and no internals"

expect 0 "control: without the preload nothing is secret memory" "$probe" plain
expect 0 "openssl mode: CRYPTO_secure_* and BN_secure_new served by libsecmem" \
	"$run" --mode openssl "$probe" openssl
expect 0 "sodium mode: sodium_malloc semantics on secret memory" \
	"$run" --mode sodium "$probe" sodium
expect 0 "heap mode: malloc family, 4 threads, fork copy, system()" \
	"$run" --mode heap "$probe" heap
expect 0 "all three modes at once" "$run" --mode openssl,sodium,heap "$probe" heap
# fork: OpenSSL's secure heap and libsodium's sodium_malloc() pages are
# inherited by a child, so a worker forked after the keys were loaded
# uses and frees them.  Every mode must keep that (SECMEM_FORK_COPY).
expect 0 "control: fork workers use and free the parent's keys" "$probe" forkkeys
for m in openssl sodium openssl,sodium openssl,sodium,heap; do
	expect 0 "--mode $m: fork workers use and free the parent's keys" \
		timeout 20 "$run" --mode "$m" "$probe" forkkeys
done
# The malloc family's corners, each against glibc without the preload.
torture=$build/preload/test/heap_torture
for t in usable align libc; do
	expect 0 "control: heap_torture $t" "$torture" "$t"
	for m in openssl,sodium heap openssl,sodium,heap; do
		expect 0 "--mode $m: heap_torture $t" \
			timeout 60 "$run" --mode "$m" "$torture" "$t"
	done
done
# Out of secret memory (RLIMIT_MEMLOCK 8 MiB, 256 MiB asked): ENOMEM and
# one warning that says why.  Impossible sizes asked for before (glibc
# fails them too) must not take that warning and fail quietly.
# The shortage needs a memlock limit that binds: libsecmem exempts
# CAP_IPC_LOCK where the running kernel does (memfd_secret on 6.18), so
# root runs this one without the capability.
nolock=()
[ "$(id -u)" = 0 ] && nolock=(setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock)
# shellcheck disable=SC2016 # $0 is for the inner shell
expect 0 "heap mode: impossible sizes and a shortage fail with ENOMEM" \
	"${nolock[@]}" timeout 60 "$run" --mode heap bash -c \
	'ulimit -S -l 8192 2>/dev/null; exec "$0" enomem' "$torture"
grep_err "... the one warning is about the shortage" "allocation of 268435456 bytes failed: RLIMIT_MEMLOCK"
! grep -q "overflows" "$out/e"
result $? "... and not about an impossible size"
# Threads allocating while two others fork and a third runs system().
expect 0 "control: heap_torture forkthreads" "$torture" forkthreads
for m in heap openssl,sodium,heap; do
	expect 0 "--mode $m: fork from threads while threads allocate, system()" \
		timeout 120 "$run" --mode "$m" "$torture" forkthreads
done
expect 0 "control: heap_torture realloc" "$torture" realloc
for m in openssl,sodium heap openssl,sodium,heap; do
	expect 0 "--mode $m: heap_torture realloc" \
		timeout 60 "$run" --mode "$m" "$torture" realloc
done
# libcrypto and libsodium loaded RTLD_LOCAL at run time, as a Python
# extension module's are: a mode that is off must still find them to
# forward their calls (heap mode alone died: "not found").
expect 0 "control: heap_torture dlopen" "$torture" dlopen
for m in heap openssl sodium openssl,sodium openssl,sodium,heap; do
	expect 0 "--mode $m: libcrypto and libsodium dlopen()ed RTLD_LOCAL" \
		timeout 60 "$run" --mode "$m" "$torture" dlopen
done
# SECMEM_PRELOAD_VERBOSE's figures count each allocation once: 20000
# valloc()/pvalloc() calls, a few hundred others (they counted twice).
expect 0 "heap mode: valloc and pvalloc" "$run" -v --mode heap "$torture" valloc
served=$(sed -n 's/.*heap \([0-9]*\), by glibc.*/\1/p' "$out/e")
[ "${served:-0}" -ge 20000 ] && [ "${served:-0}" -lt 21000 ]
result $? "... counted once each in the served figure (${served:-0})"
# A failed dlsym() of the program, then the preload's own first dlsym()
# (forwarding CRYPTO_secure_malloc, openssl mode off), which frees the
# message ld.so allocated from the heap mode: glibc's free() got it.
expect 0 "control: heap_torture dlerror" "$torture" dlerror
for m in heap sodium,heap openssl,heap; do
	expect 0 "--mode $m: the preload's dlsym() after a failed one of the program" \
		timeout 60 "$run" --mode "$m" "$torture" dlerror
done
# openssl or sodium mode with heap mode: the first secure allocation makes
# libsecmem calloc() a run descriptor under its heap lock, which heap mode
# must hand to glibc (it deadlocked on the lock instead).  Under timeouts.
expect 0 "openssl,heap: CRYPTO_secure_* does not deadlock" \
	timeout 20 "$run" --mode openssl,heap "$probe" openssl
expect 0 "sodium,heap: sodium_malloc does not deadlock" \
	timeout 20 "$run" --mode sodium,heap "$probe" sodium
expect 0 "openssl,sodium,heap: both secure families" \
	timeout 20 "$run" --mode openssl,sodium,heap "$probe" openssl
expect 139 "sodium mode: writing past the end hits the guard page (SIGSEGV)" \
	"$run" --mode sodium "$probe" overflow
expect 134 "sodium mode: an overwritten canary aborts sodium_free" \
	"$run" --mode sodium "$probe" underflow
grep_err "sodium mode: the abort says why" "canary overwritten"
expect 139 "sodium mode: sodium_mprotect_noaccess blocks reads" \
	"$run" --mode sodium "$probe" noaccess
expect 139 "sodium mode: sodium_mprotect_readonly blocks writes" \
	"$run" --mode sodium "$probe" readonly

# gcrypt mode: libgcrypt's allocation handlers are libsecmem's, installed
# at the program's first gcry_check_version() (or secure allocation).
expect 0 "control: without the preload libgcrypt's secrets are not libsecmem's" "$gprobe" plain
expect 0 "control: the preload without the gcrypt mode leaves libgcrypt alone" \
	"$run" --mode openssl,sodium "$gprobe" plain
expect 0 "gcrypt mode: gcry_malloc_secure and the rest served by libsecmem" \
	"$run" --mode gcrypt "$gprobe" secure
expect 0 "gcrypt mode: secure MPIs, their limbs grown and made by libgcrypt (powm)" \
	"$run" --mode gcrypt "$gprobe" mpi
expect 0 "gcrypt mode: gcry_pk_genkey, sign, verify; no copy of the private exponent outside libsecmem" \
	"$run" -v --mode gcrypt "$gprobe" genkey
served=$(sed -n 's/.*served openssl [0-9]* sodium [0-9]* gcrypt \([0-9]*\).*/\1/p' "$out/e")
[ "${served:-0}" -gt 100 ]
result $? "... libgcrypt's allocations inside genkey and sign reached libsecmem (${served:-0})"
expect 0 "gcrypt mode: a secure allocation before gcry_check_version" \
	"$run" --mode gcrypt "$gprobe" early
# Against libgcrypt's rules, a secure hash context and secure MPI limbs
# from its own pool before gcry_check_version(): freed and grown through
# the handlers later, without glibc's free() aborting on them.
expect 0 "gcrypt mode: libgcrypt's pool used before gcry_check_version, freed and grown after" \
	timeout 20 "$run" --mode gcrypt "$gprobe" misuse
expect 0 "control: the program's own gcry_set_allocation_handler is used" "$gprobe" ownhandler-control
expect 0 "gcrypt mode: the program's own gcry_set_allocation_handler is not installed" \
	"$run" --mode gcrypt "$gprobe" ownhandler
grep_err "... and that is said" "the program's gcry_set_allocation_handler() is not installed"
for t in secure mpi genkey; do
	expect 0 "--mode gcrypt,heap: gcrypt_probe $t" \
		timeout 60 "$run" --mode gcrypt,heap "$gprobe" "$t"
done
# libgcrypt's pool is mmap()ed: the heap mode alone never reaches it.
expect 4 "heap mode alone: the key stays in libgcrypt's pool (check 4)" \
	"$run" --mode heap "$gprobe" genkey
# FIPS mode: libgcrypt ignores gcry_set_allocation_handler(); the mode
# stops the program at gcry_check_version() instead of protecting nothing.
expect 125 "gcrypt mode, LIBGCRYPT_FORCE_FIPS_MODE: the program is stopped" \
	env LIBGCRYPT_FORCE_FIPS_MODE=1 "$run" --mode gcrypt "$gprobe" secure
grep_err "... saying why" "libgcrypt is in FIPS mode, which ignores gcry_set_allocation_handler()"
expect 0 "control: GCRYCTL_FORCE_FIPS_MODE, then gcry_check_version" "$gprobe" forcefips
expect 125 "gcrypt mode: GCRYCTL_FORCE_FIPS_MODE stops the program at gcry_check_version" \
	"$run" --mode gcrypt "$gprobe" forcefips
[ ! -s "$out/o" ]
result $? "... before it goes on"
grep_err "... saying why" "libgcrypt is in FIPS mode"
expect 0 "FIPS mode without the gcrypt mode: the preload stays out of the way" \
	env LIBGCRYPT_FORCE_FIPS_MODE=1 "$run" --mode openssl,sodium "$gprobe" forcefips
expect 0 "gcrypt mode: a program without libgcrypt runs" "$run" --mode gcrypt true
# gpg and the gpg-agent it starts (which inherits the preload): a key made
# and used through the agent; the agent holds libsecmem memory only with
# the gcrypt mode.
if command -v gpg-agent >/dev/null && command -v gpg >/dev/null; then
	gh=$(mktemp -d /tmp/secmem-gpg.XXXXXX)
	gpgx=(gpg --batch --homedir "$gh" --pinentry-mode loopback --passphrase '')
	for m in gcrypt openssl,sodium; do
		rm -rf "${gh:?}"/* && chmod 700 "$gh"
		expect 0 "--mode $m: gpg --quick-gen-key through gpg-agent" \
			timeout 60 "$run" --mode "$m" "${gpgx[@]}" --quick-gen-key \
			agent@secmem.invalid ed25519 sign never
		echo "a message" >"$gh/msg"
		expect 0 "--mode $m: gpg --detach-sign through gpg-agent" \
			timeout 60 "$run" --mode "$m" "${gpgx[@]}" --detach-sign "$gh/msg"
		expect 0 "... and the signature verifies" "${gpgx[@]}" --verify "$gh/msg.sig" "$gh/msg"
		pid=$(gpg-connect-agent --homedir "$gh" 'GETINFO pid' /bye | awk '/^D/ { print $2 }')
		cat "/proc/${pid:-x}/maps" >"$out/maps" 2>/dev/null
		grep -q libsecmem-preload "$out/maps"
		result $? "--mode $m: the agent runs with the preload"
		if [ "$m" = gcrypt ]; then
			grep -Eq '/secretmem|/memfd:secmem \(deleted\)' "$out/maps"
			result $? "... and holds libsecmem memory"
		else
			! grep -Eq '/secretmem|/memfd:secmem \(deleted\)' "$out/maps"
			result $? "... and holds no libsecmem memory (control)"
		fi
		gpgconf --homedir "$gh" --kill gpg-agent
	done
	rm -rf "$gh"
else
	skip "gpg-agent under --mode gcrypt" "gnupg not installed"
fi

# A real program: OpenSSL reads a private key through its secure heap.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$out/k.pem" 2>/dev/null
expect 0 "openssl pkey reads an EC key under --mode openssl" \
	"$run" -v --mode openssl openssl pkey -in "$out/k.pem" -noout
served=$(sed -n 's/.*served openssl \([0-9]*\).*/\1/p' "$out/e")
[ "${served:-0}" -gt 0 ]
result $? "openssl mode: libcrypto's secure allocations reached libsecmem (${served:-0})"
expect 0 "openssl pkey under --mode heap" "$run" -v --mode heap openssl pkey -in "$out/k.pem" -noout
served=$(sed -n 's/.*heap \([0-9]*\), by glibc \([0-9]*\).*/\1 \2/p' "$out/e")
# shellcheck disable=SC2086 # two numbers, split on purpose
set -- $served
[ "${1:-0}" -gt 1000 ] && [ "${2:-0}" -lt "${1:-0}" ]
result $? "heap mode: the program's allocations are served by libsecmem (${1:-0} secret, ${2:-0} by glibc)"
expect 0 "openssl genpkey under --mode openssl,heap" \
	timeout 60 "$run" --mode openssl,heap openssl genpkey -algorithm EC \
	-pkeyopt ec_paramgen_curve:P-256 -out "$out/k2.pem"

# A libsodium program: minisign keeps its secret key in sodium_malloc()
# memory (it hung under sodium,heap: the deadlock above).
if command -v minisign >/dev/null; then
	echo "a message" >"$out/msg"
	minisign -G -W -p "$out/ms.pub" -s "$out/ms.key" >/dev/null 2>&1 </dev/null
	for m in sodium heap sodium,heap; do
		expect 0 "minisign -S under --mode $m" timeout 60 "$run" --mode "$m" \
			minisign -S -s "$out/ms.key" -m "$out/msg" -x "$out/msg.sig"
		expect 0 "... and the signature verifies" \
			minisign -V -p "$out/ms.pub" -m "$out/msg" -x "$out/msg.sig"
		rm -f "$out/msg.sig"
	done
else
	skip "minisign under sodium, heap, sodium,heap" "minisign not installed"
fi

# secmem-run refuses what would run without protection, clearly.
expect 125 "secmem-run: a statically linked program is refused" "$run" /bin/busybox true
grep_err "secmem-run: ... and the message says why" "statically linked"
# A set-group-ID program (Debian's ssh-agent is setgid _ssh): ld.so runs
# it in secure-execution mode and drops LD_PRELOAD without a word, so
# secmem-run refuses it unless --no-new-privs takes the privilege away.
# A copy of cat, setgid nogroup, in the build tree (not a nosuid mount).
sgid=$build/preload/test/sgid-cat
cp /bin/cat "$sgid" && chgrp nogroup "$sgid" && chmod 2755 "$sgid"
env LD_PRELOAD="$SECMEM_PRELOAD_LIB" "$sgid" /proc/self/maps >"$out/maps" 2>/dev/null
! grep -q libsecmem-preload "$out/maps"
result $? "control: ld.so ignores LD_PRELOAD for a set-group-ID program"
expect 125 "secmem-run: a set-group-ID program is refused" "$run" "$sgid" /proc/self/maps
grep_err "... and the message says why" "is set-group-ID (group 65534): the dynamic loader ignores LD_PRELOAD"
expect 0 "secmem-run --no-new-privs runs it" "$run" --no-new-privs "$sgid" /proc/self/maps
grep -q libsecmem-preload "$out/o"
result $? "... with the preload loaded (its maps show libsecmem-preload.so)"
expect 0 "... and no_new_privs set in it" "$run" -n "$sgid" /proc/self/status
grep -q '^NoNewPrivs:[[:space:]]*1' "$out/o"
result $? "... NoNewPrivs: 1 in its /proc/self/status"
rm -f "$sgid"
expect 125 "secmem-run: an unknown mode is refused" "$run" --mode heapp true
grep_err "secmem-run: ... naming the modes" "openssl, sodium, gcrypt and heap"
expect 127 "secmem-run: a missing command is 127" "$run" no-such-command-here
expect 125 "secmem-run: no command is a usage error" "$run"
expect 125 "a bad SECMEM_PRELOAD_MODE stops the program" \
	env LD_PRELOAD="$SECMEM_PRELOAD_LIB" SECMEM_PRELOAD_MODE=hep true
grep_err "... naming the bad mode" "unknown mode 'hep'"
# A mode list that is set but empty, or has an empty item, protects
# nothing that was asked for: the preload stops the program before main()
# (no output), with a message, and secmem-run refuses the same lists.
for m in '' ',' ',,' 'openssl,,heap' 'heap,' ',heap' ' heap'; do
	expect 125 "SECMEM_PRELOAD_MODE='$m' stops the program before main" \
		env LD_PRELOAD="$SECMEM_PRELOAD_LIB" SECMEM_PRELOAD_MODE="$m" \
		sh -c 'echo ran'
	[ ! -s "$out/o" ]
	result $? "... it did not run"
	grep_err "... and says why" "SECMEM_PRELOAD_MODE='$m': .*openssl, sodium, gcrypt and heap"
	expect 125 "secmem-run --mode '$m' is refused" "$run" --mode "$m" true
	grep_err "... and says why" "mode list '$m': .*openssl, sodium, gcrypt and heap"
done
# Without a backend (memfd_secret and MFD_UNMAPPED refused by a seccomp
# filter), the preload refuses to run the program unprotected.
if command -v setpriv >/dev/null && [ -x "$build/preload/test/nobackend" ]; then
	expect 125 "no secret-memory backend: the preloaded program does not run" \
		"$build/preload/test/nobackend" env LD_PRELOAD="$SECMEM_PRELOAD_LIB" \
		SECMEM_PRELOAD_MODE=heap true
	grep_err "... and says so" "no secret-memory backend"
	expect 125 "no secret-memory backend: secmem-run refuses" \
		"$build/preload/test/nobackend" "$run" true
fi
# secmemctl protect and status with a real preloaded process: systemd is
# played by tests/unit/daemon/fake-systemctl.sh, the unit's cgroup is a
# fake tree listing the probe's pids, /proc is the real one.
ctl=$build/daemon/secmemctl
top=$(cd "$(dirname "$0")/../../.." && pwd)
fs=$out/fake-systemd
mkdir -p "$fs/units" "$fs/unit-dir" "$out/cg/system.slice/probe.service"
export FAKE_SYSTEMD=$fs SECMEMCTL_SYSTEMCTL=$top/tests/unit/daemon/fake-systemctl.sh
unit_desc() {	# unit_desc PROGRAM: a running unit whose ExecStart= is PROGRAM
	printf '%s\n' LoadState=loaded ActiveState=active User= Group= \
		NoNewPrivileges=no ControlGroup=/system.slice/probe.service \
		"ExecStart={ path=$1 ; argv[]=$1 hold ; ignore_errors=no }"
}
ctlx() { "$ctl" --unit-dir "$fs/unit-dir" --cgroup-root "$out/cg" "$@"; }
unit_desc "$probe" >"$fs/units/probe.service"
expect 0 "secmemctl protect: a dynamically linked service is protected" \
	ctlx protect probe --mode heap
grep -qx "Environment=LD_PRELOAD=$SECMEM_PRELOAD_LIB" "$fs/unit-dir/probe.service.d/50-secmem-preload.conf" &&
	grep -qx "Environment=SECMEM_PRELOAD_MODE=heap" "$fs/unit-dir/probe.service.d/50-secmem-preload.conf" &&
	grep -qx "LimitMEMLOCK=256M" "$fs/unit-dir/probe.service.d/50-secmem-preload.conf"
result $? "... the drop-in sets LD_PRELOAD, the mode and LimitMEMLOCK"
# The probe under the preload as the drop-in says, held open by a pipe.
mkfifo "$out/hold-in"
env LD_PRELOAD="$SECMEM_PRELOAD_LIB" SECMEM_PRELOAD_MODE=heap \
	"$probe" hold <"$out/hold-in" >"$out/hold" 2>"$out/hold-err" &
holder=$!
exec 7>"$out/hold-in"
for _ in $(seq 50); do [ -s "$out/hold" ] && break; sleep 0.1; done
read -r ppid cpid <"$out/hold" || true
sleep 0.5	# the child's first refresh after its fork
printf '%s\n' "${ppid:-0}" "${cpid:-0}" >"$out/cg/system.slice/probe.service/cgroup.procs"
expect 0 "secmemctl status --units reads the statistics of the service's processes" ctlx status --units
grep -Eq "^probe.service +heap +256M +active +${ppid:-x} +(memfd-secret|unmapped-memfd) +([0-9]+)" "$out/o" &&
	[ "$(awk -v p="${ppid:-x}" '$5 == p { print $7 }' "$out/o")" -ge 300000 ]
result $? "... the parent: its backend and at least the 300000 bytes it holds ($(tr -s ' ' <"$out/o" | grep " ${ppid:-x} " | cut -c1-120))"
# The child has the parent's 300000 bytes (heap mode copies them) and
# 50000 of its own: more than the parent, so the figures are its own.
awk -v p="${cpid:-x}" '$5 == p && $6 ~ /^(memfd-secret|unmapped-memfd)$/ && $7 >= 350000 { ok = 1 } END { exit !ok }' "$out/o"
result $? "... the forked child: a page of its own, with its own allocations ($(tr -s ' ' <"$out/o" | grep " ${cpid:-x} " | cut -c1-120))"
[ "$(grep -c 'memfd:secmem-stats' "/proc/${cpid:-x}/maps" 2>/dev/null)" = 1 ]
result $? "... the child maps exactly one statistics page"
ctlx status --units --json >"$out/json" 2>"$out/e"
grep -q "{\"unit\":\"probe.service\",\"mode\":\"heap\",\"memlock\":268435456,.*\"processes\":\[{\"pid\":${ppid:-x},\"backend\":\"[a-z-]*\",\"bytes_in_use\":[1-9][0-9]\{5,\}," "$out/json"
result $? "secmemctl status --units --json: the unit, its pid, backend and bytes in use"
# The page holds no secret: the probe's 0x5a bytes are nowhere in it.
l=$(grep 'memfd:secmem-stats' "/proc/${ppid:-x}/maps" | cut -d' ' -f1)
[ -n "$l" ] && od -An -tx1 -v "/proc/${ppid:-x}/map_files/$l" >"$out/page" &&
	grep -q . "$out/page" && ! grep -q '5a 5a 5a 5a' "$out/page"
result $? "the statistics page (read as root through map_files) holds counters, not the secret"
exec 7>&-
wait "$holder"
result $? "the held probe exits cleanly ($(head -c 200 "$out/hold-err"))"
expect 0 "secmemctl unprotect removes the drop-in" ctlx unprotect probe
[ ! -e "$fs/unit-dir/probe.service.d" ]
result $? "... and its directory"
# What protect refuses, with the status that says why.
unit_desc /bin/busybox >"$fs/units/probe.service"
expect 1 "secmemctl protect: a statically linked ExecStart= is refused" ctlx protect probe
grep_err "... and the message says why" "busybox is statically linked: LD_PRELOAD cannot interpose"
sgid=$build/preload/test/sgid-true
cp /bin/true "$sgid" && chgrp nogroup "$sgid" && chmod 2755 "$sgid"
unit_desc "$sgid" >"$fs/units/probe.service"
expect 1 "secmemctl protect: a set-group-ID ExecStart= is refused" ctlx protect probe
grep_err "... naming the way out" "is set-group-ID (group 65534): the dynamic loader ignores LD_PRELOAD.*--no-new-privs"
expect 0 "secmemctl protect --no-new-privs protects it" ctlx protect probe --no-new-privs
grep -qx "NoNewPrivileges=yes" "$fs/unit-dir/probe.service.d/50-secmem-preload.conf"
result $? "... with NoNewPrivileges=yes"
expect 0 "secmemctl unprotect" ctlx unprotect probe
rm -f "$sgid"
unit_desc "$probe" >"$fs/units/probe.service"
if command -v setpriv >/dev/null && [ -x "$build/preload/test/nobackend" ]; then
	expect 3 "secmemctl protect without a secret-memory backend: status 3" \
		"$build/preload/test/nobackend" "$ctl" --unit-dir "$fs/unit-dir" protect probe
	grep_err "... and says so" "this kernel has no secret-memory backend"
	[ ! -e "$fs/unit-dir/probe.service.d" ]
	result $? "... and writes nothing"
fi
SECMEM_PRELOAD_LIB=$out/none expect 1 "secmemctl protect without the preload library" ctlx protect probe
grep_err "... names it" "$out/none: No such file or directory (is libsecmem-preload installed?)"
unset FAKE_SYSTEMD SECMEMCTL_SYSTEMCTL
echo "1..$n"
} | tee "$tap"
[ "$failed" = 0 ] && ! grep -q '^not ok' "$tap" 2>/dev/null
