# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU mode end to end on the real node: our container_toolkit role's containerd and CDI
configuration, the device plugin, the NVIDIA runtime, and a pod that asks for a GPU.

Real here: kubelet, containerd, runc, nvidia-ctk and nvidia-container-runtime
(v1.17.8, built from their Go module), the role, the CDI spec it generates,
the device-plugin API between kubelet and our stand-in plugin. In fake mode
(CI) the driver is the FAKE one of tests/standins: its nvidia-smi is a script
that says so and exits 9, so the GPU pod proves that the driver was injected,
never that a GPU works. The `gpu` tests need a real one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
import uuid

import pytest
import yaml

from lib import gpu
from lib.images import BASE_IMAGE
from lib.layout import REAL_NODE, REPO_ROOT
from lib.node import REAL_NODE_TOLERATION

NAMESPACE = "testbed-gpu-mode"


@pytest.fixture(scope="module")
def namespace(testbed):
    testbed.core.create_namespace({"metadata": {"name": NAMESPACE}})
    if testbed.get("node.k8s.io/v1", "RuntimeClass", gpu.RUNTIME_HANDLER) is None:
        # What the gpu_operator role makes; this testbed runs no role but container_toolkit.
        testbed.resource("node.k8s.io/v1", "RuntimeClass").create(
            body={"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                  "metadata": {"name": gpu.RUNTIME_HANDLER}, "handler": gpu.RUNTIME_HANDLER})
    yield NAMESPACE
    testbed.core.delete_namespace(NAMESPACE)


def _run(testbed, namespace: str, with_gpu: bool) -> tuple[dict, str]:
    """One probe of the NVIDIA runtime class on the real node, run to completion."""
    name = f"gpu-probe-{uuid.uuid4().hex[:8]}"
    testbed.apply_pod(gpu.probe_pod(name, namespace, BASE_IMAGE, with_gpu))
    pod = testbed.wait_pod(name, namespace, lambda p: p["status"].get("phase") in ("Succeeded", "Failed"),
                           timeout=120)
    assert pod["status"].get("phase") in ("Succeeded", "Failed"), \
        f"pod did not run: {pod['status']}; events {testbed.pod_events(name, namespace)}"
    return pod, testbed.core.read_namespaced_pod_log(name, namespace)


def test_role_gave_containerd_the_nvidia_runtime(testbed, layout):
    config = tomllib.loads((layout.node_dir / "containerd" / "config.toml").read_text())
    runtimes = config["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]
    assert runtimes["nvidia"]["options"]["BinaryName"] == str(layout.node_dir / "nvidia-container-runtime")
    # The default stays runc: only pods of the RuntimeClass go through the NVIDIA runtime.
    assert config["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["default_runtime_name"] == "runc"


def test_toolkit_runs_in_cdi_mode_on_the_generated_spec(testbed, layout):
    toolkit = tomllib.loads(gpu.toolkit_config(layout).read_text())
    assert toolkit["nvidia-container-runtime"]["mode"] == "cdi"
    spec = yaml.safe_load((gpu.cdi_dir(layout) / "nvidia.yaml").read_text())
    assert spec["kind"] == gpu.RESOURCE
    names = [d["name"] for d in spec["devices"]]
    assert "all" in names and any(n.startswith("GPU-") for n in names)


def test_role_rerun_changes_nothing(playbooks, layout):
    variables = json.loads((layout.node_dir / "container-toolkit-vars.json").read_text())
    run = playbooks.run("container_toolkit.yml", inventory=layout.node_dir / "container-toolkit-hosts.json",
                        extra_vars=variables).assert_ok()
    assert run.changed == 0, run.output[-3000:]
    assert variables["container_toolkit_install_packages"] is False


def test_node_advertises_the_gpu_with_gfd_style_labels(testbed, gpu_mode):
    node = testbed.core.read_node(REAL_NODE)
    assert int(node.status.allocatable[gpu.RESOURCE]) >= 1
    labels = node.metadata.labels
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels[gpu.GFD_STAND_IN_LABEL] == "testbed"
    if gpu_mode == "fake":
        assert labels["nvidia.com/gpu.product"] == gpu.FAKE_PRODUCT


def test_a_pod_asking_for_a_gpu_gets_the_driver_injected(testbed, namespace, gpu_mode):
    pod, log = _run(testbed, namespace, with_gpu=True)
    assert "/dev/nvidia0" in log and "No such file" not in log, log
    assert gpu.saw_gpu(log)
    if gpu_mode == "fake":
        # The fake nvidia-smi, reached through the spec's mount and the image's CUDA-style PATH.
        assert "stand-in nvidia-smi: no GPU here" in log and "nvidia-smi-exit=9" in log, log
    assert pod["spec"]["nodeName"] == REAL_NODE


def test_negative_control_without_the_request_sees_no_gpu(testbed, namespace):
    pod, log = _run(testbed, namespace, with_gpu=False)
    assert not gpu.saw_gpu(log), log  # no device node, nvidia-smi not found: nothing was injected
    assert pod["status"]["phase"] == "Succeeded"


@pytest.mark.gpu
def test_real_gpu_answers_nvidia_smi(testbed, namespace):
    _pod, log = _run(testbed, namespace, with_gpu=True)
    assert "nvidia-smi-exit=0" in log, log
    assert "NVIDIA" in log and "Driver Version" in log, log


# The fake GPU's product stands in for the H100 in inventories/gpu-proof, so the
# proof's own inventory and playbooks run here too; no class matches it otherwise.
FAKE_AS_H100 = {"gpu_classes": {"h100": {
    "product": gpu.FAKE_PRODUCT,
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    REAL_NODE_TOLERATION]}}}
PROOF_INVENTORY = REPO_ROOT / "inventories" / "gpu-proof"


@pytest.fixture(scope="module")
def proof_class(gpu_mode):
    """The proof lane's class: h100 for the FAKE driver, else the host GPU's (as make gpu-proof picks it)."""
    if gpu_mode == "fake":
        return "h100"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "gpu" / "gpu_class.py")],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def proof(playbooks, gpu_mode, proof_class, tmp_path_factory):
    """site.yml and canary.yml of inventories/gpu-proof: the report of make gpu-proof."""
    report_dir = tmp_path_factory.mktemp("gpu-proof")
    extra = {**(FAKE_AS_H100 if gpu_mode == "fake" else {}), "gpu_canary_report_dir": str(report_dir),
             "gpu_canary_fail_on_failed_lane": gpu_mode != "fake", "gpuci_proof_gpu_class": proof_class}
    playbooks.run("site.yml", inventory=PROOF_INVENTORY, extra_vars=extra).assert_ok()
    playbooks.run("canary.yml", inventory=PROOF_INVENTORY, extra_vars=extra).assert_ok()
    return json.loads((report_dir / "proof-report.json").read_text())


def _gpu_lane(proof):
    """The proof's device-plugin GPU lane (in GitLab mode the cpu-control pool has a lane of its own: cpu)."""
    (lane,) = [lane for lane in proof["lanes"]
               if lane["gpu_access"] != "none" and lane.get("gpu_allocation", "device_plugin") == "device_plugin"]
    return lane


def _dra_lane(proof):
    """The lane of the pool that asks for the same GPU through DRA (inventories/gpu-proof: <class>-dra)."""
    (lane,) = [lane for lane in proof["lanes"] if lane.get("gpu_allocation") == "dra"]
    return lane


def test_proof_lane_serves_both_systems_and_runs_on_the_gpu_node(proof, proof_class):
    lane = _gpu_lane(proof)
    assert lane["gpu_class"] == proof_class and lane["node"] == REAL_NODE and lane["node_simulated"] is False
    assert lane["serves"] == {"gitlab_pools": [proof_class], "arc_scale_sets": [proof_class]}


def test_a_fake_gpu_is_never_proved(proof, gpu_mode):
    if gpu_mode != "fake":
        pytest.skip("a real GPU here: see test_the_lane_is_proved")
    lane = _gpu_lane(proof)
    assert lane["result"] == "failed"
    assert "stand-in nvidia-smi: no GPU here" in lane["evidence"]


@pytest.mark.gpu
def test_the_lane_is_proved(proof, proof_class):
    lane = _gpu_lane(proof)
    assert lane["result"] == "proved", lane
    # nvidia-smi's row names the model: "NVIDIA H100 80GB HBM3", "NVIDIA H200"
    assert any(proof_class.upper() in line for line in lane["evidence"]), lane["evidence"]


# --- the GPU pool's GitLab job, through the real GitLab Runner ---------------------------------------------

def _gitlab_job(proof, pool):
    lane = _gpu_lane(proof)
    return next(job for job in lane["gitlab_jobs"] if job["pool"] == pool)


def test_the_canary_ran_a_pipeline_in_gitlab_mode(proof):
    gitlab = proof["gitlab"]
    assert gitlab["pipeline_id"] and gitlab["project"]["path"] == "gpuci/canary", gitlab
    lane = _gpu_lane(proof)
    assert lane["proved_by"] == ["canary Job", "GitLab job"], lane


def test_the_gpu_pools_runner_built_the_job_pod_with_the_gpu_on_the_real_node(proof, proof_class):
    """The real runner took the job by its tags; its Kubernetes executor's pod, read from the cluster while it ran."""
    job = _gitlab_job(proof, proof_class)
    assert job["runner"] and job["runner"]["description"] == proof_class, job
    assert job["pod"] and job["pod"].startswith("runner-"), job
    assert (job["node"], job["node_simulated"]) == (REAL_NODE, False), job
    assert job["runtime_class"] == gpu.RUNTIME_HANDLER, job
    assert job["device_limits"] == {"build": {gpu.RESOURCE: "1"}}, "the GPU belongs to the build container alone"


def test_on_the_fake_driver_the_gitlab_job_says_why_it_proves_nothing(proof, gpu_mode, proof_class):
    if gpu_mode != "fake":
        pytest.skip("a real GPU here: see test_the_gitlab_job_proves_the_lane")
    job = _gitlab_job(proof, proof_class)
    # The container ran and its trace reached GitLab: the stand-in nvidia-smi's own words, through the NVIDIA runtime.
    assert "stand-in nvidia-smi: no GPU here" in job["evidence"], job["evidence"]
    assert job["result"] == "failed" and job["status"] == "failed", job
    assert _gpu_lane(proof)["result"] == "failed"


@pytest.mark.gpu
def test_the_gitlab_job_proves_the_lane(proof, proof_class):
    job = _gitlab_job(proof, proof_class)
    assert (job["result"], job["status"]) == ("proved", "success"), job
    assert any(proof_class.upper() in line for line in job["evidence"]), job["evidence"]


def test_the_negative_control_job_on_the_same_node_saw_no_gpu(proof):
    control = proof["gitlab"]["negative_control"]
    assert (control["result"], control["holds"]) == ("holds", True), control
    assert control["runner"]["description"] == control["pool"] == "cpu-control", control
    assert (control["node"], control["node_simulated"]) == (REAL_NODE, False), control
    assert control["runtime_class"] is None and control["device_limits"] == {}, control
    assert any(line.startswith("gpu-canary: negative control holds: ") for line in control["evidence"]), control


def test_negative_control_script_refuses(proof, layout):
    done = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "gpu" / "negative_control.py")],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "GPUCI_TESTBED_STATE": str(layout.state)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "negative control: refused" in done.stdout


