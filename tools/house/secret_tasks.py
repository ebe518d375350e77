# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Find the tasks that handle a secret without no_log.

"Secrets only in Kubernetes Secrets, no_log": Ansible shows a task's result
at -v (a deleted Secret comes back whole from the API server, its data in
base64) and its loop items at every verbosity. A task handles a secret when

- its module arguments name ``kind: Secret``,
- its name says it touches Secrets (the collection's task names say what
  they touch: "Delete the removed pools' ... Secrets"), or
- its module arguments or loop template a variable whose name says it holds
  a secret (``token``, ``private_key``, ``password``), other than only to
  test it (``x_token | length > 0``, ``x_token is defined``).

Such a task says ``no_log: true``, unless its module guards its own result
(GUARDED, each with why). Read: roles/*/tasks, roles/*/handlers, playbooks/
and awx/ (the plays there and the task files they include).

    python3 tools/house/secret_tasks.py

tests/unit/test_house.py holds the tree to it.
"""
import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
# Modules whose result is safe to show though their task handles a secret.
GUARDED = {
    "gpuci.runners.k8s_reads": "its action marks a result that answers a read of Secrets no_log "
                               "(module_utils/k8s/reads.shown), and shows a failure whole",
    "gpuci.runners.fleet_decide": "its action marks the decision, which holds the Secrets, no_log "
                                  "(plugins/action/fleet_decide.py), and shows a refusal whole",
    "gpuci.runners.role_plan": "a plan names Secrets and reads tokens' shape but holds none "
                               "(tests/unit/plugins/action/test_role_plan_action.py)",
}
SECRET_NAMED = re.compile(r"\bSecrets?\b")
SECRET_VARIABLE = re.compile(r"\b[A-Za-z_][\w.]*?(?:token|private_key|password)s?\b(?![\w(])")
# A secret only tested, never passed on: its length, its definedness, its type.
ONLY_TESTED = re.compile(r"\s*(?:\|\s*default\([^()]*\)\s*)?\|\s*length\b|\s+is\s+(?:not\s+)?\w+")
JINJA = re.compile(r"{{(.*?)}}|{%(.*?)%}", re.DOTALL)
# A quoted dict key names what follows; any other quoted name (map(attribute='token')) is passed on.
QUOTED_KEY = re.compile(r"(?:'[^']*'|\"[^\"]*\")(?=\s*:)")
# Tasks that only bring in other tasks, each checked in its own file: a
# no_log here would hide every task included.
INCLUDES = {"ansible.builtin.%s" % name for name in ("import_tasks", "include_tasks", "import_role", "include_role")}
LOOPS = ("loop", "with_items", "with_list", "with_dict", "with_subelements", "with_nested")


class _Loader(yaml.SafeLoader):
    """Reads playbooks as YAML: Vault and unsafe values are text here."""


_Loader.add_constructor("!vault", lambda loader, node: loader.construct_scalar(node))
_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def task_files(root=REPO):
    """The YAML files that hold plays or tasks."""
    patterns = ("roles/*/tasks/**/*.yml", "roles/*/handlers/**/*.yml", "playbooks/**/*.yml", "awx/**/*.yml")
    return sorted({path for pattern in patterns for path in root.glob(pattern)})


def tasks_of(data):
    """Every task of a playbook or task file, those inside blocks included (not the blocks)."""
    found = []
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict):
            continue
        if "hosts" in item or "import_playbook" in item:
            for section in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                found += tasks_of(item.get(section))
        elif "block" in item:
            for section in ("block", "rescue", "always"):
                found += tasks_of(item.get(section))
        else:
            found.append(item)
    return found


def module_of(task):
    """(module name, its arguments) of a task written with its module's fully qualified name."""
    for key, value in task.items():
        if "." in key:
            args = value if isinstance(value, dict) else {"_raw": value}
            return key, dict(args, **(task.get("args") or {}))
    return None, {}


def _strings(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _names_kind_secret(value):
    if isinstance(value, dict):
        return value.get("kind") == "Secret" or any(_names_kind_secret(item) for item in value.values())
    if isinstance(value, list):
        return any(_names_kind_secret(item) for item in value)
    return False


def secret_variables(text):
    """The secret-named variables ``text``'s Jinja passes on (not those it only tests), in order."""
    passed = []
    for match in JINJA.finditer(text):
        expression = QUOTED_KEY.sub("''", match.group(1) or match.group(2))
        for variable in SECRET_VARIABLE.finditer(expression):
            if not ONLY_TESTED.match(expression, variable.end()):
                passed.append(variable.group(0))
    return passed


def why_secret(task):
    """Why ``task`` handles a secret (a phrase), or "" when it does not (an include handles none itself)."""
    module, args = module_of(task)
    if module in INCLUDES:
        return ""
    if _names_kind_secret(args):
        return "its arguments name kind Secret"
    if SECRET_NAMED.search(str(task.get("name", ""))):
        return "its name says it touches Secrets"
    texts = list(_strings(args)) + [text for key in LOOPS for text in _strings(task.get(key))]
    passed = [name for text in texts for name in secret_variables(text)]
    if passed:
        return "it passes %s" % ", ".join(dict.fromkeys(passed))
    return ""


def handling(root=REPO):
    """Every (file, task, why) of a task that handles a secret, with no_log or not."""
    return [(str(path.relative_to(root)), task, why_secret(task))
            for path in task_files(root)
            for task in tasks_of(yaml.load(path.read_text(), Loader=_Loader))  # noqa: S506 (a SafeLoader)
            if why_secret(task)]


def unguarded(root=REPO):
    """Every (file, task name, why) of a task that handles a secret without no_log or a guarding module."""
    return [(path, str(task.get("name", module_of(task)[0])), why) for path, task, why in handling(root)
            if task.get("no_log") is not True and module_of(task)[0] not in GUARDED]


def main():
    found = unguarded()
    for path, name, why in found:
        print("%s: %r handles a secret (%s) without no_log: true" % (path, name, why))
    print("Tasks that handle a secret without no_log: %d" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
