# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The thin filter layer: names, error wrapping, and the documentation sidecars."""

import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml
from ansible.errors import AnsibleFilterError

REPO = pathlib.Path(__file__).resolve().parents[4]
FILTER_DIR = REPO / "plugins" / "filter"
FILTERS = ["ansible_core_requirement", "arc_runner_template", "arc_runners_absent",
           "arc_runners_finalizer_patches", "arc_runners_leftovers",
           "arc_runners_preflight", "canary_ci", "canary_jobs", "canary_lanes",
           "canary_progress", "canary_summary", "ci_yaml",
           "container_toolkit_cdi_failure", "container_toolkit_plan", "container_toolkit_preflight",
           "container_toolkit_restart", "controller_path", "created_runner_tokens", "fleet_objects", "fleet_plan", "fleet_readback", "fleet_steps",
           "gitlab_runner_config", "gitlab_runner_preflight", "gitlab_runner_removed_objects",
           "gitlab_runner_restarts", "gitlab_runner_token_secrets",
           "gpu_nodes", "gpu_operator_host_toolkits", "gpu_operator_node_labels",
           "gpu_pod_patch", "monitoring_alert_rules", "monitoring_rule_placement", "ownership_labels", "proof_report", "time_slicing_config"]

# The positional argument of each filter: the GPU class catalogue, unless named here (None: it takes none).
POSITIONAL = {"ansible_core_requirement": None, "gpu_operator_node_labels": None,
              "ci_yaml": "header",
              "canary_ci": None, "canary_progress": None, "canary_summary": None,
              "proof_report": None, "fleet_plan": None, "controller_path": None, "created_runner_tokens": None, "ownership_labels": None,
              "gitlab_runner_token_secrets": None,
              "gitlab_runner_restarts": None,
              "container_toolkit_cdi_failure": None, "container_toolkit_plan": None,
              "container_toolkit_preflight": None, "container_toolkit_restart": None,
              "fleet_objects": None, "fleet_readback": None,
              "arc_runners_finalizer_patches": None, "gpu_nodes": None,
              "arc_runners_absent": None, "arc_runners_leftovers": None, "fleet_steps": None,
              "gitlab_runner_removed_objects": None, "gpu_operator_host_toolkits": "names",
              "monitoring_alert_rules": "kind", "monitoring_rule_placement": "crd_found, namespace_found"}


def load(name):
    module = importlib.import_module("ansible_collections.gpuci.runners.plugins.filter.%s" % name)
    filters = module.FilterModule().filters()
    assert list(filters) == [name]
    return filters[name]


def test_every_filter_file_is_listed():
    assert sorted(path.stem for path in FILTER_DIR.glob("*.py")) == FILTERS


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("gpu_pod_patch", {"gpu_class": "l40s", "gpus": 0}, "gpuci.runners.gpu_pod_patch: pool.gpus: must be an integer >= 1 (got 0)"),
        ("gitlab_runner_config", {"name": "x", "gpu_class": "v100"}, "gpuci.runners.gitlab_runner_config: pool.gpu_class: unknown GPU class"),
        ("arc_runner_template", {"name": "x", "container_mode": "podman"}, "gpuci.runners.arc_runner_template: scale_set.container_mode:"),
        ("time_slicing_config", {"l40s": True}, "gpuci.runners.time_slicing_config: replicas.l40s: must be an integer"),
        ("monitoring_alert_rules", {"gpuci_alert_queue_seconds": "ten"},
         "gpuci.runners.monitoring_alert_rules: gpuci_alert_queue_seconds: expected a positive number, got 'ten'"),
    ],
)
def test_errors_name_the_filter_field_and_value(name, value, expected):
    with pytest.raises(AnsibleFilterError) as error:
        load(name)(value)
    assert expected in str(error.value)


def test_gpu_classes_is_positional_and_keyword():
    gpu_pod_patch = load("gpu_pod_patch")
    classes = {"l4": {"product": "NVIDIA-L4", "gpu_access": ["cuda"]}}
    assert gpu_pod_patch({"gpu_class": "l4"}, classes) == gpu_pod_patch({"gpu_class": "l4"}, gpu_classes=classes)


@pytest.mark.parametrize("name, value", [
    ("gpu_pod_patch", {"gpu_class": "l40s"}),
    ("gitlab_runner_config", {"name": "x", "gpu_class": "l40s"}),
    ("arc_runner_template", {"name": "x", "gpu_class": "l40s"}),
])
def test_runtime_class_is_a_keyword_option(name, value):
    assert "nvidia-cdi" in json.dumps(load(name)(value, runtime_class="nvidia-cdi"))
    with pytest.raises(AnsibleFilterError, match=r"gpuci.runners.%s: runtime_class: must be a string" % name):
        load(name)(value, runtime_class=5)


