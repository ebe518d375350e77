# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The catalogue of bad inventories (tests/integration/bad_inputs/*.yml).

Each entry is a small YAML file:

    playbook: gitlab_runner.yml        # the playbook under playbooks/ to run
    vars: {...}                        # the inventory's variables (beat group_vars/all)
    gpu_hosts: {host: {vars}}          # optional: GPU hosts of this cluster
    expect: [fragment, ...]            # each must appear in this entry's failure (the field's name)
    forbid: [secret, ...]              # optional: must not appear anywhere in the output

Every entry must fail in validation: its host fails, the failure names the
field, the recap shows changed=0, and the cluster is as it was.

Speed: starting ansible-playbook costs seconds, so the entries of one
playbook run as the hosts of one inventory (one "cluster" per entry, its
vars as host vars), in one ansible-playbook run; Ansible isolates hosts, so
one entry's failure cannot hide another's. Container toolkit entries are
hosts of gpu_hosts; an entry's own GPU hosts form its own group, named to
the operator by gpu_operator_host_group.

"The cluster as it was": each entry writes, if at all, only under its own
names (`rbNN-...` namespaces, releases, fleet), so its leaks are read in
those namespaces and in cluster-scoped objects named `rbNN-...`
(reliability_support.Scope). One more test compares every cluster-scoped
object before and after the catalogue; it assumes no other suite changes
cluster-scoped objects meanwhile (true in CI, where suites run one after
another).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from helpers import LOCAL_INVENTORY, load_yaml
from reliability_support import Scope, cluster_scoped_snapshot, scoped_snapshot, snapshot_diff

CATALOGUE = Path(__file__).resolve().parent / "bad_inputs"
ENTRIES = {path.stem: load_yaml(path) for path in sorted(CATALOGUE.glob("*.yml"))}
PREFIXES = {name: f"rb{index:02d}" for index, name in enumerate(ENTRIES)}
STATE_VARS = {"gpu_operator.yml": "gpu_operator_state", "gitlab_runner.yml": "gitlab_runner_state",
              "arc_runners.yml": "arc_runners_state"}
LOCAL_HOST = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}


def isolation_vars(prefix: str) -> dict:
    """Names that keep one entry's possible writes apart from everything else."""
    return {
        "gpu_operator_namespace": f"{prefix}-gpu-operator",
        "gpu_operator_release_name": f"{prefix}-gpu-operator",
        "gpu_operator_time_slicing_configmap": f"{prefix}-device-plugin-config",
        "gitlab_runner_namespace": f"{prefix}-gitlab-runner",
        "gitlab_runner_fleet": prefix,
        "arc_runners_controller_namespace": f"{prefix}-arc-systems",
        "arc_runners_controller_release_name": f"{prefix}-arc",
        "arc_runners_scale_set_namespace": f"{prefix}-arc-runners",
        # A role that lets a bad input through should not keep the suite waiting on Helm.
        "gpu_operator_wait_timeout": 30,
        "gitlab_runner_wait_timeout": 30,
        "arc_runners_wait_timeout": 30,
    }


def entry_vars(name: str) -> dict:
    entry, prefix = ENTRIES[name], PREFIXES[name]
    host_vars = {**LOCAL_HOST, **isolation_vars(prefix), **entry.get("vars", {})}
    if entry.get("gpu_hosts") and entry["playbook"] != "container_toolkit.yml":
        host_vars["gpu_operator_host_group"] = f"{prefix}_gpu_hosts"
    return host_vars


