#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The driver of `make bench` (bench/README.md, docs/PERFORMANCE.md).

    run.py [--vcpus 2,4] [--runs 5] [--icount-runs 3] [--scale-runs 5]
           [--scale-mib 16] [--no-lockstat] [--mem 2G]
           [--only kernel|userspace] [--alloc-runs N] [--parse-only]

Boots the stock and the patched release kernel (same config, same QEMU
settings: TCG, -cpu max) with tests/vm/run-vm.sh --mode bench, once per run
and vCPU count, each boot running the kernel cases of
bench/guest/bench.d/10-kernel once on a freshly booted kernel (so that
every run of stock.memfd_secret starts from an unsplit direct map and every
cold pool is really empty). Patched boots also run the mermap KUnit case
mermap_test_cost (kunit.enable=1, kunit.filter_glob), whose console line
gives the mermap figures. Then --icount-runs more boots per kernel at the
first vCPU count run the same cases under QEMU -icount (guest time counts
instructions), for instruction counts that the host's load cannot change.
Then --scale-runs boots per kernel with 8 vCPUs on two NUMA nodes run
bench/guest/bench.d/30-scale (1 to 8 threads faulting their own files at
once; alloc_bench's _t1 to _t8 on the patched kernel), and one boot of the
patched lockstat kernel reads /proc/lock_stat under the same load.
Every boot preallocates the guest's memory on the host (-mem-prealloc).
Then alloc_bench runs on the host and, in one more patched boot per vCPU
count, in the guest.

Each figure is the median of the runs; min, max and every value are in
meta.spread. Writes $BUILD/bench/results.json, results.md and results.png
(gnuplot) and prints the tables. Exit status: 0 when every boot passed and
every figure was measured, 1 otherwise (a missed performance target is
reported, never an error), 2 on usage errors.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.environ.get("BUILD") or os.path.join(TOP, "build"))
OUT = os.path.join(BUILD, "bench")
LOGS = os.path.join(OUT, "logs")
RUN_VM = os.path.join(TOP, "tests", "vm", "run-vm.sh")
INITRD = os.path.join(OUT, "initramfs.cpio.gz")
ALLOC_BENCH = os.path.join(OUT, "alloc_bench")

FLAVORS = ("stock", "patched")
KERNEL_CASES = (
    "stock.memfd", "stock.memfd_secret",
    "patched.memfd", "patched.memfd_secret",
    "patched.memfd_unmapped_cold", "patched.memfd_unmapped_warm",
    "patched.memfd_unmapped_refill",
)
# Not targets, measured beside them (meta.supplementary): secretmem with an
# empty pool, and the warm and refill cases with the mermap's deferred
# flush (flush_on_free=deferred).
SUPPLEMENT_CASES = ("patched.memfd_secret_cold", "patched.memfd_unmapped_warm_deferred",
                    "patched.memfd_unmapped_refill_deferred")
# Supplementary too: write() then read() of MFD_UNMAPPED from a filled pool
# (fault_bench read --pool warm) in both flush modes, allocations and
# mermap copies alternating.
SUPPLEMENT_READ_CASES = ("patched.memfd_unmapped_rw_warm",
                         "patched.memfd_unmapped_rw_warm_deferred")
# The rows of results.md's "flush_on_free: immediate vs deferred" table:
# (case, section, flush_on_free).
FLUSH_MODE_ROWS = (("patched.memfd_unmapped_warm", "kernel", "immediate"),
                   ("patched.memfd_unmapped_warm_deferred", "kernel", "deferred"),
                   ("patched.memfd_unmapped_refill", "kernel", "immediate"),
                   ("patched.memfd_unmapped_refill_deferred", "kernel", "deferred"),
                   ("patched.memfd_unmapped_rw_warm", "read", "immediate"),
                   ("patched.memfd_unmapped_rw_warm_deferred", "read", "deferred"))
KERNEL_FIGURES = ("fault_mib_s", "tlb_flushes_per_mib", "directmap4k_kib_per_gib",
                  "alloc_p99_us")
# Also printed by fault_bench; kept in meta.kernel_extra.
KERNEL_EXTRA = ("call_ipis_per_mib", "ipi_bound_flushes_per_mib", "nr_tlb_remote_flush_per_mib",
                "nr_tlb_remote_flush_received_per_mib", "nr_tlb_kernel_flush_per_mib",
                "tlb_ipis_per_mib",
                "directmap2m_kib_per_gib", "alloc_p50_us", "alloc_p999_us",
                "alloc_max_us", "fault_seconds", "clock_gettime_ns",
                "unmapped_block_unmap", "unmapped_alloc_pool", "unmapped_alloc_convert",
                "unmapped_alloc_fail", "unmapped_tlb_flush", "unmapped_mermap_flush",
                "unmapped_alloc_prezeroed", "unmapped_tlb_flushes_per_mib",
                "mermap_flushes_per_mib", "direct_map_2m_splits", "direct_map_1g_splits",
                "local_flush_all_per_fault", "local_flush_one_per_fault", "pgfaults_per_page",
                "timer_irqs_per_s", "resched_ipis", "own_switches", "switches_per_s")
# KVM guest_memfd population (fault_bench fault guest_memfd[_nodm]): a
# software-protected VM's private memory, populated a page at a time with
# KVM_PRE_FAULT_MEMORY, mapped (stock and patched) and outside the direct
# map (GUEST_MEMFD_FLAG_NO_DIRECT_MAP, patched) with a filled and an empty pool.
GMEM_CASES = ("stock.guest_memfd", "patched.guest_memfd",
              "patched.guest_memfd_nodm_warm", "patched.guest_memfd_nodm_cold")
GMEM_FIGURES = ("fault_mib_s", "tlb_flushes_per_mib", "directmap4k_kib_per_gib",
                "alloc_p99_us")
# What the series costs everyone else (issue 21): private anonymous memory
# in 4 KiB pages and in THPs, fork()+exit() of a 64 MiB process, and the
# page allocator itself (bench/kmod/page_alloc_bench.ko: GFP_KERNEL
# alloc+free at order 0 and 9, in pairs and in batches, ns per pair).
PAGE_ALLOC_FIGURES = ("order0_pair_ns", "order0_batch_ns", "order9_pair_ns",
                      "order9_batch_ns")
OTHER_KINDS = ("anon", "anon_thp", "fork_exit", "page_alloc")
OTHER_FIGURES = {"anon": ("fault_mib_s", "alloc_p50_us"),
                 "anon_thp": ("fault_mib_s", "thp_faults"),
                 "fork_exit": ("fork_exit_us", "forks_per_s"),
                 "page_alloc": PAGE_ALLOC_FIGURES}
# The figures of each kind held to "within noise" of the stock kernel.
OTHER_TARGET_FIGURES = {"anon": ("fault_mib_s",), "anon_thp": ("fault_mib_s",),
                        "fork_exit": ("fork_exit_us",), "page_alloc": PAGE_ALLOC_FIGURES}
# Kept in meta.kernel_extra for those cases, besides KERNEL_EXTRA.
OTHER_EXTRA = ("fork_exit_p99_us", "local_flush_all_per_round", "local_flush_one_per_round",
               "nr_tlb_remote_flush_per_round", "nr_tlb_kernel_flush_per_round",
               "call_ipis_per_round", "switches_per_round")
READ_CASES = ("patched.memfd", "patched.memfd_unmapped")
READ_FIGURES = ("read_mib_s",)
# Also printed by fault_bench read (the write() fill is timed too, and the
# unmapped allocator's global flushes and the mermap's local ones are
# counted per MiB of each phase); kept in meta.read_extra, and for the
# supplementary read cases in meta.supplementary.
READ_EXTRA = ("read_seconds", "write_mib_s", "write_seconds",
              "write_unmapped_tlb_flushes_per_mib", "write_mermap_flushes_per_mib",
              "read_unmapped_tlb_flushes_per_mib", "read_mermap_flushes_per_mib")
# Names in results.json <- fields of the "mermap_cost:" line.
MERMAP_FIGURES = (("mermap_pair_ns", "pair_immediate_ns"),
                  ("mermap_pair_deferred_ns", "pair_deferred_ns"),
                  ("mermap_wrap_flush_ns", "wrap_flush_ns"),
                  ("memcpy4k_ns", "memcpy4k_ns"),
                  ("flush_one_memcpy4k_ns", "flush_one_memcpy4k_ns"),
                  ("flush_local_memcpy4k_ns", "flush_local_memcpy4k_ns"),
                  ("clear_page_ns", "clear_page_ns"),
                  ("clear_mermap_ns", "clear_mermap_ns"),
                  ("clear_mermap_slot_ns", "clear_mermap_slot_ns"))
# Scaling (issue 21, bench/guest/bench.d/30-scale): boots with SCALE_VCPUS
# vCPUs on SCALE_NODES NUMA nodes, N threads faulting their own files at
# once. fault_mib_s_tN: all threads' MiB / wall time; thread_mib_s_tN: the
# median thread's own rate; flushes_per_mib_tN: patched kernel only.
SCALE_VCPUS = 8
SCALE_NODES = 2
SCALE_THREADS = (1, 2, 4, 8)
SCALE_CASES = ("stock.scale_memfd", "stock.scale_memfd_secret", "patched.scale_memfd",
               "patched.scale_memfd_unmapped_warm", "patched.scale_memfd_secret_warm")
