# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the container_toolkit role's variables mean for the host, decided in one place.

From the role's variables (under their own names) and the host's
``os_family`` it returns:

- ``runtime``: the engine format nvidia-ctk writes, the runtime's config
  file and its service (module_utils/container_toolkit/runtimes.py, with the
  user's path and service laid over the preset);
- ``toolkit_settings``: the keys of config.toml, ``container_toolkit_config``
  with the keys that have their own variable laid over it;
- ``apt_packages`` and ``dnf_packages``: the role's packages (the four
  NVIDIA releases together, which move as one), each pinned at the version
  as its package manager writes it; ``dnf_locks``: the versionlock line of
  each, and the pattern that finds its earlier line whatever its version;
- ``repository``: the repository's URL and signing key's URL (the public
  ones when the inventory names none; ``url`` is None on an OS family the
  role does not support, which the preflight refuses) and the ``gpgkey``
  dnf verifies with (the key written to the host when given inline).

The preflight (module_utils/container_toolkit/preflight.py) has refused
what this cannot act on before any of it is read.
"""

from __future__ import annotations

import re

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.runtimes import container_runtimes
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import require_mapping

VOLUME_MOUNTS_KEY = "accept-nvidia-visible-devices-as-volume-mounts"
# The public repositories (nvidia.github.io/libnvidia-container, "stable"). $(ARCH) is expanded by apt itself and
# $basearch by dnf; the apt repository is flat ("/" suite).
DEFAULT_REPO_URLS = {
    "Debian": "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)",
    "RedHat": "https://nvidia.github.io/libnvidia-container/stable/rpm/$basearch",
}
DEFAULT_KEY_URL = "https://nvidia.github.io/libnvidia-container/gpgkey"


def container_toolkit_plan(settings):
    """See the module docstring. ``settings``: the role's variables the plan reads; ``os_family``;
    ``container_toolkit_repo_key_given``, whether a key is given inline (the key itself is not needed); and
    from the role's vars, ``packages`` and ``rpm_key_path``, where dnf's inline key is written."""
    require_mapping(settings, "container_toolkit_plan")
    version = settings.get("container_toolkit_version")
    packages = settings.get("packages") or []
    runtime = container_runtimes({"runtime": settings.get("container_toolkit_runtime"),
                                  "config_path": settings.get("container_toolkit_runtime_config_path"),
                                  "service": settings.get("container_toolkit_runtime_service")})
    toolkit_settings = dict(settings.get("container_toolkit_config") or {})
    toolkit_settings[VOLUME_MOUNTS_KEY] = bool(settings.get("container_toolkit_volume_mounts"))
    key_url = settings.get("container_toolkit_repo_key_url") or DEFAULT_KEY_URL
    return {
        "runtime": runtime,
        "toolkit_settings": toolkit_settings,
        "apt_packages": ["%s=%s" % (name, version) for name in packages],
        "dnf_packages": ["%s-%s" % (name, version) for name in packages],
        # The lock list is edited line by line, so a version change replaces a package's line instead of adding one.
        "dnf_locks": [{"package": name, "regexp": "^%s-[0-9]+:" % re.escape(name), "line": "%s-0:%s.*" % (name, version)}
                      for name in packages],
        "repository": {
            "url": settings.get("container_toolkit_repo_url") or DEFAULT_REPO_URLS.get(settings.get("os_family")),
            "key_url": key_url,
            "gpgkey": "file://" + settings.get("rpm_key_path", "") if settings.get("container_toolkit_repo_key_given") else key_url,
        },
    }
