#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a secmem guest kernel with the test initramfs under QEMU.
#
#   run-vm.sh --kernel BZIMAGE --initrd CPIO --mode check|demo|bench|shell
#             [--filter GLOB[,GLOB...]] [--exclude GLOB[,GLOB...]]
#             [--log FILE] [--results FILE.tap]
#             [--append "extra kernel command line"]
#             [--handover LINE]
#
# The serial console goes to stdout and to the log. check, demo and bench
# then judge the log with check-log.py and exit with its status (0: pass,
# 1: fail); shell is interactive and judges nothing. Usage errors exit 2.
# bench (make bench) is judged like demo: no splat, every script passed;
# its figures are read from the log by bench/run.py. --handover LINE
# (check): the log holds two kernels, the first hands over to the second
# (kexec or a crash) after writing LINE to the kernel log; only the second
# kernel's results are judged (check-log.py --handover).
#
# Environment (defaults in brackets):
#   QEMU            QEMU binary [qemu-system-x86_64]
#   QEMU_ACCEL      accelerator [tcg], e.g. kvm
#   QEMU_CPU        CPU model [max]
#   QEMU_MACHINE    machine type [pc; q35 with VM_SWAP or VM_TAR: the pc
#                   machine's ACPI _PRT method loops over every PCI slot,
#                   which under the debug kernel and TCG takes over 20 s
#                   when a PCI disk's interrupt is routed, long enough to
#                   trip the soft lockup detector; q35's _PRT is a table]
#   VM_CPUS         vCPUs [2]
#   VM_MEM          memory, QEMU syntax (512M, 1G; a bare number is MiB) [1G]
#   VM_NUMA         NUMA nodes [1]; more splits memory and vCPUs evenly
#   VM_DIMM         a pc-dimm of this size besides VM_MEM (512M; none if
#                   empty) [], on node 0, in one of 2 memory slots with
#                   room up to VM_MEM + 2G; the guest sees it as hotplugged
#                   memory, offline, and gets secmem.dimm=SIZE
#   VM_SWAP         a scratch virtio disk of this size (256M; none if
#                   empty), /dev/vda in the guest, for hibernation tests:
#                   the guest is told with secmem.swap=/dev/vda, and its
#                   hibernation images are not compressed, so that a scan
#                   of the raw disk sees what was written [none]
#   VM_TAR          a tar archive attached as a read-only virtio disk, after
#                   VM_SWAP's; the guest is told which with secmem.tar=/dev/vdX
#                   and reads it with tar -xf [none]
#   VM_ICOUNT       1: guest time counts instructions (-icount shift=0,
#                   sleep=off: one nanosecond per instruction, the vCPUs
#                   run in turn on one host thread) [0]
#   VM_PREALLOC     1: QEMU allocates all guest memory on the host before
#                   the guest starts (-mem-prealloc), so that no guest
#                   access waits for the host to fault in a page [0]
#   VM_TIMEOUT      seconds before qemu is killed, all but shell [900]
#   VM_TEST_TIMEOUT seconds each guest program may run [300]
#   BUILD           build directory, for the default log [<repo>/build]
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# shellcheck source-path=SCRIPTDIR source=qemu-lib.sh
. "$here/qemu-lib.sh"

die() {
	echo "run-vm: error: $*" >&2
	exit 2
}

usage() {
	sed -n '4,10p' "$0" | sed 's/^# \{0,1\}//'
	echo "See tests/vm/README.md for the environment variables."
}

kernel=
initrd=
mode=
filter=
exclude=
log=
results=
append=
handover=

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	-h | --help)
		usage
		exit 0
		;;
	--kernel | --initrd | --mode | --filter | --exclude | --log | --results | --append | --handover)
		[ $# -ge 2 ] || die "$opt needs an argument"
		val=$2
		shift 2
		;;
	--*=*)
		val=${opt#*=}
		opt=${opt%%=*}
		shift
		;;
	*) die "unknown argument '$opt' (try --help)" ;;
	esac
	case $opt in
	--kernel) kernel=$val ;;
	--initrd) initrd=$val ;;
	--mode) mode=$val ;;
	--filter) filter=$val ;;
	--exclude) exclude=$val ;;
	--log) log=$val ;;
	--results) results=$val ;;
	--append) append=$val ;;
	--handover) handover=$val ;;
	*) die "unknown option '$opt' (try --help)" ;;
	esac
