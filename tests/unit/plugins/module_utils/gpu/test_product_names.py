# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""product_names: the one rule matching nvidia-smi's GPU name with a class's product label."""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.product_names import (
    gpu_of_label,
    product_label,
    same_product,
)


# nvidia-smi's name column (as the canary's CSV row and `nvidia-smi -L` print it) -> GFD's label.
@pytest.mark.parametrize("name, label", [
    ("NVIDIA L40S", "NVIDIA-L40S"),
    ("NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"),
    ("NVIDIA H200", "NVIDIA-H200"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB"),
    ("  NVIDIA A10 ", "NVIDIA-A10"),  # a CSV cell's padding is not the name
])
def test_the_label_is_the_name_with_dashes_for_spaces(name, label):
    assert product_label(name) == label
    assert same_product(name, label)


@pytest.mark.parametrize("name, class_name", [
    ("NVIDIA L40S", "l40s"),
    ("NVIDIA H100 80GB HBM3", "h100"),
    ("NVIDIA H200", "h200"),
    ("NVIDIA A100-SXM4-80GB", "a100"),
    ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
    ("NVIDIA A10", "a10"),
])
def test_each_builtin_class_matches_its_gpu_and_no_other_class(name, class_name):
    products = {key: value["product"] for key, value in merged_classes().items() if value["product"]}
    assert [key for key, product in sorted(products.items()) if same_product(name, product)] == [class_name]


@pytest.mark.parametrize("label, gpu", [
    ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "NVIDIA-A100-SXM4-40GB"),  # the single MIG strategy's label
    ("NVIDIA-L40S-SHARED", "NVIDIA-L40S"),  # time-slicing without renaming the resource
    ("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb-SHARED", "NVIDIA-A100-SXM4-80GB"),
    ("NVIDIA-H200", "NVIDIA-H200"),
])
def test_gfd_suffixes_for_mig_and_sharing_are_not_part_of_the_gpu(label, gpu):
    assert gpu_of_label(label) == gpu
    assert same_product(gpu.replace("-", " ", 1), label)


@pytest.mark.parametrize("name, label", [
    ("NVIDIA A100-SXM4-80GB", "NVIDIA-L40S"),
    ("NVIDIA H100 PCIe", "NVIDIA-H100-80GB-HBM3"),  # another H100
    ("NVIDIA H200 NVL", "NVIDIA-H200"),  # a longer name is another GPU, not a prefix match
    ("NVIDIA H20", "NVIDIA-H200"),
    ("nvidia l40s", "NVIDIA-L40S"),  # exact, as the label the scheduler matched
    ("NVIDIA L40S", "NVIDIA-L40S-SHAREDX"),
])
def test_other_gpus_do_not_match(name, label):
    assert not same_product(name, label)
