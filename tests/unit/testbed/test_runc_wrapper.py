# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test-harness runc wrapper (tools/testbed/runcwrapper) changes only what these VMs cannot grant.

The built binary runs in front of a stand-in runc that records the arguments it got, so every test sees what
the real runc would: the file as the wrapper left it and the command line it was exec'd with."""
import json
import subprocess
from pathlib import Path

import pytest

from lib.layout import TOOLS_DIR
from lib.node import runc_wrapper_binary, write_runc_launcher

ALL_CAPS = ("CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_SYS_RESOURCE", "CAP_NET_ADMIN")
OWN_SCORE = int(Path("/proc/self/oom_score_adj").read_text())  # the wrapper inherits it from this process


@pytest.fixture(scope="module")
def wrapper():
    """Built as make test's build step builds it (cached, a second or so; from cold, the Go standard library)."""
    subprocess.run(["bash", str(TOOLS_DIR / "build.sh"), "runc-wrapper"], check=True, capture_output=True)
    return runc_wrapper_binary()


@pytest.fixture
def runc(tmp_path):
    """A stand-in runc: writes its arguments, one a line, beside itself and exits with RUNC_EXIT (0)."""
    script = tmp_path / "runc"
    script.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/argv"\nexit "${RUNC_EXIT:-0}"\n')
    script.chmod(0o755)
    return script


def _run(wrapper, runc, *args, cwd=None, env=None):
    return subprocess.run([str(wrapper), "--runc", str(runc), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, check=False)


def _bundle(folder, oom=-998, caps=ALL_CAPS):
    folder.mkdir(exist_ok=True)
    spec = {"ociVersion": "1.2.0", "process": {
        "args": ["/pause"], "oomScoreAdj": oom,
        "capabilities": {k: list(caps) for k in ("bounding", "effective", "permitted")}},
        "linux": {"resources": {"memory": {"limit": 9223372036854775807}}}}
    (folder / "config.json").write_text(json.dumps(spec))
    return folder / "config.json"


def test_create_drops_sys_resource_and_raises_the_oom_score(wrapper, runc, tmp_path):
    config = _bundle(tmp_path / "bundle")
    args = ["--root", "/r", "create", "--bundle", str(config.parent), "--pid-file", "p", "id"]
    done = _run(wrapper, runc, *args)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "argv").read_text().splitlines() == args
    spec = json.loads(config.read_text())
    for caps in spec["process"]["capabilities"].values():
        assert caps == ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_ADMIN"]
    assert spec["process"]["oomScoreAdj"] == max(OWN_SCORE, -998)
    assert spec["process"]["args"] == ["/pause"]
    # Every other field as it was, an int64 beyond a float's precision included.
    assert spec["linux"] == {"resources": {"memory": {"limit": 9223372036854775807}}}


def test_what_this_vm_can_grant_is_left_as_it_was(wrapper, runc, tmp_path):
    config = _bundle(tmp_path / "bundle", oom=OWN_SCORE + 500, caps=("CAP_CHOWN",))
    before = config.read_bytes()
    assert _run(wrapper, runc, "create", f"--bundle={config.parent}", "id").returncode == 0
    assert config.read_bytes() == before


def test_create_without_a_bundle_option_reads_the_working_folder(wrapper, runc, tmp_path):
    config = _bundle(tmp_path / "bundle")
    assert _run(wrapper, runc, "run", "id", cwd=config.parent).returncode == 0
    assert "CAP_SYS_RESOURCE" not in json.loads(config.read_text())["process"]["capabilities"]["bounding"]


def test_exec_process_file_is_rewritten(wrapper, runc, tmp_path):
    process = tmp_path / "process.json"
    process.write_text(json.dumps({"args": ["sh"], "capabilities": {"bounding": list(ALL_CAPS)}}))
    assert _run(wrapper, runc, "exec", "--process", str(process), "--detach", "id").returncode == 0
    assert json.loads(process.read_text()) == {
        "args": ["sh"], "capabilities": {"bounding": ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_ADMIN"]}}


def test_other_commands_touch_nothing(wrapper, runc, tmp_path):
    config = _bundle(tmp_path / "bundle")
    before = config.read_bytes()
    for args in (["--root", "/r", "state", "id"], ["kill", "id", "9"], ["delete", "--force", "id"]):
        assert _run(wrapper, runc, *args, cwd=config.parent).returncode == 0
        assert (tmp_path / "argv").read_text().splitlines() == args
    assert config.read_bytes() == before


def test_runc_exit_status_is_the_wrappers(wrapper, runc, tmp_path):
    done = _run(wrapper, runc, "state", "id", env={"RUNC_EXIT": "3", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 3


def test_a_file_runc_could_not_read_either_stops_it_with_the_files_name(wrapper, runc, tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "config.json").write_text("{not json")
    done = _run(wrapper, runc, "create", "--bundle", str(bundle), "id")
    assert done.returncode == 1
    assert f"gpuci-runc-wrapper: {bundle / 'config.json'}:" in done.stderr
    assert not (tmp_path / "argv").exists(), "runc must not run on a file the wrapper could not read"


def test_the_launcher_runs_the_wrapper_in_front_of_runc(wrapper, runc, tmp_path):
    """containerd and dockerd take one binary for a runtime: the launcher gives the wrapper its runc."""
    launcher = write_runc_launcher(tmp_path / "runc-wrapped", runc)
    config = _bundle(tmp_path / "bundle")
    done = subprocess.run([str(launcher), "create", "--bundle", str(config.parent), "id"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert str(wrapper) in launcher.read_text()
    assert "CAP_SYS_RESOURCE" not in json.loads(config.read_text())["process"]["capabilities"]["effective"]
