# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The harness's kind node image, built here from what these machines can reach.

TEST HARNESS ONLY. Users run kind with its published kindest/node images;
no registry is reachable from these machines, so `molecule test -s kind` runs
on this image instead (GPUCI_KIND_NODE_IMAGE). What it is made of:
- a Debian bookworm root by mmdebstrap with the packages kind's base image
  installs (systemd, iptables, conntrack, ...), and kind's own base files
  (entrypoint, systemd units, kubelet drop-ins) from the sigs.k8s.io/kind Go
  module at the pinned KIND_VERSION;
- the testbed's binaries, built from their Go modules at the versions pinned
  in tools/testbed/versions.env: kubelet, kubeadm and kubectl (the multi-call
  kubernetes binary), containerd, runc, the CNI plugins;
- the control plane's images under the exact references kubeadm asks for
  (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy at
  KUBERNETES_VERSION, etcd and CoreDNS at kubeadm's defaults
  KIND_ETCD_VERSION and KIND_COREDNS_VERSION, pause),
  preloaded into the node's containerd as kind's own image builder does,
  plus kwok (for the scenario's simulated node) and the testbed's Debian
  image for test and canary pods.
Where it differs from kindest/node, each for a reason named in its file:
- kindnetd (not served by the Go module proxy) is replaced by
  gpuci-node-network (node/gpuci-node-network.sh), a DaemonSet as kindnetd
  is, in an image of its own made of the node's root and that script;
- local-path-provisioner (its kind fork is not served either) by a default
  StorageClass without dynamic provisioning (node/default-storage.yaml);
- containerd restricts oom_score_adj and starts without OOMScoreAdjust, for
  VMs whose bounding set lacks CAP_SYS_RESOURCE (node/containerd-harness.conf);
- CoreDNS is built with only the plugins of kubeadm's Corefile
  (tools/testbed/coredns/main.go): the others' cloud SDKs were minutes of a
  cold build, and no kind cluster's default Corefile reaches them.

The tag is a hash of the recipe (pinned versions, these files, kind's base
files), so a changed recipe builds anew and an unchanged one is reused.

    node_image.py            build or reuse it; print its reference
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS_DIR = HERE.parent
sys.path.insert(0, str(TOOLS_DIR / "testbed"))
sys.path.insert(0, str(TOOLS_DIR / "docker"))
import oci_image  # noqa: E402  (the testbed's registry-free image writer)
from base_image import exists  # noqa: E402  (the harness's `docker image inspect` probe)
from lib.images import PAUSE_IMAGE, own_archives, pinned  # noqa: E402
from lib.layout import component_bin_dirs  # noqa: E402

SUITE = "bookworm"
MIRROR = os.environ.get("GPUCI_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# kind's base image (images/base/Dockerfile) installs these; nfs-common,
# open-iscsi and fuse-overlayfs (rootless) are left out: nothing here uses them.
PACKAGES = ("systemd", "systemd-sysv", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool",
            "util-linux", "mount", "kmod", "libseccomp2", "pigz", "bash", "ca-certificates", "jq", "procps",
            "e2fsprogs")
REPOSITORY = "gpuci.local/kind-node"
KUBERNETES = pinned("KUBERNETES_VERSION")
ETCD = pinned("KIND_ETCD_VERSION")
KIND_CACHE = Path(os.environ.get("GPUCI_KIND_CACHE", Path.home() / ".cache" / "gpuci-kind"))
# The control plane's images: what kubeadm KUBERNETES asks for by default.
CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
ETCD_IMAGE = f"registry.k8s.io/etcd:{ETCD.lstrip('v')}-0"
COREDNS = pinned("KIND_COREDNS_VERSION")
COREDNS_IMAGE = f"registry.k8s.io/coredns/coredns:{COREDNS}"
COREDNS_SOURCES = [TOOLS_DIR / "testbed" / "coredns" / name for name in ("go.mod", "go.sum", "main.go")]
# kwok in the cluster keeps the scenario's simulated node (GPUCI_KIND_SIMULATE).
KWOK_IMAGE = f"registry.k8s.io/kwok/kwok:{pinned('KWOK_VERSION')}"
NETWORK_IMAGE = f"gpuci.local/kind-node-network:{KUBERNETES}"
BUILT_BY_LABEL = "gpuci.runners/built-by"
BUILT_BY = "tools/kind/node_image.py (test harness; stands in for the published image)"


def kind_base_files() -> Path:
    """kind's base image files (entrypoint, units) from its Go module, fetched through the module proxy."""
    version = pinned("KIND_VERSION")
    out = subprocess.run(["go", "mod", "download", "-json", f"sigs.k8s.io/kind@{version}"], capture_output=True,
                         text=True, check=True, cwd=tempfile.gettempdir())
    return Path(json.loads(out.stdout)["Dir"]) / "images" / "base" / "files"


def _binaries() -> dict[str, Path]:
    """Where the testbed's build put each binary the node needs (tools/testbed/build.sh names the folders)."""
    kubernetes, containerd, runc, cni, etcd, kwok, coredns = component_bin_dirs(
        "kubernetes", "containerd", "runc", "cni", "etcd-kind", "kwok", "coredns-kind")
    found = {"kubernetes": kubernetes / "kubernetes", "containerd": containerd / "containerd",
             "containerd-shim-runc-v2": containerd / "containerd-shim-runc-v2", "ctr": containerd / "ctr",
             "runc": runc / "runc", "etcd": etcd / "etcd", "kwok": kwok / "kwok", "coredns": coredns / "coredns",
             **{plugin: cni / plugin for plugin in ("bridge", "host-local", "loopback")}}
    missing = [str(path) for path in found.values() if not path.is_file()]
    if missing:
        raise SystemExit(f"kind node image: missing binaries {missing}; run: bash tools/testbed/build.sh && "
                         "bash tools/testbed/build.sh kind etcd-kind coredns-kind")
    return found


def reference() -> str:
    recipe = hashlib.sha256()
    for line in (SUITE, MIRROR, *PACKAGES, KUBERNETES, ETCD, KWOK_IMAGE, COREDNS_IMAGE, pinned("KIND_VERSION"),
                 pinned("CONTAINERD_VERSION"), pinned("RUNC_VERSION"), pinned("CNI_PLUGINS_VERSION"), PAUSE_IMAGE):
        recipe.update(line.encode() + b"\n")
    for path in sorted([*HERE.glob("node/*"), Path(__file__), TOOLS_DIR / "testbed" / "oci_image.py",
                        *COREDNS_SOURCES]):
        recipe.update(path.read_bytes())
    return f"{REPOSITORY}:{KUBERNETES}-{recipe.hexdigest()[:12]}"


def _run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run a step; on failure stop, naming the command and what it said."""
    proc = subprocess.run(argv, check=False, **kwargs)
    if proc.returncode != 0:
        said = proc.stderr.decode(errors="replace")[-2000:] if isinstance(proc.stderr, bytes) else proc.stderr or ""
        raise SystemExit(f"kind node image: {' '.join(argv[:3])} ... failed (exit {proc.returncode}): {said}")
    return proc


def _debian_root(root: Path) -> None:
    """Unpack the Debian root, made by mmdebstrap once per package list and kept in the cache."""
    key = hashlib.sha256("\n".join((SUITE, MIRROR, *PACKAGES)).encode()).hexdigest()[:12]
    tarball = KIND_CACHE / f"debian-{SUITE}-{key}.tar"
    if not tarball.is_file():
        log = KIND_CACHE / "mmdebstrap.log"
        print(f"kind node image: Debian {SUITE} root with systemd by mmdebstrap (about 2 minutes; log {log})",
              flush=True)
        with log.open("w") as out:
            _run(["mmdebstrap", "--variant=minbase", "--format=tar", f"--include={','.join(PACKAGES)}", SUITE,
                  f"{tarball}.partial", f"deb {MIRROR} {SUITE} main"], stdout=out, stderr=subprocess.STDOUT)
        Path(f"{tarball}.partial").replace(tarball)
    root.mkdir(parents=True)
    _run(["tar", "-C", str(root), "--numeric-owner", "-xf", str(tarball)])


def _install(source: Path, target: Path, mode: int = 0o755) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    target.chmod(mode)


def _cri_base_spec(ctr: Path) -> str:
    """kind's cri-base.json: containerd's default OCI spec with kind's product-files hook, no rlimits."""
    spec = json.loads(subprocess.run([str(ctr), "oci", "spec"], capture_output=True, text=True, check=True).stdout)
    spec.setdefault("hooks", {}).setdefault("createContainer", []).append({"path": "/kind/bin/mount-product-files.sh"})
    spec["process"].pop("rlimits", None)
    return json.dumps(spec, indent=2)


def _containerd_config(kind_config: str) -> str:
    """kind's containerd config with kubeadm's pause and oom_score_adj restricted (see the module doc)."""
    config = kind_config.replace('sandbox_image = "registry.k8s.io/pause:3.10"', f'sandbox_image = "{PAUSE_IMAGE}"')
    config = config.replace("restrict_oom_score_adj = false", "restrict_oom_score_adj = true")
    if PAUSE_IMAGE not in config or "restrict_oom_score_adj = true" not in config:
        raise SystemExit("kind node image: kind's containerd config changed shape; update _containerd_config")
    return "# Test-harness node image: kind's config, pause and oom_score_adj changed (tools/kind).\n" + config


def populate(root: Path, base_files: Path, binaries: dict[str, Path]) -> None:
    """Lay kind's base files, the binaries and the harness's own files into the Debian root."""
    for sub in ("usr/local/bin", "kind/bin"):
        for path in (base_files / sub).iterdir():
            _install(path, root / sub / path.name)
    for path in (base_files / "etc").rglob("*"):
        if path.is_file() and path.name != "containerd-fuse-overlayfs.service":
            _install(path, root / "etc" / path.relative_to(base_files / "etc"), 0o644)
    (root / "etc/containerd/config.toml").write_text(
        _containerd_config((base_files / "etc/containerd/config.toml").read_text()))
    (root / "etc/containerd/cri-base.json").write_text(_cri_base_spec(binaries["ctr"]))
    for name in ("containerd", "containerd-shim-runc-v2", "ctr"):
        _install(binaries[name], root / "usr/local/bin" / name)
    _install(binaries["runc"], root / "usr/local/sbin/runc")
    _install(binaries["kubernetes"], root / "usr/bin/kubernetes")
    for name in ("kubelet", "kubeadm", "kubectl"):
        (root / "usr/bin" / name).symlink_to("kubernetes")
    for plugin in ("bridge", "host-local", "loopback"):
        _install(binaries[plugin], root / "opt/cni/bin" / plugin)
    _install(HERE / "node/gpuci-node-network.sh", root / "usr/local/bin/gpuci-node-network")
    _install(HERE / "node/containerd-harness.conf",
             root / "etc/systemd/system/containerd.service.d/gpuci-harness.conf", 0o644)
    (root / "kind/manifests").mkdir(parents=True)
    (root / "kind/manifests/default-cni.yaml").write_text(
        (HERE / "node/default-cni.yaml").read_text().replace("@NETWORK_IMAGE@", NETWORK_IMAGE))
    _install(HERE / "node/default-storage.yaml", root / "kind/manifests/default-storage.yaml", 0o644)
    (root / "kind/version").write_text(KUBERNETES + "\n")
    (root / "etc/kubernetes/manifests").mkdir(parents=True, exist_ok=True)
    _systemd_as_kind_does(root)


def _systemd_as_kind_does(root: Path) -> None:
    """The units kind's base image enables and the ones it removes (images/base/Dockerfile)."""
    for pattern in ("lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
                    "lib/systemd/system/multi-user.target.wants/*", "etc/systemd/system/*.wants/*",
                    "lib/systemd/system/local-fs.target.wants/*", "lib/systemd/system/sockets.target.wants/*udev*",
                    "lib/systemd/system/sockets.target.wants/*initctl*", "lib/systemd/system/basic.target.wants/*"):
        for path in root.glob(pattern):
            path.unlink()
    with (root / "etc/systemd/journald.conf").open("a") as journald:
        journald.write("ReadKMsg=no\n")
    _run(["systemctl", f"--root={root}", "enable", "kubelet.service", "containerd.service",
          "undo-mount-hacks.service"], capture_output=True)
    _run(["systemctl", f"--root={root}", "mask", "systemd-binfmt.service"], capture_output=True)


def _binary_layer(work: Path, binary: Path, at: str) -> bytes:
    """A layer holding one binary at `at` (a path inside the image)."""
    folder = work / f"{binary.name}-layer"
    _install(binary, folder / at)
    return oci_image.layer_from_dir(folder)


def _image_archives(rootfs_tar: Path, binaries: dict[str, Path], work: Path) -> list[Path]:
    """The control plane's images (one shared layer of the multi-call binary) and etcd, as archives."""
    layer_dir = work / "kubernetes-layer/usr/local/bin"
    _install(binaries["kubernetes"], layer_dir / "kubernetes")
    for name in (*CONTROL_PLANE, "kube-proxy"):
        (layer_dir / name).symlink_to("kubernetes")
    kubernetes_layer = oci_image.layer_from_dir(work / "kubernetes-layer")
    labels = {BUILT_BY_LABEL: BUILT_BY}
    images = {f"registry.k8s.io/{name}:{KUBERNETES}": [kubernetes_layer] for name in CONTROL_PLANE}
    # kube-proxy runs iptables and the node network ip and kubectl: both get
    # the node's own root (one shared layer) beneath what they run.
    root_layer = oci_image.layer_from_tar(rootfs_tar)
    images[f"registry.k8s.io/kube-proxy:{KUBERNETES}"] = [root_layer, kubernetes_layer]
    images[NETWORK_IMAGE] = [root_layer]
    images[ETCD_IMAGE] = [_binary_layer(work, binaries["etcd"], "usr/local/bin/etcd")]
    images[KWOK_IMAGE] = [_binary_layer(work, binaries["kwok"], "usr/local/bin/kwok")]
    images[COREDNS_IMAGE] = [_binary_layer(work, binaries["coredns"], "coredns")]
    entrypoints = {KWOK_IMAGE: ["/usr/local/bin/kwok"], COREDNS_IMAGE: ["/coredns"],
                   NETWORK_IMAGE: ["/usr/local/bin/gpuci-node-network"]}
    archives = []
    for ref, layers in images.items():
        out = work / "images" / (ref.rsplit("/", 1)[1].replace(":", "-") + ".tar")
        out.parent.mkdir(parents=True, exist_ok=True)
        oci_image.write_archive(oci_image.build(ref, layers, entrypoint=entrypoints.get(ref), labels=labels), out)
        archives.append(out)
    # pause and the Debian image for test and canary pods, as the testbed's real node gets them.
    return archives + own_archives()


def _preload(rootfs_ref: str, ref: str, archives: list[Path]) -> None:
    """Import the archives into the node's containerd and commit, as kind's own image builder does."""
    name = "gpuci-kind-node-build"
    subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    _run(["docker", "run", "-d", "--privileged", "--name", name, "--entrypoint", "/usr/local/bin/containerd",
          rootfs_ref], capture_output=True)
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(["docker", "exec", name, "ctr", "version"], capture_output=True,
                             check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise SystemExit("kind node image: containerd in the build container did not answer within 60s")
            time.sleep(1)
        for archive in archives:
            print(f"kind node image: preloading {archive.name}", flush=True)
            with archive.open("rb") as data:
                _run(["docker", "exec", "-i", name, "ctr", "--namespace=k8s.io", "images", "import",
                      "--label=io.cri-containerd.pinned=pinned", "--all-platforms", "--no-unpack", "-"],
                     stdin=data, capture_output=True)
        _run(["docker", "stop", "--time=10", name], capture_output=True)
        _run(["docker", "commit", name, f"{ref}-preloaded"], capture_output=True)
        # What kindest/node declares; `docker commit` cannot set STOPSIGNAL, a build can.
        dockerfile = "\n".join([
            f"FROM {ref}-preloaded", "ENV container=docker", "STOPSIGNAL SIGRTMIN+3",
            f"LABEL {BUILT_BY_LABEL}={json.dumps(BUILT_BY)}",
            'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]', "CMD []", ""])
        _run(["docker", "build", "--tag", ref, "-"], input=dockerfile.encode(), capture_output=True,
             env={**os.environ, "DOCKER_BUILDKIT": "0"})
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
        subprocess.run(["docker", "rmi", f"{ref}-preloaded"], capture_output=True, check=False)


def build(ref: str) -> None:
    started = time.monotonic()
    binaries = _binaries()
    base_files = kind_base_files()
    work = KIND_CACHE / "node-build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        root = work / "root"
        _debian_root(root)
        populate(root, base_files, binaries)
        rootfs_tar = work / "rootfs.tar"
        _run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(rootfs_tar), "."])
        rootfs_ref = ref + "-rootfs"
        print("kind node image: importing the root into the engine", flush=True)
        _run(["docker", "import", str(rootfs_tar), rootfs_ref], capture_output=True)
        print("kind node image: writing the control plane's images", flush=True)
        _preload(rootfs_ref, ref, _image_archives(rootfs_tar, binaries, work))
        subprocess.run(["docker", "rmi", rootfs_ref], capture_output=True, check=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"kind node image: built {ref} in {time.monotonic() - started:.0f}s", flush=True)


def _remove_older(ref: str) -> None:
    """Node images of earlier recipes are 800 MB each: keep only the current one."""
    listed = subprocess.run(["docker", "images", REPOSITORY, "--format", "{{.Repository}}:{{.Tag}}"],
                            capture_output=True, text=True, check=False).stdout.split()
    for older in (tag for tag in listed if tag != ref):
        subprocess.run(["docker", "rmi", older], capture_output=True, check=False)


def ensure() -> str:
    ref = reference()
    if exists(ref):
        print(f"kind node image: reusing {ref}", flush=True)
    else:
        build(ref)
    _remove_older(ref)
    return ref


def main() -> None:
    if "DOCKER_HOST" not in os.environ:
        raise SystemExit("kind node image: set DOCKER_HOST to the harness's engine (tools/docker/dockerd.py env)")
    print(ensure())


if __name__ == "__main__":
    main()
