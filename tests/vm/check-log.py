#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge the serial console log of a secmem test VM.

    check-log.py [--mode check|demo|bench] [--results OUT.tap]
                 [--handover LINE] LOG

Reads:
  * KUnit's KTAP output (suites run at boot): every test case is one result
    named kunit.<suite>.<case>. A parameterised case is one result too; its
    parameters are checked against the case's verdict and counts. A suite
    without cases (e.g. its init failed) is one result, kunit.<suite>.
  * The guest runner's TAP (tests/vm/guest/init, secmem.mode=check): every
    program is one result, guest.<program>.
  * In demo mode, the runner's "secmem-demo:" lines: demo.<script>; in
    bench mode (make bench) its "secmem-bench:" lines: bench.<script>. The
    benchmark's figures are not judged here (bench/run.py reads them).
  * Kernel splats anywhere outside test output (table BAD_PATTERNS), and
    the harness's own failure lines (RUN_PATTERNS).

Adds two results of its own, so that the counts agree with the verdict:
vm.kernel-log-clean (no splat) and vm.run-complete (every planned result
came, the done marker came, no timeout, KUnit counts are consistent).

With --handover LINE the log holds two kernels: the first one wrote LINE
to its kernel log and handed over to a second one (kexec, or a crash and
kdump), which printed its own "Linux version" banner. The splat scan covers
the first kernel up to LINE and the whole second kernel; the results are
the second kernel's; vm.handover says whether the handover happened.

Writes the flat list as TAP to --results, prints every problem with the
log lines around it, and ends with "guest: N passed, N failed, N skipped".
Exit status: 0 if everything passed, 1 otherwise, 2 on usage errors.
"""

import argparse
import os
import re
import sys

# Kernel log lines that fail a run wherever they appear, except inside test
# output (lines starting with "#", after the printk timestamp). Each entry:
# (regular expression searched in the line without its timestamp, what it
# means). The first entry that matches names the line, so the specific
# reports come before the generic lines that every splat prints.
BAD_PATTERNS = [
    # Specific reports.
    (r"^(BUG|WARNING): .*\bKASAN\b|^KASAN: ", "KASAN report"),
    (r"^UBSAN: ", "UBSAN report"),
    (r"^(BUG|WARNING): .*\bKFENCE\b|^KFENCE: ", "KFENCE report"),
    (r"possible (circular|recursive) locking", "lockdep: possible deadlock"),
    (r"inconsistent lock state", "lockdep: inconsistent lock state"),
    (r"irq lock inversion", "lockdep: irq lock inversion"),
    (r"suspicious RCU usage", "lockdep: suspicious RCU usage"),
    (r"lock held when returning to user space", "lockdep: lock leaked to user space"),
    (r"BUG: (sleeping function called from invalid context|scheduling while atomic)",
     "sleeping in atomic context"),
    (r"list_(add|del) corruption", "list corruption (DEBUG_LIST)"),
    (r"^BUG: Bad page (state|map)", "bad page state"),
    (r"BUG: soft lockup|watchdog: .*hard LOCKUP", "CPU lockup"),
    (r"^INFO: task \S+ blocked for more than \d+ seconds", "hung task"),
    (r"rcu_\w+ (self-)?detected stall", "RCU stall"),
    # Generic lines.
    (r"^Kernel panic - not syncing", "kernel panic"),
    (r"^Oops\b", "kernel oops"),
    (r"^kernel BUG at ", "BUG_ON()"),
    (r"(^|: )BUG: ", "kernel BUG"),
    (r"^WARNING: ", "kernel WARNING"),
    (r"-{5,}\[ cut here \]-{5,}", "start of a kernel WARNING or BUG"),
    (r"Call Trace:", "stack trace"),
]
BAD_RES = [(re.compile(p), what) for p, what in BAD_PATTERNS]

# Lines that say the run itself went wrong: written by run-vm.sh and by the
# guest's /init. They fail vm.run-complete rather than vm.kernel-log-clean.
RUN_PATTERNS = [
    (r"^secmem-vm: timeout", "the VM timed out"),
    (r"^secmem-vm: qemu exited with status", "QEMU failed"),
    (r"^secmem-guest: error: ", "guest runner error"),
]
RUN_RES = [(re.compile(p), what) for p, what in RUN_PATTERNS]

# "[   12.345678] " and, with CONFIG_PRINTK_CALLER, "[    T1] " after it.
TIMESTAMP = r"\[\s*\d+\.\d+\](?:\[\s*[TC]\d+\])? ?"
TIMESTAMP_AT_START = re.compile("^" + TIMESTAMP)
# A kernel message can start in the middle of a line that user space was
# writing to the console: split there.
TIMESTAMP_INSIDE = re.compile(r"(?<=.)(?=\[\s*\d+\.\d{6}\])")
ANSI_ESCAPE = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|[@-Z\\-_c])")

RESULT = re.compile(r"^(ok|not ok) (\d+)(?: -)? ?(.*?)\s*$")
PLAN = re.compile(r"^1\.\.(\d+)")
STATS = re.compile(r"^# (.+?): pass:(\d+) fail:(\d+) skip:(\d+) total:(\d+)")

GUEST_DONE = "secmem-guest: done"
DEMO_LINE = re.compile(r"^secmem-demo: (ok|not ok) (\S+)")
DEMO_RESULT = re.compile(r"^secmem-demo: result: (\w+)")
# Bench mode's runner prints the same lines with its own prefix.
RUNNER_PREFIX = {"demo": "secmem-demo", "bench": "secmem-bench"}

CONTEXT_BEFORE = 3
CONTEXT_AFTER = 6
MAX_REPORTS = 20


def parse_result(m):
    """(status, description, reason) of a RESULT match: "ok N desc # SKIP
    why" is a skip, any other "# text" after the description a reason."""
    status = "pass" if m.group(1) == "ok" else "fail"
    desc, _, directive = m.group(3).partition(" # ")
    directive = directive.strip()
    if directive[:4].upper() == "SKIP":
        if status == "pass":
            status = "skip"
        directive = directive[4:].strip()
    return status, desc.strip(), directive


