# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read and replace the host configuration files our modules manage (nvidia-ctk's)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile


def read_text(path):
    """The file's text, or None when it does not exist."""
    if not os.path.exists(path):
        return None
    with open(path, "r") as handle:
        return handle.read()


def write_text(module, path, text):
    """Replace path with text atomically (None deletes it); a new file gets mode 0644,
    as nvidia-ctk writes its files."""
    if text is None:
        os.remove(path)
        return
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent, 0o755)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".%s." % os.path.basename(path))
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    existed = os.path.exists(path)
    module.atomic_move(tmp, path)
    if not existed:
        os.chmod(path, 0o644)
