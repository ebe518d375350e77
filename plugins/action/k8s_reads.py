# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuci.runners.k8s_reads: the reads in the controller's process when it is the target.

Why: every run of site.yml, a no-op included, starts with one k8s_reads
task. As a module it costs the AnsiballZ payload (built by scanning every
module_utils file that kubernetes.core's client imports), a new Python, the
client's imports from that payload, and the temporary files: about 0.4 s of
a 2.1 s no-op on a 2-core controller. When the target is the controller
itself, the same code (module_utils/k8s/reads_client.py) answers the same
reads in this process instead.

The test of "the controller is the target" and the flow are
plugin_utils/target_is_controller.py's, shared with canary_gitlab_pipeline.

Wherever the reads were answered, a result that answers a read of Secrets is
marked no_log here (module_utils/k8s/reads.shown): no task that reads
Secrets shows them, at any verbosity, while a failure is shown whole.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import ARGUMENT_SPEC as MODULE_SPEC, shown
from ansible_collections.gpuci.runners.plugins.plugin_utils.target_is_controller import TargetIsControllerAction


class ActionModule(TargetIsControllerAction):
    _VALID_ARGS = frozenset(MODULE_SPEC)
    NAME = "k8s_reads"
    ARGUMENT_SPEC = MODULE_SPEC
    MISSING_HERE = "the controller lacks the Kubernetes client"

    def code_here(self):
        return _client_here()

    def run(self, tmp=None, task_vars=None):
        reads = self._task.args.get("reads")
        return shown(super().run(tmp, task_vars), reads if isinstance(reads, list) else [])


def _client_here():
    """answer_reads, or None where the controller's Python lacks the Kubernetes client (the module may have it)."""
    try:
        from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads_client import (  # pylint: disable=import-outside-toplevel
            answer_reads,
        )
    except ImportError:
        return None
    return answer_reads
