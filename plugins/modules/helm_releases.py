#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: helm_releases
short_description: Bring many Helm releases to their state at once, concurrently
description:
  - Installs, upgrades or uninstalls a list of Helm releases with the C(helm)
    CLI, several at a time, each with C(--wait) and its own rollback on
    failure.
  - A release whose deployed chart, version and user values already equal the
    wanted ones is left alone without downloading its chart, so a rerun that
    changes nothing costs one C(helm list) per namespace and one
    C(helm get values) per release.
  - Each chart some release needs is pulled once, whatever the number of
    releases using it.
  - Why not M(kubernetes.core.helm) - it takes one release per task, an
    Ansible loop runs those one after another, and its action plugin refuses
    C(async); a fleet of 50 runner pools then costs 50 sequential
    C(helm upgrade --wait) calls, and a no-op rerun downloads the chart once
    per release to learn its version. The collection keeps
    M(kubernetes.core.k8s) for its own objects.
version_added: 0.2.0
author:
  - gpuci.runners maintainers (@gpuci)
options:
  releases:
    description:
      - The releases, each in the state it names. Chart sources are one of a
        local chart (I(chart_path)), an OCI registry (I(chart_repo_url)
        C(oci://...)), or a chart repository (I(chart_repo_url) C(http(s)://...)).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Release name.
        type: str
        required: true
      namespace:
        description: Release namespace.
        type: str
        required: true
      state:
        description: C(present) installs or upgrades, C(absent) uninstalls.
        type: str
        choices: [present, absent]
        default: present
      chart:
        description: The chart's name in its repository or registry.
        type: str
      chart_version:
        description: Pinned chart version; required unless I(chart_path) is set.
        type: str
      chart_repo_url:
        description:
          - C(http(s)://) chart repository or C(oci://) registry path holding I(chart).
          - A user and password in it (C(https://user:pass@charts.example.com/stable)) never reach helm's
            command line, which C(ps) shows to every user of the host. helm reads them from a file only the
            controller's user can read, in a folder removed when the task ends - a repositories file of its own
            for an http(s) repository, a registry configuration for C(oci://). The password (or a lone user, a
            token) is masked wherever the task's result shows it.
        type: str
      chart_path:
        description: A local chart directory or packaged chart; wins over I(chart_repo_url).
        type: path
      values:
        description: The release's user values (C(helm get values)).
        type: dict
        default: {}
      wait:
        description:
          - Wait until the release's resources are ready (or, on uninstall, deleted).
          - "On uninstall with helm 4 (4.3.1 checked), helm's waiter may end early and report an object that
            outlives the others (one held by a finalizer, or by I(cascade=foreground)) as C(still exists,
            status Terminating); helm 3 polls each object until it is gone. Where what is waited for
            lingers, set I(wait=false) and wait for it yourself, as the gitlab_runner role does
            (docs/reliability.md)."
        type: bool
        default: true
      cascade:
        description:
          - On uninstall, how Kubernetes deletes the release's dependents (helm C(--cascade)).
          - C(foreground) keeps a Deployment until its pods are gone, so whoever waits for the Deployment
            to be gone also waits for its pods (and their grace period).
        type: str
        choices: [background, foreground, orphan]
        default: background
      atomic:
        description: Roll back a failed install or upgrade (helm C(--atomic), helm 4 C(--rollback-on-failure)).
        type: bool
        default: true
      timeout:
        description: Seconds helm waits for this release.
        type: int
        default: 300
      create_namespace:
        description: Let helm create the namespace.
        type: bool
        default: false
      offline_api_versions:
        description:
          - APIs (C(group/version/Kind)) the chart may test for, given to C(helm template) as C(--api-versions)
            when check mode renders the chart offline (its CRDs not installed yet, the API server cannot map its
            custom resources). Offline, helm knows no cluster's APIs, and a chart that refuses to render without
            one (the GPU Operator's GPUCluster needs C(resource.k8s.io/v1/DeviceClass)) would fail check mode.
            Not used by a real install or upgrade, where helm asks the API server.
        type: list
        elements: str
        default: []
      wave:
        description:
          - Releases run wave by wave, lowest first, each wave's concurrently. A release that needs what
            another installs (a controller chart's CRDs) goes in a later wave. After a wave with a failed
            release the later waves are not run, and their releases are reported failed.
        type: int
        default: 0
  max_workers:
    description:
      - How many helm commands run at once. Helm mostly waits for the API
        server and for pods, so this may exceed the controller's cores.
    type: int
    default: 8
  openapi_validation:
    description:
      - Let helm check each release's rendered objects against the cluster's
        OpenAPI schema itself before it sends them (helm's own default). Off,
        helm runs with C(--disable-openapi-validation).
      - Off by default because on Kubernetes 1.27 and later the API server
        validates fields itself (server-side field validation) and helm 3,
        finding that out from the OpenAPI documents it downloads and parses,
        leaves the checks to the server; the same objects are refused (a wrong
        type) or warned about (an unknown field) either way, and each release
        costs helm about 0.1 CPU second less. Turn it on for an API server
        older than 1.27, where helm's own check is the only one for unknown
        fields.
    type: bool
    default: false
    version_added: 0.3.0
  binary_path:
    description: The helm executable; C(helm) on C(PATH) when unset.
    type: path
  kubeconfig:
    description:
      - Kubeconfig file for helm. Unset, helm uses C(K8S_AUTH_KUBECONFIG),
        then C(KUBECONFIG), then C(~/.kube/config).
    type: path
  context:
    description: Kubeconfig context for helm (C(K8S_AUTH_CONTEXT) when unset).
    type: str
notes:
  - A release left C(pending-install), C(pending-upgrade) or
    C(pending-rollback) by an interrupted run is first rolled back (a first
    install uninstalled), as helm would have done itself. Two runs against
    the same releases at once are not supported.
requirements:
  - helm 3.8 or later, or helm 4, on the controller (the collection's tests run helm 3.22.0 and helm 4.3.1; the execution environment ships helm 4)
attributes:
  check_mode:
    description:
      - Renders each release that would change with helm's own C(--dry-run=server)
        (C(helm template) when its custom resources have no CRD yet) and installs,
        upgrades or uninstalls nothing.
    support: full
  diff_mode:
    description: Returns, for each release that changes, its chart and user values before and after.
    support: full
  platform:
    description: Runs helm where the task runs, the controller in the collection's playbooks.
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
- name: Runner pool releases, at most 8 helm commands at a time
  gpuci.runners.helm_releases:
    releases:
      - name: gitlab-runner-l40s
        namespace: gitlab-runner
        chart: gitlab-runner
        chart_version: 0.86.0
        chart_repo_url: https://charts.gitlab.io
        values: {gitlabUrl: https://gitlab.example.com}
        timeout: 300
      - name: gitlab-runner-old
        namespace: gitlab-runner
        state: absent
"""

RETURN = r"""
releases:
  description: One entry per release, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Release name.
      type: str
    namespace:
      description: Release namespace.
      type: str
    state:
      description: The state asked for.
      type: str
    action:
      description:
        - C(install), C(upgrade), C(unchanged), C(uninstall), C(absent) (nothing to uninstall), or C(unknown)
          when what is deployed could not be read; such a release is left alone and reported failed.
      type: str
    changed:
      description: Whether this release changed, or in check mode would change.
      type: bool
    failed:
      description: Whether helm failed for this release.
      type: bool
"""

import os
import subprocess

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_releases import Helm, apply_releases, url_secrets

_RELEASE_OPTIONS = dict(
    name=dict(type="str", required=True),
    namespace=dict(type="str", required=True),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    chart=dict(type="str"),
    chart_version=dict(type="str"),
    chart_repo_url=dict(type="str"),
    chart_path=dict(type="path"),
    values=dict(type="dict", default={}),
    wait=dict(type="bool", default=True),
    cascade=dict(type="str", choices=["background", "foreground", "orphan"], default="background"),
    atomic=dict(type="bool", default=True),
    timeout=dict(type="int", default=300),
    create_namespace=dict(type="bool", default=False),
    offline_api_versions=dict(type="list", elements="str", default=[]),
    wave=dict(type="int", default=0),
)


def _source_problems(releases: list[dict]) -> list[str]:
    problems = []
    for index, release in enumerate(releases):
        if release["state"] == "absent" or release.get("chart_path"):
            continue
        missing = [key for key in ("chart", "chart_version", "chart_repo_url") if not release.get(key)]
        if missing:
            problems.append(f"releases[{index}] ({release['namespace']}/{release['name']}) needs "
                            f"{', '.join(missing)} (or chart_path)")
    return problems


def main():
    module = AnsibleModule(
        argument_spec=dict(
            releases=dict(type="list", elements="dict", required=True, options=_RELEASE_OPTIONS),
            max_workers=dict(type="int", default=8),
            openapi_validation=dict(type="bool", default=False),
            binary_path=dict(type="path"),
            kubeconfig=dict(type="path"),
            context=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    releases = module.params["releases"]
    # Masked in the result, the invocation's copy of the arguments included.
    for release in releases:
        module.no_log_values.update(url_secrets(release.get("chart_repo_url") or ""))
    problems = _source_problems(releases)
    if problems:
        module.fail_json(msg="; ".join(problems))
    binary = module.params["binary_path"] or module.get_bin_path("helm", required=True)
    kubeconfig = module.params["kubeconfig"] or os.environ.get("K8S_AUTH_KUBECONFIG")
    context = module.params["context"] or os.environ.get("K8S_AUTH_CONTEXT")
    kube_args = (["--kubeconfig", kubeconfig] if kubeconfig else []) + (["--kube-context", context] if context else [])

    def run(argv):
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    helm = Helm(run, binary, kube_args, openapi_validation=module.params["openapi_validation"])
    result = apply_releases(helm, releases, module.check_mode, module.params["max_workers"])
    errors = result.pop("errors")
    diff = result.pop("diff")
    if module._diff:
        result["diff"] = diff
    if errors:
        module.fail_json(msg="; ".join(errors), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
