# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_operator_gpu_allocation: the device plugin's ClusterPolicy (unchanged) or NVIDIA's DRA driver in a GPUCluster.

The values, the problems of the DRA path, the refusal of a second operator
or of a switch on a running release (owner.py, as the converge's decision
calls it), the read-back of the GPUCluster; and the chart facts these rest
on, read from the chart the role installs.
"""

import pathlib
import re
import sys
import tarfile

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.decide import gpu_operator_decision
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DEVICE_PLUGIN, DRA
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator import plan as plan_module
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.owner import gpu_operator_owner
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import gpu_operator_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.readback import gpu_operator_readback

from test_gpu_operator_plan import settings

REPO = pathlib.Path(__file__).resolve().parents[5]
sys.path.insert(0, str(REPO / "tools" / "testbed"))
from lib.layout import charts_dir  # noqa: E402  pylint: disable=wrong-import-position

# A DRA inventory the role takes as it is: the operator's toolkit off (the GPUCluster has none).
DRA_SETTINGS = {"gpu_operator_gpu_allocation": DRA, "gpu_operator_toolkit_enabled": False}


def dra(**overrides):
    return settings(**dict(DRA_SETTINGS, **overrides))


def keys(plan):
    return [(entry["key"], entry["kind"], entry["api_version"]) for entry in plan]


# -- values ------------------------------------------------------------------------------------------------


def test_device_plugin_renders_exactly_the_values_of_before():
    """An inventory that does not name the variable and one that names device_plugin plan the same release."""
    unnamed = settings()
    del unnamed["gpu_operator_gpu_allocation"]
    before, named = gpu_operator_plan(unnamed), gpu_operator_plan(settings(gpu_operator_gpu_allocation=DEVICE_PLUGIN))
    assert named["release"] == before["release"]
    assert not {"clusterPolicy", "gpuCluster", "draDriver"} & set(named["release"]["values"])
    assert "nvidiaDriverCRD" not in named["release"]["values"]["driver"]
    assert named["gpu_allocation"] == DEVICE_PLUGIN
    assert [obj["kind"] for obj in named["create_only"]] == ["RuntimeClass"]
    assert keys(named["readback_reads"]) == [("deployment", "Deployment", "apps/v1"),
                                             ("policy", "ClusterPolicy", "nvidia.com/v1")]


def test_dra_deploys_the_gpu_cluster_instead_of_the_cluster_policy():
    plan = gpu_operator_plan(dra(gpu_operator_driver_version="580.105.08", gpu_operator_dra_driver_version="v0.5.0"))
    values = plan["release"]["values"]
    assert values["clusterPolicy"] == {"deployCR": False}
    assert values["gpuCluster"] == {"deployCR": True}
    assert values["draDriver"] == {"version": "v0.5.0"}
    # The operator's driver, through the NVIDIADriver CR the chart requires beside a GPUCluster.
    assert values["driver"] == {"enabled": True, "version": "580.105.08", "nvidiaDriverCRD": {"enabled": True}}
    # The DCGM exporter is the GPUCluster's too: the same values reach it.
    assert values["dcgmExporter"]["enabled"] is True and values["dcgmExporter"]["enablePodLabels"] is True
    assert plan["gpu_allocation"] == DRA and plan["gpu_cluster"] == "gpu-cluster"
    assert plan["create_only"] == [], "no RuntimeClass: no operator toolkit configures its handler"
    assert ("gpu_cluster", "GPUCluster", "nvidia.com/v1alpha1") in keys(plan["readback_reads"])
    assert plan["problems"] == []


def test_dra_with_host_drivers_asks_for_no_driver_cr_and_the_charts_dra_driver():
    values = gpu_operator_plan(dra(gpu_operator_driver_enabled=False))["release"]["values"]
    assert values["driver"] == {"enabled": False}
    assert "draDriver" not in values


@pytest.mark.parametrize("allocation", [DEVICE_PLUGIN, DRA])
def test_both_ways_read_every_gpu_cluster_and_the_cluster_policy(allocation):
    overrides = dict(DRA_SETTINGS)
    overrides["gpu_operator_gpu_allocation"] = allocation
    reads = gpu_operator_plan(settings(**overrides))["reads"]
    gpu_cluster = next(entry for entry in reads if entry["key"] == "gpu_cluster")
    assert (gpu_cluster["kind"], gpu_cluster["api_version"]) == ("GPUCluster", "nvidia.com/v1alpha1")
    assert "name" not in gpu_cluster, "any GPUCluster counts, whatever its name"
    assert any(entry["key"] == "policy" and entry["kind"] == "ClusterPolicy" for entry in reads)


def test_an_unknown_allocation_names_the_variable():
    with pytest.raises(ValidationError, match=r"^gpu_operator_gpu_allocation: must be one of device_plugin, dra"):
        gpu_operator_plan(settings(gpu_operator_gpu_allocation="cdi"))


# -- problems ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("overrides, fragments", [
    ({"gpu_operator_toolkit_enabled": True}, ["gpu_operator_toolkit_enabled is true", "no container toolkit",
                                              "Set gpu_operator_toolkit_enabled: false"]),
    ({"gpu_operator_cdi_enabled": False}, ["gpu_operator_cdi_enabled is false", "by CDI"]),
    ({"gpu_operator_mig_strategy": "mixed"}, ["gpu_operator_mig_strategy is mixed", "deploys neither",
                                              "Leave gpu_operator_mig_strategy at single"]),
    ({"gpu_operator_mig_strategy": "none"}, ["gpu_operator_mig_strategy is none"]),
    ({"gpu_operator_time_slicing": {"l40s": 2}}, ["gpu_operator_time_slicing is set", "no device plugin"]),
    ({"gpu_operator_wait_for_gpu_nodes": True}, ["gpu_operator_wait_for_gpu_nodes is true", "nvidia.com/gpu"]),
    ({"gpu_operator_values": {"driver": {"nvidiaDriverCRD": {"enabled": False}}}},
     ["gpu_operator_values.driver.nvidiaDriverCRD.enabled is false", "gpu_operator_driver_enabled"]),
], ids=["toolkit", "cdi-off", "mig-mixed", "mig-none", "time-slicing", "gpu-node-wait", "no-driver-cr"])
def test_what_only_the_device_plugin_stack_reads_is_a_problem_with_dra(overrides, fragments):
    problems = gpu_operator_plan(dra(**overrides))["problems"]
    assert len([text for text in problems if fragments[0] in text]) == 1, problems
    (text,) = [text for text in problems if fragments[0] in text]
    for fragment in fragments + ["gpu_operator_gpu_allocation: dra"]:
        assert fragment in text


@pytest.mark.parametrize("overrides", [
    {"gpu_operator_toolkit_enabled": True}, {"gpu_operator_cdi_enabled": False},
    {"gpu_operator_mig_strategy": "mixed"}, {"gpu_operator_time_slicing": {"l40s": 2}},
    {"gpu_operator_wait_for_gpu_nodes": True},
    {"gpu_operator_values": {"driver": {"nvidiaDriverCRD": {"enabled": False}}}},
], ids=["toolkit", "cdi-off", "mig-mixed", "time-slicing", "gpu-node-wait", "no-driver-cr"])
def test_the_same_settings_stay_fine_with_the_device_plugin(overrides):
    assert gpu_operator_plan(settings(**overrides))["problems"] == []


def test_a_host_driver_may_turn_the_driver_cr_off():
    assert gpu_operator_plan(dra(gpu_operator_driver_enabled=False, gpu_operator_values={
        "driver": {"nvidiaDriverCRD": {"enabled": False}}}))["problems"] == []


def test_the_mig_strategy_the_dra_path_accepts_is_the_roles_default():
    assert plan_module.DRA_MIG_STRATEGY == settings()["gpu_operator_mig_strategy"]


POOLS = [
    {"name": "l40s-dra", "gpu_class": "l40s", "gpu_allocation": DRA},
    {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "gpu_allocation": DRA},
    {"name": "cpu"},
]


def test_pools_that_ask_the_device_plugin_are_a_problem_with_dra():
    pools = POOLS + [{"name": "a10", "gpu_class": "a10"},
                     {"name": "l40s-dp", "gpu_class": "l40s", "gpu_allocation": DEVICE_PLUGIN}]
    scale_sets = {"vulkan": {"gpu_class": "dri"}, "h100": {"name": "h100", "gpu_class": "h100"}}
    (problem,) = gpu_operator_plan(dra(gpu_operator_runner_pools=[pools, scale_sets]))["problems"]
    assert problem.startswith("gpu_operator_gpu_allocation is dra, but the pools a10, l40s-dp, h100 ask for their GPUs "
                              "through the device plugin")
    assert "Set gpu_allocation: dra on them" in problem


def test_dra_pools_and_their_mig_profiles_need_no_mixed_strategy_with_dra():
    assert gpu_operator_plan(dra(gpu_operator_runner_pools=[POOLS]))["problems"] == []
    # With the device plugin the same MIG pool still needs mixed.
    (problem,) = gpu_operator_plan(settings(gpu_operator_runner_pools=[POOLS]))["problems"]
    assert problem.startswith("gpu_operator_mig_strategy is single, but the pools a100-mig use mig_profile")


def test_pools_the_runner_roles_refuse_are_theirs_to_report():
    pools = [{"name": "typo", "gpu_class": "l40"}, {"name": "both", "gpu_class": "a100", "gpus": 1, "mig_profile": "1g.10gb"}]
    assert gpu_operator_plan(dra(gpu_operator_runner_pools=[pools]))["problems"] == []


def test_a_dra_driver_version_without_dra_is_a_problem():
    (problem,) = gpu_operator_plan(settings(gpu_operator_dra_driver_version="v0.5.0"))["problems"]
    assert problem.startswith("gpu_operator_dra_driver_version is set while gpu_operator_gpu_allocation is device_plugin")


@pytest.mark.parametrize("values, variable", [
    ({"gpuCluster": {"deployCR": True}}, "gpu_operator_gpu_allocation"),
    ({"clusterPolicy": {"deployCR": False}}, "gpu_operator_gpu_allocation"),
    ({"draDriver": {"version": "v0.5.0"}}, "gpu_operator_dra_driver_version"),
])
def test_values_that_choose_the_way_are_owned_by_the_variables(values, variable):
    (section,) = values
    (key,) = values[section]
    assert gpu_operator_plan(settings(gpu_operator_values=values))["problems"] == [
        "gpu_operator_values.%s.%s would override %s; set %s instead." % (section, key, variable, variable)]


def test_other_dra_driver_values_lay_over():
    values = gpu_operator_plan(dra(gpu_operator_values={"draDriver": {"computeDomains": {"enabled": False}}}))
    assert values["release"]["values"]["draDriver"] == {"computeDomains": {"enabled": False}}
    assert values["problems"] == []


# -- owner: one operator, one way ---------------------------------------------------------------------------


def cr(kind, name, release="gpu-operator", namespace="gpu-operator"):
    metadata = {"name": name}
    if release is not None:
        metadata["annotations"] = {"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace}
    return {"kind": kind, "metadata": metadata}


def owner(allocation, policies=(), clusters=()):
    return gpu_operator_owner({"policies": list(policies), "gpu_clusters": list(clusters),
                               "cluster_policy": "cluster-policy", "gpu_allocation": allocation,
                               "release": "gpu-operator", "namespace": "gpu-operator"})


@pytest.mark.parametrize("allocation, policies, clusters", [
    (DRA, [], []), (DRA, [], [cr("GPUCluster", "gpu-cluster")]),
    (DEVICE_PLUGIN, [cr("ClusterPolicy", "cluster-policy")], []),
], ids=["fresh", "dra-rerun", "device-plugin-rerun"])
def test_our_release_goes_on_the_way_it_runs(allocation, policies, clusters):
    assert owner(allocation, policies, clusters) == ""


@pytest.mark.parametrize("allocation", [DEVICE_PLUGIN, DRA])
@pytest.mark.parametrize("found, named", [
    (cr("GPUCluster", "gpu-cluster", "operator-2", "nvidia"), "Helm release operator-2 in namespace nvidia"),
    (cr("GPUCluster", "made-by-hand", None), "Helm release (not Helm) in namespace (not Helm)"),
], ids=["other-release", "not-helm"])
def test_another_owners_gpu_cluster_is_refused_either_way(allocation, found, named):
    message = owner(allocation, clusters=[found])
    assert "GPUCluster %s belongs to %s" % (found["metadata"]["name"], named) in message
    assert "there can be only one per cluster" in message


def test_another_owners_cluster_policy_is_still_refused_with_dra():
    message = owner(DRA, policies=[cr("ClusterPolicy", "cluster-policy", "operator-2")])
    assert "ClusterPolicy cluster-policy belongs to Helm release operator-2 in namespace gpu-operator" in message


def test_a_switch_to_dra_on_a_running_release_is_refused_with_the_steps():
    message = owner(DRA, policies=[cr("ClusterPolicy", "cluster-policy")])
    assert message.startswith("gpu_operator_gpu_allocation is dra, but this release hands out GPUs through the device "
                              "plugin now (ClusterPolicy cluster-policy)")
    assert "kubectl delete clusterpolicies.nvidia.com cluster-policy" in message
    assert "gpu_operator_state: absent" in message and "the pools' gpu_allocation: dra" in message


def test_a_switch_back_to_the_device_plugin_is_refused_with_the_steps():
    message = owner(DEVICE_PLUGIN, clusters=[cr("GPUCluster", "gpu-cluster")])
    assert message.startswith("gpu_operator_gpu_allocation is device_plugin, but this release hands out GPUs through "
                              "NVIDIA's DRA driver now (GPUCluster gpu-cluster)")
    assert "kubectl delete gpuclusters.nvidia.com gpu-cluster --wait" in message
    assert "the pools' gpu_allocation: device_plugin" in message


def test_a_caller_that_gives_no_allocation_means_the_device_plugin():
    assert gpu_operator_owner({"policies": [cr("ClusterPolicy", "cluster-policy")], "cluster_policy": "cluster-policy",
                               "release": "gpu-operator", "namespace": "gpu-operator"}) == ""
    with pytest.raises(ValidationError, match=r"gpu_operator_owner\.gpu_allocation: must be one of"):
        owner("mps")


class Found:
    """k8s_reads' answers of the role's reads, as the converge's decision takes them."""

    def __init__(self, **answers):
        self.answers = answers

    def __call__(self, key):
        return list(self.answers.get(key, []))

    def answer(self, key):
        return {"resources": self(key)}


