# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make the collection importable as ansible_collections.gpuci.runners, and share helpers.

`make venv` links this checkout as .collections/ansible_collections/gpuci/runners.
Golden files live in tests/unit/golden/; run with GPUCI_UPDATE_GOLDEN=1 to
rewrite them after an intended change, then review the diff.
"""

import os
import pathlib
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
COLLECTIONS = REPO / ".collections"
GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"

if not (COLLECTIONS / "ansible_collections" / "gpuci" / "runners").exists():
    raise RuntimeError("%s is missing: run `make venv` first" % (COLLECTIONS / "ansible_collections/gpuci/runners"))
if str(COLLECTIONS) not in sys.path:
    sys.path.insert(0, str(COLLECTIONS))

# The module_utils tests live in one folder per module_utils subpackage. Some
# build on another domain's data (the fleet's tests on each role's plan, the
# reads' tests on the pending-changes Secrets) and import that test module by
# its unique name: every such folder is on sys.path for that.
for _folder in sorted((REPO / "tests/unit/plugins/module_utils").iterdir()):
    if _folder.is_dir() and not _folder.name.startswith("_") and str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))


@pytest.fixture
def golden():
    """Compare rendered text with a golden file (or rewrite it when asked)."""

    def check(relative_path, text):
        path = GOLDEN / relative_path
        if os.environ.get("GPUCI_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        assert path.exists(), "golden file %s is missing (GPUCI_UPDATE_GOLDEN=1 writes it)" % path
        assert text == path.read_text(), "rendering differs from %s" % path
        return path

    return check


class GoldenDumper(yaml.SafeDumper):
    """YAML that passes yamllint: document start, indented lists, block text."""

    def increase_indent(self, flow=False, indentless=False):
        return super(GoldenDumper, self).increase_indent(flow, False)


def _represent_str(dumper, data):
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


GoldenDumper.add_representer(str, _represent_str)


@pytest.fixture
def golden_yaml(golden):
    """Dump data to YAML, compare with the golden file, return the golden file parsed back."""

    def check(relative_path, data):
        text = yaml.dump(data, Dumper=GoldenDumper, default_flow_style=False, sort_keys=True, explicit_start=True)
        return yaml.safe_load(golden(relative_path, text).read_text())

    return check


@pytest.fixture
def calls(monkeypatch):
    """Record the first argument's ``name`` of every call to ``module.function``, which still runs.

    ``calls(module, "function")`` returns the list the names go into.
    """

    def record(module, function):
        names, real = [], getattr(module, function)

        def recording(first, *args, **kwargs):
            names.append(first["name"])
            return real(first, *args, **kwargs)

        monkeypatch.setattr(module, function, recording)
        return names

    return record


@pytest.fixture
def role_options():
    """``role_options(role, entry="main")``: the options of a role's entry point, from its meta/argument_specs.yml."""

    def options(role, entry="main"):
        specs = yaml.safe_load((REPO / "roles" / role / "meta" / "argument_specs.yml").read_text())
        return specs["argument_specs"][entry]["options"]

    return options
