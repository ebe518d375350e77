# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role variables as Ansible renders them from the roles' own defaults and vars
(no cluster): the gitlab_runner role's Helm values from its plan, and what the real
gitlab-runner chart makes of them under `helm template`; the runtime class
each role gives cuda job pods.

The chart's register script passes `--name` to `gitlab-runner register` only
when the value runners.name is set. Without it the runner starts from the
manager pod's hostname, and register's merge of config.toml keeps a value
already set, so the name in config.toml never reaches GitLab.

The runner roles and the canary take the GPU Operator's RuntimeClass
(gpu_operator_runtime_class) from the inventory; when nobody sets it, the
builders' default (DEFAULT_RUNTIME_CLASS) applies, which is also the
gpu_operator role's own default.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "testbed"))
from lib.layout import charts_dir  # noqa: E402

ROLES = REPO / "roles"
ROLE = ROLES / "gitlab_runner"
POOLS = [
    {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "token": "glrt-values-test-l40s"},
    {"name": "cpu-small", "cpu_request": "1", "token": "glrt-values-test-cpu"},
]

# What the inventory says about the GPU Operator's RuntimeClass, per scenario.
SCENARIOS = {
    "unset": {},
    "custom": {"gpu_operator_runtime_class": "nvidia-cdi"},
    "none": {"gpu_operator_runtime_class": ""},
}

# One play per scenario: the roles' defaults and vars loaded as the roles
# load them, the gitlab_runner values rendered for every present pool, and
# each role's runtime class variable.
PLAY = textwrap.dedent("""\
    - name: Render the roles' variables ({scenario})
      hosts: localhost
      gather_facts: false
      vars: {play_vars}
      vars_files:
        - "{{{{ roles_dir }}}}/gitlab_runner/defaults/main.yml"
        - "{{{{ roles_dir }}}}/gitlab_runner/vars/main.yml"
        - "{{{{ roles_dir }}}}/arc_runners/defaults/main.yml"
        - "{{{{ roles_dir }}}}/gpu_canary/defaults/main.yml"
      tasks:
        - name: Plan the pools as the role does
          ansible.builtin.include_role:
            name: gpuci.runners.gitlab_runner
            tasks_from: preflight.yml
        - name: Take each present pool's values from the plan
          ansible.builtin.set_fact:
            rendered: "{{{{ rendered | default({{}}) | combine({{item['values'].runners.name: item['values']}}) }}}}"
          loop: "{{{{ __gitlab_runner_plan.releases }}}}"
        - name: Write them
          ansible.builtin.copy:
            content: >-
              {{{{ {{'values': rendered,
                   'runtime_classes': {{'gitlab_runner': gitlab_runner_runtime_class,
                                       'arc_runners': arc_runners_runtime_class,
                                       'gpu_canary_gitlab': gpu_canary_gitlab_runtime_class,
                                       'gpu_canary_arc': gpu_canary_arc_runtime_class}}}} | to_json }}}}
            dest: "{{{{ out_dir }}}}/{scenario}.json"
            mode: "0644"
    """)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict:
    """{scenario: {"values": {pool name: chart values}, "runtime_classes": {role: value}}}."""
    work = tmp_path_factory.mktemp("role-values")
    (work / "play.yml").write_text("".join(PLAY.format(scenario=name, play_vars=json.dumps(play_vars))
                                           for name, play_vars in SCENARIOS.items()))
    extra = {"roles_dir": str(ROLES), "out_dir": str(work), "gitlab_runner_pools": POOLS,
             "ansible_python_interpreter": sys.executable}
    (work / "vars.json").write_text(json.dumps(extra))
    # An explicit inventory, so that ansible.cfg's (the testbed's, with its pools) stays out.
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
           str(work / "play.yml"), "-e", f"@{work / 'vars.json'}"]
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return {name: json.loads((work / f"{name}.json").read_text()) for name in SCENARIOS}


@pytest.fixture(scope="module")
def role_values(rendered) -> dict:
    """{pool name: the chart values the gitlab_runner role would install}, no runtime class set anywhere."""
    return rendered["unset"]["values"]


def test_values_name_the_runner_after_its_pool(role_values):
    assert sorted(role_values) == sorted(pool["name"] for pool in POOLS)
    for pool in POOLS:
        runners = role_values[pool["name"]]["runners"]
        assert runners["name"] == pool["name"]
        # One name: what the chart registers and what config.toml says.
        assert tomllib.loads(runners["config"])["runners"][0]["name"] == runners["name"]


def _helm() -> str | None:
    """The testbed's helm, else one on PATH."""
    paths = subprocess.run(["bash", str(REPO / "tools" / "testbed" / "build.sh"), "--print-paths"],
                           check=True, capture_output=True, text=True).stdout.strip()
    for folder in paths.split(":"):
        if (Path(folder) / "helm").is_file():
            return str(Path(folder) / "helm")
    return shutil.which("helm")