def test_the_converge_refuses_the_switch_before_any_change():
    """The decision passes the GPUCluster read and the plan's way to owner.py (fleet/decide.py)."""
    plan = gpu_operator_plan(settings())
    _decision, refusal = gpu_operator_decision(plan, Found(gpu_cluster=[cr("GPUCluster", "gpu-cluster")]), False)
    assert refusal.startswith("gpu_operator_gpu_allocation is device_plugin, but this release hands out GPUs")
    plan = gpu_operator_plan(dra())
    _decision, refusal = gpu_operator_decision(plan, Found(policy=[cr("ClusterPolicy", "cluster-policy")]), False)
    assert refusal.startswith("gpu_operator_gpu_allocation is dra, but this release hands out GPUs")
    assert gpu_operator_decision(plan, Found(gpu_cluster=[cr("GPUCluster", "gpu-cluster")]), False)[1] == ""


# -- read-back ---------------------------------------------------------------------------------------------


def gpu_cluster(**spec):
    return {"kind": "GPUCluster", "metadata": {"name": "gpu-cluster"},
            "spec": dict({"draDriver": {"version": "v0.5.0", "computeDomains": {"enabled": True}},
                          "dcgmExporter": {"enabled": True}}, **spec)}


def readback(policies=(), clusters=(), **overrides):
    values = gpu_operator_plan(dra(**overrides))["release"]["values"]
    return gpu_operator_readback({"values": values, "cluster_policy": "cluster-policy", "policies": list(policies),
                                  "gpu_clusters": list(clusters)})


