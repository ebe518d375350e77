# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The container_toolkit role's preflight: every rule, all problems at once, each naming its variable."""

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit import preflight
from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.preflight import (
    container_toolkit_preflight)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

REPO = Path(__file__).resolve().parents[5]
ROLE = REPO / "roles" / "container_toolkit"
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
CDI = {"container_toolkit_cdi_generate": True}


def check(**overrides):
    """The problems of the role's defaults on a Debian host, with ``overrides``."""
    return container_toolkit_preflight(dict(DEFAULTS, **dict({"os_family": "Debian"}, **overrides)))


def test_the_defaults_pass_on_both_os_families():
    assert check() == []
    assert check(os_family="RedHat") == []
    assert check(**CDI) == []


def test_the_role_hands_the_preflight_every_variable_it_reads():
    task_text = (ROLE / "tasks" / "preflight.yml").read_text()
    handed = set(re.findall(r"'(container_toolkit_\w+)':", task_text))
    read = set(re.findall(r'"(container_toolkit_\w+)"', Path(preflight.__file__).read_text()))
    # Names that appear only inside messages are read too when they are variables of the role.
    read &= set(DEFAULTS)
    assert read and read <= handed, read - handed
    assert handed <= set(DEFAULTS), handed - set(DEFAULTS)


def test_a_host_without_apt_or_dnf():
    assert check(os_family="Suse") == [
        "container_toolkit supports the OS families Debian, RedHat (apt or dnf); this host is Suse"]


@pytest.mark.parametrize("version", ["1.17.8", "v1.17.8-1", "1.17-1", "", None])
def test_a_version_without_package_revision(version):
    assert check(container_toolkit_version=version) == [
        "container_toolkit_version: must carry the package revision as the repositories name it, e.g. 1.17.8-1 "
        "(got %r)" % version]


@pytest.mark.parametrize("version", ["1.17.8-1", "1.18.0~rc.1-1", "1.17.8-1.el9"])
def test_versions_as_the_repositories_name_them(version):
    assert check(container_toolkit_version=version) == []


def test_the_version_is_not_read_when_the_toolkit_is_on_the_host_already():
    assert check(container_toolkit_version="1.17.8", container_toolkit_install_packages=False) == []


def test_cdi_mode_is_refused_for_crio_only():
    problems = check(container_toolkit_runtime="crio", container_toolkit_cdi_enabled=True)
    assert problems == ["container_toolkit_cdi_enabled: is only supported by nvidia-ctk for docker and containerd "
                        "(CRI-O reads CDI specs by itself); set it false for container_toolkit_runtime=crio"]
    assert check(container_toolkit_runtime="containerd", container_toolkit_cdi_enabled=True) == []


@pytest.mark.parametrize("runtime, path", [
    ("containerd", "/etc/docker/daemon.json"),
    ("docker", "/etc/containerd/config.toml"),
    ("crio", "/etc/crio/crio.json"),
    ("k3s", "/etc/daemon.json"),
])
def test_a_runtime_config_in_the_other_format(runtime, path):
    problems = check(container_toolkit_runtime=runtime, container_toolkit_runtime_config_path=path)
    assert problems == ["container_toolkit_runtime_config_path: does not fit container_toolkit_runtime=%s: docker "
                        "reads JSON (daemon.json), containerd and CRI-O read TOML (got %r)" % (runtime, path)]


@pytest.mark.parametrize("runtime", ["docker", "containerd", "crio", "k3s", "rke2", "microk8s"])
def test_every_preset_config_fits_its_runtime(runtime):
    assert check(container_toolkit_runtime=runtime) == []


def test_an_unknown_runtime():
    assert check(container_toolkit_runtime="podman") == [
        "container_toolkit_runtime: must be one of docker, containerd, crio, k3s, rke2, microk8s (got 'podman')"]


def test_relative_config_paths_name_each_variable():
    problems = check(container_toolkit_runtime_config_path="etc/docker/daemon.json",
                     container_toolkit_config_path="config.toml")
    assert problems == [
        "container_toolkit_runtime_config_path: must be an absolute path (the runtime's config that nvidia-ctk "
        "edits) (got 'etc/docker/daemon.json')",
        "container_toolkit_config_path: must be an absolute path (the toolkit config nvidia-ctk writes) "
        "(got 'config.toml')"]


