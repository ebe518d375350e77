# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""make bench's table and its CPU accounting, over a recorded result (no testbed, no timing)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# converge.py imports figures.py beside it, as when run as a script.
sys.path.insert(0, str(ROOT / "benchmarks"))
SPEC = importlib.util.spec_from_file_location("bench_converge", ROOT / "benchmarks" / "converge.py")
converge = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(converge)


def recorded_result() -> dict:
    """Run l's numbers, with the CPU fields that runs since then record."""
    result = json.loads((ROOT / "benchmarks/results/2026-11-26l-vm-2cpu.json").read_text())
    result["clusters"].update(one_cluster_cpu_s=10.8, three_clusters_cpu_s=29.8, cpu_floor_s=14.9, cpu_floor_ratio=1.94,
                              one_cluster_run_cpu_s=8.2, three_clusters_run_cpu_s=24.4, run_cpu_floor_s=12.2,
                              run_cpu_floor_ratio=1.59)
    return result


def test_table_says_which_targets_are_met():
    rows = {line.split("  ")[0]: line for line in converge.table(recorded_result()).splitlines()}
    assert rows["(a) site.yml converge, same releases"].endswith(" met")
    assert rows["(b) site.yml no-op (changed=0)"].endswith("NOT met")
    assert rows["(d) site.yml on three clusters (forks)"].endswith("NOT met")


def test_table_says_how_many_rounds_the_medians_take():
    result = recorded_result()
    result["reference"].update(converge_runs_s=[8.1, 8.6, 9.0], noop_runs_s=[1.5, 1.6, 1.7], bare_helm_runs_s=[13, 12, 14])
    assert "(a) and (b): medians of 3 rounds" in converge.table(result)


def test_table_shows_the_cpu_floor_of_three_clusters():
    (floor,) = [line for line in converge.table(recorded_result()).splitlines() if line.startswith("(d) its CPU floor")]
    assert "CPUs" in floor and "14.9" in floor and "1.94" in floor
    assert "one cluster: 10.8 cpu-s, three: 29.8" in floor


def test_table_shows_the_floor_of_the_run_alone():
    (floor,) = [line for line in converge.table(recorded_result()).splitlines() if line.startswith("(d) the run alone")]
    assert "12.2" in floor and "1.59" in floor and "one cluster: 8.2 cpu-s, three: 24.4" in floor


def test_run_cpu_seconds_count_the_finished_children():
    first = converge.run_cpu_seconds()
    subprocess.run([sys.executable, "-c", "sum(range(5_000_000))"], check=True)
    assert converge.run_cpu_seconds() > first


def test_busy_cpu_seconds_only_grow():
    first = converge.busy_cpu_seconds()
    sum(range(5_000_000))  # some CPU work of this process
    assert converge.busy_cpu_seconds() > first > 0


def test_a_ratio_just_over_its_target_is_not_met_though_it_prints_as_the_target():
    result = recorded_result()
    result["reference"].update(noop_s=1.45, converge_s=7.1, noop_to_converge_ratio=0.204)
    (row,) = [line for line in converge.table(result).splitlines() if line.startswith("(b)")]
    assert " 0.20 " in row and row.endswith("NOT met")
