# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An inventory mistake changes nothing: a converged fleet of inventories/local, then site.yml with the pool
list lost, must leave every pool release as it was and refuse the run naming the mistake.

Two guards stand before a converge's pruning, which removes every pool the cluster holds and the inventory
lacks (issue 62):

- the shared preflight refuses a variable of the collection's prefixes that nothing knows, with the name it
  probably meant (module_utils/common/known_variables.py): `gitlab_runner_pool:` for `gitlab_runner_pools:`;
- the converge refuses to remove every pool the cluster holds while the inventory declares none of them
  (gitlab_runner/removals.py whole_fleet_refusal), for the mistakes the preflight cannot know: a list under
  a name without the collection's prefixes (`gitlab_runners_pools:`).

The mistaken inventories are inventories/local with its gitlab_runner.yml rewritten (its other group_vars
files linked): an extra var cannot take a variable away.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import LOCAL_INVENTORY, helm_releases

RELEASE_PREFIX = "gitlab-runner-"


def pool_releases(cluster) -> set[tuple[str, str, int, str]]:
    """Every revision Helm holds of a GitLab pool release: (namespace, name, revision, status)."""
    return {(r["namespace"], r["name"], r["version"], r["status"]) for r in helm_releases(cluster)
            if r["name"].startswith(RELEASE_PREFIX)}


def inventory_with_pools_under(folder: Path, name: str) -> Path:
    """inventories/local whose gitlab_runner.yml writes its pool list under `name` instead of gitlab_runner_pools."""
    group_vars = folder / "group_vars" / "all"
    group_vars.mkdir(parents=True)
    (folder / "hosts.yml").symlink_to(LOCAL_INVENTORY / "hosts.yml")
    for path in sorted((LOCAL_INVENTORY / "group_vars" / "all").iterdir()):
        if path.name != "gitlab_runner.yml":
            (group_vars / path.name).symlink_to(path)
    text, count = re.subn(r"^gitlab_runner_pools:", f"{name}:",
                          (LOCAL_INVENTORY / "group_vars" / "all" / "gitlab_runner.yml").read_text(), flags=re.M)
    assert count == 1, "inventories/local/group_vars/all/gitlab_runner.yml no longer sets gitlab_runner_pools"
    (group_vars / "gitlab_runner.yml").write_text(text)
    return folder


@pytest.fixture(scope="module")
def converged(testbed, playbooks):
    """inventories/local converged: its pools' releases, as Helm holds them; torn down after."""
    playbooks.run("site.yml").assert_ok()
    releases = pool_releases(testbed)
    assert {name for _ns, name, _rev, status in releases if status == "deployed"} >= {
        RELEASE_PREFIX + "l40s", RELEASE_PREFIX + "a100-mig"}, releases
    yield releases
    playbooks.run("teardown.yml").assert_ok()


def test_a_misspelt_pool_list_is_refused_by_name_and_removes_no_pool(testbed, playbooks, converged, tmp_path):
    inventory = inventory_with_pools_under(tmp_path / "misspelt", "gitlab_runner_pool")
    run = playbooks.run("site.yml", inventory=inventory)
    flat = " ".join(run.output.split())
    assert run.rc != 0, run.output[-4000:]
    assert "gitlab_runner_pool: unknown variable; did you mean gitlab_runner_pools?" in flat, run.output[-4000:]
    assert run.changed == 0, run.output[-4000:]
    assert pool_releases(testbed) == converged, "a pool release was removed or changed"


def test_a_pool_list_lost_under_a_name_no_check_knows_removes_no_pool(testbed, playbooks, converged, tmp_path):
    """`gitlab_runners_pools` carries none of the collection's prefixes: the preflight lets it pass, and the
    converge would prune the whole fleet. It is refused instead, naming every release it would remove and how
    to ask for it."""
    inventory = inventory_with_pools_under(tmp_path / "lost", "gitlab_runners_pools")
    run = playbooks.run("site.yml", inventory=inventory)
    flat = " ".join(run.output.split())
    assert run.rc != 0, run.output[-4000:]
    assert "this converge would remove every pool of fleet" in flat, run.output[-4000:]
    for namespace, name, _revision, status in converged:
        if status == "deployed":
            assert f"{namespace}/{name}" in flat, f"the refusal does not name {namespace}/{name}"
    assert "gitlab_runner_allow_removing_all_pools: true" in flat and "gitlab_runner_state: absent" in flat
    assert run.changed == 0, run.output[-4000:]
    assert pool_releases(testbed) == converged, "a pool release was removed or changed"
