# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""`molecule test -s kind` runs whole on a kind cluster in the private Docker engine.

The scenario is the one users run; the harness gives it what this machine
cannot download: DOCKER_HOST (tools/docker/dockerd.py), the node image built
here (tools/kind/node_image.py, GPUCI_KIND_NODE_IMAGE), GPUCI_KIND_SIMULATE
(no GPU, no registry: simulated GPUs on the real worker, the charts'
components on a kwok node) and tools/kind/harness-vars.yml (the charts from
the testbed's repository, the canary on the preloaded Debian image).

The scenario runs with --destroy=never so that the cluster it converged can
be read: the kind nodes are real kubelets, the canary's pods ran on the
worker (their own output is in the proof report), the releases are there;
then `molecule destroy` must leave no kind container behind.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

import helpers
from lib.images import pinned
from lib.layout import Layout, component_bin_dirs

REPO = Path(__file__).resolve().parents[2]
CLUSTER = "gpuci-ci"
# `destroy` is announced first but skipped (--destroy=never); the fixture destroys.
STAGES = ["destroy", "syntax", "create", "check", "converge", "idempotence", "verify", "destroy"]
SIMULATE_VARS = yaml.safe_load((REPO / "molecule/kind/inventory/group_vars/all/simulate.yml").read_text())
EPHEMERAL = Path.home() / ".cache" / "gpuci-kind" / "molecule-ephemeral"


def _kind_bin() -> Path:
    (bin_dir,) = component_bin_dirs("kind")
    return bin_dir


@pytest.fixture(scope="module")
def kind_env(docker_engine, testbed, kind_node_image):
    """The scenario's environment; the testbed is here for its chart repository only."""
    env = dict(os.environ, PY_COLORS="0", NO_COLOR="1", ANSIBLE_FORCE_COLOR="0",
               DOCKER_HOST=docker_engine.docker_host, GPUCI_KIND_NODE_IMAGE=kind_node_image,
               GPUCI_KIND_SIMULATE="true", GPUCI_KIND_CLUSTER_NAME=CLUSTER,
               GPUCI_CHART_REPO_URL=Layout.from_environment().chart_repo_url,
               MOLECULE_EPHEMERAL_DIRECTORY=str(EPHEMERAL),
               PATH=f"{REPO / '.venv' / 'bin'}:{_kind_bin()}:{helpers.testbed_bin_path()}:{os.environ['PATH']}")
    return env


def _molecule(env, *args, timeout=1800) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO / ".venv" / "bin" / "molecule"), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _kubectl(env, *args) -> dict:
    proc = subprocess.run(["kubectl", f"--kubeconfig={EPHEMERAL / 'kubeconfig'}", *args, "-o", "json"], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def scenario(kind_env):
    """The scenario up to verify, left standing for the checks; destroyed at the end."""
    # --destroy=never skips the first destroy too: clear what an interrupted run left.
    _molecule(kind_env, "destroy", "-s", "kind", timeout=600)
    proc = _molecule(kind_env, "test", "-s", "kind", "--destroy=never", "--",
                     f"--extra-vars=@{REPO / 'tools/kind/harness-vars.yml'}")
    output = proc.stdout + proc.stderr
    try:
        yield proc.returncode, output
    finally:
        destroyed = _molecule(kind_env, "destroy", "-s", "kind", timeout=600)
        assert destroyed.returncode == 0, (destroyed.stdout + destroyed.stderr)[-3000:]


def test_every_stage_passes(scenario):
    returncode, output = scenario
    assert returncode == 0, output[-6000:]
    assert re.findall(r"\[kind > (\w+)\] Executing", output) == STAGES, output[-4000:]


def test_kind_nodes_are_real_kubelets_and_the_simulated_node_is_marked(scenario, kind_env):
    nodes = {n["metadata"]["name"]: n for n in _kubectl(kind_env, "get", "nodes")["items"]}
    worker, control_plane = f"{CLUSTER}-worker", f"{CLUSTER}-control-plane"
    assert set(nodes) == {worker, control_plane, SIMULATE_VARS["gpuci_kind_simulated_node"]}
    for name in (worker, control_plane):
        info = nodes[name]["status"]["nodeInfo"]
        assert info["kubeletVersion"] == pinned("KUBERNETES_VERSION"), info
        assert info["containerRuntimeVersion"] == f"containerd://{pinned('CONTAINERD_VERSION').lstrip('v')}", info
        assert "kwok.x-k8s.io/node" not in nodes[name]["metadata"].get("annotations", {})
    labels = nodes[worker]["metadata"]["labels"]
    assert labels["gpuci.runners/simulated-gpu"] == "true"
    assert nodes[worker]["status"]["allocatable"]["nvidia.com/gpu"] == str(SIMULATE_VARS["gpuci_kind_simulated_gpus"])
    kwok_node = nodes[SIMULATE_VARS["gpuci_kind_simulated_node"]]
    assert kwok_node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"


def test_releases_are_deployed_and_components_sit_on_the_simulated_node(scenario, kind_env):
    proc = subprocess.run(["helm", f"--kubeconfig={EPHEMERAL / 'kubeconfig'}", "list", "--all-namespaces",
                           "--output=json"], env=kind_env, capture_output=True, text=True, timeout=60, check=True)
    releases = {(r["name"], r["status"]) for r in json.loads(proc.stdout)}
    assert ("gpu-operator", "deployed") in releases, releases
    assert {f"gitlab-runner-{p['name']}" for p in SIMULATE_VARS["gpuci_kind_simulated_gitlab_pools"]} <= \
        {name for name, status in releases if status == "deployed"}, releases
    pods = _kubectl(kind_env, "get", "pods", "--all-namespaces")["items"]
    placed = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods
              if p["metadata"]["name"].startswith(("gitlab-runner-", "gpu-operator-", "arc-gha-rs-controller-"))}
    assert len(placed) == 4, placed  # the operator, two runner managers, the ARC controller
    assert set(placed.values()) == {SIMULATE_VARS["gpuci_kind_simulated_node"]}, placed


