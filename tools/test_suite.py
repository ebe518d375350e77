# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`make test`: every tier, the waiting ones beside the computing ones, and one table at the end.

The integration tier mostly waits (pods, jobs, helm's waits) while units, lint
and sanity compute, so they run side by side, in lanes; the tiers of a lane
run one after another. Everything the tiers build is built first, once, so
no two lanes build the same thing at the same time. GPU mode runs last and
alone: its device plugin needs the machine's only real node
(tools/testbed/lib/node.py). Each tier's whole output goes to
.test-results/<tier>.log; a failed tier's last lines are printed. The table
(tier, passed, failed, skipped, wall time), every skip with its reason and
the run's peak memory end the run, and are written to .test-results/summary.md.

    tools/test_suite.py [--only TIER ...]

Every tier is a make target of its own (`make integration`, ...), runnable alone.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / ".test-results"
# Testbed instances (tools/testbed/lib/layout.py): the integration tier's workers take 1..N
# (tests/integration/conftest.py), the helm 4 tier the next one; the Docker and GPU-mode tiers the default, 0.
INTEGRATION_WORKERS = int(os.environ.get("GPUCI_INTEGRATION_WORKERS", "2"))
HELM4_INSTANCE = INTEGRATION_WORKERS + 1
# What the tiers build, built before any lane starts.
BUILD_STEPS = (
    ["make", "--no-print-directory", "build-testbed"],
    ["bash", "tools/testbed/build.sh", "kind", "etcd-kind", "coredns-kind"],
    ["env", "GPUCI_HELM=4", "bash", "tools/testbed/build.sh", "helm"],
)
# Side by side; each lane's tiers in order. The first lane waits on its testbeds, the second mostly computes.
LANES = (
    ("integration",),
    ("units", "lint", "sanity", "rules-tests", "host-tests", "helm4-tests", "docker-tests"),
)
ALONE_AFTER = ("gpu-mode-tests",)
TIER_ENVIRONMENT = {"helm4-tests": {"GPUCI_TESTBED_INSTANCE": str(HELM4_INSTANCE)}}
TAIL_LINES = 150
PROGRESS_EVERY_S = 120


@dataclass
class Outcome:
    tier: str
    rc: int | None = None
    seconds: float = 0.0
    counts: Counter = field(default_factory=Counter)
    skips: Counter = field(default_factory=Counter)
    measured: bool = False  # a pytest tier whose JUnit report was read

    @property
    def result(self) -> str:
        return "not run" if self.rc is None else ("passed" if self.rc == 0 else f"FAILED (rc {self.rc})")


def read_junit(path: Path, outcome: Outcome) -> dict[str, float]:
    """Counts and skip reasons into `outcome`; returns seconds per test file (for durations.json)."""
    per_file: Counter = Counter()
    if not path.exists():
        return {}
    outcome.measured = True
    for case in ET.parse(path).getroot().iter("testcase"):
        parts = (case.get("classname") or "").split(".")  # package.module, or package.module.TestClass
        module = parts[-2] if len(parts) > 1 and parts[-1][:1].isupper() else parts[-1]
        per_file[f"{module}.py"] += float(case.get("time") or 0)
        if case.find("skipped") is not None:
            outcome.counts["skipped"] += 1
            outcome.skips[case.find("skipped").get("message", "").strip()] += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            outcome.counts["failed"] += 1
        else:
            outcome.counts["passed"] += 1
    return dict(per_file)


class MemoryPeak(threading.Thread):
    """The machine's memory in use (MemTotal - MemAvailable), sampled every few seconds."""

    def __init__(self, every_s: float = 3.0):
        super().__init__(daemon=True)
        self.every_s, self.peak_kib, self.running = every_s, 0, set()
        self.peak_during: list[str] = []

    def run(self) -> None:
        while True:
            info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
            used = int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])
            if used > self.peak_kib:
                self.peak_kib, self.peak_during = used, sorted(self.running)
            time.sleep(self.every_s)


