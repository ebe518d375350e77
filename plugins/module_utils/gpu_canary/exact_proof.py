# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The exact proof: did a lane's job see what the lane promises, no more, no less?

A GPU row in a job's output shows that *a* GPU was there; the lane promises
more: its class's GPU (the product of the class catalogue,
gpu/classes.py, matched by gpu/product_names.py), as many of them as its
``gpus`` (a MIG lane: one MIG device, of its profile), on a node of its
class (the node's labels match the lane's node selector: its class's, with
its pools' own merged over it). ``Wanted`` is that promise, ``Seen`` what
one job showed (its output, and the node its pod ran on, with that node's
labels as the canary read them), and ``differences`` the one comparison,
for the canary's Jobs (verdict.py) and the pools' GitLab jobs
(gitlab_verdict.py) alike. A lane is ``proved`` only when it returns none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import DEVICE_LINES
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.claims import allocated
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DRA
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.product_names import same_product
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import labels_match


@dataclass(frozen=True)
class Wanted:
    """What a lane promises its jobs; ``product`` and ``devices`` are None where its check lists no GPU (dri, cpu).

    ``claimed`` is a DRA lane's device count of its claim (None for others),
    ``device_class`` the claim's DeviceClass.
    """

    gpu_class: str
    product: Optional[str]
    devices: Optional[int]
    mig_profile: Optional[str]
    node_selector: dict
    claimed: Optional[int] = None
    device_class: Optional[str] = None

    @classmethod
    def of_lane(cls, lane):
        listed = lane["check"] in DEVICE_LINES
        claim = (lane.get("claim") or {}) if lane.get("gpu_allocation") == DRA else None
        return cls(lane["gpu_class"], lane.get("product") if listed else None, lane["count"] if listed else None,
                   lane.get("mig_profile"), dict(lane.get("node_selector") or {}),
                   int(claim.get("count") or 0) if claim is not None else None,
                   claim.get("device_class") if claim is not None else None)

    def __str__(self):
        if self.devices is None:
            what = "its devices"
        elif self.mig_profile:
            what = "1 MIG device %s of %s" % (self.mig_profile, self.product or "any GPU")
        else:
            what = "%s of %s" % (_gpus(self.devices), self.product or "any product")
        claim = ""
        if self.claimed is not None:
            claim = ", and %s of %s allocated to its DRA claim from that node's pool" % (
                _devices(self.claimed), self.device_class)
        return "%s (class %s) on a node with %s%s" % (what, self.gpu_class, _selector(self.node_selector), claim)


@dataclass(frozen=True)
class Seen:
    """What one job showed: the GPUs it listed (by name), its MIG devices (by profile), its pod's node and labels.

    ``node`` is None when the job's pod was never seen on a node;
    ``node_labels`` None when that node was not among the nodes read.
    ``allocated`` is, for a DRA lane's job, the ``(pool, device)`` of each
    device allocated to its pod's claims as read while it ran (None for
    other lanes).
    """

    gpus: tuple
    mig_devices: tuple
    node: Optional[str]
    node_labels: Optional[dict]
    allocated: Optional[tuple] = None

    @classmethod
    def in_output(cls, check, lines, node, labels_by_node, claims=None):
        """``claims``: a DRA job's pod_claims entries (gpu_canary/claims.py); None for other lanes."""
        patterns = DEVICE_LINES.get(check, {})
        devices = None if claims is None else tuple((entry["pool"], entry["device"]) for entry in allocated(claims))
        return cls(_listed(patterns.get("gpu"), "name", lines), _listed(patterns.get("mig"), "profile", lines),
                   node or None, labels_by_node.get(node) if node else None, devices)

    def describe(self, wanted):
        """What the job saw, in the terms of ``wanted``: of its node, the labels that the lane's selector names."""
        if not self.node:
            where = "no node (its pod was not seen)"
        elif self.node_labels is None:
            where = "node %s (not among the nodes read)" % self.node
        else:
            shown = dict((key, self.node_labels.get(key, "unset")) for key in wanted.node_selector)
            where = "node %s (%s)" % (self.node, _selector(shown))
        if wanted.devices is None:
            return "its devices on %s" % where
        gpus = "%s (%s)" % (_gpus(len(self.gpus)), ", ".join(self.gpus)) if self.gpus else "no GPU"
        migs = " with %s" % _migs(self.mig_devices) if wanted.mig_profile else ""
        return "%s%s%s on %s" % (gpus, migs, self._claimed(wanted), where)

    def _claimed(self, wanted):
        if wanted.claimed is None:
            return ""
        if not self.allocated:
            return ", no device allocated to its claim,"
        return ", its claim allocated %s," % ", ".join("device %s of pool %s" % (device, pool)
                                                       for pool, device in self.allocated)


def differences(wanted, seen):
    """Each way ``seen`` is not what ``wanted`` promises, as a short sentence; empty when it is exactly that."""
    gaps = []
    if wanted.product:
        gaps += ["GPU %s is not the class's %s" % (name, wanted.product)
                 for name in sorted(set(seen.gpus)) if not same_product(name, wanted.product)]
        if not seen.gpus:
            gaps.append("no GPU name was listed")
    if wanted.mig_profile and seen.mig_devices != (wanted.mig_profile,):
        gaps.append("%s, not exactly one MIG device %s" % (_migs(seen.mig_devices), wanted.mig_profile))
    elif not wanted.mig_profile and wanted.devices is not None and len(seen.gpus) != wanted.devices:
        gaps.append("%s, not %d" % (_gpus(len(seen.gpus)), wanted.devices))
    if wanted.node_selector:
        if not seen.node:
            gaps.append("the node is unknown")
        elif seen.node_labels is None:
            gaps.append("node %s was not among the nodes read, so its class is unknown" % seen.node)
        elif not labels_match(seen.node_labels, wanted.node_selector):
            gaps.append("node %s is not of class %s" % (seen.node, wanted.gpu_class))
    if wanted.claimed is not None:
        gaps += claim_gaps(wanted, seen)
    return gaps


def claim_gaps(wanted, seen):
    """A DRA job's gaps: its claim allocated nothing seen, another count, or devices of another node's pool."""
    if not seen.allocated:
        return ["its claim shows no allocated device: none was allocated, or none was seen while the pod ran, the "
                "only time a claim shows one"]
    gaps = []
    if len(seen.allocated) != wanted.claimed:
        gaps.append("%s allocated to its claim, not %d" % (_devices(len(seen.allocated)), wanted.claimed))
    gaps += ["device %s is allocated from pool %s, not from its node %s" % (device, pool, seen.node or "(unknown)")
             for pool, device in seen.allocated if pool != seen.node]
    return gaps


def exact_proof_problem(lane, lines, node, labels_by_node, claims=None):
    """Why a job whose output has the check's evidence still does not prove ``lane``; "" when it does.

    ``claims``: a DRA lane's job's pod_claims entries (None for other lanes).
    """
    wanted, seen = Wanted.of_lane(lane), Seen.in_output(lane["check"], lines, node, labels_by_node, claims)
    gaps = differences(wanted, seen)
    return "not what the lane promises: %s (%s)" % (_sight(wanted, seen), "; ".join(gaps)) if gaps else ""


def allocation_proof(lane, claims):
    """What a proved DRA lane's reason adds: the devices its claim was allocated, from its node's pool ("" for others)."""
    if lane.get("gpu_allocation") != DRA:
        return ""
    return "; its claim was allocated %s, its node's" % ", ".join(
        "device %s of pool %s" % (entry["device"], entry["pool"]) for entry in allocated(claims))


def what_was_seen(lane, lines, node, labels_by_node, claims=None):
    """"the job saw ...; the lane wants ..." for a lane whose check lists its devices; "" for the others (dri, cpu)."""
    if lane["check"] not in DEVICE_LINES:
        return ""
    return _sight(Wanted.of_lane(lane), Seen.in_output(lane["check"], lines, node, labels_by_node, claims))


def _sight(wanted, seen):
    return "the job saw %s; the lane wants %s" % (seen.describe(wanted), wanted)


def _listed(pattern, group, lines):
    if not pattern:
        return ()
    return tuple(match.group(group).strip() for match in (re.search(pattern, line) for line in lines) if match)


def _gpus(count):
    return "%d GPU%s" % (count, "" if count == 1 else "s")


def _devices(count):
    return "%d device%s" % (count, "" if count == 1 else "s")


def _migs(profiles):
    return "MIG device%s %s" % ("s" if len(profiles) > 1 else "", ", ".join(profiles)) if profiles else "no MIG device"


def _selector(selector):
    return ", ".join("%s=%s" % pair for pair in sorted(selector.items())) or "any labels"
