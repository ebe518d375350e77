# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the cluster holds, checked against each role's plan: every role in one pass.

The converge (role gpuci.runners.converge) verifies every cluster role whose
verify step the run selects in one task, whether one role converged or
several. A role is
checked against its group of the read-back when its decision named reads to
read back (``pending.readback``: it applied something, and waited for it),
else against its group of the one read it decided from: a rerun that
changed nothing is verified from that read. The rules are each role's own
(gpu_operator_readback, gitlab_runner_readback, arc_runners_readback); this
module hands each the parts of the plan and the answers it checks.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.readback import arc_runners_readback
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.readback import gitlab_runner_readback
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.readback import gpu_operator_readback
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    child,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("read", "readback", "roles", "plans", "changes", "simulated"))
ROLE_KEYS = frozenset(("plan", "pending"))


def _gpu_operator(plan, answers, path):
    # The GPUCluster is read back only with gpu_operator_gpu_allocation: dra.
    clusters = answers["gpu_cluster"]["resources"] if "gpu_cluster" in answers else []
    return gpu_operator_readback({"values": plan["release"]["values"], "cluster_policy": plan["cluster_policy"],
                                  "policies": answers["policy"]["resources"], "gpu_clusters": clusters}, path)


def _gitlab_runner(plan, answers, path):
    # Without a present pool the role reads no ConfigMap or manager back.
    if not plan["releases"]:
        return []
    return gitlab_runner_readback({"releases": plan["releases"], "configmaps": answers["configmaps"]["resources"],
                                   "managers": answers["managers"]["resources"]}, path)


def _arc_runners(plan, answers, path):
    return arc_runners_readback({"by_scale_set": plan["by_scale_set"],
                                 "runner_sets": answers["runner_sets"]["resources"], "answers": answers}, path)


# In the order the converge serves the roles; their problems come in this order.
CHECKS = {"gpu_operator": _gpu_operator, "gitlab_runner": _gitlab_runner, "arc_runners": _arc_runners}
# What passing proves on a simulated cluster (gpuci_simulated_cluster), where no container runs.
SIMULATED_NOTES = {
    "gpu_operator": "Simulated cluster: the operator Deployment and the ClusterPolicy are real API objects, but no "
                    "container runs, so the operands (driver, toolkit, device plugin, validator) never start; nothing "
                    "waits for them.",
}


def fleet_readback(spec, path="fleet_readback"):
    """``{"problems", "checked", "summary"}``: every role's problems, each prefixed with its role (``[]``: verified).

    ``spec`` holds ``read`` and ``readback`` (the ``groups`` of the
    ``k8s_reads`` answers of the read and of the read-back; ``readback`` may
    be empty when no role read back), ``roles`` (for each role to check, its
    ``plan``, ``__<role>_plan``, and ``pending``, ``__<role>_pending``) and
    ``simulated`` (gpuci_simulated_cluster). Instead of ``roles``, the
    converge gives ``changes`` (fleet_decide's result: the roles it checks
    are its ``verified``, each with its ``pending``) and ``plans`` (each
    role's plan by name). ``checked`` names the roles
    checked, in order; ``summary`` says so, which of them had nothing to
    change (their ``pending`` settled), and what passing proves on a
    simulated cluster.

    Nothing is copied into plain data first: the checks read the few fields
    they compare, and in a task the plans and answers are Ansible's lazy
    containers, which template every value as it is read (copying them
    whole took 18 ms a call on a no-op site.yml, and an assert calls once
    for each of its arguments that names the result).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    roles_path = child(path, "roles")
    roles = require_mapping(spec.get("roles") if "changes" not in spec else _from_changes(spec, path), roles_path)
    reject_unknown_keys(roles, CHECKS, roles_path)
    problems, checked, settled = [], [], []
    for role, check in CHECKS.items():
        if role not in roles:
            continue
        role_path = child(roles_path, role)
        part = require_mapping(roles[role], role_path)
        reject_unknown_keys(part, ROLE_KEYS, role_path)
        pending = require_mapping(part.get("pending"), child(role_path, "pending"))
        source = "readback" if pending.get("readback") else "read"
        if pending.get("settled"):
            settled.append(role)
        answers = (spec.get(source) or {}).get(role)
        if answers is None:
            raise ValidationError(child(path, source), "holds no answers of %s" % role)
        problems.extend("%s: %s" % (role, problem) for problem in check(part["plan"], answers, role_path))
        checked.append(role)
    notes = [SIMULATED_NOTES[role] for role in checked if role in SIMULATED_NOTES] if spec.get("simulated") else []
    # On a rerun that changes nothing this is the one step that says so.
    unchanged = ["Their plans already in place, nothing to change: %s." % ", ".join(settled)] if settled else []
    summary = " ".join(["Checked against their plans: %s." % ", ".join(checked)] + unchanged + notes)
    return {"problems": problems, "checked": checked, "summary": summary}


def _from_changes(spec, path):
    """``roles`` from the converge's ``changes`` (its ``verified`` roles, their ``pending``) and ``plans``."""
    changes = require_mapping(spec.get("changes"), child(path, "changes"))
    plans = require_mapping(spec.get("plans"), child(path, "plans"))
    return dict((role, {"plan": plans[role], "pending": changes[role]["pending"]})
                for role in changes.get("verified") or [])
