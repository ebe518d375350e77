# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What `make gpu-proof` needs on a GPU machine without network, in parts that fit one device call.

The lent GPU machine has no network and no package manager, and a call takes
at most 64 MiB of working tree, the project included. The bundle holds the
testbed's build cache as build.sh lays it out (stripped static binaries, the
image archives, provided upstream images if any), the upstream charts and CRDs
(../shared does not travel to that machine), the collections the
playbooks use (kubernetes.core, community.general) and Python wheels for
CPython 3.12 of what the controller needs beyond what that machine has. It is
one tar stream compressed with xz, split into parts, each in its own folder
with a copy of the manifest (every file's size and sha256, every part's), so
that one call can carry one part folder:

    bundle.py build --out .gpu-bundle             # here: make gpu-bundle
    bundle.py check --bundle .gpu-bundle          # how many device calls
    bundle.py stage --bundle .gpu-bundle --into /var/tmp/gpuci-bundle   # there, each call
    bundle.py unpack --into /var/tmp/gpuci-bundle # there, once every part is staged
    bundle.py env --into /var/tmp/gpuci-bundle    # shell lines for gpu-proof
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TESTBED = REPO / "tools" / "testbed"
sys.path.insert(0, str(TESTBED))
from lib.images import provided_dir  # noqa: E402  (where the testbed finds provided upstream images)
from lib.layout import charts_dir, crds_dir  # noqa: E402
MIB = 1024 * 1024
PART_NAME = "bundle.tar.xz.part-{:02d}"
MANIFEST = "manifest.json"
# The collections the playbooks use (ansible.posix: the bench's profile_tasks
# callback); the `ansible` package's others stay behind.
COLLECTIONS = ("kubernetes/core", "community/general", "ansible/posix")
# What the controller needs beyond the GPU machine's own Python 3.12 (whose
# image has requests, PyYAML, Jinja2, aiohttp, packaging and more): ansible-core,
# the Kubernetes client, the TOML writer, and python-gitlab (the role creating
# the proof's runners, the canary's pipeline in GitLab mode), as requirements.txt
# pins them. pip resolves their dependencies; the wheels of packages already
# there are dropped (ALREADY_THERE).
REQUIREMENTS = ("ansible-core>=2.19,<2.20", "kubernetes>=31,<38", "tomli-w>=1.0,<2", "python-gitlab>=4.4,<7")
ALREADY_THERE = frozenset((
    "pyyaml", "jinja2", "markupsafe", "packaging", "requests", "urllib3", "certifi", "idna", "charset-normalizer",
    "six", "python-dateutil", "typing-extensions", "aiohttp", "aiosignal", "frozenlist", "multidict", "yarl",
    "propcache", "attrs", "aiohappyeyeballs",
))
WHEEL_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def log(message: str) -> None:
    print(f"bundle: {message}", flush=True)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


# --- what goes in -------------------------------------------------------------

# Cached binaries a GPU proof does not run: promtool and the Prometheus server
# (about 185 MiB) serve the rule tests and a Prometheus the testbed does not start in GPU mode;
# GitLab Runner's two binaries (about 98 MiB) travel inside its manager and helper images
# (cache/images), which are what the real node runs.
NOT_BUNDLED = ("prometheus-", "gitlab-runner-")


def cache_members(bin_folders: list[Path], images: list[Path], provided: list[Path]) -> dict[str, Path]:
    """Bundle path -> file, laid out as the build cache: cache/<folder>/bin/<file>, cache/images/, ..."""
    members: dict[str, Path] = {}
    for folder in bin_folders:
        if folder.parent.name.startswith(NOT_BUNDLED):
            continue
        for file in sorted(folder.glob("*")):
            if file.is_file() and os.access(file, os.X_OK):
                members[f"cache/{folder.parent.name}/bin/{file.name}"] = file
    for archive in images:
        members[f"cache/images/{archive.name}"] = archive
    for archive in provided:
        members[f"cache/upstream-images/{archive.name}"] = archive
    return members


def tree_members(root: Path, prefix: str) -> dict[str, Path]:
    """Every file under root, under prefix/ (byte code left out: it is rebuilt)."""
    return {f"{prefix}/{file.relative_to(root)}": file for file in sorted(root.rglob("*"))
            if file.is_file() and "__pycache__" not in file.parts}


def testbed_cache() -> tuple[list[Path], list[Path], list[Path]]:
    printed = subprocess.run(["bash", str(TESTBED / "build.sh"), "--print-paths"], check=True,
                             capture_output=True, text=True).stdout.strip()
    archives = subprocess.run(["bash", str(TESTBED / "build-images.sh"), "--print-archives"], check=True,
                              capture_output=True, text=True).stdout.split()
    provided = sorted(provided_dir().glob("*.tar"))
    return [Path(p) for p in printed.split(":") if p], [Path(a) for a in archives], provided


def collection_members() -> dict[str, Path]:
    import ansible_collections  # the venv's, from the `ansible` package  pylint: disable=import-outside-toplevel
    root = Path(list(ansible_collections.__path__)[0])
    members: dict[str, Path] = {}
    for name in COLLECTIONS:
        members.update(tree_members(root / name, f"collections/ansible_collections/{name}"))
    return members


