# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Dynamic Resource Allocation on the testbed: NVIDIA's DeviceClasses, and the simulated GPU nodes' ResourceSlices.

The DeviceClasses gpu.nvidia.com and mig.nvidia.com are made at every `up`,
with the selectors NVIDIA's DRA driver's chart gives them (written here, not
copied): the collection's preflight checks that they exist, and job pods'
claims name them.

A simulated (kwok) node has no kubelet, so no DRA kubelet plugin publishes
its devices: `up` publishes, for each GPU node of nodes.yaml, the
ResourceSlice NVIDIA's driver would (driver gpu.nvidia.com, pool = node
name, nodeName set), as a STAND-IN (test harness only), labelled
gpuci.runners/simulated=true. The scheduler then allocates claims from them
for real; kwok marks the pods Running and nothing is prepared. Devices are
named and attributed as NVIDIA's driver does (cmd/gpu-kubelet-plugin:
gpu-<minor>; MIG devices gpu-<parent>-mig-<profile>-<n>, where NVIDIA's name
also has the profile id and the placement, which nodes.yaml does not know).

productName is the GPU's name in NVML's form, as nvidia-smi prints it and
NVIDIA's driver publishes it ("NVIDIA A100-SXM4-80GB"), not the GFD label
("NVIDIA-A100-SXM4-80GB"): the label cannot be turned back into the name
(dashes of the name and dashes for spaces look alike), so NVML_NAMES says it
for each product of nodes.yaml and the built-in classes. The collection's
selector compares productName.replace(" ", "-") with the class's label, so
this keeps the simulated slices as close to the real driver's as real-0's.
A product missing from NVML_NAMES gets its label as productName (the
selector matches it as well) and `up` says so.
"""
from __future__ import annotations

import uuid

import yaml

from .api import ApiClient
from .cluster import NODES_FILE, SIMULATED_LABEL
from .layout import Layout

DRIVER = "gpu.nvidia.com"
API_VERSION = "resource.k8s.io/v1"
API_PATH = "/apis/resource.k8s.io/v1"
FIELD_MANAGER = "gpuci-testbed"
# DeviceClass -> the device type it selects, as NVIDIA's chart makes them.
DEVICE_CLASSES = {"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig"}
PRODUCT_LABEL = "nvidia.com/gpu.product"
# GFD's product label -> the name NVML gives the GPU (product_names.py's table).
NVML_NAMES = {
    "NVIDIA-L40S": "NVIDIA L40S",
    "NVIDIA-A10": "NVIDIA A10",
    "NVIDIA-A100-SXM4-80GB": "NVIDIA A100-SXM4-80GB",
    "NVIDIA-A100-SXM4-40GB": "NVIDIA A100-SXM4-40GB",
    "NVIDIA-H100-80GB-HBM3": "NVIDIA H100 80GB HBM3",
    "NVIDIA-H200": "NVIDIA H200",
}
# What the simulated GPUs say of themselves: NVML's brand of data-centre GPUs,
# and the driver version measured on the lent H100 host as a semantic version.
BRAND = "Nvidia"
DRIVER_VERSION = "580.159.4"
# A MIG-capable GPU has seven compute slices; profile <n>g.<memory> takes n.
COMPUTE_SLICES = 7
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
_UUIDS = uuid.UUID("6a1f0c3e-9b7d-4e2a-8c55-0d2b7f4e1a90")  # namespace of the simulated GPUs' UUIDs


def device_classes() -> list[dict]:
    """The DeviceClasses gpu.nvidia.com (whole GPUs) and mig.nvidia.com (MIG devices)."""
    return [{"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": {"name": name},
             "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}' && "
                                             f"device.attributes['{DRIVER}'].type == '{kind}'"}}]}}
            for name, kind in DEVICE_CLASSES.items()]


def product_name(label: str) -> str:
    """NVML's name of the GPU whose GFD product label is label; the label itself when unknown."""
    return NVML_NAMES.get(label, label)


def architecture(family: str | None) -> str:
    """NVML's architecture name from GFD's family label: ada-lovelace -> Ada Lovelace."""
    return " ".join(word.capitalize() for word in family.split("-")) if family else "Unknown"


def gpu_uuid(node: str, index: int, mig: int | None = None) -> str:
    """A stable UUID per simulated GPU (GPU-...) or MIG device (MIG-...)."""
    key = f"{node}/{index}" if mig is None else f"{node}/{index}/mig/{mig}"
    return ("GPU-" if mig is None else "MIG-") + str(uuid.uuid5(_UUIDS, key))


def _string(value: str) -> dict:
    return {"string": value}


