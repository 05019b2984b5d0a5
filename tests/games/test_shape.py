"""One game shape (issue 11 part 5): the four modules read alike and their views agree
on the fields every game has."""

from __future__ import annotations

import itertools
import random
import re
import sys

import pytest

from referee.games import GAMES
from referee.games.base import Game

pytestmark = pytest.mark.parallel

HEADINGS = ["Rules", "Decisions where RULES.md is silent", "Seat view (JSON)", "Actions"]


def headings(doc: str) -> list[str]:
    """The reST section titles of a module docstring, parenthesised parts dropped."""
    lines = doc.splitlines()
    out = []
    for title, rule in itertools.pairwise(lines):
        if rule and set(rule) == {"-"} and len(rule) == len(title):
            out.append(re.sub(r" \((docs/games|RULES).*\)$", "", title))
    return out


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_module_docstrings_have_the_same_headings_in_the_same_order(gid: str) -> None:
    module = sys.modules[type(GAMES[gid]).__module__]
    assert module.__doc__ is not None
    assert headings(module.__doc__) == HEADINGS
    assert f"docs/games/{gid}.md" in module.__doc__


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_no_game_overrides_copy_and_every_game_redeals(gid: str) -> None:
    cls = type(GAMES[gid])
    assert "copy" not in vars(cls), "copy is the base's deep copy for every game"
    assert "redeal_hidden" in vars(cls)


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_your_turn_is_in_every_view_and_matches_to_act(gid: str) -> None:
    game: Game = GAMES[gid]
    for seats in sorted({game.info.min_seats, game.info.max_seats}):
        options = game.check_options(seats, {})
        for seed in range(3):
            state = game.setup(seats, seed, options)
            pick = random.Random(seed)
            for _ in range(3000):
                acting = game.to_act(state)
                for s in range(seats):
                    assert game.view(state, s)["your_turn"] is (s in acting)
                if game.is_over(state):
                    break
                for s in acting:
                    legal = game.legal(state, s)
                    state = game.apply(state, s, legal[pick.randrange(len(legal))])
            assert game.is_over(state)


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_redeal_hidden_reseeds_the_generator_of_later_deals(gid: str) -> None:
    game: Game = GAMES[gid]
    seats = game.info.min_seats
    state = game.setup(seats, 5, game.check_options(seats, {}))
    before = state.rng.getstate()
    a = game.redeal_hidden(state, 0, random.Random(1))
    b = game.redeal_hidden(state, 0, random.Random(2))
    assert state.rng.getstate() == before
    assert a.rng.getstate() != before and a.rng.getstate() != b.rng.getstate()
