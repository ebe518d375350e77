# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hold a GPU-mode real node's mount namespace, with its own kubelet device-plugin folder.

    unshare --mount --propagation slave -- mount_namespace.py --bind SOURCE TARGET

The kubelet serves device-plugin registration at a fixed path whatever its
--root-dir (/var/lib/kubelet/device-plugins, lib/node.py), and every kubelet
empties that folder when it starts. So that a GPU-mode real node (whose
device plugin registers there) can run beside other testbeds' real nodes,
its containerd and kubelet run in this namespace (nsenter), where SOURCE, a
folder under the node's state, is mounted on TARGET. The host's mounts reach
the namespace (slave propagation); the namespace's own (the bind, the pods'
volumes, the containers' root file systems) stay in it and go with it, once
this process and the node's processes have ended. Run by lib/processes.py
under `unshare`; it binds, then waits for SIGTERM (testbed down).
"""
from __future__ import annotations

import argparse
import signal
import subprocess
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bind", nargs=2, metavar=("SOURCE", "TARGET"), required=True)
    source, target = parser.parse_args(argv).bind
    bound = subprocess.run(["mount", "--bind", source, target], capture_output=True, text=True, check=False)
    if bound.returncode != 0:
        print(f"mount_namespace: mount --bind {source} {target} failed: {bound.stderr.strip()}", file=sys.stderr)
        return 1
    print(f"mount_namespace: {source} on {target} in this namespace only", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
