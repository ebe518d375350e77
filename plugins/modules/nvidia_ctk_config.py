#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_ctk_config
short_description: Let nvidia-ctk write runtime or toolkit config, idempotently
description:
  - Computes the wanted file by running C(nvidia-ctk) on a temporary copy of
    the current file, compares the result with the current file and replaces
    it only when they differ, so nvidia-ctk stays the one source of the file
    format while the task reports real changes, supports check mode and
    shows a diff.
  - I(target=runtime) runs C(nvidia-ctk runtime configure) on a container
    runtime's config (docker C(daemon.json), containerd or CRI-O TOML).
  - I(target=toolkit) runs C(nvidia-ctk config --set) on the toolkit's
    C(config.toml).
version_added: 0.1.0
author:
  - gpuci.runners maintainers (@gpuci)
options:
  target:
    description:
      - Which file nvidia-ctk edits.
    type: str
    required: true
    choices: [runtime, toolkit]
  path:
    description:
      - The file to manage.
    type: path
    required: true
  state:
    description:
      - C(present) makes the file hold what nvidia-ctk writes for the options.
      - C(absent) with I(target=runtime) takes the NVIDIA runtime out of a
        docker C(daemon.json) (and deletes the file when nothing else is
        left); a TOML file is deleted only when it holds nothing but what
        nvidia-ctk writes into an empty file, otherwise it is left alone with
        a warning.
      - C(absent) with I(target=toolkit) deletes the file.
    type: str
    default: present
    choices: [present, absent]
  runtime:
    description:
      - The container engine whose config I(path) is. Required for
        I(target=runtime).
    type: str
    choices: [docker, containerd, crio]
  runtime_name:
    description:
      - Name of the NVIDIA runtime in the engine's config.
    type: str
    default: nvidia
  runtime_path:
    description:
      - Path of the C(nvidia-container-runtime) executable the engine runs
        for I(runtime_name) (C(nvidia-ctk runtime configure
        --nvidia-runtime-path)). Empty lets nvidia-ctk find it, as a
        packaged toolkit installs it in C(/usr/bin).
      - Set it for a toolkit outside C(/usr/bin), such as one unpacked on a
        node image or a host without package access.
    type: path
  set_as_default:
    description:
      - Make the NVIDIA runtime the default one.
      - When false and the docker config names it as default, that entry is
        removed; a TOML config that still names it fails the task, since
        nvidia-ctk cannot unset it.
    type: bool
    default: false
  cdi_enabled:
    description:
      - Enable CDI in the engine (docker and containerd).
      - When false, a docker config's C(features.cdi) is removed; a
        containerd config that still enables it fails the task.
    type: bool
    default: false
  settings:
    description:
      - Toolkit config keys, dotted as C(nvidia-ctk config --set) takes them.
      - Booleans become C(true)/C(false), lists colon-separated values (as nvidia-ctk 1.17 reads them).
    type: dict
    default: {}
  nvidia_ctk:
    description:
      - Path of the nvidia-ctk binary; found on C(PATH) when not given.
    type: path
notes:
  - In check mode on a host where nvidia-ctk is not installed yet (the
    packages would be installed by an earlier task), the module cannot
    compute the file and reports a change with a warning.
seealso:
  - name: NVIDIA Container Toolkit install guide
    description: How NVIDIA configures runtimes with nvidia-ctk.
    link: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html
attributes:
  check_mode:
    description: Computes the wanted file and reports the change without writing it.
    support: full
  diff_mode:
    description: Returns the current and the wanted file.
    support: full
"""

EXAMPLES = r"""
- name: Docker with the NVIDIA runtime as default, CDI off
  gpuci.runners.nvidia_ctk_config:
    target: runtime
    path: /etc/docker/daemon.json
    runtime: docker
    set_as_default: true

- name: Legacy volume-mount device list
  gpuci.runners.nvidia_ctk_config:
    target: toolkit
    path: /etc/nvidia-container-runtime/config.toml
    settings:
      accept-nvidia-visible-devices-as-volume-mounts: true
