# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/canary.yml on the testbed: every lane is judged honestly.

The testbed's nodes are simulated (kwok), so the best a lane can get is
scheduled-only, on the node of its class; a class without nodes fails. The
pools and scale sets come from extra vars, so these tests depend on no other
role's inventory or releases, only on the nodes and the RuntimeClass.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from kubernetes.client.rest import ApiException

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_canary_support import PodRecorder, flat, load_report, markdown_table, schema  # noqa: E402
from helpers import strategic_merge  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / ".collections"))
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch  # noqa: E402

NAMESPACE = "gpu-canary-test"
# The test's own RuntimeClass: RuntimeClass nvidia belongs to the GPU Operator
# (and to its tests, which run at the same time on the same testbed).
RUNTIME_CLASS = "gpu-canary-test"
RC = {"runtime_class": RUNTIME_CLASS}
FAKE_TOKEN = "glrt-gpu-canary-test-secret-do-not-print"
FAKE_KEY = "-----BEGIN RSA PRIVATE KEY-----gpu-canary-test"
POOLS = [
    {"name": "canary-l40s", "gpu_class": "l40s", "gpus": 1, "tags": ["gpu", "l40s", "canary"], "token": FAKE_TOKEN, **RC},
    {"name": "canary-l40s-big", "gpu_class": "l40s", "gpus": 1, "concurrent": 4, "tags": ["gpu", "l40s", "big"],
     "token": FAKE_TOKEN, **RC},
    {"name": "canary-a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "tags": ["gpu", "a100"], "token": FAKE_TOKEN,
     **RC},
    {"name": "canary-cpu", "tags": ["cpu"], "token": FAKE_TOKEN},
]
SCALE_SETS = [
    {"name": "canary-a10", "gpu_class": "a10", "gpus": 1, "runner_group": "GPUs", "github_token": FAKE_TOKEN, **RC},
    {"name": "canary-vulkan", "gpu_class": "dri", "gpu_access": "dri", "github_app_private_key": FAKE_KEY},
    {"name": "canary-l40s-arc", "gpu_class": "l40s", "container_mode": "kubernetes", **RC},
]
# lane -> (node it must land on, GitLab pools, ARC scale sets)
EXPECTED = {
    "l40s-cuda-1gpu": ("gpu-l40s-0", ["canary-l40s", "canary-l40s-big"], ["canary-l40s-arc"]),
    "a100-cuda-mig-1g-10gb": ("gpu-a100-0", ["canary-a100-mig"], []),
    "a10-cuda-1gpu": ("gpu-a10-0", [], ["canary-a10"]),
    "dri-dri": ("dri-0", [], ["canary-vulkan"]),
}
CANARY_SELECTOR = "app.kubernetes.io/part-of=gpuci-runners,app.kubernetes.io/component=gpu-canary"


def canary_vars(report_dir: Path, **extra) -> dict:
    # The canary Job path (GitLab mode, which inventories/local turns on, is test_canary_gitlab.py's).
    # The role's default images (inventories/local names the testbed's Debian image instead): on the
    # simulated nodes nothing pulls them.
    return dict({"gitlab_runner_pools": POOLS, "arc_runners_scale_sets": SCALE_SETS, "gpu_canary_gitlab_url": "",
                 "gpu_canary_images": {"cuda": "nvidia/cuda:12.4.1-base-ubuntu22.04", "dri": "ubuntu:24.04"},
                 "gpu_canary_namespace": NAMESPACE, "gpu_canary_report_dir": str(report_dir)}, **extra)


def namespace_exists(cluster, name: str) -> bool:
    try:
        cluster.core.read_namespace(name)
        return True
    except ApiException as err:
        if err.status == 404:
            return False
        raise


def own_objects(cluster) -> dict:
    """Snapshot of what the canary may leave: its namespace and the objects in it."""
    return {key: version for key, version in cluster.snapshot().items()
            if key[1] == NAMESPACE or (key[0] == "v1/Namespace" and key[2] == NAMESPACE)}


