# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pure parts of nvidia_ctk_cdi: argv, spec format, PATH, failure hints, device names.

The stderr samples are what the real nvidia-ctk v1.17.8 printed against the
fake driver tree of tests/standins (see test_nvidia_ctk_cdi_binary.py, which
runs it).
"""

import json

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.cdi import (
    device_names, error_message, explain_failure, failure_message, generate_argv, search_path, spec_format)

CTK = "/usr/bin/nvidia-ctk"
GKE_ERROR = ('time="2026-11-23T21:11:58Z" level=info msg="Generated CDI spec with version 0.8.0"\n'
             'time="2026-11-23T21:11:58Z" level=error msg="failed to write spec: invalid CDI Spec: '
             'failed add device \\"0\\": invalid device, empty device edits"\n')
MANAGEMENT_ERROR = ('time="2026-11-23T21:10:34Z" level=warning msg="Could not locate /dev/nvidiactl: pattern '
                    '/dev/nvidiactl not found"\ntime="2026-11-23T21:10:34Z" level=error msg="failed to generate CDI '
                    'spec: failed to create device CDI specs: no NVIDIA device nodes found"\n')
NVML_ERROR = ('time="2026-11-23T21:10:34Z" level=error msg="failed to generate CDI spec: failed to create device '
              'CDI specs: failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND"\n')


@pytest.mark.parametrize("path, fmt", [("/etc/cdi/nvidia.yaml", "yaml"), ("/var/run/cdi/nvidia.json", "json")])
def test_spec_format_follows_the_extension(path, fmt):
    assert spec_format(path) == fmt


@pytest.mark.parametrize("path", ["/etc/cdi/nvidia.yml", "/etc/cdi/nvidia", "/etc/cdi/nvidia.YAML"])
def test_spec_format_refuses_names_cdi_runtimes_do_not_read(path):
    with pytest.raises(ValueError, match=r"\.yaml or \.json"):
        spec_format(path)


def test_generate_argv_defaults():
    assert generate_argv(CTK, "/tmp/w/nvidia.yaml") == [
        CTK, "cdi", "generate", "--output=/tmp/w/nvidia.yaml", "--format=yaml", "--driver-root=/", "--mode=auto"]


def test_generate_argv_gke_fix_repeats_list_flags_in_order():
    argv = generate_argv(CTK, "/tmp/w/nvidia.json", driver_root="/", dev_root="/",
                         library_search_paths=["/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"],
                         mode="nvml", device_name_strategies=["uuid", "index"],
                         nvidia_cdi_hook_path="/usr/local/bin/nvidia-cdi-hook")
    assert argv == [
        CTK, "cdi", "generate", "--output=/tmp/w/nvidia.json", "--format=json", "--driver-root=/", "--dev-root=/",
        "--library-search-path=/usr/local/nvidia/lib64", "--library-search-path=/usr/local/nvidia/lib",
        "--mode=nvml", "--device-name-strategy=uuid", "--device-name-strategy=index",
        "--nvidia-cdi-hook-path=/usr/local/bin/nvidia-cdi-hook"]


def test_generate_argv_leaves_out_what_is_not_set():
    argv = generate_argv(CTK, "/tmp/w/nvidia.yaml", driver_root=None, dev_root="", library_search_paths=None,
                         mode=None, device_name_strategies=None)
    assert argv == [CTK, "cdi", "generate", "--output=/tmp/w/nvidia.yaml", "--format=yaml", "--driver-root=/"]


def test_search_path_puts_the_driver_folders_first():
    assert search_path(["/usr/local/nvidia/bin"], "/usr/bin:/bin") == "/usr/local/nvidia/bin:/usr/bin:/bin"
    assert search_path(["/a", "/b"], "") == "/a:/b"
    assert search_path([], "/usr/bin") is None


def test_error_message_reads_the_logrus_error_line_and_unescapes_quotes():
    assert error_message(GKE_ERROR) == ('failed to write spec: invalid CDI Spec: failed add device "0": '
                                        'invalid device, empty device edits')


def test_error_message_falls_back_to_the_last_line():
    assert error_message("Incorrect Usage: flag provided but not defined: -bogus\n\n") == (
        "Incorrect Usage: flag provided but not defined: -bogus")
    assert error_message("") == ""


def test_gke_layout_hint_names_the_fix_measured_on_the_h100_host():
    hint, suggested = explain_failure(GKE_ERROR, driver_root="/usr/local/nvidia",
                                      exists=lambda p: p == "/usr/local/nvidia/lib64")
    assert suggested == {"driver_root": "/", "library_search_paths": ["/usr/local/nvidia/lib64"],
                         "executable_search_paths": ["/usr/local/nvidia/bin"]}
    assert "under /usr/local/nvidia/dev" in hint and "--dev-root defaults to the driver root" in hint
    assert "driver_root=/ and library_search_paths=[/usr/local/nvidia/lib64]" in hint


def test_gke_layout_hint_takes_lib_when_there_is_no_lib64():
    _hint, suggested = explain_failure(GKE_ERROR, driver_root="/opt/nvidia", exists=lambda p: p == "/opt/nvidia/lib")
    assert suggested["library_search_paths"] == ["/opt/nvidia/lib"]


def test_management_mode_without_device_nodes_gets_the_same_fix():
    _hint, suggested = explain_failure(MANAGEMENT_ERROR, driver_root="/usr/local/nvidia", exists=lambda p: True)
    assert suggested["driver_root"] == "/"


@pytest.mark.parametrize("driver_root, dev_root, where", [("/", None, "/dev"), ("/usr/local/nvidia", "/", "/dev"),
                                                          ("/", "/host", "/host/dev")])
def test_missing_device_nodes_without_a_separate_driver_root_suggest_no_options(driver_root, dev_root, where):
    hint, suggested = explain_failure(GKE_ERROR, driver_root=driver_root, dev_root=dev_root)
    assert suggested == {}
    assert "no NVIDIA device node under %s" % where in hint


def test_nvml_failure_names_where_libnvidia_ml_was_looked_for():
    hint, suggested = explain_failure(NVML_ERROR, library_search_paths=["/usr/local/nvidia/lib64"])
    assert suggested == {} and "/usr/local/nvidia/lib64" in hint and "ERROR_LIBRARY_NOT_FOUND" in hint


def test_unknown_failures_get_no_hint():
    assert explain_failure('level=error msg="invalid discovery mode: bogus"') == (None, {})


def test_device_names_of_a_json_and_a_yaml_spec():
    spec = {"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
            "devices": [{"name": "0"}, {"name": "GPU-4f6f1c2e"}, {"name": "all"}]}
    assert device_names(json.dumps(spec), "json") == ["0", "GPU-4f6f1c2e", "all"]
    yaml_text = '---\ncdiVersion: 0.5.0\ndevices:\n- containerEdits: {}\n  name: "0"\n- name: all\nkind: nvidia.com/gpu\n'
    assert device_names(yaml_text, "yaml") == ["0", "all"]


@pytest.mark.parametrize("text, fmt", [("{", "json"), ("[1, 2]", "json"), ("a: [", "yaml")])
def test_device_names_of_something_unreadable_is_none(text, fmt):
    assert device_names(text, fmt) is None


def test_a_failure_message_names_the_role_s_variables_of_the_suggested_fix():
    result = {"msg": "nvidia-ctk cdi generate failed: x. hint", "suggested": {
        "driver_root": "/", "library_search_paths": ["/usr/local/nvidia/lib64"]}}
    assert failure_message(result) == (
        'nvidia-ctk cdi generate failed: x. hint In the inventory: container_toolkit_cdi_driver_root: "/", '
        'container_toolkit_cdi_library_search_paths: ["/usr/local/nvidia/lib64"].')
    assert failure_message({"msg": "unknown failure"}) == "unknown failure"
    assert failure_message({"msg": "unknown failure", "suggested": {}}) == "unknown failure"
