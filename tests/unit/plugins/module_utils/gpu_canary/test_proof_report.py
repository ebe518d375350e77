# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""proof_report: recorded cluster answers -> the whole proof report, checked against its schema.

The answers are shaped as the gpu_canary role records them (k8s_info objects,
k8s_log loop results, the `helm list` command result); the checks are the
role's own (roles/gpu_canary/vars). The testbed cannot run a GPU container,
so the verdicts that need a log from a real node (proved, no evidence,
checks failed) are exercised here, on made-up answers of real nodes.
"""
import json
import pathlib

import jsonschema
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.proof_report import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.proof_report import NOT_COLLECTED, chart_table, proof_report
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

REPO = pathlib.Path(__file__).resolve().parents[5]
ROLE = REPO / "roles" / "gpu_canary"
SCHEMA = json.loads((ROLE / "files" / "proof-report.schema.json").read_text())

# Judging real nodes: made-up answers of a cluster with real (non-kwok) nodes.
REAL_NODES = [
    {"metadata": {"name": "real-l40s", "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"}},
     "status": {"allocatable": {"nvidia.com/gpu": "4"}}},
    {"metadata": {"name": "real-a100", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}},
     "status": {"allocatable": {"nvidia.com/mig-1g.10gb": "7"}}},
    {"metadata": {"name": "real-dri", "labels": {"gpuci.runners/dri": "true"}}, "status": {}},
    {"metadata": {"name": "fake-l40s", "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
                  "annotations": {"kwok.x-k8s.io/node": "fake"}},
     "status": {"allocatable": {"nvidia.com/gpu": "4"}}},
]
GPU_ROW = "NVIDIA L40S, 550.54.15, 46068 MiB"
# case -> (base lane, node, job outcome, log lines or None when unreadable, expected result, reason start)
CASES = {
    "cuda-proved": ("l40s", "real-l40s", "succeeded", [GPU_ROW], "proved", "nvidia-smi printed a GPU row"),
    "cuda-silent": ("l40s", "real-l40s", "succeeded", ["No devices were found"], "failed", "no GPU evidence in the log"),
    "cuda-exit": ("l40s", "real-l40s", "failed", ["nvidia-smi: not found"], "failed", "canary checks failed (exit code 127)"),
    "cuda-no-log": ("l40s", "real-l40s", "succeeded", None, "scheduled-only", "log cannot be read"),
    "cuda-stuck": ("l40s", "real-l40s", "running", None, "failed", "canary Job did not finish within 600s (container: ImagePullBackOff)"),
    "cuda-pending": ("l40s", None, "running", None, "failed", "no schedulable node: 0/4 nodes are available"),
    "cuda-kwok-claims-gpu": ("l40s", "fake-l40s", "succeeded", [GPU_ROW], "scheduled-only", "simulated node (kwok)"),
    "mig-proved": ("a100", "real-a100", "succeeded",
                   ["GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)", "  MIG 1g.10gb     Device  0: (UUID: MIG-2)"],
                   "proved", "nvidia-smi -L"),
    "mig-whole-gpu-only": ("a100", "real-a100", "succeeded", ["GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)"],
                           "failed", "no GPU evidence in the log"),
    "dri-proved": ("dri", "real-dri", "succeeded",
                   ["crw-rw---- 1 root render 226, 128 Jan 1 00:00 /dev/dri/renderD128",
                    "deviceType = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU", "deviceName = AMD Radeon"],
                   "proved", "the render node exists"),
    "dri-integrated": ("dri", "real-dri", "succeeded",
                       ["crw-rw---- 1 root render 226, 128 Jan 1 00:00 /dev/dri/renderD128",
                        "deviceType = PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU"],
                       "failed", "no GPU evidence in the log"),
}


def _made_up_cluster():
    pools = [{"name": "l40s", "gpu_class": "l40s"}, {"name": "a100", "gpu_class": "a100", "mig_profile": "1g.10gb"},
             {"name": "dri", "gpu_class": "dri", "gpu_access": "dri"}]
    bases = dict(zip(["l40s", "a100", "dri"],
                     canary_lanes({"gitlab_pools": pools, "nodes": REAL_NODES, "runtime_classes": ["nvidia"]})))
    lanes, jobs, pods, logs = [], [], [], []
    for case, (base, node, outcome, lines, _result, _reason) in CASES.items():
        job_name = f"gpu-canary-{case}"
        lane = dict(bases[base], name=case, job_name=job_name)
        lanes.append(lane)
        status = {"startTime": "2026-01-01T00:00:01Z"}
        if outcome == "succeeded":
            status.update(succeeded=1, completionTime="2026-01-01T00:00:09Z",
                          conditions=[{"type": "Complete", "status": "True", "lastTransitionTime": "2026-01-01T00:00:09Z"}])
        elif outcome == "failed":
            status.update(failed=1, conditions=[{"type": "Failed", "status": "True", "message": "BackoffLimitExceeded",
                                                 "lastTransitionTime": "2026-01-01T00:00:09Z"}])
        jobs.append({"metadata": {"name": job_name}, "status": status})
        container = {"name": "canary", "state": {"terminated": {"exitCode": 127 if outcome == "failed" else 0}}}
        if outcome == "running":
            container = {"name": "canary", "state": {"waiting": {"reason": "ImagePullBackOff"}}}
        pod = {"metadata": {"name": f"{job_name}-abcde", "ownerReferences": [{"kind": "Job", "name": job_name}]},
               "spec": {"nodeName": node} if node else {},
               "status": {"phase": "Pending" if outcome == "running" else "Succeeded",
                          "containerStatuses": [container] if node else [],
                          "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                          "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}]
                          if not node else [{"type": "PodScheduled", "status": "True"}]}}
        pods.append(pod)
        if lines is not None:
            logs.append({"pod": pod, "log_lines": lines})
        elif node:
            logs.append({"pod": pod, "msg": "container not found", "changed": False})
    return lanes, jobs, pods, logs


HELM_LIST = [
    {"name": "pool-b", "namespace": "gitlab-runner", "chart": "gitlab-runner-0.86.0", "app_version": "v18.6.0"},
    {"name": "gpu-operator", "namespace": "gpu-operator", "chart": "gpu-operator-v26.7.0", "app_version": "v26.7.0"},
    {"name": "pool-a", "namespace": "gitlab-runner", "chart": "gitlab-runner-0.86.0", "app_version": "v18.6.0"},
    {"name": "arc", "namespace": "arc-systems", "chart": "gha-runner-scale-set-controller-0.14.2"},
]


def report(lanes, jobs=(), pods=(), logs=(), nodes=None, **extra):
    spec = {"lanes": lanes, "jobs": jobs, "pods": pods, "logs": logs, "nodes": REAL_NODES if nodes is None else nodes,
            "job_timeout": 600,
            "checked_at": "2026-01-01T00:00:00Z", "now": "2026-01-01T00:11:00Z",
            "cluster": {"name": "c", "context": "ctx", "kubernetes_version": "v1.34.4", "simulated": False},
            "namespace": "gpu-canary", "helm_list": {"rc": 0, "stdout": json.dumps(HELM_LIST), "stderr": ""},
            "generated_at": "2026-01-01T00:12:00Z"}
    spec.update(extra)
    return proof_report(spec)


def validate(document):
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(document)


def test_judgement_of_real_nodes_needs_evidence_in_the_log():
    document = report(*_made_up_cluster())
    validate(document)
    results = {result["name"]: result for result in document["lanes"]}
    for case, (_base, node, _outcome, _lines, result, reason) in CASES.items():
        assert results[case]["result"] == result, (case, results[case])
        assert results[case]["reason"].startswith(reason), (case, results[case]["reason"])
        assert results[case]["node"] == node, case
    assert document["schema_version"] == 2
    assert {case: results[case]["gpu_access"] for case in ("cuda-proved", "mig-proved", "dri-proved")} == {
        "cuda-proved": "cuda", "mig-proved": "cuda", "dri-proved": "dri"}
    assert results["cuda-proved"]["evidence"] == [GPU_ROW]
    assert results["mig-proved"]["evidence"] == ["GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)",
                                                 "  MIG 1g.10gb     Device  0: (UUID: MIG-2)"]
    assert "deviceName = AMD Radeon" in results["dri-proved"]["evidence"]
    assert results["cuda-kwok-claims-gpu"]["evidence"] == [GPU_ROW]  # quoted, yet not proof: the node is simulated
    # A container that failed on a real node is quoted: its output says why.
    assert results["cuda-exit"]["evidence"] == ["nvidia-smi: not found"]
    assert results["cuda-silent"]["evidence"] == ["No devices were found"]
    assert document["summary"] == {"proved": 3, "scheduled-only": 2, "failed": 6}
    # One simulated node makes the cluster's report say so, whatever the inventory claims.
    assert document["cluster"] == {"name": "c", "context": "ctx", "kubernetes_version": "v1.34.4", "simulated": True,
                                   "simulated_nodes": ["fake-l40s"]}


def test_schema_refuses_a_version_1_report():
    """Version 1 said a lane's access mode under `lane`; version 2 says gpu_access, and the schema takes 2 only."""
    document = report(*_made_up_cluster())
    old = json.loads(json.dumps(document))
    old["schema_version"] = 1
    with pytest.raises(jsonschema.ValidationError):
        validate(old)
    old_lane = json.loads(json.dumps(document))
    old_lane["lanes"][0]["lane"] = old_lane["lanes"][0].pop("gpu_access")
    with pytest.raises(jsonschema.ValidationError):
        validate(old_lane)
    wrong = json.loads(json.dumps(document))
    wrong["lanes"][0]["gpu_access"] = "vulkan"
    with pytest.raises(jsonschema.ValidationError):
        validate(wrong)


