# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What each kind of canary lane runs, and what its log must show to count as proof.

The one table of the canary's checks. ``canary_lanes`` gives every lane the
commands it runs (``lane_commands``) and its Job's name; the Job and the CI
snippets run those commands, and ``canary_verdict`` judges the log of a
finished Job by the check's ``evidence``: every pattern must match a line,
with ``MIG_PROFILE`` standing for the lane's MIG profile. The commands fail
on their own when the device is missing, in a Job and in a CI job alike;
both run them on the image of the lane's gpu_access (``lane_image``).
"""

from __future__ import annotations

import re

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DRA
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, child

MIG_PROFILE = "@MIG_PROFILE@"
CHECKS = {
    "nvidia-smi": {
        "commands": [
            "nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee /tmp/gpu-canary.txt",
            "test -s /tmp/gpu-canary.txt",
        ],
        # e.g. "NVIDIA L40S, 550.54.15, 46068 MiB"
        "evidence": [r"^[^,]+, [0-9][0-9.]*, [0-9]+ MiB$"],
        "proof": "nvidia-smi printed a GPU row",
    },
    "mig": {
        "commands": [
            "nvidia-smi -L | tee /tmp/gpu-canary.txt",
            "grep -q 'MIG %s ' /tmp/gpu-canary.txt" % MIG_PROFILE,
        ],
        # e.g. "  MIG 1g.10gb     Device  0: (UUID: MIG-...)"
        "evidence": [r"^\s*MIG %s\s+Device\s+[0-9]+:" % MIG_PROFILE],
        "proof": "nvidia-smi -L listed the MIG device",
    },
    "dri": {
        "commands": [
            "ls -l /dev/dri/renderD128",
            "vulkaninfo --summary | tee /tmp/gpu-canary.txt",
            "grep -q PHYSICAL_DEVICE_TYPE_DISCRETE_GPU /tmp/gpu-canary.txt",
        ],
        # A character device at the render node, and Vulkan seeing a discrete GPU.
        "evidence": [r"^c\S*\s.*/dev/dri/renderD128$", r"deviceType\s*=\s*PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"],
        "proof": "the render node exists and vulkaninfo saw a discrete GPU",
    },
    # A CPU pool's lane (GitLab mode only, module_utils/gpu_canary/gitlab_jobs.py): no
    # device to see, so its proof is that the job ran its script where the
    # runner put it, in the project's checkout. Its result is "passed".
    "cpu": {
        "commands": [
            'echo "gpu-canary: CPU job ran on $(hostname) ($(uname -srm))"',
            "test -f .gitlab-ci.yml && echo 'gpu-canary: the checkout holds .gitlab-ci.yml'",
        ],
        "evidence": [r"^gpu-canary: CPU job ran on \S+ \(", r"^gpu-canary: the checkout holds \.gitlab-ci\.yml$"],
        "proof": "the job ran its script in the project's checkout",
    },
}
# The negative control (GitLab mode): the GPU lanes' image, run by a pool
# that asks for no GPU, as a job tagged for the wrong pool would be. It must
# see no GPU device node and no nvidia-smi: what a GPU job sees comes from
# its request (device plugin, runtime class, CDI), not from the image or the
# node. A GPU lane is proved only when this holds (gitlab_verdict.py).
NEGATIVE_CONTROL = {
    "commands": [
        'echo "gpu-canary: negative control on $(hostname), a pod without a GPU request"',
        'for dev in /dev/nvidia* /dev/dri/renderD*; do if [ -e "$dev" ]; then echo "gpu-canary: negative control broken: $dev is visible";'
        ' exit 1; fi; done',
        'if command -v nvidia-smi; then echo "gpu-canary: negative control broken: nvidia-smi is on PATH"; exit 1; fi',
        "echo 'gpu-canary: negative control holds: no /dev/nvidia* or /dev/dri/renderD* device node, no nvidia-smi'",
    ],
    "evidence": [r"^gpu-canary: negative control on \S+, ", r"^gpu-canary: negative control holds: "],
    "broken": r"^gpu-canary: negative control broken: ",
}
# Log lines worth quoting besides the evidence (the GPU's name, the driver).
CONTEXT_PATTERN = r"deviceName|driverName|driverInfo|^GPU [0-9]+:"
# What a GPU check's output says of the devices the job saw, for the exact
# proof (gpu_canary/exact_proof.py): each line matching ``gpu`` is one GPU,
# by its name as nvidia-smi prints it; each matching ``mig`` one MIG device,
# by its profile. The nvidia-smi check prints one CSV row per GPU the
# container sees (a MIG device shows its parent GPU's row); ``nvidia-smi -L``
# prints each GPU, and under it each MIG device the container sees.
DEVICE_LINES = {
    "nvidia-smi": {"gpu": r"^(?P<name>[^,]+), [0-9][0-9.]*, [0-9]+ MiB$"},
    # e.g. "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)", "  MIG 1g.10gb     Device  0: (UUID: MIG-...)"
    "mig": {"gpu": r"^GPU [0-9]+: (?P<name>.+?) \(UUID: ", "mig": r"^\s*MIG (?P<profile>\S+)\s+Device\s+[0-9]+:"},
}
# A DRA lane's job stays this long after its checks (DRA_HOLD). The devices
# allocated to its pod's claim are in the claim's status only while the pod
# runs: the resource claim controller clears them and deletes the claim once
# the pod is done (gpu_canary/claims.py). The canary reads them while the job
# runs, the role every second, the GitLab module every gpu_canary_poll_interval
# (5 s by default); a job over in less time could end between two reads.
DRA_HOLD_SECONDS = 10
DRA_HOLD = [
    "echo 'gpu-canary: holding the DRA claim %ds, for the canary to read its allocation'" % DRA_HOLD_SECONDS,
    "sleep %d" % DRA_HOLD_SECONDS,
]
# canary_lanes names a lane's Job <JOB_PREFIX><lane name> (its job_name, by
# which the verdict finds it), canary_ci a pool's GitLab job <JOB_PREFIX><pool
# name>; the container that runs the checks is CONTAINER.
JOB_PREFIX = "gpu-canary-"
# The gpu_access of a CPU pool's lane: it asks for no device.
NO_GPU = "none"
CONTAINER = "canary"


def lane_commands(lane, setup_commands, cuda_sample_commands):
    """The shell commands of a lane, in order: its gpu_access's setup, its check's, then on cuda the samples.

    ``setup_commands`` maps a gpu_access (``cuda``, ``dri``) to commands run
    first (gpu_canary_setup_commands); ``cuda_sample_commands`` run last on
    cuda lanes (gpu_canary_cuda_sample_commands). A DRA lane then holds its
    claim a while (DRA_HOLD).
    """
    check = [command.replace(MIG_PROFILE, lane.get("mig_profile") or "") for command in CHECKS[lane["check"]]["commands"]]
    samples = list(cuda_sample_commands) if lane["gpu_access"] == "cuda" else []
    hold = list(DRA_HOLD) if lane.get("gpu_allocation") == DRA else []
    return list(setup_commands.get(lane["gpu_access"]) or []) + check + samples + hold


def evidence_patterns(check, lane):
    """The evidence patterns of ``check`` for ``lane``: MIG_PROFILE becomes the lane's profile, matched literally."""
    return [pattern.replace(MIG_PROFILE, re.escape(lane.get("mig_profile") or "")) for pattern in check["evidence"]]


def lane_image(images, lane, path):
    """The canary image of a lane's gpu_access (``images``, checked at ``path``); a missing one names the lane.

    A CPU lane (gpu_access ``none``) has no canary image: None, so its job
    gets its pool's image or the runner's default one.
    """
    if lane["gpu_access"] == NO_GPU:
        return None
    image = images.get(lane["gpu_access"])
    if not image:
        raise ValidationError(child(path, lane["gpu_access"]), "is required by lane %s" % lane["name"])
    return image
