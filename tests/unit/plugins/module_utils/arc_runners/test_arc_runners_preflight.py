# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runners role's per-scale-set rules: each passes a good scale set, and refuses a bad one naming its inventory path."""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.preflight import (
    arc_runners_preflight,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import (
    ARC_CHART_SCALE_SET_NAME_MAX,
    ARC_SCALE_SET_NAME_MAX,
    HELM_RELEASE_NAME_MAX,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

TOKEN = "ghp_UNIT-SECRET-123"
PRIVATE_KEY = "-----BEGIN KEY----- UNIT-SECRET-456"
APP = {"github_app_id": 123, "github_app_installation_id": "456", "github_app_private_key": PRIVATE_KEY}
SECRETS = (TOKEN, PRIVATE_KEY, "UNIT-SECRET")


def settings(*scale_sets, **role):
    base = {
        "arc_runners_scale_sets": list(scale_sets) or [scale_set()],
        "arc_runners_state": "present",
        "arc_runners_scale_set_namespace": "arc-runners",
        "arc_runners_runtime_class": None,
    }
    base.update(role)
    return base


def scale_set(**keys):
    result = {"name": "gpu-a10", "gpu_class": "a10", "github_config_url": "https://github.com/example-org",
              "github_token": TOKEN}
    result.update(keys)
    return result


def problems_of(value, gpu_classes=None):
    problems = arc_runners_preflight(value, gpu_classes)
    for text in problems:
        assert not any(secret in text for secret in SECRETS), text
    return problems


def refused(value, path, reason):
    problems = problems_of(value)
    assert any(text.startswith(path + ": ") and reason in text for text in problems), problems
    return problems


def test_good_scale_sets_pass():
    assert problems_of(settings()) == []
    app = dict(scale_set(name="app", container_mode="kubernetes", work_volume_claim={"size": "10Gi"}), **APP)
    del app["github_token"]
    secret = scale_set(name="cpu", gpu_class=None, github_config_secret="existing", namespace="ci", min_runners=1,
                       max_runners=1, container_mode="dind")
    del secret["github_token"]
    assert problems_of(settings(scale_set(), app, secret)) == []


def test_the_name_limit_is_the_charts_under_helms():
    assert ARC_SCALE_SET_NAME_MAX == min(HELM_RELEASE_NAME_MAX, ARC_CHART_SCALE_SET_NAME_MAX) == 45
    assert problems_of(settings(scale_set(name="a" * 45))) == []
    refused(settings(scale_set(name="a" * 46)), "arc_runners_scale_sets[name=%s].name" % ("a" * 46),
            "at most 45 characters")


def test_repeated_names_are_refused_once():
    problems = refused(settings(scale_set(name="twin"), scale_set(name="twin", state="absent")),
                       "arc_runners_scale_sets[name=twin].name", "must be unique: 2 scale sets")
    assert len(problems) == 1


def test_repeated_names_are_refused_when_tearing_down_too():
    refused(settings(scale_set(name="twin"), scale_set(name="twin"), arc_runners_state="absent"),
            "arc_runners_scale_sets[name=twin].name", "must be unique")


@pytest.mark.parametrize("url", ["github.com/example-org", "https://github.com", "ftp://github.com/org", "https://github.com/a b"])
def test_the_config_url_must_be_an_http_url_below_a_host(url):
    refused(settings(scale_set(github_config_url=url)), "arc_runners_scale_sets[name=gpu-a10].github_config_url",
            "must be the https:// URL")


def test_a_missing_config_url_is_required():
    entry = scale_set()
    del entry["github_config_url"]
    refused(settings(entry), "arc_runners_scale_sets[name=gpu-a10].github_config_url", "is required")


def test_absent_scale_sets_and_teardown_are_not_checked_beyond_names():
    bad = scale_set(github_config_url="nowhere", min_runners=3, max_runners=1, github_token=None)
    assert problems_of(settings(dict(bad, state="absent"))) == []
    assert problems_of(settings(bad, arc_runners_state="absent")) == []


def test_no_credentials_are_refused():
    refused(settings(scale_set(github_token=None)), "arc_runners_scale_sets[name=gpu-a10]", "got none")
    refused(settings(scale_set(github_token="")), "arc_runners_scale_sets[name=gpu-a10]", "got none")


def test_two_kinds_of_credentials_are_refused():
    refused(settings(scale_set(github_config_secret="existing")), "arc_runners_scale_sets[name=gpu-a10]",
            "got github_token and github_config_secret")
    refused(settings(scale_set(**APP)), "arc_runners_scale_sets[name=gpu-a10]", "got github_token and GitHub App")


def test_an_incomplete_github_app_names_the_missing_keys():
    problems = refused(settings(scale_set(github_token=None, github_app_id=1, github_app_installation_id=2)),
                       "arc_runners_scale_sets[name=gpu-a10].github_app_private_key", "is required")
    assert len(problems) == 1


def test_namespaces_must_be_dns_labels():
    refused(settings(scale_set(namespace="CI_Jobs")), "arc_runners_scale_sets[name=gpu-a10].namespace", "'CI_Jobs'")
    refused(settings(arc_runners_scale_set_namespace="ARC"), "arc_runners_scale_set_namespace", "DNS label")


def test_kubernetes_mode_needs_a_work_volume_claim():
    refused(settings(scale_set(container_mode="kubernetes")), "arc_runners_scale_sets[name=gpu-a10].work_volume_claim",
            "is required with container_mode kubernetes")


@pytest.mark.parametrize("mode", [None, "none", "dind"])
def test_a_work_volume_claim_outside_kubernetes_mode_is_refused(mode):
    refused(settings(scale_set(container_mode=mode, work_volume_claim={"size": "1Gi"})),
            "arc_runners_scale_sets[name=gpu-a10].work_volume_claim", "only used with container_mode kubernetes")


def test_min_runners_must_not_exceed_max_runners():
    assert problems_of(settings(scale_set(min_runners=0, max_runners=0))) == []
    refused(settings(scale_set(min_runners=3, max_runners=1)), "arc_runners_scale_sets[name=gpu-a10].min_runners",
            "must not exceed max_runners (1) (got 3)")


def test_gpu_keys_are_checked_by_rendering_the_template():
    refused(settings(scale_set(gpus=2, mig_profile="1g.10gb", gpu_class="a100")),
            "arc_runners_scale_sets[name=gpu-a10].mig_profile", "")
    refused(settings(scale_set(gpu_class="v100")), "arc_runners_scale_sets[name=gpu-a10].gpu_class", "unknown GPU class")


def test_gpu_classes_of_the_inventory_count():
    assert problems_of(settings(scale_set(gpu_class="l4"))) != []
    assert problems_of(settings(scale_set(gpu_class="l4")), {"l4": {"product": "NVIDIA-L4", "gpu_access": ["cuda"]}}) == []


def test_a_nameless_scale_set_is_named_by_its_index():
    entry = scale_set()
    del entry["name"]
    refused(settings(scale_set(), entry), "arc_runners_scale_sets[1].name", "is required")


def test_scale_sets_must_be_a_list_of_mappings():
    with pytest.raises(ValidationError, match=r"^arc_runners_scale_sets: must be a list"):
        arc_runners_preflight(settings(arc_runners_scale_sets={"name": "x"}))


def test_credentials_never_appear_in_any_problem():
    bad = [scale_set(name="Bad", github_config_url="nowhere", github_config_secret="s", gpus=0, **APP),
           scale_set(name="half", github_token=None, github_app_private_key=PRIVATE_KEY, container_mode="kubernetes",
                     github_app_id=TOKEN)]
    problems = arc_runners_preflight(settings(*bad))
    assert len(problems) >= 5, problems
    text = "\n".join(problems)
    assert TOKEN not in text and PRIVATE_KEY not in text and "UNIT-SECRET" not in text


# `lane`, gpu_access's old name, is no longer read: a scale set that writes it is refused by its inventory
# path, with the key to write instead (`lane` is the canary's word only).
@pytest.mark.parametrize("extra", [{}, {"gpu_access": "cuda"}])
def test_lane_is_refused_naming_the_scale_set_and_gpu_access(extra):
    problems = refused(settings(scale_set(lane="cuda", **extra), scale_set(name="vulkan", gpu_class="dri")),
                       "arc_runners_scale_sets[name=gpu-a10].lane",
                       "was renamed gpu_access; set arc_runners_scale_sets[name=gpu-a10].gpu_access instead")
    assert len(problems) == 1, problems


def test_a_state_outside_present_and_absent_is_named_with_the_scale_set():
    refused(settings(scale_set(state="gone")), "arc_runners_scale_sets[name=%s].state" % scale_set()["name"],
            "must be one of present, absent")


def test_a_bad_role_namespace_is_one_problem_however_many_scale_sets_take_it():
    scale_sets = [scale_set(name=name) for name in ("a", "b", "c")]
    assert problems_of(settings(*scale_sets, arc_runners_scale_set_namespace="Bad_NS")) == [
        "arc_runners_scale_set_namespace: must be a DNS label of at most 63 characters (a-z, 0-9, -) (got 'Bad_NS')"]
    assert problems_of(settings(scale_set(namespace="ci"), arc_runners_scale_set_namespace="Bad_NS")) == []


@pytest.mark.parametrize("state", ["present", "absent"])
def test_the_wait_timeout_is_seconds_named_by_its_variable(state):
    """Helm's timeout: "five minutes" used to reach helm's --timeout."""
    refused(settings(arc_runners_wait_timeout="five minutes", arc_runners_state=state), "arc_runners_wait_timeout",
            "must be a whole number of seconds >= 1, such as 600 (got 'five minutes')")
    assert problems_of(settings(arc_runners_wait_timeout=600)) == []


@pytest.mark.parametrize("size, reason", [("10GB", "is not a Kubernetes quantity"), ("0", "must be more than 0")])
def test_the_work_volume_claim_size_is_a_quantity_kubernetes_takes(size, reason):
    claimed = scale_set(container_mode="kubernetes", work_volume_claim={"size": size})
    refused(settings(claimed), "arc_runners_scale_sets[name=gpu-a10].work_volume_claim.size", reason)
