# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Changelog entries about the test harness stay where users can skip them.

The released changelog is read by users of the collection; the testbed, the
test tiers and the benchmarks are ours. Their entries go in the `harness`
section (changelogs/config.yaml) or in `trivial`, which is left out."""
from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
FRAGMENTS = REPO / "changelogs" / "fragments"
# How a harness entry starts: "<part of the harness> - ...".
HARNESS_PREFIXES = ("testbed - ", "tests - ", "tests and bench - ", "make bench - ", "benchmarks - ",
                    "reliability tests - ", "molecule - ", "local testbed ")
SKIPPABLE = {"harness", "trivial"}


def _entries():
    for path in sorted(FRAGMENTS.glob("*.yml")):
        for section, items in (yaml.safe_load(path.read_text()) or {}).items():
            for item in items if isinstance(items, list) else [items]:
                yield path.name, section, item


def test_harness_section_is_configured():
    sections = dict(yaml.safe_load((REPO / "changelogs" / "config.yaml").read_text())["sections"])
    assert "harness" in sections
    # Last, after everything a user reads.
    assert list(sections)[-1] == "harness"


def test_harness_entries_are_in_a_skippable_section():
    misplaced = [(name, section, item[:80]) for name, section, item in _entries()
                 if section not in SKIPPABLE and item.lower().startswith(HARNESS_PREFIXES)]
    assert misplaced == [], "move these to `harness:` (or `trivial:`): %s" % misplaced


def test_bench_and_testbed_fragments_hold_no_user_section():
    """A fragment named for the benchmarks or the testbed is about them alone."""
    leaking = [(name, section) for name, section, _entry in _entries()
               if name.startswith(("bench_", "testbed_", "fresh_clone_")) and section not in SKIPPABLE]
    assert leaking == [], leaking
