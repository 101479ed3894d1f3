#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge the console log of the Debian systemd scenario (boot.sh).

    judge.py LOG [--results OUT.tap] [--prefix NAME]

The guest's scenario (rootfs/usr/local/lib/secmem-vm/scenario.sh) prints
"secmem-systemd: start MODE", one "ok N ID - what" / "not ok N ID - what"
line per assertion, a plan "1..N", and "secmem-systemd: done". Each
assertion becomes the result NAME.ID (NAME: --prefix, "systemd" unless
given). Two results are added here:

  NAME.vm.kernel-log-clean     no kernel splat on the console (the
                               patterns of ../check-log.py)
  NAME.vm.run-complete         the scenario started and finished, its
                               plan was met, the guest powered off, no
                               timeout

Prints the failures with their diagnostics and ends with
"NAME: N passed, N failed". Exit status 0 if everything passed.
"""

import argparse
import importlib.machinery
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# No __pycache__ in the source tree.
sys.dont_write_bytecode = True


def load_check_log():
    """tests/vm/check-log.py, for its splat patterns."""
    path = os.path.join(HERE, "..", "check-log.py")
    loader = importlib.machinery.SourceFileLoader("check_log", path)
    spec = importlib.util.spec_from_loader("check_log", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


CL = load_check_log()
RESULT = re.compile(r"^(ok|not ok) (\d+) (\S+) - (.*)$")
PLAN = re.compile(r"^1\.\.(\d+)$")
START = "secmem-systemd: start"
DONE = "secmem-systemd: done"


def clean(text):
    return CL.ANSI_ESCAPE.sub("", text).replace("\r", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--results", metavar="OUT.tap")
    ap.add_argument("--prefix", metavar="NAME", default="systemd",
                    help="the results' names start with NAME. (default: systemd)")
    args = ap.parse_args()

    with open(args.log, errors="replace") as f:
        raw = [clean(line.rstrip("\n")) for line in f]

    # Split kernel messages that landed in the middle of a user-space line.
    lines = []
    for text in raw:
        lines.extend(CL.TIMESTAMP_INSIDE.split(text))

    results = []        # (status, id, description, [diagnostics])
    splats = []         # (line number, what, text)
    run_problems = []
    started = done = powered_off = False
    plan = None
    for i, text in enumerate(lines):
        m = CL.TIMESTAMP_AT_START.match(text)
        if m:
            body = text[m.end():]
            for regex, what in CL.BAD_RES:
                if regex.search(body):
                    splats.append((i, what, text))
                    break
            if "reboot: Power down" in body:
                powered_off = True
            continue
        for regex, what in CL.RUN_RES:
            if regex.search(text):
                run_problems.append(f"{what}: {text}")
        if text.startswith(START):
            started = True
            continue
        if text.startswith(DONE):
            done = True
            continue
        if not started or done:
            continue
        m = RESULT.match(text)
        if m:
            results.append([m.group(1) == "ok", m.group(3), m.group(4), []])
            continue
        m = PLAN.match(text)
        if m:
            plan = int(m.group(1))
            continue
        if results and text.startswith("    # "):
            results[-1][3].append(text[6:])

    if not started:
        run_problems.append("the scenario never started (no \"secmem-systemd: start\"): "
                            "did systemd boot? see the log")
    elif not done:
        run_problems.append("the scenario did not finish (no \"secmem-systemd: done\")")
    if started and plan is None:
        run_problems.append("no plan line (1..N)")
    elif plan is not None and plan != len(results):
        run_problems.append(f"plan 1..{plan} but {len(results)} results")
    if done and not powered_off:
        run_problems.append("the guest did not power off")

    tap = []
    for ok, rid, desc, diag in results:
        tap.append((ok, f"{args.prefix}.{rid} - {desc}", diag))
    tap.append((not splats, f"{args.prefix}.vm.kernel-log-clean",
                [f"log line {i + 1}: {what}: {text}" for i, what, text in splats[:10]]))
    tap.append((not run_problems, f"{args.prefix}.vm.run-complete", run_problems))

    if args.results:
        os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
        with open(args.results, "w") as out:
            out.write("TAP version 13\n")
            out.write(f"1..{len(tap)}\n")
            for n, (ok, name, diag) in enumerate(tap, 1):
                out.write(f"{'ok' if ok else 'not ok'} {n} {name}\n")
                for d in diag:
                    out.write(f"# {d}\n")

    failed = [(name, diag) for ok, name, diag in tap if not ok]
    for name, diag in failed:
        print(f"FAILED: {name}")
        for d in diag:
            print(f"    {d}")
    for i, what, _ in splats[:3]:
        lo, hi = max(0, i - CL.CONTEXT_BEFORE), min(len(lines), i + CL.CONTEXT_AFTER)
        print(f"--- {what}, log line {i + 1}:")
        for text in lines[lo:hi]:
            print(f"    {text}")
    print(f"{args.prefix}: {len(tap) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
