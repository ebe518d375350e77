# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pending_changes: a plan against one read of the cluster (objects, Helm release records, Deployments)."""
import base64
import gzip
import json

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_storage import stored_release
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.pending_changes import (
    in_place,
    pending_changes,
    release_record_selectors,
    release_records,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "l40s", "namespace": "ci", "labels": {"app": "gpuci"}},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "create"]}]}
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "l40s-token", "namespace": "ci"},
          "stringData": {"runner-token": "glrt-abc"}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ci"}}
RELEASE = {"name": "l40s", "namespace": "ci", "chart": "gitlab-runner", "chart_version": "0.86.0",
           "values": {"replicas": 1, "runners": {"config": "concurrent = 4\n"}}}


def live(obj, **extra):
    """The object as the API server returns it: the server's own fields added."""
    answer = json.loads(json.dumps(obj))
    answer["metadata"].update(uid="1", resourceVersion="7", creationTimestamp="2026-11-25T00:00:00Z")
    answer.update(extra)
    return answer


def live_secret(token):
    return live({"apiVersion": "v1", "kind": "Secret", "metadata": dict(SECRET["metadata"]), "type": "Opaque",
                 "data": {"runner-token": base64.b64encode(token.encode()).decode()}})


def storage_secret(release, version=1, status="deployed", values=None, chart_version=None, gzipped=True):
    """Helm's storage Secret of one revision, encoded as Helm does: JSON, gzip, base64; the API adds base64."""
    document = {"name": release["name"], "namespace": release["namespace"], "version": version,
                "info": {"status": status},
                "chart": {"metadata": {"name": release["chart"], "version": chart_version or release["chart_version"]}},
                "config": release["values"] if values is None else values}
    payload = json.dumps(document).encode()
    helm_encoded = base64.b64encode(gzip.compress(payload) if gzipped else payload)
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": "sh.helm.release.v1.%s.v%d" % (release["name"], version),
                         "namespace": release["namespace"], "labels": {"owner": "helm", "status": status}},
            "data": {"release": base64.b64encode(helm_encoded).decode()}}


def stored(release, **revision):
    """The revision as k8s_reads answers Helm's storage Secret with helm_releases."""
    return stored_release(storage_secret(release, **revision))


def deployment(name, available="True"):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "ci"},
            "status": {"conditions": [{"type": "Progressing", "status": "True"},
                                      {"type": "Available", "status": available}]}}


def test_everything_in_place_is_settled():
    result = pending_changes({"namespaces": ["ci"], "objects": [ROLE, SECRET],
                              "found": [live(NAMESPACE), live(ROLE), live_secret("glrt-abc")],
                              "releases": [RELEASE], "release_records": [stored(RELEASE)],
                              "awaited": [deployment("l40s")], "steps": []})
    assert result == {"objects": [], "releases": [], "unavailable": [], "steps": [], "settled": True, "apply": [],
                      "apply_releases": [], "readback": [],
                      "summary": "Nothing to change: the plan is in place (verified from the read)",
                      "changes": [], "notes": []}


READBACK = [{"key": "managers", "kind": "Deployment", "wait": True}]


def test_what_to_apply_and_read_back_only_when_something_is_pending():
    settled = pending_changes({"releases": [RELEASE], "release_records": [stored(RELEASE)], "readback": READBACK})
    assert settled["settled"] and settled["apply_releases"] == [] and settled["readback"] == []
    changed = pending_changes({"releases": [RELEASE], "readback": READBACK})
    assert changed["apply_releases"] == [RELEASE] and changed["readback"] == READBACK
    # Nothing is applied in check mode, so nothing is read back.
    assert pending_changes({"releases": [RELEASE], "readback": READBACK, "check_mode": True})["readback"] == []


def test_the_releases_to_apply_may_differ_from_those_compared():
    """ARC compares its removed scale sets' releases too, but applies only the present ones, in waves."""
    removed = dict(RELEASE, name="old", state="absent")
    waved = dict(RELEASE, wave=1)
    result = pending_changes({"releases": [RELEASE, removed], "apply_releases": [waved],
                              "release_records": [stored(RELEASE), stored(dict(RELEASE, name="old"))]})
    assert result["releases"] == ["ci/old (uninstall)"] and result["apply_releases"] == [waved]


CONTROLLER = {"name": "arc", "namespace": "arc-systems", "chart": "gha-runner-scale-set-controller",
              "chart_version": "0.14.2", "values": {}}
