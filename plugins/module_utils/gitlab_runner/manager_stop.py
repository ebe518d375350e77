# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How long removing a pool may wait for its runner manager to stop.

A removed pool's release is uninstalled with ``--cascade foreground --wait``
(``wait_for_pods`` of ``helm_releases``): helm returns once the manager's
Deployment is gone, and the garbage collector deletes that Deployment only
after its pods. A manager pod stops with GitLab Runner's graceful stop: it
takes no new job and exits once its running jobs end, which the kubelet
allows for the pod's ``terminationGracePeriodSeconds`` (the chart's 3600,
which the role keeps so that converging never kills a job) before it kills
it. So the uninstall's wait must outlast that grace period, whatever
``gitlab_runner_wait_timeout`` (how long a release may take to become
ready) says. With a shorter one, helm gives up while the manager is still
stopping: helm 4 fails with "resource Deployment/<ns>/<name> still exists.
status: Terminating" (its kstatus waiter, pkg/kube/statuswait.go), helm 3
with "timed out waiting for the condition", and the pool is half removed.
docs/reliability.md tells the cause.
"""

from __future__ import annotations

# The gitlab-runner chart's default terminationGracePeriodSeconds (values.yaml of 0.86.0, as of every
# version since graceful stop came in): what the manager pod gets unless gitlab_runner_extra_values says.
CHART_GRACE_PERIOD_S = 3600
# After the grace period: the kubelet's kill, the pod's removal from the API, and the garbage
# collector's deletion of the ReplicaSet and then the Deployment, each a few seconds on a busy node.
STOP_SLACK_S = 60


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
