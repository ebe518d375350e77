# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The DRA model of the GPU classes: selectors, claims, claim templates and the pod patch.

The attribute names are those NVIDIA's DRA driver publishes on every device
of its ResourceSlices (kubernetes-sigs/dra-driver-nvidia-gpu,
cmd/gpu-kubelet-plugin/deviceinfo.go, ``GpuInfo.Attributes``, and mig.go,
``CommonAttributesMig``), and the DeviceClasses those of its chart
(deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml and
deviceclass-mig.yaml).
"""
import re

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu import dra
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import resolve_gpu_request
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

# What the driver publishes, as its source names it.
DRIVER_NAME = "gpu.nvidia.com"
WHOLE_GPU_ATTRIBUTES = {"type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability",
                        "driverVersion", "cudaDriverVersion"}
MIG_ATTRIBUTES = {"type", "uuid", "parentUUID", "profile", "productName", "brand", "architecture",
                  "cudaComputeCapability", "driverVersion", "cudaDriverVersion"}
DRIVER_DEVICE_CLASSES = {"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig"}  # DeviceClass: the type it selects
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

ATTRIBUTE_REFERENCE = re.compile(r'device\.attributes\["([^"]+)"\]\.(\w+)')


def referenced_attributes(expression):
    """(domain, attribute) pairs a CEL selector reads."""
    return set(ATTRIBUTE_REFERENCE.findall(expression))


def test_the_names_are_the_drivers():
    assert dra.NVIDIA_DRA_DRIVER == DRIVER_NAME
    assert dict.fromkeys(dra.DEVICE_CLASSES) == dict.fromkeys(DRIVER_DEVICE_CLASSES)
    assert (dra.WHOLE_GPU_DEVICE_CLASS, dra.MIG_DEVICE_CLASS) == ("gpu.nvidia.com", "mig.nvidia.com")
    assert dra.RESOURCE_API_VERSION == "resource.k8s.io/v1"


@pytest.mark.parametrize("name", ["l40s", "a100", "a100-40gb", "a10", "h100", "h200"])
def test_every_builtin_cuda_class_selects_by_the_drivers_product_name(name):
    selector = merged_classes()[name]["dra_selector"]
    assert referenced_attributes(selector) == {(DRIVER_NAME, "productName")}
    assert (DRIVER_NAME, "productName")[1] in WHOLE_GPU_ATTRIBUTES & MIG_ATTRIBUTES


def test_the_product_selector_compares_the_drivers_name_in_gfds_dashed_form():
    # NVML calls the H100 "NVIDIA H100 80GB HBM3"; its GFD label is NVIDIA-H100-80GB-HBM3.
    assert dra.product_selector("NVIDIA-H100-80GB-HBM3") == (
        'device.attributes["gpu.nvidia.com"].productName.replace(" ", "-") == "NVIDIA-H100-80GB-HBM3"'
    )


def test_the_product_selector_drops_gfds_mig_and_sharing_suffixes():
    # A MIG device's productName is its parent's name, without the node's MIG strategy.
    assert dra.product_selector("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb").endswith('== "NVIDIA-A100-SXM4-80GB"')
    assert dra.product_selector("NVIDIA-L40S-SHARED").endswith('== "NVIDIA-L40S"')


def test_a_quote_in_a_product_cannot_end_the_cel_string():
    assert dra.product_selector('odd"name').endswith(r'== "odd\"name"')


def test_the_dri_class_has_no_dra_selector():
    assert merged_classes()["dri"]["dra_selector"] is None


def test_a_class_known_only_by_a_node_selector_has_none_unless_it_says_one():
    classes = merged_classes({"lab": {"gpu_access": ["cuda"], "node_selector": {"lab/gpu": "yes"}}})
    assert classes["lab"]["dra_selector"] is None
    own = 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'
    classes = merged_classes({"lab": {"gpu_access": ["cuda"], "node_selector": {"lab/gpu": "yes"}, "dra_selector": own}})
    assert classes["lab"]["dra_selector"] == own


@pytest.mark.parametrize("value", ["", "  ", 3, ["a"]])
def test_a_bad_dra_selector_is_named(value):
    with pytest.raises(ValidationError) as error:
        merged_classes({"l40s": {"dra_selector": value}})
    assert error.value.path == "gpu_classes.l40s.dra_selector"


def test_a_dri_class_takes_no_dra_selector():
    with pytest.raises(ValidationError) as error:
        merged_classes({"dri": {"dra_selector": "true"}})
    assert error.value.path == "gpu_classes.dri.dra_selector"
    assert "gpu_access cuda" in str(error.value)


def test_whole_gpus_are_claimed_from_the_gpu_class():
    claim = dra.device_claim(merged_classes()["h200"], 2)
    assert claim == dra.DeviceClaim("gpu.nvidia.com", [merged_classes()["h200"]["dra_selector"]], 2)


def test_a_mig_device_is_claimed_from_the_mig_class_by_its_profile():
    claim = dra.device_claim(merged_classes()["a100"], 1, "1g.10gb")
    assert claim.device_class == "mig.nvidia.com"
    assert claim.count == 1
    assert claim.selectors[1] == 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'
    read = set().union(*(referenced_attributes(s) for s in claim.selectors))
    assert read == {(DRIVER_NAME, "productName"), (DRIVER_NAME, "profile")}
    assert {name for driver, name in read} <= MIG_ATTRIBUTES


def test_the_claim_template_is_one_exact_request_of_the_claim():
    claim = dra.device_claim(merged_classes()["l40s"], 2)
    template = dra.claim_template(claim, "l40s-gpu", "ci-jobs", {"app.kubernetes.io/managed-by": "gpuci.runners"})
    assert template == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "l40s-gpu", "namespace": "ci-jobs",
                     "labels": {"app.kubernetes.io/managed-by": "gpuci.runners"}},
        "spec": {"spec": {"devices": {"requests": [{
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "allocationMode": "ExactCount",
                "count": 2,
                "selectors": [{"cel": {"expression": claim.selectors[0]}}],
            },
        }]}}},
    }


def test_a_dra_request_has_a_claim_and_no_device_plugin_resource():
    request = resolve_gpu_request({"gpu_class": "l40s", "gpus": 2, "gpu_allocation": "dra"}, merged_classes(), "pool")
    assert request.claim == dra.device_claim(merged_classes()["l40s"], 2)
    assert (request.resource, request.count, request.gpu_access) == (None, 2, "cuda")
    # On the class's nodes as before; the claim picks the devices there.
    assert request.node_selector == {"nvidia.com/gpu.product": "NVIDIA-L40S"}
    assert request.tolerations == [GPU_TOLERATION]
    assert request.runtime_class is None


def test_a_dra_request_keeps_the_pools_own_placement_and_runtime_class():
    pool = {"gpu_class": "l40s", "gpu_allocation": "dra", "node_selector": {"pool": "ci"}, "runtime_class": "nvidia"}
    request = resolve_gpu_request(pool, merged_classes(), "pool")
    assert request.node_selector == {"nvidia.com/gpu.product": "NVIDIA-L40S", "pool": "ci"}
    assert request.runtime_class == "nvidia"


def test_the_device_plugin_is_the_default_and_unchanged():
    default = resolve_gpu_request({"gpu_class": "l40s"}, merged_classes(), "pool")
    explicit = resolve_gpu_request({"gpu_class": "l40s", "gpu_allocation": "device_plugin"}, merged_classes(), "pool")
    assert default == explicit
    assert default.claim is None
    assert default.resource == "nvidia.com/gpu"


@pytest.mark.parametrize(
    "pool, reason",
    [
        ({"gpu_class": "l40s", "gpu_allocation": "claims"}, "device_plugin, dra"),
        ({"gpu_allocation": "dra"}, "needs gpu_class"),
        ({"gpu_class": "dri", "gpu_allocation": "dra"}, "gpu_access dri"),
    ],
)
def test_a_wrong_gpu_allocation_is_named(pool, reason):
    with pytest.raises(ValidationError) as error:
        resolve_gpu_request(pool, merged_classes(), "gitlab_runner_pools[name=x]")
    assert error.value.path == "gitlab_runner_pools[name=x].gpu_allocation"
    assert reason in str(error.value)


def test_dra_is_refused_for_a_class_it_cannot_tell_apart():
    classes = merged_classes({"lab": {"gpu_access": ["cuda"], "node_selector": {"lab/gpu": "yes"}}})
    with pytest.raises(ValidationError) as error:
        resolve_gpu_request({"gpu_class": "lab", "gpu_allocation": "dra"}, classes, "pool")
    assert "neither product nor dra_selector" in str(error.value)


def test_the_pod_patch_names_the_claim_on_the_gpu_container_only():
    patch = gpu_pod_patch({"name": "h200-ci", "gpu_class": "h200", "gpu_allocation": "dra"})
    assert patch == {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "h200-ci-gpu"}],
        "containers": [{"name": "build", "resources": {"claims": [{"name": "gpu"}]}}],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200"},
        "tolerations": [GPU_TOLERATION],
    }


def test_the_pod_patch_of_a_mig_claim():
    patch = gpu_pod_patch({"name": "mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "gpu_allocation": "dra"})
    assert patch["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "mig-gpu"}]
    assert "limits" not in patch["containers"][0]["resources"]