SCALE_FIGURES = tuple(f"{f}_t{n}" for f in ("fault_mib_s", "thread_mib_s") for n in SCALE_THREADS)
# alloc_bench in the patched scaling boots: ns per 64-byte alloc+free pair
# as each of N threads sees it.
SCALE_ALLOCATORS = ("libsecmem", "openssl_secure", "glibc_malloc")
SCALE_ALLOC_FIGURES = tuple(f"alloc_free_ns_64_t{n}" for n in SCALE_THREADS)
USER_FIGURES = ("alloc_free_ns_32", "alloc_free_ns_64", "alloc_free_ns_256",
                "alloc_free_ns_4096", "alloc_free_ns_64_pair", "alloc_free_ns_64_t1",
                "alloc_free_ns_64_t2", "live_32b_max", "mappings",
                "rss_bytes_per_secret")

FIGURE_RE = re.compile(r"secmem-bench: case=(\S+) figure=(\S+) value=(\S+)")
FLAVOR_RE = re.compile(r"secmem-bench: flavor=(\w+) cpus=(\d+)")
NOTE_RE = re.compile(r"secmem-bench: (note|skip|error)\b(.*)")
JSON_RE = re.compile(r"^secmem-bench: userspace-json: ?(.*)$")
LOCKSTAT_RE = re.compile(r"secmem-bench: lockstat case=(\S+) threads=(\d+) class=(\S+) "
                         r"contentions=(\d+) waittime_total_us=([\d.]+) acquisitions=(\d+)")
MERMAP_RE = re.compile(r"mermap_cost: pair_immediate_ns=(\d+) pair_deferred_ns=(\d+) "
                       r"wrap_flush_ns=(\d+) memcpy4k_ns=(\d+) "
                       r"flush_one_memcpy4k_ns=(\d+) flush_local_memcpy4k_ns=(\d+) "
                       r"clear_page_ns=(\d+) clear_mermap_ns=(\d+) clear_mermap_slot_ns=(\d+)")
VERSION_RE = re.compile(r"\] Linux version (\S+) .*?(#\d+ .*?)\s*$")
ANSI_RE = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|[@-Z\\-_c])")
TIMESTAMP_RE = re.compile(r"^\[\s*\d+\.\d+\] ?")

# mermap.mermap_test_cost and unmapped.unmapped_test_refill_cost
KUNIT_APPEND = "kunit.enable=1 kunit.filter_glob=*.*_cost"
REFILL_RE = re.compile(r"refill_batch_us=(\d+) blocks=(\d+)")
# From unmapped_test_refill_cost: one refill batch of the pool worker.
REFILL_FIGURES = ("refill_batch_us", "refill_batch_blocks")

# The instruction-count boots (--icount-runs, QEMU -icount shift=0,sleep=off:
# one nanosecond of guest time per instruction executed). Every case of the
# wall-clock boots, its figures turned into instructions:
#   ins_per_fault      instructions per 4 KiB page of the whole fault-in
#                      loop (the user's store, the fault, two clock_gettime)
#   ins_per_fault_p50  median instructions of one first touch
#   ins_per_read_page  instructions per 4 KiB page of read()
#   ins_per_fork       instructions per fork()+exit() round
#   ins_orderN_KIND    instructions per alloc+free of page_alloc_bench
ICOUNT_CASES = (KERNEL_CASES[:2] + ("stock.guest_memfd",) + KERNEL_CASES[2:]
                + SUPPLEMENT_CASES + GMEM_CASES[1:]
                + tuple(f"{f}.{k}" for k in OTHER_KINDS for f in FLAVORS))
ICOUNT_FIGURES = ("ins_per_fault", "ins_per_fault_p50")
# The icount figures of the cases that are not a fault-in loop.
ICOUNT_KIND_FIGURES = {"fork_exit": ("ins_per_fork",), "anon_thp": ("ins_per_fault",),
                       "page_alloc": tuple("ins_" + f[:-3] for f in PAGE_ALLOC_FIGURES)}
ICOUNT_READ_CASES = READ_CASES
# Pairs whose instruction counts should agree: what the series costs a
# program that does not use it (issue 21: within 1%).
ICOUNT_PAIRS = (("stock.memfd", "patched.memfd"),
                ("stock.guest_memfd", "patched.guest_memfd")) \
    + tuple((f"stock.{k}", f"patched.{k}") for k in OTHER_KINDS)


def icount_figure(figure, value):
    """(name, instructions) for a figure of an -icount boot, or None."""
    if figure == "fault_mib_s" and value > 0:
        return "ins_per_fault", 1e9 / (value * 256)
    if figure == "alloc_p50_us":
        return "ins_per_fault_p50", value * 1000
    if figure == "read_mib_s" and value > 0:
        return "ins_per_read_page", 1e9 / (value * 256)
    if figure == "fork_exit_us":
        return "ins_per_fork", value * 1000
    if figure in PAGE_ALLOC_FIGURES:
        return "ins_" + figure[:-3], value
    return None


def say(msg):
    print(f"bench: {msg}", flush=True)


def vkey(vcpus):
    return f"vcpus_{vcpus}"


# --- booting ----------------------------------------------------------------

def bzimage(flavor, variant="release"):
    return os.path.join(BUILD, "kernel", f"{flavor}-{variant}", "arch", "x86", "boot", "bzImage")


def snapshot(flavor, variant="release"):
    """The copy every boot of a run uses, so that a kernel rebuilt while the
    benchmark runs (make kernel-release elsewhere) cannot change it midway."""
    return os.path.join(OUT, "kernels", f"{flavor}-{variant}-bzImage")


def take_snapshots(kernels):
    os.makedirs(os.path.join(OUT, "kernels"), exist_ok=True)
    for f, v in kernels:
        shutil.copyfile(bzimage(f, v), snapshot(f, v) + ".tmp")
        os.replace(snapshot(f, v) + ".tmp", snapshot(f, v))
        keyfile = os.path.join(BUILD, "kernel", f"{f}-{v}", ".secmem-key")
        key = open(keyfile).read().strip() if os.path.exists(keyfile) else ""
        with open(snapshot(f, v) + ".key", "w") as k:
            k.write(key + "\n")


class Boot:
    def __init__(self, flavor, vcpus, what, run, icount=False):
        self.flavor = flavor
        self.vcpus = vcpus
        self.what = what            # "kernel", "userspace", "scale" or "lockstat"
        self.run = run
        self.icount = icount        # QEMU -icount: guest time = instructions
        name = f"{flavor}-{vcpus}cpu-{what}" + ("-icount" if icount else "") \
            + (f"-run{run}" if run else "")
        self.name = name
        self.log = os.path.join(LOGS, name + ".log")
        self.out = os.path.join(LOGS, name + ".out")
        self.status = None
        self.seconds = None

    def command(self, args):
        # nohz=off: no nohz idle-balance kicks (function-call IPIs) to
        # blur the shootdown count; the same for both kernels.
        append = ["nohz=off", f"secmem.bench={self.what}", f"secmem.bench_mib={args.mib}",
                  f"secmem.bench_gmem_mib={args.gmem_mib}"]
        if self.what == "kernel" and self.flavor == "patched":
            append.append(KUNIT_APPEND)
        if self.what in ("scale", "lockstat"):
            # The patched lockstat kernel runs 30-scale's lock statistics.
            append[1] = "secmem.bench=scale"
            append.append(f"secmem.bench_scale_mib={args.scale_mib}")
        if self.what == "userspace":
            extra = ["--quick"] if args.alloc_quick else []
            if args.alloc_runs:
                extra += ["--runs", str(args.alloc_runs)]
            if extra:
                append.append("secmem.bench_alloc_args=" + ",".join(extra))
        variant = "lockstat" if self.what == "lockstat" else "release"
        return [RUN_VM, "--kernel", snapshot(self.flavor, variant), "--initrd", INITRD,
                "--mode", "bench", "--log", self.log, "--append", " ".join(append)]

    def execute(self, args):
        env = dict(os.environ, BUILD=BUILD, QEMU_ACCEL="tcg", QEMU_CPU="max",
                   VM_CPUS=str(self.vcpus), VM_MEM=args.mem,
                   VM_NUMA=str(SCALE_NODES) if self.what in ("scale", "lockstat") else "1",
                   VM_ICOUNT="1" if self.icount else "0",
                   # All guest memory backed on the host before the guest
                   # starts: otherwise a case that touches memory no earlier
                   # case did waits for the host to fault it in, and the
                   # order of the cases changes their wall-clock figures.
                   VM_PREALLOC="1")
        if self.what == "userspace":
            env.update(VM_TIMEOUT="1500", VM_TEST_TIMEOUT="1400")
        else:
            env.update(VM_TIMEOUT="900", VM_TEST_TIMEOUT="800")
        start = time.monotonic()
        with open(self.out, "w") as out:
            self.status = subprocess.call(self.command(args), stdout=out,
                                          stderr=subprocess.STDOUT, env=env)
        self.seconds = time.monotonic() - start


# --- reading the logs -----------------------------------------------------------