def batch_inventory(folder: Path, playbook: str, names: list[str]) -> Path:
    """inventories/local's group_vars, with one host per entry (in gpu_hosts for the toolkit role)."""
    group = "gpu_hosts" if playbook == "container_toolkit.yml" else "gpuci_clusters"
    children = {"gpuci_clusters": {"hosts": {}}, "gpu_hosts": {"hosts": {}}}
    for name in names:
        host_vars = entry_vars(name)
        if group == "gpu_hosts":
            host_vars["ansible_become"] = False
        children[group]["hosts"][name] = host_vars
        if group == "gpuci_clusters" and ENTRIES[name].get("gpu_hosts"):
            hosts = {f"{PREFIXES[name]}-{host}": {**LOCAL_HOST, **(v or {})}
                     for host, v in ENTRIES[name]["gpu_hosts"].items()}
            children[f"{PREFIXES[name]}_gpu_hosts"] = {"hosts": hosts}
    folder.mkdir(parents=True)
    (folder / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": children}}, sort_keys=False))
    (folder / "group_vars").symlink_to(LOCAL_INVENTORY / "group_vars", target_is_directory=True)
    return folder


def failure_of(output: str, host: str) -> str:
    """The `fatal:`/`failed:` result blocks of `host`, whitespace collapsed (YAML wraps long messages)."""
    blocks, capturing = [], False
    for line in output.splitlines():
        if re.match(rf"^(fatal|failed): \[{re.escape(host)}\]", line):
            capturing = True
        elif capturing and line and not line[0].isspace():
            capturing = False
        if capturing:
            blocks.append(line)
    return " ".join(" ".join(blocks).replace("''", "'").split())


def recap_of(output: str, host: str) -> dict[str, int]:
    match = re.search(rf"^{re.escape(host)}\s+: (.+)$", output, flags=re.MULTILINE)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))} if match else {}


def scope_of(name: str) -> Scope:
    host_vars = entry_vars(name)
    namespaces = {v for k, v in host_vars.items() if k.endswith("_namespace") and isinstance(v, str)}
    return Scope(namespaces=namespaces, name_prefix=PREFIXES[name])


@pytest.fixture(scope="module")
def cluster_scoped_before(testbed):
    return cluster_scoped_snapshot(testbed)


@pytest.fixture(scope="module")
def outcomes(testbed, playbooks, cluster_scoped_before, tmp_path_factory):
    """name -> (output of its playbook run, its cluster diff); leaks are removed afterwards the role's way."""
    workdir = tmp_path_factory.mktemp("bad_inputs")
    by_playbook: dict[str, list[str]] = {}
    for name, entry in ENTRIES.items():
        by_playbook.setdefault(entry["playbook"], []).append(name)
    before = {name: scoped_snapshot(testbed, scope_of(name)) for name in ENTRIES}
    results, inventories = {}, {}
    for playbook, names in by_playbook.items():
        inventories[playbook] = batch_inventory(workdir / Path(playbook).stem, playbook, names)
        run = playbooks.run(playbook, inventory=inventories[playbook], timeout=900)
        for name in names:
            results[name] = {"output": run.output}
    for name in ENTRIES:
        results[name]["diff"] = snapshot_diff(before[name], scoped_snapshot(testbed, scope_of(name)))
    yield results
    for playbook, state_var in STATE_VARS.items():
        if any(any(results[name]["diff"].values()) for name in by_playbook.get(playbook, [])):
            playbooks.run(playbook, inventory=inventories[playbook], extra_vars={state_var: "absent"}, timeout=900)


def test_the_catalogue_is_large_enough():
    assert len(ENTRIES) >= 30, f"only {len(ENTRIES)} bad inputs in {CATALOGUE}"


@pytest.mark.parametrize("name", list(ENTRIES))
def test_bad_input_fails_in_validation_and_changes_nothing(outcomes, name):
    entry, output = ENTRIES[name], outcomes[name]["output"]
    recap, failure = recap_of(output, name), failure_of(output, name)
    assert recap, f"{name}: no PLAY RECAP line; the run ended early:\n{output[-3000:]}"
    assert recap["failed"] >= 1 and failure, f"{name}: the bad input was accepted (recap {recap})"
    missing = [fragment for fragment in entry["expect"] if " ".join(fragment.split()) not in failure]
    assert not missing, f"{name}: the failure does not name {missing}:\n{failure[:3000]}"
    assert recap["changed"] == 0, f"{name}: changed={recap['changed']} before failing with: {failure[:1500]}"
    diff = outcomes[name]["diff"]
    assert not any(diff.values()), f"{name}: the cluster changed: {diff}\nfailure: {failure[:1500]}"
    leaked = [secret for secret in entry.get("forbid", []) if secret in output]
    assert not leaked, f"{name}: the output shows a secret value"


def test_cluster_scoped_objects_unchanged_by_the_catalogue(testbed, outcomes, cluster_scoped_before):
    """No CRD, ClusterRole(Binding), RuntimeClass, webhook or PriorityClass appeared, went or changed."""
    assert snapshot_diff(cluster_scoped_before, cluster_scoped_snapshot(testbed)) == \
        {"added": [], "removed": [], "changed": []}
