# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The proof's negative control: the GPU probe without its GPU request must not see the GPU.

Runs on the testbed in GPU mode (make gpu-proof), after the canary: one pod of
the NVIDIA runtime class on the real node, the same as the GPU probe
(tools/testbed/lib/gpu.py) but for the nvidia.com/gpu request. It prints what
the container printed and exits 1 if the container saw any of the driver.
"""
from __future__ import annotations

import sys
import time
import urllib.error
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testbed"))

from lib import cluster, gpu  # noqa: E402  (needs the path above)
from lib.api import ApiClient  # noqa: E402
from lib.images import BASE_IMAGE  # noqa: E402
from lib.layout import Layout  # noqa: E402

NAMESPACE = "default"
NAME = "gpuci-negative-control"
TIMEOUT = 120


def run(api: ApiClient) -> str:
    """Run the control pod to completion; return its log."""
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    api.request("POST", path, gpu.probe_pod(NAME, NAMESPACE, BASE_IMAGE, with_gpu=False))

    def finished() -> bool:
        return api.get(f"{path}/{NAME}").get("status", {}).get("phase") in ("Succeeded", "Failed")

    try:
        cluster.wait_for(f"negative control pod {NAME} to finish", finished, time.monotonic(), timeout=TIMEOUT)
        return api.get(f"{path}/{NAME}/log")
    finally:
        try:
            api.request("DELETE", f"{path}/{NAME}")
        except urllib.error.HTTPError:
            pass


def main() -> int:
    log = run(ApiClient(Layout.from_environment()))
    print("negative control (runtime class nvidia, no nvidia.com/gpu request) printed:")
    print("\n".join("  | " + line for line in str(log).splitlines()))
    if gpu.saw_gpu(str(log)):
        print("negative control: FAILED, the pod without a GPU request saw the driver")
        return 1
    print("negative control: refused, no device node and no nvidia-smi without the request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
