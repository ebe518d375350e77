# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which leftovers of removed ARC scale sets get their finalizers cleared, as patches for one apply.

ARC's controller removes the cleanup finalizers of a deleted scale set's
objects; where no controller runs (arc_runners_force_finalizers), they would
stay in Terminating and block their namespace. Only an object that is
already being deleted, labelled with a removed scale set's name *and* in
that scale set's namespace qualifies: the label alone could match a namesake
scale set in another namespace, which must be left alone.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import SCALE_SET_NAME_LABEL
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    item,
    object_list,
    reject_unknown_keys,
    require_mapping,
    required_str,
)

INPUT_KEYS = frozenset(("objects", "scale_sets"))


def arc_runners_finalizer_patches(spec, path="arc_runners_finalizer_patches"):
    """Merge patches that empty ``metadata.finalizers``, one per qualifying object, in the objects' order.

    ``spec`` holds ``objects`` (as the API returns them, any kinds) and
    ``scale_sets`` (the removed ones: ``name`` and ``namespace`` each).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    removed = set()
    for index, scale_set in enumerate(object_list(spec.get("scale_sets"), child(path, "scale_sets"))):
        entry_path = item(child(path, "scale_sets"), index)
        removed.add((required_str(scale_set, "namespace", entry_path), required_str(scale_set, "name", entry_path)))
    patches = []
    for obj in object_list(spec.get("objects"), child(path, "objects")):
        metadata = obj.get("metadata") or {}
        owner = (metadata.get("namespace"), (metadata.get("labels") or {}).get(SCALE_SET_NAME_LABEL))
        if metadata.get("deletionTimestamp") and metadata.get("finalizers") and owner in removed:
            patches.append({"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                            "metadata": {"name": metadata["name"], "namespace": metadata["namespace"],
                                         "finalizers": []}})
    return patches
