# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""YAML for files users paste into their repositories (CI snippets).

Those repositories often lint YAML, so the text follows yamllint's default
rules: a document start, block sequences indented under their key, keys that
look like booleans (GitHub's `on`) quoted, lines within 80 characters (long
shell commands are folded at spaces, which YAML reads back as the same line).
"""

from __future__ import annotations

import json

import yaml


class _IndentedDumper(yaml.SafeDumper):
    """Indent block sequences under their parent key (`key:\\n  - item`)."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def ci_yaml(data, header=""):
    """Return `data` as a YAML document: optional `# header` comment lines, `---`, the content."""
    # Plain types first: Ansible hands filters its own str/dict subclasses,
    # which the safe dumper does not know.
    data = json.loads(json.dumps(data))
    comments = "".join("# %s\n" % line if line else "#\n" for line in header.splitlines())
    # PyYAML breaks a line at the first space past `width`, so a line can run
    # one word longer: 50 keeps commands with long words under yamllint's 80.
    body = yaml.dump(data, Dumper=_IndentedDumper, default_flow_style=False, sort_keys=False,
                     indent=2, width=50, allow_unicode=True)
    return comments + "---\n" + body
