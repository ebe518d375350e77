# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which variables of the collection's prefixes a host may carry, and the refusal of the others.

A misspelt variable name is not an error to Ansible: ``gitlab_runner_pool:``
(for ``gitlab_runner_pools``) is a variable nobody reads, the role takes its
default (no pools), and a converge prunes the whole fleet. So the shared
preflight (playbooks/preflight.yml, ``gpuci.runners.known_variables``) refuses,
before any change, every variable of the host that starts with one of the
collection's ``PREFIXES`` and that no role or playbook knows, naming it and
the nearest known name.

The known names come from one source:

- every role's argument spec (``meta/argument_specs.yml``, entry point
  ``main``: the entry points that have no tasks file, such as
  gitlab_runner's ``pool``, describe the keys of a list entry, not
  variables), read by the caller from the installed collection, so a new
  role variable is known as soon as its spec is written. Deprecated
  spellings are documented there too (docs/deprecation.md), and
  ``deprecations.DEPRECATED_VARIABLES`` adds its old names, so an old
  spelling still read is never refused;
- ``COLLECTION_VARIABLES`` below: what the playbooks and several roles read
  that no role's spec holds, each with who reads it;
- ``gpuci_survey_<role variable>``: an AWX survey answer
  (awx/playbooks/tasks/survey_answers.yml), known when its role variable is;
- ``FAMILIES``: names the collection reads none of, whose owners keep them
  apart by a prefix of their own: the testbed inventories' helpers
  (``gpuci_testbed_``), the Molecule kind harness's (``gpuci_kind_``) and
  awx/configure.yml's settings (``gpuci_awx_``). A family is allowed by its
  prefix, as its owner adds names without this module knowing: the rule
  that keeps it sound is that a name of a family is read only by its owner,
  never by a role or a collection playbook, so a typo in it cannot change
  what the collection does.

Ansible's own and magic variables (``ansible_*``, ``inventory_hostname``,
``groups``...) and the roles' internal names (``_gitlab_runner_*``,
``__gitlab_runner_plan``) carry none of the prefixes and are never looked at.
The user's own names that happen to carry a prefix (another role's
``gitlab_runner_*`` in a shared ``group_vars/all``) are accepted when
``gpuci_unchecked_variables`` lists them (names or ``fnmatch`` patterns).
"""

from __future__ import annotations

import difflib
import fnmatch

from ansible_collections.gpuci.runners.plugins.module_utils.common.deprecations import DEPRECATED_VARIABLES
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import THRESHOLDS
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.rule_placement import (
    MODE_VARIABLE,
    STATE_VARIABLE,
)

# A variable whose name starts with one of these is the collection's to know.
PREFIXES = ("gitlab_runner_", "arc_runners_", "gpu_operator_", "container_toolkit_", "gpu_canary_", "gpuci_")

# The variable that lists the user's own names of these prefixes, which the check leaves alone.
UNCHECKED_VARIABLE = "gpuci_unchecked_variables"

# AWX sends each survey answer as gpuci_survey_<role variable> (awx/surveys/*.yml).
SURVEY_PREFIX = "gpuci_survey_"

# Read by a collection playbook, by several roles, or set by AWX, and held by no role's argument spec:
# {name: who reads it}. docs/development.md ("Names") lists the families.
COLLECTION_VARIABLES = dict({
    "gpuci_kubeconfig": "every cluster playbook (module_defaults of the kubernetes group), the canary",
    "gpuci_kube_context": "every cluster playbook (module_defaults of the kubernetes group), the canary",
    "gpuci_simulated_cluster": "the converge's check and the canary's report: the cluster's GPU nodes are simulated",
    "gpuci_plan_dir": "playbooks/plan.yml: where the plans are written",
    "gpuci_plan_offline": "playbooks/plan.yml: plan without reading the clusters",
    "gpuci_plan": "playbooks/plan.yml's fact (a fact cache brings it back)",
    UNCHECKED_VARIABLE: "playbooks/preflight.yml: the user's own names of the collection's prefixes",
    "gpuci_alert_rules_dir": "playbooks/alert_rules.yml: where the rules files are written",
    MODE_VARIABLE: "playbooks/alert_rules.yml (module_utils/monitoring/rule_placement.py)",
    STATE_VARIABLE: "playbooks/alert_rules.yml (module_utils/monitoring/rule_placement.py)",
    "gpuci_alert_rule_namespace": "playbooks/alert_rules.yml (module_utils/monitoring/alert_rules.py)",
    "gpuci_alert_rule_labels": "playbooks/alert_rules.yml (module_utils/monitoring/alert_rules.py)",
    # AWX's credential types inject these; inventories reference them (awx/credential_types.yml).
    "gpuci_gitlab_runner_tokens": "AWX credential type gpuci.runners GitLab runner tokens",
    "gpuci_github_token": "AWX credential type gpuci.runners GitHub (ARC)",
    "gpuci_github_app_id": "AWX credential type gpuci.runners GitHub (ARC)",
    "gpuci_github_app_installation_id": "AWX credential type gpuci.runners GitHub (ARC)",
    "gpuci_github_app_private_key": "AWX credential type gpuci.runners GitHub (ARC)",
    # Helpers of this repository's own inventories and harnesses that predate the families below.
    "gpuci_local_chart_repo": "inventories/local, inventories/gpu-proof, benchmarks/inventory: the testbed's chart repository",
    "gpuci_proof_gpu_class": "inventories/gpu-proof: the GPU class of the machine under proof",
    "gpuci_verify_min_lanes": "molecule/default/verify.yml",
    "gpuci_verify_expect_proved": "molecule/default/verify.yml",
}, **{name: "playbooks/alert_rules.yml: an alert threshold (module_utils/monitoring/alert_rules.py)"
      for name in THRESHOLDS})

# Allowed by prefix: the collection reads none of these (see the module docstring). {prefix: whose}
FAMILIES = {
    "gpuci_testbed_": "the testbed inventories' own helpers (inventories/local, inventories/gpu-proof)",
    "gpuci_kind_": "the Molecule kind harness's own helpers (molecule/kind)",
    "gpuci_awx_": "awx/configure.yml's settings and the AWX job templates' playbooks",
}


def spec_variables(specs):
    """The variables the roles' argument specs describe: ``specs`` maps a role to its parsed
    ``meta/argument_specs.yml`` (``None`` for a role without one)."""
    names = set()
    for spec in specs.values():
        entry = ((spec or {}).get("argument_specs") or {}).get("main") or {}
        names.update(entry.get("options") or {})
    return names


def known_names(specs):
    """Every known variable of the prefixes, the spec's, the deprecated and the collection's."""
    names = spec_variables(specs) | set(COLLECTION_VARIABLES)
    for table in DEPRECATED_VARIABLES.values():
        names.update(table)
    return names


def carries_prefix(name):
    return isinstance(name, str) and name.startswith(PREFIXES)


def unknown_variables(names, specs, unchecked=()):
    """``[(name, suggestion or None)]``: the names of ``names`` that carry a prefix and that nothing knows,
    sorted; ``unchecked`` are the user's own names or ``fnmatch`` patterns (``gpuci_unchecked_variables``)."""
    known = known_names(specs)
    surveyed = set(SURVEY_PREFIX + name for name in spec_variables(specs))
    unknown = []
    for name in sorted(set(name for name in names if carries_prefix(name))):
        if name in known or name in surveyed or name.startswith(tuple(FAMILIES)):
            continue
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in unchecked or ()):
            continue
        unknown.append((name, nearest(name, known | surveyed)))
    return unknown


