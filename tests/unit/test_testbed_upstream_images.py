# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The images the charts' own components run, which the testbed imports when provided.

The real node has no registry, and the project cannot build these images (their
sources are not served by the Go module proxy), so a maintainer provides each
as an archive (tools/testbed/lib/images.py, docs/testbed-images.md). The
references the testbed expects are checked against the real charts in
../shared/charts; what a provided archive must hold is read from those charts
(tools/testbed/lib/provided_images.py), and the testbed refuses an archive
that lacks it. The check is tested here on archives written by
tools/testbed/oci_image.py: stand-ins with exactly the required files (empty
executables), not the upstream images, which this machine does not have.
"""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTBED = REPO / "tools" / "testbed"
sys.path.insert(0, str(TESTBED))
import oci_image  # noqa: E402
from lib.images import COMPONENT_IMAGES, GITLAB_RUNNER_HELPER_IMAGE, GITLAB_RUNNER_IMAGE, UPSTREAM_IMAGES  # noqa: E402
from lib.layout import charts_dir  # noqa: E402
from lib.provided_images import (  # noqa: E402
    ARC_CHART, OPERATOR_CHART, REQUIREMENTS, Chart, ImageArchive, operand_ref, check, problems,
    refuse_wrong_archives,
)

CHARTS = charts_dir()
if not (CHARTS / OPERATOR_CHART).is_file():
    pytest.skip(f"{CHARTS} lacks the testbed's charts (set GPUCI_CHARTS_DIR)", allow_module_level=True)


def test_expected_references_are_what_the_charts_deploy():
    """tools/testbed/lib/images.py names, per provided component, exactly the images the real charts ask for."""
    arc = Chart(CHARTS / ARC_CHART)
    operator = Chart(CHARTS / OPERATOR_CHART)
    operator_version = operator.meta["appVersion"]
    assert UPSTREAM_IMAGES == {
        "arc-controller": (f"{arc.values['image']['repository']}:{arc.values['image']['tag'] or arc.meta['appVersion']}",),
        "gpu-operator": (operand_ref(operator.values, "operator", operator_version),),
        "device-plugin": (operand_ref(operator.values, "devicePlugin", operator_version),),
    }


def test_gitlab_runner_is_built_under_the_testbeds_own_names():
    """GitLab Runner is built here (tools/testbed/gitlab-runner), never passed off as the chart's official image."""
    runner = Chart(CHARTS / "gitlab-runner-0.86.0.tgz")
    official = runner.values["image"]["registry"]
    assert COMPONENT_IMAGES["gitlab-runner"] == (GITLAB_RUNNER_IMAGE, GITLAB_RUNNER_HELPER_IMAGE)
    for ref in COMPONENT_IMAGES["gitlab-runner"]:
        assert ref.startswith("gpuci.local/testbed/") and official not in ref
    # The testbed runs a newer runner than the chart's appVersion: the one the proxy serves.
    assert runner.meta["appVersion"] not in GITLAB_RUNNER_IMAGE


# --- what each archive must hold, read from the charts -----------------------------

def test_the_arc_controller_needs_what_its_deployment_and_listeners_run():
    needs = REQUIREMENTS["arc-controller"](CHARTS)
    assert needs.ref == UPSTREAM_IMAGES["arc-controller"][0]
    assert needs.executables == ("/manager", "/ghalistener")
    # The listener pods use the controller's own image.
    assert "CONTROLLER_MANAGER_CONTAINER_IMAGE" in Chart(CHARTS / ARC_CHART).templates["templates/deployment.yaml"]
    assert needs.config == {"Entrypoint": ["/manager"], "User": "65532:65532"}
    assert needs.world_writable_sticky == ("tmp",)


def test_the_gpu_operator_needs_what_its_deployment_hooks_and_validator_run():
    needs = REQUIREMENTS["gpu-operator"](CHARTS)
    assert needs.ref == UPSTREAM_IMAGES["gpu-operator"][0]
    operator = Chart(CHARTS / OPERATOR_CHART)
    values, app_version = operator.values, operator.meta["appVersion"]
    assert operand_ref(values, "validator", app_version) == needs.ref  # the validator operand is the same image
    assert {"gpu-operator", "nvidia-validator", "/usr/bin/manage-crds", "/usr/bin/cleanup-gpuclusters",
            "sh"} <= set(needs.executables)
    crd_files = [f for f in needs.files if f.endswith(".yaml") and not f.startswith("opt/validator/")]
    assert crd_files, "the CRD hooks' --filepath files"
    assert "opt/gpu-operator/state-device-plugin" in needs.manifests_under
    assert needs.config == {"User": "1000:1000"} and needs.env == {"NVIDIA_VISIBLE_DEVICES": "void"}


