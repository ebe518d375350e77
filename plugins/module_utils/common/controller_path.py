# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A path the user gave on the controller, relative to where ansible-playbook runs.

A relative ``dest`` handed to a module run on the controller lands wherever
that module resolves it: ``-e gpuci_plan_dir=plans`` wrote into the
installed collection's ``playbooks/plans/``. The playbooks that write files
for the user resolve the directory first, against the working directory of
the ``ansible-playbook`` process, which a filter reads in that process (or a
worker forked from it, which keeps it). Not ``lookup('env', 'PWD')``: PWD is
what a shell exported, and a program that changes directory without a
shell (AWX's job runner starts ansible-playbook in the project folder)
leaves it stale.
"""

from __future__ import annotations

import os

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError


def controller_path(path, cwd=None):
    """``path`` made absolute: ``~`` expanded, a relative one joined to ``cwd`` (None: this process's)."""
    if not isinstance(path, str) or not path.strip():
        raise ValidationError("path", "must be a non-empty string", path)
    expanded = os.path.expanduser(path.strip())
    return os.path.normpath(os.path.join(os.getcwd() if cwd is None else cwd, expanded))
