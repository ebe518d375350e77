# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`make test`: every tier, the waiting ones beside the computing ones, and one table at the end.

The integration tier mostly waits (pods, jobs, helm's waits) while units, lint
and sanity compute, so tiers run side by side, in LANES lanes: each lane
takes the next tier of TIERS, longest first, as soon as its last one ended,
so the lanes end close together. The testbed, which most tiers need, is
built first; what one tier alone needs (the kind harness's binaries, helm 4)
it builds in its lane, and build.sh's locks keep two lanes from building one
component at the same time. Each tier's testbeds are its own (instances
apart, below), GPU mode's too: its node keeps its kubelet's device-plugin
folder in a mount namespace of its own (tools/testbed/lib/node.py). Each tier's whole output goes to
.test-results/<tier>.log; a failed tier's last lines are printed. The table
(tier, passed, failed, skipped, wall time, CPU time), every skip with its reason and
the run's peak memory end the run, and are written to .test-results/summary.md.

Ctrl-C (SIGINT) or SIGTERM stops the run: no lane starts another tier, each
running tier's process group (make, its pytest, a testbed's teardown) gets
SIGINT, on which pytest still runs its fixtures' teardown (the testbeds go
down; on SIGTERM pytest dies without it), then SIGKILL if it still runs
after STOP_GRACE_S; the table still
ends the run, the stopped tiers marked so, and the exit status is 128 + the
signal's number (130, 143).

    tools/test_suite.py [--only TIER ...]

Every tier is a make target of its own (`make integration`, ...), runnable alone.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
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
# (tests/integration/conftest.py), the helm 4 tier the next one, GPU mode the one after; the Docker tier the
# default, 0.
INTEGRATION_WORKERS = int(os.environ.get("GPUCI_INTEGRATION_WORKERS", "2"))
HELM4_INSTANCE = INTEGRATION_WORKERS + 1
GPU_MODE_INSTANCE = INTEGRATION_WORKERS + 2
# What most tiers need, built before any lane starts. (A new machine's kind binaries and helm 4, about 5 minutes
# of Go on 2 cores, are built by the Docker and helm 4 tiers in their lanes, beside the integration tier.)
BUILD_STEPS = (["make", "--no-print-directory", "build-testbed"],)
# The tiers that run side by side, dealt to LANES lanes longest first by their wall times in
# tests/tier-durations.json (measured; every run writes its own to .test-results/tier-durations.json, to copy
# over when tiers change): each lane takes the next tier when its last one ended, so they end close together.
# (With two fixed lanes, integration in one and the rest one after another in the other, the second lane
# ended 9 to 20 minutes after the first.)
TIERS = ("integration", "units", "lint", "sanity", "rules-tests", "host-tests", "helm4-tests", "docker-tests",
         "gpu-mode-tests")
TIER_DURATIONS = REPO / "tests" / "tier-durations.json"
LANES = 2
TIER_ENVIRONMENT = {"helm4-tests": {"GPUCI_TESTBED_INSTANCE": str(HELM4_INSTANCE)},
                    "gpu-mode-tests": {"GPUCI_TESTBED_INSTANCE": str(GPU_MODE_INSTANCE)}}
TAIL_LINES = 150
PROGRESS_EVERY_S = 120
STOP_GRACE_S = 120  # how long a stopped tier may take to tear its testbeds down before SIGKILL
KILLED_GONE_S = 10  # how long the processes SIGKILL ended may take to go (one in uninterruptible sleep waits)


@dataclass
class Outcome:
    tier: str
    rc: int | None = None
    seconds: float = 0.0
    counts: Counter = field(default_factory=Counter)
    skips: Counter = field(default_factory=Counter)
    measured: bool = False  # a pytest tier whose JUnit report was read
    cpu_s: float | None = None  # CPU seconds of its processes (Stopper.run), not of the daemons its testbeds left
    stopped: bool = False  # terminated by a stop of the run (Ctrl-C, SIGTERM), not failed by itself

    @property
    def result(self) -> str:
        if self.stopped:
            return "stopped"
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


