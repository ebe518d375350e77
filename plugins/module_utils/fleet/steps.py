# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which cluster roles this run converges, which of their steps run, and what the one read asks for.

The role ``gpuci.runners.converge`` runs after the cluster roles of a play
have planned (each role's preflight registers ``__<role>_plan``; a role the
play does not run has none). Its steps serve every role at once, so Ansible's
tags cannot pick a role's part of them: each role's tags for each step are
written once, in the converge role's ``vars/main.yml``, and ``selects`` (the
filter's: Ansible's own rule for a task with those tags under the run's
--tags and --skip-tags) says which run. The steps:

- ``decide``: the role is read and decided (and said, and finished when
  something is pending);
- ``apply``: its objects and releases are applied;
- ``verify``: it is read back and checked against its plan.

A role converges when its plan does (state present, something declared).
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    child,
    require_mapping,
)

# The cluster roles in the order they converge, each with its name in words.
ROLES = {"gpu_operator": "GPU Operator", "gitlab_runner": "GitLab runner pools", "arc_runners": "ARC"}
STEPS = ("decide", "apply", "verify")


def fleet_steps(spec, selects, path="fleet_steps"):
    """``{"roles": {role: [step, ...]}, "reads": [...]}``: each converging role whose decide step runs with its
    selected steps, and their reads, in the roles' order.

    ``spec`` holds ``plans`` (``{role: plan}``; a missing, empty or skipped
    plan converges nothing) and ``tags`` (``{role: {step: [tag, ...]}}``).
    ``selects(tags)`` says whether the run selects a task with ``tags``.
    """
    require_mapping(spec, path)
    plans = require_mapping(spec.get("plans") or {}, child(path, "plans"))
    tags = require_mapping(spec.get("tags"), child(path, "tags"))
    unknown = sorted(set(plans) - set(ROLES))
    if unknown:
        raise ValidationError(child(path, "plans"), "no converge for %s; the cluster roles are %s"
                              % (", ".join(unknown), ", ".join(ROLES)))
    roles, reads = {}, []
    for role in ROLES:
        plan = plans.get(role)
        if not isinstance(plan, Mapping) or not plan.get("converges"):
            continue
        role_tags = require_mapping(tags.get(role), child(child(path, "tags"), role))
        missing = [step for step in STEPS if not role_tags.get(step)]
        if missing:
            raise ValidationError(child(child(path, "tags"), role), "names no tags of %s" % ", ".join(missing))
        selected = [step for step in STEPS if selects(list(role_tags[step]))]
        # The other steps act on the decision: without it (--skip-tags of a
        # tag the decision carries too) the role takes no part.
        if "decide" not in selected:
            continue
        roles[role] = selected
        reads.extend(plan["reads"])
    return {"roles": roles, "reads": reads}
