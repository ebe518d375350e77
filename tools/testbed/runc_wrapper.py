# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test-harness workaround: run runc on VMs whose capability bounding set lacks CAP_SYS_RESOURCE.

NOT part of what users run. The testbed's real node puts this in front of runc
only when this machine's bounding set lacks CAP_SYS_RESOURCE (these CI VMs).
There two things fail that work on any ordinary host:

- a privileged container asks for every capability, and runc cannot grant
  CAP_SYS_RESOURCE ("unable to apply caps: operation not permitted");
- kubelet gives pod sandboxes oom_score_adj -998, and lowering a process's
  score below its parent's needs CAP_SYS_RESOURCE ("can't get final child's
  PID from pipe: EOF").

So before exec'ing the real runc this drops CAP_SYS_RESOURCE from the
container's (or exec'd process's) capability sets and raises oomScoreAdj to
our own score. Nothing else in the spec changes.

    runc_wrapper.py --runc /path/to/runc [runc arguments...]
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

CAPABILITY = "CAP_SYS_RESOURCE"


def own_oom_score_adj() -> int:
    return int(Path("/proc/self/oom_score_adj").read_text().strip())


def relax_process(process: dict, floor: int) -> dict:
    """The parts of an OCI process this VM cannot grant, changed so runc can start it."""
    for name, caps in (process.get("capabilities") or {}).items():
        process["capabilities"][name] = [c for c in caps if c != CAPABILITY]
    if process.get("oomScoreAdj") is not None and process["oomScoreAdj"] < floor:
        process["oomScoreAdj"] = floor
    return process


def _option(argv: list[str], *names: str) -> str | None:
    """The value of a runc option given as `--name value` or `--name=value`."""
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def spec_files(argv: list[str]) -> list[Path]:
    """The JSON files runc is about to read: the bundle's config.json for create/run,
    the --process file for exec."""
    commands = [a for a in argv if not a.startswith("-")]
    if "create" in commands or "run" in commands:
        bundle = _option(argv, "--bundle", "-b") or os.getcwd()
        return [Path(bundle) / "config.json"]
    if "exec" in commands:
        process = _option(argv, "--process", "-p")
        return [Path(process)] if process else []
    return []


def rewrite(path: Path, floor: int) -> None:
    spec = json.loads(path.read_text())
    if "process" in spec or "ociVersion" in spec:  # a bundle's config.json
        if spec.get("process"):
            relax_process(spec["process"], floor)
    else:  # an exec --process file is the process object itself
        relax_process(spec, floor)
    path.write_text(json.dumps(spec))


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] != "--runc":
        sys.exit("usage: runc_wrapper.py --runc /path/to/runc [runc arguments...]")
    runc, args = argv[1], argv[2:]
    floor = own_oom_score_adj()
    for path in spec_files(args):
        if path.is_file():
            rewrite(path, floor)
    os.execv(runc, [runc, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
