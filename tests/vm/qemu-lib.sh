# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The QEMU launch that run-vm.sh (test initramfs) and debian/boot.sh (the
# Debian image) share. Sourced, not run.
#
#   vm_positive VALUE
#       true if VALUE is a whole number above 0
#
#   vm_mem_mib SIZE
#       prints SIZE (QEMU syntax: 512M, 1G; a bare number is MiB) in MiB;
#       fails, printing nothing, if it is not such a size above 0
#
#   vm_numa CPUS MEM_MIB NODES
#       sets vm_smp, the -smp value, and the array vm_numa_args, the
#       -object/-numa options, for NODES NUMA nodes (none for 1): one
#       socket per vCPU, so that no cache is shared across nodes (the
#       kernel warns when an LLC spans two nodes); node k gets an equal
#       share of memory (the last one the rest) and the k-th contiguous
#       block of vCPUs; with fewer vCPUs than nodes some nodes are
#       memory-only. Fails if NODES is not a number above 0 or above
#       MEM_MIB.
#
#   vm_run LOG HINT HEADER QEMU-COMMAND...
#       Writes "secmem-vm: <date> HEADER" and the quoted command to LOG
#       (created, with its directory) and to stdout, then runs QEMU with its
#       console on stdout and appended to LOG.
#       HINT not empty: an interactive session; HINT is printed first and
#       QEMU runs as it is, for as long as the user wants.
#       HINT empty: QEMU gets no stdin and is killed after VM_TIMEOUT
#       seconds [900]; a timeout or a failing QEMU is written to LOG as a
#       "secmem-vm: timeout" or "secmem-vm: qemu exited with status" line,
#       which the log checkers fail on, and so is the time QEMU ran.
#       Returns 0 either way: judging the log is the caller's job.

vm_positive() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
	[ "$1" -gt 0 ]
}

vm_mem_mib() {
	local mem=$1 mib
	case $mem in
	*[gG]) mib=${mem%?} && vm_positive "$mib" && mib=$((mib * 1024)) ;;
	*[mM]) mib=${mem%?} ;;
	*) mib=$mem ;;
	esac
	vm_positive "$mib" || return 1
	echo "$mib"
}

# shellcheck disable=SC2034 # vm_smp and vm_numa_args are for the caller
vm_numa() {
	local cpus=$1 mem_mib=$2 numa=$3 k size first last node

	vm_positive "$numa" && [ "$numa" -le "$mem_mib" ] || return 1
	vm_smp=$cpus
	vm_numa_args=()
	[ "$numa" -gt 1 ] || return 0
	vm_smp="$cpus,sockets=$cpus,cores=1,threads=1"
	for ((k = 0; k < numa; k++)); do
		size=$((mem_mib / numa))
		[ "$k" = $((numa - 1)) ] && size=$((mem_mib - size * (numa - 1)))
		first=$((k * cpus / numa))
		last=$(((k + 1) * cpus / numa - 1))
		node="node,nodeid=$k,memdev=mem$k"
		[ "$last" -ge "$first" ] && node="$node,cpus=$first-$last"
		vm_numa_args+=(-object "memory-backend-ram,id=mem$k,size=${size}M" -numa "$node")
	done
}

vm_run() {
	local log=$1 hint=$2 header=$3 timeout_s=${VM_TIMEOUT:-900} start status
	shift 3

	vm_positive "$timeout_s" ||
		{ echo "secmem-vm: error: VM_TIMEOUT=$timeout_s is not a positive number of seconds" >&2 && return 2; }
	mkdir -p "$(dirname "$log")"
	{
		echo "secmem-vm: $(date -u +%Y-%m-%dT%H:%M:%SZ) $header"
		echo "secmem-vm: ${*@Q}"
	} | tee "$log"

	start=$SECONDS
	if [ -n "$hint" ]; then
		echo "secmem-vm: $hint"
		"$@" 2>&1 | tee -a "$log"
		return 0
	fi

	# --foreground keeps qemu in our process group, so Ctrl-C stops it too.
	set +e
	timeout --foreground --kill-after=10 "$timeout_s" "$@" </dev/null 2>&1 | tee -a "$log"
	status=${PIPESTATUS[0]}
	set -e
	if [ "$status" = 124 ] || [ "$status" = 137 ]; then
		echo "secmem-vm: timeout: the guest did not power off within ${timeout_s} s, qemu killed" |
			tee -a "$log"
	elif [ "$status" != 0 ]; then
		echo "secmem-vm: qemu exited with status $status" | tee -a "$log"
	fi
	echo "secmem-vm: qemu ran for $((SECONDS - start)) s, log in $log" | tee -a "$log"
}
