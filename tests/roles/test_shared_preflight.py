# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shared preflight play comes first, and its task name loads the collection's filters.

Its task name is templated in ansible-playbook's own process, and the
filter the name calls loads every filter file of the collection there, once;
the workers Ansible forks for later tasks inherit them. Without it each task
that calls one of the collection's filters loads them all again: a no-op of
site.yml took 0.3 to 0.4 s longer (2026-11-26, docs/reliability.md). The
timing belongs to `make bench`; this keeps its cause from being edited away.
"""
import pathlib
import re

import pytest
import yaml

PLAYBOOKS = pathlib.Path(__file__).resolve().parents[2] / "playbooks"
CLUSTER_PLAYBOOKS = ["site.yml", "gpu_operator.yml", "gitlab_runner.yml", "arc_runners.yml", "canary.yml",
                     "teardown.yml", "plan.yml", "alert_rules.yml"]


def test_the_preflight_task_name_calls_a_collection_filter():
    (play,) = yaml.safe_load((PLAYBOOKS / "preflight.yml").read_text())
    task = play["tasks"][0]
    names = set(re.findall(r"\b(_gpuci_\w+)\b", task["name"].split("{{", 1)[1]))
    assert names, "the task name is no longer templated"
    assert any("gpuci.runners." in str(task.get("vars", {}).get(name, "")) for name in names)


@pytest.mark.parametrize("playbook", CLUSTER_PLAYBOOKS)
def test_cluster_playbooks_import_the_preflight_before_their_roles(playbook):
    plays = yaml.safe_load((PLAYBOOKS / playbook).read_text())
    imports = [play.get("ansible.builtin.import_playbook") for play in plays]
    assert "preflight.yml" in imports
    first_roles = next(index for index, play in enumerate(plays) if "hosts" in play and play["hosts"] != "gpu_hosts")
    assert imports.index("preflight.yml") < first_roles
