# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One table of container runtimes for nvidia-ctk on the hosts and the GPU Operator's toolkit container."""

from pathlib import Path

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.runtimes import (
    RUNTIMES,
    container_runtimes,
    operator_toolkit_env,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

REPO = Path(__file__).resolve().parents[5]


def test_both_roles_offer_exactly_the_runtimes_of_the_table(role_options):
    assert sorted(role_options("container_toolkit")["container_toolkit_runtime"]["choices"]) == sorted(RUNTIMES)
    assert sorted(role_options("gpu_operator")["gpu_operator_container_runtime"]["choices"]) == sorted(RUNTIMES)


def test_nvidia_ctk_gets_the_preset_unless_the_user_names_a_path_or_service():
    assert container_runtimes({"runtime": "rke2", "config_path": "", "service": ""}) == {
        "engine": "containerd", "config_path": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
        "service": "rke2-server"}
    agent = container_runtimes({"runtime": "rke2", "service": "rke2-agent", "config_path": "/etc/mine.toml"})
    assert (agent["service"], agent["config_path"]) == ("rke2-agent", "/etc/mine.toml")
    assert container_runtimes({"runtime": "crio"})["engine"] == "crio"


@pytest.mark.parametrize("runtime", ["k3s", "rke2", "microk8s"])
def test_the_operator_edits_the_template_nvidia_ctk_edits_and_reads_the_rendered_file(runtime):
    env = {item["name"]: item["value"] for item in operator_toolkit_env(runtime)}
    assert env["CONTAINERD_CONFIG"] == container_runtimes({"runtime": runtime})["config_path"]
    assert env["RUNTIME_CONFIG_SOURCE"] == "file=" + RUNTIMES[runtime]["rendered_config"]
    assert env["CONTAINERD_SOCKET"].endswith("containerd.sock")


@pytest.mark.parametrize("runtime", ["docker", "containerd", "crio"])
def test_the_operator_finds_plain_runtimes_by_itself(runtime):
    assert operator_toolkit_env(runtime) == []


def test_an_unknown_runtime_is_named_by_the_variable_that_holds_it():
    with pytest.raises(ValidationError, match=r"gpu_operator_container_runtime: must be one of docker, .* \(got 'podman'\)"):
        operator_toolkit_env("podman")
    with pytest.raises(ValidationError, match="container_runtimes.runtime"):
        container_runtimes({"runtime": "podman"})


def _row(text, runtime):
    (row,) = [line for line in text.splitlines() if line.lower().startswith(("| `%s` |" % runtime, "| %s |" % runtime))]
    return row


def test_the_container_toolkit_readme_shows_each_runtimes_file_and_service():
    """The runtime tables in the docs are written by hand; they must say what the code does."""
    text = (REPO / "roles/container_toolkit/README.md").read_text()
    for runtime, preset in RUNTIMES.items():
        row = _row(text, runtime)
        assert "`%s`" % preset["config_path"] in row and "`%s` |" % preset["service"] in row


@pytest.mark.parametrize("document", ["roles/gpu_operator/README.md", "docs/troubleshooting.md"])
def test_the_operator_docs_show_each_templated_runtimes_file_and_socket(document):
    text = (REPO / document).read_text()
    for runtime in ("k3s", "rke2", "microk8s"):
        row = _row(text, runtime)
        assert "`%s`" % RUNTIMES[runtime]["config_path"] in row and "`%s`" % RUNTIMES[runtime]["socket"] in row