@pytest.fixture(scope="module")
def runtime_class(testbed):
    """A RuntimeClass of the test's own, for its cuda lanes; removed afterwards."""
    resource = testbed.resource("node.k8s.io/v1", "RuntimeClass")
    if testbed.get("node.k8s.io/v1", "RuntimeClass", RUNTIME_CLASS) is None:
        resource.create(body={"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "handler": "nvidia",
                              "metadata": {"name": RUNTIME_CLASS, "labels": {"app.kubernetes.io/part-of": "gpuci-runners-tests"}}})
    yield RUNTIME_CLASS
    resource.delete(name=RUNTIME_CLASS)


@pytest.fixture(scope="module")
def converged(testbed, playbooks, runtime_class, tmp_path_factory):
    """Check mode first, then the real run (watched), then a second run."""
    report_dir = tmp_path_factory.mktemp("canary") / "report"
    before = own_objects(testbed)
    check = playbooks.run("canary.yml", extra_vars=canary_vars(report_dir), check=True, verbosity=2)
    after_check = own_objects(testbed)
    report_after_check = report_dir.exists()
    with PodRecorder(testbed, NAMESPACE) as recorder:
        first = playbooks.run("canary.yml", extra_vars=canary_vars(report_dir), verbosity=2)
    after_first = own_objects(testbed)
    first_report = load_report(report_dir) if (report_dir / "proof-report.json").exists() else None
    second = playbooks.run("canary.yml", extra_vars=canary_vars(report_dir, gpu_canary_report_charts=False))
    yield {"check": check, "before": before, "after_check": after_check, "report_after_check": report_after_check,
           "report_dir": report_dir,
           "first": first, "pods": recorder.by_lane(), "first_report": first_report,
           "after_first": after_first, "second": second, "after_second": own_objects(testbed)}
    playbooks.run("canary.yml", extra_vars=canary_vars(report_dir, gpu_canary_state="absent"))


def test_check_mode_changes_nothing(converged):
    converged["check"].assert_ok()
    assert converged["after_check"] == converged["before"] == {}
    assert not converged["report_after_check"]  # nothing was judged, so no report is written
    assert converged["first_report"] is not None
    assert "a10-cuda-1gpu, dri-dri would get a canary Job" in flat(converged["check"].output)


def test_every_lane_is_scheduled_only_on_its_class_node(converged):
    converged["first"].assert_ok()
    report = converged["first_report"]
    assert report["schema_version"] == 2
    lanes = {lane["name"]: lane for lane in report["lanes"]}
    assert set(lanes) == set(EXPECTED)
    for name, (node, pools, scale_sets) in EXPECTED.items():
        lane = lanes[name]
        assert lane["gpu_access"] == ("dri" if name == "dri-dri" else "cuda") and "lane" not in lane, name
        assert (lane["result"], lane["reason"]) == ("scheduled-only", "simulated node (kwok): containers do not run"), name
        assert lane["node"] == node and lane["node_simulated"], name
        assert lane["evidence"] == [], name  # no container ran, so nothing is quoted as proof
        assert lane["serves"] == {"gitlab_pools": pools, "arc_scale_sets": scale_sets}, name
    assert report["summary"] == {"proved": 0, "scheduled-only": 4, "failed": 0}
    nodes = {row["name"]: row for row in report["nodes"]}
    for name, (node, _pools, _scale_sets) in EXPECTED.items():
        assert nodes[node]["simulated"] is True, node
        assert "annotation kwok.x-k8s.io/node" in nodes[node]["known_by"], node
        assert name in nodes[node]["landed"] and name in nodes[node]["matched"], node
    assert report["cluster"]["simulated"] is True
    assert {expected[0] for expected in EXPECTED.values()} <= set(report["cluster"]["simulated_nodes"])
    assert report["cluster"]["kubernetes_version"].startswith("v1.")


