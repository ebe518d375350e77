# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The test-harness runc wrapper changes only what these VMs cannot grant."""
import json

import runc_wrapper

ALL_CAPS = ("CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_SYS_RESOURCE", "CAP_NET_ADMIN")


def _bundle(tmp_path, oom=-998, caps=ALL_CAPS):
    spec = {"ociVersion": "1.2.0", "process": {
        "args": ["/pause"], "oomScoreAdj": oom,
        "capabilities": {k: list(caps) for k in ("bounding", "effective", "permitted")}}}
    (tmp_path / "config.json").write_text(json.dumps(spec))
    return tmp_path / "config.json"


def test_create_drops_sys_resource_and_raises_the_oom_score(tmp_path):
    config = _bundle(tmp_path)
    files = runc_wrapper.spec_files(["--root", "/r", "create", "--bundle", str(tmp_path), "--pid-file", "p", "id"])
    assert files == [config]
    runc_wrapper.rewrite(config, floor=0)
    process = json.loads(config.read_text())["process"]
    for caps in process["capabilities"].values():
        assert "CAP_SYS_RESOURCE" not in caps
        assert caps == ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_ADMIN"]
    assert process["oomScoreAdj"] == 0
    assert process["args"] == ["/pause"]


def test_a_score_above_ours_is_kept(tmp_path):
    config = _bundle(tmp_path, oom=500)
    runc_wrapper.rewrite(config, floor=0)
    assert json.loads(config.read_text())["process"]["oomScoreAdj"] == 500


def test_exec_process_file_is_rewritten(tmp_path):
    process = tmp_path / "process.json"
    process.write_text(json.dumps({"args": ["sh"], "capabilities": {"bounding": list(ALL_CAPS)}}))
    assert runc_wrapper.spec_files(["exec", "--process", str(process), "id"]) == [process]
    runc_wrapper.rewrite(process, floor=0)
    assert "CAP_SYS_RESOURCE" not in json.loads(process.read_text())["capabilities"]["bounding"]


def test_other_commands_touch_nothing():
    assert runc_wrapper.spec_files(["--root", "/r", "state", "id"]) == []
    assert runc_wrapper.spec_files(["kill", "id", "9"]) == []
    assert runc_wrapper.spec_files(["--root=/r", "create", "--bundle=/b", "id"])[0].as_posix() == "/b/config.json"