def nearest(name, known):
    """The known name closest to ``name``, or None.

    Names are compared after the prefix they share, so the prefix's length
    lends no likeness: ``gitlab_runner_pool`` finds ``gitlab_runner_pools``,
    ``gitlab_runner_foo`` finds nothing (though ``gitlab_runner_fleet``
    shares 15 of its 17 letters). A survey answer is compared by the role
    variable it names, with the survey answers only."""
    if name.startswith(SURVEY_PREFIX):
        answered = set(candidate[len(SURVEY_PREFIX):] for candidate in known if candidate.startswith(SURVEY_PREFIX))
        match = nearest(name[len(SURVEY_PREFIX):], answered)
        return SURVEY_PREFIX + match if match else None
    prefix = max((p for p in PREFIXES if name.startswith(p)), key=len, default="")
    suffixes = dict((candidate[len(prefix):], candidate) for candidate in known
                    if candidate.startswith(prefix) and candidate != name and not candidate.startswith(SURVEY_PREFIX))
    match = difflib.get_close_matches(name[len(prefix):], sorted(suffixes), n=1, cutoff=0.6)
    return suffixes[match[0]] if match else None


def problems(unknown, origins=None):
    """One line per unknown variable, as the preflight refuses it: ``(name, suggestion)`` pairs, and where each
    was set (``origins``: {name: 'path:line'}, when Ansible tells)."""
    origins = origins or {}
    lines = []
    for name, suggestion in unknown:
        line = "%s: unknown variable; " % name + (
            "did you mean %s?" % suggestion if suggestion else
            "no role or playbook of gpuci.runners reads it")
        if origins.get(name):
            line += " (set in %s)" % origins[name]
        lines.append(line)
    return lines


def refusal(unknown, origins=None):
    """The preflight's whole message for ``unknown`` ('' for none)."""
    if not unknown:
        return ""
    return "; ".join(problems(unknown, origins)) + (
        ". Names starting with %s are the collection's (docs/development.md, Names): fix the spelling, or list "
        "a name of your own in %s" % (", ".join(PREFIXES), UNCHECKED_VARIABLE))
