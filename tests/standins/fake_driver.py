# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A FAKE NVIDIA driver tree for CDI tests on machines without a GPU.

Laid out like the driver on a GKE node (measured on an H100 host, driver
580.159.04): <root>/usr/local/nvidia/bin/nvidia-smi, <root>/usr/local/nvidia/lib64/
libcuda.so.580.159.04 and libnvidia-ml.so.580.159.04 with their .so.1 and .so
links, and the device nodes in <root>/dev (nvidia0, nvidiactl, nvidia-uvm,
nvidia-uvm-tools, made with mknod: needs root or CAP_MKNOD).

Nothing here is NVIDIA's: nvidia-smi is a shell script, libcuda is an empty
file, and libnvidia-ml is either an empty file or, when a C compiler is at
hand, the NVML stand-in built from libnvidia-ml-standin.c, which lets the real
`nvidia-ctk cdi generate` run its nvml mode. Without the stand-in only
`--mode=management` works (it reads no NVML: device nodes by name, the driver
version from libcuda's file name).

    python tests/standins/fake_driver.py ROOT [--driver-dir usr/local/nvidia] [--no-nvml]
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NVML_SOURCE = HERE / "libnvidia-ml-standin.c"
DRIVER_VERSION = "580.159.04"
GKE_DRIVER_DIR = "usr/local/nvidia"
LIBRARIES = ("libcuda", "libnvidia-ml")
# name -> (major, minor); nvidia-uvm's major is dynamic on real hosts.
DEVICE_NODES = {"nvidia0": (195, 0), "nvidiactl": (195, 255), "nvidia-uvm": (511, 0), "nvidia-uvm-tools": (511, 1)}
STANDIN_UUID = "GPU-4f6f1c2e-0000-4000-8000-000000000000"


class Unavailable(RuntimeError):
    """What this machine lacks for a fake driver (a C compiler, mknod)."""


def compiler():
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def build_nvml_standin(out):
    """Compile the NVML stand-in into out; Unavailable without a C compiler."""
    cc = compiler()
    if not cc:
        raise Unavailable("no C compiler (cc/gcc) to build the NVML stand-in from %s" % NVML_SOURCE)
    proc = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-nostdlib", "-ffreestanding", "-o", str(out), str(NVML_SOURCE)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:  # a compiler that cannot build it is a fault, not a missing tool
        raise RuntimeError("%s failed to build the NVML stand-in: %s" % (cc, proc.stderr.strip()))
    return Path(out)


def make_device_nodes(root):
    """Character devices <root>/dev/nvidia*; Unavailable where mknod is not allowed."""
    dev = Path(root) / "dev"
    dev.mkdir(parents=True, exist_ok=True)
    for name, (major, minor) in DEVICE_NODES.items():
        node = dev / name
        if node.exists():
            continue
        try:
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        except PermissionError as e:
            raise Unavailable("mknod %s: %s (needs root or CAP_MKNOD)" % (node, e)) from e
    return dev


def lay_out(root, driver_dir=GKE_DRIVER_DIR, nvml=True, nvml_library=None):
    """Create the fake driver under root/driver_dir and the device nodes; return the driver folder.

    nvml: put the NVML stand-in in place of libnvidia-ml (built here unless
    nvml_library names one already built); false leaves an empty file.
    """
    driver = Path(root) / driver_dir
    (driver / "bin").mkdir(parents=True, exist_ok=True)
    (driver / "lib64").mkdir(parents=True, exist_ok=True)
    smi = driver / "bin" / "nvidia-smi"
    smi.write_text("#!/bin/sh\n# stand-in, not NVIDIA's nvidia-smi\necho 'stand-in nvidia-smi: no GPU here' >&2\nexit 9\n")
    smi.chmod(0o755)
    for name in LIBRARIES:
        real = driver / "lib64" / ("%s.so.%s" % (name, DRIVER_VERSION))
        if name == "libnvidia-ml" and nvml:
            if nvml_library:
                shutil.copyfile(nvml_library, real)
            else:
                build_nvml_standin(real)
        else:
            real.write_bytes(b"")
        for link, target in (("%s.so.1" % name, real.name), ("%s.so" % name, "%s.so.1" % name)):
            path = driver / "lib64" / link
            if path.is_symlink() or path.exists():
                path.unlink()
            path.symlink_to(target)
    make_device_nodes(root)
    return driver


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--driver-dir", default=GKE_DRIVER_DIR)
    parser.add_argument("--no-nvml", action="store_true", help="leave libnvidia-ml empty (management mode only)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            library = None if args.no_nvml else build_nvml_standin(Path(tmp) / "libnvidia-ml.so")
            print(lay_out(args.root, args.driver_dir, nvml=not args.no_nvml, nvml_library=library))
    except Unavailable as e:
        print("fake_driver: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
