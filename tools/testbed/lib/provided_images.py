# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a provided image archive must hold, read from the real charts, and the check the testbed runs on each.

The charts' own components (the GPU Operator, the ARC controller, the device
plugin) run images this project cannot build; a maintainer provides their
archives (lib/images.py, docs/testbed-images.md). Before the real node imports
them, the testbed checks each one against what its chart runs: the reference
the chart deploys, the commands its containers and hooks start, the files
they read, the user and environment they expect. A wrong archive is refused
with every problem named, before any pod pulls it, instead of failing as a
crash loop far from its cause.
"""
from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .images import UPSTREAM_IMAGES, provided_dir
from .layout import charts_dir

ARC_CHART = "gha-runner-scale-set-controller-0.14.2.tgz"
OPERATOR_CHART = "gpu-operator-v26.7.0.tgz"
# The GPU Operator's operand states: the folders of manifests it applies, one per state it reconciles.
OPERATOR_STATES = ("pre-requisites", "state-operator-metrics", "state-driver", "state-container-toolkit",
                   "state-operator-validation", "state-device-plugin", "state-mps-control-daemon", "state-dcgm",
                   "state-dcgm-exporter", "gpu-feature-discovery", "state-mig-manager", "state-node-status-exporter")
OPERATOR_HOOKS = ("templates/upgrade_crd.yaml", "templates/cleanup_crd.yaml", "templates/cleanup_gpucluster.yaml")


class Chart:
    """A chart read from its .tgz: values, Chart.yaml and template texts (subcharts left out)."""

    def __init__(self, tgz: Path):
        if not tgz.is_file():
            raise SystemExit(f"testbed: {tgz} is missing (the testbed's charts; set GPUCI_CHARTS_DIR)")
        with tarfile.open(tgz) as tar:
            files = {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode()
                     for m in tar.getmembers() if m.isfile() and "/charts/" not in m.name}
        self.meta = yaml.safe_load(files["Chart.yaml"])
        self.values = yaml.safe_load(files["values.yaml"])
        self.templates = {k: v for k, v in files.items() if k.startswith("templates/")}


class ImageArchive:
    """An image archive (OCI layout and Docker's manifest.json): its references, config and merged files."""

    def __init__(self, path: Path):
        with tarfile.open(path) as tar:
            members = {m.name: m for m in tar.getmembers()}

            def read(name):
                return tar.extractfile(members[name]).read()

            index = json.loads(read("index.json"))
            entry = index["manifests"][0]
            annotations = entry.get("annotations", {})
            self.ref = annotations.get("io.containerd.image.name", "")
            self.names = {annotations.get("io.containerd.image.name"), annotations.get("org.opencontainers.image.ref.name"),
                          *json.loads(read("manifest.json"))[0].get("RepoTags", [])} - {None}
            manifest = json.loads(read(_blob(entry["digest"])))
            self.config = json.loads(read(_blob(manifest["config"]["digest"]))).get("config", {})
            self.files: dict[str, tarfile.TarInfo] = {}
            for layer in manifest["layers"]:
                with tarfile.open(fileobj=io.BytesIO(gzip.decompress(read(_blob(layer["digest"]))))) as layer_tar:
                    for member in layer_tar.getmembers():
                        self.files[member.name.lstrip("./")] = member
        self.env = dict(item.split("=", 1) for item in self.config.get("Env", []))

    def executable(self, command: str) -> bool:
        """An absolute path, or a command on the image's PATH, that is an executable file or a link."""
        candidates = [command.lstrip("/")] if command.startswith("/") else \
            [f"{folder.strip('/')}/{command}" for folder in self.env.get("PATH", "").split(":")]
        return any(m is not None and (m.issym() or (m.isfile() and m.mode & 0o111))
                   for m in map(self.files.get, candidates))


def _blob(digest: str) -> str:
    return "blobs/sha256/" + digest.split(":", 1)[1]


@dataclass(frozen=True)
class Requirements:
    """What one component's image must hold for its chart's containers to run."""
    ref: str
    executables: tuple[str, ...]  # absolute paths, or commands looked up on the image's PATH
    files: tuple[str, ...] = ()  # regular files, relative to the root
    manifests_under: tuple[str, ...] = ()  # folders that must hold at least one .yaml
    sizes: dict[str, int] = field(default_factory=dict)  # files at least this many bytes
    world_writable_sticky: tuple[str, ...] = ()  # folders with mode 1777 (a non-root user's /tmp)
    config: dict = field(default_factory=dict)  # image config keys (Entrypoint, User)
    env: dict[str, str] = field(default_factory=dict)


def operand_ref(values: dict, key: str, app_version: str) -> str:
    spec = values[key]
    return f"{spec['repository']}/{spec['image']}:{spec.get('version') or app_version}"


def arc_controller(charts: Path) -> Requirements:
    chart = Chart(charts / ARC_CHART)
    image = chart.values["image"]
    # The manager's Deployment runs /manager; the listener pods it makes run /ghalistener from the same image
    # (CONTROLLER_MANAGER_CONTAINER_IMAGE). As a non-root user it writes to /tmp, and it calls GitHub over TLS.
    return Requirements(
        ref=f"{image['repository']}:{image['tag'] or chart.meta['appVersion']}",
        executables=tuple(re.findall(r'^\s*- "(/\w+)"\s*$', chart.templates["templates/deployment.yaml"], re.M))
        + ("/ghalistener",),
        sizes={"etc/ssl/certs/ca-certificates.crt": 100_000}, world_writable_sticky=("tmp",),
        config={"Entrypoint": ["/manager"], "User": "65532:65532"})


def gpu_operator(charts: Path) -> Requirements:
    chart = Chart(charts / OPERATOR_CHART)
    hooks = [chart.templates[name] for name in OPERATOR_HOOKS]
    commands = re.findall(r'^\s*command: \["([\w-]+)"\]', chart.templates["templates/operator.yaml"], re.M)
    hook_commands = sorted({c for text in hooks for c in re.findall(r"^\s*- (/usr/bin/[\w-]+)\s*$", text, re.M)})
    crd_files = sorted({p.lstrip("/") for text in hooks for p in re.findall(r"--filepath=(\S+)", text)})
    return Requirements(
        ref=operand_ref(chart.values, "operator", chart.meta["appVersion"]),
        # The operator, the validator operand (the same image) and the hooks' commands; sh for the validator.
        executables=(*commands, "nvidia-validator", *hook_commands, "sh"),
        files=(*crd_files, "opt/validator/manifests/plugin-workload-validation.yaml",
               "opt/validator/manifests/cuda-workload-validation.yaml"),
        manifests_under=(*(f"opt/gpu-operator/{state}" for state in OPERATOR_STATES),
                         "opt/gpu-operator/manifests/state-driver"),
        config={"User": "1000:1000"}, env={"NVIDIA_VISIBLE_DEVICES": "void"})


def device_plugin(charts: Path) -> Requirements:
    chart = Chart(charts / OPERATOR_CHART)
    # The operator runs the plugin, GPU feature discovery (the same image), MPS and the config manager from it.
    # Its binaries are dynamic (go-nvml binds NVML through the loader), so glibc comes with the image.
    return Requirements(
        ref=operand_ref(chart.values, "devicePlugin", chart.meta["appVersion"]),
        executables=("nvidia-device-plugin", "gpu-feature-discovery", "mps-control-daemon", "config-manager",
                     "/bin/sh", "sh"),
        files=("lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6"),
        config={"Entrypoint": ["nvidia-device-plugin"]}, env={"NVIDIA_VISIBLE_DEVICES": "all"})


REQUIREMENTS = {"arc-controller": arc_controller, "gpu-operator": gpu_operator, "device-plugin": device_plugin}


def problems(image: ImageArchive, needs: Requirements) -> list[str]:
    """Everything `image` lacks of `needs`, one line each; [] when it has it all."""
    found = []
    if image.names != {needs.ref}:
        found.append(f"named {sorted(image.names)}, not only {needs.ref}")
    found += [f"no executable {c}" for c in needs.executables if not image.executable(c)]
    found += [f"no file /{f}" for f in needs.files if not (image.files.get(f) and image.files[f].isfile())]
    found += [f"no manifests under /{d}" for d in needs.manifests_under
              if not any(n.startswith(d + "/") and n.endswith(".yaml") for n in image.files)]
    found += [f"/{f} is under {size} bytes" for f, size in needs.sizes.items()
              if not (image.files.get(f) and image.files[f].size >= size)]
    found += [f"/{d} is not mode 1777" for d in needs.world_writable_sticky
              if not (image.files.get(d) and image.files[d].mode & 0o1777 == 0o1777)]
    found += [f"{key} is {image.config.get(key)!r}, not {value!r}" for key, value in needs.config.items()
              if image.config.get(key) != value]
    found += [f"{key}={image.env.get(key)!r} in its environment, not {value!r}" for key, value in needs.env.items()
              if image.env.get(key) != value]
    return found


def check(path: Path, charts: Path) -> list[str]:
    """The problems of one provided archive: of its component, or that it is no component's image."""
    image = ImageArchive(path)
    component = next((name for name, refs in UPSTREAM_IMAGES.items() if image.ref in refs), None)
    if component is None:
        return [f"{image.ref or 'no reference'} is not an image the charts deploy "
                f"({', '.join(ref for refs in UPSTREAM_IMAGES.values() for ref in refs)})"]
    return problems(image, REQUIREMENTS[component](charts))


def refuse_wrong_archives(folder: Path | None = None, charts: Path | None = None) -> list[Path]:
    """The provided archives, each checked; a wrong one stops the testbed, naming it and what it lacks."""
    folder, charts = folder or provided_dir(), charts or charts_dir()
    archives = sorted(folder.glob("*.tar"))
    wrong = {path: found for path in archives if (found := check(path, charts))}
    if wrong:
        raise SystemExit("testbed: provided image archives that cannot run as their charts run them "
                         "(docs/testbed-images.md):\n" + "\n".join(
                             f"  {path}: {'; '.join(found)}" for path, found in wrong.items()))
    return archives