def test_a_real_cluster_is_simulated_only_when_a_node_or_the_inventory_says_so():
    lanes, jobs, pods, logs = _made_up_cluster()
    # The dri lanes' node checks match only real-dri, and their pods ran there.
    dri = [i for i, lane in enumerate(lanes) if lane["name"].startswith("dri-")]
    pick = [[values[i] for i in dri] for values in (lanes, jobs, pods)]
    kept_logs = [log for log in logs if log["pod"]["spec"].get("nodeName") == "real-dri"]
    assert report(*pick, kept_logs)["cluster"]["simulated"] is False
    said = report(*pick, kept_logs, cluster={"name": "c", "simulated": True})
    assert said["cluster"]["simulated"] is True and said["cluster"]["simulated_nodes"] == []
    assert said["cluster"]["context"] == "" and said["cluster"]["kubernetes_version"] == "unknown"


def test_chart_table_from_helm_list():
    document = report(*_made_up_cluster())
    assert document["charts"] == [
        {"release": "arc", "namespace": "arc-systems", "chart": "gha-runner-scale-set-controller",
         "chart_version": "0.14.2", "app_version": ""},
        {"release": "pool-a", "namespace": "gitlab-runner", "chart": "gitlab-runner", "chart_version": "0.86.0",
         "app_version": "v18.6.0"},
        {"release": "pool-b", "namespace": "gitlab-runner", "chart": "gitlab-runner", "chart_version": "0.86.0",
         "app_version": "v18.6.0"},
        {"release": "gpu-operator", "namespace": "gpu-operator", "chart": "gpu-operator", "chart_version": "v26.7.0",
         "app_version": "v26.7.0"},
    ]
    assert document["charts_note"] == ""


