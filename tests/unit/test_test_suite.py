# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/test_suite.py: what `make test`'s table says of each tier, read from the tiers' JUnit reports,
and how a stop (Ctrl-C, SIGTERM) ends the run: no tier starts after it, the running ones' process groups end."""
import json
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import test_suite  # noqa: E402

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="tests.integration.test_a" name="test_one" time="10.5"/>
  <testcase classname="tests.integration.test_a" name="test_two" time="2.0"><failure message="boom"/></testcase>
  <testcase classname="tests.integration.test_b.TestGroup" name="test_three" time="1.0">
    <skipped message="needs an NVIDIA GPU: no /dev/nvidiactl"/></testcase>
  <testcase classname="tests.integration.test_b.TestGroup" name="test_four" time="0.5"><error message="setup"/></testcase>
</testsuite></testsuites>
"""


def test_the_report_gives_counts_skip_reasons_and_seconds_per_file(tmp_path):
    (tmp_path / "r.xml").write_text(REPORT)
    outcome = test_suite.Outcome("integration")
    per_file = test_suite.read_junit(tmp_path / "r.xml", outcome)
    assert dict(outcome.counts) == {"passed": 1, "failed": 2, "skipped": 1}
    assert dict(outcome.skips) == {"needs an NVIDIA GPU: no /dev/nvidiactl": 1}
    assert per_file == {"test_a.py": 12.5, "test_b.py": 1.5}
    assert outcome.measured


def test_a_tier_without_a_report_shows_no_counts_and_a_failed_tier_fails_the_whole(tmp_path):
    lint = test_suite.Outcome("lint", rc=0, seconds=61, cpu_s=90)
    assert test_suite.read_junit(tmp_path / "none.xml", lint) == {}
    (tmp_path / "r.xml").write_text(REPORT)
    integration = test_suite.Outcome("integration", rc=1, seconds=1283, cpu_s=1200)
    test_suite.read_junit(tmp_path / "r.xml", integration)
    table = test_suite.table([lint, integration], 1500, test_suite.MemoryPeak())
    assert "| lint | - | - | - | 1 min 01 s | 1.5 core-min | passed |" in table
    assert "| integration | 1 | 2 | 1 | 21 min 23 s | 20.0 core-min | FAILED (rc 1) |" in table
    assert "| **whole** | 1 | 2 | 1 | 25 min 00 s | 21.5 core-min | FAILED: integration |" in table
    assert "- integration: 1 x needs an NVIDIA GPU: no /dev/nvidiactl" in table


def test_the_cpu_line_gives_the_busy_share_and_the_idle_core_minutes(monkeypatch):
    # /proc/stat's first line: user nice system idle iowait ...; 300 of 1000 ticks idle or waiting.
    monkeypatch.setattr(test_suite, "cpu_times", lambda: (1300, 11000))
    monkeypatch.setattr(test_suite.os, "cpu_count", lambda: 2)
    line = test_suite.cpu_use((1000, 10000), wall_s=600, tiers_cpu_s=300)
    assert line == ("CPU busy 70 % of the run on 2 cores; 6 core-minutes idle; of the 14 busy, the tiers' own "
                    "processes 5, the rest (the testbeds' control planes and nodes, dockerd and its containers, "
                    "the kernel) 9.")
    assert line in test_suite.table([], 600, test_suite.MemoryPeak(), cpu=line)


def burn(seconds: float) -> str:
    """A shell command that uses `seconds` of CPU (not of wall time) and ends."""
    return f"{sys.executable} -c 'import time; end = time.process_time() + {seconds}\nwhile time.process_time() < end: pass'"


def test_a_commands_cpu_time_counts_the_descendants_it_waited_for_and_not_the_daemons_it_left():
    stopper = test_suite.Stopper()
    # A child that burns 0.6 s of CPU and is waited for; a daemon that burns 1.5 s, left running in a session of
    # its own (as a testbed's control plane is): CPU time, so the bounds hold on a busy machine too.
    script = f"{burn(0.6)} && (setsid {burn(1.5)} &) && exit 4"
    assert stopper.run("units", ["sh", "-c", script]) == 4
    assert 0.5 < stopper.cpu_s["units"] < 1.5
    assert stopper.run("units", ["true"]) == 0  # a second command of the same name adds to it
    assert 0.5 < stopper.cpu_s["units"] < 1.5


def test_every_tier_of_the_lanes_is_a_make_target():
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    for tier in test_suite.TIERS:
        assert f"\n{tier}:" in makefile, tier


def _wait_for(predicate, bound_s=10.0):
    """Polls `predicate` up to a generous bound; the tests assert what happened, never how long it took."""
    deadline = time.monotonic() + bound_s
    while not predicate():
        assert time.monotonic() < deadline, "not within %s s" % bound_s
        time.sleep(0.05)


def _still_runs(pid):
    """A zombie has ended: only its parent (or init) has not reaped it yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class _Lane:
    """One lane of fake tiers run by test_suite.run_lanes in a thread; each tier runs `script` (sh) in place of make.

    The script starts a child shell that writes its pid to <tier>.pid and becomes a `sleep`: a process of the
    tier's group that is not its leader, which a stop must end too. (Not a background `sleep &`: a
    non-interactive shell starts those with SIGINT ignored.)"""

    def __init__(self, tmp_path, monkeypatch, tiers, script, grace_s=30.0):
        monkeypatch.setattr(test_suite, "RESULTS", tmp_path)
        self.tmp_path, self.started, self.reports, self.outcomes = tmp_path, [], [], []
        self.stopper = test_suite.Stopper(grace_s=grace_s)
        threading.Thread(target=self.stopper.stop_when_asked, args=(self.reports.append,), daemon=True).start()
        self.thread = threading.Thread(target=self._run, args=(tiers, script), daemon=True)
        self.thread.start()

    def _run(self, tiers, script):
        self.outcomes = test_suite.run_lanes(tiers, 1, test_suite.MemoryPeak(), time.monotonic(), self.stopper,
                                             command=lambda tier: self._command(tier, script))

    def _command(self, tier, script):
        self.started.append(tier)
        child = f"echo \\$\\$ > {self.tmp_path / tier}.pid; exec sleep 30"
        return ["sh", "-c", f'{script}; sh -c "{child}"']

    def running_child(self, tier):
        """Once `tier` runs: its process group and its background sleep's pid."""
        pid_file = self.tmp_path / f"{tier}.pid"
        _wait_for(lambda: pid_file.exists() and pid_file.read_text().strip())
        return self.stopper.running()[tier], int(pid_file.read_text())

    def finish(self):
        self.thread.join(20)
        assert not self.thread.is_alive(), "the lane did not end after the stop"
        assert self.stopper.done.wait(20), "the stop did not end"
        return self.outcomes


