# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The CRDs the roles delete on request (gpu_operator_remove_crds, arc_runners_remove_crds) are the charts' own.

Read from the upstream charts the testbed serves (../shared/charts, or
GPUCI_CHARTS_DIR), at the versions the roles' defaults install: a CRD a new
chart version adds would otherwise outlive `state: absent`, and a name the
chart no longer ships would fail its delete.
"""

import pathlib
import sys
import tarfile

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners import plan as arc_runners_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator import plan as gpu_operator_plan

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "testbed"))
from lib.layout import charts_dir  # noqa: E402

CHARTS = charts_dir()


def chart_crds(role, chart, folder):
    """The names of the CRDs in ``folder`` of ``chart`` at the version ``role`` installs by default
    (crds/ is what Helm installs before the templates)."""
    defaults = yaml.safe_load((REPO / "roles" / role / "defaults" / "main.yml").read_text())
    path = CHARTS / f"{chart}-{defaults[role + '_chart_version']}.tgz"
    assert path.is_file(), f"{path} is missing (the testbed's charts; set GPUCI_CHARTS_DIR)"
    names = set()
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.startswith(folder + "/") and member.name.endswith(".yaml"):
                for document in yaml.load_all(archive.extractfile(member), Loader=yaml.CSafeLoader):
                    if document and document.get("kind") == "CustomResourceDefinition":
                        names.add(document["metadata"]["name"])
    return names


@pytest.mark.parametrize("folder, names", [
    ("gpu-operator/crds", gpu_operator_plan.CRDS),
    ("gpu-operator/charts/node-feature-discovery/crds", gpu_operator_plan.NFD_CRDS),
])
def test_the_gpu_operator_crds_are_the_charts(folder, names):
    assert set(names) == chart_crds("gpu_operator", "gpu-operator", folder)


def test_the_arc_crds_are_the_controller_charts():
    assert set(arc_runners_plan.CRDS) == chart_crds("arc_runners", "gha-runner-scale-set-controller",
                                                    "gha-runner-scale-set-controller/crds")