class Samples:
    """value lists keyed by (section, vcpus, case, figure)."""

    def __init__(self):
        self.values = {}
        self.problems = []
        self.notes = []
        self.versions = {}
        self.userspace = {}          # "guest_vcpus_N" -> alloc_bench JSON
        self.scale_alloc = []        # alloc_bench JSON of each scaling boot
        self.lockstat = {}           # case -> lock classes, most contended first

    def add(self, section, vcpus, case, figure, value):
        self.values.setdefault((section, vcpus, case, figure), []).append(value)

    def get(self, section, vcpus, case, figure):
        return self.values.get((section, vcpus, case, figure), [])


def clean_lines(path):
    with open(path, "rb") as f:
        data = f.read().decode("utf-8", errors="replace")
    for raw in data.split("\n"):
        yield ANSI_RE.sub("", raw).replace("\r", "").replace("\0", "")


def parse_boot(boot, samples):
    if not os.path.exists(boot.log):
        samples.problems.append(f"{boot.name}: no log ({boot.log})")
        return
    flavor_seen = None
    json_lines = []
    mermap = None
    for line in clean_lines(boot.log):
        text = TIMESTAMP_RE.sub("", line)
        m = VERSION_RE.search(line)
        if m:
            version = f"{m.group(1)} {m.group(2)}"
            seen = samples.versions.setdefault(
                boot.flavor + ("-lockstat" if boot.what == "lockstat" else ""), version)
            if seen != version:
                samples.problems.append(f"{boot.name}: booted {boot.flavor} kernel {version}, "
                                        f"earlier boots {seen}")
        m = FLAVOR_RE.search(text)
        if m:
            flavor_seen = m.group(1)
            if int(m.group(2)) != boot.vcpus:
                samples.problems.append(f"{boot.name}: the guest has {m.group(2)} CPUs")
        m = MERMAP_RE.search(text)
        if m:
            mermap = [int(x) for x in m.groups()]
        m = REFILL_RE.search(text)
        if m and not boot.icount:
            samples.add("mermap", boot.vcpus, "mermap", "refill_batch_us", float(m.group(1)))
            samples.add("mermap", boot.vcpus, "mermap", "refill_batch_blocks",
                        float(m.group(2)))
        m = LOCKSTAT_RE.search(text) if boot.what == "lockstat" else None
        if m:
            samples.lockstat.setdefault(m.group(1), []).append(
                {"class": m.group(3), "threads": int(m.group(2)), "contentions": int(m.group(4)),
                 "waittime_total_us": float(m.group(5)), "acquisitions": int(m.group(6))})
            continue
        if boot.what == "lockstat":
            # Its fault_bench figures ran under lockdep: not comparable.
            if NOTE_RE.search(text):
                samples.notes.append(f"{boot.name}: {NOTE_RE.search(text).group(0)}")
            continue
        m = FIGURE_RE.search(text) if boot.what == "scale" else None
        if m:
            try:
                samples.add("scale", boot.vcpus, m.group(1), m.group(2), float(m.group(3)))
            except ValueError:
                samples.problems.append(f"{boot.name}: bad value in: {text}")
            continue
        m = FIGURE_RE.search(text) if boot.icount else None
        if m:
            try:
                conv = icount_figure(m.group(2), float(m.group(3)))
            except ValueError:
                conv = None
                samples.problems.append(f"{boot.name}: bad value in: {text}")
            if not m.group(1).startswith(boot.flavor + "."):
                samples.problems.append(f"{boot.name}: case {m.group(1)} on the "
                                        f"{boot.flavor} kernel")
            elif conv:
                samples.add("icount", boot.vcpus, m.group(1), conv[0], conv[1])
            continue
        m = JSON_RE.match(text)
        if m:
            json_lines.append(m.group(1))
            continue
        m = FIGURE_RE.search(text)
        if m:
            case, figure, value = m.groups()
            try:
                v = float(value)
            except ValueError:
                samples.problems.append(f"{boot.name}: bad value in: {text}")
                continue
            if not case.startswith(boot.flavor + "."):
                msg = f"{boot.name}: case {case} on the {boot.flavor} kernel"
                if msg not in samples.problems:
                    samples.problems.append(msg)
                continue
            section = "read" if figure.startswith(("read_", "write_")) else \
                "gmem" if ".guest_memfd" in case else \
                "others" if case.split(".", 1)[-1] in OTHER_KINDS else "kernel"
            samples.add(section, boot.vcpus, case, figure, v)
            continue
        m = NOTE_RE.search(text)
        if m:
            samples.notes.append(f"{boot.name}: {m.group(1)}{m.group(2)}")
    if boot.what in ("kernel", "scale", "lockstat") and flavor_seen != boot.flavor:
        samples.problems.append(f"{boot.name}: the guest reported flavor {flavor_seen}, "
                                f"expected {boot.flavor}")
    if boot.what == "kernel" and boot.flavor == "patched":
        section = "mermap_icount" if boot.icount else "mermap"
        if mermap is None:
            samples.problems.append(f"{boot.name}: no 'mermap_cost:' line from KUnit")
        else:
            for (name, _), v in zip(MERMAP_FIGURES, mermap):
                samples.add(section, boot.vcpus, "mermap", name, float(v))
    if boot.what == "lockstat" and not samples.lockstat:
        samples.problems.append(f"{boot.name}: no 'secmem-bench: lockstat' lines")
    if boot.what == "scale" and boot.flavor == "patched":
        try:
            samples.scale_alloc.append(json.loads("\n".join(json_lines)) if json_lines else None)
        except ValueError as e:
            samples.problems.append(f"{boot.name}: alloc_bench JSON unreadable: {e}")
    if boot.what == "userspace":
        if not json_lines:
            samples.problems.append(f"{boot.name}: no alloc_bench JSON in the log")
        else:
            try:
                samples.userspace[f"guest_{vkey(boot.vcpus)}"] = json.loads("\n".join(json_lines))
            except ValueError as e:
                samples.problems.append(f"{boot.name}: alloc_bench JSON unreadable: {e}")


# --- statistics and output -----------------------------------------------------------

def rnd(v):
    if v is None:
        return None
    if v == int(v) and abs(v) < 1e15:
        return int(v)
    a = abs(v)
    digits = 1 if a >= 100 else 2 if a >= 1 else 4
    return round(v, digits)


def summary(values):
    if not values:
        return None
    return {"median": rnd(statistics.median(values)), "min": rnd(min(values)),
            "max": rnd(max(values)), "runs": len(values), "values": [rnd(v) for v in values]}


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float) and v != int(v):
        a = abs(v)
        return f"{v:.1f}" if a >= 100 else f"{v:.2f}" if a >= 1 else f"{v:.3f}"
    return f"{int(v)}"


def fmt_spread(s):
    if s is None:
        return "-"
    if s["runs"] == 1 or s["min"] == s["max"]:
        return fmt(s["median"])
    return f"{fmt(s['median'])} ({fmt(s['min'])}–{fmt(s['max'])})"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def record(res, spread, missing, section, vk, case, fig, s):
    """One summarized figure into res and spread; a missing one is named."""
    if s is None:
        missing.append(f"{section} {vk} {case} {fig}")
    res[section][vk][case][fig] = s["median"] if s else None
    spread[section][vk][case][fig] = s


