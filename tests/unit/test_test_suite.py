# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/test_suite.py: what `make test`'s table says of each tier, read from the tiers' JUnit reports."""
import sys
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
    lint = test_suite.Outcome("lint", rc=0, seconds=61)
    assert test_suite.read_junit(tmp_path / "none.xml", lint) == {}
    (tmp_path / "r.xml").write_text(REPORT)
    integration = test_suite.Outcome("integration", rc=1, seconds=1283)
    test_suite.read_junit(tmp_path / "r.xml", integration)
    table = test_suite.table([lint, integration], 1500, test_suite.MemoryPeak())
    assert "| lint | - | - | - | 1 min 01 s | passed |" in table
    assert "| integration | 1 | 2 | 1 | 21 min 23 s | FAILED (rc 1) |" in table
    assert "| **whole** | 1 | 2 | 1 | 25 min 00 s | FAILED: integration |" in table
    assert "- integration: 1 x needs an NVIDIA GPU: no /dev/nvidiactl" in table


def test_every_tier_of_the_lanes_is_a_make_target():
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    for tier in [t for lane in test_suite.LANES for t in lane] + list(test_suite.ALONE_AFTER):
        assert f"\n{tier}:" in makefile, tier