def run_tier(tier: str, memory: MemoryPeak, started: float) -> Outcome:
    outcome = Outcome(tier)
    junit = RESULTS / f"{tier}.xml"
    junit.unlink(missing_ok=True)
    env = dict(os.environ, **TIER_ENVIRONMENT.get(tier, {}))
    # Every pytest the tier runs writes its report (the Docker and host tiers' too); -rs lists skips in the log.
    env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} --junitxml={junit} -rs".strip()
    say(started, f"{tier}: started")
    memory.running.add(tier)
    begin = time.monotonic()
    with open(RESULTS / f"{tier}.log", "w") as log:
        outcome.rc = subprocess.run(["make", "--no-print-directory", tier], cwd=REPO, env=env, stdout=log,
                                    stderr=subprocess.STDOUT, check=False).returncode
    outcome.seconds = time.monotonic() - begin
    memory.running.discard(tier)
    per_file = read_junit(junit, outcome)
    if tier == "integration" and per_file:
        (RESULTS / "integration-durations.json").write_text(json.dumps(
            {name: round(seconds) for name, seconds in sorted(per_file.items())}, indent=2) + "\n")
    say(started, f"{tier}: {outcome.result} in {minutes(outcome.seconds)} {dict(outcome.counts) or ''}")
    if outcome.rc:
        lines = (RESULTS / f"{tier}.log").read_text(errors="replace").splitlines()
        with _PRINTING:
            print(f"---- last {TAIL_LINES} lines of .test-results/{tier}.log ----", *lines[-TAIL_LINES:],
                  f"---- end of {tier} ----", sep="\n", flush=True)
    return outcome


def run_lanes(lanes, memory: MemoryPeak, started: float) -> list[Outcome]:
    outcomes: dict[str, Outcome] = {}

    def lane(tiers):
        for tier in tiers:
            outcomes[tier] = run_tier(tier, memory, started)

    threads = [threading.Thread(target=lane, args=(tiers,), daemon=True) for tiers in lanes if tiers]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        for thread in threads:
            thread.join(PROGRESS_EVERY_S / len(threads))
        if any(thread.is_alive() for thread in threads):
            say(started, "still running: " + ", ".join(sorted(memory.running)))
    return [outcomes[tier] for tiers in lanes for tier in tiers if tier in outcomes]


def table(outcomes: list[Outcome], whole_s: float, memory: MemoryPeak) -> str:
    rows = ["| tier | passed | failed | skipped | wall time | result |", "| --- | --- | --- | --- | --- | --- |"]
    totals: Counter = Counter()
    for o in outcomes:
        totals.update(o.counts)
        cells = [str(o.counts[k]) for k in ("passed", "failed", "skipped")] if o.measured else ["-", "-", "-"]
        rows.append(f"| {o.tier} | {' | '.join(cells)} | {minutes(o.seconds)} | {o.result} |")
    failed = [o.tier for o in outcomes if o.rc]
    rows.append(f"| **whole** | {totals['passed']} | {totals['failed']} | {totals['skipped']} | {minutes(whole_s)} | "
                f"{'FAILED: ' + ', '.join(failed) if failed else 'passed'} |")
    skips = [f"- {o.tier}: {count} x {reason}" for o in outcomes for reason, count in sorted(o.skips.items())]
    peak = (f"Peak memory in use: {memory.peak_kib / 2**20:.1f} GiB of "
            f"{total_memory_kib() / 2**20:.1f} GiB, while {', '.join(memory.peak_during) or 'building'} ran.")
    return "\n".join([*rows, "", "Skipped, with the reason each gave:" if skips else "Nothing skipped.", *skips,
                      "", peak]) + "\n"


def total_memory_kib() -> int:
    return int(Path("/proc/meminfo").read_text().split()[1])


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


_PRINTING = threading.Lock()  # lanes print from their threads: one line at a time


def say(started: float, message: str) -> None:
    with _PRINTING:
        print(f"[test-suite {minutes(time.monotonic() - started)}] {message}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="TIER", help="run just these tiers (in their lanes)")
    args = parser.parse_args(argv)
    wanted = set(args.only or [t for lane in LANES for t in lane] + list(ALONE_AFTER))
    RESULTS.mkdir(exist_ok=True)
    started = time.monotonic()
    memory = MemoryPeak()
    memory.start()
    build = Outcome("build")
    say(started, "building what the tiers need (cached builds take seconds)")
    begin = time.monotonic()
    with open(RESULTS / "build.log", "w") as log:
        for step in BUILD_STEPS:
            build.rc = subprocess.run(step, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
            if build.rc:
                break
    build.seconds = time.monotonic() - begin
    outcomes = [build]
    if build.rc:
        print((RESULTS / "build.log").read_text(errors="replace")[-8000:], flush=True)
    else:
        outcomes += run_lanes([tuple(t for t in lane if t in wanted) for lane in LANES], memory, started)
        outcomes += run_lanes([tuple(t for t in ALONE_AFTER if t in wanted)], memory, started)
    summary = table(outcomes, time.monotonic() - started, memory)
    (RESULTS / "summary.md").write_text(summary)
    print("\n" + summary, flush=True)
    return 1 if any(o.rc for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