def test_canary_pods_carry_the_runner_jobs_patch(converged):
    """The canary pod is the base pod merged with gpu_pod_patch, as kubectl merges it."""
    pods = converged["pods"]
    assert set(pods) == set(EXPECTED)
    requests = {"l40s-cuda-1gpu": {"gpu_class": "l40s", "gpus": 1, **RC},
                "a100-cuda-mig-1g-10gb": {"gpu_class": "a100", "mig_profile": "1g.10gb", **RC},
                "a10-cuda-1gpu": {"gpu_class": "a10", "gpus": 1, **RC},
                "dri-dri": {"gpu_class": "dri", "gpu_access": "dri"}}
    for lane, request in requests.items():
        spec = pods[lane]["spec"]
        (container,) = spec["containers"]
        base = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                "spec": {"containers": [{"name": "canary", "image": container["image"]}]}}
        wanted = strategic_merge(base, {"spec": gpu_pod_patch(dict(request, container="canary"))})["spec"]
        assert spec["nodeSelector"] == wanted["nodeSelector"], lane
        assert all(t in spec["tolerations"] for t in wanted["tolerations"]), lane
        assert spec.get("runtimeClassName") == wanted.get("runtimeClassName"), lane
        assert container.get("resources", {}) == wanted["containers"][0].get("resources", {}), lane
        assert container.get("volumeMounts", [])[:1] == wanted["containers"][0].get("volumeMounts", [])[:1], lane
        assert spec["nodeName"] == EXPECTED[lane][0], lane
        assert spec["restartPolicy"] == "Never"
    assert "nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader" in \
        pods["l40s-cuda-1gpu"]["spec"]["containers"][0]["command"][-1]
    assert "MIG 1g.10gb" in pods["a100-cuda-mig-1g-10gb"]["spec"]["containers"][0]["command"][-1]
    dri_script = pods["dri-dri"]["spec"]["containers"][0]["command"][-1]
    assert "ls -l /dev/dri/renderD128" in dri_script and "vulkaninfo --summary" in dri_script


def test_jobs_are_cleaned_up_and_labelled(converged, testbed):
    assert testbed.list("batch/v1", "Job", namespace=NAMESPACE) == []
    assert testbed.list("v1", "Pod", namespace=NAMESPACE) == []
    for pod in converged["pods"].values():
        labels = pod["metadata"]["labels"]
        assert labels["app.kubernetes.io/part-of"] == "gpuci-runners"
        assert labels["app.kubernetes.io/managed-by"] == "gpuci.runners"
    namespace = testbed.get("v1", "Namespace", NAMESPACE)
    assert namespace["metadata"]["labels"]["app.kubernetes.io/part-of"] == "gpuci-runners"


def test_report_json_matches_the_schema(converged):
    jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker()).validate(converged["first_report"])


