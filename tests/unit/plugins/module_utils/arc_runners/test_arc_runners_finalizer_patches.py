# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""arc_runners_finalizer_patches: only a removed scale set's own leftovers, already being deleted, are released."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.arc_runners_finalizer_patches import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.finalizer_patches import (
    SCALE_SET_NAME_LABEL,
    arc_runners_finalizer_patches,
)

REMOVED = ({"name": "gpu-l40s", "namespace": "arc-runners", "state": "absent"},)
DELETING = "2026-11-26T10:00:00Z"


def leftover(kind, name, namespace="arc-runners", scale_set="gpu-l40s", deleting=True,
             finalizers=("actions.github.com/cleanup-protection",), api_version="actions.github.com/v1alpha1"):
    metadata = {"name": name, "namespace": namespace, "labels": {SCALE_SET_NAME_LABEL: scale_set},
                "finalizers": list(finalizers), "resourceVersion": "7", "managedFields": [{"manager": "helm"}]}
    if deleting:
        metadata["deletionTimestamp"] = DELETING
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": {"minRunners": 0}}


def patches(objects, scale_sets=REMOVED):
    return arc_runners_finalizer_patches({"objects": objects, "scale_sets": list(scale_sets)})


def test_a_leftover_being_deleted_gets_a_patch_that_only_empties_its_finalizers():
    found = patches([leftover("AutoscalingRunnerSet", "gpu-l40s"),
                     leftover("Role", "gpu-l40s-gha-rs-manager", api_version="rbac.authorization.k8s.io/v1")])
    assert found == [
        {"apiVersion": "actions.github.com/v1alpha1", "kind": "AutoscalingRunnerSet",
         "metadata": {"name": "gpu-l40s", "namespace": "arc-runners", "finalizers": []}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "gpu-l40s-gha-rs-manager", "namespace": "arc-runners", "finalizers": []}},
    ]


@pytest.mark.parametrize("other", [
    leftover("AutoscalingRunnerSet", "gpu-l40s", deleting=False),             # not being deleted
    leftover("AutoscalingRunnerSet", "gpu-l40s", finalizers=()),              # nothing to clear
    leftover("AutoscalingRunnerSet", "gpu-l40s", namespace="team-b"),         # a namesake elsewhere
    leftover("AutoscalingRunnerSet", "gpu-a10", scale_set="gpu-a10"),         # a scale set that stays
], ids=["not-deleting", "no-finalizers", "namesake-in-other-namespace", "other-scale-set"])
def test_everything_else_is_left_alone(other):
    assert patches([other]) == []


def test_no_removed_scale_sets_no_patches():
    assert patches([leftover("AutoscalingRunnerSet", "gpu-l40s")], scale_sets=()) == []


def test_bad_input_names_the_field():
    with pytest.raises(AnsibleFilterError, match=r"arc_runners_finalizer_patches\.scale_sets\[0\]\.namespace"):
        FilterModule().filters()["arc_runners_finalizer_patches"]({"objects": [], "scale_sets": [{"name": "x"}]})
