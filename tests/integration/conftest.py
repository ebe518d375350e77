# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Integration tests run the collection's playbooks against the local testbed.

The `testbed` fixture brings the real control plane up once per session (or
reuses one started by `make testbed-up`) and stops what it started at the end.

Testbeds side by side: under pytest-xdist (`make integration` runs `-n`
workers, `--dist loadfile`), each worker brings up a testbed of its own,
instance 1, 2, ... (tools/testbed/lib/layout.py: its own state, ports, real
node, bridge, GitLab stand-in, chart repository and Prometheus), and runs
whole modules on it, one after another. So a module is always alone on its
cluster, as the outage, cluster-wide diff and teardown tests need. Modules
are handed out longest first, by the times in durations.json (measured by
tools/test_suite.py), so the workers finish together.
"""
from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The testbed's own modules (lib.layout, lib.node) name the real node and its label.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "testbed"))
# `make venv` links the checkout there: tests import the collection's constants from where they live.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / ".collections"))

from helpers import Playbooks, running_testbed  # noqa: E402
from lib import images  # noqa: E402
from lib.layout import Layout  # noqa: E402

# Whole-testbed overrides would make the workers share one testbed.
SHARED_TESTBED_VARIABLES = ("GPUCI_TESTBED_STATE", "GPUCI_TESTBED_APISERVER_PORT", "GPUCI_TESTBED_ETCD_PORT",
                            "GPUCI_CHART_REPO_PORT", "GPUCI_PROMETHEUS_PORT", "GPUCI_CHART_REPO_URL",
                            "GPUCI_GITLAB_STANDIN_URL", "GPUCI_KUBECONFIG")
DURATIONS = Path(__file__).with_name("durations.json")
# A module not yet measured goes first: it may be long.
UNMEASURED_S = 600.0


def choose_testbed_instance(environ=None) -> None:
    """xdist worker gwK runs on testbed instance GPUCI_TESTBED_FIRST_INSTANCE + K (default 1 + K); outside
    xdist, GPUCI_TESTBED_INSTANCE or 0. Then every process the tests start (ansible-playbook, testbed.py)
    finds that instance's kubeconfig, chart repository, GitLab stand-in and state in the environment."""
    environ = os.environ if environ is None else environ
    worker = environ.get("PYTEST_XDIST_WORKER")
    if worker:
        for name in SHARED_TESTBED_VARIABLES:
            environ.pop(name, None)
        environ["GPUCI_TESTBED_INSTANCE"] = str(int(environ.get("GPUCI_TESTBED_FIRST_INSTANCE", "1")) +
                                                int(worker.removeprefix("gw")))
    environ.update(Layout.from_environment().client_environment())


# Before any test module is imported: some read the layout at import.
choose_testbed_instance()


def pytest_collection_modifyitems(items):
    """Longest module first (durations.json), each module's tests in their own order."""
    measured = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    position = {}
    for index, item in enumerate(items):
        position.setdefault(item.module.__name__, index)
    items.sort(key=lambda item: (-measured.get(Path(item.fspath).name, UNMEASURED_S),
                                 position[item.module.__name__]))


def pytest_configure(config):
    config.addinivalue_line("markers", "real_runner: a GitLab job runs through the real GitLab Runner (the helm 4 "
                                       "tier leaves these out: helm's version changes nothing the runner does)")
    config.addinivalue_line("markers", "helm_agnostic: helm's version cannot change the outcome (the input is refused "
                                       "before helm runs, the pods are the test's own, or another case makes the "
                                       "same helm calls): the helm 4 tier leaves these out")


@pytest.fixture(scope="session")
def testbed():
    with running_testbed() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def nvidia_runtime_class(testbed):
    """RuntimeClass nvidia, which the GPU Operator's toolkit makes: created here only if missing, removed after."""
    existing = testbed.get("node.k8s.io/v1", "RuntimeClass", "nvidia")
    if existing is None:
        testbed.resource("node.k8s.io/v1", "RuntimeClass").create(body={
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "handler": "nvidia",
            "metadata": {"name": "nvidia", "labels": {"app.kubernetes.io/part-of": "gpuci-runners",
                                                      "gpuci.runners/test": "integration"}}})
    yield "nvidia"
    if existing is None:
        current = testbed.get("node.k8s.io/v1", "RuntimeClass", "nvidia")
        if current and current["metadata"].get("labels", {}).get("gpuci.runners/test") == "integration":
            testbed.resource("node.k8s.io/v1", "RuntimeClass").delete(name="nvidia")


@pytest.fixture(scope="session")
def playbooks(testbed):
    return Playbooks(testbed)


@pytest.fixture(scope="session")
def real_components(testbed) -> RealComponents:
    """Which charts' components run for real on the testbed's real node (their images were provided)."""
    layout = Layout.from_environment()
    return RealComponents(set(images.read_real_components(layout)))


class RealComponents:
    """The charts' components whose images the real node holds; the others run on simulated nodes."""

    def __init__(self, names: set[str]):
        self.names = names

    def __contains__(self, component: str) -> bool:
        return component in self.names

    def require(self, component: str) -> None:
        """Skip, naming the missing images, when `component` cannot run for real here."""
        if component not in self.names:
            pytest.skip(self.missing(component))

    def note_simulated(self, component: str) -> None:
        """Say in the test report that a check of the real component was left out."""
        warnings.warn(self.missing(component), UserWarning, stacklevel=2)

    @staticmethod
    def missing(component: str) -> str:
        # COMPONENT_IMAGES: the upstream images users provide, and GitLab Runner's, which the testbed builds.
        refs = ", ".join(images.COMPONENT_IMAGES[component])
        return (f"{component} ran on a simulated node (nothing executed): its image is not on the testbed's "
                f"real node ({refs}; docs/testbed-images.md)")
