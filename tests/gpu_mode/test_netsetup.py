# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpuci-netsetup, the bridge helper for GPU hosts without `ip` (the lent H100 machine has none)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lib.layout import Layout

BRIDGE = "gpuci-t0"  # not the testbed's gpuci0, so a running testbed is never touched


def _local_addresses() -> set[str]:
    """The host's local IPv4 addresses, from /proc/net/fib_trie (an address line, then '/32 host LOCAL')."""
    lines = Path("/proc/net/fib_trie").read_text().splitlines()
    return {previous.split()[-1] for previous, line in zip(lines, lines[1:]) if line.strip() == "/32 host LOCAL"}


@pytest.mark.skipif(os.geteuid() != 0, reason="making a bridge needs root")
def test_bridge_with_addresses_is_made_and_removed():
    helper = str(Layout.from_environment().binaries(("gpuci-netsetup",))["gpuci-netsetup"])
    subprocess.run([helper, "add-bridge", BRIDGE, "10.123.0.1/24", "10.124.0.1/32"], check=True)
    try:
        if shutil.which("ip"):
            shown = subprocess.run(["ip", "-brief", "addr", "show", BRIDGE], capture_output=True, text=True,
                                   check=True).stdout
            assert "10.123.0.1/24" in shown and "10.124.0.1/32" in shown
        else:  # the GPU machines: the kernel's routing table lists each local address as a /32 host route
            local = _local_addresses()
            assert {"10.123.0.1", "10.124.0.1"} <= local, local
        assert (Path("/sys/class/net") / BRIDGE / "bridge").is_dir()
    finally:
        subprocess.run([helper, "del-link", BRIDGE], check=True)
    assert not (Path("/sys/class/net") / BRIDGE).exists()
    # Removing what is gone is not an error (down may run twice).
    subprocess.run([helper, "del-link", BRIDGE], check=True)
