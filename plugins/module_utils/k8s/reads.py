# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Many k8s_info reads in one module run (plugins/modules/k8s_reads.py).

Each read is answered by kubernetes.core's own ``K8sService.find``, the
function behind ``kubernetes.core.k8s_info``, so a read here means exactly
what the same options mean there (selectors, waiting, hidden fields, a kind
the API server does not serve). Only the process is shared.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_storage import stored_release


# The wait condition of a read that waits for a Deployment to be Available.
AVAILABLE = {"type": "Available", "status": "True"}
# The module's arguments; its action plugin validates them with the same spec.
READ_OPTIONS = dict(
    key=dict(type="str", required=True, no_log=False),
    group=dict(type="str"),
    kind=dict(type="str", required=True),
    api_version=dict(type="str", default="v1"),
    name=dict(type="str"),
    namespace=dict(type="str"),
    label_selectors=dict(type="list", elements="str", default=[]),
    field_selectors=dict(type="list", elements="str", default=[]),
    hidden_fields=dict(type="list", elements="str"),
    helm_releases=dict(type="bool", default=False),
    wait=dict(type="bool", default=False),
    wait_condition=dict(type="dict"),
    wait_timeout=dict(type="int", default=120),
    wait_sleep=dict(type="int", default=5),
)
# The cluster as the playbooks' module_defaults name it; kubernetes.core's
# client reads every other connection setting from K8S_AUTH_* variables.
ARGUMENT_SPEC = dict(kubeconfig=dict(type="path"), context=dict(type="str"),
                     reads=dict(type="list", elements="dict", required=True, options=READ_OPTIONS))
# Left out of every answer: the API server's field ownership records, a third
# of what a read returns, which no caller uses and every task that names the
# answer would carry.
ALWAYS_HIDDEN = ["metadata.managedFields"]
# Left out of every answer too: the annotation `kubectl apply` writes, which
# copies the whole manifest as it was applied. For a Secret made that way (a
# user's ARC credentials Secret, for instance) it holds the token in plain
# text, so hiding data and stringData alone would hide nothing. No caller
# uses it. Removed here, not through find's hidden_fields: kubernetes.core
# reads a key holding dots (metadata.annotations[...]) only from 5.2.0 on, and
# the collection supports 5.0.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Reads in flight at once. A read is a GET, or a wait that polls one: they
# spend their time on the API server, not here, so a run of 21 reads takes
# about as long as its slowest few, and its waits run side by side.
CONCURRENT_READS = 8


def reads_secrets(reads):
    """True when a read is of Secrets (Helm's storage Secrets included): then nothing of the answer is shown.

    The action plugin (plugins/action/k8s_reads.py) marks such a result no_log
    itself, so a task that reads Secrets shows none of them at any verbosity,
    whether or not its YAML says no_log, while its failure, which holds no
    Secret, is still shown whole (a task's no_log would hide that too).
    """
    return any(str((read or {}).get("kind", "")) == "Secret" for read in reads or [])


def shown(result, reads):
    """The module's ``result`` as Ansible may show it: marked no_log when it answers a read of Secrets.

    A failure is left as it is: its message names the read, never an answer.
    """
    if result.get("failed") or not reads_secrets(reads):
        return result
    return dict(result, _ansible_no_log=True)


def without_last_applied(resource):
    """``resource`` without the ``kubectl apply`` annotation (LAST_APPLIED), and its annotations if that was all."""
    annotations = ((resource or {}).get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or LAST_APPLIED not in annotations:
        return resource
    kept = dict((key, value) for key, value in annotations.items() if key != LAST_APPLIED)
    metadata = dict(resource["metadata"])
    if kept:
        metadata["annotations"] = kept
    else:
        del metadata["annotations"]
    return dict(resource, metadata=metadata)


def read(group, key, kind, api_version="v1", **options):
    """One read as the module takes it: the roles' plans say what their role reads this way.

    ``group`` puts its answer under ``groups.<group>.<key>``; the other
    options are the module's (``name``, ``namespace``, ``label_selectors``,
    ``hidden_fields``, ``helm_releases``, ``wait``...).
    """
    return dict({"group": group, "key": key, "kind": kind, "api_version": api_version}, **options)


def duplicate_keys(reads):
    """The keys used by more than one read of one group, sorted (``group/key``): each answer needs its own key."""
    seen, doubled = set(), set()
    for read in reads:
        name = "%s/%s" % (read["group"], read["key"]) if read.get("group") else read["key"]
        (doubled if name in seen else seen).add(name)
    return sorted(doubled)


def unreachable_message(kubeconfig, context, error):
    """Why no read could be answered: the API server, as the kubeconfig and context name it, was not reached."""
    return "Cannot reach the Kubernetes API server with kubeconfig %s and context %s: %s" % (
        kubeconfig or "(default: K8S_AUTH_KUBECONFIG, KUBECONFIG or ~/.kube/config)",
        context or "(the kubeconfig's current)", error)


def read_all(find, reads):
    """Answer each read with ``find`` (K8sService.find), up to CONCURRENT_READS at once.

    Returns ``{"reads": {key: answer}, "groups": {group: {key: answer}}}``,
    each answer k8s_info's result, in the reads' order; a read with a
    ``group`` is answered under it. Each read comes as the module's argument
    spec fills it in (its defaults are k8s_info's). ``find`` raises on an API
    error, as k8s_info fails: the first read in order that failed raises
    here, after every read has ended; the other answers are of no use to a
    caller that must then stop. A read with ``helm_releases`` is answered
    with the releases Helm's storage Secrets hold, not the Secrets
    (module_utils/k8s/helm_storage.py).
    """
    with ThreadPoolExecutor(max_workers=CONCURRENT_READS) as pool:
        pending = [pool.submit(_outcome, find, read) for read in reads]
    answers = {"reads": {}, "groups": {}}
    for read, future in zip(reads, pending):
        answer, error = future.result()
        if error is not None:
            raise error
        where = answers["groups"].setdefault(read["group"], {}) if read.get("group") else answers["reads"]
        where[read["key"]] = answer
    return answers


def _outcome(find, read):
    """``(answer, None)``, or ``(None, error)``: read_all raises the first error in the reads' order."""
    try:
        return _answer(find, read), None
    except Exception as error:  # pylint: disable=broad-exception-caught
        return None, error


def _answer(find, read):
    answer = find(
        read["kind"], read["api_version"], name=read["name"], namespace=read["namespace"],
        label_selectors=read["label_selectors"], field_selectors=read["field_selectors"],
        wait=read["wait"], wait_sleep=read["wait_sleep"], wait_timeout=read["wait_timeout"],
        condition=read["wait_condition"], hidden_fields=ALWAYS_HIDDEN + list(read["hidden_fields"] or []))
    if answer.get("resources"):
        answer = dict(answer, resources=[without_last_applied(resource) for resource in answer["resources"]])
    if read.get("helm_releases"):
        answer = dict(answer, resources=[
            release for release in map(stored_release, answer.get("resources") or []) if release])
    return answer
