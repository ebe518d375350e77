# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k8s_objects: the metadata of objects that may lack it reads as empty."""
from __future__ import annotations

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import metadata, object_name


@pytest.mark.parametrize("obj", [None, {}, {"metadata": None}])
def test_an_object_without_metadata_reads_as_empty(obj):
    assert metadata(obj) == {}
    assert object_name(obj) == ""


def test_the_name_is_read_from_the_metadata_as_text():
    node = {"metadata": {"name": "gpu-l40s-0", "labels": {"a": "b"}}}
    assert metadata(node)["labels"] == {"a": "b"}
    assert object_name(node) == "gpu-l40s-0"
    assert object_name({"metadata": {"name": 7}}) == "7"