def test_the_device_plugin_needs_what_the_operator_runs_from_it():
    needs = REQUIREMENTS["device-plugin"](CHARTS)
    operator = Chart(CHARTS / OPERATOR_CHART)
    values, app_version = operator.values, operator.meta["appVersion"]
    assert needs.ref == UPSTREAM_IMAGES["device-plugin"][0]
    assert operand_ref(values, "gfd", app_version) == needs.ref  # GPU feature discovery runs from it too
    assert {"nvidia-device-plugin", "gpu-feature-discovery", "config-manager"} <= set(needs.executables)
    assert "lib/x86_64-linux-gnu/libc.so.6" in needs.files


# --- the check, on stand-in archives -------------------------------------------------

def stand_in(tmp_path: Path, needs, *, leave_out: str = "", **config) -> Path:
    """An archive holding exactly what `needs` asks for (empty executables), less the path `leave_out`."""
    root = tmp_path / "root"
    root.mkdir()

    def make(path: str, mode: int, size: int = 0) -> None:
        if path == leave_out:
            return
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"x" * size)
        target.chmod(mode)

    for command in needs.executables:
        make(command.lstrip("/") if command.startswith("/") else f"usr/bin/{command}", 0o755)
    for path in needs.files:
        make(path, 0o644)
    for folder in needs.manifests_under:
        make(f"{folder}/0100_manifest.yaml", 0o644)
    for path, size in needs.sizes.items():
        make(path, 0o644, size)
    for folder in needs.world_writable_sticky:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder).chmod(0o1777)
    image_config = {**needs.config, **config}
    members = oci_image.build(needs.ref, [oci_image.layer_from_dir(root)], entrypoint=image_config.get("Entrypoint"),
                              user=image_config.get("User", ""), env=[f"{k}={v}" for k, v in needs.env.items()])
    out = tmp_path / "provided" / (needs.ref.replace("/", "_").replace(":", "_") + ".tar")
    out.parent.mkdir(exist_ok=True)
    oci_image.write_archive(members, out)
    return out


@pytest.mark.parametrize("component", sorted(REQUIREMENTS))
def test_an_archive_with_all_its_chart_needs_passes(tmp_path, component):
    assert check(stand_in(tmp_path, REQUIREMENTS[component](CHARTS)), CHARTS) == []


def test_an_archive_lacking_a_command_or_running_as_another_user_is_named_with_both(tmp_path):
    needs = REQUIREMENTS["arc-controller"](CHARTS)
    archive = stand_in(tmp_path, needs, leave_out="ghalistener", User="0:0")
    assert problems(ImageArchive(archive), needs) == [
        "no executable /ghalistener", "User is '0:0', not '65532:65532'"]


def test_the_testbed_refuses_a_wrong_archive_naming_it_and_an_image_no_chart_deploys(tmp_path):
    needs = REQUIREMENTS["device-plugin"](CHARTS)
    wrong = stand_in(tmp_path, needs, leave_out="usr/bin/config-manager")
    other = oci_image.build("example.org/not-a-chart-image:1", [oci_image.layer_from_dir(tmp_path / "root")])
    oci_image.write_archive(other, wrong.parent / "other.tar")
    with pytest.raises(SystemExit) as refused:
        refuse_wrong_archives(wrong.parent, CHARTS)
    message = str(refused.value)
    assert f"{wrong}: no executable config-manager" in message
    assert f"{wrong.parent / 'other.tar'}: example.org/not-a-chart-image:1 is not an image the charts deploy" in message
    assert "docs/testbed-images.md" in message


def test_no_provided_archive_is_nothing_to_refuse(tmp_path):
    assert refuse_wrong_archives(tmp_path, tmp_path / "no-charts") == []