def test_gpu_access_under_its_old_names_is_refused_naming_the_new_key():
    """lane (pools, scale sets) and lanes (classes) are no longer read: the error says what to write instead."""
    settings = {"gitlab_runner_pools": [{"name": "l40s", "gpu_class": "l40s", "lane": "cuda", "token": "glrt-x"}],
                "gitlab_runner_namespace": "gitlab-runner", "gitlab_runner_fleet": "default",
                "gitlab_runner_gitlab_url": "https://gitlab.example.com"}
    assert load("gitlab_runner_preflight")(settings) == [
        "gitlab_runner_pools[name=l40s].lane: was renamed gpu_access; set gitlab_runner_pools[name=l40s].gpu_access "
        "instead (same values)"]
    with pytest.raises(AnsibleFilterError, match=r"^gpuci\.runners\.gpu_pod_patch: gpu_classes\.l40s\.lanes: was renamed "
                                                 r"gpu_access; set gpu_classes\.l40s\.gpu_access instead"):
        load("gpu_pod_patch")({"gpu_class": "l40s"}, {"l40s": {"lanes": ["cuda"]}})


def test_bad_gpu_classes_argument_is_reported():
    with pytest.raises(AnsibleFilterError, match=r"gpuci.runners.gpu_pod_patch: gpu_classes\.l40s\.vram: unknown key"):
        load("gpu_pod_patch")({"gpu_class": "l40s"}, {"l40s": {"vram": 48}})


def test_missing_tomli_w_is_reported(monkeypatch):
    monkeypatch.setitem(sys.modules, "tomli_w", None)  # makes `import tomli_w` fail
    with pytest.raises(AnsibleFilterError, match="gitlab_runner_config: .*tomli-w"):
        load("gitlab_runner_config")({"name": "x"})


@pytest.mark.parametrize("name", FILTERS)
def test_sidecar_documents_the_filter(name):
    sidecar = yaml.safe_load((FILTER_DIR / ("%s.yml" % name)).read_text())
    assert sidecar["DOCUMENTATION"]["name"] == name
    positional = POSITIONAL.get(name, "gpu_classes")
    if positional is None:
        assert set(sidecar["DOCUMENTATION"]["options"]) == {"_input"}
        assert "positional" not in sidecar["DOCUMENTATION"]
    else:
        # ansible-doc's spelling of several positional arguments: their names, comma-separated.
        assert set(sidecar["DOCUMENTATION"]["options"]) >= {"_input", *positional.split(", ")}
        assert sidecar["DOCUMENTATION"]["positional"] == positional
    examples = yaml.safe_load(sidecar["EXAMPLES"])
    assert examples and all("gpuci.runners.%s" % name in json.dumps(task) for task in examples)
    assert "_value" in sidecar["RETURN"]


def ansible_doc():
    local = pathlib.Path(sys.executable).parent / "ansible-doc"
    return str(local) if local.exists() else shutil.which("ansible-doc")


@pytest.mark.skipif(ansible_doc() is None, reason="ansible-doc is not installed")
def test_ansible_doc_renders_every_filter():
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
    names = ["gpuci.runners.%s" % name for name in FILTERS]
    result = subprocess.run(
        [ansible_doc(), "-t", "filter", "--json"] + names,
        cwd=str(REPO), env=env, capture_output=True, text=True, check=True,
    )
    docs = json.loads(result.stdout)
    assert sorted(docs) == names
    for name in names:
        assert docs[name]["doc"]["description"]
        assert "gpuci.runners." in docs[name]["examples"]


def test_preflight_filter_returns_problems_and_wraps_bad_input():
    preflight = load("gitlab_runner_preflight")
    assert preflight({"gitlab_runner_pools": [], "gitlab_runner_namespace": "gitlab-runner",
                      "gitlab_runner_fleet": "default"}) == []
    with pytest.raises(AnsibleFilterError, match=r"gpuci.runners.gitlab_runner_preflight: gitlab_runner_pools: must be a list"):
        preflight({"gitlab_runner_pools": "l40s"})


def test_arc_preflight_filter_returns_problems_and_wraps_bad_input():
    preflight = load("arc_runners_preflight")
    assert preflight({"arc_runners_scale_sets": []}) == []
    with pytest.raises(AnsibleFilterError, match=r"gpuci.runners.arc_runners_preflight: arc_runners_scale_sets\[0\]: must be a mapping"):
        preflight({"arc_runners_scale_sets": ["x"]})