def _common(labels: dict) -> dict:
    """The attributes a whole GPU and a MIG device share (NVIDIA's names)."""
    return {"productName": _string(product_name(labels[PRODUCT_LABEL])), "brand": _string(BRAND),
            "architecture": _string(architecture(labels.get("nvidia.com/gpu.family"))),
            "driverVersion": {"version": DRIVER_VERSION}}


def whole_gpu(node: str, index: int, labels: dict) -> dict:
    device = {"name": f"gpu-{index}",
              "attributes": {"type": _string("gpu"), "uuid": _string(gpu_uuid(node, index)), **_common(labels)}}
    if str(labels.get("nvidia.com/gpu.memory", "")).isdigit():
        device["capacity"] = {"memory": {"value": f"{labels['nvidia.com/gpu.memory']}Mi"}}
    return device


def mig_devices(node: str, parent: int, profile: str, count: int, labels: dict) -> list[dict]:
    """count MIG devices of profile on GPU parent (which then is no whole device)."""
    return [{"name": f"gpu-{parent}-mig-{profile.replace('.', '')}-{n}",
             "attributes": {"type": _string("mig"), "uuid": _string(gpu_uuid(node, parent, n)),
                            "parentUUID": _string(gpu_uuid(node, parent)), "profile": _string(profile),
                            **_common(labels)}}
            for n in range(count)]


def devices(node: dict) -> list[dict]:
    """A nodes.yaml GPU node's devices: its whole GPUs, then each MIG profile's devices on GPUs of their own.

    nvidia.com/gpu.count GPUs in all: resources' nvidia.com/gpu whole ones, and as many as the MIG
    resources fill, seven compute slices each (mixed strategy: 7 x 1g.10gb on one GPU, 2 x 3g.40gb on another).
    """
    name, labels, resources = node["name"], node.get("labels", {}), node.get("resources", {})
    whole = int(resources.get("nvidia.com/gpu", 0))
    found = [whole_gpu(name, i, labels) for i in range(whole)]
    parent = whole
    for resource, count in resources.items():
        if not resource.startswith(MIG_RESOURCE_PREFIX):
            continue
        profile = resource[len(MIG_RESOURCE_PREFIX):]
        per_gpu = COMPUTE_SLICES // int(profile.split("g", 1)[0])
        left = int(count)
        while left > 0:
            found += mig_devices(name, parent, profile, min(left, per_gpu), labels)
            left -= per_gpu
            parent += 1
    total = int(labels.get("nvidia.com/gpu.count", parent))
    if parent != total:
        raise SystemExit(f"testbed: {NODES_FILE.name}: node {name} has nvidia.com/gpu.count {total}, but its "
                         f"resources fill {parent} GPUs ({whole} whole, the rest MIG)")
    return found


def resource_slice(node: dict) -> dict:
    name = node["name"]
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-{DRIVER}", "labels": {SIMULATED_LABEL: "true"}},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices(node)}}


def gpu_nodes(spec: dict | None = None) -> list[dict]:
    """The simulated nodes with NVIDIA GPUs (a GFD product label)."""
    spec = spec or yaml.safe_load(NODES_FILE.read_text())
    return [node for node in spec["nodes"] if PRODUCT_LABEL in node.get("labels", {})]


def resource_slices(spec: dict | None = None) -> list[dict]:
    return [resource_slice(node) for node in gpu_nodes(spec)]


def unknown_products(spec: dict | None = None) -> list[str]:
    """The GPU nodes' product labels NVML_NAMES lacks: their productName is the label itself."""
    return sorted({node["labels"][PRODUCT_LABEL] for node in gpu_nodes(spec)} - set(NVML_NAMES))


def _apply(api: ApiClient, kind: str, obj: dict) -> None:
    # Server-side apply (JSON is YAML): a second `up` against the same objects changes nothing.
    api.request("PATCH", f"{API_PATH}/{kind}/{obj['metadata']['name']}?fieldManager={FIELD_MANAGER}&force=true",
                obj, content_type="application/apply-patch+yaml", timeout=30)


def create(layout: Layout) -> str:
    """Make the DeviceClasses and the simulated nodes' ResourceSlices; return what was made, as a sentence."""
    api = ApiClient(layout)
    for device_class in device_classes():
        _apply(api, "deviceclasses", device_class)
    slices = resource_slices()
    for obj in slices:
        _apply(api, "resourceslices", obj)
    made = ", ".join(f"{s['spec']['nodeName']} ({len(s['spec']['devices'])})" for s in slices)
    unknown = unknown_products()
    return (f"DeviceClasses {', '.join(DEVICE_CLASSES)}; ResourceSlices of {DRIVER} for the simulated GPU nodes "
            f"(stand-ins, devices): {made or 'none'}"
            + (f"; productName is the GFD label for {', '.join(unknown)} (no NVML name known)" if unknown else ""))
