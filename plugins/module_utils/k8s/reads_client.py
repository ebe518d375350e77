# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The k8s_reads answers from a live cluster, through kubernetes.core's client.

What the module (plugins/modules/k8s_reads.py) and its action plugin
(plugins/action/k8s_reads.py, in the controller's process) share. Apart
from module_utils/k8s/reads.py, which the plans import as filters: this file
imports the Kubernetes client.
"""

from __future__ import annotations

import threading

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import duplicate_keys, read_all, unreachable_message
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService


class _Reader:
    """What K8sService takes as its module: reads use no check mode or apply option; warnings are kept."""
    check_mode = False

    def __init__(self):
        self.params = {}
        self.warnings = []

    def warn(self, warning):
        self.warnings.append(warning)


class LookupsInTurn(K8sService):
    """K8sService whose API lookups (``find_resource``) take turns; its reads still run side by side.

    The client's discovery cache is not safe across threads: a lookup loads
    a group's API on its first use, and one that misses (a kind the API
    server does not serve) rebuilds the whole cache while other threads
    read it. Before the lookups took turns, 2 of 16 first converges on a
    fresh testbed (site.yml, the secret hygiene test) failed with KeyError
    'resources', raised from that cache; which lookup missed was not caught.
    Nothing else of a read touches the cache: the GETs and the waits use the
    resource their lookup returned.
    """

    def __init__(self, client, module):
        super().__init__(client, module)
        self._lookups = threading.Lock()

    def find_resource(self, kind, api_version, fail=False):
        with self._lookups:
            return super().find_resource(kind, api_version, fail)


def answer_reads(params):
    """Answer the validated arguments (module_utils/k8s/reads.ARGUMENT_SPEC).

    Returns the module's result: ``changed``, ``reads`` and ``groups``, or
    ``failed`` and ``msg`` (a key used twice, the API server out of reach
    with the kubeconfig and context named, or an API error of a read).
    """
    doubled = duplicate_keys(params["reads"])
    if doubled:
        return {"failed": True, "msg": "k8s_reads: each read needs its own key; used more than once: %s"
                % ", ".join(doubled)}
    try:
        client = get_api_client(kubeconfig=params["kubeconfig"], context=params["context"])
    # The client asks the API server for its version and API discovery as it
    # is made: whatever fails there (refused, TLS, credentials, a context
    # the kubeconfig lacks), no read can be answered.
    except Exception as error:  # pylint: disable=broad-exception-caught
        return {"failed": True, "msg": unreachable_message(params["kubeconfig"], params["context"], error)}
    reader = _Reader()
    service = LookupsInTurn(client, reader)
    try:
        answers = read_all(service.find, params["reads"])
    except CoreException as error:
        return {"failed": True, "msg": str(error)}
    result = dict(changed=False, **answers)
    if reader.warnings:
        result["warnings"] = reader.warnings
    return result
