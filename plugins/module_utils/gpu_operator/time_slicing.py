# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Time-slicing configuration for the NVIDIA device plugin.

The GPU Operator reads it from a ConfigMap named by ``devicePlugin.config``;
each data key is one configuration, and a node picks one with the label
``nvidia.com/device-plugin.config=<key>`` (or gets ``devicePlugin.config.default``).
Here each GPU class gets a configuration named after it, and ``any`` is the
configuration for nodes that name no class.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import get_class, merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.common.rendering import to_yaml
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_int,
    child,
    require_mapping,
)

DEFAULT_CONFIG = "any"
DEFAULT_RESOURCE = "nvidia.com/gpu"


def time_slicing_config(classes_or_replicas, gpu_classes=None, path="replicas"):
    """Return ``{config_name: yaml_text}`` for the device plugin ConfigMap.

    Keys of ``classes_or_replicas`` are class names (one configuration per
    class, slicing the class's resource), device plugin resources such as
    ``nvidia.com/gpu`` (gathered into the ``any`` configuration), or ``any``
    itself (short for ``nvidia.com/gpu`` in ``any``). Values are replica
    counts; 1 writes a configuration without sharing, so nodes labelled
    with its name keep a valid configuration when slicing is turned off.
    """
    require_mapping(classes_or_replicas, path)
    classes = merged_classes(gpu_classes)
    configs = {}  # config name -> {resource: replicas}
    for key in sorted(classes_or_replicas, key=str):
        key_path = child(path, key)
        replicas = check_int(classes_or_replicas[key], key_path, minimum=1)
        config_name, resource = _target(key, classes, key_path)
        resources = configs.setdefault(config_name, {})
        if resource in resources:
            raise ValidationError(key_path, "sets %s in the %s configuration a second time" % (resource, config_name), key)
        resources[resource] = replicas
    return dict((name, to_yaml(_device_plugin_config(resources))) for name, resources in sorted(configs.items()))


def _target(key, classes, path):
    """Which configuration and which resource a key of the input stands for."""
    if not isinstance(key, str) or not key:
        raise ValidationError(path, "keys must be GPU class names, resource names or 'any'", key)
    if key == DEFAULT_CONFIG:
        return DEFAULT_CONFIG, DEFAULT_RESOURCE
    if "/" in key:
        return DEFAULT_CONFIG, str(key)
    gpu_class = get_class(classes, key, path)
    if gpu_class["resource"] is None:
        raise ValidationError(path, "GPU class %s has no device plugin resource to share" % key, key)
    return str(key), gpu_class["resource"]


def _device_plugin_config(resources):
    config = {"version": "v1"}
    shared = [{"name": name, "replicas": replicas} for name, replicas in sorted(resources.items()) if replicas > 1]
    if shared:
        config["sharing"] = {"timeSlicing": {"resources": shared}}
    return config