"""

RETURN = r"""
path:
  description: The managed file.
  returned: always
  type: str
  sample: /etc/docker/daemon.json
command:
  description: The nvidia-ctk command that computed the wanted file (on a temporary copy).
  returned: when nvidia-ctk ran
  type: list
  elements: str
  sample: [nvidia-ctk, runtime, configure, --runtime=docker, --config=/tmp/x/daemon.json, --set-as-default]
"""

import json
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuci.runners.plugins.module_utils.common.text_files import read_text, write_text

try:
    import tomllib  # Python 3.11+, only for reading leftovers
except ImportError:
    tomllib = None


def ctk_value(value):
    """Render a value the way `nvidia-ctk config --set key=value` parses it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ":".join(ctk_value(v) for v in value)  # v1.17 splits lists on ':'
    return str(value)


class Computer(object):
    """Runs nvidia-ctk in a private temporary folder and returns file texts."""

    def __init__(self, module, ctk):
        self.module = module
        self.ctk = ctk
        self.command = None
        self.workdir = tempfile.mkdtemp(prefix="nvidia-ctk-config-")

    def cleanup(self):
        shutil.rmtree(self.workdir, ignore_errors=True)

    def run(self, argv):
        self.command = argv
        rc, out, err = self.module.run_command(argv)
        if rc != 0:
            self.module.fail_json(msg="nvidia-ctk failed: %s" % err.strip(), rc=rc,
                                  stdout=out, stderr=err, command=argv)

    def scratch(self, name, text):
        """A temporary file holding text (or no file for None)."""
        path = os.path.join(self.workdir, name)
        if os.path.exists(path):
            os.remove(path)
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        return path

    def runtime(self, text, runtime, name, set_as_default, cdi_enabled, runtime_path=None):
        work = self.scratch("runtime.conf", text)
        argv = [self.ctk, "runtime", "configure", "--runtime=%s" % runtime,
                "--config=%s" % work, "--nvidia-runtime-name=%s" % name]
        if runtime_path:
            argv.append("--nvidia-runtime-path=%s" % runtime_path)
        if set_as_default:
            argv.append("--set-as-default")
        if cdi_enabled:
            argv.append("--cdi.enabled")
        self.run(argv)
        return read_text(work)

    def toolkit(self, text, settings):
        source = self.scratch("config.source.toml", text)
        output = self.scratch("config.toml", None)
        argv = [self.ctk, "config", "--config-file=%s" % source, "--output=%s" % output]
        for key in sorted(settings):
            argv.append("--set=%s=%s" % (key, ctk_value(settings[key])))
        self.run(argv)
        return read_text(output)


def docker_without(text, name, drop_default, drop_cdi, drop_runtime):
    """daemon.json text with NVIDIA entries taken out, or None when empty."""
    if text is None or not text.strip():
        return text
    data = json.loads(text)
    before = json.dumps(data, sort_keys=True)
    if drop_runtime:
        runtimes = data.get("runtimes", {})
        runtimes.pop(name, None)
        if not runtimes:
            data.pop("runtimes", None)
    if drop_default and data.get("default-runtime") == name:
        data.pop("default-runtime")
    if drop_cdi and "cdi" in data.get("features", {}):
        data["features"].pop("cdi")
        if not data["features"]:
            data.pop("features")
    if json.dumps(data, sort_keys=True) == before:
        return text  # untouched: keep the file's own formatting
    if not data:
        return None
    # As nvidia-ctk writes daemon.json: four-space indent, no final newline.
    return json.dumps(data, indent=4)


