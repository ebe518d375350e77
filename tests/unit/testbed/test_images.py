# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which charts' components the testbed runs for real: those whose every image containerd holds."""
from pathlib import Path

import pytest
import yaml

from lib import images
from lib.layout import Layout

REPO = Path(__file__).resolve().parents[3]

RUNNER, HELPER = images.COMPONENT_IMAGES["gitlab-runner"]
OPERATOR = images.UPSTREAM_IMAGES["gpu-operator"][0]


def test_a_component_is_real_only_with_all_its_images():
    held = {images.PAUSE_IMAGE, images.BASE_IMAGE, OPERATOR, RUNNER}
    assert images.real_components(held) == ["gpu-operator"]
    missing = images.missing_images(held)
    assert missing["gitlab-runner"] == [HELPER], "the runner without its helper cannot run a job"
    assert "gpu-operator" not in missing
    assert images.real_components(held | {HELPER}) == ["gitlab-runner", "gpu-operator"]


def test_the_list_is_written_for_the_inventory_and_read_back(tmp_path):
    layout = Layout(state=tmp_path, charts_dir=tmp_path, apiserver_port=1, etcd_port=2, chart_repo_port=3)
    assert images.read_real_components(layout) == [], "no real node, nothing real"
    images.write_real_components(layout, {OPERATOR})
    assert (tmp_path / images.REAL_COMPONENTS_FILE).read_text() == '["gpu-operator"]\n'
    assert images.read_real_components(layout) == ["gpu-operator"]


def test_provided_archives_come_after_the_testbeds_own(tmp_path, monkeypatch):
    # A cache of its own, holding a built pause archive: the test needs no testbed build.
    built = tmp_path / "cache" / "images"
    built.mkdir(parents=True)
    (built / f"pause-{images.pinned('PAUSE_VERSION')}.tar").write_bytes(b"built")
    monkeypatch.setenv("GPUCI_TESTBED_CACHE", str(tmp_path / "cache"))
    provided = tmp_path / "provided"
    provided.mkdir()
    monkeypatch.setenv("GPUCI_TESTBED_UPSTREAM_IMAGES", str(provided))
    (provided / "b.tar").write_bytes(b"")
    (provided / "a.tar").write_bytes(b"")
    (provided / "notes.txt").write_text("not an archive")
    archives = images.archives()
    assert archives[0].name.startswith("pause-")
    assert [p.name for p in archives[-2:]] == ["a.tar", "b.tar"]


@pytest.mark.parametrize("inventory_name", ["local", "gpu-proof"])
def test_the_testbed_inventories_name_the_runner_images_the_testbed_builds(inventory_name):
    """The testbed's inventories set the chart's image values and helper_image to exactly what build-images.sh builds."""
    group_vars = REPO / "inventories" / inventory_name / "group_vars" / "all"
    cluster = yaml.safe_load((group_vars / "cluster.yml").read_text())
    manager = cluster["gpuci_testbed_gitlab_runner_image"]
    assert f"{manager['registry']}/{manager['image']}:{manager['tag']}" == RUNNER
    assert cluster["gpuci_testbed_gitlab_runner_helper_image"] == HELPER
    pools = [pool for path in group_vars.glob("*.yml")
             for pool in (yaml.safe_load(path.read_text()) or {}).get("gitlab_runner_pools") or []]
    assert pools and all(pool["helper_image"] == "{{ gpuci_testbed_gitlab_runner_helper_image }}" for pool in pools)
