# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/awx/launch.py prepares a job as AWX does: survey extra vars, credential injection, inventory script.

The parts that need no container engine; tests/docker runs whole jobs."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from conftest import REPO

sys.path.insert(0, str(REPO / "tools" / "awx"))
import launch  # noqa: E402

SURVEYS = {key: yaml.safe_load((REPO / "awx" / "surveys" / f"{key}.yml").read_text())["survey_spec"]["spec"]
           for key in ("plan", "site", "canary", "teardown")}


def test_unanswered_surveys_send_only_the_questions_defaults():
    for key, spec in SURVEYS.items():
        expected = {q["variable"]: q["default"] for q in spec if "default" in q}
        assert launch.survey_extra_vars(key, {}) == expected, key
    assert launch.survey_extra_vars("teardown", {}), "teardown's questions have role defaults"


def test_an_answer_reaches_its_survey_variable():
    extra = launch.survey_extra_vars("canary", {"gpu_canary_report_dir": "out"})
    assert extra["gpuci_survey_gpu_canary_report_dir"] == "out"


def test_an_answer_without_a_question_is_refused():
    with pytest.raises(SystemExit, match="no question for"):
        launch.survey_extra_vars("site", {"gpu_canary_report_dir": "out"})


def test_the_kubeconfig_credential_is_a_file_named_in_env_and_extra_vars(tmp_path):
    env, extra = launch.inject_credential("kubeconfig", {"kubeconfig": "apiVersion: v1\n"}, tmp_path)
    written = tmp_path / "env" / "credential_kubeconfig"
    assert written.read_text() == "apiVersion: v1\n"
    assert written.stat().st_mode & 0o077 == 0, "a credential file is private"
    in_container = f"{launch.CONTAINER_ROOT}/env/credential_kubeconfig"
    assert env == {"K8S_AUTH_KUBECONFIG": in_container}
    assert extra == {"gpuci_kubeconfig": in_container}


def test_optional_inputs_left_empty_render_as_empty_strings(tmp_path):
    env, extra = launch.inject_credential("github", {"github_token": "ghp-x"}, tmp_path)
    assert env == {}
    assert extra["gpuci_github_token"] == "ghp-x" and extra["gpuci_github_app_id"] == ""


def test_a_credential_without_a_required_input_is_refused(tmp_path):
    with pytest.raises(SystemExit, match=r"needs \['kubeconfig'\]"):
        launch.inject_credential("kubeconfig", {}, tmp_path)


def test_the_inventory_script_prints_the_imported_inventory(tmp_path):
    inventory = {"_meta": {"hostvars": {"testbed": {"x": "it's \"quoted\"\n"}}}, "all": {"children": ["ungrouped"]}}
    launch.write_inventory_script(tmp_path, inventory)
    script = tmp_path / "inventory" / "hosts"
    listed = subprocess.run([sys.executable, str(script), "--list"], capture_output=True, text=True, check=True)
    assert json.loads(listed.stdout) == inventory
    host = subprocess.run([sys.executable, str(script), "--host", "testbed"], capture_output=True, text=True, check=True)
    assert json.loads(host.stdout) == {}
