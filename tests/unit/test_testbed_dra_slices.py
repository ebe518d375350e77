# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's DRA objects (tools/testbed/lib/dra_slices.py): NVIDIA's DeviceClasses, and the
ResourceSlices that stand in for NVIDIA's driver on the simulated GPU nodes of nodes.yaml."""
import re
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.gpu import dra
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.product_names import gpu_of_label

TESTBED = Path(__file__).resolve().parents[2] / "tools" / "testbed"
if str(TESTBED) not in sys.path:
    sys.path.insert(0, str(TESTBED))

from lib import dra_slices  # noqa: E402  (needs the path above)

# The attribute names NVIDIA's driver gives its devices (cmd/gpu-kubelet-plugin/deviceinfo.go,
# GpuInfo.Attributes; mig.go, CommonAttributesMig), the ones the simulated slices may use.
NVIDIA_GPU_ATTRIBUTES = {"type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability",
                         "driverVersion", "cudaDriverVersion", "addressingMode"}
NVIDIA_MIG_ATTRIBUTES = {"type", "uuid", "parentUUID", "profile", "productName", "brand", "architecture",
                         "cudaComputeCapability", "driverVersion", "cudaDriverVersion", "addressingMode"}
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
NODES = yaml.safe_load((TESTBED / "nodes.yaml").read_text())
SLICES = {s["spec"]["nodeName"]: s for s in dra_slices.resource_slices()}


def _devices(kind=None):
    return [(node, d) for node, s in SLICES.items() for d in s["spec"]["devices"]
            if kind is None or d["attributes"]["type"]["string"] == kind]


def test_every_simulated_gpu_node_has_one_slice_of_nvidias_driver_for_its_own_pool():
    gpu_nodes = {n["name"] for n in NODES["nodes"] if "nvidia.com/gpu.product" in n.get("labels", {})}
    assert set(SLICES) == gpu_nodes == {"gpu-l40s-0", "gpu-a100-0", "gpu-a10-0"}
    for node, s in SLICES.items():
        assert s["apiVersion"] == "resource.k8s.io/v1" and s["kind"] == "ResourceSlice"
        assert s["spec"]["driver"] == "gpu.nvidia.com"
        assert s["spec"]["pool"] == {"name": node, "generation": 1, "resourceSliceCount": 1}
        assert s["metadata"]["labels"] == {"gpuci.runners/simulated": "true"}  # a stand-in, said so


def test_devices_are_the_nodes_gpus_and_mig_devices():
    counts = {node: (len([d for n, d in _devices("gpu") if n == node]), len([d for n, d in _devices("mig") if n == node]))
              for node in SLICES}
    assert counts == {"gpu-l40s-0": (4, 0), "gpu-a10-0": (2, 0), "gpu-a100-0": (2, 9)}
    profiles = sorted(d["attributes"]["profile"]["string"] for _n, d in _devices("mig"))
    assert profiles == ["1g.10gb"] * 7 + ["3g.40gb"] * 2


def test_every_device_uses_nvidias_attribute_names_and_value_kinds():
    for node, device in _devices():
        names = set(device["attributes"])
        allowed = NVIDIA_GPU_ATTRIBUTES if device["attributes"]["type"]["string"] == "gpu" else NVIDIA_MIG_ATTRIBUTES
        assert names <= allowed, (node, device["name"], names - allowed)
        assert {"type", "uuid", "productName", "driverVersion"} <= names
        assert SEMVER.match(device["attributes"]["driverVersion"]["version"])
        for name, value in device["attributes"].items():
            assert len(value) == 1 and set(value) <= {"string", "version", "int", "bool"}, (name, value)
        assert DNS_LABEL.match(device["name"]), device["name"]


