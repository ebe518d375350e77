# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuci.runners.canary_gitlab_pipeline: the wait's progress shown while it waits.

Why: a module's output comes back only when it ends, and the canary's
pipeline may wait minutes for runners. When the target is the controller
itself (plugin_utils/target_is_controller.py: local connection, no become, no
task environment, the controller's Python), the same code
(module_utils/gpu_canary/gitlab_pipeline.py) runs here and prints each progress
line as it happens; anywhere else the module runs and returns them.

The token never reaches the display: the progress lines and the result are
scrubbed of it by run_module, and the task's arguments are not echoed.
"""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_pipeline import ARGUMENT_SPEC as MODULE_SPEC
from ansible_collections.gpuci.runners.plugins.plugin_utils.target_is_controller import TargetIsControllerAction

display = Display()


class ActionModule(TargetIsControllerAction):
    _VALID_ARGS = frozenset(MODULE_SPEC)
    _supports_check_mode = True
    NAME = "canary_gitlab_pipeline"
    ARGUMENT_SPEC = MODULE_SPEC
    MISSING_HERE = "python-gitlab is missing here"

    def code_here(self):
        return _code_here()

    def answer(self, code, params):
        answer = code(params, lambda line: display.display("%s (gitlab canary): %s" % (self.host, line)),
                      bool(self._play_context.check_mode))
        if not self._play_context.diff:
            answer.pop("diff", None)
        return answer


def _code_here():
    """run_module, or None where the controller's Python lacks python-gitlab (the module may have it)."""
    try:
        from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_pipeline import (  # pylint: disable=import-outside-toplevel
            HAS_GITLAB,
            run_module,
        )
    except ImportError:
        return None
    return run_module if HAS_GITLAB else None