def test_schema_refuses_a_proved_simulated_lane(converged):
    report = json.loads(json.dumps(converged["first_report"]))
    report["lanes"][0].update(result="proved", evidence=["NVIDIA L40S, 550.54.15, 46068 MiB"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, schema())


def test_markdown_renders_the_same_facts(converged):
    report = load_report(converged["report_dir"])
    text = (converged["report_dir"] / "proof-report.md").read_text()
    assert "**Simulated nodes: no lane can be proved on this cluster.**" in text
    rows = {row["lane"]: row for row in markdown_table(text, "lane")}
    assert set(rows) == {lane["name"] for lane in report["lanes"]}
    for lane in report["lanes"]:
        row = rows[lane["name"]]
        assert row["class"] == lane["gpu_class"]
        assert row["request"] == lane["request"]
        assert row["node"] == f"{lane['node']} (simulated)"
        assert row["result"] == "scheduled-only (simulated node)"
        assert row["reason"] == lane["reason"]
        served = [f"GitLab {p}" for p in lane["serves"]["gitlab_pools"]] + \
                 [f"ARC {s}" for s in lane["serves"]["arc_scale_sets"]]
        assert row["serves"] == ", ".join(served)
    node_rows = {row["node"]: row for row in markdown_table(text, "node")}
    assert set(node_rows) == {node["name"] for node in report["nodes"]}
    for node in report["nodes"]:
        assert node_rows[node["name"]]["real or simulated"] == ("simulated" if node["simulated"] else "real")
        assert node_rows[node["name"]]["how it is known"] == node["known_by"]
    assert f"| Kubernetes | {report['cluster']['kubernetes_version']} |" in text


def test_ci_snippets_use_pool_tags_and_scale_set_names(converged):
    ci = converged["report_dir"] / "ci"
    gitlab = yaml.safe_load((ci / "gitlab-ci-canary.yml").read_text())
    assert set(gitlab) == {"gpu-canary-canary-l40s", "gpu-canary-canary-l40s-big", "gpu-canary-canary-a100-mig"}
    assert gitlab["gpu-canary-canary-l40s"]["tags"] == ["gpu", "l40s", "canary"]
    assert gitlab["gpu-canary-canary-a100-mig"]["tags"] == ["gpu", "a100"]
    assert gitlab["gpu-canary-canary-l40s"]["image"] == "nvidia/cuda:12.4.1-base-ubuntu22.04"
    assert any("nvidia-smi --query-gpu" in line for line in gitlab["gpu-canary-canary-l40s"]["script"])
    assert any("MIG 1g.10gb" in line for line in gitlab["gpu-canary-canary-a100-mig"]["script"])
    workflows = {path.name: yaml.safe_load(path.read_text()) for path in (ci / ".github" / "workflows").glob("*.yml")}
    assert set(workflows) == {"gpu-canary-canary-a10.yml", "gpu-canary-canary-vulkan.yml", "gpu-canary-canary-l40s-arc.yml"}
    a10 = workflows["gpu-canary-canary-a10.yml"]["jobs"]["gpu-canary"]
    assert a10["runs-on"] == {"group": "GPUs", "labels": ["canary-a10"]}
    vulkan = workflows["gpu-canary-canary-vulkan.yml"]
    assert vulkan["jobs"]["gpu-canary"]["runs-on"] == "canary-vulkan"
    assert "on" in vulkan and "workflow_dispatch" in vulkan["on"]
    assert [step["run"] for step in vulkan["jobs"]["gpu-canary"]["steps"]][-3:] == [
        "ls -l /dev/dri/renderD128", "vulkaninfo --summary | tee /tmp/gpu-canary.txt",
        "grep -q PHYSICAL_DEVICE_TYPE_DISCRETE_GPU /tmp/gpu-canary.txt"]
    # In kubernetes container mode the job's container holds the GPU, so it names the image.
    l40s_arc = workflows["gpu-canary-canary-l40s-arc.yml"]["jobs"]["gpu-canary"]
    assert l40s_arc["container"] == {"image": "nvidia/cuda:12.4.1-base-ubuntu22.04"}
    assert "container" not in a10


def test_no_secret_in_output_or_report(converged):
    files = [p for p in converged["report_dir"].rglob("*") if p.is_file()]
    assert files
    for secret in (FAKE_TOKEN, FAKE_KEY):
        assert secret not in converged["first"].output
        assert secret not in converged["check"].output
        for path in files:
            assert secret not in path.read_text(), path


def test_second_run_leaves_the_cluster_as_the_first(converged):
    """The canary acts every run (Jobs come and go, the report is rewritten);
    what it keeps on the cluster (its namespace) is not touched again."""
    second = converged["second"].assert_ok()
    assert converged["after_second"] == converged["after_first"]
    assert "changed: [testbed]" not in _task_section(second.output, "Remove canary Jobs left by an earlier run")
    assert "ok: [testbed]" in _task_section(second.output, "Namespace for the canary Jobs")


def _task_section(output: str, task: str) -> str:
    start = output.index(f"TASK [gpuci.runners.gpu_canary : {task}")
    end = output.find("TASK [", start + 1)
    return output[start:end]


def test_lanes_without_a_node_or_runtime_class_fail_the_play(testbed, playbooks, runtime_class, tmp_path):
    pools = [{"name": "canary-h100", "gpu_class": "h100", "gpus": 1, "tags": ["h100"], "token": FAKE_TOKEN, **RC},
             {"name": "canary-l40s-rc", "gpu_class": "l40s", "runtime_class": "nvidia-missing-for-test", "token": FAKE_TOKEN},
             {"name": "canary-a10-pool", "gpu_class": "a10", "tags": ["a10"], "token": FAKE_TOKEN, **RC}]
    variables = canary_vars(tmp_path, gitlab_runner_pools=pools, arc_runners_scale_sets=[], gpu_canary_report_charts=False)
    run = playbooks.run("canary.yml", extra_vars=variables)
    assert run.rc != 0
    assert "gpu_canary: 2 lane(s) failed: h100-cuda-1gpu: no schedulable node: no node matches" in flat(run.output)
    assert "l40s-cuda-1gpu: RuntimeClass nvidia-missing-for-test does not exist" in flat(run.output)
    lanes = {lane["name"]: lane for lane in load_report(tmp_path)["lanes"]}
    h100 = lanes["h100-cuda-1gpu"]
    assert h100["result"] == "failed" and h100["reason"].startswith("no schedulable node")
    assert (h100["node"], h100["job"]) == (None, None)  # no Job was started for it
    missing_rc = lanes["l40s-cuda-1gpu"]
    assert missing_rc["result"] == "failed"
    assert missing_rc["reason"].startswith("RuntimeClass nvidia-missing-for-test does not exist")
    assert lanes["a10-cuda-1gpu"]["result"] == "scheduled-only"
    jsonschema.validate(load_report(tmp_path), schema())
    rows = {row["lane"]: row for row in markdown_table((tmp_path / "proof-report.md").read_text(), "lane")}
    assert rows["h100-cuda-1gpu"]["result"] == "failed"
    assert rows["h100-cuda-1gpu"]["reason"] == h100["reason"]

    warned = playbooks.run("canary.yml", extra_vars=dict(variables, gpu_canary_fail_on_failed_lane=False))
    warned.assert_ok()
    assert "WARNING: 2 lane(s) failed" in flat(warned.output)


@pytest.mark.parametrize("extra, message", [
    ({"gitlab_runner_pools": [{"name": "p", "gpu_class": "l40s", "gpus": 0, "token": FAKE_TOKEN}]},
     "gitlab_runner_pools[name=p].gpus: must be an integer >= 1"),
    ({"gpu_canary_gitlab_pools": [{"name": "p", "gpu_class": "v100"}]},
     "gpu_canary_gitlab_pools[name=p].gpu_class: unknown GPU class"),
    ({"arc_runners_scale_sets": [{"name": "s", "gpu_class": "dri", "gpus": 1}]},
     "arc_runners_scale_sets[name=s].gpus: must be unset with gpu_access dri"),
    ({"gpu_canary_job_timeout": "soon"}, "gpu_canary_job_timeout"),
    ({"gpu_canary_images": {"cuda": "x"}}, "dri"),
    ({"gpu_canary_poll_interval": 30, "gpu_canary_job_timeout": 10},
     "gpu_canary_poll_interval: must not exceed gpu_canary_job_timeout (10) (got 30)"),
    ({"gpu_canary_namespace": "GPU_canary"}, "gpu_canary_namespace: must be a DNS label"),
])
def test_bad_input_fails_before_the_cluster_is_touched(testbed, playbooks, tmp_path, extra, message):
    namespace = "gpu-canary-test-bad-input"
    run = playbooks.run("canary.yml", extra_vars=dict(canary_vars(tmp_path, gpu_canary_namespace=namespace), **extra))
    run.assert_failed_with(message)
    assert FAKE_TOKEN not in run.output
    assert not namespace_exists(testbed, namespace)
    assert not (tmp_path / "proof-report.json").exists()


def test_absent_removes_what_the_canary_made(converged, testbed, playbooks, tmp_path):
    variables = canary_vars(tmp_path, gpu_canary_state="absent")
    assert namespace_exists(testbed, NAMESPACE)
    removed = playbooks.run("canary.yml", extra_vars=variables).assert_ok()
    assert removed.changed >= 1
    assert not namespace_exists(testbed, NAMESPACE)
    again = playbooks.run("canary.yml", extra_vars=variables).assert_ok()
    assert again.changed == 0


COLLECTION_LABELS = {"app.kubernetes.io/part-of": "gpuci-runners", "app.kubernetes.io/managed-by": "gpuci.runners"}


@pytest.mark.parametrize("labels", [{}, COLLECTION_LABELS], ids=["unlabelled", "another-part-of-the-collection"])
def test_absent_keeps_a_namespace_the_canary_did_not_make(testbed, playbooks, tmp_path, labels):
    """Only a namespace with every label the canary gives its own is deleted: the collection's labels alone
    (a namespace a runner role made, under the name the canary was told to use) are not enough."""
    # One name per case: a deleted namespace takes a while to go.
    namespace = "gpu-canary-test-not-ours-%d" % len(labels)
    testbed.core.create_namespace(body={"metadata": {"name": namespace, "labels": labels}})
    try:
        run = playbooks.run("canary.yml", extra_vars=canary_vars(tmp_path, gpu_canary_state="absent",
                                                                 gpu_canary_namespace=namespace)).assert_ok()
        assert run.changed == 0
        assert namespace_exists(testbed, namespace)
    finally:
        testbed.core.delete_namespace(namespace)
