# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fleet_objects: the cluster roles' objects joined for one apply, each object once."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.fleet_objects import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.objects import fleet_objects


def namespace(name, role):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"role": role}}}


def configmap(name, namespace_name):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace_name}}


def test_the_roles_objects_keep_their_order():
    gitlab = [namespace("ci", "gitlab"), configmap("a", "ci")]
    arc = [namespace("arc", "arc"), configmap("b", "arc")]
    assert fleet_objects([gitlab, [], arc]) == gitlab + arc


def test_a_namespace_two_roles_create_is_made_once_as_the_first_role_asked():
    joined = fleet_objects([[namespace("ci", "gitlab")], [namespace("ci", "arc"), configmap("hook", "ci")]])
    assert joined == [namespace("ci", "gitlab"), configmap("hook", "ci")]


def test_objects_of_the_same_name_in_other_namespaces_or_kinds_all_stay():
    objects = [configmap("x", "a"), configmap("x", "b"), dict(configmap("x", "a"), kind="Secret")]
    assert fleet_objects([objects]) == objects


def test_the_filter_names_what_is_wrong():
    run = FilterModule().filters()["fleet_objects"]
    with pytest.raises(AnsibleFilterError, match=r"fleet_objects: must be a list of object lists"):
        run({"ci": []})
    with pytest.raises(AnsibleFilterError, match=r"fleet_objects\[1\]\[0\]: must be a mapping"):
        run([[], ["not an object"]])


def test_the_same_object_in_another_api_version_is_made_once():
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "x", "namespace": "a"}}
    older = dict(ingress, apiVersion="networking.k8s.io/v1beta1")
    assert fleet_objects([[ingress], [older]]) == [ingress]
