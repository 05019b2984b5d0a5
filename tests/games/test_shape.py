"""One game shape (issue 11 part 5): the four modules read alike and their views agree
on the fields every game has."""

from __future__ import annotations

import itertools
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

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


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_a_copy_plays_on_exactly_as_the_original_and_shares_nothing_with_it(gid: str) -> None:
    """``Game.copy`` mid-match: the copy and the original, given the same moves, give the same
    views to the end (their generators included), and playing the copy leaves the original as
    it was."""
    game: Game = GAMES[gid]
    seats = game.info.max_seats
    state = game.setup(seats, 11, game.check_options(seats, {}))
    pick = random.Random(5)
    for _ in range(12):
        acting = game.to_act(state)
        state = game.apply(state, acting[0], pick.choice(game.legal(state, acting[0])))
    before = [game.view(state, s) for s in range(seats)]
    twin = game.copy(state)
    assert twin is not state
    moves = random.Random(6)
    while not game.is_over(twin):
        acting = game.to_act(twin)
        twin = game.apply(twin, acting[0], moves.choice(game.legal(twin, acting[0])))
    assert [game.view(state, s) for s in range(seats)] == before  # the original is untouched
    moves, other = random.Random(6), game.copy(state)
    while not game.is_over(state):
        acting = game.to_act(state)
        action = moves.choice(game.legal(state, acting[0]))
        state, other = game.apply(state, acting[0], action), game.apply(other, acting[0], action)
        assert [game.view(state, s) for s in range(seats)] == [game.view(other, s) for s in range(seats)]
    assert game.result(state) == game.result(other)


@dataclass
class _Odd:
    """A state pickle refuses (a lambda among its fields)."""

    hook: Callable[[], None]
    rng: random.Random
    hands: list[list[int]]


def test_a_state_pickle_refuses_is_still_copied() -> None:
    state = _Odd(lambda: None, random.Random(4), [[1, 2], [3]])
    twin = GAMES["nimmt_plus"].copy(state)
    assert twin.hook is state.hook and twin.hands == state.hands and twin.hands[0] is not state.hands[0]
    assert twin.rng is not state.rng and twin.rng.random() == state.rng.random()
