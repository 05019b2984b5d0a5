"""The bot authors' pages (docs/games/<id>.md) stay true to the engines: the first
`state` example has exactly the keys of a real view, every key is explained in the
field table, and the page carries its own rules section (no link out of the project)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from referee.games import GAMES

pytestmark = pytest.mark.parallel

DOCS = Path(__file__).resolve().parents[2] / "docs" / "games"


def state_example(text: str) -> dict:
    """The first JSON block after the page's state heading."""
    start = re.search(r"^## The `state`.*$", text, re.M)
    assert start, "no state section"
    block = re.search(r"```json\n(.*?)```", text[start.end() :], re.S)
    assert block, "no JSON example of the state"
    return json.loads(block.group(1))


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_state_example_and_field_table_match_a_real_view(gid: str) -> None:
    text = (DOCS / f"{gid}.md").read_text(encoding="utf-8")
    game = GAMES[gid]
    seats = max(game.info.min_seats, 3)
    view = game.view(game.setup(seats, 1, game.check_options(seats, {})), 0)
    assert set(state_example(text)) == set(view)
    for key in view:
        assert re.search(rf"^\|[^|\n]*`{key}`", text, re.M), f"{key} is not in the field table of {gid}.md"


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_each_page_has_its_own_rules_with_the_settled_points(gid: str) -> None:
    text = (DOCS / f"{gid}.md").read_text(encoding="utf-8")
    assert re.search(r"^## Rules$", text, re.M)
    assert re.search(r"^### Settled points", text, re.M)
    assert "RULES.md" not in text and "../shared" not in text
