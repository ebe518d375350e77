# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""execution-environment.yml renders a build context with our requirements.

These check the rendered Containerfile and context without a container
engine; tests/docker builds the image and runs the job templates in it."""
from __future__ import annotations

import re

import pytest
import yaml

from conftest import REPO, run

DEFINITION = yaml.safe_load((REPO / "execution-environment.yml").read_text())
PINS = dict(re.findall(r"^(\w+)=(\S+)$", (REPO / "tools" / "testbed" / "versions.env").read_text(), re.M))


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    out = tmp_path_factory.mktemp("ee") / "context"
    proc = run("ansible-builder", "create", "-f", str(REPO / "execution-environment.yml"),
               "--context", str(out), "--output-filename", "Containerfile")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_definition_is_v3_and_uses_the_repository_files():
    assert DEFINITION["version"] == 3
    assert DEFINITION["dependencies"]["python"] == "requirements.txt"
    assert DEFINITION["dependencies"]["system"] == "bindep.txt"
    # Collections come with the `ansible` package of requirements.txt (the
    # versions CI tests); a Galaxy install would shadow them with newer ones.
    assert "galaxy" not in DEFINITION["dependencies"]


def test_context_holds_our_requirements(context):
    build = context / "_build"
    assert (build / "requirements.txt").read_text() == (REPO / "requirements.txt").read_text()
    assert (build / "bindep.txt").read_text() == (REPO / "bindep.txt").read_text()
    for script in ("install-collection.sh", "install-tools.sh"):
        assert (build / "scripts" / script).is_file(), script
    assert (build / "collection").is_dir()


def test_containerfile_installs_requirements_collection_and_tools(context):
    text = (context / "Containerfile").read_text()
    assert "requirements.txt" in text and "bindep.txt" in text
    final_stage = text[text.index("FROM base AS final"):]
    assert "install-collection.sh /tmp/gpuci-collection" in final_stage
    # Mirrors can stand in for get.helm.sh and dl.k8s.io (air-gapped builds, tests/docker).
    assert "ARG HELM_BASE_URL=https://get.helm.sh" in final_stage
    assert "ARG KUBECTL_BASE_URL=https://dl.k8s.io/release" in final_stage
    assert f"ARG HELM_VERSION={PINS['HELM4_VERSION']}" in text, "the EE should ship the testbed's helm 4 pin"
    assert f"ARG KUBECTL_VERSION={PINS['KUBERNETES_VERSION']}" in text, "kubectl should match the testbed's Kubernetes"
    assert "install-tools.sh" in text


def test_requirements_name_what_the_collection_imports():
    requirements = (REPO / "requirements.txt").read_text()
    for package in ("ansible", "kubernetes", "PyYAML", "jsonschema", "python-gitlab"):
        assert re.search(rf"^{package}\b", requirements, re.M | re.I), package
    collections = {c["name"] for c in yaml.safe_load((REPO / "requirements.yml").read_text())["collections"]}
    assert {"kubernetes.core", "community.general"} <= collections
