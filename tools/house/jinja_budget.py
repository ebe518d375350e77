# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Count the Jinja in roles/ and playbooks/ that decides or reshapes data.

"Python decides, YAML orchestrates": role YAML wires results to modules, and
what branches or reshapes data belongs in plugins/module_utils with unit
tests. This counts the physical lines inside Jinja (``{{ }}``, ``{% %}`` and
the bare expressions of ``when``, ``that``, ``failed_when``, ``changed_when``,
``until``) that use a reshaping filter or function (selectattr, map, combine,
dict2items, regex_*, ...) or branch or loop (if, else, for). A plain
condition such as ``when: x | bool`` is wiring and does not count.

    python3 tools/house/jinja_budget.py [--list]

tests/unit/test_house.py holds the tree to the budget.
"""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUDGET = 50
RESHAPING = re.compile(
    r"\b(selectattr|rejectattr|select|reject|map|combine|dict2items|items2dict|zip|groupby|json_query|"
    r"unique|flatten|sum|dict|regex_\w+|subelements|product|difference|intersect|union)\b"
    r"|\bif\b|\belse\b|\bfor\b")
BARE_KEYS = re.compile(r"^\s*-?\s*(when|that|failed_when|changed_when|until)\s*:\s*(.*)$")


def jinja_lines(text):
    """(line number, line) of every physical line that lies inside Jinja."""
    lines = text.splitlines()
    inside = set()
    depth = 0
    for number, line in enumerate(lines, 1):
        if depth > 0 or "{{" in line or "{%" in line:
            inside.add(number)
        depth += line.count("{{") + line.count("{%") - line.count("}}") - line.count("%}")
        depth = max(depth, 0)
    # Bare expressions: the key's line and its indented continuation.
    number = 0
    while number < len(lines):
        match = BARE_KEYS.match(lines[number])
        if match:
            indent = len(lines[number]) - len(lines[number].lstrip())
            inside.add(number + 1)
            follow = number + 1
            while follow < len(lines) and (not lines[follow].strip() or
                                           len(lines[follow]) - len(lines[follow].lstrip()) > indent):
                inside.add(follow + 1)
                follow += 1
        number += 1
    return [(n, lines[n - 1]) for n in sorted(inside)]


def counted(root=REPO):
    """Every (file, line number, line) the budget counts."""
    found = []
    for top in ("roles", "playbooks"):
        for path in sorted((root / top).rglob("*.yml")):
            if "meta" in path.relative_to(root).parts:  # argument specs: documentation, not logic
                continue
            for number, line in jinja_lines(path.read_text()):
                if line.lstrip().startswith("#"):
                    continue
                if RESHAPING.search(line):
                    found.append((str(path.relative_to(root)), number, line.strip()))
    return found


def main(argv):
    found = counted()
    if "--list" in argv:
        for path, number, line in found:
            print("%s:%d: %s" % (path, number, line))
    print("Jinja lines that branch or reshape data in roles/ and playbooks/: %d (budget %d)" % (len(found), BUDGET))
    return 0 if len(found) <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
