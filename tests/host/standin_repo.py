"""Build a signed apt repository of stand-in NVIDIA container toolkit packages.

The four packages carry the real names, dependencies between them as NVIDIA
declares them, and two versions: 1.17.8-1 (the pin) and 1.18.0-1 (the newer
release an upgrade would pull). nvidia-container-toolkit-base ships the real
nvidia-ctk v1.17.8 binary in BOTH versions (only v1.17.8 is built here); the
other programs are shell stubs. What the tests prove is how versions, pins and
holds move, and what nvidia-ctk writes.

Layout mirrors nvidia.github.io/libnvidia-container: a flat repository at
<out>/stable/deb/<arch> (apt source suite "/"), InRelease signed by a
throwaway key generated per call, public key at <out>/key.asc.
"""

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

VERSIONS = ("1.17.8-1", "1.18.0-1")
PIN, NEWER = VERSIONS


def packages(version):
    """name -> (Depends, {path in package: (mode, content or source file)})."""
    stub = "#!/bin/sh\necho '{name} stand-in {version}'\n"
    return {
        "libnvidia-container1": ("", {
            "usr/share/doc/libnvidia-container1/STANDIN": (0o644, f"stand-in {version}\n"),
        }),
        "libnvidia-container-tools": (f"libnvidia-container1 (>= {version})", {
            "usr/bin/nvidia-container-cli": (0o755, stub.format(name="nvidia-container-cli", version=version)),
        }),
        "nvidia-container-toolkit-base": ("", {
            "usr/bin/nvidia-ctk": (0o755, None),  # the real binary, filled in by build()
            "usr/bin/nvidia-container-runtime": (0o755, stub.format(name="nvidia-container-runtime", version=version)),
        }),
        "nvidia-container-toolkit": (
            f"nvidia-container-toolkit-base (= {version}), libnvidia-container-tools (>= {version}),"
            " libnvidia-container-tools (<< 2.0.0)", {
                "usr/bin/nvidia-container-runtime-hook": (0o755, stub.format(
                    name="nvidia-container-runtime-hook", version=version)),
            }),
    }


# As NVIDIA's nvidia-container-toolkit-base.postinst: write the default config.
POSTINST_BASE = """#!/bin/sh
set -e
if [ "$1" = configure ]; then
  /usr/bin/nvidia-ctk --quiet config --config-file=/etc/nvidia-container-runtime/config.toml --in-place
fi
"""


def run(*argv, **kwargs):
    return subprocess.run(argv, check=True, **kwargs)


def build_deb(work, pool, name, version, arch, depends, files, nvidia_ctk):
    tree = work / f"{name}_{version}"
    (tree / "DEBIAN").mkdir(parents=True)
    for rel, (mode, content) in files.items():
        target = tree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            shutil.copyfile(nvidia_ctk, target)
        else:
            target.write_text(content)
        target.chmod(mode)
    control = [f"Package: {name}", f"Version: {version}", f"Architecture: {arch}",
               "Maintainer: gpuci.runners tests <tests@example.invalid>",
               f"Description: stand-in for NVIDIA's {name} (gpuci.runners tests only)"]
    if depends:
        control.insert(3, f"Depends: {depends}")
    (tree / "DEBIAN" / "control").write_text("\n".join(control) + "\n")
    if name == "nvidia-container-toolkit-base":
        postinst = tree / "DEBIAN" / "postinst"
        postinst.write_text(POSTINST_BASE)
        postinst.chmod(0o755)
    # gzip -1: the nvidia-ctk binary is large and xz is slow.
    run("dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "--build", str(tree),
        str(pool / f"{name}_{version}_{arch}.deb"), stdout=subprocess.DEVNULL)


def sign(repo, out):
    """Sign Release with a fresh key; export the public key to out/key.asc."""
    home = Path(tempfile.mkdtemp(prefix="gpuci-gpg-"))
    try:
        env = dict(os.environ, GNUPGHOME=str(home))
        gpg = ("gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", "")
        run(*gpg, "--quick-gen-key", "gpuci.runners tests <tests@example.invalid>", "ed25519", "sign", "never", env=env)
        run(*gpg, "--clearsign", "--output", str(repo / "InRelease"), str(repo / "Release"), env=env)
        run(*gpg, "--armor", "--detach-sign", "--output", str(repo / "Release.gpg"), str(repo / "Release"), env=env)
        with open(out / "key.asc", "wb") as key:
            run(*gpg, "--armor", "--export", env=env, stdout=key)
    finally:
        # gpg-agent may still hold the folder open for a moment.
        subprocess.run(("gpgconf", "--kill", "all"), env=dict(os.environ, GNUPGHOME=str(home)), check=False)
        shutil.rmtree(home, ignore_errors=True)


def build(out, nvidia_ctk):
    arch = subprocess.check_output(("dpkg", "--print-architecture"), text=True).strip()
    repo = out / "stable" / "deb" / arch
    repo.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="gpuci-debs-") as tmp:
        for version in VERSIONS:
            for name, (depends, files) in packages(version).items():
                build_deb(Path(tmp), repo, name, version, arch, depends, files, nvidia_ctk)
    with open(repo / "Packages", "wb") as f:
        run("apt-ftparchive", "packages", ".", cwd=repo, stdout=f)
    # Release is written elsewhere first so it does not list itself.
    release = subprocess.check_output(
        ("apt-ftparchive", "-o", "APT::FTPArchive::Release::Origin=gpuci-tests", "release", "."), cwd=repo)
    (repo / "Release").write_bytes(release)
    sign(repo, out)
    return repo


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvidia-ctk", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path, help="must not exist yet")
    args = parser.parse_args()
    build(args.out, args.nvidia_ctk)


if __name__ == "__main__":
    main()