def test_canary_pods_ran_on_the_real_worker(scenario):
    report = json.loads((EPHEMERAL / "proof" / "kind" / "proof-report.json").read_text())
    assert report["lanes"], report
    for lane in report["lanes"]:
        assert lane["node"] == f"{CLUSTER}-worker", lane
        assert (lane["node_simulated"], lane["node_gpus_simulated"]) == (False, True), lane
        assert lane["result"] == "scheduled-only", lane
        # The Debian image has no nvidia-smi: the real container said so itself.
        assert "the container ran and exited with code" in lane["reason"], lane
        assert any("nvidia-smi: not found" in line for line in lane["evidence"]), lane
    assert report["summary"]["failed"] == 0


def test_a_pod_on_the_worker_resolves_a_service_through_coredns_on_the_control_plane(scenario, kind_env):
    """CoreDNS, kube-proxy and the pod network between the nodes are real."""
    name = "gpuci-dns-probe"
    base = ["kubectl", f"--kubeconfig={EPHEMERAL / 'kubeconfig'}", "--namespace=default"]
    overrides = json.dumps({"spec": {"nodeName": f"{CLUSTER}-worker"}})
    subprocess.run([*base, "run", name, "--image=gpuci.local/testbed/debian:bookworm", "--restart=Never",
                    f"--overrides={overrides}", "--", "getent", "hosts", "kubernetes.default.svc.cluster.local"],
                   env=kind_env, capture_output=True, text=True, timeout=60, check=True)
    try:
        subprocess.run([*base, "wait", f"pod/{name}", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=90s"],
                       env=kind_env, capture_output=True, text=True, timeout=120, check=False)
        log = subprocess.run([*base, "logs", name], env=kind_env, capture_output=True, text=True, timeout=60,
                             check=False).stdout
        assert "kubernetes.default.svc.cluster.local" in log and log.startswith("10.96.0.1"), log
    finally:
        subprocess.run([*base, "delete", "pod", name, "--wait=false"], env=kind_env, capture_output=True, check=False)


def test_no_kind_container_is_left_after_destroy(scenario, kind_env):
    destroyed = _molecule(kind_env, "destroy", "-s", "kind", timeout=600)
    assert destroyed.returncode == 0, (destroyed.stdout + destroyed.stderr)[-3000:]
    left = subprocess.run(["docker", "ps", "--all", "--filter", f"label=io.x-k8s.kind.cluster={CLUSTER}",
                           "--format", "{{.Names}}"], env=kind_env, capture_output=True, text=True, check=True)
    assert left.stdout.strip() == ""
    assert not (EPHEMERAL / "kubeconfig").exists()
