# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gitlab_runner with a pool that asks for its GPU through DRA (``gpu_allocation: dra``), on the testbed.

Real: the API server (Kubernetes 1.34.4, ``resource.k8s.io/v1``) takes the
pool's ResourceClaimTemplate and compiles its CEL selector as it does on any
cluster (a selector it cannot compile is refused there); the real
gitlab-runner 0.86.0 chart stores the config.toml whose pod_spec patch names
the claim; the converge reads, decides, reruns and removes as it does
everywhere. The DeviceClasses gpu.nvidia.com and mig.nvidia.com are the
testbed's own, made as NVIDIA's DRA driver chart makes them; no DRA driver
runs in this tier, so no claim is allocated here: the GPU-mode tier runs the
real runner's job through a claim on the real node (tests/gpu_mode).

The tests run in file order on one fleet: converge, rerun, leaving DRA, teardown.
"""
from __future__ import annotations

import json

import pytest

from gitlab_runner_support import fleet_of_its_own, runner_table

PLAYBOOK = "gitlab_runner.yml"
FLEET = "gitlab-dra-tests"
NAMESPACE = "gitlab-dra-test"
POOL = "h200-dra"
TEMPLATE = f"{POOL}-gpu"
RESOURCE_API = "resource.k8s.io/v1"
DEVICE_CLASSES = {"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig"}


def dra_pool(**overrides) -> dict:
    return {"name": POOL, "gpu_class": "h200", "gpus": 1, "gpu_allocation": "dra", "namespace": NAMESPACE,
            "token": "glrt-gpuci-dra-test-token", **overrides}


def fleet_vars(pool_list: list[dict], **extra) -> dict:
    return {"gitlab_runner_fleet": FLEET, "gitlab_runner_namespace": NAMESPACE, "gitlab_runner_pools": pool_list,
            **extra}


def leftovers(cluster) -> list[str]:
    selector = f"gpuci.runners/fleet={FLEET}"
    return [obj["metadata"]["name"] for kind, api in (("Namespace", "v1"), ("ResourceClaimTemplate", RESOURCE_API))
            for obj in cluster.list(api, kind, label_selector=selector)]


def claim_templates(cluster) -> list[str]:
    return sorted(obj["metadata"]["name"] for obj in cluster.list(RESOURCE_API, "ResourceClaimTemplate", NAMESPACE))


@pytest.fixture(scope="module")
def fleet(testbed, playbooks):
    """Our own fleet, from nothing to nothing; the testbed's DeviceClasses must be there (testbed.py makes them)."""
    missing = [name for name in DEVICE_CLASSES if not testbed.get(RESOURCE_API, "DeviceClass", name)]
    assert not missing, f"the testbed has no DeviceClass {', '.join(missing)} (tools/testbed makes them at up)"
    with fleet_of_its_own(testbed, playbooks, PLAYBOOK, fleet_vars([], gitlab_runner_state="absent"), leftovers):
        yield testbed


def test_converge_makes_the_pools_claim_template_and_the_patch_that_names_it(fleet, playbooks):
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars([dra_pool()])).assert_ok()
    template = fleet.get(RESOURCE_API, "ResourceClaimTemplate", TEMPLATE, NAMESPACE)
    assert template, f"no ResourceClaimTemplate {NAMESPACE}/{TEMPLATE}"
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    assert request["exactly"]["count"] == 1
    (selector,) = request["exactly"]["selectors"]
    assert selector["cel"]["expression"].endswith('== "NVIDIA-H200"')
    assert template["metadata"]["labels"]["gpuci.runners/pool"] == POOL

    configmap = fleet.core.read_namespaced_config_map(f"gitlab-runner-{POOL}", NAMESPACE)
    runner = runner_table(configmap.data["config.template.toml"])
    (patch,) = [json.loads(entry["patch"]) for entry in runner["kubernetes"]["pod_spec"]]
    assert patch["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": TEMPLATE}]
    assert patch["containers"] == [{"name": "build", "resources": {"claims": [{"name": "gpu"}]}}]
    assert "runtime_class_name" not in runner["kubernetes"]


def test_rerun_changes_nothing(fleet, playbooks):
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars([dra_pool()])).assert_ok()
    assert run.changed == 0, run.output[-4000:]


def test_a_pool_back_on_the_device_plugin_loses_its_claim_template(fleet, playbooks):
    pool = dra_pool(gpu_allocation="device_plugin")
    check = playbooks.run(PLAYBOOK, extra_vars=fleet_vars([pool]), check=True).assert_ok()
    assert f"remove ResourceClaimTemplate {NAMESPACE}/{TEMPLATE}" in check.output
    assert claim_templates(fleet) == [TEMPLATE], "check mode must not delete it"
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars([pool])).assert_ok()
    assert claim_templates(fleet) == []
    rerun = playbooks.run(PLAYBOOK, extra_vars=fleet_vars([pool])).assert_ok()
    assert rerun.changed == 0, rerun.output[-4000:]


def test_state_absent_leaves_no_claim_template(fleet, playbooks):
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars([dra_pool()])).assert_ok()
    assert claim_templates(fleet) == [TEMPLATE]
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars([dra_pool()], gitlab_runner_state="absent")).assert_ok()
    assert leftovers(fleet) == []
