# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""CI snippets pass yamllint's default rules (users paste them into repositories that lint)."""

import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

from ansible_collections.gpuci.runners.plugins.plugin_utils.ci_yaml import ci_yaml

DEFAULT_RULES = YamlLintConfig("extends: default")
WORKFLOW = {
    "name": "GPU canary (a10)",
    "on": {"workflow_dispatch": {}, "schedule": [{"cron": "17 5 * * *"}]},
    "permissions": {"contents": "read"},
    "jobs": {"gpu-canary": {"runs-on": {"group": "GPUs", "labels": ["a10"]}, "timeout-minutes": 5,
                            "steps": [{"run": "nvidia-smi --query-gpu=name,uuid --format=csv,noheader"}]}},
}
GITLAB_JOBS = {"gpu-canary-l40s": {"tags": ["gpu", "l40s"], "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                                   "variables": {"GIT_STRATEGY": "none"},
                                   "script": ["nvidia-smi -L", "command -v vulkaninfo >/dev/null || { apt-get update -qq"
                                              " && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq vulkan-tools"
                                              " mesa-vulkan-drivers >/dev/null; }"]}}


def _problems(text):
    return [str(p) for p in linter.run(text, DEFAULT_RULES)]


def test_workflow_is_lint_clean_and_keeps_on_as_a_key():
    text = ci_yaml(WORKFLOW, "GPU canary for the scale set a10.")
    assert _problems(text) == []
    assert text.startswith("# GPU canary for the scale set a10.\n---\n")
    assert "'on':" in text
    assert yaml.safe_load(text) == WORKFLOW


def test_gitlab_jobs_are_lint_clean_with_indented_sequences():
    text = ci_yaml(GITLAB_JOBS, "line one\nline two")
    assert _problems(text) == []
    assert "  tags:\n    - gpu\n" in text
    assert yaml.safe_load(text) == GITLAB_JOBS


def test_ansibles_own_yaml_dump_would_fail_the_same_rules():
    """The test can fail: PyYAML's default style (what to_nice_yaml wrote) is not lint-clean."""
    plain = "# header\n" + yaml.safe_dump(GITLAB_JOBS, sort_keys=False)
    assert _problems(plain)
