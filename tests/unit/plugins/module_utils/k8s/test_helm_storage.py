# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""helm_storage: a Helm storage Secret read as the release revision it holds, chart templates left out."""
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_storage import stored_release

from test_pending_changes import RELEASE, storage_secret


def test_a_revision_is_its_name_namespace_version_status_chart_and_values():
    assert stored_release(storage_secret(RELEASE, version=3, status="failed")) == {
        "name": "l40s", "namespace": "ci", "version": 3, "status": "failed", "chart": "gitlab-runner-0.86.0",
        "config": RELEASE["values"]}


def test_the_chart_and_manifest_are_left_out():
    secret = storage_secret(RELEASE)
    assert set(stored_release(secret)) == {"name", "namespace", "version", "status", "chart", "config"}


def test_uncompressed_payloads_are_read_as_helm_writes_them_without_gzip():
    assert stored_release(storage_secret(RELEASE, gzipped=False)) == stored_release(storage_secret(RELEASE))


def test_secrets_that_are_not_helms_or_cannot_be_decoded_give_nothing():
    assert stored_release(dict(storage_secret(RELEASE), type="Opaque")) is None
    assert stored_release(dict(storage_secret(RELEASE), data={"release": "not base64!"})) is None
    assert stored_release(dict(storage_secret(RELEASE), data={})) is None