def test_mig_devices_hang_off_gpus_that_are_no_whole_device():
    whole = {d["attributes"]["uuid"]["string"] for _n, d in _devices("gpu")}
    parents = {d["attributes"]["parentUUID"]["string"] for _n, d in _devices("mig")}
    assert len(parents) == 2 and not parents & whole
    for s in SLICES.values():  # a device name is unique in its pool; UUIDs everywhere
        names = [d["name"] for d in s["spec"]["devices"]]
        assert len(set(names)) == len(names)
    uuids = [d["attributes"]["uuid"]["string"] for _n, d in _devices()]
    assert len(set(uuids)) == len(uuids)
    a100 = [d["name"] for d in SLICES["gpu-a100-0"]["spec"]["devices"]]
    assert a100[:3] == ["gpu-0", "gpu-1", "gpu-2-mig-1g10gb-0"] and a100[-1] == "gpu-3-mig-3g40gb-1"


def test_whole_gpus_carry_the_gfd_memory_as_capacity():
    l40s = SLICES["gpu-l40s-0"]["spec"]["devices"][0]
    assert l40s["capacity"] == {"memory": {"value": "46068Mi"}}
    assert l40s["attributes"]["architecture"] == {"string": "Ada Lovelace"}


@pytest.mark.parametrize("node", sorted(SLICES))
def test_the_classs_dra_selector_picks_the_nodes_gpus(node):
    """What the collection's CEL selector computes: productName with spaces made dashes == the class's label."""
    label = next(n for n in NODES["nodes"] if n["name"] == node)["labels"]["nvidia.com/gpu.product"]
    selector = dra.product_selector(label)
    assert selector == 'device.attributes["gpu.nvidia.com"].productName.replace(" ", "-") == "%s"' % label
    for device in SLICES[node]["spec"]["devices"]:
        assert device["attributes"]["productName"]["string"].replace(" ", "-") == gpu_of_label(label)


def test_product_names_are_nvmls_for_every_builtin_class():
    products = {c["product"] for c in merged_classes().values() if c.get("product")}
    assert products <= set(dra_slices.NVML_NAMES)
    for label, name in dra_slices.NVML_NAMES.items():
        assert name.replace(" ", "-") == label
    assert dra_slices.product_name("NVIDIA-A100-SXM4-80GB") == "NVIDIA A100-SXM4-80GB"  # not every dash was a space
    assert dra_slices.unknown_products() == []


def test_an_unknown_product_keeps_its_label_and_is_named():
    spec = {"nodes": [{"name": "gpu-x-0", "labels": {"nvidia.com/gpu.product": "NVIDIA-X1", "nvidia.com/gpu.count": "1"},
                       "resources": {"nvidia.com/gpu": "1"}}]}
    (device,) = dra_slices.resource_slices(spec)[0]["spec"]["devices"]
    assert device["attributes"]["productName"] == {"string": "NVIDIA-X1"}
    assert "capacity" not in device and device["attributes"]["architecture"] == {"string": "Unknown"}
    assert dra_slices.unknown_products(spec) == ["NVIDIA-X1"]


def test_a_gpu_count_the_resources_do_not_fill_is_refused():
    node = {"name": "gpu-y-0", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "3"},
            "resources": {"nvidia.com/gpu": "1", "nvidia.com/mig-1g.10gb": "8"}}
    assert len(dra_slices.devices(node)) == 9  # 1 whole GPU; 8 x 1g.10gb fill two more (7 a GPU)
    node["resources"]["nvidia.com/mig-1g.10gb"] = "3"
    with pytest.raises(SystemExit, match="gpu-y-0 has nvidia.com/gpu.count 3, but its resources fill 2 GPUs"):
        dra_slices.devices(node)


def test_device_classes_are_nvidias_two():
    classes = {c["metadata"]["name"]: c for c in dra_slices.device_classes()}
    assert set(classes) == set(dra.DEVICE_CLASSES)
    assert classes["gpu.nvidia.com"]["spec"]["selectors"] == [
        {"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]
    assert classes["mig.nvidia.com"]["spec"]["selectors"] == [
        {"cel": {"expression": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}}]
    assert all(c["apiVersion"] == dra.RESOURCE_API_VERSION for c in classes.values())


def test_uuids_are_stable_across_ups():
    again = {s["spec"]["nodeName"]: s for s in dra_slices.resource_slices()}
    assert again == SLICES
    assert dra_slices.gpu_uuid("gpu-l40s-0", 0).startswith("GPU-")
    assert dra_slices.gpu_uuid("gpu-a100-0", 2, 0).startswith("MIG-")
