#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fleet_decide
short_description: Decide what the cluster roles must change, from their plans and one read of the cluster
description:
  - From each cluster role's plan (M(gpuci.runners.role_plan)) and its answers from M(gpuci.runners.k8s_reads),
    decides what a converge must apply, remove, label and read back, and keeps it as the role's facts
    (C(__gpu_operator_pending) and C(__gpu_operator_node_patches), C(__gitlab_runner_pending) and
    C(__gitlab_runner_removals), C(__arc_runners_pending)). Fails when the cluster already runs a GPU Operator of
    another release (there can be one per cluster).
  - With O(fleet) (C(playbooks/site.yml)) it decides for every role whose plan converges and whose tags the run
    selects, and adds C(__gpuci_fleet) - which roles decided (C(decided)), whether any found something pending
    (C(pending)) and what each will change (C(summary)).
  - Why not M(ansible.builtin.set_fact) - site.yml decided in four tasks behind three role imports, each
    assembling the inputs of its Python builders in Jinja; every task starts a worker process on every run, a
    rerun that changes nothing included. One step decides for every role, in the controller's process, and the
    roles alone call the same step.
  - The facts hold the runner token and GitHub credentials Secrets - the result is hidden (no_log) at every
    verbosity, except a refusal's message, which holds no secret.
version_added: 0.3.0
author:
  - gpuci.runners maintainers (@gpuci)
options:
  roles:
    description:
      - The roles to decide for, each with its C(plan); C(gitlab_runner) also with C(pools) and C(arc_runners) with
        C(scale_sets), as the inventory wrote them (their tokens and credentials).
    type: dict
    required: true
  read:
    description: The answers of M(gpuci.runners.k8s_reads) by role (its C(groups)).
    type: dict
    required: true
  fleet:
    description: Decide only for the roles whose plan converges and whose tags the run selects, and add C(__gpuci_fleet).
    type: bool
    default: false
  run_tags:
    description: The run's C(--tags) (C(ansible_run_tags)); with O(fleet) only.
    type: list
    elements: str
    default: [all]
  skip_tags:
    description: The run's C(--skip-tags) (C(ansible_skip_tags)); with O(fleet) only.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: It changes nothing; in check mode it leaves out what the API server would refuse to dry-run.
  diff_mode:
    support: none
    description: There is nothing to show a difference of.
notes:
  - Used by the collection's playbooks and roles; it changes nothing.
"""

EXAMPLES = r"""
- name: Decide what every role must change
  gpuci.runners.fleet_decide:
    fleet: true
    roles:
      gpu_operator: {plan: "{{ __gpu_operator_plan }}"}
      gitlab_runner: {plan: "{{ __gitlab_runner_plan }}", pools: "{{ gitlab_runner_pools | default([]) }}"}
    read: "{{ __gpuci_cluster.groups }}"
    run_tags: "{{ ansible_run_tags }}"
    skip_tags: "{{ ansible_skip_tags }}"
# => __gpuci_fleet: {decided: [gpu_operator, gitlab_runner], pending: true,
#    summary: ['GPU Operator: settled', 'GitLab runner pools: release gitlab-runner-l40s']}
"""

RETURN = r"""
ansible_facts:
  description: The decided roles' facts; hidden from output, as they hold Secrets.
  returned: unless a refusal stops the run
  type: dict
msg:
  description: Why the run stops (a second GPU Operator on the cluster).
  returned: when refused
  type: str
"""