def build_results(args, samples, boots, host_json, started):
    res = {"kernel": {}, "gmem": {}, "others": {}, "read": {}, "mermap": {}, "icount": {},
           "mermap_icount": {}, "scale": {}, "userspace": {}, "meta": {}}
    spread = {"kernel": {}, "gmem": {}, "others": {}, "read": {}, "mermap": {}, "icount": {},
              "mermap_icount": {}, "scale": {}}
    extra = {}
    read_extra = {}
    supplement = {}
    missing = []

    def summaries(section, vcpus, case, figs):
        """The summary of each of @figs that @case has samples of."""
        return {fig: summary(samples.get(section, vcpus, case, fig))
                for fig in figs if samples.get(section, vcpus, case, fig)}

    def add_supplementary(section, vcpus, cases, figs):
        vk = vkey(vcpus)
        for case in cases:
            figures = summaries(section, vcpus, case, figs)
            if figures:
                supplement[vk][case] = figures
            else:
                missing.append(f"{section} {vk} {case} (supplementary)")

    for vcpus in args.vcpus:
        vk = vkey(vcpus)
        if args.only in (None, "kernel"):
            res["kernel"][vk], spread["kernel"][vk], extra[vk] = {}, {}, {}
            for case in KERNEL_CASES:
                res["kernel"][vk][case], spread["kernel"][vk][case] = {}, {}
                for fig in KERNEL_FIGURES:
                    record(res, spread, missing, "kernel", vk, case, fig,
                           summary(samples.get("kernel", vcpus, case, fig)))
                extra[vk][case] = summaries("kernel", vcpus, case, KERNEL_EXTRA)
            supplement[vk] = {}
            add_supplementary("kernel", vcpus, SUPPLEMENT_CASES, KERNEL_FIGURES + KERNEL_EXTRA)
            res["gmem"][vk], spread["gmem"][vk] = {}, {}
            for case in GMEM_CASES:
                res["gmem"][vk][case], spread["gmem"][vk][case] = {}, {}
                for fig in GMEM_FIGURES:
                    record(res, spread, missing, "gmem", vk, case, fig,
                           summary(samples.get("gmem", vcpus, case, fig)))
                extra[vk][case] = summaries("gmem", vcpus, case, KERNEL_EXTRA)
            res["others"][vk], spread["others"][vk] = {}, {}
            for kind in OTHER_KINDS:
                for flavor in FLAVORS:
                    case = f"{flavor}.{kind}"
                    res["others"][vk][case], spread["others"][vk][case] = {}, {}
                    for fig in OTHER_FIGURES[kind]:
                        record(res, spread, missing, "others", vk, case, fig,
                               summary(samples.get("others", vcpus, case, fig)))
                    extra[vk][case] = summaries("others", vcpus, case,
                                                KERNEL_EXTRA + OTHER_EXTRA)
            res["read"][vk], spread["read"][vk], read_extra[vk] = {}, {}, {}
            for case in READ_CASES:
                res["read"][vk][case], spread["read"][vk][case] = {}, {}
                for fig in READ_FIGURES:
                    record(res, spread, missing, "read", vk, case, fig,
                           summary(samples.get("read", vcpus, case, fig)))
                read_extra[vk][case] = summaries("read", vcpus, case, READ_EXTRA)
            add_supplementary("read", vcpus, SUPPLEMENT_READ_CASES, READ_FIGURES + READ_EXTRA)
            res["mermap"][vk], spread["mermap"][vk] = {}, {}
            for name in [n for n, _ in MERMAP_FIGURES] + list(REFILL_FIGURES):
                s = summary(samples.get("mermap", vcpus, "mermap", name))
                if s is None:
                    missing.append(f"mermap {vk} {name}")
                res["mermap"][vk][name] = s["median"] if s else None
                spread["mermap"][vk][name] = s
    if args.only in (None, "kernel") and args.icount_runs:
        vcpus = args.vcpus[0]
        vk = vkey(vcpus)
        res["icount"][vk], spread["icount"][vk] = {}, {}
        for case in ICOUNT_CASES + tuple(c + ".read" for c in ICOUNT_READ_CASES):
            read = case.endswith(".read")
            figs = ("ins_per_read_page",) if read else \
                ICOUNT_KIND_FIGURES.get(case.split(".", 1)[1], ICOUNT_FIGURES)
            res["icount"][vk][case], spread["icount"][vk][case] = {}, {}
            for fig in figs:
                record(res, spread, missing, "icount", vk, case, fig,
                       summary(samples.get("icount", vcpus, case[:-5] if read else case, fig)))
        res["mermap_icount"][vk], spread["mermap_icount"][vk] = {}, {}
        for name, _ in MERMAP_FIGURES:
            s = summary(samples.get("mermap_icount", vcpus, "mermap", name))
            if s is None:
                missing.append(f"mermap_icount {vk} {name}")
            res["mermap_icount"][vk][name] = s["median"] if s else None
            spread["mermap_icount"][vk][name] = s
    if args.only in (None, "kernel") and args.scale_runs:
        vk = vkey(SCALE_VCPUS)
        res["scale"][vk], spread["scale"][vk] = {}, {}
        for case in SCALE_CASES:
            res["scale"][vk][case], spread["scale"][vk][case] = {}, {}
            figs = SCALE_FIGURES + (tuple(f"flushes_per_mib_t{n}" for n in SCALE_THREADS)
                                    if case.startswith("patched.") else ())
            for fig in figs:
                record(res, spread, missing, "scale", vk, case, fig,
                       summary(samples.get("scale", SCALE_VCPUS, case, fig)))
        for alloc in SCALE_ALLOCATORS:
            case = f"patched.scale_alloc.{alloc}"
            res["scale"][vk][case], spread["scale"][vk][case] = {}, {}
            for fig in SCALE_ALLOC_FIGURES:
                vals = [((doc or {}).get("userspace") or {}).get(alloc, {}).get(fig)
                        for doc in samples.scale_alloc]
                record(res, spread, missing, "scale", vk, case, fig,
                       summary([v for v in vals if v is not None]))
    user_meta = {}
    if args.only in (None, "userspace"):
        sources = [("host", host_json)]
        sources += [(f"guest_{vkey(v)}", samples.userspace.get(f"guest_{vkey(v)}"))
                    for v in args.vcpus]
        for key, doc in sources:
            if not doc:
                missing.append(f"userspace {key}")
                res["userspace"][key] = None
                continue
            res["userspace"][key] = doc.get("userspace")
            user_meta[key] = doc.get("meta")
    version = {f: samples.versions.get(f) for f in FLAVORS}
    kernels = {}
    for f in FLAVORS:
        keyfile = snapshot(f) + ".key"
        kernels[f] = {
            "version": version[f],
            "bzimage": os.path.relpath(bzimage(f), TOP),
            "booted": os.path.relpath(snapshot(f), TOP),
            "build_key": open(keyfile).read().strip() if os.path.exists(keyfile) else None,
        }
    res["meta"] = {
        "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kernel_versions": kernels,
        "vcpus": args.vcpus,
        "guest_memory": args.mem,
        "scale_runs": args.scale_runs,
        # The patched lockstat kernel's /proc/lock_stat in the scaling
        # workload: case -> lock classes, most contended first.
        "lockstat": samples.lockstat,
        "scale_mib": args.scale_mib,
        "qemu": {"accel": "tcg", "cpu": "max", "numa_nodes": 1, "mem_prealloc": True,
                 "scale_boots": {"vcpus": SCALE_VCPUS, "numa_nodes": SCALE_NODES},
                 "cmdline_added": "nohz=off secmem.bench=... (patched kernel-case boots: "
                                  + KUNIT_APPEND + ")"},
        "runs": args.runs,
        "icount_runs": args.icount_runs,
        "icount": ("icount and mermap_icount come from boots with QEMU -icount "
                   "shift=0,sleep=off (guest time = instructions executed), "
                   f"{args.icount_runs} per kernel, at the first vCPU count; "
                   "ins_per_fault: instructions per 4 KiB page of the fault-in loop, "
                   "ins_per_fault_p50: of the median single touch, ins_per_read_page: "
                   "of read(); mermap_icount: the mermap_test_cost figures in "
                   "instructions instead of ns"),
        "file_mib": args.mib,
        "guest_memfd_mib": args.gmem_mib,
        "layout": ("kernel, read, mermap and scale are keyed by 'vcpus_N' first, then case "
                   "and figure (scale figures end in _tN, N threads); userspace by 'host' "
                   "or 'guest_vcpus_N', then allocator and figure; every value is the median of meta.runs runs (one per fresh "
                   "boot), min/max/values in meta.spread"),
        "host": {
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "loadavg_start": None if args.parse_only else args.loadavg_start,
            "loadavg_end": None if args.parse_only else list(os.getloadavg()),
        },
        "spread": spread,
        "kernel_extra": extra,
        "read_extra": read_extra,
        "supplementary": supplement,
        "userspace_meta": user_meta,
        "boots": [{"name": b.name, "status": b.status, "seconds": rnd(b.seconds),
                   "log": os.path.relpath(b.log, TOP)} for b in boots],
        "notes": samples.notes,
        "problems": samples.problems + [f"not measured: {m}" for m in missing],
        "seconds": None if args.parse_only else rnd(time.monotonic() - args.t0),
        "rebuilt_from_logs": bool(args.parse_only),
    }
    res["meta"]["targets"] = targets(res, args)
    return res