class Line:
    """One logical console line."""

    def __init__(self, number, text, kernel):
        self.number = number    # 1-based line in the log file
        self.text = text        # without timestamp
        self.kernel = kernel    # had a printk timestamp


# A failed result's lines that say why, written under it in the TAP file
# (at most MAX_WHY_LINES), so that the summary of a long run shows them.
WHY_RE = re.compile(r"\bFAIL\b|\bnot ok\b|timed out|Bail out")
MAX_WHY_LINES = 5
# A KUnit expectation that failed, and the lines of its message under it
# ("Expected a == b, but", then each side's value).
KUNIT_WHY_RE = re.compile(r"\b(EXPECTATION|ASSERTION) FAILED at ")
KUNIT_WHY_MORE = 3


def failure_lines(diag):
    texts = [d.text if isinstance(d, Line) else d for d in diag]
    why = []
    more = 0
    for t in texts:
        if KUNIT_WHY_RE.search(t):
            more = KUNIT_WHY_MORE
        elif more and not t.lstrip().startswith("#"):
            more -= 1
        elif WHY_RE.search(t):
            more = 0
        else:
            more = 0
            continue
        why.append(t.lstrip("# ").strip())
    return why[:MAX_WHY_LINES]


class Result:
    def __init__(self, name, status, reason="", line=None, diag=None):
        self.name = name
        self.status = status    # "pass", "fail" or "skip"
        self.reason = reason
        self.line = line
        self.diag = diag or []


class KtapNode:
    """One KTAP (sub)test list: the top level, a suite, or a case's params."""

    def __init__(self, indent, line):
        self.indent = indent
        self.line = line
        self.name = None
        self.plan = None
        self.results = []       # KtapResult
        self.stats = {}         # name -> (pass, fail, skip, total)
        self.diag = []          # lines since the last result, for failure reports


