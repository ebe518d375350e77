# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""controller_path: a relative output directory is the one where ansible-playbook runs, never the playbook's."""

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.controller_path import FilterModule

controller_path = FilterModule().filters()["controller_path"]


def test_a_relative_path_is_joined_to_the_processs_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert controller_path("plans") == str(tmp_path / "plans")
    assert controller_path("./out/../plans/") == str(tmp_path / "plans")


def test_an_absolute_path_stays_and_home_is_expanded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert controller_path("/srv/plans") == "/srv/plans"
    monkeypatch.setenv("HOME", "/home/someone")
    assert controller_path("~/plans") == "/home/someone/plans"


def test_symlinks_are_kept_as_written(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    monkeypatch.chdir(tmp_path)
    assert controller_path("link/plans") == str(tmp_path / "link" / "plans")


@pytest.mark.parametrize("path", ["", "   ", None, 5])
def test_no_path_is_refused_by_the_filter(path):
    with pytest.raises(AnsibleFilterError, match=r"^gpuci\.runners\.controller_path: path: must be a non-empty"):
        controller_path(path)