def targets(res, args):
    out = []

    def add(name, vk, met, detail):
        out.append({"target": name, "vcpus": vk, "met": met, "detail": detail})

    for vcpus in args.vcpus:
        vk = vkey(vcpus)
        k = res["kernel"].get(vk)
        r = res["read"].get(vk)
        if not k:
            continue

        def g(case, fig):
            return k.get(case, {}).get(fig)

        warm = g("patched.memfd_unmapped_warm", "fault_mib_s")
        plain = g("patched.memfd", "fault_mib_s")
        ssec = g("stock.memfd_secret", "fault_mib_s")
        psec = g("patched.memfd_secret", "fault_mib_s")
        smemfd = g("stock.memfd", "fault_mib_s")
        if None not in (plain, smemfd):
            add("patched.memfd.fault_mib_s >= 0.98 x stock.memfd.fault_mib_s", vk,
                plain >= 0.98 * smemfd,
                f"{fmt(plain)} vs 0.98 x {fmt(smemfd)} = {fmt(0.98 * smemfd)} "
                f"(ratio {plain / smemfd:.3f})")
        if None not in (warm, plain):
            add("patched.memfd_unmapped_warm.fault_mib_s >= 0.9 x patched.memfd.fault_mib_s",
                vk, warm >= 0.9 * plain, f"{fmt(warm)} vs 0.9 x {fmt(plain)} = {fmt(0.9 * plain)}")
        if None not in (warm, ssec):
            add("patched.memfd_unmapped_warm.fault_mib_s >= 5 x stock.memfd_secret.fault_mib_s",
                vk, warm >= 5 * ssec, f"{fmt(warm)} vs 5 x {fmt(ssec)} = {fmt(5 * ssec)}")
        rf = g("patched.memfd_unmapped_refill", "tlb_flushes_per_mib")
        if rf is not None:
            add("patched.memfd_unmapped_refill.tlb_flushes_per_mib <= 0.05 (secmemd's knobs, "
                "refill batches of 16)", vk, rf <= 0.05, fmt(rf))
        cold_f = g("patched.memfd_unmapped_cold", "tlb_flushes_per_mib")
        if cold_f is not None:
            add("patched.memfd_unmapped_cold.tlb_flushes_per_mib <= 0.5", vk,
                cold_f <= 0.5, fmt(cold_f))
        warm_f = g("patched.memfd_unmapped_warm", "tlb_flushes_per_mib")
        if warm_f is not None:
            add("patched.memfd_unmapped_warm.tlb_flushes_per_mib = 0", vk, warm_f == 0,
                fmt(warm_f))
        for case in ("patched.memfd_unmapped_cold", "patched.memfd_unmapped_warm"):
            d = g(case, "directmap4k_kib_per_gib")
            if d is not None:
                add(f"{case}.directmap4k_kib_per_gib = 0", vk, d == 0, fmt(d))
        if None not in (psec, warm):
            add("patched.memfd_secret.fault_mib_s within 10% of patched.memfd_unmapped_warm",
                vk, abs(psec - warm) <= 0.1 * warm,
                f"{fmt(psec)} vs {fmt(warm)} ({(psec - warm) / warm * 100:+.1f}%)")
        gm = res["gmem"].get(vk) or {}

        def gg(case, fig):
            return gm.get(case, {}).get(fig)

        gwarm = gg("patched.guest_memfd_nodm_warm", "fault_mib_s")
        gstock = gg("stock.guest_memfd", "fault_mib_s")
        if None not in (gwarm, gstock):
            add("patched.guest_memfd_nodm_warm.fault_mib_s >= 0.9 x stock.guest_memfd.fault_mib_s",
                vk, gwarm >= 0.9 * gstock,
                f"{fmt(gwarm)} vs 0.9 x {fmt(gstock)} = {fmt(0.9 * gstock)}")
        gf = gg("patched.guest_memfd_nodm_warm", "tlb_flushes_per_mib")
        if gf is not None:
            add("patched.guest_memfd_nodm_warm.tlb_flushes_per_mib = 0", vk, gf == 0, fmt(gf))
        gf = gg("patched.guest_memfd_nodm_cold", "tlb_flushes_per_mib")
        if gf is not None:
            add("patched.guest_memfd_nodm_cold.tlb_flushes_per_mib <= 0.5", vk, gf <= 0.5,
                fmt(gf))
        for case in ("patched.guest_memfd_nodm_cold", "patched.guest_memfd_nodm_warm"):
            d = gg(case, "directmap4k_kib_per_gib")
            if d is not None:
                add(f"{case}.directmap4k_kib_per_gib = 0", vk, d == 0, fmt(d))
        if r:
            ru = r.get("patched.memfd_unmapped", {}).get("read_mib_s")
            rp = r.get("patched.memfd", {}).get("read_mib_s")
            if None not in (ru, rp):
                add("read_mib_s patched.memfd_unmapped >= 0.5 x patched.memfd", vk,
                    ru >= 0.5 * rp, f"{fmt(ru)} vs 0.5 x {fmt(rp)} = {fmt(0.5 * rp)}")
    for vk, ic in res["icount"].items():
        for stock, patched in ICOUNT_PAIRS:
            for fig in ICOUNT_KIND_FIGURES.get(stock.split(".", 1)[1], ("ins_per_fault",)):
                a = ic.get(stock, {}).get(fig)
                b = ic.get(patched, {}).get(fig)
                if None not in (a, b):
                    add(f"icount: {patched}.{fig} within 1% of {stock}", vk,
                        abs(b - a) <= 0.01 * a,
                        f"{fmt(b)} vs {fmt(a)} ({(b - a) / a * 100:+.2f}%)")
    # Scaling from 1 to 8 threads (issue 21): MFD_UNMAPPED from a filled pool
    # at least as well as the plain memfd, in the same boots.
    for vk, sc in res["scale"].items():
        def speedup(case):
            one = sc.get(case, {}).get(f"fault_mib_s_t{SCALE_THREADS[0]}")
            top = sc.get(case, {}).get(f"fault_mib_s_t{SCALE_THREADS[-1]}")
            return top / one if one and top else None

        su, sm = speedup("patched.scale_memfd_unmapped_warm"), speedup("patched.scale_memfd")
        if None not in (su, sm):
            add(f"scale: patched.scale_memfd_unmapped_warm speedup from {SCALE_THREADS[0]} to "
                f"{SCALE_THREADS[-1]} threads >= patched.scale_memfd's", vk, su >= sm,
                f"{su:.2f}x vs {sm:.2f}x")
    # Zeroing a page through the mermap against clear_page() through the
    # direct map (issue 21: >= 0.9x the throughput), as the allocator does
    # it (reserved page, one flush per page) and eight pages per mapping.
    for section in ("mermap", "mermap_icount"):
        for vk, mm in res[section].items():
            direct = mm.get("clear_page_ns")
            for fig in ("clear_mermap_ns", "clear_mermap_slot_ns"):
                via = mm.get(fig)
                if direct and via:
                    add(f"{section}: clear_page_ns / {fig} >= 0.9", vk, direct / via >= 0.9,
                        f"{fmt(direct)} / {fmt(via)} = {direct / via:.2f}")
    # Everyone else in wall clock, "within noise": the patched median no
    # worse than the stock kernel's worst boot of the same number.
    for vk, oth in res["others"].items():
        sp = res["meta"]["spread"]["others"][vk] if "spread" in res["meta"] else {}
        for kind, fig in [(k, f) for k in OTHER_KINDS for f in OTHER_TARGET_FIGURES[k]]:
            st, pa = sp.get(f"stock.{kind}", {}).get(fig), oth.get(f"patched.{kind}", {}).get(fig)
            if not st or pa is None:
                continue
            if fig.endswith(("_us", "_ns")):     # lower is better
                add(f"patched.{kind}.{fig} <= the stock kernel's worst boot", vk,
                    pa <= st["max"], f"{fmt(pa)} vs {fmt(st['max'])} "
                    f"(median ratio {pa / st['median']:.3f})")
            else:
                add(f"patched.{kind}.{fig} >= the stock kernel's worst boot", vk,
                    pa >= st["min"], f"{fmt(pa)} vs {fmt(st['min'])} "
                    f"(median ratio {pa / st['median']:.3f})")
    for where, allocs in res["userspace"].items():
        allocs = allocs or {}
        lib = allocs.get("libsecmem") or {}
        sod = allocs.get("sodium_malloc") or {}
        ossl = allocs.get("openssl_secure") or {}
        a64, s64, o64 = (lib.get("alloc_free_ns_64"), sod.get("alloc_free_ns_64"),
                         ossl.get("alloc_free_ns_64"))
        if None not in (a64, s64):
            add("libsecmem alloc_free_ns_64 <= 1/20 x sodium_malloc", where, a64 <= s64 / 20,
                f"{fmt(a64)} vs {fmt(s64)} / 20 = {fmt(s64 / 20)}")
        if None not in (a64, o64):
            add("libsecmem alloc_free_ns_64 <= openssl_secure", where, a64 <= o64,
                f"{fmt(a64)} vs {fmt(o64)}")
        t2, ot2 = lib.get("alloc_free_ns_64_t2"), ossl.get("alloc_free_ns_64_t2")
        if None not in (t2, ot2):
            add("libsecmem alloc_free_ns_64_t2 <= 2/3 x openssl_secure", where, t2 <= ot2 * 2 / 3,
                f"{fmt(t2)} vs 2/3 x {fmt(ot2)} = {fmt(ot2 * 2 / 3)}")
        t1 = lib.get("alloc_free_ns_64_t1")
        if None not in (t1, t2):
            add("libsecmem alloc_free_ns_64_t2 <= 1.3 x alloc_free_ns_64_t1", where,
                t2 <= t1 * 1.3, f"{fmt(t2)} vs 1.3 x {fmt(t1)} = {fmt(t1 * 1.3)} "
                f"(ratio {t2 / t1:.2f})")
        live, maps, rss = (lib.get("live_32b_max"), lib.get("mappings"),
                           lib.get("rss_bytes_per_secret"))
        if None not in (live, maps, rss):
            add("libsecmem live_32b_max = 10,000,000, mappings < 64, rss_bytes_per_secret <= 64",
                where, live >= 10_000_000 and maps < 64 and rss <= 64,
                f"{fmt(live)}, {fmt(maps)} mappings, {fmt(rss)} B/secret")
    return out


def flush_mode_rows(res, vk):
    """The figures of FLUSH_MODE_ROWS at vk: (case, mode, {name: spread})."""
    meta = res["meta"]
    sup = meta.get("supplementary", {}).get(vk, {})
    out = []
    for case, section, mode in FLUSH_MODE_ROWS:
        if case in sup:
            figs = sup[case]
        elif section == "kernel":
            figs = dict(meta["spread"]["kernel"].get(vk, {}).get(case, {}))
            figs.update(meta["kernel_extra"].get(vk, {}).get(case, {}))
        else:
            continue
        if any(figs.values()):
            out.append((case, mode, figs))
    return out