# --- the same GPU through Dynamic Resource Allocation: the DRA pool's GitLab job, through the real runner ---------

DRA_CLAIM = {"name": "gpu", "driver": gpu.DRA_DRIVER, "pool": REAL_NODE, "device": "gpu-0"}
JOBS_NAMESPACE = "gitlab-runner-jobs"


def _dra_job(proof, proof_class):
    lane = _dra_lane(proof)
    return next(job for job in lane["gitlab_jobs"] if job["pool"] == f"{proof_class}-dra")


def test_the_dra_pools_job_got_real_0s_device_through_its_claim(proof, proof_class):
    """The real runner built the job pod from the role's config.toml; the real scheduler allocated its claim from
    the slice our DRA plugin STAND-IN publishes for real-0; no device plugin resource, no runtime class."""
    lane = _dra_lane(proof)
    assert lane["gpu_class"] == proof_class and lane["serves"]["gitlab_pools"] == [f"{proof_class}-dra"], lane
    job = _dra_job(proof, proof_class)
    assert job["runner"] and job["runner"]["description"] == f"{proof_class}-dra", job
    assert (job["node"], job["node_simulated"]) == (REAL_NODE, False), job
    assert job["runtime_class"] is None and job["device_limits"] == {}, job
    (claim,) = job["claims"]
    assert {key: claim[key] for key in DRA_CLAIM} == DRA_CLAIM, claim
    assert claim["claim"], claim


