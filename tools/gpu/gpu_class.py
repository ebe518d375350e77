# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Print the built-in GPU class of this host's GPU (h100, h200, ...), for make gpu-proof.

The lent GPU machine is an H100 or an H200, and the proof's lane must be the
class whose product label the testbed puts on real-0 (tools/testbed/lib/gpu.py
writes it as GPU Feature Discovery would). Exits 1, saying why, when there is
no GPU or no built-in class has its product.
"""
from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tools" / "testbed"))
sys.path.insert(0, str(REPO_ROOT / ".collections"))

from lib import gpu  # noqa: E402  (needs the path above)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import (  # noqa: E402
    PRODUCT_LABEL,
    builtin_classes_of_product,
)


def main() -> int:
    driver = gpu.find_host_driver()
    if isinstance(driver, str):
        print(f"gpu_class: {driver}", file=sys.stderr)
        return 1
    product = gpu.labels_from_smi(gpu.query_smi(driver))[PRODUCT_LABEL]
    names = builtin_classes_of_product(product)
    if not names:
        print(f"gpu_class: no built-in GPU class has product {product}; add one to "
              "plugins/module_utils/gpu/classes.py", file=sys.stderr)
        return 1
    print(names[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
