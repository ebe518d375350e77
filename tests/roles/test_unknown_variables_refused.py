# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A misspelt variable is refused by every playbook that talks to a cluster, before its first change, and every
variable this repository's playbooks, roles, inventories, AWX and Molecule files read or set is a known one.

The playbook runs are offline (no cluster: the kubeconfig does not exist), on inventories/local with one more
group_vars file: a run that got past the shared preflight would fail elsewhere, with another message.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
import yaml
from jinja2 import meta

REPO = Path(__file__).resolve().parents[2]
if str(REPO / ".collections") not in sys.path:
    sys.path.insert(0, str(REPO / ".collections"))
from ansible_collections.gpuci.runners.plugins.action.known_variables import role_specs  # noqa: E402
from ansible_collections.gpuci.runners.plugins.module_utils.common.known_variables import (  # noqa: E402
    carries_prefix,
    unknown_variables,
)

PLAYBOOKS = REPO / "playbooks"
CLUSTER_PLAYBOOKS = ["site.yml", "plan.yml", "gpu_operator.yml", "gitlab_runner.yml", "arc_runners.yml",
                     "canary.yml", "teardown.yml", "alert_rules.yml"]
# What the collection's own files read or set, as YAML (tasks, vars, inventories) and Jinja templates.
YAML_FILES = ["playbooks/*.yml", "roles/*/tasks/*.yml", "roles/*/defaults/*.yml", "roles/*/vars/*.yml",
              "roles/*/handlers/*.yml", "awx/playbooks/**/*.yml", "molecule/**/*.yml", "inventories/**/*.yml",
              "benchmarks/inventory/**/*.yml"]
TEMPLATES = ["roles/*/templates/*.j2", "molecule/**/*.j2"]
# Task keywords whose strings are bare Jinja expressions.
EXPRESSIONS = {"when", "that", "until", "failed_when", "changed_when"}
# Keys whose mapping keys are variables being set.
SETTERS = {"vars", "set_fact", "ansible.builtin.set_fact"}


class _AnyName(dict):
    """Every filter and test exists: the scan reads variable names, not what the templates call."""

    def __contains__(self, name):
        return True

    def get(self, name, default=None):
        return lambda *args, **kwargs: None

    def __getitem__(self, name):
        return self.get(name)


def _jinja():
    environment = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
    environment.filters, environment.tests = _AnyName(), _AnyName()
    return environment


def _names_in(node, environment, key=None, top=True):
    """The prefixed names a YAML document references in Jinja, or sets (top-level keys, vars:, set_fact:)."""
    found = set()
    if isinstance(node, dict):
        for name, value in node.items():
            if isinstance(name, str) and carries_prefix(name) and (top or key in SETTERS):
                found.add(name)
            found |= _names_in(value, environment, name, top=False)
    elif isinstance(node, list):
        for value in node:
            found |= _names_in(value, environment, key, top=isinstance(value, dict) and top)
    elif isinstance(node, str) and ("{{" in node or "{%" in node or key in EXPRESSIONS):
        text = node if ("{{" in node or "{%" in node) else "{{ %s }}" % node
        found |= set(name for name in meta.find_undeclared_variables(environment.parse(text)) if carries_prefix(name))
    return found


def repository_names() -> dict[str, set[str]]:
    """{name: files that read or set it}, of every prefixed name in the collection's own files."""
    environment, names = _jinja(), {}
    for pattern in YAML_FILES:
        for path in sorted(REPO.glob(pattern)):
            for document in yaml.safe_load_all(path.read_text()):
                for name in _names_in(document, environment):
                    names.setdefault(name, set()).add(str(path.relative_to(REPO)))
    for pattern in TEMPLATES:
        for path in sorted(REPO.glob(pattern)):
            for name in meta.find_undeclared_variables(environment.parse(path.read_text())):
                if carries_prefix(name):
                    names.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return names


def test_every_variable_the_repository_reads_or_sets_is_known():
    names = repository_names()
    # The scan finds what it must: role variables, collection-wide ones, the testbed's and AWX's.
    assert {"gitlab_runner_pools", "gpuci_kubeconfig", "gpuci_plan_dir", "gpuci_testbed_real_components",
            "gpuci_simulated_cluster", "gpu_canary_gitlab_url", "container_toolkit_version"} <= set(names)
    unknown = unknown_variables(names, role_specs())
    assert unknown == [], ["%s (%s)" % (name, ", ".join(sorted(names[name]))) for name, _suggestion in unknown]


def test_the_scan_finds_a_name_in_a_condition_a_template_and_a_set_fact():
    environment = _jinja()
    tasks = [{"name": "x", "when": "gitlab_runner_typo | bool", "ansible.builtin.set_fact": {"gpuci_made_up": 1},
              "vars": {"_local": "{{ arc_runners_other }}"}}]
    assert _names_in(tasks, environment) == {"gitlab_runner_typo", "gpuci_made_up", "arc_runners_other"}


