# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_operator role's variables become: the release's complete values, labels, time-slicing."""

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import CRDS, NFD_CRDS, gpu_operator_plan
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

ROLE_DEFAULTS = "roles/gpu_operator/defaults/main.yml"


def settings(**overrides):
    """The role's defaults (read from the role, so the test follows them), with overrides."""
    with open(ROLE_DEFAULTS, encoding="utf-8") as handle:
        defaults = yaml.safe_load(handle)
    base = {key: value for key, value in defaults.items() if key.startswith("gpu_operator_")}
    base.update(overrides)
    return base


def test_defaults_give_the_release_its_complete_values():
    plan = gpu_operator_plan(settings())
    release = plan["release"]
    assert (release["name"], release["namespace"], release["chart"]) == ("gpu-operator", "gpu-operator", "gpu-operator")
    assert release["chart_version"] == "v26.7.0" and release["chart_path"] is None
    assert release["wait"] is True and release["timeout"] == 600
    assert release["values"] == {
        "driver": {"enabled": True},
        "toolkit": {"enabled": True, "env": []},
        "cdi": {"enabled": True},
        "mig": {"strategy": "single"},
        "dcgmExporter": {"enabled": True,
                         "serviceMonitor": {"enabled": False, "honorLabels": True, "additionalLabels": {}},
                         "enablePodLabels": True,
                         "podLabelAllowlistRegex": [r"^project\.runner\.gitlab\.com/(id|name|namespace)$",
                                                    r"^actions\.github\.com/scale-set-name$"]},
        "nfd": {"enabled": True},
        "operator": {"runtimeClass": "nvidia"},
        "devicePlugin": {"config": {"name": "", "default": ""}},
    }
    assert plan["problems"] == [] and plan["warnings"] == []


def test_preinstalled_drivers_and_a_pinned_toolkit_on_k3s():
    values = gpu_operator_plan(settings(gpu_operator_driver_enabled=False, gpu_operator_toolkit_version="v1.18.1",
                                        gpu_operator_container_runtime="k3s"))["release"]["values"]
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"]["version"] == "v1.18.1"
    env = {item["name"]: item["value"] for item in values["toolkit"]["env"]}
    assert env["CONTAINERD_SOCKET"] == "/run/k3s/containerd/containerd.sock"
    assert env["RUNTIME_CONFIG_SOURCE"].startswith("file=/var/lib/rancher/k3s/")


def test_user_values_lay_over_without_losing_the_variables():
    values = gpu_operator_plan(settings(gpu_operator_values={"driver": {"repository": "registry.local/nvidia"},
                                                             "validator": {"plugin": {"env": []}}}))["release"]["values"]
    assert values["driver"] == {"enabled": True, "repository": "registry.local/nvidia"}
    assert values["validator"] == {"plugin": {"env": []}}


def test_values_that_override_a_variable_are_problems_naming_both():
    plan = gpu_operator_plan(settings(gpu_operator_values={"driver": {"enabled": False}, "mig": {"strategy": "mixed"}}))
    assert plan["problems"] == [
        "gpu_operator_values.driver.enabled would override gpu_operator_driver_enabled; "
        "set gpu_operator_driver_enabled instead.",
        "gpu_operator_values.mig.strategy would override gpu_operator_mig_strategy; "
        "set gpu_operator_mig_strategy instead."]


def test_removed_upstream_values_are_warnings():
    plan = gpu_operator_plan(settings(gpu_operator_values={"operator": {"defaultRuntime": "containerd"}}))
    (warning,) = plan["warnings"]
    assert warning.startswith("gpu_operator_values.operator.defaultRuntime is removed in v25.3")
    assert plan["problems"] == []


def test_time_slicing_configures_the_device_plugin_and_the_nodes_to_label():
    plan = gpu_operator_plan(settings(gpu_operator_time_slicing={"l40s": 4, "nvidia.com/gpu": 2}))
    slicing = plan["time_slicing"]
    assert slicing["enabled"] is True and slicing["classes"] == ["l40s"] and slicing["label_classes"] == ["l40s"]
    assert sorted(slicing["data"]) == ["any", "l40s"]
    assert yaml.safe_load(slicing["data"]["l40s"])["sharing"]["timeSlicing"]["resources"] == [
        {"name": "nvidia.com/gpu", "replicas": 4}]
    assert slicing["class_selectors"]["l40s"]["nvidia.com/gpu.product"] == "NVIDIA-L40S"
    config = plan["release"]["values"]["devicePlugin"]["config"]
    assert config == {"name": "gpuci-device-plugin-config", "default": "any"}


def test_the_role_applies_the_time_slicing_configmap_only_while_time_slicing_is_on():
    sliced = gpu_operator_plan(settings(gpu_operator_time_slicing={"l40s": 4}, gpu_operator_namespace="gpu"))
    [configmap] = sliced["objects"]
    assert (configmap["kind"], configmap["metadata"]["name"], configmap["metadata"]["namespace"]) == (
        "ConfigMap", "gpuci-device-plugin-config", "gpu")
    assert configmap["data"] == sliced["time_slicing"]["data"]
    assert configmap["metadata"]["labels"] == sliced["labels"]
    assert gpu_operator_plan(settings())["objects"] == []