def download_wheels(into: Path) -> dict[str, Path]:
    """Wheels for CPython 3.12 on x86-64 Linux; those the GPU machine already has are dropped."""
    platforms = [arg for p in WHEEL_PLATFORMS for arg in ("--platform", p)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--python-version",
                    "3.12", "--implementation", "cp", *platforms, "-d", str(into), *REQUIREMENTS], check=True)
    kept = {}
    for wheel in sorted(into.glob("*.whl")):
        project = wheel.name.split("-")[0].lower().replace("_", "-")
        if project not in ALREADY_THERE:
            kept[f"wheels/{wheel.name}"] = wheel
    return kept


# --- parts ----------------------------------------------------------------------

class PartWriter:
    """A file-like sink that cuts what is written into numbered parts of at most part_bytes."""

    def __init__(self, out: Path, part_bytes: int):
        self.out, self.part_bytes = out, part_bytes
        self.parts: list[Path] = []
        self._file = None
        self._left = 0

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            if self._left == 0:
                self._next()
            chunk = view[:self._left]
            self._file.write(chunk)
            self._left -= len(chunk)
            view = view[len(chunk):]
        return len(data)

    def _next(self) -> None:
        if self._file:
            self._file.close()
        index = len(self.parts)
        folder = self.out / f"part-{index:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        self.parts.append(folder / PART_NAME.format(index))
        self._file = self.parts[-1].open("wb")
        self._left = self.part_bytes

    def close(self) -> None:
        if self._file:
            self._file.close()