def test_a_stop_while_the_first_tier_runs_ends_its_group_and_starts_no_other_tier(tmp_path, monkeypatch):
    lane = _Lane(tmp_path, monkeypatch, ("first", "second"), script="true")
    pgid, child = lane.running_child("first")
    lane.stopper.ask(signal.SIGINT)
    outcomes = lane.finish()
    assert lane.started == ["first"]
    assert [(o.tier, o.result) for o in outcomes] == [("first", "stopped"), ("second", "not run")]
    assert not _still_runs(child)
    assert not test_suite.group_alive(pgid)
    assert lane.stopper.exit_status == 130
    assert lane.reports[0] == "SIGINT: no tier starts any more; SIGINT to first"
    assert not any("SIGKILL" in report for report in lane.reports)


def test_a_tier_that_ignores_sigint_gets_sigkill_after_the_grace(tmp_path, monkeypatch):
    # `trap '' INT`: the shell and what it starts (an ignored signal stays ignored across exec) outlive SIGINT.
    lane = _Lane(tmp_path, monkeypatch, ("stubborn",), script="trap '' INT", grace_s=0.5)
    pgid, child = lane.running_child("stubborn")
    lane.stopper.ask(signal.SIGTERM)
    outcomes = lane.finish()
    assert [(o.tier, o.result) for o in outcomes] == [("stubborn", "stopped")]
    assert outcomes[0].rc == -signal.SIGKILL
    assert not _still_runs(child)
    assert not test_suite.group_alive(pgid)
    assert "stubborn: still running after 0.5 s, SIGKILL to its process group" in lane.reports
    assert lane.stopper.exit_status == 143