def _rendered(helm: str, values: dict, release: str, work: Path, kind: str, api_versions: tuple[str, ...] = ()) -> dict:
    """The chart's object of `kind` named `release`, rendered by `helm template` from `values` (None when the
    chart renders none); `api_versions` are the APIs Helm is told the cluster serves."""
    chart_version = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["gitlab_runner_chart_version"]
    chart = charts_dir() / f"gitlab-runner-{chart_version}.tgz"
    assert chart.is_file(), f"{chart} is missing (the testbed's charts; set GPUCI_CHARTS_DIR)"
    values_file = work / f"{release}.yaml"
    values_file.write_text(yaml.safe_dump(values))
    apis = [argument for api in api_versions for argument in ("--api-versions", api)]
    proc = subprocess.run([helm, "template", release, str(chart), "--namespace", "gitlab-runner", "-f", str(values_file)]
                          + apis, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    documents = [doc for doc in yaml.safe_load_all(proc.stdout)
                 if doc and doc["kind"] == kind and doc["metadata"]["name"] == release]
    assert len(documents) <= 1, documents
    return documents[0] if documents else None


def _register_script(helm: str, values: dict, release: str, work: Path) -> str:
    """The chart's register-the-runner script, rendered by `helm template` from `values`."""
    return _rendered(helm, values, release, work, "ConfigMap")["data"]["register-the-runner"]


def test_chart_registers_the_runner_under_the_pool_name(role_values, tmp_path):
    helm = _helm()
    if helm is None:
        pytest.skip("helm is missing: build the testbed's (bash tools/testbed/build.sh helm) or put one on PATH")
    for pool in POOLS:
        values = role_values[pool["name"]]
        script = _register_script(helm, values, "gitlab-runner-" + pool["name"], tmp_path)
        assert f'--name="{pool["name"]}"' in script
    # The upstream fact this relies on: without runners.name the chart passes no --name at all.
    unnamed = dict(values, runners={k: v for k, v in values["runners"].items() if k != "name"})
    assert "--name" not in _register_script(helm, unnamed, "gitlab-runner-unnamed", tmp_path)


def test_manager_readiness_is_probed_within_seconds(role_values, tmp_path):
    """The chart's own probe starts after 60 s; ours reaches the Deployment helm waits on."""
    helm = _helm()
    if helm is None:
        pytest.skip("helm is missing: build the testbed's (bash tools/testbed/build.sh helm) or put one on PATH")
    values = role_values["cpu-small"]
    deployment = _rendered(helm, values, "gitlab-runner-cpu-small", tmp_path, "Deployment")
    (manager,) = deployment["spec"]["template"]["spec"]["containers"]
    probe = manager["readinessProbe"]
    assert probe["initialDelaySeconds"] <= 5 and probe["periodSeconds"] <= 10, probe


def _runtime_class_name(values: dict) -> str | None:
    return tomllib.loads(values["runners"]["config"])["runners"][0]["kubernetes"].get("runtime_class_name")


@pytest.mark.parametrize("scenario, expected", [("unset", "nvidia"), ("custom", "nvidia-cdi"), ("none", None)])
def test_gpu_operator_runtime_class_reaches_config_toml(rendered, scenario, expected):
    values = rendered[scenario]["values"]
    assert _runtime_class_name(values["l40s"]) == expected
    assert _runtime_class_name(values["cpu-small"]) is None  # CPU pools need no GPU runtime


@pytest.mark.parametrize("scenario, expected", [("unset", None), ("custom", "nvidia-cdi"), ("none", "")])
def test_every_role_reads_the_gpu_operator_runtime_class(rendered, scenario, expected):
    """None hands the choice to the builders' default; "" means no runtime class."""
    assert rendered[scenario]["runtime_classes"] == dict.fromkeys(
        ("gitlab_runner", "arc_runners", "gpu_canary_gitlab", "gpu_canary_arc"), expected)


def test_unset_runtime_class_is_the_gpu_operator_default():
    """With nothing in the inventory the runners' default and the operator's RuntimeClass must agree."""
    if str(REPO / ".collections") not in sys.path:
        sys.path.insert(0, str(REPO / ".collections"))
    from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import DEFAULT_RUNTIME_CLASS

    operator = yaml.safe_load((ROLES / "gpu_operator" / "defaults" / "main.yml").read_text())
    assert operator["gpu_operator_runtime_class"] == DEFAULT_RUNTIME_CLASS


def test_the_chart_serves_the_metrics_and_makes_the_relabelled_pod_monitor_where_helm_sees_the_api(role_values, tmp_path):
    """What the decision's values (podMonitor on: the cluster has the CRD) become in the real chart."""
    helm = _helm()
    if helm is None:
        pytest.skip("helm is missing: build the testbed's (bash tools/testbed/build.sh helm) or put one on PATH")
    if str(REPO / ".collections") not in sys.path:
        sys.path.insert(0, str(REPO / ".collections"))
    from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import SCRAPE_LABELS

    release = "gitlab-runner-l40s"
    values = json.loads(json.dumps(role_values["l40s"]))
    values["metrics"]["podMonitor"]["enabled"] = True
    values["metrics"]["podMonitor"]["labels"]["release"] = "kube-prometheus-stack"
    monitor = _rendered(helm, values, release, tmp_path, "PodMonitor", api_versions=("monitoring.coreos.com/v1",))
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack", "the selection label wins"
    assert monitor["metadata"]["labels"]["gpuci.runners/pool"] == "l40s"
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics"
    assert {entry["targetLabel"] for entry in endpoint["relabelings"]} == {"job", SCRAPE_LABELS["pool"],
                                                                           SCRAPE_LABELS["gpu_class"]}
    # Helm renders no PodMonitor without the API, and says nothing: the role decides from the CRD instead.
    assert _rendered(helm, values, release, tmp_path, "PodMonitor") is None
    deployment = _rendered(helm, values, release, tmp_path, "Deployment")
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"]["gpuci.runners/gpu-class"] == "l40s"
    assert template["metadata"]["labels"]["gpuci.runners/pool"] == "l40s"
    (manager,) = template["spec"]["containers"]
    assert {"name": "metrics", "containerPort": 9252} in [
        {"name": port.get("name"), "containerPort": port["containerPort"]} for port in manager.get("ports") or []]
    config = _rendered(helm, values, release, tmp_path, "ConfigMap")["data"]["config.toml"]
    assert 'listen_address = ":9252"' in config
