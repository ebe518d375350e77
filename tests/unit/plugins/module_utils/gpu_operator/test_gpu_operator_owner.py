# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_operator_owner: one GPU Operator per cluster; the ClusterPolicy's Helm annotations say whose it is."""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.owner import gpu_operator_owner
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError


def policy(annotations=None):
    metadata = {"name": "cluster-policy"}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": metadata}


def owned_by(release, namespace):
    return policy({"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace})


def refusal(policies):
    return gpu_operator_owner({"policies": policies, "cluster_policy": "cluster-policy",
                               "release": "gpu-operator", "namespace": "gpu-operator"})


@pytest.mark.parametrize("policies", [[], [owned_by("gpu-operator", "gpu-operator")], [owned_by("", "")]],
                         ids=["no-operator-yet", "ours", "empty-annotations"])
def test_the_roles_own_release_or_none_may_go_on(policies):
    assert refusal(policies) == ""


@pytest.mark.parametrize("policies, owner", [
    ([owned_by("gpu-operator", "nvidia")], "Helm release gpu-operator in namespace nvidia"),
    ([owned_by("operator-2", "gpu-operator")], "Helm release operator-2 in namespace gpu-operator"),
    ([owned_by("", "nvidia")], "Helm release (none) in namespace nvidia"),
    ([policy()], "Helm release (not Helm) in namespace (not Helm)"),
    ([policy({"team": "ml"})], "Helm release (not Helm) in namespace (not Helm)"),
], ids=["other-namespace", "other-release", "empty-release-other-namespace", "no-annotations", "no-helm-annotations"])
def test_another_owner_is_refused_naming_it(policies, owner):
    message = refusal(policies)
    assert "ClusterPolicy cluster-policy belongs to " + owner in message
    assert "there can be only one per cluster" in message
    assert "gpu_operator_release_name / gpu_operator_namespace" in message


def test_bad_input_names_the_field():
    with pytest.raises(ValidationError, match=r"gpu_operator_owner\.release"):
        gpu_operator_owner({"policies": [], "cluster_policy": "c", "namespace": "n"})
