# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The images the charts' own components run, which the testbed imports when provided.

The real node has no registry, and the project cannot build these images (their
sources are not served by the Go module proxy), so a maintainer provides each
as an archive (tools/testbed/lib/images.py, docs/testbed-images.md). The
references the testbed expects are checked against the real charts in
../shared/charts; a provided archive must carry its reference and the files
the chart's containers run. Archive tests skip when the archive is not provided.
"""

import gzip
import io
import json
import re
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
TESTBED = REPO / "tools" / "testbed"
sys.path.insert(0, str(TESTBED))
from lib.images import (  # noqa: E402
    COMPONENT_IMAGES, GITLAB_RUNNER_HELPER_IMAGE, GITLAB_RUNNER_IMAGE, UPSTREAM_IMAGES, provided_dir,
)
from lib.layout import charts_dir  # noqa: E402

CHARTS = charts_dir()


def _archive_or_skip(reference):
    """The provided archive whose image is `reference`."""
    for path in sorted(provided_dir().glob("*.tar")):
        with tarfile.open(path) as tar:
            index = json.loads(tar.extractfile("index.json").read())
        names = {m.get("annotations", {}).get("io.containerd.image.name") for m in index["manifests"]}
        if reference in names:
            return path
    pytest.skip(f"{reference} is not provided to the testbed ({provided_dir()}; docs/testbed-images.md)")


class Chart:
    """A chart read from its .tgz: values, Chart.yaml and template texts (subcharts left out)."""

    def __init__(self, tgz):
        if not tgz.is_file():
            pytest.skip(f"{tgz} is missing (the testbed's charts; set GPUCI_CHARTS_DIR)")
        with tarfile.open(tgz) as tar:
            files = {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode()
                     for m in tar.getmembers() if m.isfile() and "/charts/" not in m.name}
        self.meta = yaml.safe_load(files["Chart.yaml"])
        self.values = yaml.safe_load(files["values.yaml"])
        self.templates = {k: v for k, v in files.items() if k.startswith("templates/")}


class Image:
    """An image archive written by oci_image.py: reference, config and the merged file list."""

    def __init__(self, path):
        with tarfile.open(path) as tar:
            self._members = {m.name: m for m in tar.getmembers()}
            self._tar = tar
            index = json.loads(self._read("index.json"))
            (entry,) = index["manifests"]
            self.ref = entry["annotations"]["io.containerd.image.name"]
            self.oci_ref = entry["annotations"]["org.opencontainers.image.ref.name"]
            self.docker_tags = json.loads(self._read("manifest.json"))[0]["RepoTags"]
            manifest = json.loads(self._read(self._blob(entry["digest"])))
            self.config = json.loads(self._read(self._blob(manifest["config"]["digest"])))["config"]
            self.files = {}
            for layer in manifest["layers"]:
                with tarfile.open(fileobj=io.BytesIO(gzip.decompress(self._read(self._blob(layer["digest"]))))) as lt:
                    for m in lt.getmembers():
                        self.files[m.name.lstrip("./")] = m
        self.labels = self.config.get("Labels", {})
        self.env = dict(item.split("=", 1) for item in self.config.get("Env", []))

    @staticmethod
    def _blob(digest):
        return "blobs/sha256/" + digest.split(":", 1)[1]

    def _read(self, name):
        return self._tar.extractfile(self._members[name]).read()

    def executable(self, path):
        """True when PATH (absolute, or a command looked up in the image's PATH) is an executable or a link."""
        candidates = [path.lstrip("/")] if path.startswith("/") else \
            [f"{d.strip('/')}/{path}" for d in self.env["PATH"].split(":")]
        for name in candidates:
            member = self.files.get(name)
            if member is not None and (member.issym() or (member.isfile() and member.mode & 0o111)):
                return True
        return False


def _assert_named(image, ref):
    assert image.ref == ref
    assert image.oci_ref == ref
    assert image.docker_tags == [ref]


def test_expected_references_are_what_the_charts_deploy():
    """tools/testbed/lib/images.py names, per provided component, exactly the images the real charts ask for."""
    arc = Chart(CHARTS / "gha-runner-scale-set-controller-0.14.2.tgz")
    operator = Chart(CHARTS / "gpu-operator-v26.7.0.tgz")
    operator_version = operator.meta["appVersion"]
    assert UPSTREAM_IMAGES == {
        "arc-controller": (f"{arc.values['image']['repository']}:{arc.values['image']['tag'] or arc.meta['appVersion']}",),
        "gpu-operator": (_operand_ref(operator.values, "operator", operator_version),),
        "device-plugin": (_operand_ref(operator.values, "devicePlugin", operator_version),),
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


# --- ARC controller ---------------------------------------------------------

@pytest.fixture(scope="module")
def arc_image():
    return Image(_archive_or_skip(UPSTREAM_IMAGES["arc-controller"][0]))


@pytest.fixture(scope="module")
def arc_chart():
    return Chart(CHARTS / "gha-runner-scale-set-controller-0.14.2.tgz")


def test_arc_image_has_the_reference_the_controller_chart_deploys(arc_image, arc_chart):
    image = arc_chart.values["image"]
    ref = f"{image['repository']}:{image['tag'] or arc_chart.meta['appVersion']}"
    _assert_named(arc_image, ref)
    # The listener pods use the controller's own image (CONTROLLER_MANAGER_CONTAINER_IMAGE).
    assert "CONTROLLER_MANAGER_CONTAINER_IMAGE" in arc_chart.templates["templates/deployment.yaml"]


def test_arc_image_runs_the_manager_and_the_listener(arc_image, arc_chart):
    deployment = arc_chart.templates["templates/deployment.yaml"]
    assert '- "/manager"' in deployment
    for command in ("/manager", "/ghalistener"):
        assert arc_image.executable(command), command
    assert arc_image.config["Entrypoint"] == ["/manager"]
    assert arc_image.config["User"] == "65532:65532"
    assert arc_image.files["tmp"].mode & 0o1777 == 0o1777
    assert arc_image.files["etc/ssl/certs/ca-certificates.crt"].size > 100_000


# --- GPU Operator -----------------------------------------------------------

@pytest.fixture(scope="module")
def operator_image():
    return Image(_archive_or_skip(UPSTREAM_IMAGES["gpu-operator"][0]))


@pytest.fixture(scope="module")
def operator_chart():
    return Chart(CHARTS / "gpu-operator-v26.7.0.tgz")


def _operand_ref(values, key, app_version):
    spec = values[key]
    return f"{spec['repository']}/{spec['image']}:{spec.get('version') or app_version}"


def test_operator_image_has_the_reference_the_chart_deploys(operator_image, operator_chart):
    app_version = operator_chart.meta["appVersion"]
    ref = _operand_ref(operator_chart.values, "operator", app_version)
    _assert_named(operator_image, ref)
    # The validator operand is the same image.
    assert _operand_ref(operator_chart.values, "validator", app_version) == ref


def test_operator_image_runs_what_the_chart_and_its_hooks_run(operator_image, operator_chart):
    texts = operator_chart.templates
    assert 'command: ["gpu-operator"]' in texts["templates/operator.yaml"]
    commands = {"gpu-operator", "nvidia-validator"}
    for name in ("templates/upgrade_crd.yaml", "templates/cleanup_crd.yaml", "templates/cleanup_gpucluster.yaml"):
        commands.update(re.findall(r"^\s*- (/usr/bin/[\w-]+)\s*$", texts[name], re.M))
    assert {"/usr/bin/manage-crds", "/usr/bin/cleanup-gpuclusters"} <= commands
    for command in commands:
        assert operator_image.executable(command), command
    assert operator_image.executable("sh")
    filepaths = set()
    for name in ("templates/upgrade_crd.yaml", "templates/cleanup_crd.yaml"):
        filepaths.update(re.findall(r"--filepath=(\S+)", texts[name]))
    assert filepaths
    for path in filepaths:
        assert operator_image.files[path.lstrip("/")].isfile(), path
    assert operator_image.config["User"] == "1000:1000"
    assert operator_image.env["NVIDIA_VISIBLE_DEVICES"] == "void"


def test_operator_image_holds_the_operand_manifests(operator_image):
    states = {"pre-requisites", "state-operator-metrics", "state-driver", "state-container-toolkit",
              "state-operator-validation", "state-device-plugin", "state-mps-control-daemon", "state-dcgm",
              "state-dcgm-exporter", "gpu-feature-discovery", "state-mig-manager", "state-node-status-exporter"}
    for state in sorted(states):
        yamls = [n for n in operator_image.files if n.startswith(f"opt/gpu-operator/{state}/") and n.endswith(".yaml")]
        assert yamls, f"/opt/gpu-operator/{state} has no manifests"
    assert any(n.startswith("opt/gpu-operator/manifests/state-driver/") for n in operator_image.files)
    for name in ("plugin-workload-validation.yaml", "cuda-workload-validation.yaml"):
        assert f"opt/validator/manifests/{name}" in operator_image.files


# --- device plugin ----------------------------------------------------------

@pytest.fixture(scope="module")
def device_plugin_image():
    return Image(_archive_or_skip(UPSTREAM_IMAGES["device-plugin"][0]))


def test_device_plugin_image_has_the_reference_the_cluster_policy_gives(device_plugin_image, operator_chart):
    values = operator_chart.values
    app_version = operator_chart.meta["appVersion"]
    ref = _operand_ref(values, "devicePlugin", app_version)
    # GPU feature discovery runs from the same image.
    assert _operand_ref(values, "gfd", app_version) == ref
    _assert_named(device_plugin_image, ref)


def test_device_plugin_image_runs_what_the_operator_runs(device_plugin_image):
    for command in ("nvidia-device-plugin", "gpu-feature-discovery", "mps-control-daemon", "config-manager",
                    "/bin/sh", "sh"):
        assert device_plugin_image.executable(command), command
    assert device_plugin_image.config["Entrypoint"] == ["nvidia-device-plugin"]
    # The binaries are dynamic (go-nvml binds NVML through the dynamic loader): glibc comes with the image.
    assert "lib64/ld-linux-x86-64.so.2" in device_plugin_image.files
    assert "lib/x86_64-linux-gnu/libc.so.6" in device_plugin_image.files
    assert device_plugin_image.env["NVIDIA_VISIBLE_DEVICES"] == "all"
