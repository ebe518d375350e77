# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which nodes' device plugin config labels the gpu_operator role must change, from one read of the nodes.

The device plugin gives a node the time-slicing configuration its
``nvidia.com/device-plugin.config`` label names (else ``any``). The role
labels each node of a time-sliced class with the class's name, and marks the
label as its own with a second label naming its release, so that it only
ever removes labels it set:

- a node that matches a class to label (its node selector) and does not
  carry that class's label and the marker yet gets both; a node that
  matches several takes the first in the plan's order;
- a node that carries the role's marker but matches no class to label (the
  class was removed, its time-slicing switched off, the node's labels
  changed, or the role tears down with no class) loses both;
- every other node is left as it is, so a rerun patches nothing.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("nodes", "label_classes", "class_selectors", "labels", "release"))


def gpu_operator_node_labels(spec, path="node_labels"):
    """``[{name, labels, summary}]``: one label patch per node that needs one (``None`` removes a label).

    ``spec`` holds ``nodes`` (Node objects as ``k8s_reads`` returns them),
    ``label_classes`` (the classes to label, in the plan's order),
    ``class_selectors`` (each class's node selector), ``labels`` (the plan's
    ``node_labels``: the ``config`` label and the ``marker``) and
    ``release`` (the release name the marker holds).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    config, marker = spec["labels"]["config"], spec["labels"]["marker"]
    selectors = require_mapping(spec.get("class_selectors") or {}, child(path, "class_selectors"))
    release = spec["release"]
    patches = []
    for node in object_list(spec.get("nodes"), child(path, "nodes")):
        metadata = node.get("metadata") or {}
        labels = metadata.get("labels") or {}
        matching = [name for name in spec.get("label_classes") or []
                    if all(labels.get(key) == value for key, value in (selectors.get(name) or {}).items())]
        if matching:
            wanted = {config: matching[0], marker: release}
            if any(labels.get(key) != value for key, value in wanted.items()):
                patches.append({"name": metadata["name"], "labels": wanted,
                                "summary": "label node %s with device plugin config %s" % (metadata["name"], matching[0])})
        elif labels.get(marker) == release:
            patches.append({"name": metadata["name"], "labels": {config: None, marker: None},
                            "summary": "remove the device plugin config label of node %s" % metadata["name"]})
    return patches
