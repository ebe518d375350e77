# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How a GPU class is asked for through Dynamic Resource Allocation (``resource.k8s.io/v1``).

Under DRA a job pod does not request an extended resource from a device
plugin: it names a ResourceClaimTemplate, from which Kubernetes makes one
ResourceClaim per pod; the scheduler allocates the claim's devices from the
ResourceSlices a DRA driver publishes, and the driver's kubelet plugin
hands them to the containers that name the claim.

NVIDIA's DRA driver for GPUs (kubernetes-sigs/dra-driver-nvidia-gpu) is the
driver ``gpu.nvidia.com``. It publishes each whole GPU (attribute ``type``
``gpu``) and each MIG device (``type`` ``mig``, with its ``profile``), and
its chart makes two DeviceClasses that select them: ``gpu.nvidia.com`` and
``mig.nvidia.com``. Every device carries ``productName``, the name NVML
gives the GPU (for a MIG device, its parent's), the same name nvidia-smi
prints. A class names its GPU by GFD's product label instead, which is that
name with spaces made dashes (product_names.py), so the selector compares
the driver's name in that form: one rule for both, and no second spelling
of every product to keep in step.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.product_names import gpu_of_label

RESOURCE_API_VERSION = "resource.k8s.io/v1"
# What a chart tests for to know the cluster serves DRA (helm's .Capabilities.APIVersions form).
DEVICE_CLASS_API = RESOURCE_API_VERSION + "/DeviceClass"
# NVIDIA's driver name, which is also the domain of its device attributes.
NVIDIA_DRA_DRIVER = "gpu.nvidia.com"
# The DeviceClasses NVIDIA's driver chart creates.
WHOLE_GPU_DEVICE_CLASS = "gpu.nvidia.com"
MIG_DEVICE_CLASS = "mig.nvidia.com"
DEVICE_CLASSES = (WHOLE_GPU_DEVICE_CLASS, MIG_DEVICE_CLASS)

# The names a job pod's claim goes by: the pod's entry in resourceClaims, the
# container's entry in resources.claims, and the one request of the template.
POD_CLAIM_NAME = "gpu"
CLAIM_REQUEST_NAME = "gpu"

# How a pool reaches its GPU (the pool key ``gpu_allocation``).
DEVICE_PLUGIN = "device_plugin"
DRA = "dra"
GPU_ALLOCATIONS = (DEVICE_PLUGIN, DRA)

DeviceClaim = namedtuple(
    "DeviceClaim",
    [
        "device_class",  # DeviceClass name: WHOLE_GPU_DEVICE_CLASS or MIG_DEVICE_CLASS
        "selectors",  # CEL expressions, all of which a device must meet
        "count",  # devices per pod
    ],
)


def _attribute(name):
    return 'device.attributes["%s"].%s' % (NVIDIA_DRA_DRIVER, name)


def _cel_string(text):
    """A CEL string literal (double quotes; backslash and quote escaped)."""
    return '"%s"' % str(text).replace("\\", "\\\\").replace('"', '\\"')


def product_selector(product):
    """The CEL selector of the devices of a class whose GFD product label is ``product``."""
    return '%s.replace(" ", "-") == %s' % (_attribute("productName"), _cel_string(gpu_of_label(product)))


def mig_profile_selector(profile):
    """The CEL selector of MIG devices of one profile, as the driver names it (``1g.10gb``)."""
    return "%s == %s" % (_attribute("profile"), _cel_string(profile))


def class_selector(gpu_class):
    """The CEL expression that picks a class's GPUs: its own ``dra_selector``, else its product's.

    None when the class says neither (a class known only by a node selector):
    DRA cannot tell its GPUs from others, and a pool of it cannot ask by DRA.
    """
    if gpu_class.get("dra_selector"):
        return gpu_class["dra_selector"]
    if gpu_class.get("product"):
        return product_selector(gpu_class["product"])
    return None


def device_claim(gpu_class, count, mig_profile=None):
    """What a pod of ``gpu_class`` claims: ``count`` whole GPUs, or one MIG device of ``mig_profile``.

    The caller has checked that the class has a selector and the profile.
    """
    selectors = [class_selector(gpu_class)]
    if mig_profile is None:
        return DeviceClaim(WHOLE_GPU_DEVICE_CLASS, selectors, count)
    return DeviceClaim(MIG_DEVICE_CLASS, selectors + [mig_profile_selector(mig_profile)], 1)


def nodes_with_slices(slices):
    """The names of the nodes NVIDIA's DRA driver publishes a ResourceSlice for (its pools are named after them)."""
    return set(str((item.get("spec") or {}).get("nodeName")) for item in slices or []
               if (item.get("spec") or {}).get("driver") == NVIDIA_DRA_DRIVER)


def claim_template_name(pool_name):
    """The ResourceClaimTemplate of a pool's job pods, in the job namespace."""
    return "%s-gpu" % pool_name


def claim_template(claim, name, namespace, labels=None):
    """The ResourceClaimTemplate object: one request of ``claim.count`` devices of its class and selectors."""
    metadata = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    request = {
        "deviceClassName": claim.device_class,
        "allocationMode": "ExactCount",
        "count": claim.count,
        "selectors": [{"cel": {"expression": expression}} for expression in claim.selectors],
    }
    return {
        "apiVersion": RESOURCE_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": metadata,
        "spec": {"spec": {"devices": {"requests": [{"name": CLAIM_REQUEST_NAME, "exactly": request}]}}},
    }


def pod_resource_claims(template_name):
    """The pod's ``resourceClaims``: one claim made per pod from the pool's template."""
    return [{"name": POD_CLAIM_NAME, "resourceClaimTemplateName": template_name}]


def container_claims():
    """A container's ``resources.claims``: the container that names the pod's claim gets its devices."""
    return [{"name": POD_CLAIM_NAME}]
