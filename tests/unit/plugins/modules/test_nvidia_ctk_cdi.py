# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nvidia_ctk_cdi run as Ansible runs it, against a STAND-IN nvidia-ctk.

The stand-in (STANDIN below, written into a temporary folder) is a short
Python script, not NVIDIA's binary: it writes a fixed spec that names the
options it got into --output, and fails as v1.17.8 fails on the GKE layout
("invalid device, empty device edits") when --driver-root is not / and no
--dev-root is given. That is enough for the module's own logic: compare,
write only on difference, check mode, diff, absent, failure hints, PATH.
The real binary runs in test_nvidia_ctk_cdi_binary.py.
"""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
MODULE = "ansible_collections.gpuci.runners.plugins.modules.nvidia_ctk_cdi"

STANDIN = '''#!%(python)s
"""STAND-IN for nvidia-ctk cdi generate (tests only; not NVIDIA's binary)."""
import json, os, sys
args = dict(a[2:].split("=", 1) for a in sys.argv[3:])
with open(os.path.join(os.path.dirname(sys.argv[0]), "calls.jsonl"), "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "path": os.environ.get("PATH", "")}) + "\\n")
if args.get("driver-root", "/") != "/" and "dev-root" not in args:
    sys.stderr.write('time="x" level=error msg="failed to write spec: invalid CDI Spec: failed add device '
                     '\\\\"0\\\\": invalid device, empty device edits"\\n')
    sys.exit(1)
libs = [a[len("--library-search-path="):] for a in sys.argv if a.startswith("--library-search-path=")]
with open(args["output"], "w") as out:
    out.write("---\\ncdiVersion: 0.5.0\\ncontainerEdits:\\n  mounts:\\n")
    for lib in libs:
        out.write("  - hostPath: %%s/libcuda.so.580.159.04\\n" %% lib)
    out.write('devices:\\n- name: "0"\\n- name: all\\nkind: nvidia.com/gpu\\n')
'''


@pytest.fixture
def ctk(tmp_path):
    path = tmp_path / "bin" / "nvidia-ctk"
    path.parent.mkdir()
    path.write_text(STANDIN % {"python": sys.executable})
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def calls(ctk):
    log = ctk.parent / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run_module(tmp_path, check=False, diff=True, env=None, **params):
    args = tmp_path / "args.json"
    params.update(_ansible_check_mode=check, _ansible_diff=diff, _ansible_remote_tmp=str(tmp_path / "remote-tmp"),
                  _ansible_keep_remote_files=False)
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": params}))
    environ = dict(os.environ, PYTHONPATH=str(REPO / ".collections"), **(env or {}))
    proc = subprocess.run([sys.executable, "-m", MODULE, str(args)], capture_output=True, text=True, env=environ,
                          check=False)
    return json.loads(proc.stdout)


@pytest.fixture
def spec(tmp_path):
    return tmp_path / "etc" / "cdi" / "nvidia.yaml"


GKE_FIX = dict(driver_root="/", library_search_paths=["/usr/local/nvidia/lib64"])


def test_first_run_writes_the_spec_second_run_changes_nothing(tmp_path, ctk, spec):
    first = run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), **GKE_FIX)
    assert first["changed"] is True, first
    assert "/usr/local/nvidia/lib64/libcuda.so.580.159.04" in spec.read_text()
    assert stat.S_IMODE(spec.stat().st_mode) == 0o644
    assert first["devices"] == ["0", "all"]
    assert first["diff"]["before"] == "" and first["diff"]["after"] == spec.read_text()
    second = run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), **GKE_FIX)
    assert second["changed"] is False and "diff" not in second
    assert len(calls(ctk)) == 2  # nvidia-ctk runs each time; only the comparison decides


def test_nvidia_ctk_writes_into_a_private_folder_never_into_the_spec(tmp_path, ctk, spec):
    run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), **GKE_FIX)
    argv = calls(ctk)[0]["argv"]
    output = next(a.split("=", 1)[1] for a in argv if a.startswith("--output="))
    assert output != str(spec) and output.endswith("/nvidia.yaml") and not os.path.exists(output)
    assert argv[:2] == ["cdi", "generate"] and "--driver-root=/" in argv


def test_check_mode_writes_nothing_and_shows_the_diff(tmp_path, ctk, spec):
    result = run_module(tmp_path, check=True, path=str(spec), nvidia_ctk=str(ctk), **GKE_FIX)
    assert result["changed"] is True
    assert "libcuda.so.580.159.04" in result["diff"]["after"]
    assert not spec.exists() and not spec.parent.exists()


def test_a_changed_option_rewrites_the_spec_with_a_diff(tmp_path, ctk, spec):
    run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), **GKE_FIX)
    before = spec.read_text()
    result = run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), driver_root="/",
                        library_search_paths=["/opt/nvidia/lib64"])
    assert result["changed"] is True
    assert result["diff"]["before"] == before and "/opt/nvidia/lib64" in spec.read_text()


def test_gke_driver_root_fails_with_the_fix_and_leaves_the_spec_alone(tmp_path, ctk, spec):
    run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), **GKE_FIX)
    before = spec.read_text()
    result = run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), driver_root=str(tmp_path / "usr/local/nvidia"))
    assert result["failed"] is True
    assert "invalid device, empty device edits" in result["msg"]
    assert result["suggested"]["driver_root"] == "/"
    assert result["suggested"]["library_search_paths"] == [str(tmp_path / "usr/local/nvidia/lib64")]
    assert "driver_root=/ and library_search_paths" in result["hint"]
    assert spec.read_text() == before


def test_executable_search_paths_go_in_front_of_path(tmp_path, ctk, spec):
    run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk), executable_search_paths=["/usr/local/nvidia/bin"],
               env={"PATH": "/usr/bin:/bin"})
    assert calls(ctk)[0]["path"] == "/usr/local/nvidia/bin:/usr/bin:/bin"


def test_nvidia_ctk_is_found_on_path(tmp_path, ctk, spec):
    result = run_module(tmp_path, path=str(spec), env={"PATH": "%s:/usr/bin:/bin" % ctk.parent})
    assert result["changed"] is True and result["command"][0] == str(ctk)


def test_absent_removes_the_spec_then_changes_nothing(tmp_path, ctk, spec):
    run_module(tmp_path, path=str(spec), nvidia_ctk=str(ctk))
    checked = run_module(tmp_path, check=True, path=str(spec), state="absent")
    assert checked["changed"] is True and spec.exists()
    removed = run_module(tmp_path, path=str(spec), state="absent")
    assert removed["changed"] is True and removed["diff"]["after"] == "" and not spec.exists()
    assert run_module(tmp_path, path=str(spec), state="absent")["changed"] is False
    assert len(calls(ctk)) == 1  # absent does not need nvidia-ctk


def test_without_nvidia_ctk_check_mode_assumes_a_change(tmp_path, spec):
    env = {"PATH": str(tmp_path / "empty")}
    result = run_module(tmp_path, check=True, path=str(spec), env=env)
    assert result["changed"] is True and "not installed yet" in json.dumps(result["warnings"])
    failed = run_module(tmp_path, path=str(spec), env=env)
    assert failed["failed"] is True and "nvidia-ctk not found" in failed["msg"]


@pytest.mark.parametrize("params, named", [
    ({"path": "/etc/cdi/nvidia.yml"}, ".yaml or .json"),
    ({"driver_root": "usr/local/nvidia"}, "driver_root"),
    ({"library_search_paths": ["lib64"]}, "library_search_paths (lib64)"),
    ({"executable_search_paths": ["bin"]}, "executable_search_paths (bin)"),
])
def test_bad_paths_are_refused_before_nvidia_ctk_runs(tmp_path, ctk, params, named):
    params.setdefault("path", str(tmp_path / "nvidia.yaml"))
    result = run_module(tmp_path, nvidia_ctk=str(ctk), **params)
    assert result["failed"] is True and named in result["msg"]
    assert calls(ctk) == []