done

[ -n "$kernel" ] || die "--kernel BZIMAGE is required"
[ -n "$initrd" ] || die "--initrd CPIO is required"
[ -f "$kernel" ] || die "kernel $kernel does not exist (build it first)"
[ -f "$initrd" ] || die "initramfs $initrd does not exist (tests/vm/mkinitramfs.sh builds it)"
case $mode in
check | demo | bench | shell) ;;
'') die "--mode check|demo|bench|shell is required" ;;
*) die "unknown mode '$mode' (check, demo, bench or shell)" ;;
esac
case $filter$exclude in
*[[:space:]]*) die "--filter and --exclude take globs separated by commas, no white space" ;;
esac

qemu_bin=${QEMU:-qemu-system-x86_64}
accel=${QEMU_ACCEL:-tcg}
cpu=${QEMU_CPU:-max}
cpus=${VM_CPUS:-2}
mem=${VM_MEM:-1G}
numa=${VM_NUMA:-1}
dimm=${VM_DIMM:-}
swap=${VM_SWAP:-}
tar=${VM_TAR:-}
test_timeout=${VM_TEST_TIMEOUT:-}
icount=${VM_ICOUNT:-0}
prealloc=${VM_PREALLOC:-0}

vm_positive "$cpus" || die "VM_CPUS=$cpus is not a positive number"
vm_positive "$numa" || die "VM_NUMA=$numa is not a positive number"
[ -z "$test_timeout" ] || vm_positive "$test_timeout" ||
	die "VM_TEST_TIMEOUT=$test_timeout is not a positive number of seconds"
case $icount in 0 | 1) ;; *) die "VM_ICOUNT=$icount is not 0 or 1" ;; esac
case $prealloc in 0 | 1) ;; *) die "VM_PREALLOC=$prealloc is not 0 or 1" ;; esac
mem_mib=$(vm_mem_mib "$mem") || die "VM_MEM=$mem is not a size like 512M or 1G"
vm_numa "$cpus" "$mem_mib" "$numa" || die "VM_NUMA=$numa nodes cannot share $mem_mib MiB"
dimm_mib=
if [ -n "$dimm" ]; then
	case $dimm in
	*[gG]) dimm_mib=$((${dimm%?} * 1024)) ;;
	*[mM]) dimm_mib=${dimm%?} ;;
	*) dimm_mib=$dimm ;;
	esac
	# Hotplugged memory comes in memory blocks of 128 MiB on x86-64.
	if ! vm_positive "$dimm_mib" || [ $((dimm_mib % 128)) != 0 ]; then
		die "VM_DIMM=$dimm is not a size like 512M or 1G in whole 128 MiB memory blocks"
	fi
	[ "$dimm_mib" -le 2048 ] || die "VM_DIMM=$dimm is more than the 2G of room for hotplugged memory"
fi
swap_mib=
if [ -n "$swap" ]; then
	swap_mib=$(vm_mem_mib "$swap") || die "VM_SWAP=$swap is not a size like 256M or 1G"
fi
[ -z "$tar" ] || [ -f "$tar" ] || die "VM_TAR=$tar is not a file"
command -v "$qemu_bin" >/dev/null || die "$qemu_bin not found: apt-get install qemu-system-x86"

cmdline="console=ttyS0 printk.time=1 panic=-1 oops=panic panic_on_warn=1 secmem.mode=$mode"
# KUnit suites run at boot only where they are judged: check mode. A demo
# or a shell should not wait for the allocator stress tests. (--append comes
# last and wins: make bench adds kunit.enable=1 with a kunit.filter_glob.)
if [ "$mode" = check ]; then
	cmdline="$cmdline kunit.enable=1"
else
	cmdline="$cmdline kunit.enable=0"
