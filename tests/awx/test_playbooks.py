# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The AWX and Molecule playbooks pass syntax check, and the lint tier lints them.

These are the fast checks. The playbooks also run for real elsewhere: the AWX
job templates in the execution environment (tests/docker), the default
Molecule scenario against the testbed (tests/integration/test_molecule_default.py).
The kind scenario has not run: no kind node image can be made here yet
(docs/testing.md)."""
from __future__ import annotations

import json

import pytest
import yaml

from conftest import REPO, run

KIND_INVENTORY = REPO / "molecule" / "kind" / "inventory" / "hosts.yml"
LOCAL_INVENTORY = REPO / "inventories" / "local" / "hosts.yml"
PLAYBOOKS = {
    "awx/configure.yml": LOCAL_INVENTORY,
    **{f"awx/playbooks/{p.name}": LOCAL_INVENTORY for p in sorted((REPO / "awx" / "playbooks").glob("*.yml"))},
    **{f"molecule/default/{name}": LOCAL_INVENTORY for name in ("create.yml", "destroy.yml", "converge.yml", "verify.yml")},
    **{f"molecule/kind/{name}": KIND_INVENTORY for name in ("create.yml", "destroy.yml")},
    "molecule/default/converge.yml#kind": KIND_INVENTORY,
    "molecule/default/verify.yml#kind": KIND_INVENTORY,
}
LINTED = ["awx", "molecule", ".config/molecule/config.yml", "execution-environment.yml"]


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_syntax_check(playbook):
    proc = run("ansible-playbook", "--syntax-check", "-i", str(PLAYBOOKS[playbook]), playbook.split("#")[0])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_lint_tier_lints_them_under_the_production_profile():
    """`make lint` runs ansible-lint on the whole checkout under .ansible-lint (profile production); running it
    here again cost the units tier 40 s of CPU for the same findings. This holds that it still covers them."""
    config = yaml.safe_load((REPO / ".ansible-lint").read_text())
    assert config["profile"] == "production"
    assert not config.get("skip_list") and not config.get("warn_list")
    excluded = [path.rstrip("/") for path in config["exclude_paths"]]
    for linted in LINTED:
        assert not any(linted == path or linted.startswith(path + "/") for path in excluded), linted
    makefile = (REPO / "Makefile").read_text()
    lint_recipe = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "\t$(BIN)/ansible-lint\n" in lint_recipe  # no paths: every file of the checkout


@pytest.mark.parametrize("scenario", ["default", "kind"])
def test_molecule_accepts_the_scenario_config(scenario):
    proc = run("molecule", "syntax", "-s", scenario, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_credential_type_injectors_reach_awx_unrendered(tmp_path):
    """awx/configure.yml must hand AWX its injector templates ({{ tower.filename }}) as written."""
    play_vars = yaml.safe_load((REPO / "awx" / "configure.yml").read_text())[0]["vars"]
    out = tmp_path / "types.json"
    playbook = tmp_path / "types.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Credential types as awx/configure.yml loads them", "hosts": "localhost", "gather_facts": False,
        "vars": {"_gpuci_awx_dir": str(REPO / "awx"),
                 "_gpuci_awx_credential_types": play_vars["_gpuci_awx_credential_types"]},
        "tasks": [{"ansible.builtin.copy": {"dest": str(out), "mode": "0644",
                                            "content": "{{ _gpuci_awx_credential_types | to_json }}"}}],
    }]))
    proc = run("ansible-playbook", "-i", "localhost,", "-c", "local", str(playbook),
               "-e", json.dumps({"ansible_python_interpreter": __import__("sys").executable}))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    types = json.loads(out.read_text())
    assert types["kubeconfig"]["injectors"]["extra_vars"]["gpuci_kubeconfig"] == "{{ tower.filename }}"
    assert types["gitlab_runner_tokens"]["injectors"]["extra_vars"]["gpuci_gitlab_runner_tokens"] == "{{ tokens }}"
