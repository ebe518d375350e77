# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Regenerate the variable tables of role READMEs from meta/argument_specs.yml.

    python tools/docs/role_readme.py [ROLE ...]          rewrite (all roles by default)
    python tools/docs/role_readme.py --check [ROLE ...]  fail if a README is stale

The table replaces what stands between the BEGIN/END ARGUMENTS markers, so the
rest of each README stays hand-written and the variables are never typed twice.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"
BEGIN, END = "<!-- BEGIN ARGUMENTS -->", "<!-- END ARGUMENTS -->"


def _text(value) -> str:
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return str(value).replace("|", "\\|").replace("\n", " ").strip()


def _rows(options: dict, prefix: str = "") -> list[str]:
    rows = []
    for name, spec in sorted(options.items()):
        kind = spec.get("type", "str")
        if spec.get("elements"):
            kind += f" of {spec['elements']}"
        default = "*required*" if spec.get("required") else (
            f"`{json.dumps(spec['default'])}`" if "default" in spec else "")
        choices = ", ".join(f"`{c}`" for c in spec.get("choices", []))
        rows.append(f"| `{prefix}{name}` | {kind} | {default} | {choices} | {_text(spec.get('description', ''))} |")
        if spec.get("options"):
            rows += _rows(spec["options"], prefix=f"{prefix}{name}{'[].' if kind.startswith('list') else '.'}")
    return rows


def table(role: Path) -> str:
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    parts = []
    for entry, spec in specs.items():
        parts.append(f"### Entry point `{entry}`\n\n{_text(spec.get('short_description', ''))}\n")
        parts.append("| variable | type | default | choices | description |\n| --- | --- | --- | --- | --- |")
        parts += _rows(spec.get("options", {}))
        parts.append("")
    return "\n".join(parts)


def render(role: Path) -> tuple[str, str]:
    readme = role / "README.md"
    current = readme.read_text() if readme.exists() else f"# {role.name}\n\n{BEGIN}\n{END}\n"
    if BEGIN not in current or END not in current:
        current += f"\n## Variables\n\n{BEGIN}\n{END}\n"
    head, rest = current.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return current, f"{head}{BEGIN}\n{table(role)}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report stale READMEs")
    parser.add_argument("roles", nargs="*")
    args = parser.parse_args()
    names = args.roles or sorted(p.parent.parent.name for p in ROLES.glob("*/meta/argument_specs.yml"))
    stale = []
    for name in names:
        current, wanted = render(ROLES / name)
        if current != wanted:
            stale.append(name)
            if not args.check:
                (ROLES / name / "README.md").write_text(wanted)
    if args.check and stale:
        print("stale role READMEs (run python tools/docs/role_readme.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
