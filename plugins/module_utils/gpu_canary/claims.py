# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a DRA lane's pod was given: the devices allocated to its claims, as the cluster said while it ran.

A pod that names a ResourceClaimTemplate gets a ResourceClaim made for it;
the pod's ``status.resourceClaimStatuses`` names that claim (by the pod's
own claim name, ``gpu``), and the claim's ``status.allocation.devices.results``
say which devices of which driver and pool the scheduler allocated. NVIDIA's
DRA driver publishes a node's GPUs in a pool named after the node, so a
device's pool says where the GPU is.

The allocation only lives as long as the pod runs: the resource claim
controller clears it and deletes a generated claim once its pod is done
(kubernetes pkg/controller/resourceclaim, 1.34). So the claims are read while
the job runs (the role's claim wait, the GitLab module's polls), never after.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import metadata


def pod_claims(pod, claims):
    """``[{name, claim, driver, pool, device}]``: each device allocated to a claim of ``pod``.

    ``claims`` are ResourceClaim objects read while the pod ran. A claim of
    the pod that was not among them, or had no allocation, is one entry with
    ``driver``, ``pool`` and ``device`` None: the pod asked, nothing was seen
    given. A pod without claims gives ``[]``.
    """
    statuses = dict((status.get("name"), status.get("resourceClaimName"))
                    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or [])
    namespace = metadata(pod).get("namespace")
    by_name = dict((metadata(claim).get("name"), claim) for claim in claims or []
                   if not namespace or metadata(claim).get("namespace") in (None, namespace))
    entries = []
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
        # A template's claim is named in the pod's status; a claim the pod names directly is its own name.
        claim_name = statuses.get(pod_claim.get("name")) or pod_claim.get("resourceClaimName")
        results = _results(by_name.get(claim_name))
        if not results:
            entries.append({"name": pod_claim.get("name"), "claim": claim_name, "driver": None, "pool": None,
                            "device": None})
        entries += [{"name": pod_claim.get("name"), "claim": claim_name, "driver": result.get("driver"),
                     "pool": result.get("pool"), "device": result.get("device")} for result in results]
    return entries


def allocated(entries):
    """The entries (pod_claims') that name an allocated device."""
    return [entry for entry in entries or [] if entry.get("device")]


def claims_allocated(pod, claims):
    """True when every claim of ``pod`` is among ``claims`` with an allocation (a pod without claims: True)."""
    entries = pod_claims(pod, claims)
    return all(entry.get("device") for entry in entries)


def asks_for_claims(pod_spec):
    """True when a pod spec names resource claims (a DRA lane's pod)."""
    return bool((pod_spec or {}).get("resourceClaims"))


def _results(claim):
    allocation = ((claim or {}).get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])