def write_bundle(members: dict[str, Path], out: Path, part_bytes: int) -> dict:
    """Tar the members through xz into parts under out; write the manifest into every part folder."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    writer = PartWriter(out, part_bytes)
    started, last = time.monotonic(), 0.0
    xz = subprocess.Popen(["xz", "-6", "-T0", "-c"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) \
        if shutil.which("xz") else None
    if xz is None:
        raise SystemExit("bundle: needs the xz command (apt-get install xz-utils)")
    drain = threading.Thread(target=lambda: shutil.copyfileobj(xz.stdout, writer, MIB))
    drain.start()
    files = []
    with tarfile.open(fileobj=xz.stdin, mode="w|") as tar:
        for name, path in sorted(members.items()):
            tar.add(str(path), arcname=name)  # a link stays a link (the Kubernetes components)
            files.append({"path": name, "link": os.readlink(path)} if path.is_symlink() else
                         {"path": name, "size": path.stat().st_size, "sha256": sha256(path)})
            if time.monotonic() - last > 15:
                last = time.monotonic()
                done = sum(f.get("size", 0) for f in files)
                log(f"{len(files)}/{len(members)} files, {done / MIB:.0f} MiB in, "
                    f"{len(writer.parts)} part(s) out, {last - started:.0f}s")
    xz.stdin.close()
    drain.join()
    if xz.wait() != 0:
        raise SystemExit("bundle: xz failed")
    writer.close()
    manifest = {
        "files": files,
        "parts": [{"name": p.name, "folder": p.parent.name, "size": p.stat().st_size, "sha256": sha256(p)}
                  for p in writer.parts],
        "uncompressed_bytes": sum(f.get("size", 0) for f in files),
        "compressed_bytes": sum(p.stat().st_size for p in writer.parts),
        "versions": (TESTBED / "versions.env").read_text(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(sys.argv),
    }
    for part in writer.parts:
        (part.parent / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return manifest


# --- the GPU machine's side -----------------------------------------------------------

def read_manifest(folder: Path) -> dict:
    found = sorted(folder.glob(f"part-*/{MANIFEST}")) + sorted(folder.glob(MANIFEST))
    if not found:
        raise SystemExit(f"bundle: no {MANIFEST} under {folder}")
    return json.loads(found[0].read_text())


def stage(bundle: Path, into: Path) -> list[str]:
    """Copy the parts present in bundle into into/parts, each checked against the manifest."""
    manifest = read_manifest(bundle)
    (into / "parts").mkdir(parents=True, exist_ok=True)
    (into / MANIFEST).write_text(json.dumps(manifest))
    staged = []
    for part in manifest["parts"]:
        source = bundle / part["folder"] / part["name"]
        if not source.is_file():
            continue
        if sha256(source) != part["sha256"]:
            raise SystemExit(f"bundle: {source} does not match the manifest (corrupt or from another bundle)")
        shutil.copyfile(source, into / "parts" / part["name"])
        staged.append(part["name"])
    return staged


# Python's "tar" extraction filter refuses members that would land outside into/. It came with
# Python 3.11.4: Debian 12's 3.11.2 lacks it, and there the bundle (our own archive) is extracted
# without it, still checked file by file against its manifest after.
EXTRACT_FILTER = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}


def unpack(into: Path) -> int:
    """Extract the staged parts into into/; every part must be there, every file must match."""
    manifest = json.loads((into / MANIFEST).read_text())
    parts = [into / "parts" / p["name"] for p in manifest["parts"]]
    missing = [p.name for p in parts if not p.is_file()]
    if missing:
        raise SystemExit(f"bundle: parts not staged yet: {', '.join(missing)}")
    for part, meta in zip(parts, manifest["parts"]):
        if part.stat().st_size != meta["size"]:
            raise SystemExit(f"bundle: {part} has {part.stat().st_size} bytes, the manifest says {meta['size']}")
    with tempfile.TemporaryFile() as joined:
        for part in parts:
            with part.open("rb") as f:
                shutil.copyfileobj(f, joined, MIB)
        joined.seek(0)
        with tarfile.open(fileobj=joined, mode="r:xz") as tar:
            tar.extractall(into, **EXTRACT_FILTER)
    for entry in manifest["files"]:
        if "link" in entry:
            if os.readlink(into / entry["path"]) != entry["link"]:
                raise SystemExit(f"bundle: {entry['path']} is not the link the manifest says")
        elif sha256(into / entry["path"]) != entry["sha256"]:
            raise SystemExit(f"bundle: {entry['path']} does not match the manifest after unpacking")
    return len(manifest["files"])


def env_lines(into: Path) -> list[str]:
    site = into / "site"
    return [
        f"python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target {site} {into}/wheels/*.whl",
        f"export GPUCI_TESTBED_CACHE={into}/cache GPUCI_CHARTS_DIR={into}/charts GPUCI_CRDS_DIR={into}/crds",
        # The checkout as gpuci.runners, as `make venv` links it (the tests and the testbed's role run need it).
        "mkdir -p .collections/ansible_collections/gpuci && ln -sfn ../../.. .collections/ansible_collections/gpuci/runners",
        f"export PYTHONPATH={site} ANSIBLE_COLLECTIONS_PATH={into}/collections:$PWD/.collections",
        f"export PATH={site}/bin:$PATH GPUCI_PYTHON=python3 GPUCI_ANSIBLE_PLAYBOOK={site}/bin/ansible-playbook",
    ]


def calls_needed(part_sizes: list[int], project_bytes: int, limit_bytes: int) -> int:
    """Device calls to carry every part, one part a call with the project beside it."""
    too_big = [s for s in part_sizes if s + project_bytes > limit_bytes]
    if too_big:
        raise ValueError(f"a part of {max(too_big) / MIB:.1f} MiB and the project ({project_bytes / MIB:.1f} MiB) "
                         f"exceed one call's {limit_bytes / MIB:.0f} MiB")
    return len(part_sizes)


def project_bytes() -> int:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return sum((REPO / name).stat().st_size for name in listed.decode().split("\0")
               if name and (REPO / name).is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build")
    build.add_argument("--out", type=Path, default=REPO / ".gpu-bundle")
    build.add_argument("--part-mib", type=float, default=56)
    build.add_argument("--no-wheels", action="store_true")
    check = sub.add_parser("check")
    check.add_argument("--bundle", type=Path, default=REPO / ".gpu-bundle")
    check.add_argument("--limit-mib", type=float, default=64)
    for verb in ("stage", "unpack", "env"):
        one = sub.add_parser(verb)
        one.add_argument("--into", type=Path, default=Path("/var/tmp/gpuci-bundle"))
        if verb == "stage":
            one.add_argument("--bundle", type=Path, default=REPO / ".gpu-bundle")
    args = parser.parse_args(argv)

    if args.command == "build":
        started = time.monotonic()
        bins, images, provided = testbed_cache()
        members = {**cache_members(bins, images, provided), **tree_members(charts_dir(), "charts"),
                   **tree_members(crds_dir(), "crds"), **collection_members()}
        with tempfile.TemporaryDirectory() as tmp:
            if not args.no_wheels:
                log("downloading wheels for CPython 3.12")
                members.update(download_wheels(Path(tmp)))
            size = sum(p.stat().st_size for p in members.values() if not p.is_symlink())
            log(f"packing {len(members)} files, {size / MIB:.0f} MiB")
            manifest = write_bundle(members, args.out, int(args.part_mib * MIB))
        log(f"{manifest['uncompressed_bytes'] / MIB:.0f} MiB -> {manifest['compressed_bytes'] / MIB:.1f} MiB "
            f"in {len(manifest['parts'])} part(s) under {args.out}, {time.monotonic() - started:.0f}s")
    elif args.command == "check":
        manifest = read_manifest(args.bundle)
        project = project_bytes()
        sizes = [p["size"] for p in manifest["parts"]]
        try:
            calls = calls_needed(sizes, project, int(args.limit_mib * MIB))
        except ValueError as e:
            log(str(e))
            return 1
        log(f"{len(sizes)} part(s) of at most {max(sizes) / MIB:.1f} MiB, project {project / MIB:.1f} MiB: "
            f"{calls} device call(s), one part folder carried in each")
    elif args.command == "stage":
        log(f"staged {', '.join(stage(args.bundle, args.into)) or 'nothing'} into {args.into}/parts")
    elif args.command == "unpack":
        log(f"unpacked {unpack(args.into)} files into {args.into}")
    else:
        print("\n".join(env_lines(args.into)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
