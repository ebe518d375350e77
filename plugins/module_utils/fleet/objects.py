# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every cluster role's objects for the converge's one ``kubernetes.core.k8s`` call (roles/converge).

Each role says, from its own read, what it must apply (``pending_changes``'
``apply``: the namespaces it creates, then its objects). The roles read the
cluster before any of them applies, so two roles that share a namespace
nobody made yet both ask to create it, each with its own labels. As when
the roles ran one after the other, the first one creates it and the later
ones use it as it is: each object is applied once, as the first role in
the list asked.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.pending_changes import object_key
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    item,
    object_list,
    type_name,
)


def fleet_objects(role_objects, path="fleet_objects"):
    """The roles' object lists (in the roles' order) joined, each object (pending_changes.object_key) once."""
    if not isinstance(role_objects, (list, tuple)):
        raise ValidationError(path, "must be a list of object lists, not %s" % type_name(role_objects))
    seen = set()
    joined = []
    for index, objects in enumerate(role_objects):
        for obj in object_list(objects, item(path, index)):
            key = object_key(obj)
            if key not in seen:
                seen.add(key)
                joined.append(obj)
    return joined
