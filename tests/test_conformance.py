"""Conformance and leak tests over every registered game, every seat count and every
combination of option choices (bool options both ways, choice options each value)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from referee.games import GAMES
from referee.games.base import Game, IllegalAction
from tests.support.games import cases, roundtrip

pytestmark = pytest.mark.parallel

MAX_DECISIONS = 200_000


def playout(
    game: Game, seats: int, options: dict[str, Any], seed: int, choice_seed: int, checks: bool = True
) -> tuple[list[Any], Any]:
    """Play randomly to the end; return the trace and the final state."""
    rng = random.Random(choice_seed)
    state = game.setup(seats, seed, options)
    trace: list[Any] = []
    for _ in range(MAX_DECISIONS):
        if game.is_over(state):
            return trace, state
        to_act = game.to_act(state)
        assert to_act, "a game that is not over must have a seat to act"
        chosen = []
        for s in to_act:
            legal = game.legal(state, s)
            assert legal, f"seat {s} must act but has no legal action"
            if checks:
                view = game.view(state, s)
                assert roundtrip(view) == view, "view does not survive a JSON round trip"
                assert roundtrip(legal) == legal, "legal does not survive a JSON round trip"
            chosen.append((s, legal[rng.randrange(len(legal))]))
        for s, action in chosen:
            state = game.apply(state, s, roundtrip(action))
            trace.append((s, action))
            if checks:
                broken = game.invariants(state)
                assert not broken, f"invariants broken after seat {s} played {action!r}: {broken}"
    raise AssertionError(f"no end after {MAX_DECISIONS} decisions")


@pytest.mark.parametrize(("game", "seats", "options"), cases())
def test_random_playouts_end_and_are_deterministic(game: Game, seats: int, options: dict[str, Any]) -> None:
    for seed in (1, 2):
        trace, final = playout(game, seats, options, seed, seed + 100)
        again, final2 = playout(game, seats, options, seed, seed + 100, checks=False)
        assert trace == again, "the same seed and choices must give the same trace"
        r1, r2 = game.result(final), game.result(final2)
        assert r1.to_json() == r2.to_json()
        assert roundtrip(r1.to_json()) == r1.to_json()
        assert len(r1.scores) == len(r1.ranks) == seats
        assert min(r1.ranks) == 1
        for s in range(seats):
            stats = game.seat_stats(r1, s)
            assert set(stats) <= {spec.key for spec in game.info.stats}


@pytest.mark.parametrize(("game", "seats", "options"), cases())
def test_views_do_not_leak_hidden_information(game: Game, seats: int, options: dict[str, Any]) -> None:
    """Re-dealing what a seat cannot see never changes that seat's view, while it does
    change what other seats see (so the test can tell)."""
    rng = random.Random(7)
    state = game.setup(seats, 11, options)
    changed_elsewhere = 0
    checked = 0
    step = 0
    while not game.is_over(state):
        if step % 3 == 0:
            for s in range(seats):
                before = game.view(state, s)
                other = game.redeal_hidden(state, s, rng)
                assert game.view(state, s) == before, "redeal_hidden must not touch the original"
                assert game.view(other, s) == before, f"seat {s}'s view changed when only hidden information did"
                checked += 1
                if not changed_elsewhere and any(
                    game.view(other, o) != game.view(state, o) for o in range(seats) if o != s
                ):
                    changed_elsewhere += 1  # once is all the assert below needs
                if step % 12 == 0:  # the re-dealt state must still be a game that can go on
                    assert not game.invariants(other)
                    _play_some(game, other, rng, 5)
        to_act = game.to_act(state)
        for s in to_act:
            legal = game.legal(state, s)
            state = game.apply(state, s, legal[rng.randrange(len(legal))])
        step += 1
    assert checked > 0
    if seats > 1:
        assert changed_elsewhere > 0, "redeal_hidden never changed another seat's view: it re-deals nothing"


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_illegal_actions_are_refused(gid: str) -> None:
    game = GAMES[gid]
    seats = game.info.min_seats
    state = game.setup(seats, 3, game.check_options(seats, {}))
    s = game.to_act(state)[0]
    for bad in ("no such action", 10**9, None, [[[]]], {"x": 1}):
        with pytest.raises(IllegalAction):
            game.apply(state, s, bad)
    others = [o for o in range(seats) if o not in game.to_act(state)]
    if others:
        legal = game.legal(state, s)
        with pytest.raises(IllegalAction):
            game.apply(state, others[0], legal[0])


def _play_some(game: Game, state: Any, rng: random.Random, n: int) -> None:
    for _ in range(n):
        if game.is_over(state):
            return
        for s in game.to_act(state):
            legal = game.legal(state, s)
            state = game.apply(state, s, legal[rng.randrange(len(legal))])
