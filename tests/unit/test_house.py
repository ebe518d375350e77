# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The house rules a reader relies on: where code lives, how much Jinja decides, docs that stay true."""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "house"))
import jinja_budget  # noqa: E402
import secret_tasks  # noqa: E402

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


def test_every_task_that_handles_a_secret_is_no_log():
    found = secret_tasks.unguarded()
    assert not found, "tasks that handle a secret need no_log: true (tools/house/secret_tasks.py):\n%s" % "\n".join(
        "%s: %s (%s)" % line for line in found)
    # The rule sees the tasks it exists for: a rule that found none would pass anything.
    handled = {(path, task.get("name")) for path, task, _why in secret_tasks.handling()}
    assert ("roles/gitlab_runner/tasks/remove.yml",
            "Delete the removed pools' RoleBindings, Roles, ResourceClaimTemplates, ServiceAccounts and Secrets") in handled
    assert ("roles/arc_runners/tasks/scale_sets_absent.yml", "Remove our credentials Secrets of these scale sets") in handled
    assert len(handled) >= 8, sorted(handled)


def test_the_secret_rule_finds_each_way_a_task_handles_a_secret_and_spares_tests_and_guards(tmp_path):
    tasks = tmp_path / "roles" / "r" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text(
        "- name: by kind\n"
        "  kubernetes.core.k8s: {state: absent, kind: Secret, name: x}\n"
        "- name: Delete the pools' Secrets\n"
        "  kubernetes.core.k8s: {state: absent, definition: '{{ objects }}'}\n"
        "- name: by variable\n"
        "  community.general.gitlab_runner: {api_token: '{{ gitlab_runner_access_token }}'}\n"
        "- name: by loop\n"
        "  ansible.builtin.debug: {msg: '{{ item.name }}'}\n"
        "  loop: '{{ pools | map(attribute=\"github_private_key\") }}'\n"
        "- name: in a block\n"
        "  block:\n"
        "    - name: nested\n"
        "      ansible.builtin.uri: {url: x, url_password: '{{ repo_password }}'}\n"
        "- name: hidden\n"
        "  kubernetes.core.k8s: {state: absent, kind: Secret, name: x}\n"
        "  no_log: true\n"
        "- name: only tested\n"
        "  ansible.builtin.assert:\n"
        "    that: [x_token | length > 0]\n"
        "    fail_msg: \"{{ 'given' if x_token | default('') | length > 0 else 'none' }} {{ y_token is defined }}\"\n"
        "- name: guarded, Secrets read\n"
        "  gpuci.runners.k8s_reads: {reads: [{key: s, kind: Secret}]}\n"
        "- name: Include the Secrets' tasks\n"
        "  ansible.builtin.include_tasks: secrets.yml\n")
    found = {name: why for _path, name, why in secret_tasks.unguarded(tmp_path)}
    assert found == {
        "by kind": "its arguments name kind Secret",
        "Delete the pools' Secrets": "its name says it touches Secrets",
        "by variable": "it passes gitlab_runner_access_token",
        "by loop": "it passes github_private_key",
        "nested": "it passes repo_password",
    }
