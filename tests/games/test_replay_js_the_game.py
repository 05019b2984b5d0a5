"""The Game's replay engine in JavaScript (issue 35 point 4): ``replay.js``, run in the system
Chromium on nothing but a match's seed, bots and moves, rebuilds the views, deal and legal counts
``frames`` gives for real matches played through the Python rules: every variant and option,
every seat count, seeds of every size (past 2**53, 0, negative), random, low-jump and heuristic
players, claims the rules take and claims they refuse. One page runs the whole batch."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from referee.games.base import InvalidExtras
from referee.games.the_game import rules
from referee.games.the_game.rules import GAME, TheGameState
from referee.record import Move
from sample_bots.the_game import heuristic
from tests.support import replay_js
from tests.support.replay_js import Case, EnginePage, Rebuilt, opened

pytestmark = pytest.mark.parallel

EDGE_SEEDS = (0, 1, 2**32 - 1, 2**32, 2**53 + 1, 2**64 - 1, 2**127, -(2**40) - 3)
VALID_CLAIMS: tuple[Any, ...] = ([], None, [3, 0], [2], [1, 3, 2], [0, 1, 2, 3])
# every way the rules refuse claims that survives JSON (a whole float such as 1.0 does not:
# JavaScript reads it as 1; see the report of issue 35)
REFUSED_CLAIMS: tuple[Any, ...] = ([4], [-1], [0, 0], ["1"], [True], [1.5], "0", {"p": 1}, 3, [[1]], [2**70], False)

Chooser = Callable[[random.Random, dict[str, Any], list[Any], dict[str, Any]], tuple[Any, dict[str, Any] | None]]


@dataclass
class Played(Case):
    """One match played through the Python rules: how it ended, the claims refused."""

    end: str | None = None
    refused: int = 0  # replies whose claims the rules refused


def claims_now(rng: random.Random) -> dict[str, Any] | None:
    """A quarter of replies carry claims, one in three of those claims the rules refuse."""
    roll = rng.random()
    if roll < 0.75:
        return None
    pool = REFUSED_CLAIMS if roll < 0.83 else VALID_CLAIMS
    return {"claims": rng.choice(pool)}


def at_random(rng: random.Random, view: dict[str, Any], legal: list[Any], opts: dict[str, Any]) -> tuple[Any, Any]:
    """Any legal action."""
    return rng.choice(legal), claims_now(rng)


def low_jump(rng: random.Random, view: dict[str, Any], legal: list[Any], opts: dict[str, Any]) -> tuple[Any, Any]:
    """Mostly the placement that jumps least (long games, empty draw piles); ends when cheap."""
    tops: list[int] = [p["top"] for p in view["piles"]]

    def jump(a: dict[str, int]) -> int:
        card, pile = a["card"], a["pile"]
        return card - tops[pile] if pile < 2 else tops[pile] - card

    places = sorted((a for a in legal if a != rules.END), key=jump)
    if rules.END in legal and (not places or jump(places[0]) > 2 or rng.random() < 0.1):
        return rules.END, claims_now(rng)
    return (places[0] if rng.random() < 0.9 else rng.choice(places)), claims_now(rng)


def by_heuristic(rng: random.Random, view: dict[str, Any], legal: list[Any], opts: dict[str, Any]) -> tuple[Any, Any]:
    """The sample heuristic bot's reply (it wins some deals), its claims as its extras."""
    reply = heuristic({"state": view, "legal": legal, "options": opts})
    return reply["action"], ({"claims": reply["claims"]} if "claims" in reply else None)


def play(seed: int, n: int, settings: dict[str, Any], chooser: Chooser, tag: str) -> Played:
    """A whole match of ``n`` seats from ``seed``, each move chosen by ``chooser`` (seeded)."""
    opts = GAME.check_options(n, settings)
    rng = random.Random(f"{tag} {seed} {n} {sorted(opts.items())}")
    state: TheGameState = GAME.setup(n, seed, opts)
    moves: list[Move] = []
    refused = 0
    while not GAME.is_over(state):
        (seat,) = GAME.to_act(state)
        legal = GAME.legal(state, seat)
        action, extras = chooser(rng, GAME.view(state, seat), legal, opts)
        state = GAME.apply(state, seat, action)
        if extras:
            try:
                state = GAME.apply_extras(state, seat, extras)
            except InvalidExtras:
                refused += 1
        moves.append(Move(seat, len(moves) + 1, action, "bot", extras=extras))
    name = f"{tag} seed={seed} n={n} options={json.dumps(opts, sort_keys=True)}"
    return Played(name, n, seed, opts, moves, state.end_reason, refused)


def every_option() -> Iterator[dict[str, Any]]:
    """Every combination of The Game's options."""
    for pro, reduced, fire, comm in itertools.product((False, True), (False, True), (False, True), ("claims", "none")):
        yield {"pro": pro, "reduced_hand": reduced, "on_fire": fire, "communication": comm}