def flush_mode_table(res, vk):
    """results.md: what flush_on_free=deferred costs beside immediate."""
    rows = []
    for case, mode, figs in flush_mode_rows(res, vk):
        def med(f):
            return fmt(figs[f]["median"]) if figs.get(f) else "-"
        if "fault_mib_s" in figs:
            glob, local = med("unmapped_tlb_flushes_per_mib"), med("mermap_flushes_per_mib")
        else:
            glob = f"{med('write_unmapped_tlb_flushes_per_mib')} / " \
                   f"{med('read_unmapped_tlb_flushes_per_mib')}"
            local = f"{med('write_mermap_flushes_per_mib')} / {med('read_mermap_flushes_per_mib')}"
        rows.append([f"`{case}`", mode, fmt_spread(figs.get("fault_mib_s")),
                     fmt_spread(figs.get("write_mib_s")), fmt_spread(figs.get("read_mib_s")),
                     glob, local])
    if not rows:
        return []
    lines = ["### flush_on_free: immediate vs deferred", "",
             "MFD_UNMAPPED from a filled pool (`warm`) and with secmemd's knobs (`refill`): "
             "the fault-in loop, and (`rw_warm`) `write()` of the file in 1 MiB chunks, then "
             "`read()` of it. Global flushes: `unmapped_tlb_flush` per MiB, a flush of every "
             "CPU's TLB by the unmapped allocator (in `deferred` mode before it hands out a "
             "page after mermap unmaps); local: `unmapped_mermap_flush` per MiB, the "
             "mermap's own flushes on this CPU; for `rw_warm` the write phase / the read "
             "phase. Medians (min–max) of the boots; supplementary, no target.", ""]
    lines += md_table(["case", "`flush_on_free`", "`fault_mib_s`", "`write_mib_s`",
                       "`read_mib_s`", "global flushes/MiB", "mermap local flushes/MiB"], rows)
    lines.append("")
    return lines


def markdown(res):
    meta = res["meta"]
    lines = ["# secmem benchmark results", ""]
    kv = meta["kernel_versions"]
    host = meta["host"]
    if meta["rebuilt_from_logs"]:
        load = "outputs rebuilt from the boot logs (`--parse-only`), first boot at that time"
    else:
        load = (f"load average {host['loadavg_start'][0]:.2f} at the start, "
                f"{host['loadavg_end'][0]:.2f} at the end, {fmt(meta['seconds'])} s in all")
    lines.append(f"Measured {meta['date']} by `make bench`: release kernels "
                 f"(stock: `{kv['stock']['version'] or '?'}`, patched: "
                 f"`{kv['patched']['version'] or '?'}`), QEMU TCG `-cpu max`, "
                 f"{meta['guest_memory']} guest memory, vCPUs "
                 f"{', '.join(str(v) for v in meta['vcpus'])}; host {host['cpus']} CPUs, "
                 f"{load}. Each figure: median of {meta['runs']} runs, one per fresh boot, "
                 f"(min–max). {meta['file_mib']} MiB files.")
    lines.append("")
    spread = meta["spread"]
    for vk in res["kernel"]:
        lines.append(f"## Kernel: first touch of a {meta['file_mib']} MiB MAP_SHARED mapping, "
                     f"{vk.split('_')[1]} vCPUs")
        lines.append("")
        rows = []
        for case, figs in res["kernel"][vk].items():
            rows.append([f"`{case}`"] + [fmt_spread(spread["kernel"][vk][case][f])
                                         for f in KERNEL_FIGURES])
        lines += md_table(["case"] + [f"`{f}`" for f in KERNEL_FIGURES], rows)
        lines.append("")
        ex = meta["kernel_extra"].get(vk, {})
        rows = []
        for case in res["kernel"][vk]:
            e = ex.get(case, {})

            def m(f):
                return fmt(e[f]["median"]) if e.get(f) else "-"
            rows.append([f"`{case}`", m("call_ipis_per_mib"), m("ipi_bound_flushes_per_mib"),
                         m("nr_tlb_remote_flush_per_mib"), m("nr_tlb_kernel_flush_per_mib"),
                         m("unmapped_block_unmap"), m("direct_map_1g_splits"),
                         m("direct_map_2m_splits"), m("unmapped_alloc_prezeroed"),
                         m("alloc_p50_us"), m("alloc_max_us")])
        lines.append("Raw counters behind them (medians): function-call IPIs per MiB, the "
                     "shootdown bound drawn from them (the fewest any other CPU received), "
                     "`nr_tlb_remote_flush` (user and whole flushes) and `nr_tlb_kernel_flush` "
                     "(kernel range flushes) per MiB, exact on the patched kernel, whose "
                     "`tlb_flushes_per_mib` is their sum (the stock kernel counts no range "
                     "flush, so its `tlb_flushes_per_mib` is the IPI bound), pageblocks unmapped during "
                     "the loop, direct map huge pages split during it (1 GiB and 2 MiB; "
                     "each split is one more shootdown), pages handed out known zero, "
                     "median and worst single fault.")
        lines.append("")
        lines += md_table(["case", "CAL IPIs/MiB", "IPI bound/MiB", "nr_tlb_remote_flush/MiB",
                           "nr_tlb_kernel_flush/MiB", "pageblocks unmapped", "1G splits", "2M splits", "prezeroed pages",
                           "p50 µs", "max µs"], rows)
        lines.append("")
        sup = meta.get("supplementary", {}).get(vk, {})
        if any(case in sup for case in SUPPLEMENT_CASES):
            lines.append("Supplementary cases (not targets): secretmem with an empty pool, "
                         "and the warm and refill cases with `flush_on_free=deferred`.")
            lines.append("")
            rows = [[f"`{case}`"] + [fmt_spread(sup[case].get(f)) for f in
                                     ("fault_mib_s", "tlb_flushes_per_mib",
                                      "directmap4k_kib_per_gib", "alloc_p50_us",
                                      "alloc_p99_us")]
                    for case in SUPPLEMENT_CASES if case in sup]
            lines += md_table(["case", "`fault_mib_s`", "`tlb_flushes_per_mib`",
                               "`directmap4k_kib_per_gib`", "p50 µs", "`alloc_p99_us`"], rows)
            lines.append("")
        lines += flush_mode_table(res, vk)
    for vk in res["gmem"]:
        lines.append(f"## KVM guest_memfd: population of {meta['guest_memfd_mib']} MiB of a "
                     f"VM's private memory, {vk.split('_')[1]} vCPUs")
        lines.append("")
        lines.append("A software-protected VM, one vCPU, `KVM_PRE_FAULT_MEMORY` a page at a "
                     "time (allocate, zero, map into the nested page tables). `stock` and "
                     "`patched.guest_memfd`: the pages stay in the direct map; `_nodm`: "
                     "`GUEST_MEMFD_FLAG_NO_DIRECT_MAP`, with a filled (`warm`) or an empty "
                     "(`cold`) pool. `directmap4k_kib_per_gib` is per GiB populated.")
        lines.append("")
        ex = meta["kernel_extra"].get(vk, {})
        rows = []
        for case in res["gmem"][vk]:
            e = ex.get(case, {})
            pb = fmt(e["unmapped_block_unmap"]["median"]) if e.get("unmapped_block_unmap") \
                else "-"
            rows.append([f"`{case}`"] + [fmt_spread(spread["gmem"][vk][case][f])
                                         for f in GMEM_FIGURES] + [pb])
        lines += md_table(["case"] + [f"`{f}`" for f in GMEM_FIGURES]
                          + ["pageblocks unmapped"], rows)
        lines.append("")
    for vk in res["others"]:
        lines.append(f"## What everyone else pays, {vk.split('_')[1]} vCPUs")
        lines.append("")
        lines.append(f"Private anonymous memory ({meta['file_mib']} MiB, one byte per 4 KiB "
                     "page; `anon`: `MADV_NOHUGEPAGE`, `anon_thp`: `MADV_HUGEPAGE`) and "
                     "`fork()` + `_exit()` + `waitpid()` of a process holding 64 MiB of it "
                     "(median of 200 rounds per boot); `page_alloc`: "
                     "`bench/kmod/page_alloc_bench.ko`, ns per GFP_KERNEL `alloc_pages()` "
                     "+ `__free_pages()` at order 0 and 9, in pairs (per-CPU lists) and in "
                     "batches that reach the buddy lists (median of 7 rounds per boot).")
        lines.append("")
        rows = []
        for kind in OTHER_KINDS:
            for fig in OTHER_FIGURES[kind]:
                a = spread["others"][vk][f"stock.{kind}"][fig]
                b = spread["others"][vk][f"patched.{kind}"][fig]
                ratio = f"{b['median'] / a['median']:.3f}" if a and b and a["median"] else "-"
                rows.append([f"`{kind}`", f"`{fig}`", fmt_spread(a), fmt_spread(b), ratio])
        lines += md_table(["case", "figure", "stock", "patched", "patched / stock"], rows)
        lines.append("")
    for vk in res["read"]:
        lines.append(f"## read() of 1 MiB chunks, patched kernel, {vk.split('_')[1]} vCPUs")
        lines.append("")
        rex = meta.get("read_extra", {}).get(vk, {})
        rows = [[f"`{case}`", fmt_spread(spread["read"][vk][case]["read_mib_s"]),
                 fmt_spread(rex.get(case, {}).get("write_mib_s"))]
                for case in res["read"][vk]]
        lines += md_table(["file", "`read_mib_s`", "`write_mib_s` (the fill)"], rows)
        lines.append("")
    if res["mermap"]:
        lines.append("## mermap and pool refill (KUnit `mermap_test_cost`, "
                     "`unmapped_test_refill_cost`, patched release kernel)")
        lines.append("")
        names = [n for n, _ in MERMAP_FIGURES] + list(REFILL_FIGURES)
        rows = [[vk.split("_")[1]] + [fmt_spread(spread["mermap"][vk][n]) for n in names]
                for vk in res["mermap"]]
        lines += md_table(["vCPUs"] + [f"`{n}`" for n in names], rows)
        lines.append("")
    for vk, ic in res["icount"].items():
        lines.append(f"## Instructions per fault (QEMU `-icount`), {vk.split('_')[1]} vCPUs")
        lines.append("")
        lines.append(f"The same cases in {meta['icount_runs']} more boots per kernel with "
                     "`-icount shift=0,sleep=off`: guest time counts instructions, one per "
                     "nanosecond, whatever the host's load. It does not see what costs time "
                     "without instructions (TLB refills after a flush, IPIs, host page "
                     "faults); wall clock under TCG exaggerates exactly those. Loop: "
                     "instructions per 4 KiB page of the whole fault-in loop (the store, "
                     "the fault, two `clock_gettime()`); p50: of the median single touch.")
        lines.append("")
        sp = spread["icount"][vk]
        rows = []
        for case, figs in ic.items():
            if case.endswith(".read"):
                rows.append([f"`{case[:-5]}` read()",
                             fmt_spread(sp[case].get("ins_per_read_page")), "-"])
            elif case.endswith(".fork_exit"):
                rows.append([f"`{case}` (one fork+exit round)",
                             fmt_spread(sp[case].get("ins_per_fork")), "-"])
            elif case.endswith(".page_alloc"):
                for fig in figs:
                    rows.append([f"`{case}` `{fig[4:]}` (one alloc+free)",
                                 fmt_spread(sp[case].get(fig)), "-"])
            else:
                rows.append([f"`{case}`", fmt_spread(sp[case].get("ins_per_fault")),
                             fmt_spread(sp[case].get("ins_per_fault_p50"))])
        lines += md_table(["case", "instructions / page (loop)", "instructions (p50 touch)"],
                          rows)
        lines.append("")
        mi = res["mermap_icount"].get(vk)
        if mi:
            names = [n for n, _ in MERMAP_FIGURES]
            lines.append("The mermap KUnit figures in instructions (`_ns` read as instructions):")
            lines.append("")
            lines += md_table([f"`{n}`" for n in names],
                              [[fmt_spread(spread["mermap_icount"][vk][n]) for n in names]])
            lines.append("")
    for vk, sc in res["scale"].items():
        lines.append(f"## Scaling: {SCALE_VCPUS} vCPUs, {SCALE_NODES} NUMA nodes")
        lines.append("")
        lines.append(f"{meta['scale_runs']} boot(s) per kernel. N threads at once, thread i "
                     f"pinned to CPU i x {SCALE_VCPUS} / N, each faulting in its own file of "
                     f"{meta['scale_mib']} MiB (median of 3 rounds per boot; "
                     "`stock.scale_memfd_secret`: 1 MiB, one round, as each of its pages costs a flush of every vCPU). "
                     "MiB/s of all "
                     "threads together over the wall time from the first thread's start to "
                     "the last one's end; speedup: that at the most threads over one thread. "
                     f"The host has {meta['host']['cpus']} CPUs: under TCG no more vCPUs than "
                     "that run at once, so speedup is bounded by it for every kind alike; "
                     "what differs between kinds is what they serialize on.")
        lines.append("")
        rows = []
        for case, figs in sc.items():
            if ".scale_alloc." in case:
                continue
            sp = spread["scale"][vk][case]
            one = figs.get(f"fault_mib_s_t{SCALE_THREADS[0]}")
            top = figs.get(f"fault_mib_s_t{SCALE_THREADS[-1]}")
            rows.append([f"`{case}`"] + [fmt_spread(sp.get(f"fault_mib_s_t{n}"))
                                         for n in SCALE_THREADS]
                        + [f"{top / one:.2f}x" if one and top else "-",
                           fmt(figs.get(f"thread_mib_s_t{SCALE_THREADS[-1]}")),
                           fmt(figs.get(f"flushes_per_mib_t{SCALE_THREADS[-1]}"))])
        lines += md_table(["case"] + [f"N={n} MiB/s" for n in SCALE_THREADS]
                          + ["speedup", f"one thread of {SCALE_THREADS[-1]}, MiB/s",
                             f"flushes/MiB at N={SCALE_THREADS[-1]}"], rows)
        lines.append("")
        lines.append("`alloc_bench` in the same patched boots: wall-clock ns per 64-byte "
                     "alloc+free pair as each of N threads sees it (lower is better; equal "
                     "across N is perfect scaling while N <= host CPUs).")
        lines.append("")
        rows = []
        for alloc in SCALE_ALLOCATORS:
            case = f"patched.scale_alloc.{alloc}"
            sp = spread["scale"][vk].get(case, {})
            one = sc.get(case, {}).get(SCALE_ALLOC_FIGURES[0])
            top = sc.get(case, {}).get(SCALE_ALLOC_FIGURES[-1])
            rows.append([f"`{alloc}`"] + [fmt_spread(sp.get(f)) for f in SCALE_ALLOC_FIGURES]
                        + [f"{top / one:.2f}x" if one and top else "-"])
        lines += md_table(["allocator"] + [f"N={n} ns" for n in SCALE_THREADS]
                          + [f"N={SCALE_THREADS[-1]} / N={SCALE_THREADS[0]}"], rows)
        lines.append("")
        for case, classes in meta.get("lockstat", {}).items():
            lines.append(f"Lock classes waited on, `{case}` at one thread per vCPU "
                         "(patched lockstat kernel, `/proc/lock_stat`, most contended first):")
            lines.append("")
            lines += md_table(["class", "contentions", "wait total (us)", "acquisitions"],
                              [[f"`{c['class']}`", str(c["contentions"]),
                                fmt(c["waittime_total_us"]), str(c["acquisitions"])]
                               for c in classes])
            lines.append("")
    for key, allocs in res["userspace"].items():
        where = "host" if key == "host" else \
            f"patched guest, {key.split('_')[-1]} vCPUs"
        backend = (meta["userspace_meta"].get(key) or {}).get("libsecmem_backend", "?")
        lines.append(f"## Userspace allocators ({where}; libsecmem backend `{backend}`)")
        lines.append("")
        if not allocs:
            lines.append("not measured")
            lines.append("")
            continue
        rows = [[f"`{a}`"] + [fmt(figs.get(f)) for f in USER_FIGURES]
                for a, figs in allocs.items()]
        lines += md_table(["allocator"] + [f"`{f}`" for f in USER_FIGURES], rows)
        lines.append("")
    lines.append("## Targets")
    lines.append("")
    if meta["targets"]:
        def where(key):
            return key.split("_")[1] if key.startswith("vcpus_") else \
                "host" if key == "host" else f"guest, {key.split('_')[-1]}"
        rows = [[t["target"], where(t["vcpus"]), "met" if t["met"] else "**missed**",
                 t["detail"]] for t in meta["targets"]]
        lines += md_table(["target", "vCPUs", "result", "measured"], rows)
    else:
        lines.append("none evaluated")
    lines.append("")
    if meta["problems"]:
        lines.append("## Problems")
        lines.append("")
        lines += [f"- {p}" for p in meta["problems"]]
        lines.append("")
    return "\n".join(lines)


