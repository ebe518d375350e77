# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every relative link in README.md and docs/ points to a file that exists,
and every `#anchor` into a Markdown file names one of its headings.

Links to other sites (http, https, mailto) are not followed; links inside
code (fenced blocks, `inline code`) are not links. Anchors are GitHub's:
the heading in lower case, punctuation other than `-` and `_` dropped,
spaces made `-`, a repeated heading suffixed `-1`, `-2`, ...
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
# [text](target) and ![alt](target), the target up to a space (a title may follow) or the closing parenthesis.
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
EXTERNAL = ("http://", "https://", "mailto:", "ftp://")


def prose_lines(text: str, keep_code: bool = False) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1, with inline code removed unless `keep_code`."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line if keep_code else INLINE_CODE.sub("", line)))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every link in the prose of a Markdown text."""
    found = []
    for number, line in prose_lines(text):
        found += [(number, target) for target in INLINE_LINK.findall(line)]
        reference = REFERENCE_LINK.match(line)
        if reference:
            found.append((number, reference.group(1)))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown text's headings, repeated ones numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    result = set()
    for _number, line in prose_lines(text, keep_code=True):
        heading = HEADING.match(line)
        if not heading:
            continue
        base = slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def broken_links(document: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of `document` whose file is missing or whose anchor names no heading, with its line."""
    text = document.read_text(encoding="utf-8")
    problems = []
    for number, target in links(text):
        if target.startswith(EXTERNAL):
            continue
        path_part, _hash, anchor = target.partition("#")
        path_part = path_part.split("?", 1)[0]
        where = f"{document.relative_to(root).as_posix()}:{number}: {target}"
        if path_part:
            if path_part.startswith("/"):
                problems.append(f"{where}: absolute path; write it relative to the document")
                continue
            resolved = (document.parent / path_part).resolve()
            if root.resolve() not in (resolved, *resolved.parents):
                problems.append(f"{where}: outside the repository")
                continue
            if not resolved.exists():
                problems.append(f"{where}: no such file")
                continue
        else:
            resolved = document
        if anchor and resolved.is_file() and resolved.suffix == ".md":
            if anchor.lower() not in anchors(resolved.read_text(encoding="utf-8")):
                problems.append(f"{where}: no heading with the anchor #{anchor} in {resolved.relative_to(root.resolve()).as_posix()}")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.relative_to(ROOT).as_posix())
def test_every_relative_link_points_to_an_existing_file_and_heading(document):
    assert broken_links(document) == []


def test_the_readme_and_docs_are_checked():
    names = {d.relative_to(ROOT).as_posix() for d in DOCUMENTS}
    assert {"README.md", "docs/index.md", "docs/reliability.md"} <= names


def test_a_missing_file_a_missing_heading_and_a_path_outside_are_reported(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## Latest figures\n")
    page = tmp_path / "README.md"
    page.write_text(
        "# Title\n\n"
        "[fine](docs/other.md) [fine too](docs/other.md#latest-figures) [here](#title)\n"
        "[gone](docs/gone.md)\n"
        "[no heading](docs/other.md#earlier-figures)\n"
        "![picture](docs/missing.png)\n"
        "[out](../elsewhere.md)\n"
        "[site](https://example.com/x.md) `[code](not/checked.md)`\n"
        "```\n[fenced](not/checked/either.md)\n```\n"
        "[ref]: docs/also-gone.md\n")
    assert broken_links(page, tmp_path) == [
        "README.md:4: docs/gone.md: no such file",
        "README.md:5: docs/other.md#earlier-figures: no heading with the anchor #earlier-figures in docs/other.md",
        "README.md:6: docs/missing.png: no such file",
        "README.md:7: ../elsewhere.md: outside the repository",
        "README.md:12: docs/also-gone.md: no such file",
    ]


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Benchmarks (`make bench`)", "benchmarks-make-bench"),
    ("The GPU class catalogue (plugins/module_utils/gpu/classes.py)", "the-gpu-class-catalogue-pluginsmodule_utilsgpuclassespy"),
    ("Found and mended: rerun after an API server outage", "found-and-mended-rerun-after-an-api-server-outage"),
    ("Build, start and test times", "build-start-and-test-times"),
])
def test_anchors_are_githubs(heading, anchor):
    assert slug(heading) == anchor
