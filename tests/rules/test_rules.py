# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The alert rules as Prometheus users test theirs: `promtool check rules` and `promtool test rules`.

The rules under test are built by module_utils/monitoring/alert_rules.py
from inventory.yml (and, for `check rules`, from inventories/local too);
alerts_test.yml holds, for every alert, series under which it fires and
series under which it stays silent. promtool comes from the Prometheus Go
module, built by `tools/testbed/build.sh prometheus` (`make rules-tests`
builds it first). Without it these tests fail: a skipped rule test would
pass rules nobody checked.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
if str(REPO / ".collections") not in sys.path:
    sys.path.insert(0, str(REPO / ".collections"))
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import alert_rules  # noqa: E402

sys.path.insert(0, str(REPO / "tools" / "testbed"))
from lib.prometheus import promql_blocks  # noqa: E402  (the testbed's Prometheus evaluates the same queries)


def promtool():
    """promtool from PATH (the Makefile puts the testbed's binaries there), else from the build's cache."""
    found = shutil.which("promtool")
    if not found:
        paths = subprocess.run(["bash", str(REPO / "tools" / "testbed" / "build.sh"), "--print-paths"],
                               capture_output=True, text=True, check=True).stdout.strip().split(":")
        found = next((str(Path(p) / "promtool") for p in paths if (Path(p) / "promtool").is_file()), None)
    assert found, "promtool is not built: run `bash tools/testbed/build.sh prometheus` (make rules-tests does)"
    return found


def run_promtool(*args, cwd=None):
    proc = subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def write_rules(path, settings):
    path.write_text(yaml.safe_dump(alert_rules(settings), sort_keys=False))
    return path


def inventory(folder):
    """An inventory's group_vars/all, merged as Ansible merges its files (the rules read only plain keys)."""
    merged = {}
    for path in sorted(folder.glob("*.yml")):
        merged.update(yaml.safe_load(path.read_text()) or {})
    return merged


def test_promtool_checks_the_rules_of_the_test_and_the_local_inventory(tmp_path):
    test_rules = write_rules(tmp_path / "test.rules.yml", yaml.safe_load((HERE / "inventory.yml").read_text()))
    local = write_rules(tmp_path / "local.rules.yml", inventory(REPO / "inventories" / "local" / "group_vars" / "all"))
    returncode, output = run_promtool("check", "rules", str(test_rules), str(local))
    assert returncode == 0, output
    assert "SUCCESS" in output


def test_every_alert_fires_when_it_should_and_stays_silent_when_it_should_not(tmp_path):
    shutil.copy(HERE / "alerts_test.yml", tmp_path / "alerts_test.yml")
    write_rules(tmp_path / "gpuci.rules.yml", yaml.safe_load((HERE / "inventory.yml").read_text()))
    returncode, output = run_promtool("test", "rules", "alerts_test.yml", cwd=tmp_path)
    assert returncode == 0, output


def test_the_docs_example_queries_evaluate(tmp_path):
    shutil.copy(HERE / "queries_test.yml", tmp_path / "queries_test.yml")
    write_rules(tmp_path / "gpuci.rules.yml", yaml.safe_load((HERE / "inventory.yml").read_text()))
    returncode, output = run_promtool("test", "rules", "queries_test.yml", cwd=tmp_path)
    assert returncode == 0, output


def test_every_query_in_the_docs_is_one_promtool_evaluates():
    def words(expr):
        return " ".join(expr.split())

    page = (REPO / "docs" / "monitoring.md").read_text()
    documented = [words(block) for block in promql_blocks(page)]
    tested = {words(case["expr"]) for test in yaml.safe_load((HERE / "queries_test.yml").read_text())["tests"]
              for case in test["promql_expr_test"]}
    assert len(documented) >= 3
    assert [query for query in documented if query not in tested] == []


def test_the_unit_tests_cover_every_alert_both_ways():
    """Each alert has an evaluation where it fires and one where nothing may fire."""
    built = alert_rules(yaml.safe_load((HERE / "inventory.yml").read_text()))
    alerts = {rule["alert"] for group in built["groups"] for rule in group["rules"]}
    cases = {}
    for test in yaml.safe_load((HERE / "alerts_test.yml").read_text())["tests"]:
        for case in test["alert_rule_test"]:
            cases.setdefault(case["alertname"], []).append(bool(case.get("exp_alerts")))
    assert set(cases) == alerts
    assert {alert: sorted(set(fires)) for alert, fires in cases.items()} == {alert: [False, True] for alert in alerts}
