# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/testbed/build.sh runs its builds side by side (GPUCI_BUILD_JOBS) and never builds one component
twice at once: a second build of it waits on the first one's lock, then finds it cached.

Go is a stand-in here (a script on PATH that makes the `-o` file when the test lets it): what is tested
is build.sh's scheduling and locking, not Go. The builds' ends are released by the test, so no outcome
depends on how fast the machine is; the waits below only bound a broken build.sh."""
import os
import subprocess
import time

import pytest

from lib.layout import TOOLS_DIR

BUILD = TOOLS_DIR / "build.sh"
FAKE_GO = """#!/bin/sh
# `go build ... -o OUT .` in tools/testbed/<folder>: logs its start, waits for the test's release file, makes OUT.
out=""
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
name=$(basename "$PWD")
echo "start $name" >> "$GO_LOG"
while [ ! -e "$RELEASE/$name" ]; do sleep 0.05; done
mkdir -p "$(dirname "$out")" && printf '#!/bin/sh\\n' > "$out" && chmod +x "$out"
echo "end $name" >> "$GO_LOG"
"""


@pytest.fixture
def fake_go(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "go").write_text(FAKE_GO)
    (bin_dir / "go").chmod(0o755)
    (tmp_path / "release").mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "GO_LOG": str(tmp_path / "go.log"),
           "RELEASE": str(tmp_path / "release"), "GPUCI_TESTBED_CACHE": str(tmp_path / "cache"),
           "PROGRESS_EVERY_S": "600"}
    env.pop("GPUCI_BUILD_STARTED", None)
    return tmp_path, env


def go_log(tmp_path) -> list[str]:
    log = tmp_path / "go.log"
    return log.read_text().splitlines() if log.exists() else []


def wait_for(what: str, condition, bound_s: float = 60) -> None:
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, f"not seen within {bound_s}s: {what}"
        time.sleep(0.05)


def build(env, log, *components) -> subprocess.Popen:
    """build.sh COMPONENT..., its log lines (stderr) into the file `log`."""
    with open(log, "w") as stderr:
        return subprocess.Popen(["bash", str(BUILD), *components], env=env, stdout=subprocess.DEVNULL, stderr=stderr)


def ended(process: subprocess.Popen, log) -> str:
    process.wait(timeout=60)
    return log.read_text()


def test_two_components_build_side_by_side(fake_go):
    tmp_path, env = fake_go
    log = tmp_path / "both.log"
    both = build({**env, "GPUCI_BUILD_JOBS": "2"}, log, "netsetup", "device-plugin")
    try:  # neither build may end before both started: one after the other would never get here
        wait_for("both builds started", lambda: sorted(go_log(tmp_path)) == ["start deviceplugin", "start netsetup"])
    finally:
        for name in ("netsetup", "deviceplugin"):
            (tmp_path / "release" / name).touch()
    err = ended(both, log)
    assert both.returncode == 0, err
    assert sorted(go_log(tmp_path)[2:]) == ["end deviceplugin", "end netsetup"]
    assert "all requested binaries ready" in err


def test_a_second_build_of_a_component_waits_for_the_first_and_finds_it_cached(fake_go):
    tmp_path, env = fake_go
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = build(env, first_log, "netsetup")
    second = None
    try:
        wait_for("the first build started", lambda: go_log(tmp_path) == ["start netsetup"])
        second = build(env, second_log, "netsetup")
        wait_for("the second build waiting on the lock", lambda: "another build of it holds" in second_log.read_text())
    finally:
        (tmp_path / "release" / "netsetup").touch()
    first_err, second_err = ended(first, first_log), ended(second, second_log)
    assert (first.returncode, second.returncode) == (0, 0), first_err + second_err
    assert go_log(tmp_path) == ["start netsetup", "end netsetup"]  # Go ran once
    assert "gpuci-netsetup cached" in second_err
