# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fleet/diffs.py: the short diffs of the change list, each as its decider compares, every secret hidden."""
import base64
import json

from ansible_collections.gpuci.runners.plugins.module_utils.fleet import diffs
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.diffs import (
    labels_diff,
    masked,
    masked_url,
    object_diff,
    values_diff,
)

TOKEN = "glrt-DIFF-SECRET"
PASSWORD = "hunter2-DIFF-SECRET"


def test_values_diff_names_each_changed_added_and_removed_leaf():
    before = {"concurrent": 2, "rbac": {"create": False}, "replicas": 1, "old": "x"}
    after = {"concurrent": 3, "rbac": {"create": False}, "replicas": 1, "new": {"a": 1}}
    assert values_diff(before, after) == ['concurrent: 2 -> 3', 'new: (unset) -> {"a": 1}', 'old: "x" -> (unset)']


def test_values_diff_is_helms_equality_nothing_for_equal_documents():
    values = {"runners": {"config": "a = 1\n"}, "list": [1, 2]}
    assert values_diff(values, json.loads(json.dumps(values))) == []


def test_a_multi_line_text_shows_only_its_changed_lines():
    before = "concurrent = 4\n[[runners]]\n  name = \"cpu\"\n  limit = 2\n"
    after = "concurrent = 4\n[[runners]]\n  name = \"cpu\"\n  limit = 3\n"
    assert values_diff({"runners": {"config": before}}, {"runners": {"config": after}}) == [
        "runners.config:", "  -   limit = 2", "  +   limit = 3"]


def test_values_under_secret_keys_are_hidden_at_any_depth_and_in_texts():
    before = {"auth": {"password": PASSWORD}, "gitlab": {"runnerToken": TOKEN}, "config": "token = \"%s\"\nx = 1\n" % TOKEN}
    after = {"auth": {"password": PASSWORD + "2"}, "gitlab": {"runnerToken": TOKEN + "2"},
             "config": "token = \"%s2\"\nx = 1\n" % TOKEN, "extra": {"api_key": PASSWORD}}
    lines = values_diff(before, after)
    assert "auth.password: (hidden) -> (hidden)" in lines
    assert "gitlab.runnerToken: (hidden) -> (hidden)" in lines
    assert '  - token = (hidden)' in lines and '  + token = (hidden)' in lines
    assert 'extra: (unset) -> {"api_key": "(hidden)"}' in lines
    assert "DIFF-SECRET" not in json.dumps(lines)


def test_credentials_in_urls_are_masked_wherever_they_appear():
    assert masked_url("https://deploy:s3cret@charts.example.com/stable") == "https://***@charts.example.com/stable"
    assert masked_url("oci://robot:pw@registry.example.com/charts and http://plain.example.com/") == \
        "oci://***@registry.example.com/charts and http://plain.example.com/"
    lines = values_diff({"repo": "https://a:old-pw@h/"}, {"repo": "https://a:new-pw@h/"})
    assert lines == ['repo: "https://***@h/" -> "https://***@h/"']
    assert masked({"image": {"registry": "https://u:p@r.example.com"}}) == {"image": {"registry": "https://***@r.example.com"}}


def test_a_long_value_is_cut_and_a_long_diff_ends_with_how_many_lines_are_left_out():
    (line,) = values_diff({"x": "a" * 200}, {"x": "b" * 200})
    assert len(line) < 2 * diffs.MAX_CHARS + 10 and line.endswith('...')
    many = values_diff({"k%02d" % n: n for n in range(30)}, {"k%02d" % n: n + 1 for n in range(30)})
    assert len(many) == diffs.MAX_LINES
    assert many[-1] == "... and 19 more lines (gpuci_plan_dir writes the whole plan)"


def test_object_diff_compares_only_the_fields_the_plan_sets_as_a_merge_would():
    desired = {"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "a", "namespace": "ci", "labels": {"pool": "a", "fleet": "f"}, "annotations": {}}}
    live = {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "a", "namespace": "ci", "uid": "1", "resourceVersion": "9",
                         "labels": {"pool": "a", "fleet": "old", "other": "kept"}}}
    # An empty map asked for is a missing one (the API server omits it); the server's own fields do not count.
    assert object_diff(desired, live) == ['metadata.labels.fleet: "old" -> "f"']
    assert object_diff(desired, dict(live, metadata=dict(live["metadata"], labels={"pool": "a", "fleet": "f"}))) == []


def test_a_list_is_compared_whole_as_a_merge_patch_replaces_it():
    desired = {"kind": "Role", "metadata": {"name": "a"}, "rules": [{"verbs": ["get"]}]}
    live = {"kind": "Role", "metadata": {"name": "a"}, "rules": [{"verbs": ["get"]}, {"verbs": ["list"]}]}
    assert object_diff(desired, live) == ['rules: [{"verbs": ["get"]}, {"verbs": ["list"]}] -> [{"verbs": ["get"]}]']


def test_a_secret_shows_which_keys_change_never_their_data():
    encoded = base64.b64encode(TOKEN.encode()).decode()
    desired = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t", "namespace": "ci"},
               "stringData": {"token": TOKEN + "-new", "extra": "x"}}
    live = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t", "namespace": "ci"}, "data": {"token": encoded}}
    lines = object_diff(desired, live)
    assert lines == ["data.extra: (unset) -> (hidden)", "data.token: (hidden) -> (hidden) (changed)"]
    assert object_diff(dict(desired, stringData={"token": TOKEN}), live) == []
    assert TOKEN not in json.dumps(lines) and encoded not in json.dumps(lines)


def test_labels_diff_shows_a_patch_against_the_nodes_labels_none_removing():
    current = {"nvidia.com/device-plugin.config": "l40s", "gpuci.runners/time-slicing": "gpu-operator", "x": "y"}
    assert labels_diff(current, {"nvidia.com/device-plugin.config": None, "gpuci.runners/time-slicing": None}) == [
        'metadata.labels.gpuci.runners/time-slicing: "gpu-operator" -> (unset)',
        'metadata.labels.nvidia.com/device-plugin.config: "l40s" -> (unset)']
    assert labels_diff({}, {"nvidia.com/device-plugin.config": "l40s"}) == [
        'metadata.labels.nvidia.com/device-plugin.config: (unset) -> "l40s"']
