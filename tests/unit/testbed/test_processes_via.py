# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""lib/processes.py starts a component through a command that execs it in other namespaces (`via`: unshare,
nsenter, as GPU mode's containerd and kubelet start): the component is tracked by its own command line, and a
restart goes through the same command. `env --` stands in for nsenter here: it execs its argument the same way."""
from dataclasses import dataclass
from pathlib import Path

from lib import processes
from lib.layout import ProcessFolders


@dataclass
class Folders(ProcessFolders):
    state: Path


def test_a_component_started_via_an_exec_wrapper_is_tracked_stopped_and_restarted_through_it(tmp_path):
    folders = Folders(tmp_path)
    folders.logs.mkdir()
    folders.pids.mkdir()
    argv = ["sleep", "300"]
    first = processes.start(folders, "kubelet", argv, via=["env", "--"])
    try:
        assert Path(f"/proc/{first}/cmdline").read_bytes().split(b"\0")[:-1] == [b"sleep", b"300"]  # env exec'd
        assert processes.is_running(folders, "kubelet")
        assert processes.stop(folders, "kubelet")
        assert not processes.is_running(folders, "kubelet")
        second = processes.restart(folders, "kubelet")
        assert second != first and processes.is_running(folders, "kubelet")
        assert (folders.pids / "kubelet.pid").read_text().count('"via": ["env", "--"]') == 1
    finally:
        processes.stop_all(folders)
    assert not processes.is_running(folders, "kubelet")
