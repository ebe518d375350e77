# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml then teardown.yml on inventories/local: nothing of ours is left.

Between the two, each role's verify tag (in site.yml and in the role's
playbook) checks the converged cluster and changes nothing.

After teardown no object labelled app.kubernetes.io/part-of=gpuci-runners
that the converge made remains in any namespace, no Helm release it made
remains, and the cluster-scoped objects (ClusterRoles and their bindings
from the charts, our RuntimeClass, webhooks, namespaces) are the ones that
existed before. CRDs are kept by policy (Helm keeps them; both roles remove
them only when asked), so they are left out of the comparison.

The testbed is shared during development, so the comparison is limited to
the namespaces inventories/local (and the roles' defaults) name, and to
cluster-scoped objects other than namespaces of other suites; objects that
existed before the converge are left out. In CI the suites run one after
another. The GPU Operator chart's ClusterRole has a
fixed name, so this module must not run at the same time as another suite
that installs the GPU Operator.
"""
from __future__ import annotations

import glob
import re
from pathlib import Path

import yaml

from helpers import LOCAL_INVENTORY, REPO_ROOT, helm_releases
from reliability_support import CLUSTER_KINDS, cluster_scoped_snapshot, labelled_leftovers

KINDS_WITHOUT_CRDS = tuple(kind for kind in CLUSTER_KINDS if kind[1] != "CustomResourceDefinition")


def _namespace_values(data) -> set[str]:
    """Every string under a key ending in `namespace`, at any depth."""
    found = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if str(key).endswith("namespace") and isinstance(value, str) and "{{" not in value:
                found.add(value)
            found |= _namespace_values(value)
    elif isinstance(data, list):
        for value in data:
            found |= _namespace_values(value)
    return found


def site_namespaces() -> set[str]:
    files = glob.glob(str(LOCAL_INVENTORY / "group_vars" / "all" / "*.yml"))
    files += glob.glob(str(REPO_ROOT / "roles" / "*" / "defaults" / "main.yml"))
    return set().union(*(_namespace_values(yaml.safe_load(Path(f).read_text(encoding="utf-8"))) for f in files))


NAMESPACES = site_namespaces()


def ours(objects) -> set[tuple[str, str, str]]:
    """Objects inside the site's namespaces, and those namespaces themselves."""
    return {o for o in objects if o[1] in NAMESPACES or (o[0] == "Namespace" and o[2] in NAMESPACES)}


def existing_namespaces(cluster) -> set[str]:
    return {name for name in NAMESPACES if cluster.get("v1", "Namespace", name)}


def release_names(cluster) -> set[tuple[str, str]]:
    return {(r["namespace"], r["name"]) for r in helm_releases(cluster) if r["namespace"] in NAMESPACES}


# Each role's verify tag; the converge (roles/converge) checks every role it
# converges in one task, whether one role's playbook or site.yml runs it.
VERIFY_TAGS = ["gpu_operator_verify", "gitlab_runner_verify", "arc_runners_verify"]
FLEET_CHECK = "Check what each role applied or found against its plan (module_utils/fleet/readback.py)"
CLUSTER_ROLES = ["gpu_operator", "gitlab_runner", "arc_runners"]


def checked_roles(output):
    """The roles the converge's check names in its summary."""
    checked = re.search(r"TASK \[gpuci\.runners\.converge : %s\].*\nok: (.*\n)+?(?=\n|TASK|PLAY)"
                        % re.escape(FLEET_CHECK), output)
    assert checked, f"the converge did not check: {FLEET_CHECK}\n{output[-3000:]}"
    return " ".join(checked.group(0).split())


def verify_tags_verify_and_change_nothing(playbooks):
    """--tags <role>_verify, in site.yml and in the role's playbook, reads what it checks and changes nothing.

    The check is made from what the converge's read found: the read must run
    under the tag too, and nothing that applies, prunes or restarts may.
    """
    runs = {"site.yml": playbooks.run("site.yml", tags=",".join(VERIFY_TAGS))}
    runs.update({role: playbooks.run(role + ".yml", tags=role + "_verify") for role in CLUSTER_ROLES})
    for name, run in runs.items():
        assert run.assert_ok().changed == 0, f"--tags verify changed something in {name}:\n{run.output[-3000:]}"
    for role in CLUSTER_ROLES:
        assert "Checked against their plans: %s." % role in checked_roles(runs[role].output)
    # site.yml checks every role in one task, which names the roles it checked.
    said = checked_roles(runs["site.yml"].output)
    assert "Checked against their plans: %s." % ", ".join(CLUSTER_ROLES) in said, said


def test_teardown_leaves_nothing_behind(testbed, playbooks):
    # From a site without our objects, whatever ran on this testbed before (inventories/local converged by
    # another module), so the converge below makes what the teardown must remove.
    if ours(labelled_leftovers(testbed)) or release_names(testbed):
        playbooks.run("teardown.yml").assert_ok()
    labelled_before = ours(labelled_leftovers(testbed))
    releases_before = release_names(testbed)
    cluster_before = set(cluster_scoped_snapshot(testbed, KINDS_WITHOUT_CRDS))
    namespaces_before = existing_namespaces(testbed)

    converge = playbooks.run("site.yml")
    try:
        converge.assert_ok()
        made = ours(labelled_leftovers(testbed)) - labelled_before
        assert made, "the converge made no labelled object; nothing would be tested"
        assert release_names(testbed) - releases_before, "the converge made no Helm release"
        verify_tags_verify_and_change_nothing(playbooks)
    finally:
        teardown = playbooks.run("teardown.yml")
    teardown.assert_ok()

    left = sorted(ours(labelled_leftovers(testbed)) - labelled_before)
    assert not left, f"labelled objects left after teardown: {left}"
    assert not release_names(testbed) - releases_before, "Helm releases left after teardown"
    assert existing_namespaces(testbed) == namespaces_before, "a namespace the converge created is left"
    cluster_left = sorted(set(cluster_scoped_snapshot(testbed, KINDS_WITHOUT_CRDS)) - cluster_before)
    assert not cluster_left, f"cluster-scoped objects left after teardown: {cluster_left}"


def test_teardown_of_nothing_is_a_no_op(testbed, playbooks):
    """A second teardown finds nothing to remove and reports no change."""
    assert playbooks.run("teardown.yml").assert_ok().changed == 0