def test_what_awx_injects_and_asks_is_known():
    credential_types = yaml.safe_load((REPO / "awx" / "credential_types.yml").read_text())["credential_types"]
    injected = set(name for entry in credential_types.values()
                   for name in (entry.get("injectors") or {}).get("extra_vars") or {})
    surveyed = set()
    for path in (REPO / "awx" / "surveys").glob("*.yml"):
        surveyed.update(yaml.safe_load(path.read_text()).get("answers") or {})
    assert {"gpuci_kubeconfig", "gpuci_gitlab_runner_tokens", "gpuci_github_token"} <= injected
    assert surveyed and all(name.startswith("gpuci_survey_") for name in surveyed)
    assert unknown_variables(injected | surveyed, role_specs()) == []


@pytest.mark.parametrize("playbook", CLUSTER_PLAYBOOKS + ["container_toolkit.yml"])
def test_every_playbook_checks_the_variables_before_it_changes_anything(playbook):
    plays = yaml.safe_load((PLAYBOOKS / playbook).read_text())
    first = plays[0]
    if playbook == "container_toolkit.yml":
        # Alone it has no shared preflight: its own first task checks.
        assert first["pre_tasks"][0]["gpuci.runners.known_variables"] is not None
        return
    assert first.get("ansible.builtin.import_playbook") == "preflight.yml", "the preflight is not the first play"


def test_the_preflight_checks_every_cluster_and_gpu_host_whatever_the_tags():
    (play,) = yaml.safe_load((PLAYBOOKS / "preflight.yml").read_text())
    assert set(play["hosts"].split(":")) == {"gpuci_clusters", "gpu_hosts"}
    (check,) = [task for task in play["tasks"] if "gpuci.runners.known_variables" in task]
    assert "always" in check["tags"]


def misspelt_inventory(folder: Path, variables: dict) -> Path:
    """inventories/local with one more group_vars/all file holding ``variables``."""
    local = REPO / "inventories" / "local"
    (folder / "group_vars" / "all").mkdir(parents=True)
    (folder / "hosts.yml").symlink_to(local / "hosts.yml")
    for path in (local / "group_vars" / "all").iterdir():
        (folder / "group_vars" / "all" / path.name).symlink_to(path)
    (folder / "group_vars" / "all" / "zz_mistake.yml").write_text(yaml.safe_dump(variables))
    return folder


def run(playbook: str, inventory: Path, tmp_path: Path, *extra: str) -> tuple[int, str]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               GPUCI_KUBECONFIG=str(tmp_path / "no-such-kubeconfig"))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOKS / playbook),
           "-e", "gpuci_plan_dir=%s" % (tmp_path / "plans"), "-e", "gpuci_alert_rules_dir=%s" % (tmp_path / "rules"),
           *extra]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("playbook", CLUSTER_PLAYBOOKS)
def test_a_misspelt_pool_list_is_refused_by_every_cluster_playbook_in_its_preflight(playbook, tmp_path):
    inventory = misspelt_inventory(tmp_path / "inventory", {"gitlab_runner_pool": [{"name": "l40s"}]})
    returncode, output = run(playbook, inventory, tmp_path)
    flat = " ".join(output.split())
    assert returncode != 0, output[-3000:]
    assert "gitlab_runner_pool: unknown variable; did you mean gitlab_runner_pools?" in flat, output[-3000:]
    assert "zz_mistake.yml:1:1" in flat, "the refusal does not point at the file and line"
    # Nothing after the preflight ran: no other play, no role, no read of the cluster.
    assert [line for line in output.splitlines() if line.startswith("PLAY [")] == ["PLAY [Preflight] " + "*" * 63], \
        output[-3000:]


def test_a_typo_given_as_an_extra_var_is_refused_too_and_tags_do_not_skip_it(tmp_path):
    inventory = misspelt_inventory(tmp_path / "inventory", {})
    returncode, output = run("plan.yml", inventory, tmp_path, "-e", "gpu_operator_mig_stratgy=mixed",
                             "--tags", "gitlab_runner_preflight")
    flat = " ".join(output.split())
    assert returncode != 0
    assert "gpu_operator_mig_stratgy: unknown variable; did you mean gpu_operator_mig_strategy?" in flat, output[-3000:]
    assert "(set in <CLI option '-e'>)" in flat.replace("''", "'")


def test_the_users_own_names_listed_as_unchecked_pass_the_preflight(tmp_path):
    inventory = misspelt_inventory(tmp_path / "inventory", {
        "gitlab_runner_coordinator_url": "https://gitlab.example.com",
        "gpuci_unchecked_variables": ["gitlab_runner_coordinator_url"]})
    returncode, output = run("plan.yml", inventory, tmp_path)
    assert returncode == 0, output[-3000:]
