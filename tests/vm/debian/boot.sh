#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the Debian guest image (mkimage.sh) on a secmem kernel under QEMU.
#
#   boot.sh --kernel BZIMAGE --image IMG --mode demo|check|soak|shell
#           [--log FILE] [--results FILE.tap] [--append "kernel args"]
#
# demo, check and soak start secmem-scenario@MODE.service at boot (the
# kernel command line's systemd.wants=), which prints on the console and
# powers off; the log is then judged by judge.py (exit 0 pass, 1 fail). shell
# boots to a login prompt on the serial console (root, no password);
# Ctrl-A X stops QEMU. Usage errors exit 2.
#
# The disk is attached with snapshot=on: the guest's writes are thrown
# away when QEMU exits, and every boot starts from the image as built.
#
# Environment (defaults in brackets): QEMU [qemu-system-x86_64],
# QEMU_ACCEL [tcg], QEMU_CPU [max], VM_CPUS [2], VM_MEM [2G], VM_NUMA [1]
# NUMA nodes (vm_numa in ../qemu-lib.sh), VM_TIMEOUT [900] seconds before
# QEMU is killed (all but shell), BUILD.
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)

# shellcheck source-path=SCRIPTDIR source=../qemu-lib.sh
. "$here/../qemu-lib.sh"

die() {
	echo "boot: error: $*" >&2
	exit 2
}

kernel=
image=
mode=
log=
results=
append=
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs an argument"
	case $1 in
	--kernel) kernel=$2 ;;
	--image) image=$2 ;;
	--mode) mode=$2 ;;
	--log) log=$2 ;;
	--results) results=$2 ;;
	--append) append=$2 ;;
	*) die "unknown argument '$1'" ;;
	esac
	shift 2
done

[ -f "$kernel" ] || die "kernel '$kernel' does not exist (make kernel-release)"
[ -f "$image" ] || die "image '$image' does not exist (tests/vm/debian/mkimage.sh)"
case $mode in
demo | check | soak | shell) ;;
*) die "--mode demo|check|soak|shell" ;;
esac

qemu_bin=${QEMU:-qemu-system-x86_64}
cpus=${VM_CPUS:-2}
mem=${VM_MEM:-2G}
numa=${VM_NUMA:-1}
vm_positive "$cpus" || die "VM_CPUS=$cpus is not a positive number"
mem_mib=$(vm_mem_mib "$mem") || die "VM_MEM=$mem is not a size like 512M or 2G"
vm_numa "$cpus" "$mem_mib" "$numa" || die "VM_NUMA=$numa is not a number of NUMA nodes that can share $mem_mib MiB"
command -v "$qemu_bin" >/dev/null || die "$qemu_bin not found: apt-get install qemu-system-x86"

# loglevel=5: kernel warnings and worse reach the console (a splat is never
# hidden), the boot chatter does not. KUnit suites built into the kernel
# are not run: this is not their test.
cmdline="console=ttyS0 root=/dev/vda rw rootfstype=ext4 printk.time=1 panic=-1 oops=panic loglevel=5 kunit.enable=0"
if [ "$mode" = shell ]; then
	cmdline="$cmdline systemd.show_status=yes"
else
	# The scenario owns the console: no login prompt in the middle of it,
	# systemd's status only when a job is slow or fails.
	cmdline="$cmdline panic_on_warn=1 systemd.show_status=auto"
	cmdline="$cmdline systemd.wants=secmem-scenario@$mode.service systemd.mask=serial-getty@ttyS0.service"
fi
[ -n "$append" ] && cmdline="$cmdline $append"

qemu=("$qemu_bin" -nodefaults -nographic -no-reboot
	-accel "${QEMU_ACCEL:-tcg}" -cpu "${QEMU_CPU:-max}" -smp "$vm_smp" -m "${mem_mib}M"
	-serial mon:stdio
	-drive "file=$image,format=raw,if=virtio,snapshot=on"
	-kernel "$kernel" -append "$cmdline"
	"${vm_numa_args[@]}")

[ -n "$log" ] || log=${BUILD:-$top/build}/logs/systemd-$mode.log
hint=
[ "$mode" = shell ] && hint="log in as root (no password); 'poweroff' or Ctrl-A X ends the VM"
vm_run "$log" "$hint" \
	"Debian guest, mode $mode, $cpus vCPU(s), $mem_mib MiB, $numa NUMA node(s), accel ${QEMU_ACCEL:-tcg}" \
	"${qemu[@]}"
[ "$mode" = shell ] && exit 0

# The soak's results are soak.ID, the other modes' systemd.ID.
prefix=systemd
[ "$mode" = soak ] && prefix=soak
judge=("$here/judge.py" "$log" --prefix "$prefix")
[ -n "$results" ] && judge+=(--results "$results")
exec "${judge[@]}"