def test_the_gpu_cluster_carrying_the_settings_is_verified():
    assert readback(clusters=[gpu_cluster()], gpu_operator_dra_driver_version="v0.5.0") == []
    # The chart's version, when the role sets none, is not compared.
    assert readback(clusters=[gpu_cluster(draDriver={"version": "v0.6.0"})]) == []


def test_a_gpu_cluster_with_other_settings_is_named():
    problems = readback(clusters=[gpu_cluster(dcgmExporter={"enabled": False})], gpu_operator_dra_driver_version="v0.4.1")
    assert problems == ["GPUCluster gpu-cluster does not carry the chosen settings: draDriver.version is v0.5.0, the "
                        "release's v0.4.1; dcgmExporter.enabled is False, the release's True"]


def test_no_gpu_cluster_or_a_cluster_policy_beside_it_is_a_problem():
    assert readback() == ["expected one GPUCluster; found 0"]
    assert readback(policies=[cr("ClusterPolicy", "cluster-policy")], clusters=[gpu_cluster()]) == [
        "expected no ClusterPolicy beside the GPUCluster (gpu_operator_gpu_allocation: dra); found cluster-policy"]


# -- the chart's own facts ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chart():
    """The gpu-operator chart at the version the role installs: its files by name, as text."""
    version = settings()["gpu_operator_chart_version"]
    path = charts_dir() / ("gpu-operator-%s.tgz" % version)
    assert path.is_file(), "%s is missing (the testbed's charts; set GPUCI_CHARTS_DIR)" % path
    with tarfile.open(path) as archive:
        return {member.name: archive.extractfile(member).read().decode() for member in archive.getmembers()
                if member.isfile() and not member.name.startswith("gpu-operator/charts/")}


