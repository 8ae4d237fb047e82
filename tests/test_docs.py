"""README and docs/: every relative link resolves, to a file and, when it names one, a heading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The pages beside the code they describe, checked as the docs are.
READMES = [ROOT / "benchmarks" / "README.md", ROOT / "tests" / "data" / "README.md"]
CHECKED = PAGES + READMES
# [text](target) and ![alt](target), outside code; a target has no spaces.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    found: set[str] = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans: `[x](y)` there is no link
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def broken(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or heading does not exist."""
    found = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            found.append(f"{target}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            found.append(f"{target}: no such heading")
    return found


def test_link_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## A heading's words\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md) [ok](other.md#a-headings-words) [ok](#here) ![pic](missing.png)\n"
                    "[gone](other.md#nowhere) [web](https://example.com) `[code](nowhere.md)`\n"
                    "```md\n[fenced](nowhere.md)\n```\n# Here\n", encoding="utf-8")
    assert broken(page) == ["missing.png: no such file", "other.md#nowhere: no such heading"]


@pytest.mark.parametrize("page", CHECKED, ids=[page.relative_to(ROOT).as_posix() for page in CHECKED])
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_readme_is_a_front_door() -> None:
    """Short, and every docs page reachable from its contents."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in links(ROOT / "README.md")}
    assert set(PAGES[1:]) <= linked, "a docs page README does not link"