GNUPLOT = r"""
set terminal pngcairo size 1400,640 font "sans,10" noenhanced
set output '{png}'
set bmargin 8
set rmargin 16
set multiplot layout 1,2 title "secmem: first touch of {mib} MiB MAP_SHARED (release kernels, TCG, {mem})"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set key top right
set grid ytics
set yrange [0:*]
set ylabel "fault-in throughput (MiB/s, median)"
set title "fault_mib_s (higher is better)"
plot {fault_plot}
set logscale y
set yrange [0.01:*]
set ylabel "remote TLB shootdowns per MiB (log; 0 drawn at 0.01)"
set title "tlb_flushes_per_mib (lower is better)"
plot {flush_plot}
unset multiplot
"""


def chart(res, args):
    if not res["kernel"] or not shutil.which("gnuplot"):
        return None
    dat = os.path.join(OUT, "results-chart.dat")
    vks = list(res["kernel"])
    with open(dat, "w") as f:
        f.write("# case " + " ".join(f"fault_{v} flush_{v}(drawn) flush_{v}" for v in vks) + "\n")
        for case in KERNEL_CASES:
            cols = []
            for vk in vks:
                fig = res["kernel"][vk].get(case, {})
                fm = fig.get("fault_mib_s")
                fl = fig.get("tlb_flushes_per_mib")
                cols.append("NaN" if fm is None else f"{fm}")
                cols.append("NaN" if fl is None else f"{max(fl, 0.01)}")
                cols.append("NaN" if fl is None else f"{fl}")
            f.write(f"\"{case}\" " + " ".join(cols) + "\n")
    n = len(vks)

    def plot(offset):
        parts = []
        for i, vk in enumerate(vks):
            col = 2 + 3 * i + offset
            xt = ":xtic(1)" if i == 0 else ""
            parts.append(f"'{dat}' using {col}{xt} title '{vk.split('_')[1]} vCPUs'")
        for i, vk in enumerate(vks):
            col = 2 + 3 * i + offset
            dx = (i - (n - 1) / 2) / (n + 1)
            # flushes: the real value (the bar is drawn at 0.01 at least)
            label = f"(sprintf('%.3g', column({col + 1})))" \
                if offset else f"(sprintf('%.0f', column({col})))"
            parts.append(f"'{dat}' using ($0+{dx:.3f}):{col}:{label} "
                         "with labels offset 0,0.6 font ',7' notitle")
        return ", ".join(parts)

    png = os.path.join(OUT, "results.png")
    script = GNUPLOT.format(png=png, mib=args.mib, mem=args.mem,
                            fault_plot=plot(0), flush_plot=plot(1))
    gp = os.path.join(OUT, "results-chart.gp")
    with open(gp, "w") as f:
        f.write(script)
    r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if r.returncode != 0:
        say(f"gnuplot failed: {r.stderr.strip()}")
        return None
    return png


