# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pure helpers of nvidia_ctk_config; nvidia-ctk itself runs in tests/host."""

import json

import pytest

from ansible_collections.gpuci.runners.plugins.modules.nvidia_ctk_config import (
    Computer, ctk_value, docker_without, toml_leftovers)

KUBEFLOW_DAEMON = json.dumps({
    "default-runtime": "nvidia",
    "features": {"cdi": True},
    "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}},
}, indent=4)


@pytest.mark.parametrize("value, text", [
    (True, "true"), (False, "false"), (3, "3"), ("auto", "auto"),
    (["/etc/cdi", "/var/run/cdi"], "/etc/cdi:/var/run/cdi"),  # nvidia-ctk 1.17 splits lists on ':'
])
def test_ctk_value_renders_what_nvidia_ctk_set_parses(value, text):
    assert ctk_value(value) == text


def test_docker_without_drops_only_what_is_asked():
    data = json.loads(docker_without(KUBEFLOW_DAEMON, "nvidia", True, False, False))
    assert "default-runtime" not in data and data["features"] == {"cdi": True}


def test_docker_without_keeps_the_users_other_keys():
    text = json.dumps({"log-driver": "journald", "runtimes": {"nvidia": {"path": "x"}}, "default-runtime": "nvidia"})
    assert json.loads(docker_without(text, "nvidia", True, True, True)) == {"log-driver": "journald"}


def test_docker_without_returns_none_when_nothing_is_left():
    assert docker_without(KUBEFLOW_DAEMON, "nvidia", True, True, True) is None


def test_docker_without_leaves_an_untouched_file_byte_for_byte():
    text = '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}\n'
    assert docker_without(text, "nvidia", True, True, False) == text


def test_docker_without_ignores_another_default_runtime():
    text = json.dumps({"default-runtime": "runc"})
    assert docker_without(text, "nvidia", True, True, True) == text


def test_toml_leftovers_names_what_nvidia_ctk_cannot_unset():
    text = ('version = 2\n[plugins."io.containerd.grpc.v1.cri"]\nenable_cdi = true\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd]\ndefault_runtime_name = "nvidia"\n')
    assert toml_leftovers(text, "containerd", "nvidia", False, False) == [
        'plugins."io.containerd.grpc.v1.cri".containerd.default_runtime_name = "nvidia"',
        'plugins."io.containerd.grpc.v1.cri".enable_cdi = true',
    ]
    assert toml_leftovers(text, "containerd", "nvidia", True, True) == []


def test_toml_leftovers_for_crio_default_runtime():
    text = '[crio.runtime]\ndefault_runtime = "nvidia"\n'
    assert toml_leftovers(text, "crio", "nvidia", False, False) == ['crio.runtime.default_runtime = "nvidia"']


class _RecordingModule:
    """Stands in for AnsibleModule.run_command: records argv, writes nothing."""

    def __init__(self):
        self.argv = None

    def run_command(self, argv):
        self.argv = argv
        return 0, "", ""


@pytest.mark.parametrize("runtime_path, flag", [
    ("/var/tmp/toolkit/bin/nvidia-container-runtime",
     "--nvidia-runtime-path=/var/tmp/toolkit/bin/nvidia-container-runtime"),
    (None, None),
])
def test_runtime_path_reaches_nvidia_ctk_only_when_set(runtime_path, flag):
    module = _RecordingModule()
    computer = Computer(module, "nvidia-ctk")
    try:
        computer.runtime(None, "containerd", "nvidia", False, False, runtime_path)
    finally:
        computer.cleanup()
    passed = [a for a in module.argv if a.startswith("--nvidia-runtime-path")]
    assert passed == ([flag] if flag else [])
