# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the container_toolkit role's variables mean for the host: runtime, settings, packages, repository."""

import re
from pathlib import Path

import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.plan import container_toolkit_plan

REPO = Path(__file__).resolve().parents[5]
ROLE = REPO / "roles" / "container_toolkit"
DEFAULTS = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
ROLE_VARS = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
PACKAGES = ROLE_VARS["_container_toolkit_packages"]
KEY = "/etc/pki/rpm-gpg/RPM-GPG-KEY-nvidia-container-toolkit"


def plan(**overrides):
    settings = dict(DEFAULTS, os_family="Debian", packages=PACKAGES, rpm_key_path=KEY,
                    container_toolkit_repo_key_given=False)
    settings.update(overrides)
    return container_toolkit_plan(settings)


def test_the_defaults_configure_docker_from_the_public_repository():
    result = plan()
    assert result["runtime"] == {"engine": "docker", "config_path": "/etc/docker/daemon.json", "service": "docker"}
    assert result["repository"] == {"url": "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)",
                                    "key_url": "https://nvidia.github.io/libnvidia-container/gpgkey",
                                    "gpgkey": "https://nvidia.github.io/libnvidia-container/gpgkey"}
    assert plan(os_family="RedHat")["repository"]["url"] == \
        "https://nvidia.github.io/libnvidia-container/stable/rpm/$basearch"


def test_the_user_s_runtime_path_and_service_win_over_the_preset():
    runtime = plan(container_toolkit_runtime="rke2", container_toolkit_runtime_service="rke2-agent")["runtime"]
    assert runtime == {"engine": "containerd", "service": "rke2-agent",
                       "config_path": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"}


def test_the_volume_mounts_variable_is_laid_over_the_toolkit_config():
    settings = plan(container_toolkit_config={"nvidia-container-cli.no-cgroups": True},
                    container_toolkit_volume_mounts=True)["toolkit_settings"]
    assert settings == {"nvidia-container-cli.no-cgroups": True,
                        "accept-nvidia-visible-devices-as-volume-mounts": True}
    assert plan()["toolkit_settings"] == {"accept-nvidia-visible-devices-as-volume-mounts": False}


def test_the_four_packages_are_pinned_as_each_package_manager_writes_it():
    result = plan(container_toolkit_version="1.18.0-1")
    assert result["apt_packages"] == ["nvidia-container-toolkit=1.18.0-1", "nvidia-container-toolkit-base=1.18.0-1",
                                      "libnvidia-container-tools=1.18.0-1", "libnvidia-container1=1.18.0-1"]
    assert result["dnf_packages"] == [name + "-1.18.0-1" for name in PACKAGES]


def test_a_dnf_lock_pattern_finds_its_own_package_s_line_at_any_version_only():
    locks = plan(container_toolkit_version="1.18.0-1")["dnf_locks"]
    assert [lock["package"] for lock in locks] == PACKAGES
    assert locks[0]["line"] == "nvidia-container-toolkit-0:1.18.0-1.*"
    earlier = ["nvidia-container-toolkit-0:1.17.8-1.*", "nvidia-container-toolkit-base-0:1.17.8-1.*"]
    assert [line for line in earlier if re.search(locks[0]["regexp"], line)] == earlier[:1]
    assert [line for line in earlier if re.search(locks[1]["regexp"], line)] == earlier[1:]


def test_mirrors_and_an_inline_key():
    repository = plan(container_toolkit_repo_url="file:/srv/mirror", container_toolkit_repo_key_given=True,
                      os_family="RedHat")["repository"]
    assert repository["url"] == "file:/srv/mirror"
    assert repository["gpgkey"] == "file://" + KEY
    assert plan(container_toolkit_repo_key_url="https://mirror/key")["repository"]["gpgkey"] == "https://mirror/key"


def test_an_unsupported_os_family_has_no_default_repository():
    assert plan(os_family="Suse")["repository"]["url"] is None


def test_the_role_hands_the_plan_every_variable_it_reads():
    text = (ROLE / "vars" / "main.yml").read_text()
    plan_text = (REPO / "plugins/module_utils/container_toolkit/plan.py").read_text()
    inputs = set(DEFAULTS) | {"os_family", "packages", "rpm_key_path", "container_toolkit_repo_key_given"}
    read = set(re.findall(r'"(\w+)"', plan_text)) & inputs
    handed = set(re.findall(r"'(\w+)':", text[text.index("_container_toolkit_plan:"):text.index("_container_toolkit_engine:")]))
    assert read and read <= handed, read - handed
