#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: k8s_reads
short_description: Several kubernetes.core.k8s_info reads in one module run
description:
  - Answers a list of reads, each with the options and the result of
    M(kubernetes.core.k8s_info), in one module run against one cluster.
  - Each read is answered by kubernetes.core's own C(K8sService.find), the
    code behind M(kubernetes.core.k8s_info); only the process is shared.
  - When the API server cannot be reached, it fails saying so, with the
    kubeconfig and context it used; the playbooks need no probe of their own.
  - Why not M(kubernetes.core.k8s_info) - it reads one kind per task, and each
    task starts Python, imports the Kubernetes client and loads API discovery
    again (about 0.55 s per task on a 2-core controller, measured by
    C(make bench)). A role that decides from four kinds pays that four times
    on every run, a no-op rerun included.
  - The reads are in flight together, up to eight at once. The client's
    discovery cache is not safe across threads (a lookup of a kind the API
    server does not serve rebuilds it), so the API lookups inside the reads
    take turns; the requests and waits do not. Against a remote API server
    a run then costs a few round trips rather than one per read, and reads
    that wait (I(wait)) wait side by side. If reads fail, the task fails with
    the error of the first of them in the reads' order.
  - Every answer leaves out C(metadata.managedFields) (the API server's field
    ownership records, about a third of what a read returns), which no caller
    uses and every task that names the answer would carry, and the annotation
    C(kubectl.kubernetes.io/last-applied-configuration), which C(kubectl apply)
    writes with the whole manifest, so a Secret made that way holds its data
    there a second time, in plain text.
  - A result that answers a read of kind C(Secret) (with I(helm_releases) too)
    is marked no_log by the module's action plugin, whatever the task says;
    Ansible shows none of it at any verbosity. A failure is shown, since its
    message names the read and never holds an answer.
  - When the task's target is the controller itself (connection C(local),
    no C(become), no task C(environment), the controller's own Python), its
    action plugin answers the reads in the controller's process instead of
    starting this module; the answers are the same. That saves the module's
    payload, its Python and its imports (about 0.4 s of a 2.1 s no-op
    C(site.yml) on 2 cores). Anywhere else, this module runs as usual.
version_added: 0.2.0
author:
  - gpuci.runners maintainers (@gpuci)
options:
  kubeconfig:
    description:
      - Kubeconfig file. Unset, the Kubernetes client uses C(K8S_AUTH_KUBECONFIG),
        then C(KUBECONFIG), then C(~/.kube/config); the other C(K8S_AUTH_*)
        variables of M(kubernetes.core.k8s_info) work as there.
    type: path
  context:
    description: Kubeconfig context (C(K8S_AUTH_CONTEXT) when unset).
    type: str
  reads:
    description:
      - The reads. They are answered at once, and the answers keep this order.
    type: list
    elements: dict
    required: true
    suboptions:
      key:
        description: Names this read's answer in I(reads) of the result (or in its I(group)); unique there.
        type: str
        required: true
      group:
        description:
          - Puts this read's answer under I(groups.<group>.<key>) instead of I(reads.<key>). Several callers'
            reads go out in one run this way, each finding its answers under its own keys (C(site.yml) reads
            for every role at once, the roles' keys overlapping).
        type: str
      kind:
        description: The kind to read, for example C(Namespace) or C(ClusterPolicy).
        type: str
        required: true
      api_version:
        description: The kind's group and version, for example C(apps/v1).
        type: str
        default: v1
      name:
        description: Read this one object only (an empty answer when it does not exist).
        type: str
      namespace:
        description: Read in this namespace only; unset, in all namespaces (or cluster-scoped).
        type: str
      label_selectors:
        description: Only objects matching every selector, for example C(app.kubernetes.io/part-of=gpuci-runners).
        type: list
        elements: str
        default: []
      field_selectors:
        description: Only objects matching every field selector, for example C(status.phase=Running).
        type: list
        elements: str
        default: []
      hidden_fields:
        description: Fields left out of the answer, for example C([data, stringData]) for Secrets.
        type: list
        elements: str
      helm_releases:
        description:
          - The objects read are Helm's release storage Secrets; answer each as the release revision it holds,
            C({name, namespace, version, status, chart, config}) (C(chart) as C(<name>-<version>), C(config) the
            user values), and leave out Secrets that are not Helm's or cannot be decoded.
          - Why - each storage Secret holds the whole release, chart templates and CRDs included (megabytes for
            a chart with CRDs), which the controller would otherwise parse and carry through every task that
            reads the answer.
        type: bool
        default: false
      wait:
        description: Wait until the objects exist and, with I(wait_condition), meet it.
        type: bool
        default: false
      wait_condition:
        description: The condition to wait for, as M(kubernetes.core.k8s_info) takes it (C(type), C(status), C(reason)).
        type: dict
      wait_timeout:
        description: Seconds to wait at most; the read then fails.
        type: int
        default: 120
      wait_sleep:
        description: Seconds between two looks while waiting.
        type: int
        default: 5
requirements:
  - kubernetes.core 5.0 or later, and what it requires (the C(kubernetes) Python client)
attributes:
  check_mode:
    description: It only reads, so it runs the same in check mode.
    support: full
  diff_mode:
    description: It changes nothing, so there is no difference to show.
    support: none
  platform:
    description:
      - Runs where the task runs. When that is the controller itself (connection
        C(local)), its action plugin answers the reads in the controller's process.
    support: full
    platforms: posix
  action_group:
    description:
      - Use C(group/gpuci.runners.kubernetes) in C(module_defaults) to set I(kubeconfig)
        and I(context) for it and the other Kubernetes and Helm modules the collection uses.
    support: full
    membership:
      - gpuci.runners.kubernetes
"""

EXAMPLES = r"""
- name: What the role decides from, in one run
  gpuci.runners.k8s_reads:
    reads:
      - key: namespaces
        kind: Namespace
      - key: accounts
        kind: ServiceAccount
        label_selectors: [gpuci.runners/fleet=prod, gpuci.runners/pool]
  register: cluster

- name: Use one answer as k8s_info's result
  ansible.builtin.debug:
    msg: "{{ cluster.reads.namespaces.resources | map(attribute='metadata.name') }}"
"""

RETURN = r"""
reads:
  description: One entry per read, by its I(key), each as M(kubernetes.core.k8s_info) returns it.
  returned: always
  type: dict
  sample:
    namespaces:
      api_found: true
      resources: [{apiVersion: v1, kind: Namespace, metadata: {name: default}}]
groups:
  description: The answers of the reads with a I(group), by group, then by I(key).
  returned: always
  type: dict
  sample:
    gitlab_runner:
      namespaces:
        api_found: true
        resources: []
"""

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import ARGUMENT_SPEC
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads_client import answer_reads
from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    result = answer_reads(module.params)
    if result.get("failed"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