def batch() -> list[Played]:
    """Four matches per seat count and option set: random, low-jump twice, heuristic every other set."""
    rng = random.Random(35)
    out: list[Played] = []
    for k, (n, settings) in enumerate(itertools.product(range(1, 6), every_option())):
        seeds = [rng.getrandbits(rng.choice((8, 32, 53, 64, 100))) for _ in range(4)]
        out.append(play(seeds[0], n, settings, at_random, "random"))
        out += [play(s, n, settings, low_jump, "low") for s in seeds[1:3]]
        if k % 2 == 0:
            out.append(play(seeds[3], n, settings, by_heuristic, "heuristic"))
    return out


@pytest.fixture(scope="module")
def engine() -> Iterator[EnginePage]:
    """One Chromium page holding the engine as the viewer inlines it: it adds no global."""
    with opened("the_game") as e:
        assert e.added == [], f"replay.js leaks globals: {e.added}"
        assert e.keys == ["rebuild"]
        yield e


def test_js_rebuilds_every_view_and_legal_count_of_real_matches(engine: EnginePage) -> None:
    played = batch()
    replay_js.check_all(engine, GAME, played)
    # the batch reaches what it claims to: every ending, empty draw piles, both fates of claims
    assert {p.end for p in played} == {"won", "stuck", "fire"}
    assert any(p.moves and len(p.moves) > 100 for p in played)
    refused = sum(p.refused for p in played)
    assert refused > 100 and sum(1 for p in played for m in p.moves if m.extras) - refused > 100
    assert len(played) == 280


def test_the_deal_and_whole_match_of_edge_seeds_match_cpython(engine: EnginePage) -> None:
    played = [play(seed, n, {}, low_jump, "edge") for seed in EDGE_SEEDS for n in range(1, 6)]
    played += [play(seed, 5, {"pro": True, "on_fire": True}, at_random, "edge") for seed in EDGE_SEEDS]
    replay_js.check_all(engine, GAME, played)
    # the five hands of a seed are distinct deals: the seeds really drive the generator
    hands = {json.dumps(GAME.setup(5, seed, GAME.check_options(5, {})).hands) for seed in EDGE_SEEDS}
    assert len(hands) == len(EDGE_SEEDS)


def test_moves_past_the_end_are_left_as_frames_leaves_them(engine: EnginePage) -> None:
    p = play(2**60 + 7, 3, {"on_fire": True}, low_jump, "past")
    longer = Played(p.label, p.n, p.seed, p.options, [*p.moves, Move(p.moves[-1].seat, 0, "end", "bot")], p.end)
    (out,) = engine.raw([(longer.doc(), longer.options)])
    assert replay_js.mismatch(GAME, longer, replay_js.want(GAME, longer), Rebuilt.of(out)) is None
    assert len(out["sent"]) == len(p.moves)


def test_a_move_the_rules_refuse_fails_naming_the_decision(engine: EnginePage) -> None:
    p = play(77, 2, {}, low_jump, "refuse")
    opts = p.options
    wrong_seat = {**p.doc(), "seat": [1 - s for s in p.doc()["seat"]]}
    missing = {**p.doc(), "action": [{"card": 1, "pile": 0}, *p.doc()["action"][1:]]}
    early_end = {**p.doc(), "action": ["end", *p.doc()["action"][1:]]}
    outs = engine.raw([(wrong_seat, opts), (missing, opts), (early_end, opts)])
    assert outs[0] == {"error": "decision 1 is seat 1's, the rules ask seat 0"}
    assert outs[1]["error"].startswith('decision 1 ({"card":1,"pile":0}) is refused by the rules: card 1 is not in')
    assert (
        outs[2]["error"] == 'decision 1 ("end") is refused by the rules: cannot end the turn: 0 of the minimum 2 placed'
    )


def test_extras_at_a_faulted_decision_change_nothing(engine: EnginePage) -> None:
    # in play a decision with a fault took no extras (refused ones are the fault): the pack's
    # `fault` tells the engine, which cannot tell every refused claim from a good one
    def candidates() -> Iterator[tuple[Played, int, Played]]:
        for seed in range(40, 60):
            p = play(seed, 3, {}, by_heuristic, "faulted")
            for i in [k for k, m in enumerate(p.moves) if m.extras][:5]:
                without = [dataclasses.replace(m, extras=None) if k == i else m for k, m in enumerate(p.moves)]
                dropped = Played(p.label, p.n, p.seed, p.options, without, p.end)
                if replay_js.want(GAME, dropped) != replay_js.want(GAME, p):  # the claims changed a view
                    yield p, i, dropped

    p, i, dropped = next(candidates())
    doc = {**p.doc(), "fault": {str(i): "malformed"}}
    (out,) = engine.raw([(doc, p.options)])
    assert replay_js.mismatch(GAME, dropped, replay_js.want(GAME, dropped), Rebuilt.of(out)) is None
    (kept,) = engine.raw([(p.doc(), p.options)])  # without the fault the same claims are taken
    assert replay_js.mismatch(GAME, p, replay_js.want(GAME, p), Rebuilt.of(kept)) is None
