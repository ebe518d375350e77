# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How removing a pool waits for its runner manager to stop, and for how long.

A removed pool's release is uninstalled with ``--cascade foreground``: the
manager's Deployment stays (a ``foregroundDeletion`` finalizer) until the
garbage collector has deleted its ReplicaSet and pods. A manager pod stops
with GitLab Runner's graceful stop: it takes no new job and exits once its
running jobs end, which the kubelet allows for the pod's
``terminationGracePeriodSeconds`` (the chart's 3600, which the role keeps so
that converging never kills a job) before it kills it. The role then waits,
itself, until the pool's Deployment and pods are gone (``manager_wait``), so
the namespace deleted next goes at once; that wait must outlast the grace
period, whatever ``gitlab_runner_wait_timeout`` (how long a release may take
to become ready) says.

Why the role waits and not helm's ``--wait``: helm 4's delete waiter
(4.3.1, pkg/kube/statuswait.go) skips an object whose first status has not
arrived yet and stops watching once the others are gone, then reports the
Deployment, still held by its finalizer, as "still exists. status:
Terminating": about one removal in three failed so on the testbed, whatever
the timeout. docs/reliability.md tells the story.
"""

from __future__ import annotations

import math

from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import set_selector

# The gitlab-runner chart's default terminationGracePeriodSeconds (values.yaml of 0.86.0, as of every
# version since graceful stop came in): what the manager pod gets unless gitlab_runner_extra_values says.
CHART_GRACE_PERIOD_S = 3600
# After the grace period: the kubelet's kill, the pod's removal from the API, and the garbage
# collector's deletion of the ReplicaSet and then the Deployment, each a few seconds on a busy node.
STOP_SLACK_S = 60
# How often the role asks whether the removed pools' managers are gone.
POLL_S = 2
# The chart labels its Deployment and the manager pods with their release's name.
RELEASE_LABEL = "release"


def manager_grace_period(extra_values) -> int:
    """The managers' terminationGracePeriodSeconds: gitlab_runner_extra_values' own, else the chart's."""
    value = (extra_values or {}).get("terminationGracePeriodSeconds")
    # A value that is not a whole number is the chart's to refuse when it installs; waiting as if it were the
    # chart's default errs on the long side.
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return CHART_GRACE_PERIOD_S
    return value


def removal_timeout(wait_timeout, extra_values) -> int:
    """Seconds an uninstall that waits for the manager pods may take: the longer of the role's wait
    timeout and the managers' grace period plus the time to remove what is left after it."""
    return max(int(wait_timeout), manager_grace_period(extra_values) + STOP_SLACK_S)


def manager_wait(releases, timeout) -> dict:
    """What waits for the removed pools' managers to be gone: ``k8s_reads`` reads of the Deployments and pods
    labelled with their releases, one pair per namespace, asked every ``POLL_S`` for at most ``timeout`` s."""
    names_by_namespace = {}
    for release in releases:
        names_by_namespace.setdefault(release["namespace"], []).append(release["name"])
    reads = [{"key": f"{kind.lower()}s in {namespace}", "api_version": api_version, "kind": kind,
              "namespace": namespace, "label_selectors": [set_selector(RELEASE_LABEL, names)],
              "hidden_fields": ["spec", "status"]}
             for namespace, names in sorted(names_by_namespace.items())
             for api_version, kind in (("apps/v1", "Deployment"), ("v1", "Pod"))]
    return {"reads": reads, "delay": POLL_S, "retries": math.ceil(int(timeout) / POLL_S), "timeout": int(timeout)}
