# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every module says in its `attributes` whether it supports check mode and diff mode.

ansible-doc and Galaxy show these to users; validate-modules only checks the
block's shape when it is there, so a module without one passes sanity."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

MODULES = Path(__file__).resolve().parents[4] / "plugins" / "modules"


def _documentation(path: Path) -> dict:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
            return yaml.safe_load(node.value.value)
    raise AssertionError(f"{path.name} has no DOCUMENTATION")


@pytest.mark.parametrize("path", sorted(MODULES.glob("*.py")), ids=lambda p: p.stem)
def test_check_and_diff_mode_are_documented(path):
    attributes = _documentation(path).get("attributes") or {}
    for name in ("check_mode", "diff_mode"):
        assert attributes.get(name, {}).get("support") in ("full", "partial", "none", "N/A"), (path.name, name)
        assert attributes[name].get("description"), (path.name, name)


@pytest.mark.parametrize("path", sorted(MODULES.glob("*.py")), ids=lambda p: p.stem)
def test_action_group_members_say_so(path):
    """What meta/runtime.yml's action groups hold, the module's attributes name."""
    runtime = yaml.safe_load((MODULES.parents[1] / "meta" / "runtime.yml").read_text())
    groups = sorted(f"gpuci.runners.{group}" for group, members in runtime.get("action_groups", {}).items()
                    if path.stem in members)
    documented = (_documentation(path).get("attributes") or {}).get("action_group", {}).get("membership", [])
    assert sorted(documented) == groups