def cpu_times() -> tuple[int, int]:
    """(idle, all) clock ticks of every core since boot, from /proc/stat (iowait counts as idle)."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return ticks[3] + ticks[4], sum(ticks)


def cpu_use(since: tuple[int, int], wall_s: float, tiers_cpu_s: float = 0.0) -> str:
    """How busy the cores were since `since` (cpu_times()), the idle core-minutes left (what more lanes side
    by side could still use), and how the busy ones divide between the tiers' own processes and the rest."""
    idle_now, all_now = cpu_times()
    idle, ticks = idle_now - since[0], max(all_now - since[1], 1)
    cores = os.cpu_count() or 1
    core_minutes = cores * wall_s / 60
    busy = core_minutes * (1 - idle / ticks)
    return (f"CPU busy {100 * (1 - idle / ticks):.0f} % of the run on {cores} cores; "
            f"{core_minutes * idle / ticks:.0f} core-minutes idle; of the {busy:.0f} busy, the tiers' own "
            f"processes {tiers_cpu_s / 60:.0f}, the rest (the testbeds' control planes and nodes, dockerd and "
            f"its containers, the kernel) {max(busy - tiers_cpu_s / 60, 0):.0f}.")


class Stopper:
    """One stop for the whole run: asked once (by a signal), obeyed by every lane and the build.

    Commands start through run(), each in a session of its own, so that a stop
    reaches every process a tier started, and only those. The check for a stop
    and the start of a command happen under one lock, and stop_when_asked()
    takes its list of running commands under that lock after the stop was
    asked: a command is either on that list or never started."""

    def __init__(self, grace_s: float = STOP_GRACE_S):
        self.grace_s = grace_s
        self.signum: int | None = None
        self.asked = threading.Event()
        self.done = threading.Event()  # every stopped group is gone (or was killed)
        self.signalled: set[str] = set()  # the names whose commands the stop terminated
        self._running: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self.cpu_s: dict[str, float] = {}  # per name, summed over its commands

    def ask(self, signum: int, _frame=None) -> None:
        """The signal handler: it only records the stop; stop_when_asked() does the stopping, in its thread."""
        self.signum = self.signum or signum
        self.asked.set()

    @property
    def exit_status(self) -> int:
        return 128 + self.signum if self.signum else 0

    def run(self, name: str, argv: list[str], **popen) -> int | None:
        """`argv`'s exit status, or None when the run is stopping and it was not started."""
        with self._lock:
            if self.asked.is_set():
                return None
            process = subprocess.Popen(argv, start_new_session=True, **popen)
            self._running[name] = process
        try:
            # wait4: with the exit status, the CPU time of the command and of every descendant it waited for
            # (pytest, ansible-playbook, helm, the modules); daemons it left running (a testbed's control plane
            # and node, dockerd) are not among them.
            _pid, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_s[name] = self.cpu_s.get(name, 0.0) + usage.ru_utime + usage.ru_stime
            return process.returncode
        finally:
            with self._lock:
                self._running.pop(name, None)

    def running(self) -> dict[str, int]:
        """Each running command's process group: its session's leader's pid."""
        with self._lock:
            return {name: process.pid for name, process in self._running.items()}

    def stop_when_asked(self, report) -> None:
        """Waits for the stop; then SIGINT to each running group, up to grace_s for them to go, SIGKILL to the rest.

        SIGINT, whichever signal stopped the run: pytest ends on it as on Ctrl-C, tearing its testbeds down."""
        self.asked.wait()
        groups = self.running()  # taken after the stop was asked: nothing starts after it
        self.signalled = set(groups)  # before any SIGINT, so that the lanes it ends read it
        report(f"{signal.Signals(self.signum).name}: no tier starts any more; SIGINT to "
               f"{', '.join(sorted(groups)) or 'nothing (none running)'}")
        for pgid in groups.values():
            signal_group(pgid, signal.SIGINT)
        deadline, next_report = time.monotonic() + self.grace_s, 0.0
        alive = sorted(groups)
        while alive and time.monotonic() < deadline:
            if time.monotonic() >= next_report:
                report(f"waiting up to {deadline - time.monotonic():.0f} s more for {', '.join(alive)} to stop")
                next_report = time.monotonic() + 15
            time.sleep(0.2)
            alive = [name for name in alive if group_alive(groups[name])]
        for name in alive:
            report(f"{name}: still running after {self.grace_s:g} s, SIGKILL to its process group")
            signal_group(groups[name], signal.SIGKILL)
        # SIGKILL is delivered, not awaited: on a busy machine the processes still run a moment after it.
        deadline = time.monotonic() + KILLED_GONE_S
        while any(group_alive(groups[name]) for name in alive) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.done.set()


def signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:  # every process of the group already ended
        pass


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs. Not os.killpg(pgid, 0): that counts zombies too, and a
    container's init may reap orphans late or never, which would hold every stop for the whole grace."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]  # after "pid (comm)"
        except OSError:  # ended while we looked
            continue
        if int(pgrp) == pgid and state != "Z":
            return True
    return False


def tier_command(tier: str) -> list[str]:
    return ["make", "--no-print-directory", tier]


def run_tier(tier: str, memory: MemoryPeak, started: float, stopper: Stopper, command=tier_command) -> Outcome:
    outcome = Outcome(tier)
    if stopper.asked.is_set():
        return outcome  # not run
    junit = RESULTS / f"{tier}.xml"
    junit.unlink(missing_ok=True)
    env = dict(os.environ, **TIER_ENVIRONMENT.get(tier, {}))
    # Every pytest the tier runs writes its report (the Docker and host tiers' too); -rs lists skips in the log.
    env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} --junitxml={junit} -rs".strip()
    say(started, f"{tier}: started")
    memory.running.add(tier)
    begin = time.monotonic()
    with open(RESULTS / f"{tier}.log", "w") as log:
        outcome.rc = stopper.run(tier, command(tier), cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    outcome.seconds, outcome.cpu_s = time.monotonic() - begin, stopper.cpu_s.get(tier)
    memory.running.discard(tier)
    # A tier that ended by itself just as the stop came keeps its own result.
    outcome.stopped = tier in stopper.signalled and outcome.rc != 0
    per_file = {} if outcome.stopped else read_junit(junit, outcome)  # a stopped run's report, if any, is partial
    if tier == "integration" and per_file:
        (RESULTS / "integration-durations.json").write_text(json.dumps(
            {name: round(seconds) for name, seconds in sorted(per_file.items())}, indent=2) + "\n")
    say(started, f"{tier}: {outcome.result} in {minutes(outcome.seconds)} {dict(outcome.counts) or ''}")
    if outcome.rc and not outcome.stopped:  # a stopped tier's log tells of the stop, not of a failure
        lines = (RESULTS / f"{tier}.log").read_text(errors="replace").splitlines()
        with _PRINTING:
            print(f"---- last {TAIL_LINES} lines of .test-results/{tier}.log ----", *lines[-TAIL_LINES:],
                  f"---- end of {tier} ----", sep="\n", flush=True)
    return outcome


def longest_first(tiers, durations: Path = TIER_DURATIONS) -> list[str]:
    """`tiers` by their measured seconds, the longest first; one never measured goes first (it may be long)."""
    seconds = json.loads(durations.read_text()) if durations.exists() else {}
    return sorted(tiers, key=lambda tier: -seconds.get(tier, float("inf")))


def run_lanes(tiers, lanes: int, memory: MemoryPeak, started: float, stopper: Stopper,
              command=tier_command) -> list[Outcome]:
    """`tiers` in `lanes` threads, each taking the next tier when its last one ended; outcomes in `tiers` order."""
    outcomes: dict[str, Outcome] = {}
    waiting = list(tiers)
    taking = threading.Lock()

    def lane():
        while True:
            with taking:
                if not waiting:
                    return
                tier = waiting.pop(0)
            outcomes[tier] = run_tier(tier, memory, started, stopper, command)

    threads = [threading.Thread(target=lane, name=f"lane {number + 1}", daemon=True)
               for number in range(min(lanes, len(tiers)))]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        for thread in threads:
            thread.join(PROGRESS_EVERY_S / len(threads))
        if any(thread.is_alive() for thread in threads):
            say(started, "still running: " + ", ".join(sorted(memory.running)))
    return [outcomes.get(tier, Outcome(tier)) for tier in tiers]


def table(outcomes: list[Outcome], whole_s: float, memory: MemoryPeak, stopped_by: str | None = None,
          cpu: str = "") -> str:
    rows = ["| tier | passed | failed | skipped | wall time | CPU | result |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    totals: Counter = Counter()
    for o in outcomes:
        totals.update(o.counts)
        cells = [str(o.counts[k]) for k in ("passed", "failed", "skipped")] if o.measured else ["-", "-", "-"]
        rows.append(f"| {o.tier} | {' | '.join(cells)} | {minutes(o.seconds)} | {core_minutes(o.cpu_s)} | {o.result} |")
    tiers_cpu_s = sum(o.cpu_s or 0.0 for o in outcomes)
    rows.append(f"| **whole** | {totals['passed']} | {totals['failed']} | {totals['skipped']} | {minutes(whole_s)} | "
                f"{core_minutes(tiers_cpu_s)} | {verdict(outcomes, stopped_by)} |")
    skips = [f"- {o.tier}: {count} x {reason}" for o in outcomes for reason, count in sorted(o.skips.items())]
    peak = (f"Peak memory in use: {memory.peak_kib / 2**20:.1f} GiB of "
            f"{total_memory_kib() / 2**20:.1f} GiB, while {', '.join(memory.peak_during) or 'building'} ran.")
    return "\n".join([*rows, "", "Skipped, with the reason each gave:" if skips else "Nothing skipped.", *skips,
                      "", peak, *([cpu] if cpu else [])]) + "\n"


def verdict(outcomes: list[Outcome], stopped_by: str | None) -> str:
    failed = [o.tier for o in outcomes if o.rc and not o.stopped]
    stopped = [o.tier for o in outcomes if o.stopped]
    parts = ["FAILED: " + ", ".join(failed)] if failed else []
    if stopped_by:
        parts.append(f"STOPPED by {stopped_by}" + (": " + ", ".join(stopped) if stopped else ""))
    return "; ".join(parts) or "passed"


def total_memory_kib() -> int:
    return int(Path("/proc/meminfo").read_text().split()[1])


def core_minutes(cpu_s: float | None) -> str:
    """A tier's CPU time in core-minutes (on 2 cores, a tier that kept one busy for its whole wall time shows
    its wall minutes here); '-' for one that never ran."""
    return "-" if cpu_s is None else f"{cpu_s / 60:.1f} core-min"


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


_PRINTING = threading.Lock()  # lanes print from their threads: one line at a time


def say(started: float, message: str) -> None:
    with _PRINTING:
        print(f"[test-suite {minutes(time.monotonic() - started)}] {message}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="TIER", help="run just these tiers (in the lanes)")
    args = parser.parse_args(argv)
    wanted = set(args.only or TIERS)
    RESULTS.mkdir(exist_ok=True)
    started, cpu_at_start = time.monotonic(), cpu_times()
    memory = MemoryPeak()
    memory.start()
    stopper = Stopper()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stopper.ask)
    threading.Thread(target=stopper.stop_when_asked, args=(lambda message: say(started, message),),
                     daemon=True).start()
    build = Outcome("build")
    say(started, "building what the tiers need (cached builds take seconds)")
    begin = time.monotonic()
    with open(RESULTS / "build.log", "w") as log:
        for step in BUILD_STEPS:
            build.rc = stopper.run("build", step, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
            if build.rc:  # failed, or stopped (None: the stop came between two steps)
                break
    build.seconds, build.cpu_s = time.monotonic() - begin, stopper.cpu_s.get("build")
    build.stopped = stopper.asked.is_set() and build.rc != 0
    outcomes = [build]
    if build.rc and not build.stopped:
        print((RESULTS / "build.log").read_text(errors="replace")[-8000:], flush=True)
    else:  # after a stop, the lanes start nothing: their tiers are listed as not run
        side_by_side = run_lanes(longest_first(t for t in TIERS if t in wanted), LANES, memory, started, stopper)
        (RESULTS / "tier-durations.json").write_text(json.dumps(
            {o.tier: round(o.seconds) for o in side_by_side if o.rc == 0}, indent=2) + "\n")
        outcomes += side_by_side
    if stopper.asked.is_set():
        stopper.done.wait()  # the stopped tiers' process groups are gone before the table says so
    stopped_by = signal.Signals(stopper.signum).name if stopper.signum else None
    whole_s = time.monotonic() - started
    summary = table(outcomes, whole_s, memory, stopped_by,
                    cpu_use(cpu_at_start, whole_s, sum(o.cpu_s or 0.0 for o in outcomes)))
    (RESULTS / "summary.md").write_text(summary)
    print("\n" + summary, flush=True)
    return stopper.exit_status or (1 if any(o.rc for o in outcomes) else 0)


if __name__ == "__main__":
    sys.exit(main())
