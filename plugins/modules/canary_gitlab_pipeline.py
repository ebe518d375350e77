#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: canary_gitlab_pipeline
short_description: Run the GPU canary's jobs as a GitLab pipeline in a canary project
description:
  - Commits the canary's generated C(.gitlab-ci.yml) (one job per runner pool, with the pool's tags and image) to a
    branch of a canary project through GitLab's commits API, only when it differs from the file there (read raw
    first), so a rerun makes no commit.
  - Creates a pipeline on that branch, waits for its jobs while it shows which are pending, running and done, and
    for how long, and reads each job's trace. A job no runner takes within I(pending_timeout) is given up (and
    canceled), as is a job still running after I(run_timeout).
  - While it waits it lists GitLab Runner's job pods in the cluster (by their C(project.runner.gitlab.com/id)
    label, matched to a job by the C(job.runner.gitlab.com/id) annotation) to record the pod and node each job
    ran on; the runner deletes a job's pod when the job ends, so they cannot be read afterwards.
  - It judges nothing; the gpu_canary role gives the result to P(gpuci.runners.canary_verdict#filter) through
    the proof report.
  - Before any change it checks that GitLab answers at I(url), accepts the token, has the project, and lets the
    token's user push to I(ref) (Developer access or more, and push rights where the branch is protected); each
    failure names the gpu_canary variable to fix, never the token.
  - GitLab's transient errors (500, 502, 503, 504, 52x, a refused or reset connection) are retried by python-gitlab
    (its C(retry_transient_errors), with its backoff of 0.1 s doubling, at most 6 times a request, about 6 s), except
    the commit and the creation of the pipeline, which change GitLab and are sent once, since a proxy's 502 does not
    say whether GitLab made them; the next run finds the file committed and makes no second commit.
  - A step that fails after the commit (or after the pipeline was created) fails the task with RV(commit),
    RV(pipeline) and RV(project) as far as they were made, and a RV(msg) that names the commit, so a commit is never
    made silently.
  - Why a module of our own - M(community.general.gitlab_project_variable) and the other community.general GitLab
    modules manage settings, none commits a file only when it changed or runs a pipeline and follows its jobs;
    a series of M(ansible.builtin.uri) tasks could, but would put the token into every task's arguments and
    could not show progress or read the job pods during the wait. This module uses python-gitlab, as
    community.general's GitLab modules do.
  - When the task's target is the controller itself (connection C(local), no C(become), no task C(environment),
    the controller's own Python), its action plugin runs the same code in the controller's process, so the
    progress lines appear while it waits; anywhere else they are returned in RV(progress).
version_added: 0.3.0
author:
  - gpuci.runners maintainers (@gpuci)
requirements:
  - python-gitlab >= 4.4
  - kubernetes (the Python client, for the job pods)
options:
  url:
    description: GitLab's URL, e.g. C(https://gitlab.example.com).
    type: str
    required: true
  api_token:
    description:
      - An access token with the C(api) scope whose user has Developer access (or more) to I(project) and may
        push to I(ref). Never shown.
    type: str
    required: true
  project:
    description: The canary project, by numeric id or full path (C(group/canary)).
    type: str
    required: true
  ref:
    description: The branch the file is committed to and the pipeline runs on.
    type: str
    default: main
  ci_content:
    description: The text of C(.gitlab-ci.yml) to commit.
    type: str
    required: true
  pending_timeout:
    description: Seconds a job may wait for a runner before the canary gives up on it.
    type: int
    default: 300
  run_timeout:
    description: Seconds a job may run once a runner took it.
    type: int
    default: 600
  poll_interval:
    description: Seconds between two looks at the pipeline's jobs.
    type: int
    default: 5
  read_pods:
    description: List the job pods in the cluster during the wait (needs read access to pods in all namespaces).
    type: bool
    default: true
  kubeconfig:
    description: Kubeconfig file of the cluster the runners run in; the client's defaults when unset.
    type: path
  context:
    description: Kubeconfig context.
    type: str
notes:
  - A pipeline's jobs clone the canary project; the commit is made by the token's user.
seealso:
  - name: GitLab commits API
    description: Creating a commit with several files.
    link: https://docs.gitlab.com/api/commits/#create-a-commit-with-multiple-files-and-actions
  - name: GitLab pipelines API
    description: Creating a pipeline and listing its jobs.
    link: https://docs.gitlab.com/api/pipelines/
attributes:
  check_mode:
    description: Reads the project and the file and reports whether it would commit; commits nothing and creates no pipeline.
    support: full
  diff_mode:
    description: Returns the file in the project and the file the canary would commit.
    support: full
"""

EXAMPLES = r"""
- name: Run the canary pipeline
  gpuci.runners.canary_gitlab_pipeline:
    url: https://gitlab.example.com
    api_token: "{{ vault_gitlab_canary_token }}"
    project: platform/gpu-canary
    ref: main
    ci_content: "{{ lookup('ansible.builtin.file', 'gitlab-ci-canary.yml') }}"
    pending_timeout: 300
  register: canary_pipeline
"""

RETURN = r"""
changed:
  description: Whether C(.gitlab-ci.yml) was committed (in check mode, would be).
  returned: always
  type: bool
project:
  description: The canary project's C(id), C(path) and C(web_url).
  returned: success, or a failure after a commit or a pipeline was made
  type: dict
commit:
  description:
    - The commit made (C(id), C(web_url)); null when the file was unchanged or in check mode.
    - Also returned by a failure after the commit, with RV(project) and RV(pipeline) (null when none was created).
  returned: success, or a failure after a commit or a pipeline was made
  type: dict
pipeline:
  description: The pipeline's C(id), C(web_url) and final C(status); null in check mode.
  returned: success, or a failure after a commit or a pipeline was made
  type: dict
msg:
  description: Why the task failed, naming the gpu_canary variable to fix and, when one was made, the commit.
  returned: failure
  type: str
jobs:
  description:
    - The pipeline's jobs by name, each with C(id), C(status), C(tags), C(web_url), C(failure_reason), C(runner)
      (C(id), C(description)), C(gave_up) (C(pending), C(running) or empty), C(canceled), C(pod) (C(name),
      C(namespace), C(node), C(phase) and, for a pod that claims its GPU through DRA, C(claims), each claim's
      C(name), C(claim), C(driver), C(pool) and C(device) as its status said while the job ran; or null when
      never seen) and C(trace) (its last lines, without colours).
  returned: success
  type: dict
progress:
  description: The progress lines of the wait (shown live instead when the action plugin runs the code).
  returned: always
  type: list
  elements: str
pods_note:
  description: Why the job pods could not be read; empty when they could.
  returned: success
  type: str
summary:
  description: One line on what the run did (what check mode would commit; the pipeline, its status and the commit).
  returned: success
  type: str
  sample: "Pipeline 42 (https://gitlab.example.com/g/canary/-/pipelines/42): success; the file was unchanged."
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_pipeline import (
    HAS_GITLAB,
    ARGUMENT_SPEC,
    run_module,
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    if not HAS_GITLAB:
        module.fail_json(msg=missing_required_lib("python-gitlab"))
    progress = []
    result = run_module(module.params, progress.append, module.check_mode)
    result["progress"] = progress
    if result.get("failed"):
        module.fail_json(**result)
    if not module._diff:
        result.pop("diff", None)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
