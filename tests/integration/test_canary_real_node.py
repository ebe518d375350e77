# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary judged on a real container: the lane fails, with the container's own words.

The real node has no GPU. For this test it is made to look like an H100 node
BY HAND (labelled as such: `gpuci.runners/gpu-advertised-by-hand=true`): GPU
Feature Discovery's product label, one `nvidia.com/gpu` in its status
capacity (a node status patch, as the Kubernetes docs show for extended
resources) and the GPU taint instead of the real-node taint. The canary Job is
scheduled there by the real scheduler, its container really runs, finds no
nvidia-smi, and the report says `failed` with that output as evidence.
`proved` stays impossible on this machine. Everything is restored afterwards.
"""
from __future__ import annotations

import copy

import pytest

from gpu_canary_support import load_report
from lib.images import BASE_IMAGE  # tools/testbed, put on sys.path by conftest.py
from lib.layout import REAL_NODE
from lib.node import REAL_NODE_TAINT

NAMESPACE = "gpu-canary-real-node"
# The real node has no NVIDIA runtime: this RuntimeClass maps to its plain runc.
RUNTIME_CLASS = "gpuci-testbed-runc"
BY_HAND = "gpuci.runners/gpu-advertised-by-hand"
H100_PRODUCT = "NVIDIA-H100-80GB-HBM3"
POOL = {"name": "real-node-h100", "gpu_class": "h100", "gpus": 1, "tags": ["h100"],
        "token": "glrt-canary-real-node-not-a-token", "runtime_class": RUNTIME_CLASS}


@pytest.fixture
def real_node_dressed_as_h100(testbed):
    node = testbed.api_client.sanitize_for_serialization(testbed.core.read_node(REAL_NODE))
    saved_taints = copy.deepcopy(node["spec"].get("taints") or [])
    labels = {BY_HAND: "true", "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": H100_PRODUCT}
    rc = testbed.resource("node.k8s.io/v1", "RuntimeClass")
    rc.create(body={"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "handler": "runc",
                    "metadata": {"name": RUNTIME_CLASS}})
    testbed.core.patch_node(REAL_NODE, {"metadata": {"labels": labels}, "spec": {"taints": [
        t for t in saved_taints if t["key"] != REAL_NODE_TAINT["key"]] + [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}})
    testbed.core.patch_node_status(REAL_NODE, {"status": {"capacity": {"nvidia.com/gpu": "1"},
                                                          "allocatable": {"nvidia.com/gpu": "1"}}})
    try:
        yield
    finally:
        testbed.core.patch_node(REAL_NODE, {"metadata": {"labels": {k: None for k in labels}},
                                            "spec": {"taints": saved_taints}})
        # JSON patch: a strategic merge cannot remove a key from capacity.
        testbed.core.patch_node_status(REAL_NODE, [{"op": "remove", "path": f"/status/{field}/nvidia.com~1gpu"}
                                                   for field in ("capacity", "allocatable")])
        rc.delete(name=RUNTIME_CLASS)


def test_a_canary_on_a_real_node_without_gpu_fails_with_its_own_output(
        testbed, playbooks, real_node_dressed_as_h100, tmp_path):
    run = playbooks.run("canary.yml", extra_vars={
        "gitlab_runner_pools": [POOL], "arc_runners_scale_sets": [], "gpu_canary_gitlab_url": "",
        "gpu_canary_namespace": NAMESPACE, "gpu_canary_report_dir": str(tmp_path),
        "gpu_canary_images": {"cuda": BASE_IMAGE, "dri": BASE_IMAGE},
        "gpu_canary_report_charts": False, "gpu_canary_fail_on_failed_lane": False})
    run.assert_ok()
    report = load_report(tmp_path)
    lane = {lane["name"]: lane for lane in report["lanes"]}["h100-cuda-1gpu"]
    assert lane["node"] == REAL_NODE, lane
    assert (report["schema_version"], lane["gpu_access"]) == (2, "cuda")
    assert lane["node_simulated"] is False
    assert lane["result"] == "failed", lane
    # The pipeline's tee hides nvidia-smi's 127; `test -s` then fails with 1.
    assert lane["reason"] == "canary checks failed (exit code 1)", lane["reason"]
    assert any("nvidia-smi" in line and "not found" in line for line in lane["evidence"]), lane["evidence"]
    nodes = {n["name"]: n for n in report["nodes"]}
    assert nodes[REAL_NODE]["simulated"] is False
    assert "proved" not in {lane["result"] for lane in report["lanes"]}
    playbooks.run("canary.yml", extra_vars={"gitlab_runner_pools": [POOL], "arc_runners_scale_sets": [],
                                            "gpu_canary_gitlab_url": "",
                                            "gpu_canary_namespace": NAMESPACE, "gpu_canary_state": "absent",
                                            "gpu_canary_report_dir": str(tmp_path)}).assert_ok()