def test_after_a_stop_nothing_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(test_suite, "RESULTS", tmp_path)
    stopper = test_suite.Stopper()
    stopper.ask(signal.SIGTERM)
    stopper.ask(signal.SIGINT)  # a second signal changes nothing: the first one names the stop
    assert stopper.run("build", ["true"]) is None
    started = []
    outcomes = test_suite.run_lanes(("units", "lint"), 2, test_suite.MemoryPeak(), time.monotonic(), stopper,
                                    command=lambda tier: started.append(tier) or ["true"])
    assert started == []
    assert [o.result for o in outcomes] == ["not run", "not run"]
    assert stopper.exit_status == 143


def test_a_free_lane_takes_the_next_tier_while_the_longest_one_still_runs(tmp_path, monkeypatch):
    """The first tier ends only once the last one has run: the other lane ran every other tier meanwhile."""
    monkeypatch.setattr(test_suite, "RESULTS", tmp_path)
    done = tmp_path / "last.done"
    scripts = {"longest": f"for _ in $(seq 400); do [ -f {done} ] && exit 0; sleep 0.05; done; exit 1",
               "second": "true", "last": f"touch {done}"}
    started = []
    outcomes = test_suite.run_lanes(("longest", "second", "last"), 2, test_suite.MemoryPeak(), time.monotonic(),
                                    test_suite.Stopper(), command=lambda tier: started.append(tier) or
                                    ["sh", "-c", scripts[tier]])
    # The lanes take the tiers in order but start them from their own threads, so either of the first two may
    # start first; "longest" passing shows that "last" ran while it still ran.
    assert sorted(started) == ["last", "longest", "second"]
    assert [(o.tier, o.result) for o in outcomes] == [("longest", "passed"), ("second", "passed"), ("last", "passed")]


def test_the_tiers_are_dealt_longest_first_and_a_tier_never_measured_first(tmp_path):
    (tmp_path / "d.json").write_text('{"units": 170, "integration": 1250, "lint": 45}')
    assert test_suite.longest_first(["units", "lint", "integration", "new"], tmp_path / "d.json") == [
        "new", "integration", "units", "lint"]
    assert test_suite.longest_first(["units", "lint"], tmp_path / "none.json") == ["units", "lint"]


def test_every_tier_has_a_measured_time():
    measured = json.loads(test_suite.TIER_DURATIONS.read_text())
    assert set(measured) == set(test_suite.TIERS)


def test_a_tier_that_ends_by_itself_keeps_its_result_and_a_run_not_stopped_exits_0():
    stopper = test_suite.Stopper()
    assert stopper.run("build", ["sh", "-c", "exit 3"]) == 3
    assert stopper.running() == {}
    assert stopper.exit_status == 0


def test_the_table_of_a_stopped_run_says_so_and_names_no_stopped_tier_failed():
    outcomes = [test_suite.Outcome("build", rc=0, seconds=5),
                test_suite.Outcome("integration", rc=-15, seconds=75, stopped=True, cpu_s=30),
                test_suite.Outcome("units", rc=1, seconds=30),
                test_suite.Outcome("lint")]
    table = test_suite.table(outcomes, 80, test_suite.MemoryPeak(), stopped_by="SIGINT")
    assert "| integration | - | - | - | 1 min 15 s | 0.5 core-min | stopped |" in table
    assert "| lint | - | - | - | 0 min 00 s | - | not run |" in table
    assert "| **whole** | 0 | 0 | 0 | 1 min 20 s | 0.5 core-min | FAILED: units; STOPPED by SIGINT: integration |" in table
    assert test_suite.verdict(outcomes[:1], None) == "passed"
