# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""AWX surveys are generated from the roles' argument specs and cannot drift from them."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run

sys.path.insert(0, str(REPO / "tools" / "awx"))
import surveys  # noqa: E402  (tools/awx is not a package)

JOB_TEMPLATES = yaml.safe_load((REPO / "awx" / "job_templates.yml").read_text())["job_templates"]
# A missing file fails test_generated_surveys_are_current, not the collection.
SURVEY_FILES = {path.stem: yaml.safe_load(path.read_text()) for path in (REPO / "awx" / "surveys").glob("*.yml")}
QUESTIONS = [(name, q) for name, survey in SURVEY_FILES.items() for q in survey["survey_spec"]["spec"]]


def _spec(role: str) -> dict:
    return yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]


def test_generated_surveys_are_current():
    proc = run("python", str(REPO / "tools" / "awx" / "surveys.py"), "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_job_template_has_a_survey_and_its_playbook_exists():
    for name, definition in JOB_TEMPLATES.items():
        assert SURVEY_FILES.get(name, {}).get("survey_spec", {}).get("spec"), f"job template {name} has no survey"
        assert (REPO / definition["playbook"]).is_file(), f"job template {name}: {definition['playbook']} is missing"


@pytest.mark.parametrize(("template", "question"), QUESTIONS, ids=[f"{t}-{q['variable']}" for t, q in QUESTIONS])
def test_survey_variable_is_a_role_argument_of_the_same_type(template, question):
    answer = SURVEY_FILES[template]["answers"][question["variable"]]
    assert question["variable"] == surveys.PREFIX + answer["variable"]
    option = _spec(answer["role"]).get(answer["variable"])
    assert option is not None, f"{answer['variable']} is not an argument of role {answer['role']}"
    kind = option.get("type", "str")
    assert answer["type"] == kind
    if option.get("no_log"):
        assert question["type"] == "password"
    elif kind == "bool":
        assert (question["type"], question["choices"]) == ("multiplechoice", ["true", "false"])
    elif option.get("choices"):
        assert (question["type"], question["choices"]) == ("multiplechoice", [str(c) for c in option["choices"]])
    else:
        assert question["type"] == {"str": "text", "path": "text", "int": "integer", "float": "float"}[kind]
        assert "choices" not in question
    if "default" in question:
        expected = str(option["default"]).lower() if kind == "bool" else option["default"]
        assert question["default"] == expected


def _generate(tmp_path: Path, survey: list) -> tuple[int, str]:
    job_templates = tmp_path / "job_templates.yml"
    job_templates.write_text(yaml.safe_dump({"job_templates": {"t": {"name": "t", "playbook": "x.yml", "survey": survey}}}))
    proc = run("python", str(REPO / "tools" / "awx" / "surveys.py"),
               "--job-templates", str(job_templates), "--output", str(tmp_path / "out"))
    return proc.returncode, proc.stderr


def test_unknown_argument_fails_naming_it(tmp_path):
    rc, err = _generate(tmp_path, [{"role": "gpu_operator", "variable": "gpu_operator_no_such_thing"}])
    assert rc == 2 and "gpu_operator_no_such_thing" in err and "roles/gpu_operator" in err


def test_unknown_role_fails_naming_it(tmp_path):
    rc, err = _generate(tmp_path, [{"role": "no_such_role", "variable": "no_such_role_state"}])
    assert rc == 2 and "no_such_role" in err


def test_argument_a_survey_cannot_carry_fails(tmp_path):
    rc, err = _generate(tmp_path, [{"role": "gitlab_runner", "variable": "gitlab_runner_pools"}])
    assert rc == 2 and "gitlab_runner_pools" in err and "'list'" in err


def _answers_play(tmp_path: Path, extra_vars: dict, shown: list[str]) -> dict:
    """Run awx/playbooks/tasks/survey_answers.yml for the site survey; return the shown variables."""
    out = tmp_path / "facts.json"
    playbook = tmp_path / "answers.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Survey answers", "hosts": "localhost", "gather_facts": False,
        "tasks": [
            {"ansible.builtin.import_tasks": str(REPO / "awx" / "playbooks" / "tasks" / "survey_answers.yml"),
             "vars": {"gpuci_awx_survey": "site", "gpuci_awx_surveys_dir": str(REPO / "awx" / "surveys")}},
            {"ansible.builtin.copy": {
                "dest": str(out), "mode": "0644",
                "content": "{{ {" + ", ".join(f"'{v}': {v} | default('UNSET')" for v in shown) + "} | to_json }}"}},
        ],
    }]))
    extra_vars = {**extra_vars, "ansible_python_interpreter": sys.executable}
    proc = run("ansible-playbook", "-i", "localhost,", "-c", "local", str(playbook), "-e", json.dumps(extra_vars))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(out.read_text())


def test_answers_become_typed_role_variables_and_blank_answers_set_nothing(tmp_path):
    facts = _answers_play(tmp_path, {
        "gpuci_survey_gpu_operator_driver_enabled": "false",
        "gpuci_survey_gpu_operator_cdi_enabled": "true",
        "gpuci_survey_gpu_operator_mig_strategy": "mixed",
        "gpuci_survey_gpu_operator_chart_version": "",
    }, ["gpu_operator_driver_enabled", "gpu_operator_cdi_enabled", "gpu_operator_mig_strategy",
        "gpu_operator_chart_version", "arc_runners_state"])
    assert facts == {
        "gpu_operator_driver_enabled": False,
        "gpu_operator_cdi_enabled": True,
        "gpu_operator_mig_strategy": "mixed",
        "gpu_operator_chart_version": "UNSET",
        "arc_runners_state": "UNSET",
    }