@pytest.mark.parametrize("helm_list, note", [
    (None, NOT_COLLECTED),
    ({"rc": 1, "stdout": "", "stderr": "Error: Kubernetes cluster unreachable\n"},
     "helm list failed: Error: Kubernetes cluster unreachable"),
    ({"rc": 2, "msg": "[Errno 2] No such file or directory: b'helm'"},
     "helm list failed: [Errno 2] No such file or directory: b'helm'"),
    ({"rc": 0, "stdout": "not json"}, "helm list printed no JSON: "),
    ({"rc": 0, "stdout": "{}"}, "helm list printed dict, not a list of releases"),
])
def test_a_missing_or_failed_listing_gives_no_rows_and_says_why(helm_list, note):
    charts, charts_note = chart_table(helm_list)
    assert charts == []
    assert charts_note.startswith(note)
    document = report(*_made_up_cluster(), helm_list=helm_list)
    validate(document)  # the report is still whole
    assert document["charts_note"].startswith(note)


def test_bad_input_names_its_path():
    with pytest.raises(ValidationError, match=r"^report\.cluster\.name: must be a non-empty string"):
        report(*_made_up_cluster(), cluster={"context": ""})
    with pytest.raises(ValidationError, match=r"^report\.cluster\.simulated: must be a boolean"):
        report(*_made_up_cluster(), cluster={"name": "c", "simulated": "yes"})
    with pytest.raises(ValidationError, match=r"^report\.generated_at:"):
        report(*_made_up_cluster(), generated_at="")
    with pytest.raises(ValidationError, match=r"^report\.lanes: must be a list"):
        report({})
    with pytest.raises(ValidationError, match=r"^report\.chart: unknown key"):
        report(*_made_up_cluster(), chart=[])


def test_filter_reports_errors_the_ansible_way():
    proof_report_filter = FilterModule().filters()["proof_report"]
    with pytest.raises(AnsibleFilterError, match=r"^gpuci\.runners\.proof_report: report\.lanes: must be a list"):
        proof_report_filter({"lanes": {}})


def test_what_the_role_registered_is_set_aside_when_its_step_did_not_run_in_this_run():
    lanes, jobs, pods, logs = _made_up_cluster()
    collected = report(lanes, jobs, pods, logs, report_charts=True)
    assert collected["charts"] and collected["charts_note"] == ""
    not_collected = report(lanes, jobs, pods, logs, report_charts=False)
    assert (not_collected["charts"], not_collected["charts_note"]) == ([], NOT_COLLECTED)
    stale = {"project": {"id": 1, "path": "g/canary"}, "ref": "main", "file": ".gitlab-ci.yml", "jobs": {}}
    assert "gitlab" not in report(lanes, jobs, pods, logs, gitlab=stale, gitlab_mode=False)
    assert report(lanes, jobs, pods, logs, gitlab=None, gitlab_mode=False) == report(lanes, jobs, pods, logs)