def test_the_runtime_class_the_pods_name_is_created_only_when_missing():
    plan = gpu_operator_plan(settings(gpu_operator_runtime_class="nvidia-cdi"))
    assert plan["create_only"] == [{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                                    "metadata": {"name": "nvidia-cdi", "labels": plan["labels"]},
                                    "handler": "nvidia-cdi"}]


def test_node_feature_discoverys_crds_are_removed_only_where_it_was_installed():
    assert set(gpu_operator_plan(settings())["crds"]) == set(CRDS + NFD_CRDS)
    assert gpu_operator_plan(settings(gpu_operator_nfd_enabled=False))["crds"] == list(CRDS)


def test_time_slicing_without_node_labels():
    plan = gpu_operator_plan(settings(gpu_operator_time_slicing={"l40s": 2},
                                      gpu_operator_time_slicing_label_nodes=False))
    assert plan["time_slicing"]["classes"] == ["l40s"] and plan["time_slicing"]["label_classes"] == []


@pytest.mark.parametrize("replicas, field", [({"l40s": 0}, "gpu_operator_time_slicing.l40s"),
                                             ({"v100": 2}, "v100")])
def test_bad_time_slicing_names_the_inventory_path(replicas, field):
    with pytest.raises(ValidationError, match=field.replace(".", r"\.")):
        gpu_operator_plan(settings(gpu_operator_time_slicing=replicas))