SCALE_SET = {"name": "l40s", "namespace": "arc-runners", "chart": "gha-runner-scale-set", "chart_version": "0.14.2",
             "values": {"runnerScaleSetName": "l40s"}}


@pytest.mark.parametrize("records, scale_set_wave", [
    ([], 1),                                                        # first install: no CRDs yet
    ([stored(CONTROLLER, status="failed")], 1),                     # an install that failed may lack them
    ([stored(CONTROLLER, status="pending-install")], 1),
    ([stored(CONTROLLER)], None),                                   # deployed: Helm installed its CRDs
    ([stored(CONTROLLER), stored(CONTROLLER, version=2, status="pending-upgrade")], 1),  # the latest revision counts
])
def test_releases_needing_crds_wait_for_their_chart_until_it_is_deployed(records, scale_set_wave):
    changed = dict(SCALE_SET, values={"runnerScaleSetName": "l40s-new"})
    result = pending_changes({"releases": [CONTROLLER, changed], "apply_releases": [CONTROLLER, changed],
                              "crds_from": CONTROLLER, "release_records": records})
    controller, scale_set = result["apply_releases"]
    assert controller == CONTROLLER
    assert scale_set.get("wave") == scale_set_wave and scale_set["values"] == changed["values"]


def test_without_crds_from_the_releases_keep_their_waves():
    result = pending_changes({"releases": [SCALE_SET], "apply_releases": [SCALE_SET], "crds_from": None})
    assert result["apply_releases"] == [SCALE_SET]


def test_an_empty_plan_is_settled():
    assert pending_changes({})["settled"] is True


def test_missing_and_changed_objects_are_named():
    changed_rules = dict(ROLE, rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}])
    result = pending_changes({"objects": [ROLE, SECRET], "found": [live(changed_rules)]})
    assert result["objects"] == ["Role ci/l40s", "Secret ci/l40s-token"]
    assert result["settled"] is False


def test_a_secret_with_another_token_is_pending_and_its_token_never_shown():
    result = pending_changes({"objects": [SECRET], "found": [live_secret("glrt-old")]})
    assert result["objects"] == ["Secret ci/l40s-token"]
    # The Secret goes to the (no_log) apply; every name and the summary are free of its token.
    assert result["apply"] == [SECRET]
    assert "glrt" not in json.dumps(dict(result, apply=None))