fi
[ -n "$filter" ] && cmdline="$cmdline secmem.filter=$filter"
[ -n "$exclude" ] && cmdline="$cmdline secmem.exclude=$exclude"
[ -n "$test_timeout" ] && cmdline="$cmdline secmem.timeout=$test_timeout"
# Tells the guest tests a DIMM is there to be found: without one they skip,
# with this they fail when it is missing.
[ -n "$dimm_mib" ] && cmdline="$cmdline secmem.dimm=${dimm_mib}M"
# no_console_suspend: a crash while the image is made is otherwise silent.
[ -n "$swap_mib" ] && cmdline="$cmdline secmem.swap=/dev/vda hibernate=nocompress no_console_suspend"
if [ -n "$tar" ]; then
	if [ -n "$swap_mib" ]; then
		cmdline="$cmdline secmem.tar=/dev/vdb"
	else
		cmdline="$cmdline secmem.tar=/dev/vda"
	fi
fi
[ -n "$append" ] && cmdline="$cmdline $append"

if [ -n "$swap_mib$tar" ]; then
	machine=${QEMU_MACHINE:-q35}
else
	machine=${QEMU_MACHINE:-pc}
fi

qemu=("$qemu_bin" -nodefaults -nographic -no-reboot -machine "$machine"
	-accel "$accel" -cpu "$cpu" -smp "$vm_smp" -m "${mem_mib}M"
	-serial mon:stdio
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline")

# A cold-plugged pc-dimm: outside the boot memory map, described by ACPI
# (a memory device, hotpluggable in SRAT), added by the kernel's ACPI memory
# hotplug driver during boot and left offline (MHP_DEFAULT_ONLINE_TYPE_OFFLINE)
# like memory hot-added later. Two slots and VM_MEM + 2G of room, so that a
# test could hot-add more through the monitor.
if [ -n "$dimm_mib" ]; then
	for ((k = 0; k < ${#qemu[@]}; k++)); do
		[ "${qemu[k]}" = -m ] && qemu[k + 1]="${mem_mib}M,slots=2,maxmem=$((mem_mib + 2048))M"
	done
	qemu+=(-object "memory-backend-ram,id=dimm0,size=${dimm_mib}M"
		-device "pc-dimm,id=dimm0,memdev=dimm0")
fi

icount_note=""
prealloc_note=""
if [ "$icount" = 1 ]; then
	qemu+=(-icount "shift=0,sleep=off")
	icount_note=", icount"
fi
if [ "$prealloc" = 1 ]; then
	qemu+=(-mem-prealloc)
	prealloc_note=" preallocated"
fi

# NUMA nodes (VM_NUMA): vm_numa in qemu-lib.sh.
qemu+=("${vm_numa_args[@]}")

# A scratch disk (VM_SWAP), sparse, gone when the VM is.
if [ -n "$swap_mib" ]; then
	swap_dir=$(mktemp -d "${TMPDIR:-/tmp}/secmem-swap.XXXXXX")
	trap 'rm -rf "$swap_dir"' EXIT
	truncate -s "${swap_mib}M" "$swap_dir/swap.img"
	qemu+=(-drive "file=$swap_dir/swap.img,if=virtio,format=raw,cache=unsafe")
fi

# The tar disk (VM_TAR), read-only, after the scratch disk.
[ -n "$tar" ] && qemu+=(-drive "file=$tar,if=virtio,format=raw,readonly=on")

[ -n "$log" ] || log=${BUILD:-$top/build}/logs/vm-$mode.log
hint=
[ "$mode" = shell ] && hint="interactive shell; exit it (or press Ctrl-A X) to stop the VM"
vm_run "$log" "$hint" \
	"mode $mode, $cpus vCPU(s), ${mem_mib} MiB${prealloc_note}${dimm_mib:+ + a ${dimm_mib} MiB DIMM}${swap_mib:+, a ${swap_mib} MiB scratch disk}, $numa NUMA node(s), accel $accel${icount_note}" \
	"${qemu[@]}"
[ "$mode" = shell ] && exit 0

check=("$here/check-log.py" --mode "$mode" "$log")
[ -n "$results" ] && check+=(--results "$results")
[ -n "$handover" ] && check+=(--handover "$handover")
exec "${check[@]}"
