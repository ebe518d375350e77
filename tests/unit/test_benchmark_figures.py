# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""make bench's figures in docs/reliability.md: written from a run, never by hand (the README only links them)."""
from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("bench_figures", ROOT / "benchmarks" / "figures.py")
figures = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(figures)
RUN_R = "benchmarks/results/2026-11-26r-vm-2cpu.json"


def recorded_result() -> dict:
    return json.loads((ROOT / RUN_R).read_text())


def rows(block: str) -> dict[str, str]:
    """The block's table rows by their first cell."""
    return {line.split(" | ")[0].lstrip("| "): line for line in block.splitlines() if line.startswith("| (")}


@pytest.mark.parametrize("document", figures.DOCUMENTS, ids=lambda d: d.name)
def test_each_document_holds_exactly_the_figures_of_the_json_it_cites(document):
    text = document.read_text()
    source = figures.cited_source(text)
    assert (ROOT / source).is_file(), f"{document.name} cites {source}, which is not in the repository"
    expected = figures.markdown(json.loads((ROOT / source).read_text()), source)
    assert figures.replace_block(text, expected, document.name) == text, (
        f"the figures in {document.name} differ from {source}: run `python benchmarks/figures.py {source}`")


def test_the_readme_links_the_latest_figures_and_holds_none():
    readme = (ROOT / "README.md").read_text()
    assert "docs/reliability.md#latest-figures" in readme
    assert figures.BEGIN not in readme and figures.END not in readme
    assert "### Latest figures" in (ROOT / "docs" / "reliability.md").read_text()


def test_verdicts_follow_the_targets():
    table = rows(figures.markdown(recorded_result(), RUN_R))
    assert table["(a) `site.yml` converge, same releases"].endswith("**met** |")
    assert table["(b) `site.yml` no-op rerun (changed=0)"].endswith("**NOT met** |")
    assert "0.211 x converge" in table["(b) `site.yml` no-op rerun (changed=0)"]
    assert table["(c) `gitlab_runner.yml` converge with 1 / 10 / 50 / 100 pools"].endswith("**met** |")
    assert table["(d) `site.yml` on three clusters at once (forks)"].endswith("**NOT met** |")


def test_a_noop_that_changed_something_is_not_met_whatever_its_time():
    result = recorded_result()
    result["reference"].update(noop_changed=1, noop_to_converge_ratio=0.1)
    (row,) = [r for key, r in rows(figures.markdown(result, RUN_R)).items() if key.startswith("(b)")]
    assert "(changed=1)" in row and row.endswith("**NOT met** |")


def test_the_worst_step_per_added_pool_decides_c():
    result = recorded_result()
    result["pools"][-1]["converge_s"] = result["pools"][-2]["converge_s"] + 50 * 1.6  # 50 -> 100 pools, 1.6 s each
    (row,) = [r for key, r in rows(figures.markdown(result, RUN_R)).items() if key.startswith("(c) `gitlab_runner.yml`")]
    assert "worst step 1.60 s per added pool" in row and row.endswith("**NOT met** |")


def test_the_floor_without_the_testbeds_is_shown_when_the_run_measured_it():
    result = recorded_result()
    assert not [key for key in rows(figures.markdown(result, RUN_R)) if "without the testbeds" in key]
    result["clusters"].update(one_cluster_run_cpu_s=6.1, three_clusters_run_cpu_s=18.6, run_cpu_floor_s=9.3,
                              run_cpu_floor_ratio=1.22)
    (row,) = [r for key, r in rows(figures.markdown(result, RUN_R)).items() if "without the testbeds" in key]
    assert "(18.6; one cluster 6.1) / 2 CPUs | 9.3 | 1.22 x one |" in row


def test_the_header_names_machine_load_commit_helm_rounds_and_source():
    result = recorded_result()
    result["commit"] = "abc1234 with uncommitted changes"
    result["helm"] = "v3.22.0+g1a2b3c4"
    header = figures.markdown(result, RUN_R).splitlines()[1]
    for expected in ("on `vm` (AMD EPYC, 2 CPUs, 23.5 GiB)", "load 0.46", "commit `abc1234 with uncommitted changes`",
                     "helm `v3.22.0+g1a2b3c4`",
                     f"raw figures in `{RUN_R}`", "medians of 3 rounds"):
        assert expected in header


def test_the_header_gives_the_machines_pace_where_the_result_has_it():
    result = recorded_result()
    assert "parses `site.yml`" not in figures.markdown(result, RUN_R).splitlines()[1]
    result["machine"]["parse_site_yml_s"] = 1.1
    assert "(AMD EPYC, 2 CPUs, 23.5 GiB; parses `site.yml` in 1.10 s)" in figures.markdown(result, RUN_R).splitlines()[1]


def test_each_pool_count_gets_a_row_with_its_cost_from_the_count_before():
    block = figures.markdown(recorded_result(), RUN_R)
    pool_rows = [line for line in block.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert [row.split(" | ")[0] for row in pool_rows] == ["| 1", "| 10", "| 50", "| 100"]
    assert pool_rows[0].endswith("| |") and pool_rows[1].endswith("| 0.34 |")


def test_replacing_keeps_everything_around_the_block():
    text = f"before\n{figures.BEGIN}\nold figures\n{figures.END}\nafter\n"
    assert figures.replace_block(text, "NEW", "doc.md") == "before\nNEW\nafter\n"


@pytest.mark.parametrize("text", ["no markers", f"{figures.BEGIN}\n{figures.BEGIN}\n{figures.END}",
                                  f"{figures.END}\n{figures.BEGIN}"], ids=["none", "twice", "reversed"])
def test_a_document_without_one_pair_of_markers_is_refused_by_name(text):
    with pytest.raises(ValueError, match="doc.md must hold the figures markers once each"):
        figures.replace_block(text, "NEW", "doc.md")


def test_writing_checks_every_document_before_it_writes_any(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    source = tmp_path / "run.json"
    source.write_text(json.dumps(recorded_result()))
    good, bad = tmp_path / "good.md", tmp_path / "bad.md"
    good.write_text(f"{figures.BEGIN}\n{figures.END}\n")
    bad.write_text("no markers\n")
    with pytest.raises(ValueError, match="bad.md"):
        figures.write_documents(source, (good, bad))
    assert good.read_text() == f"{figures.BEGIN}\n{figures.END}\n"
    figures.write_documents(source, (good,))
    assert figures.cited_source(good.read_text()) == "run.json"


def test_markdown_does_not_change_the_result():
    result = recorded_result()
    before = copy.deepcopy(result)
    figures.markdown(result, RUN_R)
    assert result == before