def test_server_fields_and_extra_labels_do_not_count():
    found = live(ROLE)
    found["metadata"]["labels"]["added-by-someone"] = "x"
    found["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    assert in_place(ROLE, found)


def test_empty_fields_the_server_omits_count_as_in_place():
    desired = dict(SECRET, metadata=dict(SECRET["metadata"], annotations={}))
    assert in_place(desired, live_secret("glrt-abc"))
    assert not in_place(dict(desired, metadata=dict(SECRET["metadata"], annotations={"a": "b"})),
                        live_secret("glrt-abc"))


def test_a_list_item_more_or_less_counts():
    found = live(ROLE)
    found["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})
    assert not in_place(ROLE, found)


def test_values_of_another_type_count():
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ci"}, "data": {"n": "1"}}
    assert not in_place(desired, live(dict(desired, data={"n": 1})))
    assert not in_place(desired, None)


def test_objects_of_another_group_do_not_match():
    other = live(dict(ROLE, apiVersion="example.com/v1"))
    assert pending_changes({"objects": [ROLE], "found": [other]})["objects"] == ["Role ci/l40s"]


@pytest.mark.parametrize("record, action", [
    (None, "install"),
    (stored(RELEASE, values={"replicas": 2, "runners": {"config": "concurrent = 4\n"}}), "upgrade"),
    (stored(RELEASE, chart_version="0.85.0"), "upgrade"),
    (stored(RELEASE, status="failed"), "upgrade"),
    (stored(RELEASE, status="pending-upgrade"), "upgrade"),
])
def test_releases_helm_would_change_are_named_with_the_action(record, action):
    result = pending_changes({"releases": [RELEASE], "release_records": [record] if record else []})
    assert result["releases"] == ["ci/l40s (%s)" % action]


def test_the_latest_revision_decides():
    old = stored(RELEASE, version=1, status="superseded", values={"replicas": 9})
    assert pending_changes({"releases": [RELEASE], "release_records": [stored(RELEASE, version=2), old]})[
        "settled"]
    newest_failed = stored(RELEASE, version=3, status="failed")
    assert pending_changes({"releases": [RELEASE],
                            "release_records": [old, stored(RELEASE, version=2), newest_failed]})[
        "releases"] == ["ci/l40s (upgrade)"]


def test_a_release_to_remove_is_pending_only_while_it_exists():
    absent = dict(RELEASE, state="absent")
    assert pending_changes({"releases": [absent]})["settled"]
    assert pending_changes({"releases": [absent], "release_records": [stored(RELEASE)]})[
        "releases"] == ["ci/l40s (uninstall)"]


def test_records_give_each_releases_status_chart_and_values():
    assert release_records([stored(RELEASE)]) == {("ci", "l40s"): (
        {"status": "deployed", "chart": "gitlab-runner-0.86.0"}, RELEASE["values"])}


def test_deployments_that_are_not_available_are_named():
    result = pending_changes({"awaited": [deployment("l40s"), deployment("cpu", available="False"),
                                          {"kind": "Deployment", "metadata": {"name": "new", "namespace": "ci"}}]})
    assert result["unavailable"] == ["Deployment ci/cpu", "Deployment ci/new"]
    assert not result["settled"]
    assert result["summary"] == "To change: Deployment ci/cpu (not Available), Deployment ci/new (not Available)"


def test_other_steps_keep_it_unsettled():
    assert pending_changes({"steps": ["remove pool old"]}) == {
        "objects": [], "releases": [], "unavailable": [], "steps": ["remove pool old"], "settled": False,
        "apply": [], "apply_releases": [], "readback": [], "summary": "To change: remove pool old",
        "changes": [], "notes": []}


def test_missing_namespaces_are_pending():
    result = pending_changes({"namespaces": ["ci", "jobs"], "found": [live(NAMESPACE)]})
    assert result["objects"] == ["Namespace jobs"]


def test_apply_holds_missing_namespaces_first_with_the_role_labels_then_the_objects_not_in_place():
    labels = {"app.kubernetes.io/part-of": "gpuci-runners"}
    changed_role = dict(ROLE, rules=[])
    result = pending_changes({"namespaces": ["ci", "jobs"], "namespace_labels": labels,
                              "objects": [SECRET, changed_role], "found": [live(NAMESPACE), live(ROLE)]})
    assert result["apply"] == [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "jobs", "labels": labels}},
        SECRET, changed_role]
    # An existing namespace is used as it is: never relabelled.
    assert all(obj["metadata"]["name"] != "ci" for obj in result["apply"])


def test_nothing_in_place_is_applied_again():
    result = pending_changes({"namespaces": ["ci"], "objects": [ROLE], "found": [live(NAMESPACE), live(ROLE)]})
    assert result["apply"] == [] and result["settled"]


def test_check_mode_leaves_out_objects_inside_a_namespace_not_made_yet():
    in_ci = dict(ROLE)
    elsewhere = dict(ROLE, metadata=dict(ROLE["metadata"], namespace="other"))
    result = pending_changes({"namespaces": ["ci"], "objects": [in_ci, elsewhere], "check_mode": True})
    assert [obj["kind"] + " " + obj["metadata"].get("namespace", "-") for obj in result["apply"]] == \
        ["Namespace -", "Role other"]
    # Both still count as pending: the report says what a real run would do.
    assert result["objects"] == ["Namespace ci", "Role ci/l40s", "Role other/l40s"]


def test_create_only_objects_are_made_when_missing_and_never_compared():
    runtime_class = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"},
                     "handler": "nvidia"}
    operators = live(dict(runtime_class, handler="nvidia-cdi"))
    assert pending_changes({"create_only": [runtime_class], "found": [operators]})["apply"] == []
    missing = pending_changes({"create_only": [runtime_class]})
    assert missing["apply"] == [runtime_class] and missing["objects"] == ["RuntimeClass nvidia"]


def test_bad_input_names_the_field():
    with pytest.raises(ValidationError, match=r"pending_changes\.objekts: unknown key"):
        pending_changes({"objekts": []})
    with pytest.raises(ValidationError, match=r"pending_changes\.found: must be a list"):
        pending_changes({"found": {}})


def test_release_record_selectors_pick_each_releases_latest_revisions_once():
    assert release_record_selectors(["arc", "l40s", "arc"]) == ["owner=helm", "status!=superseded", "name in (arc,l40s)"]
