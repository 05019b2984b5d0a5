"""The project's pages stay true: every relative link of README.md and docs/ resolves to a
file (and to a heading, for an #anchor), every key of the tournament file is in the
generated reference (docs/config.md), every key in a TOML example of the pages is a
declared one, and the README stays a front door that starts with the two commands.
(That docs/config.md is what ``referee.config.docs`` writes is tests/test_config_schema.py.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from referee.config.keys import Key
from referee.config.model import BOT_KEYS, CLUSTER_KEYS, LIMIT_KEYS, TOURNAMENT_KEYS

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SECTIONS: dict[str, dict[str, Key]] = {
    "tournament": TOURNAMENT_KEYS,
    "limits": LIMIT_KEYS,
    "bot": BOT_KEYS,
    "cluster": CLUSTER_KEYS,
}
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """``text`` without its fenced code blocks (a link or heading there is not one)."""
    return FENCE.sub("", text)


def anchors(path: Path) -> set[str]:
    """The #anchors GitHub gives the headings of the Markdown page ``path``."""
    seen: dict[str, int] = {}
    out = set()
    for title in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", prose(path.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` that lead nowhere: no such file, or no such heading."""
    bad = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: outside the project
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading #{anchor} in {path or page.name}")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Here we are\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#here-we-are) [ok](there.md#twice-1) [ok](https://x.invalid/) [ok](#local)\n"
        "[gone](missing.md) [no anchor](there.md#nowhere)\n\n```\n[in code](not-a-link.md)\n```\n\n## Local\n"
    )
    assert broken_links(page) == ["missing.md: no such file", "there.md#nowhere: no heading #nowhere in there.md"]


def documented_keys() -> dict[str, set[str]]:
    """The keys docs/config.md lists, by section (``tournament``, ``limits``, ``bot``, ...)."""
    out: dict[str, set[str]] = {}
    section = ""
    for line in (ROOT / "docs" / "config.md").read_text().splitlines():
        if heading := re.match(r"^## \[+(\w+)\]+$", line):
            section = heading.group(1)
            out[section] = set()
        elif row := re.match(r"^\| `(\w+)` \|", line):
            out[section].add(row.group(1))
    return out


def test_every_declared_key_is_in_the_generated_reference() -> None:
    assert documented_keys() == {section: set(keys) for section, keys in SECTIONS.items()}


def toml_examples(page: Path) -> list[dict[str, Any]]:
    """Every ```toml block of ``page``, parsed."""
    return [tomllib.loads(block) for block in re.findall(r"^```toml\n(.*?)^```", page.read_text(), re.M | re.S)]


def unknown_keys(doc: dict[str, Any]) -> list[str]:
    """The keys of a tournament-file fragment that no section declares (``[game]`` aside:
    a game's options are checked by the game)."""
    bad = []
    for section, value in doc.items():
        if section == "game":
            continue
        if section not in SECTIONS:
            bad.append(f"[{section}]")
            continue
        for table in value if isinstance(value, list) else [value]:
            bad += [f"{section}.{key}" for key in table if key not in SECTIONS[section]]
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_key_of_a_toml_example_is_declared(page: Path) -> None:
    for doc in toml_examples(page):
        assert unknown_keys(doc) == [], page.name


def test_an_undeclared_key_in_an_example_is_caught() -> None:
    doc = tomllib.loads('[tournament]\nroundz = 2\n[game]\nx = 1\n[[bot]]\nname = "a"\nurll = "u"\n[extra]\n')
    assert unknown_keys(doc) == ["tournament.roundz", "bot.urll", "[extra]"]


def test_the_readme_is_a_front_door_that_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    first = re.search(r"^## (.+)$", text, re.M)
    assert first and first.group(1) == "Quick start"
    block = re.search(r"^```sh\n(.*?)^```", text, re.M | re.S)
    assert block and [line.split("#")[0].strip() for line in block.group(1).splitlines()] == ["make run", "make test"]
    assert len(text.splitlines()) <= 200, "the README is a front door: the details belong in docs/"
