# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every cluster role's preflight runs whatever --tags a run asks for.

A role's later tasks read what its preflight decided (ARC's plan is made
there), and bad input must be refused before any change: a preflight tagged
only with the role's own tags was skipped by `--tags <role>_scale_sets`,
whose tasks then failed on an undefined plan. The container_toolkit role is
the exception: its preflight gathers facts over SSH on the GPU hosts, which
a run for another role's tags should not do.
"""
import pathlib

import pytest
import yaml

ROLES = pathlib.Path(__file__).resolve().parents[2] / "roles"
CLUSTER_ROLES = ["arc_runners", "gitlab_runner", "gpu_canary", "gpu_operator"]


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_preflight_is_tagged_always(role):
    tasks = yaml.safe_load((ROLES / role / "tasks" / "main.yml").read_text())
    preflight = [task for task in tasks if task.get("ansible.builtin.import_tasks") == "preflight.yml"]
    assert len(preflight) == 1
    assert "always" in preflight[0]["tags"]
    assert "%s_preflight" % role in preflight[0]["tags"]
