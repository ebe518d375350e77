# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k8s_reads answers each read through kubernetes.core's K8sService.find, keyed, in order."""

import inspect
import json
import threading
import time

import pytest
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import (
    ALWAYS_HIDDEN,
    CONCURRENT_READS,
    LAST_APPLIED,
    READ_OPTIONS,
    duplicate_keys,
    read_all,
    reads_secrets,
    shown,
    unreachable_message,
    without_last_applied,
)
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads_client import LookupsInTurn, answer_reads
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

from test_pending_changes import RELEASE, storage_secret


def filled(reads):
    """The reads as the module's argument spec hands them over, defaults filled in."""
    result = ArgumentSpecValidator({"reads": dict(type="list", elements="dict", options=READ_OPTIONS)}).validate(
        {"reads": reads})
    assert not result.error_messages, result.error_messages
    return result.validated_parameters["reads"]


class RecordedFind:
    """Stands in for K8sService.find: records each call, answers from a table by kind."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def __call__(self, kind, api_version, **options):
        self.calls.append((kind, api_version, options))
        return self.answers[kind]


def test_each_read_is_answered_under_its_key_in_order():
    find = RecordedFind({"Namespace": {"api_found": True, "resources": [{"metadata": {"name": "a"}}]},
                         "ClusterPolicy": {"api_found": False, "resources": []}})
    reads = filled([{"key": "namespaces", "kind": "Namespace", "api_version": "v1"},
                    {"key": "policy", "kind": "ClusterPolicy", "api_version": "nvidia.com/v1"}])
    answers = read_all(find, reads)
    assert answers["groups"] == {}
    assert list(answers["reads"]) == ["namespaces", "policy"]
    assert answers["reads"]["namespaces"]["resources"][0]["metadata"]["name"] == "a"
    assert answers["reads"]["policy"]["api_found"] is False
    # The reads run at once: each is asked for, in whatever order the threads start.
    assert sorted(call[:2] for call in find.calls) == [("ClusterPolicy", "nvidia.com/v1"), ("Namespace", "v1")]


def test_reads_are_in_flight_together():
    """Each read waits until three are in flight: one after another, the first would wait alone and fail."""
    assert CONCURRENT_READS >= 3
    together = threading.Barrier(3, timeout=5)

    def find(kind, api_version, **options):
        together.wait()
        return {"api_found": True, "resources": [{"kind": kind}]}

    answers = read_all(find, filled([{"key": key, "kind": kind} for key, kind in
                                     [("c", "ConfigMap"), ("a", "Secret"), ("b", "Node")]]))
    assert list(answers["reads"]) == ["c", "a", "b"]
    assert answers["reads"]["a"]["resources"] == [{"kind": "Secret"}]


def test_the_first_failing_read_in_order_is_the_error_even_when_a_later_one_fails_sooner():
    def find(kind, api_version, **options):
        if kind == "Secret":
            time.sleep(0.2)
            raise RuntimeError("forbidden: secrets")
        if kind == "Node":
            raise RuntimeError("forbidden: nodes")
        return {"api_found": True, "resources": []}

    with pytest.raises(RuntimeError, match="forbidden: secrets"):
        read_all(find, filled([{"key": "maps", "kind": "ConfigMap"}, {"key": "secrets", "kind": "Secret"},
                               {"key": "nodes", "kind": "Node"}]))


def test_options_reach_find_as_k8s_info_passes_them():
    find = RecordedFind({"Deployment": {"api_found": True, "resources": []}})
    condition = {"type": "Available", "status": "True"}
    read_all(find, filled([{"key": "managers", "kind": "Deployment", "api_version": "apps/v1", "namespace": "ci",
                            "label_selectors": ["release in (a,b)"], "field_selectors": ["metadata.name=a"],
                            "wait": True, "wait_condition": condition, "wait_timeout": 300, "wait_sleep": 2,
                            "hidden_fields": ["spec"]}]))
    (_kind, _version, options), = find.calls
    assert options == {"name": None, "namespace": "ci", "label_selectors": ["release in (a,b)"],
                       "field_selectors": ["metadata.name=a"], "wait": True, "wait_sleep": 2, "wait_timeout": 300,
                       "condition": condition, "hidden_fields": ["metadata.managedFields", "spec"]}


def test_a_bare_read_gets_k8s_infos_defaults():
    find = RecordedFind({"Node": {"api_found": True, "resources": []}})
    read_all(find, filled([{"key": "nodes", "kind": "Node", "api_version": "v1"}]))
    (_kind, _version, options), = find.calls
    assert options["label_selectors"] == [] and options["field_selectors"] == []
    assert options["wait"] is False and options["wait_timeout"] == 120 and options["wait_sleep"] == 5
    assert options["condition"] is None and options["hidden_fields"] == ALWAYS_HIDDEN == ["metadata.managedFields"]


def test_every_option_passed_is_a_parameter_of_the_real_find():
    # kubernetes.core renaming a parameter would break every read: catch it here.
    find = RecordedFind({"Node": {}})
    read_all(find, filled([{"key": "nodes", "kind": "Node", "api_version": "v1"}]))
    parameters = inspect.signature(K8sService.find).parameters
    assert set(find.calls[0][2]) <= set(parameters), set(find.calls[0][2]) - set(parameters)


def test_grouped_reads_are_answered_under_their_group_and_may_share_keys():
    find = RecordedFind({"Namespace": {"api_found": True, "resources": [{"metadata": {"name": "a"}}]},
                         "Secret": {"api_found": True, "resources": []}})
    reads = filled([{"key": "namespaces", "kind": "Namespace", "group": "gitlab_runner"},
                    {"key": "namespaces", "kind": "Namespace", "group": "arc_runners"},
                    {"key": "secrets", "kind": "Secret", "group": "arc_runners"},
                    {"key": "secrets", "kind": "Secret"}])
    assert duplicate_keys(reads) == []
    answers = read_all(find, reads)
    assert list(answers["groups"]) == ["gitlab_runner", "arc_runners"]
    assert list(answers["groups"]["arc_runners"]) == ["namespaces", "secrets"]
    assert answers["groups"]["gitlab_runner"]["namespaces"]["resources"] == [{"metadata": {"name": "a"}}]
    assert list(answers["reads"]) == ["secrets"]
    assert len(find.calls) == 4


def test_duplicate_keys_are_named_within_their_group():
    reads = [{"key": "a", "group": "x"}, {"key": "a", "group": "y"}, {"key": "a", "group": "x"}]
    assert duplicate_keys(reads) == ["x/a"]


def test_duplicate_keys_are_named():
    reads = [{"key": "a"}, {"key": "b"}, {"key": "a"}, {"key": "b"}, {"key": "c"}]
    assert duplicate_keys(reads) == ["a", "b"]
    assert duplicate_keys([{"key": "a"}]) == []


def test_an_unreachable_api_server_is_named_with_the_kubeconfig_and_context():
    error = ConnectionRefusedError("[Errno 111] Connection refused")
    assert unreachable_message("/srv/site/kubeconfig", "gpu-east", error) == (
        "Cannot reach the Kubernetes API server with kubeconfig /srv/site/kubeconfig and context gpu-east: "
        "[Errno 111] Connection refused")
    defaults = unreachable_message(None, None, error)
    assert "kubeconfig (default: K8S_AUTH_KUBECONFIG, KUBECONFIG or ~/.kube/config)" in defaults
    assert "context (the kubeconfig's current)" in defaults


def test_helm_releases_answers_the_revisions_storage_secrets_hold_and_skips_others():
    find = RecordedFind({"Secret": {"api_found": True, "resources": [
        storage_secret(RELEASE, version=2), dict(storage_secret(RELEASE), type="Opaque")]}})
    answers = read_all(find, filled([{"key": "records", "kind": "Secret", "helm_releases": True},
                                     {"key": "secrets", "kind": "Secret"}]))
    assert answers["reads"]["records"] == {"api_found": True, "resources": [
        {"name": "l40s", "namespace": "ci", "version": 2, "status": "deployed", "chart": "gitlab-runner-0.86.0",
         "config": RELEASE["values"]}]}
    assert len(answers["reads"]["secrets"]["resources"]) == 2


def test_answer_reads_refuses_a_key_used_twice_before_reaching_the_cluster():
    result = answer_reads({"kubeconfig": "/nonexistent", "context": None,
                           "reads": filled([{"key": "a", "kind": "Node"}, {"key": "a", "kind": "Namespace"}])})
    assert result == {"failed": True, "msg": "k8s_reads: each read needs its own key; used more than once: a"}


def test_answer_reads_names_the_kubeconfig_of_an_unreachable_api_server(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: closed\n"
        "clusters: [{name: closed, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: nobody, user: {token: not-a-real-token}}]\n"
        "contexts: [{name: closed, context: {cluster: closed, user: nobody}}]\n")
    result = answer_reads({"kubeconfig": str(kubeconfig), "context": "closed",
                           "reads": filled([{"key": "nodes", "kind": "Node"}])})
    assert result["failed"] is True
    assert result["msg"].startswith("Cannot reach the Kubernetes API server with kubeconfig %s and context closed: "
                                    % kubeconfig), result["msg"]
    assert "not-a-real-token" not in result["msg"]


class OverlapDetectingClient:
    """A client whose API lookup fails as the real discovery cache does when another thread is inside it."""

    def __init__(self):
        self.inside, self.most_inside, self.lock = 0, 0, threading.Lock()

    def resource(self, kind, api_version):
        with self.lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            overlapped = self.inside > 1
        time.sleep(0.01)
        with self.lock:
            self.inside -= 1
        if overlapped:
            raise KeyError("resources")
        return (kind, api_version)


def _lookups_at_once(service):
    """Eight reads' threads, each looking up the API of its kind through ``service``."""
    reads = filled([{"key": "r%d" % index, "kind": "Secret"} for index in range(CONCURRENT_READS)])
    return read_all(lambda kind, api_version, **options: {"resource": service.find_resource(kind, api_version)}, reads)


