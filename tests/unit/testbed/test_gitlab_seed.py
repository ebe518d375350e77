# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GitLab stand-in's seed runners match what the gitlab_runner role would create for inventories/local."""
import json

from lib import gitlab_seed
from lib.gitlab_state import may_take


def test_pools_become_runners_as_the_role_creates_them():
    seeds = gitlab_seed.seed_runners([
        {"name": "l40s", "tags": ["gpu", "l40s"], "token": "glrt-a"},
        {"name": "plain", "token": "glrt-b"},
        {"name": "both", "tags": ["cpu"], "run_untagged": True, "token": "glrt-c"},
        {"name": "made-by-role", "tags": ["cpu"]},
        {"name": "vaulted", "token": "{{ vault_runner_token }}"},
    ])
    assert seeds == [
        {"token": "glrt-a", "description": "l40s", "tag_list": ["gpu", "l40s"], "run_untagged": False,
         "paused": False},
        {"token": "glrt-b", "description": "plain", "tag_list": [], "run_untagged": True, "paused": False},
        {"token": "glrt-c", "description": "both", "tag_list": ["cpu"], "run_untagged": True, "paused": False},
    ]


def test_the_local_inventory_seed(tmp_path):
    path = gitlab_seed.write_seed(tmp_path / "node" / "runners.json")
    assert path.stat().st_mode & 0o077 == 0
    seeds = {s["description"]: s for s in json.loads(path.read_text())}
    assert set(seeds) == {"l40s", "a100-mig", "cpu"}
    assert seeds["cpu"]["token"] == "glrt-testbed-cpu-placeholder"
    # A job for the cpu pool's tags goes to it and to no GPU pool; untagged jobs to none of them.
    assert [name for name, s in seeds.items() if may_take(s, ["cpu"])] == ["cpu"]
    assert [name for name, s in seeds.items() if may_take(s, [])] == []
    assert [name for name, s in seeds.items() if may_take(s, ["gpu", "cuda"])] == ["l40s", "a100-mig"]


def test_the_real_node_starts_the_standin_with_its_repositories_and_seed():
    from pathlib import Path

    from lib import node
    from lib.layout import Layout

    layout = Layout(state=Path("/tmp/state"), charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379,
                    chart_repo_port=18879)
    bins = {name: Path(f"/cache/bin/{name}") for name in ("containerd", "kubelet")}
    argv = next(argv for name, argv, _env in node.commands(layout, bins) if name == "gitlab-standin")
    options = dict(zip(argv[2::2], argv[3::2]))
    assert options["--repos"] == "/tmp/state/node/gitlab-repos"
    assert options["--runners"] == "/tmp/state/node/gitlab-runners.json"
