#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: known_variables
short_description: Refuse the host's variables of the collection's prefixes that no role or playbook knows
description:
  - A misspelt variable is not an error to Ansible - C(gitlab_runner_pool) (for C(gitlab_runner_pools)) is a
    variable nobody reads, and the role takes its default instead. This step fails when the host carries a
    variable whose name starts with C(gitlab_runner_), C(arc_runners_), C(gpu_operator_), C(container_toolkit_),
    C(gpu_canary_) or C(gpuci_) and that no role or playbook of the collection knows, naming each such variable,
    the nearest known name (for C(gitlab_runner_pool), C(did you mean gitlab_runner_pools?)) and, where Ansible
    tells, the file and line that set it.
  - The known names are the roles' argument specs (C(meta/argument_specs.yml), entry point C(main), read from the
    installed collection at run time; deprecated spellings included), the collection-wide and playbook variables
    of C(module_utils/common/known_variables.py) (C(gpuci_kubeconfig), C(gpuci_kube_context), C(gpuci_simulated_cluster),
    C(gpuci_plan_dir), the AWX injections, ...), C(gpuci_survey_<role variable>), and the families the collection
    reads none of, allowed by prefix (C(gpuci_testbed_), C(gpuci_kind_), C(gpuci_awx_)).
  - The variables checked are those the task sees (inventory, facts, extra vars), by name only - no value is
    templated or shown. Ansible's own and magic variables carry none of the prefixes.
  - Run by the shared preflight (C(playbooks/preflight.yml)) before any change, for every cluster host and GPU
    host; so C(site), C(plan), the per-role playbooks, C(canary), C(teardown) and C(alert_rules) refuse a typo.
  - Runs in the controller's process (an action plugin); it touches no host.
version_added: 0.3.0
author:
  - gpuci.runners maintainers (@gpuci)
options:
  unchecked:
    description:
      - Names (or C(fnmatch) patterns) of the user's own variables that carry one of the prefixes, such as another
        role's C(gitlab_runner_*) in a shared C(group_vars/all); they are not checked. The preflight passes
        C(gpuci_unchecked_variables).
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: It changes nothing, so it runs the same in check mode.
  diff_mode:
    support: none
    description: There is nothing to show a difference of.
notes:
  - Used by the collection's shared preflight; it changes nothing.
"""

EXAMPLES = r"""
- name: Refuse variables of the collection's prefixes that no role or playbook knows
  gpuci.runners.known_variables:
    unchecked: "{{ gpuci_unchecked_variables | default([]) }}"
# With gitlab_runner_pool set in the inventory the task fails:
#   gitlab_runner_pool: unknown variable; did you mean gitlab_runner_pools?
#   (set in inventories/site/group_vars/all/gitlab_runner.yml:3:1). Names starting with ...
"""

RETURN = r"""
checked:
  description: How many of the host's variables carry one of the prefixes (all of them known).
  returned: success
  type: int
  sample: 42
unknown:
  description: The unknown variables' names.
  returned: failure
  type: list
  elements: str
  sample: [gitlab_runner_pool]
msg:
  description: One line per unknown variable, with the nearest known name.
  returned: failure
  type: str
"""