def test_the_values_the_dra_path_sets_are_the_charts(chart):
    values = yaml.safe_load(chart["gpu-operator/values.yaml"])
    assert values["clusterPolicy"]["deployCR"] is True and values["gpuCluster"]["deployCR"] is False
    assert "version" in values["draDriver"] and "enabled" in values["driver"]["nvidiaDriverCRD"]
    # The chart refuses a GPUCluster with an operator-managed driver but no NVIDIADriver CR, and both CRs at once.
    validations = chart["gpu-operator/templates/validations.yaml"]
    assert "and .Values.gpuCluster.deployCR (and .Values.driver.enabled (not .Values.driver.nvidiaDriverCRD.enabled))" \
        in validations
    assert "and .Values.clusterPolicy.deployCR .Values.gpuCluster.deployCR" in validations


def test_the_gpu_cluster_name_labels_and_keep_policy_are_the_charts(chart):
    helpers = chart["gpu-operator/templates/_helpers.tpl"]
    name = re.search(r'define "gpu-operator.gpucluster-name" -}}\s*(\S+)\s*{{- end', helpers).group(1)
    assert name == plan_module.GPU_CLUSTER
    template = chart["gpu-operator/templates/gpucluster.yaml"]
    assert "apiVersion: %s\nkind: GPUCluster" % plan_module.GPU_CLUSTER_API_VERSION in template
    assert '"helm.sh/resource-policy": keep' in template, "teardown deletes the GPUCluster because the chart keeps it"
    labels = re.search(r'define "gpu-operator.labels" -}}(.*?){{- end -}}', helpers, re.S).group(1)
    for selector in gpu_operator_plan(dra())["gpu_cluster_label_selectors"]:
        label, value = selector.split("=")
        assert label in labels or label in template, selector
        assert value in ("gpu-operator", "Helm")


def test_the_gpu_cluster_spec_has_no_toolkit_cdi_mig_or_device_plugin(chart):
    """Why the DRA path refuses those variables: the CRD's spec carries none of them."""
    crd = yaml.safe_load(chart["gpu-operator/crds/nvidia.com_gpuclusters.yaml"])
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert {"draDriver", "dcgmExporter"} <= set(spec)
    assert not {"toolkit", "cdi", "mig", "devicePlugin", "driver", "operator"} & set(spec)
    assert set(spec["draDriver"]["properties"]) >= {"version"}