def test_lookups_take_turns_while_reads_run_side_by_side():
    """Eight reads' threads looking up APIs at once: each lookup alone, none fails with the cache's KeyError."""
    client = OverlapDetectingClient()
    answers = _lookups_at_once(LookupsInTurn(client, module=None))
    assert client.most_inside == 1
    assert [answer["resource"] for answer in answers["reads"].values()] == [("Secret", "v1")] * CONCURRENT_READS


def test_the_overlap_detector_catches_lookups_that_do_not_take_turns():
    """The same reads through kubernetes.core's own K8sService: the detector sees the overlap, so the test above can fail."""
    client = OverlapDetectingClient()
    with pytest.raises(KeyError, match="resources"):
        _lookups_at_once(K8sService(client, module=None))
    assert client.most_inside > 1


def _applied_secret(token, **annotations):
    """A Secret as `kubectl apply` leaves it: its manifest, token included, copied into an annotation."""
    manifest = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "github-config", "namespace": "arc"},
                "stringData": {"github_token": token}}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "github-config", "namespace": "arc",
        "annotations": dict({LAST_APPLIED: json.dumps(manifest)}, **annotations)}}


def test_the_last_applied_annotation_is_left_out_of_every_answer_and_other_annotations_stay():
    token = "ghp_LAST-APPLIED-" + "x" * 12
    find = RecordedFind({"Secret": {"api_found": True, "resources": [
        _applied_secret(token, **{"team": "ci"}), _applied_secret(token)]}})
    answers = read_all(find, filled([{"key": "named", "kind": "Secret", "hidden_fields": ["data", "stringData"]}]))
    first, second = answers["reads"]["named"]["resources"]
    assert first["metadata"]["annotations"] == {"team": "ci"}
    assert "annotations" not in second["metadata"] and second["metadata"]["name"] == "github-config"
    assert token not in json.dumps(answers)


