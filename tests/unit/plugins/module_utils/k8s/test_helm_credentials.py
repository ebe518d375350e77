# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A chart repository's credentials in its URL reach helm through a private file, never its command line.

`ps` shows every process's arguments to every user of the controller, so
helm_releases must not put `https://user:pass@charts.example.com/...` (nor
the user, nor the password) in any argv: pull_steps writes them to a file
only its owner reads, and helm is pointed at that file.
"""

import base64
import json
import os
import stat

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_releases import (
    PRIVATE_REPO,
    chart_ref,
    pull_steps,
    split_credentials,
    url_secrets,
)

from test_helm_releases import RecordedHelm, apply, release

USER, PASSWORD = "ci-reader", "s3cret-CHART-pass"
HTTP_URL = f"https://{USER}:{PASSWORD}@charts.example.com/stable"
OCI_URL = f"oci://{USER}:{PASSWORD}@registry.example.com/charts"


def _credentials_in(argv):
    text = " ".join(argv)
    return [value for value in (USER, PASSWORD, "@charts.example.com", "@registry.example.com") if value in text]


@pytest.mark.parametrize("url, expected", [
    (HTTP_URL, ("https://charts.example.com/stable", USER, PASSWORD)),
    ("https://us%40er:p%3Ass%40@charts.example.com:8443/x", ("https://charts.example.com:8443/x", "us@er", "p:ss@")),
    ("https://glpat-TOKENONLY@charts.example.com/", ("https://charts.example.com/", "glpat-TOKENONLY", None)),
    ("https://:only-a-password@charts.example.com/", ("https://charts.example.com/", "", "only-a-password")),
    (OCI_URL, ("oci://registry.example.com/charts", USER, PASSWORD)),
    ("https://charts.gitlab.io", ("https://charts.gitlab.io", None, None)),
    ("", ("", None, None)),
])
def test_the_credentials_are_split_from_the_url_and_decoded(url, expected):
    assert split_credentials(url) == expected


def test_what_is_masked_is_the_password_or_a_lone_user():
    assert url_secrets(HTTP_URL) == [PASSWORD]
    assert url_secrets("https://glpat-TOKENONLY@charts.example.com/") == ["glpat-TOKENONLY"]
    assert url_secrets("https://charts.gitlab.io") == []


def test_a_repository_without_credentials_is_pulled_as_before(tmp_path):
    files, commands = pull_steps(release(chart_repo_url="https://charts.gitlab.io"), "/dest", str(tmp_path))
    assert files == {}
    assert commands == [["pull", "gitlab-runner", "--version", "0.86.0", "--destination", "/dest",
                         "--repo", "https://charts.gitlab.io"]]
    oci = pull_steps(release(chart_repo_url="oci://ghcr.io/actions/charts"), "/dest", str(tmp_path))
    assert oci == ({}, [["pull", "oci://ghcr.io/actions/charts/gitlab-runner", "--version", "0.86.0",
                         "--destination", "/dest"]])


def test_an_http_repository_with_credentials_gets_a_private_repositories_file():
    files, commands = pull_steps(release(chart_repo_url=HTTP_URL), "/work/chart", "/work/private")
    assert [_credentials_in(argv) for argv in commands] == [[], []]
    config = ["--repository-config", "/work/private/repositories.yaml", "--repository-cache", "/work/private/cache"]
    assert commands == [["repo", "update", PRIVATE_REPO, *config],
                        ["pull", f"{PRIVATE_REPO}/gitlab-runner", "--version", "0.86.0", "--destination",
                         "/work/chart", *config]]
    [(path, text)] = list(files.items())
    assert path == "/work/private/repositories.yaml"
    assert json.loads(text)["repositories"] == [{"name": PRIVATE_REPO, "url": "https://charts.example.com/stable",
                                                 "username": USER, "password": PASSWORD}]


def test_an_oci_registry_with_credentials_gets_a_private_registry_configuration():
    files, commands = pull_steps(release(chart_repo_url=OCI_URL), "/work/chart", "/work/private")
    assert commands == [["pull", "oci://registry.example.com/charts/gitlab-runner", "--version", "0.86.0",
                         "--destination", "/work/chart", "--registry-config", "/work/private/registry.json"]]
    assert _credentials_in(commands[0]) == []
    auths = json.loads(files["/work/private/registry.json"])["auths"]
    assert list(auths) == ["registry.example.com"]
    assert base64.b64decode(auths["registry.example.com"]["auth"]).decode() == f"{USER}:{PASSWORD}"
    assert chart_ref(release(chart_repo_url=OCI_URL)) == "oci://registry.example.com/charts/gitlab-runner"


class FileReadingHelm(RecordedHelm):
    """helm that, as the real one, reads the private files it is pointed at; records their mode and text."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.files = {}

    def __call__(self, argv):
        for flag in ("--repository-config", "--registry-config"):
            if flag in argv:
                path = argv[argv.index(flag) + 1]
                self.files[path] = (stat.S_IMODE(os.stat(path).st_mode), open(path, encoding="utf-8").read(),
                                    stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode))
        return super().__call__(argv)


@pytest.mark.parametrize("url", [HTTP_URL, OCI_URL])
def test_helm_gets_the_credentials_only_from_a_file_its_owner_alone_reads_removed_at_the_end(url):
    helm = FileReadingHelm()
    result = apply(helm, [release(chart_repo_url=url), release("gitlab-runner-b", chart_repo_url=url)])
    assert not result["errors"] and [r["action"] for r in result["releases"]] == ["install", "install"]
    assert [args for args in helm.calls if _credentials_in(args)] == []
    assert len(helm.verbs("pull")) == 1, "the chart is still pulled once for both releases"
    [(path, (mode, text, folder_mode))] = list(helm.files.items())
    assert mode == 0o600 and folder_mode == 0o700
    assert PASSWORD in text or base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode() in text
    assert not os.path.exists(path), "the credentials outlived the task"
    assert USER not in json.dumps(result) and PASSWORD not in json.dumps(result)


def test_a_failed_pull_names_the_chart_without_the_credentials():
    helm = FileReadingHelm(broken={("pull", f"{PRIVATE_REPO}/gitlab-runner")})
    result = apply(helm, [release(chart_repo_url=HTTP_URL)])
    (error,) = result["errors"]
    assert "chart gitlab-runner 0.86.0" in error
    assert PASSWORD not in error and USER not in error
