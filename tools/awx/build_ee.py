# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build the execution environment from execution-environment.yml with ansible-builder and docker.

The definition is used as users use it; the harness only passes build
arguments, because these machines reach no registry and no download site:
- EE_BASE_IMAGE: the harness's Debian base (tools/docker/base_image.py)
  instead of the public CentOS Stream 9 default, and with it
  PKGMGR=/usr/bin/apt-get (ansible-builder's default is dnf);
- HELM_BASE_URL / KUBECTL_BASE_URL: a mirror on 127.0.0.1, laid out like
  get.helm.sh and dl.k8s.io, serving the helm 4 and kubectl the testbed
  builds at the same pinned versions (HELM4_VERSION, KUBERNETES_VERSION),
  with their sha256 files, so install-tools.sh runs its downloads and
  checksum checks for real;
- `--network=host`: the private engine makes no bridge (tools/docker/dockerd.py).

The image tag carries a hash of the build context (definition, requirements,
scripts, and the collection's FILES.json, which lists every file's sha256):
an unchanged checkout reuses the image in seconds.

    build_ee.py        start the private engine if needed, build or reuse, print the image
"""
from __future__ import annotations

import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import deque
from functools import partial
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "docker"))
import base_image  # noqa: E402
import dockerd  # noqa: E402  (puts tools/testbed on sys.path)
from lib.images import pinned  # noqa: E402
from lib.layout import Layout  # noqa: E402

DEFINITION = REPO / "execution-environment.yml"
COLLECTION_DIR = REPO / "awx" / "ee" / "collection"
REPOSITORY = "gpuci-runners-ee"


def _venv_tool(name: str) -> str:
    """A tool of the Python running this (the venv's ansible-galaxy, ansible-builder), else from PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


def _run(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, text=True, **kwargs)


def build_collection() -> Path:
    for old in COLLECTION_DIR.glob("gpuci-runners-*.tar.gz"):
        old.unlink()
    _run(_venv_tool("ansible-galaxy"), "collection", "build", "--force", "--output-path", str(COLLECTION_DIR), str(REPO),
         capture_output=True)
    return next(COLLECTION_DIR.glob("gpuci-runners-*.tar.gz"))


def context_hash(collection: Path) -> str:
    """What the image is made of: the files ansible-builder copies, and the collection's file list."""
    digest = hashlib.sha256()
    for path in (DEFINITION, REPO / "requirements.txt", REPO / "bindep.txt",
                 *sorted((REPO / "awx" / "ee" / "scripts").iterdir())):
        digest.update(path.name.encode() + path.read_bytes())
    with tarfile.open(collection) as tar:
        files = json.load(tar.extractfile("FILES.json"))["files"]
    digest.update(json.dumps(sorted((f["name"], f["chksum_sha256"] or "") for f in files)).encode())
    return digest.hexdigest()[:12]


def image_reference(collection: Path) -> str:
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    return f"{REPOSITORY}:{version}-{context_hash(collection)}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _helm_4() -> Path:
    """The EE's helm 4, built by the testbed's build.sh as its helm is (cached after about 90 s cold)."""
    helm_4 = {**os.environ, "GPUCI_HELM": "4"}
    _run("bash", str(REPO / "tools" / "testbed" / "build.sh"), "helm", env=helm_4)
    return Layout.from_environment().binaries(("helm",), env=helm_4)["helm"]


def lay_out_mirror(root: Path, arch: str = "amd64") -> None:
    """helm 4 and kubectl where install-tools.sh looks for them on get.helm.sh and dl.k8s.io."""
    helm_version, kubectl_version = pinned("HELM4_VERSION"), pinned("KUBERNETES_VERSION")
    kubectl_built = Layout.from_environment().binaries(("kubectl",))["kubectl"]
    helm_tar = root / f"helm-{helm_version}-linux-{arch}.tar.gz"
    with tarfile.open(helm_tar, "w:gz") as tar:
        tar.add(_helm_4(), arcname=f"linux-{arch}/helm")
    helm_tar.with_name(helm_tar.name + ".sha256sum").write_text(f"{_sha256(helm_tar)}  {helm_tar.name}\n")
    kubectl = root / kubectl_version / "bin" / "linux" / arch / "kubectl"
    kubectl.parent.mkdir(parents=True)
    shutil.copy2(kubectl_built, kubectl)
    kubectl.with_name("kubectl.sha256").write_text(_sha256(kubectl))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the build's own output says what it fetched
        pass


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """The mirror, on 127.0.0.1 for as long as the build runs (a thread of this process)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def build(ref: str, base: str) -> None:
    with tempfile.TemporaryDirectory(prefix="gpuci-ee-") as work:
        mirror = Path(work) / "mirror"
        mirror.mkdir()
        lay_out_mirror(mirror)
        server, url = serve(mirror)
        try:
            argv = [_venv_tool("ansible-builder"), "build", "-f", str(DEFINITION), "-t", ref, "--context", str(Path(work) / "context"),
                    "--container-runtime", "docker", "--extra-build-cli-args=--network=host", "-v", "3",
                    "--build-arg", f"EE_BASE_IMAGE={base}", "--build-arg", "PKGMGR=/usr/bin/apt-get",
                    "--build-arg", "PKGMGR_PRESERVE_CACHE=always",
                    "--build-arg", f"HELM_BASE_URL={url}", "--build-arg", f"KUBECTL_BASE_URL={url}"]
            print(f"build_ee: building {ref} on {base} (cold: several minutes, PyPI installs)", flush=True)
            started = time.monotonic()
            # The legacy builder: the private engine has no buildx plugin.
            proc = subprocess.Popen(argv, cwd=REPO, env={**os.environ, "DOCKER_BUILDKIT": "0"},
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            tail: deque[str] = deque(maxlen=40)
            for line in proc.stdout:
                tail.append(line)
                if line.startswith("Step "):
                    print(f"build_ee [{time.monotonic() - started:4.0f}s] {line.rstrip()}", flush=True)
            if proc.wait() != 0:
                raise SystemExit(f"{''.join(tail)}\nbuild_ee: ansible-builder failed (exit {proc.returncode}); "
                                 f"rerun: {' '.join(argv)}")
            print(f"build_ee: {ref} built in {time.monotonic() - started:.0f}s", flush=True)
        finally:
            server.shutdown()


def prune_older_images(keep: str) -> None:
    """Earlier EE tags and the build's untagged stages, so the private engine's data root stays bounded."""
    listed = _run("docker", "image", "ls", REPOSITORY, "--format", "{{.Repository}}:{{.Tag}}", capture_output=True)
    older = [ref for ref in listed.stdout.split() if ref != keep]
    if older:
        _run("docker", "image", "rm", *older, capture_output=True)
    _run("docker", "image", "prune", "--force", capture_output=True)


def ensure() -> str:
    """The EE image for this checkout: built, or reused when the context is unchanged."""
    ref = image_reference(build_collection())
    if base_image.exists(ref):
        print(f"build_ee: reusing {ref}", flush=True)
    else:
        build(ref, base_image.ensure())
        prune_older_images(keep=ref)
    return ref


if __name__ == "__main__":
    engine = dockerd.Engine.from_environment()
    dockerd.up(engine)
    os.environ["DOCKER_HOST"] = engine.docker_host
    print(ensure())