def test_an_answer_left_as_it_was_when_it_has_no_last_applied_annotation():
    plain = {"kind": "Secret", "metadata": {"name": "a", "annotations": {"team": "ci"}}}
    assert without_last_applied(plain) is plain
    assert without_last_applied({"kind": "Node"}) == {"kind": "Node"}
    assert without_last_applied({"metadata": {"annotations": None}}) == {"metadata": {"annotations": None}}
    # The answer read is not changed in place: kubernetes.core may hand the same object to others.
    applied = _applied_secret("t")
    without_last_applied(applied)
    assert LAST_APPLIED in applied["metadata"]["annotations"]


def test_a_result_answering_a_read_of_secrets_is_marked_no_log_and_a_failure_is_not():
    secrets = [{"key": "nodes", "kind": "Node"}, {"key": "secrets", "kind": "Secret"}]
    answered = {"changed": False, "reads": {"secrets": {"resources": []}}, "groups": {}}
    assert reads_secrets(secrets) and reads_secrets([{"key": "records", "kind": "Secret", "helm_releases": True}])
    assert shown(answered, secrets) == dict(answered, _ansible_no_log=True)
    assert "_ansible_no_log" not in answered
    failed = {"failed": True, "msg": "Failed to find exact match for v1.Secret"}
    assert shown(failed, secrets) == failed
    nodes = [{"key": "nodes", "kind": "Node"}, {"key": "maps", "kind": "ConfigMap"}]
    assert not reads_secrets(nodes) and shown(answered, nodes) == answered
    assert not reads_secrets(None) and not reads_secrets([])
