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
    decides what a converge must apply, remove, label and read back. The result is the decision, which the
    task registers (the roles register it as C(__gpuci_decision)) - under each role's name what its later steps
    read (C(gpu_operator.pending) and C(gpu_operator.node_patches), C(gitlab_runner.pending) and
    C(gitlab_runner.removals), C(arc_runners.pending)). Fails when the cluster already runs a GPU Operator of
    another release (there can be one per cluster).
  - With O(fleet) (C(playbooks/site.yml)) it decides for every role whose plan converges and whose tags the run
    selects, and says too whether any found something pending (C(pending)), what each will change
    (C(summary)), and the releases and reads of the fleet's converge (C(releases), C(readback)).
  - Why not M(ansible.builtin.set_fact) - site.yml decided in four tasks behind three role imports, each
    assembling the inputs of its Python builders in Jinja; every task starts a worker process on every run, a
    rerun that changes nothing included. One step decides for every role, in the controller's process, and the
    roles alone call the same step.
  - The decision holds the runner token and GitHub credentials Secrets - the result is hidden (no_log) at every
    verbosity, except a refusal's message, which holds no secret.
  - Why a result to register, not C(ansible_facts) - Ansible keeps an action's facts in its fact cache. A jsonfile
    or redis cache, or the fact storage of an AWX job template, would write the Secrets out (AWX into its
    database, shown with the host's facts) and bring a stale decision back into the next run; a registered
    result lives in the run's memory only.
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
    description: >-
      Decide only for the roles whose plan converges and whose tags the run selects, and add C(pending),
      C(summary), C(releases) and C(readback).
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
  register: __gpuci_decision
# => __gpuci_decision: {decided: [gpu_operator, gitlab_runner], pending: true,
#    summary: ['GPU Operator: settled', 'GitLab runner pools: release gitlab-runner-l40s'],
#    gitlab_runner: {pending: {settled: false, objects: [...], ...}, removals: {...}}, ...}
"""

RETURN = r"""
decided:
  description: The roles that decided, in the order they converge.
  returned: unless a refusal stops the run
  type: list
  elements: str
gpu_operator:
  description: The GPU Operator's C(pending) changes and its C(node_patches); hidden from output.
  returned: when the GPU Operator decided
  type: dict
gitlab_runner:
  description: >-
    The GitLab runner role's C(removals) and C(pending) changes (empty with state absent); hidden from output,
    as its objects hold the token Secrets.
  returned: when the GitLab runner role decided
  type: dict
arc_runners:
  description: ARC's C(pending) changes; hidden from output, as its objects hold the credentials Secrets.
  returned: when the ARC role decided
  type: dict
pending:
  description: Whether a role that decided found something of its plan not in place.
  returned: with O(fleet)
  type: bool
summary:
  description: What each role that decided will change, in words.
  returned: with O(fleet)
  type: list
  elements: str
releases:
  description: The releases the fleet's converge applies, every decided role's, in the roles' order.
  returned: with O(fleet)
  type: list
  elements: dict
readback:
  description: The reads of the fleet's read-back, every decided role's.
  returned: with O(fleet)
  type: list
  elements: dict
msg:
  description: Why the run stops (a second GPU Operator on the cluster).
  returned: when refused
  type: str
"""
