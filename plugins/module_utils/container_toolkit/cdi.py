# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pure parts of the nvidia_ctk_cdi module: argv, spec format, failure hints.

Everything here follows what ``nvidia-ctk cdi generate`` v1.17.8 does (read
in its source, cmd/nvidia-ctk/cdi/generate and pkg/nvcdi, and run against a
fake driver root):

- ``--output``: the format comes from the extension; a name without
  ``.yaml`` or ``.json`` gets ``.yaml`` appended, and CDI runtimes only read
  ``*.yaml`` and ``*.json`` specs, so the spec path must end in one of them.
- ``--dev-root`` defaults to ``--driver-root``: with the driver under
  /usr/local/nvidia (GKE) and the device nodes in /dev, nvml mode finds the
  GPUs through NVML, no /usr/local/nvidia/dev/nvidia<N>, and the spec fails
  validation with "invalid device, empty device edits".
- ``--library-search-path``: when given, only these (absolute) folders are
  searched for driver libraries, whatever the driver root; the flag's help
  says "only applies to CSV mode", which is not what v1.17.8 does.
- Executables (nvidia-smi, ...) are looked up in ``$PATH`` (then
  /usr/local/sbin ... /bin) under the driver root, hence the extra PATH
  folders.
- The output is deterministic: the same host state gives the same bytes (no
  timestamps, no random names; devices in index order), so the module
  compares the generated text with the file as it is, byte for byte.
"""

from __future__ import annotations

import json
import os
import re

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import require_mapping

try:
    import yaml  # not required on managed hosts: device names are only a convenience
except ImportError:
    yaml = None

SPEC_EXTENSIONS = {".yaml": "yaml", ".json": "json"}
# What v1.17.8's `cdi generate` accepts for --mode (its help lists only the first three).
MODES = ("auto", "nvml", "wsl", "management", "csv")
DEVICE_NAME_STRATEGIES = ("index", "uuid", "type-index")


def spec_format(path):
    """yaml or json, from the spec file's extension; ValueError for any other name."""
    ext = os.path.splitext(path)[1]
    if ext not in SPEC_EXTENSIONS:
        raise ValueError("%s: a CDI spec must end in .yaml or .json (runtimes read no other files; "
                         "nvidia-ctk would append .yaml)" % path)
    return SPEC_EXTENSIONS[ext]


def generate_argv(ctk, output, driver_root="/", dev_root=None, library_search_paths=(), mode="auto",
                  device_name_strategies=(), nvidia_cdi_hook_path=None):
    """The `nvidia-ctk cdi generate` command line that writes the spec to output."""
    argv = [ctk, "cdi", "generate", "--output=%s" % output, "--format=%s" % spec_format(output),
            "--driver-root=%s" % (driver_root or "/")]
    if dev_root:
        argv.append("--dev-root=%s" % dev_root)
    argv.extend("--library-search-path=%s" % p for p in library_search_paths or ())
    if mode:
        argv.append("--mode=%s" % mode)
    argv.extend("--device-name-strategy=%s" % s for s in device_name_strategies or ())
    if nvidia_cdi_hook_path:
        argv.append("--nvidia-cdi-hook-path=%s" % nvidia_cdi_hook_path)
    return argv


def search_path(executable_search_paths, current):
    """PATH for nvidia-ctk: the extra folders first, then the current PATH (None: unchanged)."""
    if not executable_search_paths:
        return None
    return os.pathsep.join(list(executable_search_paths) + ([current] if current else []))


_LOGRUS_ERROR = re.compile(r'level=(?:error|fatal) msg="((?:[^"\\]|\\.)*)"')


def error_message(stderr):
    """nvidia-ctk's own error text from its stderr (logrus lines), else its last line."""
    found = _LOGRUS_ERROR.findall(stderr or "")
    if found:
        return found[-1].replace('\\"', '"')
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _library_dir(driver_root, exists):
    for name in ("lib64", "lib"):
        candidate = os.path.join(driver_root, name)
        if exists(candidate):
            return candidate
    return os.path.join(driver_root, "lib64")


def explain_failure(stderr, driver_root="/", dev_root=None, library_search_paths=(), exists=os.path.isdir):
    """(hint, suggested options) for a failed `cdi generate`, or (None, {}) for an unknown failure.

    Suggested options are module option names; the role maps them to its
    container_toolkit_cdi_* variables.
    """
    driver_root = driver_root or "/"
    message = error_message(stderr)
    devices_under = os.path.join(dev_root or driver_root, "dev")
    separate_driver = driver_root != "/" and not dev_root
    if "empty device edits" in message or "no NVIDIA device nodes found" in message:
        if separate_driver:
            library_dir = _library_dir(driver_root, exists)
            suggested = {"driver_root": "/", "library_search_paths": [library_dir],
                         "executable_search_paths": [os.path.join(driver_root, "bin")]}
            hint = ("nvidia-ctk looked for the GPU device nodes under %s: --dev-root defaults to the driver root. "
                    "With the driver in %s and the device nodes in /dev (the GKE layout), generate with "
                    "driver_root=/ and library_search_paths=[%s] (executable_search_paths=[%s] adds nvidia-smi)."
                    % (devices_under, driver_root, library_dir, suggested["executable_search_paths"][0]))
            return hint, suggested
        hint = ("nvidia-ctk found no NVIDIA device node under %s for the GPUs it was told about. Check that "
                "/dev/nvidiactl and /dev/nvidia<N> exist there (the driver creates them when loaded, or "
                "nvidia-modprobe), or point dev_root at the folder that holds dev/." % devices_under)
        return hint, {}
    if "failed to initialize NVML" in message or "ERROR_LIBRARY_NOT_FOUND" in message:
        where = ", ".join(library_search_paths) if library_search_paths else "the default library folders under %s" % driver_root
        hint = ("NVML did not start: libnvidia-ml.so.1 was looked for in %s. ERROR_LIBRARY_NOT_FOUND means it "
                "is not there (set library_search_paths to the driver's library folder); "
                "ERROR_DRIVER_NOT_LOADED or ERROR_UNKNOWN means no working driver on this host." % where)
        return hint, {}
    return None, {}


def device_names(text, fmt):
    """Device names of a spec (the part after nvidia.com/gpu=), or None when it cannot be parsed here."""
    if fmt != "json" and yaml is None:
        return None
    try:
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    except (ValueError, getattr(yaml, "YAMLError", ValueError)):
        return None
    if not isinstance(data, dict):
        return None
    return [d.get("name") for d in data.get("devices") or [] if isinstance(d, dict)]


def failure_message(result, prefix="container_toolkit_cdi_"):
    """The failed module ``result``'s ``msg``, with the fix it ``suggested`` (module option names) as variables.

    The role's variables are the options with ``prefix``; values are shown as
    JSON, the way an inventory writes them. Without a suggestion, ``msg`` alone.
    """
    require_mapping(result, "result")
    msg = result.get("msg") or "nvidia-ctk cdi generate failed"
    suggested = result.get("suggested") or {}
    if not suggested:
        return msg
    fix = ", ".join("%s%s: %s" % (prefix, name, json.dumps(value)) for name, value in suggested.items())
    return "%s In the inventory: %s." % (msg, fix)
