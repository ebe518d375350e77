#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpuci.runners maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_ctk_cdi
short_description: Let nvidia-ctk generate the CDI spec of a GPU host, idempotently
description:
  - Runs C(nvidia-ctk cdi generate) into a private temporary file, compares the
    result with the spec at I(path) and replaces the spec atomically only when
    they differ. nvidia-ctk stays the one author of the spec, while the task
    reports real changes, supports check mode and shows a diff; a
    C(command) task could only report a change on every run or never.
  - The options cover driver layouts other than a driver installed into C(/),
    such as GKE's (driver in C(/usr/local/nvidia), device nodes in C(/dev)),
    with I(driver_root), I(dev_root), I(library_search_paths) and
    I(executable_search_paths).
  - nvidia-ctk v1.17.8 writes the same bytes for the same host state (no
    timestamps or random names), so the comparison is byte for byte.
version_added: 0.1.0
author:
  - gpuci.runners maintainers (@gpuci)
options:
  path:
    description:
      - The CDI spec file. CDI runtimes read C(*.yaml) and C(*.json) files
        only, and nvidia-ctk takes the format from the extension, so it must
        end in one of them.
    type: path
    default: /etc/cdi/nvidia.yaml
  state:
    description:
      - C(present) makes I(path) hold what nvidia-ctk generates for the options.
      - C(absent) deletes I(path); nvidia-ctk is not needed for that.
    type: str
    default: present
    choices: [present, absent]
  driver_root:
    description:
      - nvidia-ctk C(--driver-root), the root the driver's libraries and
        executables are looked up under.
      - On GKE-style nodes (driver in C(/usr/local/nvidia), device nodes in
        C(/dev)) C(/usr/local/nvidia) fails with C(invalid device, empty
        device edits), because nvidia-ctk then looks for the device nodes
        under C(/usr/local/nvidia/dev). Keep C(/) and name the driver's
        library folder in I(library_search_paths) instead; the failure
        message says so.
    type: path
    default: /
  dev_root:
    description:
      - nvidia-ctk C(--dev-root), the root under which C(dev/nvidia*) are
        looked for; not given, nvidia-ctk takes I(driver_root).
    type: path
  library_search_paths:
    description:
      - nvidia-ctk C(--library-search-path), once per folder. When given,
        driver libraries are looked for in these absolute folders only (not
        under I(driver_root), not in the ld cache), in every mode; the flag's
        help says CSV mode only, which is not what v1.17.8 does.
    type: list
    elements: path
    default: []
  executable_search_paths:
    description:
      - Folders put in front of C(PATH) for nvidia-ctk, which looks up
        C(nvidia-smi) and the other driver executables in C(PATH) under
        I(driver_root). On GKE C(/usr/local/nvidia/bin), or the spec has no
        C(nvidia-smi) when Ansible's C(PATH) lacks it.
    type: list
    elements: path
    default: []
  mode:
    description:
      - nvidia-ctk C(--mode). C(auto) picks C(nvml) on a discrete GPU host;
        C(nvml) asks NVML for the GPUs (one device per GPU and strategy);
        C(management) needs no NVML and writes a single C(all) device with
        every device node, for management containers.
    type: str
    default: auto
    choices: [auto, nvml, management, csv, wsl]
  device_name_strategy:
    description:
      - nvidia-ctk C(--device-name-strategy), once per entry. Empty takes
        nvidia-ctk's default (C(index) and C(uuid)).
    type: list
    elements: str
    choices: [index, uuid, type-index]
    default: []
  nvidia_cdi_hook_path:
    description:
      - nvidia-ctk C(--nvidia-cdi-hook-path), the hook executable the spec
        names. Not given, nvidia-ctk looks for C(nvidia-cdi-hook) in C(PATH)
        and falls back to C(/usr/bin/nvidia-cdi-hook).
    type: path
  nvidia_ctk:
    description:
      - Path of the nvidia-ctk binary that generates the spec; found on
        C(PATH) when not given. (Named as in M(gpuci.runners.nvidia_ctk_config);
        not nvidia-ctk's own C(--nvidia-ctk-path), which is the hook path.)
    type: path
notes:
  - In check mode on a host where nvidia-ctk is not installed yet (an
    earlier task would install it), the module cannot generate the spec and
    reports a change with a warning.
  - A failed generation leaves I(path) as it was and returns nvidia-ctk's
    error with a I(hint) and, for the GKE layout, the options that fix it
    (I(suggested)).
seealso:
  - module: gpuci.runners.nvidia_ctk_config
  - name: NVIDIA Container Toolkit, Support for Container Device Interface
    description: NVIDIA's guide to nvidia-ctk cdi generate.
    link: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html
attributes:
  check_mode:
    description: Generates the spec into a temporary file and reports the change without writing I(path).
    support: full
  diff_mode:
    description: Returns the current and the generated spec.
    support: full
"""

EXAMPLES = r"""
- name: CDI spec of a host with the driver installed into /
  gpuci.runners.nvidia_ctk_cdi:
    path: /etc/cdi/nvidia.yaml

- name: GKE layout - driver in /usr/local/nvidia, device nodes in /dev
  gpuci.runners.nvidia_ctk_cdi:
    driver_root: /
    library_search_paths: [/usr/local/nvidia/lib64]
    executable_search_paths: [/usr/local/nvidia/bin]

- name: Remove the spec
  gpuci.runners.nvidia_ctk_cdi:
    path: /etc/cdi/nvidia.yaml
    state: absent
"""

RETURN = r"""
path:
  description: The spec file.
  returned: always
  type: str
  sample: /etc/cdi/nvidia.yaml
command:
  description: The nvidia-ctk command that generated the spec (into a temporary file).
  returned: when nvidia-ctk ran
  type: list
  elements: str
  sample: [nvidia-ctk, cdi, generate, --output=/tmp/x/nvidia.yaml, --format=yaml, --driver-root=/, --mode=auto]
devices:
  description:
    - The device names of the generated spec (request them as C(nvidia.com/gpu=<name>)).
    - Not returned for a YAML spec when PyYAML is missing on the host.
  returned: when a spec was generated
  type: list
  elements: str
  sample: ["0", GPU-4f6f1c2e-0000-4000-8000-000000000000, all]
hint:
  description: What a failed generation most likely means and how to fix it.
  returned: on failure, for nvidia-ctk errors the module knows
  type: str
suggested:
  description: Options that fix the failure (GKE layout), as module option names.
  returned: on failure, when the module knows a fix
  type: dict
  sample: {driver_root: /, library_search_paths: [/usr/local/nvidia/lib64], executable_search_paths: [/usr/local/nvidia/bin]}
"""

import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuci.runners.plugins.module_utils.common.text_files import read_text, write_text

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.cdi import (
    DEVICE_NAME_STRATEGIES, MODES, device_names, error_message, explain_failure, generate_argv, search_path,
    spec_format)


def generate(module, ctk, path):
    """(spec text, argv) from nvidia-ctk, written into a private temporary folder first."""
    p = module.params
    workdir = tempfile.mkdtemp(prefix="nvidia-ctk-cdi-", dir=module.tmpdir)
    try:
        output = os.path.join(workdir, os.path.basename(path))
        argv = generate_argv(ctk, output, driver_root=p["driver_root"], dev_root=p["dev_root"],
                             library_search_paths=p["library_search_paths"], mode=p["mode"],
                             device_name_strategies=p["device_name_strategy"],
                             nvidia_cdi_hook_path=p["nvidia_cdi_hook_path"])
        environ = {}
        path_env = search_path(p["executable_search_paths"], os.environ.get("PATH", ""))
        if path_env is not None:
            environ["PATH"] = path_env
        rc, out, err = module.run_command(argv, environ_update=environ)
        text = read_text(output)
        if rc != 0 or text is None:
            hint, suggested = explain_failure(err, p["driver_root"], p["dev_root"], p["library_search_paths"])
            msg = "nvidia-ctk cdi generate failed: %s" % (error_message(err) or "no spec written (rc=%s)" % rc)
            if hint:
                msg += ". " + hint
            extra = dict(rc=rc, stdout=out, stderr=err, command=argv, path=path)
            if hint:
                extra.update(hint=hint, suggested=suggested)
            module.fail_json(msg=msg, **extra)
        return text, argv
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/cdi/nvidia.yaml"),
            state=dict(type="str", default="present", choices=["present", "absent"]),
            driver_root=dict(type="path", default="/"),
            dev_root=dict(type="path"),
            library_search_paths=dict(type="list", elements="path", default=[]),
            executable_search_paths=dict(type="list", elements="path", default=[]),
            mode=dict(type="str", default="auto", choices=list(MODES)),
            device_name_strategy=dict(type="list", elements="str", default=[], choices=list(DEVICE_NAME_STRATEGIES)),
            nvidia_cdi_hook_path=dict(type="path"),
            nvidia_ctk=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    path = p["path"]
    try:
        fmt = spec_format(path)
    except ValueError as e:
        module.fail_json(msg=str(e), path=path)
    relative = [name for name in ("path", "driver_root", "dev_root") if p[name] and not os.path.isabs(p[name])]
    relative += ["%s (%s)" % (name, d) for name in ("library_search_paths", "executable_search_paths")
                 for d in p[name] if not os.path.isabs(d)]
    if relative:
        module.fail_json(msg="nvidia_ctk_cdi needs absolute paths: %s" % ", ".join(relative), path=path)

    current = read_text(path)
    result = dict(changed=False, path=path)
    if p["state"] == "absent":
        wanted = None
    else:
        ctk = p["nvidia_ctk"] or module.get_bin_path("nvidia-ctk")
        if ctk is None:
            if module.check_mode:
                module.warn("nvidia-ctk is not installed yet; assuming %s changes." % path)
                module.exit_json(changed=True, path=path)
            module.fail_json(msg="nvidia-ctk not found; install nvidia-container-toolkit-base or set nvidia_ctk.",
                             path=path)
        wanted, result["command"] = generate(module, ctk, path)
        names = device_names(wanted, fmt)
        if names is not None:
            result["devices"] = names

    if wanted != current:
        result["changed"] = True
        if module._diff:
            result["diff"] = dict(before=current or "", after=wanted or "", before_header=path, after_header=path)
        if not module.check_mode:
            write_text(module, path, wanted)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