def test_relative_executables_are_named_together_and_empty_ones_are_fine():
    problems = check(container_toolkit_nvidia_ctk_path="nvidia-ctk", container_toolkit_runtime_path="",
                     container_toolkit_cdi_hook_path="bin/nvidia-cdi-hook")
    assert problems == ["container_toolkit_nvidia_ctk_path (nvidia-ctk), container_toolkit_cdi_hook_path "
                        "(bin/nvidia-cdi-hook) must be absolute paths of the executables (the runtime and the CDI "
                        "hooks run them without a shell's PATH)"]
    assert check(container_toolkit_nvidia_ctk_path="/usr/bin/nvidia-ctk") == []


@pytest.mark.parametrize("config_value, volume_mounts, refused", [
    (False, True, True),
    ("false", True, True),
    ("yes", False, True),
    (True, True, False),
    ("true", True, False),
    (0, False, False),
])
def test_the_volume_mounts_key_set_twice(config_value, volume_mounts, refused):
    problems = check(container_toolkit_config={preflight.VOLUME_MOUNTS_KEY: config_value, "other": 1},
                     container_toolkit_volume_mounts=volume_mounts)
    assert bool(problems) == refused
    if refused:
        assert problems == ["container_toolkit_config sets accept-nvidia-visible-devices-as-volume-mounts to %r, "
                            "differently from container_toolkit_volume_mounts (%r); set it in one place"
                            % (config_value, volume_mounts)]


def test_two_signing_keys_and_the_key_is_not_shown():
    problems = check(container_toolkit_repo_key_content="-----BEGIN PGP-----secret-ish",
                     container_toolkit_repo_key_url="https://mirror/gpgkey")
    assert problems == ["Set container_toolkit_repo_key_content or container_toolkit_repo_key_url, not both"]
    assert check(container_toolkit_repo_key_content="-----BEGIN PGP-----") == []


@pytest.mark.parametrize("path", ["/etc/cdi/nvidia.yml", "etc/cdi/nvidia.yaml", "/etc/cdi/nvidia"])
def test_a_cdi_spec_path_runtimes_do_not_read(path):
    assert check(container_toolkit_cdi_spec_path=path, **CDI) == [
        "container_toolkit_cdi_spec_path: must be absolute and end in .yaml or .json: CDI runtimes read no other "
        "files, and nvidia-ctk would append .yaml (got %r)" % path]
    assert check(container_toolkit_cdi_spec_path=path) == [], "not generated: not read"


def test_relative_cdi_paths_are_listed_as_the_inventory_writes_them():
    problems = check(container_toolkit_cdi_driver_root="usr/local/nvidia", container_toolkit_cdi_dev_root="dev",
                     container_toolkit_cdi_library_search_paths=["/usr/local/nvidia/lib64", "lib64"],
                     container_toolkit_cdi_executable_search_paths=["bin"], **CDI)
    assert problems == [
        "CDI paths must be absolute (nvidia-ctk resolves them from / of the host); relative: "
        "container_toolkit_cdi_driver_root: usr/local/nvidia, container_toolkit_cdi_dev_root: dev, "
        "container_toolkit_cdi_library_search_paths: lib64, container_toolkit_cdi_executable_search_paths: bin; "
        'for the GKE layout: container_toolkit_cdi_driver_root "/", '
        'container_toolkit_cdi_library_search_paths ["/usr/local/nvidia/lib64"], '
        'container_toolkit_cdi_executable_search_paths ["/usr/local/nvidia/bin"]']


def test_cdi_paths_are_read_only_when_a_spec_is_generated_with_state_present():
    relative = {"container_toolkit_cdi_driver_root": "usr/local/nvidia"}
    assert check(**relative) == []
    assert check(container_toolkit_state="absent", **dict(relative, **CDI)) == []
    assert len(check(**dict(relative, **CDI))) == 1


def test_the_rules_hold_with_state_absent_too():
    assert check(container_toolkit_state="absent", container_toolkit_version="1.17.8") != []


def test_every_problem_at_once_in_rule_order():
    problems = check(os_family="Suse", container_toolkit_version="1.17.8",
                     container_toolkit_runtime_config_path="/etc/containerd/config.toml",
                     container_toolkit_repo_key_content="key", container_toolkit_repo_key_url="https://k",
                     container_toolkit_cdi_spec_path="/etc/cdi/nvidia", **CDI)
    assert [p.split(" ")[0] for p in problems] == [
        "container_toolkit", "container_toolkit_version:", "container_toolkit_runtime_config_path:", "Set",
        "container_toolkit_cdi_spec_path:"]


def test_input_that_is_no_mapping():
    with pytest.raises(ValidationError, match="container_toolkit_preflight: must be a mapping"):
        container_toolkit_preflight(["container_toolkit_version"])
