# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_operator_host_toolkits filter; documentation in gpu_operator_host_toolkits.yml, logic in
module_utils/gpu_operator/host_toolkits.py.

``hostvars`` is handed over as Ansible gives it: only the group's hosts are
read, two variables each (copying every host's variables would cost more).
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.host_toolkits import gpu_operator_host_toolkits


class FilterModule(object):
    def filters(self):
        return {"gpu_operator_host_toolkits": gpu_operator_host_toolkits}
