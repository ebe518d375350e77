# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The house rules a reader relies on: where code lives, how much Jinja decides, docs that stay true."""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "house"))
import jinja_budget  # noqa: E402

# A path as docs/architecture.md writes it: from the repository's root.
ROOTED_PATH = re.compile(r"`((?:roles|playbooks|plugins|tests|tools|docs|inventories|molecule|meta|awx)/[^`*<>{} ]+)`")


def test_the_jinja_that_decides_stays_within_its_budget():
    found = jinja_budget.counted()
    listing = "\n".join("%s:%d: %s" % line for line in found)
    assert len(found) <= jinja_budget.BUDGET, (
        "%d Jinja lines branch or reshape data in roles/ and playbooks/ (budget %d); move the decision "
        "into plugins/module_utils:\n%s" % (len(found), jinja_budget.BUDGET, listing))


def test_the_budget_counts_reshaping_and_branching_but_not_wiring(tmp_path):
    tasks = tmp_path / "roles" / "r" / "tasks"
    tasks.mkdir(parents=True)
    (tmp_path / "playbooks").mkdir()
    (tasks / "main.yml").write_text(
        "- name: wiring\n"
        "  ansible.builtin.debug:\n"
        "    msg: \"{{ plan.summary }}\"\n"
        "  when: plan.converges | bool\n"
        "- name: reshaping\n"
        "  ansible.builtin.debug:\n"
        "    msg: >-\n"
        "      {{ pools | selectattr('gpus')\n"
        "         | map(attribute='name') | list }}\n"
        "  when: >-\n"
        "    x if y else z\n")
    counted = [number for _path, number, _line in jinja_budget.counted(tmp_path)]
    assert counted == [8, 9, 11]


def test_module_utils_has_rooms_and_no_loose_modules():
    loose = sorted(p.name for p in (REPO / "plugins" / "module_utils").glob("*.py") if p.name != "__init__.py")
    assert not loose, "put these in the module_utils folder of their domain (docs/architecture.md): %s" % loose


def test_every_path_docs_architecture_names_exists():
    text = (REPO / "docs" / "architecture.md").read_text()
    named = sorted(set(ROOTED_PATH.findall(text)))
    assert len(named) > 20, "the walk through the layout names its files from the repository root"
    missing = [path for path in named if not (REPO / path.rstrip("/")).exists()]
    assert not missing, "docs/architecture.md names files that do not exist: %s" % missing