class KtapResult:
    def __init__(self, status, desc, reason, child, line, diag):
        self.status = status
        self.desc = desc
        self.reason = reason
        self.child = child      # the KtapNode this result closes, if any
        self.line = line
        self.diag = diag


class Checker:
    def __init__(self, path, mode, handover=None):
        self.path = path
        self.mode = mode
        self.handover = handover
        self.first = []         # the first kernel's lines, with --handover
        self.results = []
        self.problems = []      # (line, message): results missing or inconsistent
        self.splats = []        # (line, message): kernel splats
        self.raw = []
        self.lines = []
        self.has_timestamps = False

    # --- input -----------------------------------------------------------

    def read(self):
        with open(self.path, "rb") as f:
            data = f.read().decode("utf-8", errors="replace")
        if data.endswith("\n"):
            data = data[:-1]
        for number, raw in enumerate(data.split("\n"), 1):
            raw = ANSI_ESCAPE.sub("", raw).replace("\r", "").replace("\0", "")
            self.raw.append(raw)
            for piece in TIMESTAMP_INSIDE.split(raw):
                m = TIMESTAMP_AT_START.match(piece)
                if m:
                    self.lines.append(Line(number, piece[m.end():], True))
                    self.has_timestamps = True
                else:
                    self.lines.append(Line(number, piece, False))

    def problem(self, line, message):
        self.problems.append((line, message))

    # --- kernel splats ---------------------------------------------------

    def scan_splats(self):
        for line in self.first + self.lines:
            text = line.text.strip()
            if not text or text.startswith("#"):
                continue
            for regex, what in BAD_RES:
                if regex.search(text):
                    self.splats.append((line, what))
                    break
            if line.kernel:
                continue
            for regex, what in RUN_RES:
                if regex.search(text):
                    self.problem(line, what)
                    break

    # --- KUnit KTAP ------------------------------------------------------

    def parse_kunit(self):
        """Parse every KTAP document the kernel printed."""
        i = 0
        seen = False
        while i < len(self.lines):
            if self.lines[i].text == "KTAP version 1":
                seen = True
                i = self.parse_ktap_document(i)
            else:
                i += 1
        if not seen:
            print("check-log: note: no KUnit output (kernel without CONFIG_KUNIT=y, "
                  "or kunit.enable=0)")

    def parse_ktap_document(self, start):
        root = KtapNode(0, self.lines[start])
        stack = [root]
        i = start + 1
        while i < len(self.lines):
            line = self.lines[i]
            raw = line.text.rstrip()
            text = raw.lstrip(" ")
            indent = len(raw) - len(text)
            if text == "TAP version 13" and not line.kernel:
                break                       # the guest runner took over
            if text == "KTAP version 1":
                if indent == 0:
                    break                   # a new document
                stack.append(KtapNode(indent, line))
            elif line.kernel or not self.has_timestamps:
                self.ktap_line(stack, line, indent, text)
            i += 1
            if len(stack) == 1 and root.plan is not None and \
                    len(root.results) >= root.plan:
                break
        self.ktap_finish(root, stack)
        return i

    def ktap_line(self, stack, line, indent, text):
        # A result closes every deeper list: it is their parent's verdict.
        m = RESULT.match(text)
        if m and indent <= stack[-1].indent:
            child = None
            while len(stack) > 1 and stack[-1].indent > indent:
                child = stack.pop()
            node = stack[-1]
            if node.indent != indent:
                return
            status, desc, reason = parse_result(m)
            if child is not None and child.name not in (None, desc):
                self.problem(line, f"KUnit: result '{desc}' closes subtest '{child.name}'")
            node.results.append(KtapResult(status, desc, reason, child, line, node.diag))
            node.diag = []
            return
        node = next((n for n in reversed(stack) if n.indent == indent), None)
        if text.startswith("# Subtest:") and node is not None:
            node.name = text[len("# Subtest:"):].strip()
            return
        m = PLAN.match(text)
        if m and node is not None:
            node.plan = int(m.group(1))
            return
        m = STATS.match(text)
        if m:
            counts = tuple(int(x) for x in m.group(2, 3, 4, 5))
            name = m.group(1)
            if name == "Totals":
                target = stack[1] if len(stack) > 1 else stack[0]
            else:
                target = next((n for n in reversed(stack) if n.name == name), stack[-1])
            target.stats[name] = counts
            return
        if text:
            stack[-1].diag.append(line)

    def ktap_finish(self, root, stack):
        if len(stack) > 1 or root.plan is None or len(root.results) != root.plan:
            self.problem(stack[-1].line,
                         f"KUnit: output ends early: planned {root.plan} suite(s), "
                         f"{len(root.results)} reported"
                         + (f", suite '{stack[1].name}' unfinished" if len(stack) > 1 else ""))
        for r in root.results:
            self.kunit_suite(r.desc, r.status, r.reason, r.child, r.line, r.diag)
        # A suite still open when the output ended: what ran, and a failure.
        if len(stack) > 1:
            node = stack[1]
            for r in node.results:
                self.kunit_case(node.name, r)
            self.add(Result(f"kunit.{node.name}", "fail", "did not finish", node.line,
                            node.diag))

    def kunit_case(self, suite, r):
        """Add one case; returns its parameters' counts, or None."""
        diag = r.diag
        pnode = r.child
        if pnode is None or not pnode.results:
            self.add(Result(f"kunit.{suite}.{r.desc}", r.status, r.reason, r.line, diag))
            return None
        pc = {"pass": 0, "fail": 0, "skip": 0}
        diag = []
        for p in pnode.results:
            pc[p.status] += 1
            diag += p.diag
            if p.status == "fail":
                diag.append(Line(p.line.number, f"parameter {p.desc}: not ok", True))
        diag += pnode.diag + r.diag
        self.add(Result(f"kunit.{suite}.{r.desc}", r.status, r.reason, r.line, diag))
        return pc

    def kunit_suite(self, suite, status, reason, node, line, diag):
        if node is None or not node.results:
            if node is not None:
                diag = node.diag + diag
            self.add(Result(f"kunit.{suite}", status, reason, line, diag))
            return
        counts = {"pass": 0, "fail": 0, "skip": 0}
        params = {"pass": 0, "fail": 0, "skip": 0}
        if node.plan is not None and node.plan != len(node.results):
            self.problem(line, f"KUnit: suite {suite} planned {node.plan} case(s), "
                         f"{len(node.results)} reported")
        for r in node.results:
            counts[r.status] += 1
            pc = self.kunit_case(suite, r)
            if pc is None:
                params[r.status] += 1
                continue
            for k in pc:
                params[k] += pc[k]
            want = "fail" if pc["fail"] else "pass" if pc["pass"] else "skip"
            if want != r.status:
                self.problem(r.line, f"KUnit: {suite}.{r.desc} is '{r.status}' but its "
                             f"parameters say '{want}'")
            if r.desc in r.child.stats and r.child.stats[r.desc] != (
                    pc["pass"], pc["fail"], pc["skip"], len(r.child.results)):
                self.problem(r.line, f"KUnit: {suite}.{r.desc} counts "
                             f"{r.child.stats[r.desc]} do not match its parameters")
        want = "fail" if counts["fail"] else "pass" if counts["pass"] else "skip"
        if want != status:
            self.problem(line, f"KUnit: suite {suite} is '{status}' but its cases say '{want}'")
        total = len(node.results)
        if suite in node.stats and node.stats[suite] != (
                counts["pass"], counts["fail"], counts["skip"], total):
            self.problem(line, f"KUnit: suite {suite} counts {node.stats[suite]} "
                         f"do not match its {total} case(s)")
        ptotal = sum(params.values())
        if "Totals" in node.stats and node.stats["Totals"] != (
                params["pass"], params["fail"], params["skip"], ptotal):
            self.problem(line, f"KUnit: suite {suite} totals {node.stats['Totals']} "
                         f"do not match the {ptotal} test(s) reported")

    # --- guest runner ----------------------------------------------------

    def parse_guest(self):
        """The runner's TAP (check mode)."""
        start = next((i for i, line in enumerate(self.lines)
                      if not line.kernel and line.text.strip() == "TAP version 13"), None)
        done = any(not line.kernel and line.text.strip() == GUEST_DONE for line in self.lines)
        if start is None:
            self.problem(None, "guest: the test runner never started (no 'TAP version 13')")
            return
        plan = None
        seen = 0
        output = []
        for line in self.lines[start + 1:]:
            if line.kernel:
                continue
            text = line.text.rstrip()
            if text == GUEST_DONE:
                break
            if text.startswith("#"):
                output.append(line)
                continue
            m = PLAN.match(text)
            if m and plan is None:
                plan = int(m.group(1))
                continue
            m = RESULT.match(text)
            if not m:
                continue
            seen += 1
            status, name, reason = parse_result(m)
            if int(m.group(2)) != seen:
                self.problem(line, f"guest: result number {m.group(2)}, expected {seen}")
            self.add(Result(f"guest.{name}", status, reason, line, output))
            output = []
        if plan is None:
            self.problem(self.lines[start], "guest: the runner printed no plan")
        elif seen != plan:
            self.problem(self.lines[-1], f"guest: planned {plan} program(s), {seen} reported")
            # The program that was running when the log ended, with its output.
            running = [i for i, line in enumerate(output)
                       if line.text.startswith("# running ")]
            if running:
                first = output[running[-1]]
                name = first.text.split()[2]
                self.add(Result(f"guest.{name}", "fail", "did not finish", first,
                                output[running[-1]:]))
        if not done:
            self.problem(None, f"guest: no '{GUEST_DONE}' line: the run did not finish")

    def parse_demo(self):
        """Demo mode, and bench mode with its own prefix."""
        kind = self.mode
        prefix = RUNNER_PREFIX[kind]
        line_re, result_re = DEMO_LINE, DEMO_RESULT
        if kind != "demo":
            line_re = re.compile(DEMO_LINE.pattern.replace("secmem-demo", prefix))
            result_re = re.compile(DEMO_RESULT.pattern.replace("secmem-demo", prefix))
        done = False
        verdict = None
        output = []
        for line in self.lines:
            if line.kernel:
                continue
            text = line.text.rstrip()
            m = line_re.match(text)
            if m:
                self.add(Result(f"{kind}.{m.group(2)}", "pass" if m.group(1) == "ok" else "fail",
                                line=line, diag=output))
                output = []
                continue
            m = result_re.match(text)
            if m:
                verdict = (m.group(1), line)
            elif text == GUEST_DONE:
                done = True
            elif text.startswith(f"{prefix}: run "):
                output = []
            else:
                output.append(line)
        if verdict is None:
            self.problem(None, f"{kind}: no '{prefix}: result:' line")
        elif verdict[0] != "pass":
            self.problem(verdict[1], f"{kind}: the " +
                         ("demonstration" if kind == "demo" else "benchmark") + " failed")
        if not done:
            self.problem(None, f"{kind}: no '{GUEST_DONE}' line: the run did not finish")

    # --- output ----------------------------------------------------------

    def add(self, result):
        self.results.append(result)

    def split_handover(self):
        """Keep the second kernel's lines; the first kernel's, up to the
        handover line, are only scanned for splats."""
        at = next((i for i, line in enumerate(self.lines)
                   if line.kernel and self.handover in line.text), None)
        if at is None:
            self.add(Result("vm.handover", "fail",
                            f"the first kernel never logged '{self.handover}'"))
            return
        boot = next((i for i in range(at + 1, len(self.lines))
                     if self.lines[i].kernel and "Linux version " in self.lines[i].text), None)
        if boot is None:
            self.add(Result("vm.handover", "fail", "no kernel booted after the handover",
                            self.lines[at]))
            self.first, self.lines = self.lines[:at + 1], []
            return
        self.first, self.lines = self.lines[:at + 1], self.lines[boot:]
        self.add(Result("vm.handover", "pass"))

    def run(self):
        self.read()
        if self.handover:
            self.split_handover()
        if self.mode == "check":
            self.parse_kunit()
            self.parse_guest()
        else:
            self.parse_demo()
        self.scan_splats()
        # The first reports, as "FAIL:" lines for the TAP file's reasons.
        self.add(Result("vm.kernel-log-clean", "fail" if self.splats else "pass",
                        f"{len(self.splats)} splat line(s)" if self.splats else "",
                        diag=[f"FAIL: {what}: {line.text.strip()}"
                              for line, what in self.splats]))
        self.add(Result("vm.run-complete", "fail" if self.problems else "pass",
                        f"{len(self.problems)} problem(s)" if self.problems else "",
                        diag=[f"FAIL: {what}" for _, what in self.problems]))

    def context(self, number):
        lo = max(1, number - CONTEXT_BEFORE)
        hi = min(len(self.raw), number + CONTEXT_AFTER)
        for n in range(lo, hi + 1):
            mark = ">" if n == number else " "
            print(f"  {mark}{n:6d} | {self.raw[n - 1]}")

    def report(self):
        shown_to = 0
        problems = sorted(self.splats + self.problems,
                          key=lambda p: p[0].number if p[0] else sys.maxsize)
        for count, (line, message) in enumerate(problems):
            if count == MAX_REPORTS:
                print(f"check-log: ... and {len(problems) - count} more problem(s)")
                break
            where = f"{self.path}:{line.number}" if line else self.path
            print(f"check-log: {where}: {message}")
            if line and line.number > shown_to:
                self.context(line.number)
                shown_to = line.number + CONTEXT_AFTER
        for r in self.results:
            if r.status != "fail":
                continue
            where = f"{self.path}:{r.line.number}: " if r.line else ""
            print(f"check-log: {where}not ok {r.name}" + (f" ({r.reason})" if r.reason else ""))
            for d in r.diag[-40:]:
                text = d.text if isinstance(d, Line) else d
                print(f"    {text}")

    def write_tap(self, path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            f.write("TAP version 13\n")
            f.write(f"1..{len(self.results)}\n")
            for n, r in enumerate(self.results, 1):
                name = re.sub(r"\s+", "_", r.name).replace("#", "_")
                if r.status == "pass":
                    f.write(f"ok {n} {name}\n")
                elif r.status == "skip":
                    f.write(f"ok {n} {name} # SKIP {r.reason}".rstrip() + "\n")
                else:
                    f.write(f"not ok {n} {name}\n")
                    if r.reason:
                        f.write(f"# {r.reason}\n")
                    for text in failure_lines(r.diag):
                        f.write(f"# {text}\n")

    def summary(self):
        passed = sum(r.status == "pass" for r in self.results)
        failed = sum(r.status == "fail" for r in self.results)
        skipped = sum(r.status == "skip" for r in self.results)
        print(f"guest: {passed} passed, {failed} failed, {skipped} skipped")
        return failed == 0


def main():
    ap = argparse.ArgumentParser(description="Judge a secmem VM console log.")
    ap.add_argument("log", help="console log written by run-vm.sh")
    ap.add_argument("--results", metavar="OUT.tap", help="write the results as TAP")
    ap.add_argument("--mode", choices=("check", "demo", "bench"), default="check",
                    help="what the guest was booted for (default: check)")
    ap.add_argument("--handover", metavar="LINE",
                    help="two kernels: judge the one booted after LINE in the kernel log")
    args = ap.parse_args()

    checker = Checker(args.log, args.mode, args.handover)
    try:
        checker.run()
    except OSError as e:
        print(f"check-log: error: {e}", file=sys.stderr)
        return 2
    checker.report()
    if args.results:
        checker.write_tap(args.results)
    return 0 if checker.summary() else 1


if __name__ == "__main__":
    sys.exit(main())
