# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where each container runtime keeps what NVIDIA's container toolkit configures, in one place.

Two roles read this table. container_toolkit runs nvidia-ctk on the GPU
hosts: it needs the file nvidia-ctk edits, the engine format it writes there
and the service that reads it (``container_runtimes``). gpu_operator gives
the operator's toolkit container the same file, the runtime's socket and,
where the distribution renders containerd's config from a template and runs
its own containerd (k3s, rke2, microk8s: no ``containerd config dump`` to
ask), the rendered file to read instead (``operator_toolkit_env``).
Sources: docs.k3s.io "Configuring containerd", docs.rke2.io "Containerd
Registry Configuration", microk8s.io/docs/configure-host-interfaces.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, require_mapping

RUNTIMES = {
    "docker": {"engine": "docker", "config_path": "/etc/docker/daemon.json", "service": "docker"},
    "containerd": {"engine": "containerd", "config_path": "/etc/containerd/config.toml", "service": "containerd"},
    # A drop-in CRI-O reads after crio.conf.
    "crio": {"engine": "crio", "config_path": "/etc/crio/crio.conf.d/99-nvidia.conf", "service": "crio"},
    "k3s": {"engine": "containerd", "config_path": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl",
            "service": "k3s", "socket": "/run/k3s/containerd/containerd.sock",
            "rendered_config": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"},
    # rke2's containerd listens where k3s's does.
    "rke2": {"engine": "containerd", "config_path": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
             "service": "rke2-server", "socket": "/run/k3s/containerd/containerd.sock",
             "rendered_config": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml"},
    "microk8s": {"engine": "containerd", "config_path": "/var/snap/microk8s/current/args/containerd-template.toml",
                 "service": "snap.microk8s.daemon-containerd",
                 "socket": "/var/snap/microk8s/common/run/containerd.sock",
                 "rendered_config": "/var/snap/microk8s/current/args/containerd.toml"},
}


def _preset(runtime, path):
    if runtime not in RUNTIMES:
        raise ValidationError(path, "must be one of " + ", ".join(RUNTIMES), runtime)
    return RUNTIMES[runtime]


def container_runtimes(value):
    """What nvidia-ctk needs for ``value["runtime"]``: ``engine``, ``config_path`` and ``service``.

    A non-empty ``config_path`` or ``service`` in ``value`` (the user's
    override, an rke2 agent's ``rke2-agent`` say) replaces the preset's.
    """
    require_mapping(value, "container_runtimes")
    preset = _preset(value.get("runtime"), "container_runtimes.runtime")
    return {"engine": preset["engine"], "config_path": value.get("config_path") or preset["config_path"],
            "service": value.get("service") or preset["service"]}


def operator_toolkit_env(runtime, path="gpu_operator_container_runtime"):
    """The GPU Operator toolkit container's env for ``runtime``.

    None where the operator finds the runtime by itself (docker, containerd,
    CRI-O at their usual places); for a distribution's templated containerd,
    the template to edit, the socket, and the rendered file to read the
    current config from (toolkit 1.17 otherwise asks ``containerd config dump``).
    """
    preset = _preset(runtime, path)
    if "rendered_config" not in preset:
        return []
    return [{"name": "CONTAINERD_CONFIG", "value": preset["config_path"]},
            {"name": "CONTAINERD_SOCKET", "value": preset["socket"]},
            {"name": "RUNTIME_CONFIG_SOURCE", "value": "file=" + preset["rendered_config"]}]
