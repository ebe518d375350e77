# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A private Docker engine for the test harness: own socket, data root and exec root.

TEST HARNESS ONLY. Users run their own engine; nothing here reaches what they run.

    dockerd.py up      start it (reused when already running), print DOCKER_HOST
    dockerd.py down    stop it by PID; nothing is left running
    dockerd.py env     print `export DOCKER_HOST=...` for a shell

It never touches a system engine: the socket, PID records and logs live in
GPUCI_DOCKER_STATE (default /tmp/gpuci-docker, short because of socket path
limits), images in GPUCI_DOCKER_DATA (default ~/.cache/gpuci-docker/data-root)
so builds are reused across runs. No default bridge and no iptables rules are
made: containers that need the network run with `--network host` (builds reach
the package indexes the way this machine does; the EE reaches the testbed's API
server on 127.0.0.1). kind makes a bridge network of its own for its nodes and
publishes their API server on 127.0.0.1 only.

On VMs whose capability bounding set lacks CAP_SYS_RESOURCE (these CI VMs) the
default runtime is runc behind the testbed's wrapper (tools/testbed/runcwrapper),
so that privileged containers start; elsewhere plain runc.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

TOOLS_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOOLS_DIR / "testbed"))
from lib import processes  # noqa: E402  (the testbed's PID-tracked process start and stop)
from lib.layout import ProcessFolders  # noqa: E402
from lib.node import bounding_set_lacks_sys_resource, write_runc_launcher  # noqa: E402

START_TIMEOUT = 60
WRAPPED_RUNTIME = "gpuci-runc"


@dataclass(frozen=True)
class Engine(ProcessFolders):
    """Folders of the private engine; its PIDs and logs under state, as the testbed's."""
    state: Path
    data_root: Path

    @classmethod
    def from_environment(cls) -> "Engine":
        return cls(state=Path(os.environ.get("GPUCI_DOCKER_STATE", "/tmp/gpuci-docker")),
                   data_root=Path(os.environ.get("GPUCI_DOCKER_DATA",
                                                 Path.home() / ".cache" / "gpuci-docker" / "data-root")))

    @property
    def socket(self) -> Path:
        return self.state / "docker.sock"

    @property
    def docker_host(self) -> str:
        return f"unix://{self.socket}"


def _runtime_options(engine: Engine) -> list[str]:
    if not bounding_set_lacks_sys_resource():
        return []
    launcher = write_runc_launcher(engine.state / "runc-wrapped", Path(shutil.which("runc") or "/usr/sbin/runc"))
    return [f"--add-runtime={WRAPPED_RUNTIME}={launcher}", f"--default-runtime={WRAPPED_RUNTIME}"]


def _responds(engine: Engine) -> bool:
    env = {**os.environ, "DOCKER_HOST": engine.docker_host}
    return subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], env=env,
                          capture_output=True, timeout=30, check=False).returncode == 0


def up(engine: Engine) -> None:
    if processes.is_running(engine, "dockerd") and _responds(engine):
        print(f"dockerd: reusing the running engine at {engine.docker_host}", flush=True)
        return
    dockerd = shutil.which("dockerd")
    if not dockerd:
        raise SystemExit("dockerd: not installed; run: apt-get install -y docker.io (tests/docker/run.sh does)")
    for folder in (engine.logs, engine.pids, engine.state / "exec", engine.data_root):
        folder.mkdir(parents=True, exist_ok=True)
    argv = [dockerd, f"--data-root={engine.data_root}", f"--exec-root={engine.state / 'exec'}",
            f"--host={engine.docker_host}", f"--pidfile={engine.state / 'dockerd.pid'}",
            "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false",
            # Its own containerd namespaces, apart from any other engine's.
            "--containerd-namespace=gpuci-docker", "--containerd-plugins-namespace=gpuci-docker-plugins",
            *_runtime_options(engine)]
    processes.start(engine, "dockerd", argv)
    deadline = time.monotonic() + START_TIMEOUT
    print(f"dockerd: waiting up to {START_TIMEOUT}s for the engine at {engine.docker_host}", flush=True)
    while not _responds(engine):
        if time.monotonic() > deadline or not processes.is_running(engine, "dockerd"):
            raise SystemExit(f"dockerd: did not answer within {START_TIMEOUT}s; see {engine.logs / 'dockerd.log'}")
        time.sleep(1)
    print(f"dockerd: up at {engine.docker_host} (data root {engine.data_root})", flush=True)


def _mounts_under(folder: Path) -> list[str]:
    points = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    return sorted((p for p in points if p.startswith(f"{folder}/")), key=len, reverse=True)


def down(engine: Engine) -> None:
    # dockerd stops the containers and the containerd it started before it exits,
    # but leaves its default network namespace mounted under the exec root.
    stopped = processes.stop(engine, "dockerd", grace=30.0)
    for point in _mounts_under(engine.state):
        subprocess.run(["umount", point], check=False)
    left = _mounts_under(engine.state)
    print(("dockerd: stopped" if stopped else "dockerd: was not running")
          + (f"; still mounted: {left}" if left else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("up", "down", "env"))
    engine = Engine.from_environment()
    command = parser.parse_args().command
    if command == "up":
        up(engine)
    elif command == "down":
        down(engine)
        return
    print(f"export DOCKER_HOST={engine.docker_host}")


if __name__ == "__main__":
    main()