# --- main -------------------------------------------------------------------------

def run_host_userspace(args):
    path = os.path.join(OUT, "userspace-host.json")
    out = os.path.join(LOGS, "userspace-host.out")
    if args.parse_only:
        return json.load(open(path)) if os.path.exists(path) else None
    if not os.path.exists(ALLOC_BENCH):
        say(f"{ALLOC_BENCH} is missing (make -C bench)")
        return None
    say("alloc_bench on the host ...")
    cmd = [ALLOC_BENCH, "--json", path]
    if args.alloc_quick:
        cmd.append("--quick")
    if args.alloc_runs:
        cmd += ["--runs", str(args.alloc_runs)]
    start = time.monotonic()
    with open(out, "w") as f:
        status = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    say(f"alloc_bench on the host: exit {status}, {time.monotonic() - start:.0f} s, "
        f"output in {os.path.relpath(out, TOP)}")
    return json.load(open(path)) if os.path.exists(path) else None


def first_log_date(args):
    """--parse-only: the earliest date run-vm.sh wrote at the top of a log."""
    dates = []
    for name in os.listdir(LOGS) if os.path.isdir(LOGS) else []:
        if name.endswith(".log"):
            with open(os.path.join(LOGS, name), errors="replace") as f:
                m = re.match(r"secmem-vm: (\S+Z) ", f.readline())
            if m:
                dates.append(datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ"))
    return min(dates) if dates else None


def parse_args():
    ap = argparse.ArgumentParser(description="make bench: boot stock and patched kernels, "
                                 "collect the figures")
    ap.add_argument("--vcpus", default=os.environ.get("BENCH_VCPUS", "2,4"),
                    help="comma-separated vCPU counts (default 2,4)")
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", "5")),
                    help="boots per kernel and vCPU count (default 5)")
    ap.add_argument("--mem", default=os.environ.get("BENCH_MEM", "2G"),
                    help="guest memory (default 2G)")
    ap.add_argument("--icount-runs", type=int,
                    default=int(os.environ.get("BENCH_ICOUNT_RUNS", "3")),
                    help="instruction-count boots (QEMU -icount) per kernel at the first "
                         "vCPU count (default 3; 0: none)")
    ap.add_argument("--mib", type=int, default=256, help="file size in MiB (default 256)")
    ap.add_argument("--gmem-mib", type=int, default=64,
                    help="guest_memfd size in MiB for the KVM cases (default 64)")
    ap.add_argument("--alloc-runs", type=int, default=int(os.environ.get("BENCH_ALLOC_RUNS", "5")),
                    help="alloc_bench --runs, host and guest (default 5)")
    ap.add_argument("--alloc-quick", action="store_true",
                    help="alloc_bench --quick (a smoke run, figures not comparable)")
    ap.add_argument("--scale-runs", type=int,
                    default=int(os.environ.get("BENCH_SCALE_RUNS", "5")),
                    help=f"scaling boots per kernel ({SCALE_VCPUS} vCPUs, {SCALE_NODES} NUMA "
                         "nodes; default 5; 0: none)")
    ap.add_argument("--no-lockstat", dest="lockstat", action="store_false",
                    help="no lock-statistics boot of the patched lockstat kernel")
    ap.add_argument("--scale-mib", type=int, default=16,
                    help="scaling cases: MiB each thread faults in (default 16)")
    ap.add_argument("--only", choices=("kernel", "userspace"),
                    help="run only the kernel cases or only the allocator comparison")
    ap.add_argument("--parse-only", action="store_true",
                    help="boot nothing: rebuild the outputs from the logs of the last run")
    args = ap.parse_args()
    try:
        args.vcpus = [int(v) for v in args.vcpus.split(",") if v]
    except ValueError:
        ap.error(f"--vcpus {args.vcpus}: not a list of numbers")
    if not args.vcpus or min(args.vcpus) < 1 or args.runs < 1 or args.mib < 1 \
            or args.gmem_mib < 1:
        ap.error("--vcpus, --runs, --mib and --gmem-mib must be positive")
    if args.icount_runs < 0 or args.scale_runs < 0:
        ap.error("--icount-runs and --scale-runs must not be negative")
    if args.scale_mib < 1:
        ap.error("--scale-mib must be positive")
    return args


def main():
    args = parse_args()
    args.t0 = time.monotonic()
    args.loadavg_start = list(os.getloadavg())
    started = datetime.datetime.now(datetime.timezone.utc)
    if args.parse_only:
        started = first_log_date(args) or started
    os.makedirs(LOGS, exist_ok=True)

    kernels = [(f, "release") for f in FLAVORS]
    if args.only in (None, "kernel") and args.scale_runs and args.lockstat:
        kernels.append(("patched", "lockstat"))
    if not args.parse_only:
        for f, v in kernels:
            if not os.path.exists(bzimage(f, v)):
                print(f"bench: error: {bzimage(f, v)} is missing (make kernel-release; "
                      f"kernel/scripts/kbuild.sh build stock release; kernel/scripts/kbuild.sh "
                      f"build patched lockstat, or --no-lockstat)", file=sys.stderr)
                return 2
        if not os.path.exists(INITRD):
            print(f"bench: error: {INITRD} is missing (make -C bench initramfs)", file=sys.stderr)
            return 2
        take_snapshots(kernels)

    boots = []
    for vcpus in args.vcpus:
        if args.only in (None, "kernel"):
            for run in range(1, args.runs + 1):
                # Stock and patched alternate, so that a change of load on
                # the host reaches both alike.
                for flavor in FLAVORS:
                    boots.append(Boot(flavor, vcpus, "kernel", run))
        if args.only in (None, "userspace"):
            boots.append(Boot("patched", vcpus, "userspace", 0))
    if args.only in (None, "kernel"):
        for run in range(1, args.icount_runs + 1):
            for flavor in FLAVORS:
                boots.append(Boot(flavor, args.vcpus[0], "kernel", run, icount=True))
        for run in range(1, args.scale_runs + 1):
            for flavor in FLAVORS:
                boots.append(Boot(flavor, SCALE_VCPUS, "scale", run))
        if args.scale_runs and args.lockstat:
            boots.append(Boot("patched", SCALE_VCPUS, "lockstat", 0))

    host_json = None
    if args.only in (None, "userspace"):
        host_json = run_host_userspace(args)

    samples = Samples()
    for i, boot in enumerate(boots, 1):
        if args.parse_only and os.path.exists(boot.log):
            # Judge the log again, as run-vm.sh did after the boot.
            boot.status = subprocess.call(
                [os.path.join(TOP, "tests", "vm", "check-log.py"), "--mode", "bench", boot.log],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if boot.status != 0:
                samples.problems.append(f"{boot.name}: check-log.py --mode bench fails on "
                                        f"{os.path.relpath(boot.log, TOP)}")
        if not args.parse_only:
            say(f"[{i}/{len(boots)}] {boot.flavor} kernel, {boot.vcpus} vCPUs, "
                f"{boot.what}" + (f", run {boot.run}" if boot.run else "") + " ...")
            boot.execute(args)
            say(f"[{i}/{len(boots)}] {boot.name}: "
                + ("ok" if boot.status == 0 else f"FAILED (run-vm.sh exit {boot.status}, "
                   f"see {os.path.relpath(boot.out, TOP)})")
                + f", {boot.seconds:.0f} s, {time.monotonic() - args.t0:.0f} s in all")
            if boot.status != 0:
                samples.problems.append(f"{boot.name}: run-vm.sh exit {boot.status} "
                                        f"({os.path.relpath(boot.out, TOP)})")
        parse_boot(boot, samples)

    res = build_results(args, samples, boots, host_json, started)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    md = markdown(res)
    with open(os.path.join(OUT, "results.md"), "w") as f:
        f.write(md + "\n")
    png = chart(res, args)
    print()
    print(md)
    say(f"wrote {os.path.relpath(os.path.join(OUT, 'results.json'), TOP)}, "
        f"{os.path.relpath(os.path.join(OUT, 'results.md'), TOP)}"
        + (f", {os.path.relpath(png, TOP)}" if png else " (no chart: gnuplot missing or failed)"))
    missed = [t for t in res["meta"]["targets"] if not t["met"]]
    say(f"{len(res['meta']['targets']) - len(missed)} target(s) met, {len(missed)} missed; "
        f"{len(res['meta']['problems'])} problem(s); {res['meta']['seconds']} s")
    return 1 if res["meta"]["problems"] or (res["kernel"] and not png) else 0


if __name__ == "__main__":
    sys.exit(main())
