# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write a container image archive without a registry or a container engine.

The testbed's real node gets every image from archives built here and imported
with `ctr -n k8s.io images import`. An archive holds an OCI image layout
(index.json, blobs/sha256/...) and, beside it, Docker's manifest.json with the
image's reference, so both containerd and `docker load` name the image.

    oci_image.py --ref REF --out FILE [--base-tar ROOTFS.tar] [--layer DIR ...]
                 [--entrypoint JSON] [--cmd JSON] [--env K=V ...] [--workdir DIR]
                 [--user UID] [--label K=V ...] [--stop-signal SIGNAL]

Layers are written reproducibly (sorted names, owner root, mtime 0) so that the
same inputs give the same image ID and a rebuild is recognisable as unchanged.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
from pathlib import Path

MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def layer_from_dir(folder: Path) -> bytes:
    """An uncompressed tar of a folder's contents, paths relative to the folder."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(dirs + files):
                path = Path(root) / name
                arcname = str(path.relative_to(folder))
                tar.add(path, arcname=arcname, recursive=False, filter=_normalised)
    return buf.getvalue()


def layer_from_tar(path: Path) -> bytes:
    """A root file system tarball (e.g. from mmdebstrap) taken as it is."""
    return path.read_bytes()


def _gzip(data: bytes) -> bytes:
    # mtime=0 keeps the compressed blob reproducible too.
    return gzip.compress(data, compresslevel=6, mtime=0)


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _with_default_path(env) -> list[str]:
    """The image's environment: a default PATH unless one of `env` sets PATH
    (a duplicate key would leave the process with the first one)."""
    env = list(env)
    if any(item.startswith("PATH=") for item in env):
        return env
    return ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", *env]


def build(ref: str, layers: list[bytes], *, entrypoint=None, cmd=None, env=(), workdir="", user="",
          labels=None, stop_signal="") -> dict[str, bytes]:
    """Return the archive's members: path -> content."""
    blobs: dict[str, bytes] = {}
    diff_ids, layer_descs = [], []
    for raw in layers:
        compressed = _gzip(raw)
        diff_ids.append(_digest(raw))
        digest = _digest(compressed)
        blobs[digest] = compressed
        layer_descs.append({"mediaType": MEDIA_LAYER, "digest": digest, "size": len(compressed)})
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {key: value for key, value in {
            "Entrypoint": entrypoint, "Cmd": cmd, "WorkingDir": workdir or None, "User": user or None,
            "Env": _with_default_path(env), "StopSignal": stop_signal or None,
            "Labels": labels or None}.items() if value is not None},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created_by": "gpuci.runners tools/testbed/oci_image.py"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_digest = _digest(config_bytes)
    blobs[config_digest] = config_bytes
    manifest = {"schemaVersion": 2, "mediaType": MEDIA_MANIFEST,
                "config": {"mediaType": MEDIA_CONFIG, "digest": config_digest, "size": len(config_bytes)},
                "layers": layer_descs}
    manifest_bytes = json.dumps(manifest, sort_keys=True).encode()
    manifest_digest = _digest(manifest_bytes)
    blobs[manifest_digest] = manifest_bytes
    index = {"schemaVersion": 2, "manifests": [{
        "mediaType": MEDIA_MANIFEST, "digest": manifest_digest, "size": len(manifest_bytes),
        "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref}}]}
    docker_manifest = [{"Config": "blobs/sha256/" + config_digest.split(":")[1], "RepoTags": [ref],
                        "Layers": ["blobs/sha256/" + d["digest"].split(":")[1] for d in layer_descs]}]
    members = {"oci-layout": json.dumps({"imageLayoutVersion": "1.0.0"}).encode(),
               "index.json": json.dumps(index, sort_keys=True).encode(),
               "manifest.json": json.dumps(docker_manifest).encode()}
    for digest, data in blobs.items():
        members["blobs/sha256/" + digest.split(":")[1]] = data
    return members


def write_archive(members: dict[str, bytes], out: Path) -> None:
    partial = out.with_name(out.name + ".partial")
    with tarfile.open(partial, "w") as tar:
        for name in sorted(members):
            info = _normalised(tarfile.TarInfo(name))
            info.size = len(members[name])
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(members[name]))
    partial.replace(out)


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"oci_image: {what} {item!r} is not KEY=VALUE")
        key, value = item.split("=", 1)
        out[key] = value
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ref", required=True, help="image reference, e.g. nvcr.io/nvidia/gpu-operator:v26.7.0")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--base-tar", type=Path, help="root file system tarball for the first layer")
    parser.add_argument("--layer", type=Path, action="append", default=[], help="folder to add as a layer")
    parser.add_argument("--entrypoint", type=json.loads)
    parser.add_argument("--cmd", type=json.loads)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--workdir", default="")
    parser.add_argument("--user", default="")
    parser.add_argument("--label", action="append", default=[])
    # The signal containerd stops the container with (Kubernetes honours the image's).
    parser.add_argument("--stop-signal", default="")
    args = parser.parse_args(argv)
    layers = ([layer_from_tar(args.base_tar)] if args.base_tar else []) + [layer_from_dir(d) for d in args.layer]
    if not layers:
        raise SystemExit("oci_image: give --base-tar or at least one --layer")
    _pairs(args.env, "--env")
    members = build(args.ref, layers, entrypoint=args.entrypoint, cmd=args.cmd, env=args.env,
                    workdir=args.workdir, user=args.user, labels=_pairs(args.label, "--label"),
                    stop_signal=args.stop_signal)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_archive(members, args.out)
    size = args.out.stat().st_size
    print(f"oci_image: {args.ref} -> {args.out} ({size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
