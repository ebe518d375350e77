# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_canary role tells the user: lanes without a node, check mode, failed lanes.

The integration tests (tests/integration/test_gpu_canary.py) look for these
words in the play's output; the lines are checked here whole.
"""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.summary import canary_summary
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError


def lane(name, ok=True, reason="", gpu_class="a10", request_text="1 GPU"):
    return {"name": name, "gpu_class": gpu_class, "request_text": request_text,
            "node_check": {"ok": ok, "reason": reason, "matching": [], "schedulable": [], "simulated": []}}


LANES = [lane("a10-cuda-1gpu"), lane("h100-cuda-1gpu", False, "no schedulable node: no node matches", "h100"),
         lane("dri-dri", gpu_class="dri", request_text="/dev/dri")]


def test_lanes_without_a_node_each_get_their_line():
    assert canary_summary({"lanes": LANES})["unplaceable"] == [
        {"name": "h100-cuda-1gpu", "message": "Lane h100-cuda-1gpu (h100, 1 GPU): no schedulable node: no node matches"}]
    assert canary_summary({"lanes": LANES[:1]})["unplaceable"] == []


def test_check_mode_says_which_lanes_would_get_a_job_and_which_would_fail():
    assert canary_summary({"lanes": LANES, "gitlab_mode": False})["check_mode"] == (
        "a10-cuda-1gpu, dri-dri would get a canary Job; h100-cuda-1gpu would fail its node checks.")
    assert canary_summary({"lanes": [LANES[0], LANES[2]], "gitlab_mode": True})["check_mode"] == (
        "a10-cuda-1gpu, dri-dri would get a GitLab job per pool (a canary Job for ARC scale sets); "
        "no lane would fail its node checks.")
    assert canary_summary({"lanes": LANES[1:2]})["check_mode"] == (
        "no lane would get a canary Job; h100-cuda-1gpu would fail its node checks.")


def test_failed_lanes_of_the_report_with_their_reasons():
    report = {"lanes": [{"name": "h100-cuda-1gpu", "result": "failed", "reason": "no schedulable node: no node matches"},
                        {"name": "a10-cuda-1gpu", "result": "scheduled-only", "reason": "simulated node"},
                        {"name": "l40s-cuda-1gpu", "result": "failed", "reason": "RuntimeClass x does not exist"}]}
    summary = canary_summary({"lanes": LANES, "report": report})
    assert summary["failed"] == ["h100-cuda-1gpu", "l40s-cuda-1gpu"]
    assert summary["failures"] == ("2 lane(s) failed: h100-cuda-1gpu: no schedulable node: no node matches; "
                                   "l40s-cuda-1gpu: RuntimeClass x does not exist.")


@pytest.mark.parametrize("report", [None, {"lanes": []}, {}])
def test_no_report_or_no_failed_lane_fails_nothing(report):
    summary = canary_summary({"lanes": LANES, "report": report})
    assert summary["failed"] == []


def test_the_role_may_pass_no_lanes():
    assert canary_summary({"lanes": None})["unplaceable"] == []


def test_bad_input_names_its_path():
    with pytest.raises(ValidationError, match="canary_summary.report: must be a mapping"):
        canary_summary({"lanes": [], "report": ["x"]})
    with pytest.raises(ValidationError, match="canary_summary.lane: unknown key"):
        canary_summary({"lanes": [], "lane": []})
