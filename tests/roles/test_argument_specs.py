# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every role's defaults and argument specs describe the same variables, and
the README tables are generated from the specs (never typed twice)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ROLES = sorted(p.parent.parent for p in REPO.glob("roles/*/meta/argument_specs.yml"))


def _main_spec(role: Path) -> dict:
    return yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]


def _defaults(role: Path) -> dict:
    path = role / "defaults" / "main.yml"
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def test_every_role_has_argument_specs():
    roles_dirs = sorted(p for p in (REPO / "roles").iterdir() if p.is_dir())
    assert roles_dirs == ROLES, "a role lacks meta/argument_specs.yml"


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_defaults_are_described_in_specs(role):
    undocumented = set(_defaults(role)) - set(_main_spec(role))
    assert not undocumented, f"{role.name}: defaults without an argument spec: {sorted(undocumented)}"


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_spec_defaults_match_defaults_file(role):
    defaults, spec = _defaults(role), _main_spec(role)
    for name, option in spec.items():
        if option.get("required"):
            assert name not in defaults, f"{role.name}: required {name} must have no default"
            continue
        if "default" in option:
            assert name in defaults, f"{role.name}: {name} has a spec default but none in defaults/main.yml"
            assert defaults[name] == option["default"], f"{role.name}: {name} defaults differ"


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_every_option_has_a_description_and_type(role):
    def walk(options, path=""):
        for name, option in options.items():
            assert option.get("description"), f"{role.name}: {path}{name} has no description"
            assert option.get("type"), f"{role.name}: {path}{name} has no type"
            if option.get("type") == "list":
                assert option.get("elements"), f"{role.name}: list {path}{name} has no elements"
            walk(option.get("options", {}), f"{path}{name}.")
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    for entry, spec in specs.items():
        walk(spec.get("options", {}), f"{entry}: ")


def test_role_readmes_are_generated_from_specs():
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "docs" / "role_readme.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("role, variable, entry", [
    ("gitlab_runner", "gitlab_runner_pools", {"name": "vulkan", "gpu_class": "dri", "token": "glrt-x"}),
    ("arc_runners", "arc_runners_scale_sets", {"name": "vulkan", "gpu_class": "dri", "github_config_url": "https://github.com/x"}),
])
def test_runner_specs_take_gpu_access_and_not_its_old_name(role, variable, entry):
    """Role argument validation passes inventories with gpu_access; its old name lane is no key of an entry."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    result = ArgumentSpecValidator(_main_spec(REPO / "roles" / role)).validate(
        {variable: [dict(entry, gpu_access="dri")], "gpu_classes": {"igpu": {"gpu_access": ["dri"]}}})
    assert not result.error_messages
    # The keys of one entry are documented in their own entry point, which argument validation never runs
    # (the preflight checks them, naming the entry); as a spec it refuses what the preflight refuses.
    documented = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    entry_point = {"gitlab_runner": "pool", "arc_runners": "scale_set"}[role]
    refused = ArgumentSpecValidator(documented[entry_point]["options"]).validate(dict(entry, gpu_access="vulkan"))
    assert any("gpu_access" in message and "vulkan" in message for message in refused.error_messages)
    old_name = ArgumentSpecValidator(documented[entry_point]["options"]).validate(dict(entry, lane="dri"))
    assert any("lane" in message for message in old_name.error_messages)
