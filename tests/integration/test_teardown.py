# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml then teardown.yml on inventories/local: nothing of ours is left.

After teardown no object labelled app.kubernetes.io/part-of=gpuci-runners
that the converge made remains in any namespace, no Helm release it made
remains, and the cluster-scoped objects (ClusterRoles and their bindings
from the charts, our RuntimeClass, webhooks, namespaces) are the ones that
existed before. CRDs are kept by policy (Helm keeps them; both roles remove
them only when asked), so they are left out of the comparison.

Objects of other suites that exist before the converge are taken out of
the comparison (the testbed is shared during development); in CI the
suites run one after another. The GPU Operator chart's ClusterRole has a
fixed name, so this module must not run at the same time as another suite
that installs the GPU Operator.
"""
from __future__ import annotations

from reliability_support import CLUSTER_KINDS, cluster_scoped_snapshot, helm_releases, labelled_leftovers

KINDS_WITHOUT_CRDS = tuple(kind for kind in CLUSTER_KINDS if kind[1] != "CustomResourceDefinition") + (
    ("v1", "Namespace"),)


def release_names(cluster) -> set[tuple[str, str]]:
    return {(r["namespace"], r["name"]) for r in helm_releases(cluster)}


def test_teardown_leaves_nothing_behind(testbed, playbooks):
    labelled_before = set(labelled_leftovers(testbed))
    releases_before = release_names(testbed)
    cluster_before = set(cluster_scoped_snapshot(testbed, KINDS_WITHOUT_CRDS))

    converge = playbooks.run("site.yml")
    try:
        converge.assert_ok()
        made = set(labelled_leftovers(testbed)) - labelled_before
        assert made, "the converge made no labelled object; nothing would be tested"
        assert release_names(testbed) - releases_before, "the converge made no Helm release"
    finally:
        teardown = playbooks.run("teardown.yml")
    teardown.assert_ok()

    left = sorted(set(labelled_leftovers(testbed)) - labelled_before)
    assert not left, f"labelled objects left after teardown: {left}"
    assert not release_names(testbed) - releases_before, "Helm releases left after teardown"
    cluster_left = sorted(set(cluster_scoped_snapshot(testbed, KINDS_WITHOUT_CRDS)) - cluster_before)
    assert not cluster_left, f"cluster-scoped objects left after teardown: {cluster_left}"


def test_teardown_of_nothing_is_a_no_op(testbed, playbooks):
    """A second teardown finds nothing to remove and reports no change."""
    assert playbooks.run("teardown.yml").assert_ok().changed == 0
