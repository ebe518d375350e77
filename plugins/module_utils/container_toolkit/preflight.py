# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The container_toolkit role's checks of its variables, before anything touches the host.

The input holds the role's variables under their own names and the host's
``os_family`` fact, so every problem names the inventory variable the user
wrote (``container_toolkit_version``, ``container_toolkit_cdi_driver_root``).
All problems are returned at once, one string each (no final full stop: the
role joins them with "; "); an empty list means the role may go on. The signing key given inline is read (whether it is set) but
never shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.runtimes import RUNTIMES
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import problem, require_mapping, show

OS_FAMILIES = ("Debian", "RedHat")
# The version as NVIDIA's apt and rpm repositories name it: upstream version, then the package revision.
VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(~[0-9A-Za-z.]+)?-[0-9A-Za-z.~+]+$")
VOLUME_MOUNTS_KEY = "accept-nvidia-visible-devices-as-volume-mounts"
# Run by the runtime and the CDI hooks without a shell, so without PATH.
EXECUTABLES = ("container_toolkit_nvidia_ctk_path", "container_toolkit_runtime_path", "container_toolkit_cdi_hook_path")
CDI_SPEC_SUFFIX = re.compile(r"\.(yaml|json)$")
GKE_LAYOUT = ('for the GKE layout: container_toolkit_cdi_driver_root "/", '
              'container_toolkit_cdi_library_search_paths ["/usr/local/nvidia/lib64"], '
              'container_toolkit_cdi_executable_search_paths ["/usr/local/nvidia/bin"]')


def container_toolkit_preflight(settings):
    """Return the problems of the role's variables (see the module docstring); ``[]`` when none.

    ``settings`` maps the role's ``container_toolkit_*`` variables to their
    values (defaults where the inventory sets none) and ``os_family`` to the
    host's ``ansible_facts['os_family']``. The rules hold whatever the state,
    except the CDI spec's (only with ``container_toolkit_cdi_generate``) and
    the CDI paths' (only when that spec is generated, with state present).
    """
    require_mapping(settings, "container_toolkit_preflight")
    problems = _os_family(settings.get("os_family"))
    if _flag(settings, "container_toolkit_install_packages", True):
        problems += _version(settings.get("container_toolkit_version"))
    problems += _runtime(settings)
    problems += _absolute(settings, "container_toolkit_config_path", "the toolkit config nvidia-ctk writes")
    problems += _executables(settings)
    problems += _volume_mounts(settings)
    if settings.get("container_toolkit_repo_key_content") and settings.get("container_toolkit_repo_key_url"):
        problems.append("Set container_toolkit_repo_key_content or container_toolkit_repo_key_url, not both")
    if _flag(settings, "container_toolkit_cdi_generate", False):
        problems += _cdi_spec_path(settings.get("container_toolkit_cdi_spec_path"))
        if settings.get("container_toolkit_state", "present") == "present":
            problems += _cdi_paths(settings)
    return problems


def _flag(settings, name, default):
    value = settings.get(name)
    return default if value is None else boolean(value, strict=False)


def _is_abs(value):
    return isinstance(value, str) and os.path.isabs(value)


def _os_family(family):
    if family in OS_FAMILIES:
        return []
    return ["container_toolkit supports the OS families %s (apt or dnf); this host is %s"
            % (", ".join(OS_FAMILIES), family)]


def _version(version):
    if isinstance(version, str) and VERSION.match(version):
        return []
    return [problem("container_toolkit_version", "must carry the package revision as the repositories name it, "
                    "e.g. 1.17.8-1", version)]


def _runtime(settings):
    """The runtime's config file nvidia-ctk edits: the preset's, or the user's in the engine's format."""
    runtime = settings.get("container_toolkit_runtime", "docker")
    if runtime not in RUNTIMES:
        return [problem("container_toolkit_runtime", "must be one of " + ", ".join(RUNTIMES), runtime)]
    engine = RUNTIMES[runtime]["engine"]
    problems = []
    if engine == "crio" and _flag(settings, "container_toolkit_cdi_enabled", False):
        problems.append(problem("container_toolkit_cdi_enabled", "is only supported by nvidia-ctk for docker and "
                                "containerd (CRI-O reads CDI specs by itself); set it false for "
                                "container_toolkit_runtime=%s" % runtime))
    path = settings.get("container_toolkit_runtime_config_path") or RUNTIMES[runtime]["config_path"]
    if not _is_abs(path):
        return problems + [problem("container_toolkit_runtime_config_path", "must be an absolute path (the "
                                   "runtime's config that nvidia-ctk edits)", path)]
    if (engine == "docker") != path.endswith(".json"):
        problems.append(problem("container_toolkit_runtime_config_path", "does not fit container_toolkit_runtime=%s: "
                                "docker reads JSON (daemon.json), containerd and CRI-O read TOML" % runtime, path))
    return problems


def _absolute(settings, name, what):
    value = settings.get(name)
    return [] if _is_abs(value) else [problem(name, "must be an absolute path (%s)" % what, value)]


def _executables(settings):
    relative = ["%s (%s)" % (name, settings[name]) for name in EXECUTABLES
                if settings.get(name) and not _is_abs(settings[name])]
    if not relative:
        return []
    return ["%s must be absolute paths of the executables (the runtime and the CDI hooks run them without a "
            "shell's PATH)" % ", ".join(relative)]


def _volume_mounts(settings):
    config = settings.get("container_toolkit_config") or {}
    if not isinstance(config, Mapping) or VOLUME_MOUNTS_KEY not in config:
        return []
    wanted = _flag(settings, "container_toolkit_volume_mounts", False)
    if boolean(config[VOLUME_MOUNTS_KEY], strict=False) == wanted:
        return []
    return ["container_toolkit_config sets %s to %s, differently from container_toolkit_volume_mounts (%s); set it "
            "in one place" % (VOLUME_MOUNTS_KEY, show(config[VOLUME_MOUNTS_KEY]), show(wanted))]


def _cdi_spec_path(path):
    if _is_abs(path) and CDI_SPEC_SUFFIX.search(path):
        return []
    return [problem("container_toolkit_cdi_spec_path", "must be absolute and end in .yaml or .json: CDI runtimes "
                    "read no other files, and nvidia-ctk would append .yaml", path)]


def _cdi_paths(settings):
    """Every relative CDI path, each as ``variable: path``; the GKE layout shows what absolute ones look like."""
    driver_root = settings.get("container_toolkit_cdi_driver_root", "/")
    dev_root = settings.get("container_toolkit_cdi_dev_root")
    named = [("container_toolkit_cdi_driver_root", driver_root)]
    named += [("container_toolkit_cdi_dev_root", dev_root)] if dev_root else []
    for name in ("container_toolkit_cdi_library_search_paths", "container_toolkit_cdi_executable_search_paths"):
        named += [(name, path) for path in settings.get(name) or []]
    relative = ["%s: %s" % (name, path) for name, path in named if not _is_abs(path)]
    if not relative:
        return []
    return ["CDI paths must be absolute (nvidia-ctk resolves them from / of the host); relative: %s; %s"
            % (", ".join(relative), GKE_LAYOUT)]