def test_the_dra_jobs_build_container_ran_with_the_device_and_its_trace_reached_gitlab(proof, gpu_mode, proof_class):
    job = _dra_job(proof, proof_class)
    if gpu_mode == "fake":
        # The device came by CDI alone (containerd injected the spec's device): the stand-in nvidia-smi ran.
        assert "stand-in nvidia-smi: no GPU here" in job["evidence"], job["evidence"]
        assert job["result"] == "failed" and _dra_lane(proof)["result"] == "failed", job
    else:
        assert (job["result"], job["status"]) == ("proved", "success"), job


def test_no_claim_outlives_its_job_and_the_plugin_released_it(proof, proof_class, testbed, layout):
    """The claim made for the job pod was prepared by the kubelet through our plugin, unprepared when the pod
    ended and deleted by the resource claim controller: no claim keeps a GPU past its job."""
    claim_name = _dra_job(proof, proof_class)["claims"][0]["claim"]
    deadline = time.monotonic() + 60
    while testbed.list("resource.k8s.io/v1", "ResourceClaim", JOBS_NAMESPACE) and time.monotonic() < deadline:
        time.sleep(1)
    assert testbed.list("resource.k8s.io/v1", "ResourceClaim", JOBS_NAMESPACE) == [], "a claim outlived its job"
    log = (layout.logs / "dra-plugin.log").read_text()
    assert f"prepare: claim {JOBS_NAMESPACE}/{claim_name} " in log, log[-3000:]
    assert f"unprepare: claim {JOBS_NAMESPACE}/{claim_name} " in log, log[-3000:]


@pytest.mark.gpu
def test_the_dra_lane_is_proved(proof, proof_class):
    lane = _dra_lane(proof)
    assert lane["result"] == "proved", lane
    assert any(proof_class.upper() in line for line in lane["evidence"]), lane["evidence"]