def toml_leftovers(text, engine, name, set_as_default, cdi_enabled):
    """Settings nvidia-ctk cannot unset that a TOML config still holds."""
    if tomllib is None or not text:
        return []
    data = tomllib.loads(text)
    plugins = data.get("plugins", {})
    found = []
    if engine == "containerd":
        for cri in ("io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime"):
            section = plugins.get(cri, {})
            if not set_as_default and section.get("containerd", {}).get("default_runtime_name") == name:
                found.append('plugins."%s".containerd.default_runtime_name = "%s"' % (cri, name))
            if not cdi_enabled and section.get("enable_cdi") is True:
                found.append('plugins."%s".enable_cdi = true' % cri)
    elif engine == "crio" and not set_as_default:
        if data.get("crio", {}).get("runtime", {}).get("default_runtime") == name:
            found.append('crio.runtime.default_runtime = "%s"' % name)
    return found


def wanted_runtime(module, computer, current):
    p = module.params
    engine, name = p["runtime"], p["runtime_name"]
    if p["state"] == "absent":
        if engine == "docker":
            return docker_without(current, name, True, p["cdi_enabled"], True)
        fresh = computer.runtime(None, engine, name, p["set_as_default"], p["cdi_enabled"], p["runtime_path"])
        if current == fresh:
            return None
        if current is not None:
            module.warn("%s holds more than nvidia-ctk wrote; left in place. Remove the %s runtime by hand."
                        % (p["path"], name))
        return current
    if engine == "docker":
        current = docker_without(current, name, not p["set_as_default"], not p["cdi_enabled"], False)
    else:
        leftovers = toml_leftovers(current, engine, name, p["set_as_default"], p["cdi_enabled"])
        if leftovers:
            module.fail_json(msg="%s still sets %s; nvidia-ctk cannot unset that. Remove it by hand or "
                                 "set set_as_default/cdi_enabled to match." % (p["path"], ", ".join(leftovers)))
    return computer.runtime(current, engine, name, p["set_as_default"], p["cdi_enabled"], p["runtime_path"])


def main():
    module = AnsibleModule(
        argument_spec=dict(
            target=dict(type="str", required=True, choices=["runtime", "toolkit"]),
            path=dict(type="path", required=True),
            state=dict(type="str", default="present", choices=["present", "absent"]),
            runtime=dict(type="str", choices=["docker", "containerd", "crio"]),
            runtime_name=dict(type="str", default="nvidia"),
            runtime_path=dict(type="path"),
            set_as_default=dict(type="bool", default=False),
            cdi_enabled=dict(type="bool", default=False),
            settings=dict(type="dict", default={}),
            nvidia_ctk=dict(type="path"),
        ),
        required_if=[("target", "runtime", ["runtime"])],
        supports_check_mode=True,
    )
    p = module.params
    path = p["path"]
    current = read_text(path)
    result = dict(changed=False, path=path)

    toolkit_absent = p["target"] == "toolkit" and p["state"] == "absent"
    docker_absent = p["target"] == "runtime" and p["state"] == "absent" and p["runtime"] == "docker"
    ctk = p["nvidia_ctk"] or module.get_bin_path("nvidia-ctk")
    if not (toolkit_absent or docker_absent):
        if p["state"] == "absent" and (ctk is None or current is None):
            module.exit_json(**result)  # nothing nvidia-ctk could have written remains checkable
        if ctk is None:
            if module.check_mode:
                module.warn("nvidia-ctk is not installed yet; assuming %s changes." % path)
                module.exit_json(changed=True, path=path)
            module.fail_json(msg="nvidia-ctk not found; install nvidia-container-toolkit-base or set nvidia_ctk.")

    computer = Computer(module, ctk)
    try:
        if toolkit_absent:
            wanted = None
        elif p["target"] == "toolkit":
            wanted = computer.toolkit(current, p["settings"])
        else:
            wanted = wanted_runtime(module, computer, current)
    finally:
        computer.cleanup()

    if computer.command:
        result["command"] = computer.command
    if wanted != current:
        result["changed"] = True
        if module._diff:
            result["diff"] = dict(before=current or "", after=wanted or "",
                                  before_header=path, after_header=path)
        if not module.check_mode:
            write_text(module, path, wanted)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
