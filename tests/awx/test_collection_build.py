# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The built collection uses no collection its galaxy.yml does not declare.

Galaxy's importer lints the collection with only the declared dependencies
installed and warns about any other one it meets (awx.awx, when the AWX
configuration playbook was shipped in playbooks/). The AWX side stays in the
repository (galaxy.yml build_ignore); this test builds the tarball as a
release does and reads what is in it."""
from __future__ import annotations

import re
import tarfile

import yaml

from conftest import REPO, run

# A collection named in YAML: a task key or module_defaults group
# (`awx.awx.job_template:`, `group/awx.awx.controller:`) or a plugin
# named in a lookup, filter or test (`lookup('community.general.x'`).
_NAME = r"([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\.[a-z][a-z0-9_]*"
FQCN = re.compile(rf"^\s*(?:-\s+)?(?:group/)?{_NAME}\s*:|(?:lookup\(|query\()\s*['\"]{_NAME}|\|\s*{_NAME}\b"
                  rf"|\bis\s+(?:not\s+)?{_NAME}\b", re.MULTILINE)
ALWAYS_THERE = {"ansible.builtin", "ansible.legacy", "gpuci.runners"}


def _build(tmp_path):
    proc = run("ansible-galaxy", "collection", "build", "--force", "--output-path", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (tarball,) = tmp_path.glob("gpuci-runners-*.tar.gz")
    return tarball


def test_collections_used_in_shipped_yaml_are_declared(tmp_path):
    declared = set(yaml.safe_load((REPO / "galaxy.yml").read_text())["dependencies"]) | ALWAYS_THERE
    used = {}
    with tarfile.open(_build(tmp_path)) as tar:
        names = tar.getnames()
        for member in tar.getmembers():
            if not member.isfile() or not member.name.endswith((".yml", ".yaml")):
                continue
            if member.name.startswith(("changelogs/", "docs/")):
                continue
            text = tar.extractfile(member).read().decode()
            for match in FQCN.finditer(text):
                namespace, name = [g for g in match.groups() if g][:2]
                used.setdefault(f"{namespace}.{name}", set()).add(member.name)
    assert any(n.startswith("roles/") for n in names), names  # the build shipped the roles at all
    undeclared = {fqcn: sorted(files) for fqcn, files in used.items() if fqcn not in declared}
    assert undeclared == {}, f"used by the built collection, not in galaxy.yml dependencies: {undeclared}"
    # The scan sees the declared ones, so an empty result means something.
    assert "kubernetes.core" in used


def test_the_awx_side_is_not_shipped(tmp_path):
    with tarfile.open(_build(tmp_path)) as tar:
        shipped = [n for n in tar.getnames() if n == "awx" or n.startswith("awx/") or n == "execution-environment.yml"]
    assert shipped == []
