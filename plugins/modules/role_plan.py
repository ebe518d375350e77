#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: role_plan
short_description: Plan one of the collection's roles and refuse what it cannot act on, in one step
description:
  - Makes the plan of a role (its builder in C(module_utils/<role>/plan.py)) from
    its settings and returns it as the result, which the role's task registers (C(__<role>_plan);
    C(__gpu_canary_plan) for the canary), or fails with every problem the plan found, each naming the inventory
    variable at fault, in one message.
  - Why not M(ansible.builtin.set_fact) and M(ansible.builtin.assert) - that is two tasks, and every task starts a
    worker process, on every run of every playbook, a rerun that changes nothing included (about 20 ms each on a
    2-core controller). The roles plan in one step; the plan is the filter's, so C(playbooks/plan.yml) shows
    the same.
  - A plan's C(warnings) (the GPU Operator's, about chart values that upstream removed) are shown as warnings,
    its C(notes) (the ARC role's, that the inventory declares nothing of ARC) as a line of output; the plan itself
    only with C(-v).
  - Old spellings still read (a role variable or a pool or scale set key renamed in a release; the tables of
    C(module_utils/common/deprecations.py), docs/deprecation.md) are read under their new names before the plan is
    made, each with a deprecation warning that names the new spelling and the version that refuses the old one;
    both spellings at once are a problem.
  - For a present cluster role (C(gpu_operator), C(gitlab_runner), C(arc_runners)) run whole, it also warns when
    the play holds no role C(gpuci.runners.converge) among its roles and C(include_role) tasks - without it
    nothing of the plan is applied. A run whose tags are only C(<role>_preflight) does not warn.
  - Why a result to register, not C(ansible_facts) - Ansible keeps an action's facts in its fact cache, which a
    jsonfile or redis cache, or the fact storage of an AWX job template, writes out and brings back into the
    next run; a registered result lives in the run's memory only.
  - Runs in the controller's process (an action plugin); it reads only its arguments and touches no host.
version_added: 0.3.0
author:
  - gpuci.runners maintainers (@gpuci)
options:
  role:
    description: Whose plan to make.
    type: str
    required: true
    choices: [arc_runners, gitlab_runner, gpu_canary, gpu_operator]
  settings:
    description: The role's variables its plan reads, as its tasks pass them (see each plan filter's input).
    type: dict
    required: true
  gpu_classes:
    description: The inventory's GPU classes, laid over the built-in catalogue.
    type: dict
    default: {}
  refuse:
    description: Fail when the plan has problems. False keeps the plan without refusing it.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: It changes nothing, so it runs the same in check mode.
  diff_mode:
    support: none
    description: There is nothing to show a difference of.
notes:
  - Used by the collection's roles; it changes nothing.
"""

EXAMPLES = r"""
- name: Check and plan the pools' releases, RBAC and Secrets
  gpuci.runners.role_plan:
    role: gitlab_runner
    settings:
      gitlab_runner_pools: "{{ gitlab_runner_pools }}"
      gitlab_runner_state: present
    gpu_classes: "{{ gpu_classes | default({}) }}"
  register: __gitlab_runner_plan
# => __gitlab_runner_plan is the plan; with a bad pool the task fails:
#    gitlab_runner_pools[name=l40s].gpus: must be an integer, not str (got 'two')
"""

RETURN = r"""
problems:
  description: >-
    The plan's problems (empty unless O(refuse) is false); the other keys are the plan's, as the role's plan
    filter documents them (for example C(releases), C(reads), C(converges)).
  returned: unless the plan is refused
  type: list
  elements: str
  sample: []
msg:
  description: The plan's problems, joined.
  returned: when the plan is refused
  type: str
"""
