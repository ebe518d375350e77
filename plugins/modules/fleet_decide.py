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
    decides what a converge must apply, remove, label and read back. The result is what the converge changes, which
    the task registers (the role C(gpuci.runners.converge) registers it as C(__converge_changes)) - under each role's
    name what its own steps read (C(gpu_operator.pending), C(gpu_operator.node_patches),
    C(gpu_operator.remove_time_slicing); C(gitlab_runner.pending), C(gitlab_runner.removals),
    C(gitlab_runner.created_secrets); C(arc_runners.pending), C(arc_runners.removals),
    C(arc_runners.stale_monitors)), and for the converge the objects and releases of its one apply, the reads of its
    one read-back, the roles to finish and to check. Fails when the cluster already runs a GPU Operator of another
    release (there can be one per cluster), and when a role's monitor variable is C(on) on a cluster without the
    monitor's CRD (C(gitlab_runner_pod_monitors), C(arc_runners_pod_monitors), C(gpu_operator_dcgm_service_monitor)).
  - Which roles decide and which of their steps run is O(steps) (the filter P(gpuci.runners.fleet_steps#filter),
    from the run's tags).
  - Why not M(ansible.builtin.set_fact) - each task starts a worker process on every run, a rerun that changes
    nothing included; one step decides for every role, in the controller's process.
  - The result holds the runner token and GitHub credentials Secrets - it is hidden (no_log) at every
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
  steps:
    description:
      - Per role, the steps of its converge the run selects (C(decide), C(apply), C(verify)), as the C(roles) of
        P(gpuci.runners.fleet_steps#filter). A role decides when C(decide) is among them.
      - Unset, every role of O(roles) decides, with every step.
    type: dict
attributes:
  check_mode:
    support: full
    description: It changes nothing; in check mode it leaves out what the API server would refuse to dry-run.
  diff_mode:
    support: none
    description: There is nothing to show a difference of.
notes:
  - Used by the collection's roles; it changes nothing.
"""

EXAMPLES = r"""
- name: Decide what every role must change
  gpuci.runners.fleet_decide:
    roles:
      gpu_operator: {plan: "{{ __gpu_operator_plan }}"}
      gitlab_runner: {plan: "{{ __gitlab_runner_plan }}", pools: "{{ gitlab_runner_pools | default([]) }}"}
    read: "{{ __converge_cluster.groups }}"
    steps: {gpu_operator: [decide, apply, verify], gitlab_runner: [decide, apply, verify]}
  register: __converge_changes
# => __converge_changes: {decided: [gpu_operator, gitlab_runner], pending: true,
#    summary: ['GPU Operator: Nothing to change...', 'GitLab runner pools: To change: ...'],
#    objects: [...], releases: [...], readback: [...], finish: [gitlab_runner], verified: [gpu_operator, gitlab_runner],
#    gitlab_runner: {pending: {settled: false, ...}, removals: {...}, created_secrets: []}, ...,
#    changes: {lines: ['GPU Operator: no changes', 'GitLab runner pools: 1 to change',
#                      '  change release gitlab-runner/gitlab-runner-cpu', '      concurrent: 2 -> 3'], ...}}
"""

RETURN = r"""
decided:
  description: The roles that decided, in the order they converge.
  returned: unless a refusal stops the run
  type: list
  elements: str
gpu_operator:
  description: The GPU Operator's C(pending) changes, C(node_patches) and C(remove_time_slicing); hidden from output.
  returned: when the GPU Operator decided
  type: dict
gitlab_runner:
  description: >-
    The GitLab runner role's C(removals), C(pending) changes (empty with state absent) and C(created_secrets) (the
    Secrets of the runners it creates in GitLab, without their token); hidden from output, as its objects hold the
    token Secrets.
  returned: when the GitLab runner role decided
  type: dict
arc_runners:
  description: >-
    ARC's C(pending) changes, C(removals) (our Secrets and ConfigMaps no scale set uses) and C(stale_monitors) (our
    PodMonitors no longer wanted); hidden from output.
  returned: when the ARC role decided
  type: dict
pending:
  description: Whether a role that decided found something of its plan not in place.
  returned: unless a refusal stops the run
  type: bool
summary:
  description: What each role that decided will change, in words.
  returned: unless a refusal stops the run
  type: list
  elements: str
objects:
  description: The objects of the one apply, of the roles whose apply step runs, each once.
  returned: unless a refusal stops the run
  type: list
  elements: dict
releases:
  description: The releases of the one apply, of the roles whose apply step runs, in the roles' order.
  returned: unless a refusal stops the run
  type: list
  elements: dict
create_runners:
  description: The GitLab pools whose runner the apply step creates in GitLab first.
  returned: unless a refusal stops the run
  type: list
  elements: str
readback:
  description: The reads of the one read-back, of the roles whose apply or verify step runs.
  returned: unless a refusal stops the run
  type: list
  elements: dict
finish:
  description: The roles with something pending, whose own finishing steps run.
  returned: unless a refusal stops the run
  type: list
  elements: str
verified:
  description: The roles whose verify step runs, checked against their plans.
  returned: unless a refusal stops the run
  type: list
  elements: str
changes:
  description:
    - What each role that decided would add, change and remove, the list the converge prints before it applies (in
      check mode too) and C(playbooks/plan.yml) prints. It holds no secret - a Secret by name only, values under
      token- or password-like keys hidden, credentials in URLs masked.
    - C(roles) maps each decided role to its C(name) in words, its C(add), C(change) and C(remove) entries (each
      C(what) and C(diff), the short diff of a change) and C(notes) (Deployments a converge would wait for);
      C(lines) are the console lines; C(none) is true when no role has anything to add, change or remove.
  returned: unless a refusal stops the run
  type: dict
msg:
  description: Why the run stops (a second GPU Operator on the cluster).
  returned: when refused
  type: str
"""
