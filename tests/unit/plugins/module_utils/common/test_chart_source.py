# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""chart_source: a pinned chart version from an http(s):// or oci:// repository, or a local chart."""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.common.chart_source import check_chart_source
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError


def source(version="0.86.0", repo_url="http://127.0.0.1:18879", path=""):
    return {"gitlab_runner_chart_version": version, "gitlab_runner_chart_repo_url": repo_url,
            "gitlab_runner_chart_path": path}


@pytest.mark.parametrize("version", ["0.86.0", "v26.7.0", "1.2.3-rc.1", "1.2.3+build.5"])
@pytest.mark.parametrize("repo_url", ["http://127.0.0.1:18879", "https://helm.ngc.nvidia.com/nvidia",
                                      "oci://ghcr.io/actions/actions-runner-controller-charts"])
def test_pinned_versions_from_a_repository_pass(version, repo_url):
    check_chart_source("gitlab_runner", source(version, repo_url))


@pytest.mark.parametrize("version", ["latest", "0.14.x", "^1.2", "v26..7.0", "1.2", "", None])
def test_an_unpinned_version_is_refused_naming_the_roles_variable(version):
    with pytest.raises(ValidationError, match=r"^gitlab_runner_chart_version: must be a pinned chart version"):
        check_chart_source("gitlab_runner", source(version=version))


@pytest.mark.parametrize("repo_url", ["htp://127.0.0.1:18879", "127.0.0.1:18879", "https://", ""])
def test_an_unreadable_repository_url_is_refused_naming_the_roles_variable(repo_url):
    with pytest.raises(ValidationError, match=r"^gitlab_runner_chart_repo_url: must be an http\(s\):// or oci:// URL"):
        check_chart_source("gitlab_runner", source(repo_url=repo_url))


def test_a_local_chart_needs_neither():
    check_chart_source("gitlab_runner", source(version="latest", repo_url="", path="/charts/gitlab-runner-0.86.0.tgz"))


def test_a_refused_url_never_shows_its_password():
    with pytest.raises(ValidationError) as refused:
        check_chart_source("gitlab_runner", source(repo_url="ftp://deploy:s3cret@charts.example.com/stable"))
    assert "s3cret" not in str(refused.value)
    assert "ftp://***@charts.example.com/stable" in str(refused.value)