def test_labels_tell_this_release_from_others():
    plan = gpu_operator_plan(settings(gpu_operator_release_name="gpu-op-b"))
    assert plan["labels"]["app.kubernetes.io/instance"] == "gpu-op-b"
    assert plan["labels"]["app.kubernetes.io/part-of"] == "gpuci-runners"
    assert "app.kubernetes.io/instance=gpu-op-b" in plan["label_selectors"]
    assert plan["namespace_labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert "pod-security.kubernetes.io/enforce" not in plan["labels"]


def test_unlabelled_nodes_keep_an_unshared_default_unless_the_user_set_it():
    data = gpu_operator_plan(settings(gpu_operator_time_slicing={"l40s": 2}))["time_slicing"]["data"]
    assert yaml.safe_load(data["any"]) == {"version": "v1"}
    data = gpu_operator_plan(settings(gpu_operator_time_slicing={"any": 3}))["time_slicing"]["data"]
    assert yaml.safe_load(data["any"])["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 3}]


def test_the_chart_source_is_checked_unless_the_operator_is_removed():
    with pytest.raises(ValidationError, match=r"^gpu_operator_chart_repo_url: must be an http\(s\):// or oci://"):
        gpu_operator_plan(settings(gpu_operator_chart_repo_url="htp://127.0.0.1:18879"))
    assert gpu_operator_plan(settings(gpu_operator_state="absent", gpu_operator_chart_version="v26..7.0"))["release"]


def test_a_version_for_a_component_the_operator_does_not_install_is_a_problem():
    problems = gpu_operator_plan(settings(gpu_operator_driver_enabled=False, gpu_operator_driver_version="570.86.15",
                                          gpu_operator_toolkit_enabled=False, gpu_operator_toolkit_version="1.17.8-1"))["problems"]
    assert [problem.split()[0] for problem in problems] == ["gpu_operator_driver_version", "gpu_operator_toolkit_version"]
    assert "while the driver is disabled (gpu_operator_driver_enabled is false)" in problems[0]
    assert gpu_operator_plan(settings(gpu_operator_driver_version="570.86.15"))["problems"] == []


def test_the_operators_toolkit_on_gpu_hosts_that_manage_their_own_is_a_problem():
    (problem,) = gpu_operator_plan(settings(gpu_operator_toolkit_enabled=True, gpu_operator_host_group="gpu_hosts",
                                            gpu_operator_host_toolkit_hosts=["a10-gpu-0"]))["problems"]
    assert problem.startswith("gpu_operator_toolkit_enabled is true, but the GPU hosts a10-gpu-0 (group gpu_hosts) "
                              "manage their own container toolkit (container_toolkit_version is set for them).")
    assert gpu_operator_plan(settings(gpu_operator_toolkit_enabled=False, gpu_operator_host_group="gpu_hosts",
                                      gpu_operator_host_toolkit_hosts=["a10-gpu-0"]))["problems"] == []
    assert gpu_operator_plan(settings(gpu_operator_toolkit_enabled=True, gpu_operator_host_toolkit_hosts=[]))[
        "problems"] == []


@pytest.mark.parametrize("sources", [
    [[{"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb"}], []],
    [{"a100-mig": {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb"}}, "not pools"],
])
def test_mig_pools_need_the_mixed_strategy(sources):
    (problem,) = gpu_operator_plan(settings(gpu_operator_mig_strategy="single", gpu_operator_runner_pools=sources))["problems"]
    assert problem.startswith("gpu_operator_mig_strategy is single, but the pools a100-mig use mig_profile")
    assert gpu_operator_plan(settings(gpu_operator_mig_strategy="mixed", gpu_operator_runner_pools=sources))["problems"] == []


def test_time_slicing_for_a_class_no_pool_uses_is_a_problem():
    pools = [[{"name": "l40s", "gpu_class": "l40s", "token": "glrt-NEVER-SHOWN"}], [{"name": "dri", "gpu_class": "a10"}]]
    assert gpu_operator_plan(settings(gpu_operator_time_slicing={"a10": 2}, gpu_operator_runner_pools=pools))["problems"] == []
    (problem,) = gpu_operator_plan(settings(gpu_operator_time_slicing={"a100": 2}, gpu_operator_runner_pools=pools))["problems"]
    assert problem.startswith("gpu_operator_time_slicing sets replicas for a100, but no pool") and "l40s, a10" in problem
    assert "glrt" not in problem
    # Without pools in the inventory the operator serves other workloads: slicing is theirs to use.
    assert gpu_operator_plan(settings(gpu_operator_time_slicing={"a100": 2}))["problems"] == []


def test_the_dcgm_service_monitor_follows_the_crd_and_honours_the_exporters_labels():
    from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import service_monitor_release
    plan = gpu_operator_plan(settings(gpu_operator_dcgm_service_monitor_labels={"release": "kube-prometheus-stack"}))
    crd = [{"metadata": {"name": "servicemonitors.monitoring.coreos.com"}}]
    release, refusal = service_monitor_release(plan, crd)
    monitor = release["values"]["dcgmExporter"]["serviceMonitor"]
    assert refusal == "" and monitor == {"enabled": True, "honorLabels": True,
                                         "additionalLabels": {"release": "kube-prometheus-stack"}}
    assert service_monitor_release(plan, [])[0]["values"]["dcgmExporter"]["serviceMonitor"]["enabled"] is False
    assert plan["release"]["values"]["dcgmExporter"]["serviceMonitor"]["enabled"] is False, "the plan is not changed"
    assert "service_monitor_crd" in [read["key"] for read in plan["reads"]]
    refused = gpu_operator_plan(settings(gpu_operator_dcgm_service_monitor="on"))
    assert service_monitor_release(refused, [])[1].startswith(
        "gpu_operator_dcgm_service_monitor: is on, but the cluster has no CustomResourceDefinition "
        "servicemonitors.monitoring.coreos.com")


def test_without_the_exporter_there_is_no_monitor_and_no_crd_read():
    plan = gpu_operator_plan(settings(gpu_operator_dcgm_exporter_enabled=False))
    assert plan["release"]["values"]["dcgmExporter"] == {"enabled": False}
    assert plan["dcgm_service_monitor"]["mode"] == "off"
    assert "service_monitor_crd" not in [read["key"] for read in plan["reads"]]


def test_no_pod_labels_when_the_allowlist_is_empty():
    values = gpu_operator_plan(settings(gpu_operator_dcgm_pod_labels=[]))["release"]["values"]["dcgmExporter"]
    assert "enablePodLabels" not in values and "podLabelAllowlistRegex" not in values


@pytest.mark.parametrize("overrides, expected", [
    ({"gpu_operator_dcgm_service_monitor": "maybe"}, "gpu_operator_dcgm_service_monitor: must be one of auto, on, off"),
    ({"gpu_operator_dcgm_service_monitor_labels": {"release": 1}},
     "gpu_operator_dcgm_service_monitor_labels.release: must be a string"),
    ({"gpu_operator_dcgm_pod_labels": "^app$"}, "gpu_operator_dcgm_pod_labels: must be a list of regular expressions"),
    ({"gpu_operator_dcgm_exporter_enabled": False, "gpu_operator_dcgm_service_monitor": "on"},
     "gpu_operator_dcgm_service_monitor: is on, but gpu_operator_dcgm_exporter_enabled is false"),
    ({"gpu_operator_values": {"dcgmExporter": {"enablePodLabels": False}}},
     "gpu_operator_values.dcgmExporter.enablePodLabels would override gpu_operator_dcgm_pod_labels"),
])
def test_bad_monitoring_settings_are_named(overrides, expected):
    (problem,) = gpu_operator_plan(settings(**overrides))["problems"]
    assert problem.startswith(expected)


@pytest.mark.parametrize("state", ["present", "absent"])
def test_a_wait_timeout_that_is_no_number_is_refused_naming_it_not_by_int(state):
    with pytest.raises(ValidationError, match=r"^gpu_operator_wait_timeout: must be a whole number of seconds >= 1, "
                                              r"such as 600; for 5m write 300 \(got '5m'\)$"):
        gpu_operator_plan(settings(gpu_operator_wait_timeout="5m", gpu_operator_state=state))
    plan = gpu_operator_plan(settings(gpu_operator_wait_timeout="600"))  # as -e gives it
    assert plan["release"]["timeout"] == 600 and plan["readback_reads"][0]["wait_timeout"] == 600
