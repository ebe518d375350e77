# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""helm_releases leaves field validation to the API server: nothing gets through that helm's own check would stop.

helm_releases runs helm with --disable-openapi-validation unless
openapi_validation is true (plugins/module_utils/k8s/helm_releases.py says why).
On the testbed's API server, a chart object with a field of the wrong type
must be refused with the flag as without it, and one with an unknown field
must have the same outcome either way: helm's own check changes no outcome
here. Which outcome depends on how helm sends objects: helm 3 creates them
(the API server admits an unknown field with a warning), helm 4 applies them
server-side (the API server refuses a field its schema lacks).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import uuid

import pytest
import helpers
from helpers import playbook_for_testbed

# Its own namespace each run: the last run's may still be terminating.
NAMESPACE = "gpuci-field-validation-" + uuid.uuid4().hex[:6]
CHART = """apiVersion: v2
name: field-check
version: 0.1.0
"""
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
%s
"""
# data must map strings to strings: a list is the wrong type.
CHARTS = {"wrong-type": CONFIGMAP % "data: [not, a, mapping]", "unknown-field": CONFIGMAP % "notAField: 1"}


@pytest.fixture(scope="module")
def outcomes(playbooks, testbed, tmp_path_factory):
    """{(chart, openapi_validation): whether the install failed} from one playbook."""
    folder = tmp_path_factory.mktemp("field-validation")
    for name, template in CHARTS.items():
        (folder / name / "templates").mkdir(parents=True)
        (folder / name / "Chart.yaml").write_text(CHART)
        (folder / name / "templates" / "configmap.yaml").write_text(template)
    cases = [(name, validation) for name in CHARTS for validation in (False, True)]
    tasks = [{"name": f"{name}, openapi_validation {validation}",
              "gpuci.runners.helm_releases": {
                  "openapi_validation": validation,
                  "releases": [{"name": f"{name}-{str(validation).lower()}", "namespace": NAMESPACE,
                                "chart_path": str(folder / name), "create_namespace": True, "timeout": 60}]},
              "register": f"case_{index}", "ignore_errors": True}
             for index, (name, validation) in enumerate(cases)]
    tasks.append({"ansible.builtin.copy": {
        "content": "{{ [%s] | map(attribute='failed') | list | to_json }}" % ", ".join(
            f"case_{index}" for index in range(len(cases))),
        "dest": str(folder / "outcomes.json")}, "delegate_to": "localhost"})
    playbook = playbook_for_testbed(folder / "field-validation.yml", tasks)
    try:
        run = playbooks.run(playbook).assert_ok()
        failed = json.loads((folder / "outcomes.json").read_text())
        yield dict(zip(cases, failed)), run.output
    finally:
        testbed.core.delete_namespace(NAMESPACE)


@pytest.fixture(scope="module")
def helm_major():
    """The major version of the testbed's helm (GPUCI_HELM=4 makes it helm 4)."""
    helm = shutil.which("helm", path=helpers.testbed_bin_path())
    version = subprocess.run([helm, "version", "--template", "{{.Version}}"], check=True, capture_output=True,
                             text=True).stdout
    return int(version.lstrip("v").split(".")[0])


def test_a_wrong_type_is_refused_with_or_without_helms_own_check(outcomes, helm_major):
    failed, output = outcomes
    assert failed[("wrong-type", False)] and failed[("wrong-type", True)], output[-4000:]
    refusal = ".data: expected map" if helm_major >= 4 else "cannot unmarshal array into Go struct field ConfigMap.data"
    assert refusal in output, output[-4000:]


def test_an_unknown_field_has_one_outcome_with_or_without_helms_own_check(outcomes, helm_major):
    failed, output = outcomes
    refused = helm_major >= 4  # server-side apply refuses what the schema lacks; a create only warns
    assert failed[("unknown-field", False)] is refused and failed[("unknown-field", True)] is refused, output[-4000:]
