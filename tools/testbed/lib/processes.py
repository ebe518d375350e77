# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Start, track and stop the testbed's processes by PID (never by name)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .layout import TOOLS_DIR, Layout

# Stop order: the reverse of start order, the watchdog first, the real node's
# processes before the control plane they talk to.
# GPU mode's mount namespace (lib/node.py) goes once the node's processes in it have.
STOP_ORDER = ("watchdog", "prometheus", "device-plugin", "dra-plugin", "kubelet", "gitlab-standin", "service-proxy",
              "containerd", "mount-namespace", "chart-repo", "kwok", "kube-scheduler", "kube-controller-manager",
              "kube-apiserver", "etcd")


def _pid_file(layout: Layout, name: str) -> Path:
    return layout.pids / f"{name}.pid"


def _recorded(layout: Layout, name: str) -> dict | None:
    """What start() recorded (pid, argv, env, via), or None."""
    path = _pid_file(layout, name)
    return json.loads(path.read_text()) if path.exists() else None


def _read(layout: Layout, name: str) -> tuple[int, list[str]] | None:
    """The PID and the argv recorded at start, or None."""
    record = _recorded(layout, name)
    return None if record is None else (record["pid"], record["argv"])


def _alive(pid: int, argv: list[str]) -> bool:
    """True while the PID still belongs to the process we started (PIDs are reused)."""
    try:
        current = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        return False
    return [arg.decode() for arg in current] == argv


def start(layout: Layout, name: str, argv: list[str], env: dict[str, str] | None = None,
          via: list[str] | tuple[str, ...] = ()) -> int:
    """Start `argv` as component `name`. `via` is a command that execs argv in other namespaces (unshare, nsenter):
    the PID stays, and the command line recorded (what _alive() compares) is argv's, once it has exec'd."""
    log = open(layout.logs / f"{name}.log", "ab")  # noqa: SIM115 (the child owns it)
    proc = subprocess.Popen([*via, *argv], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, cwd=layout.state, env=env)
    log.close()
    _pid_file(layout, name).write_text(json.dumps({"pid": proc.pid, "argv": argv, "env": env, "via": list(via)}))
    time.sleep(0.2)
    if proc.poll() is not None:
        raise SystemExit(f"testbed: {name} exited at once (code {proc.returncode}); see {layout.logs / (name + '.log')}")
    return proc.pid


def stop(layout: Layout, name: str, grace: float = 8.0) -> bool:
    """Stop one component (fault tests); its recorded command line stays for restart()."""
    record = _read(layout, name)
    if not record or not _alive(*record) or record[0] == os.getpid():  # the watchdog stops the rest
        return False
    os.kill(record[0], signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _alive(*record) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(*record):
        os.kill(record[0], signal.SIGKILL)
    _reap(record[0])
    return True


def restart(layout: Layout, name: str) -> int:
    """Start a stopped component again with the command line it had."""
    record = _recorded(layout, name)
    if record is None:
        raise SystemExit(f"testbed: {name} was never started")
    if _alive(record["pid"], record["argv"]):
        return record["pid"]
    return start(layout, name, record["argv"], record.get("env"), record.get("via", ()))


def signal_process(layout: Layout, name: str, sig: int) -> None:
    """Send `sig` to a running component (SIGHUP: reload its configuration), by its recorded PID."""
    record = _read(layout, name)
    if not record or not _alive(*record):
        raise SystemExit(f"testbed: {name} is not running")
    os.kill(record[0], sig)


def is_running(layout: Layout, name: str) -> bool:
    record = _read(layout, name)
    return bool(record and _alive(*record))


def running(layout: Layout) -> list[tuple[str, int]]:
    alive = []
    for name in reversed(STOP_ORDER):
        record = _read(layout, name)
        if record and _alive(*record):
            alive.append((name, record[0]))
    return alive


def stop_all(layout: Layout) -> list[str]:
    """Stop every recorded process in STOP_ORDER, each before the next, so that
    clients go before the servers they talk to (the API server before etcd)."""
    stopped = []
    for name in STOP_ORDER:
        if stop(layout, name):
            stopped.append(name)
    return stopped


def _reap(pid: int, grace: float = 2.0) -> None:
    """Collect our exited child, so no zombie is left. Its command line empties
    while it exits, a moment before it can be waited for, hence the short loop."""
    deadline = time.monotonic() + grace
    while True:
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child (another process started it), or collected
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def start_watchdog(layout: Layout, ttl: int) -> None:
    argv = [sys.executable, str(TOOLS_DIR / "testbed.py"), "_watchdog", f"--ttl={ttl}"]
    start(layout, "watchdog", argv)


def watchdog(layout: Layout, ttl: int, down) -> None:
    """Sleep out the time to live, then stop the testbed (unless it was stopped already)."""
    deadline = time.monotonic() + ttl
    while time.monotonic() < deadline:
        time.sleep(5)
        if not layout.pids.exists():
            return
    print(f"testbed: time to live of {ttl}s is over, stopping", flush=True)
    down(layout)
