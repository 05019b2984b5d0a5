"""Dieci's JavaScript replay engine (``referee/games/dieci/replay.js``) against the Python rules.

Many real matches are played through the Python engine (every seat count, every option:
decks that force skips, unwinds, re-entries and refills, one to four tokens, ``reshuffle``
false, short ``max_manches``; seeds 0, past 2**53, past 2**64 and negative; moves drawn at random
among the legal ones, some with extras the game ignores). The moves alone go to
``G.rebuild`` in one Chromium page, and every start, sent and after view and every legal
count must equal what ``referee.match.frames.frames(..., after=True)`` yields. Views are
compared through digests of their JSON, keys in Python's order (tens of megabytes of views
need not cross the page's wire); a mismatch fetches that view and names the first differing
key (``tests/support/replay_js.py``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from referee.errors import ReplayError
from referee.games.dieci.rules import GAME
from referee.match.frames import Frame, frames
from referee.record import Move
from tests.support import replay_js
from tests.support.replay_js import Case, EnginePage, opened

pytestmark = pytest.mark.parallel

DEFAULT = GAME.check_options(4, {})["deck"]
NO_CARDS = dict.fromkeys(DEFAULT, 0)
# decks that make each rule happen often (missing ranks keep their default count)
DECKS: dict[str, dict[str, int]] = {
    "default": {},
    "skips": {**NO_CARDS, "7": 30, "10": 5, "1": 5},  # Saltaconiglio chains, auto skips and blocks, voids
    "puzzola": {"8": 16, "9": 8, "0000": 10},  # unwinds, Lupo, mid-manche eliminations
    "jolly": {"jollygatto": 24, "0000": 6},  # re-entries, sat_out, nobody loses
    "blockers": {**NO_CARDS, "10": 3, "9": 3, "8": 3, "7": 3, "6": 3, "jollygatto": 1},
    "tiny": {**NO_CARDS, "8": 1, "7": 2, "2": 1, "jollygatto": 2},  # refills with reshuffle false
    "lowonly": {**NO_CARDS, "0000": 5, "jollygatto": 5, "000": 3},
}
# random.seed(int) seeds from abs(int): a negative seed deals as its absolute value
SEEDS = (0, 1, 2**32 - 1, 2**32, 2**53, 2**53 + 1, 2**64 - 1, 2**127, 9_876_543_210_123_456_789, -(2**70 + 3))
MT_EDGES = (0, 1, 2**32 - 1, 2**32, 2**64 - 1, 2**127)


def play(n: int, seed: int, raw: dict[str, Any], pick: random.Random, bold: float, cut: int | None = None) -> Case:
    """A real match through the Python rules, each move drawn among the legal ones
    (the second one, swap/block/draw, with probability ``bold``)."""
    options = GAME.check_options(n, raw)
    state = GAME.setup(n, seed, options)
    moves: list[Move] = []
    while not GAME.is_over(state) and (cut is None or len(moves) < cut):
        (seat,) = GAME.to_act(state)
        legal = GAME.legal(state, seat)
        action = legal[1] if pick.random() < bold else legal[0]
        # Dieci takes no extras: a reply's extra fields are ignored (Game.apply_extras)
        extras = {"claims": [pick.randrange(9)]} if pick.random() < 0.02 else None
        moves.append(Move(seat, len(moves), action, "b", extras=extras))
        state = GAME.apply(state, seat, action)
    label = f"n={n} seed={seed} options={json.dumps(raw, sort_keys=True)} bold={bold} cut={cut}"
    return Case(label, n, seed, options, moves)


def cases() -> list[Case]:
    """Every seat count, option and deck above, seeds near the generator's edges."""
    pick = random.Random(35)
    out: list[Case] = []
    for k in range(54):
        n = 4 + k % 9
        tokens = (1, 2)[k % 2] if n > 9 else (1, 2, 3, 3, 4)[k % 5]
        deck = list(DECKS)[k % len(DECKS)]
        raw: dict[str, Any] = {"tokens": tokens, "deck": DECKS[deck]}
        if deck in ("blockers", "tiny", "lowonly") and sum({**DEFAULT, **DECKS[deck]}.values()) < n + 1:
            raw["deck"] = {**DECKS[deck], "5": n}
        if deck in ("jolly", "lowonly"):  # re-entries make long matches: a few manches show them
            raw["max_manches"] = 12
        seed = SEEDS[k % len(SEEDS)] if k < 2 * len(SEEDS) else pick.getrandbits(64 + k)
        out.append(play(n, seed, raw, pick, (0.3, 0.6, 0.85)[k % 3]))
    for k in range(8):  # a face-up card reached again acts by itself (always swap, always block)
        out.append(play(6 + k % 4, pick.getrandbits(64), {"tokens": 1, "deck": DECKS["skips"]}, pick, 1.0))
    for k in range(30):  # reshuffle false (only below 5 players), refills from the used cards
        raw = {"reshuffle": False, "tokens": 1 + k % 4, "deck": DECKS[list(DECKS)[k % len(DECKS)]]}
        out.append(play(4, pick.getrandbits(40) if k > 5 else SEEDS[k], raw, pick, (0.3, 0.7)[k % 2]))
    for k in range(12):  # max_manches ends the match in a draw among the survivors
        n = 4 + k % 9
        out.append(play(n, pick.getrandbits(70), {"max_manches": 1 + k % 3}, pick, 0.5))
    for k in range(6):  # the moves of part of a match
        out.append(play(5 + k, pick.getrandbits(63), {}, pick, 0.5, cut=3 + 5 * k))
    return out


def happened(case: Case, fs: list[Frame]) -> set[str]:
    """What the match's frames ``fs`` showed (seat 0's view before and after each decision)."""
    seen: set[str] = set()
    last = GAME.view(GAME.setup(case.n, case.seed, case.options), 0)
    for f in fs:
        after = f.after or []
        if not case.options["reshuffle"] and after[0]["deck_size"] > last["deck_size"]:
            seen.add("refill" if after[0]["manche"] != last["manche"] else "refill mid-manche")
        features(seen, last, after)
        last = after[0]
    return seen


def features(seen: set[str], last: dict[str, Any], after: list[dict[str, Any]]) -> None:
    """Add to ``seen`` what the decision from ``last`` (seat 0's view) to ``after`` showed."""
    now = after[0]
    if any("sat_out" in v for v in after):
        seen.add("sat_out")
    events = now["previous_events"] if now["manche"] != last["manche"] else []
    if now["turn"] is None:  # over: this manche's events stay in ``events``
        events = [*events, *now["events"]]
        if len(now["out"]) < now["players"] - 1:
            seen.add("draw among survivors")
    for e in events:
        seen.add(e["type"])
        for flag in ("auto", "blocked", "nobody_loses"):
            if e.get(flag):
                seen.add(f"{e['type']} {flag}")
        if e["type"] == "eliminated" and e["card"] is not None:
            seen.add("eliminated mid-manche")


@pytest.fixture(scope="module")
def engine() -> Iterator[EnginePage]:
    """One Chromium page holding ``G.rebuild`` as the viewer inlines it: it adds no global."""
    with opened("dieci") as e:
        assert e.added == [] and e.keys == ["rebuild"], f"replay.js made globals {e.added}, set {e.keys}"
        yield e


def check(engine: EnginePage, batch: list[Case]) -> set[str]:
    """Every view and legal count of every match of ``batch`` equals Python's; returns
    what happened in the matches."""
    seen: set[str] = set()
    replay_js.check_all(engine, GAME, batch, watch=lambda case, fs: seen.update(happened(case, fs)))
    return seen


def test_every_view_of_many_matches_equals_python(engine: EnginePage) -> None:
    """Each match's rebuilt views and legal counts are Python's, at every seat count and option."""
    batch = cases()
    assert {c.n for c in batch} == set(range(4, 13))
    rules = check(engine, batch)
    wanted = {"keep", "ask", "accept", "block", "block auto", "skip", "skip auto", "void", "unwind", "token"}
    wanted |= {"eliminated", "eliminated mid-manche", "draw", "draw blocked", "showdown", "showdown nobody_loses"}
    wanted |= {"reenter", "sat_out", "refill", "draw among survivors"}
    assert wanted <= rules, f"no match reached {sorted(wanted - rules)}"


def test_deals_at_generator_edges(engine: EnginePage) -> None:
    """Seeds 0, 1, 2**32-1, 2**32, 2**64-1 and 2**127 deal as CPython's Random does (the
    whole deck shuffled once, then the deals of every manche and the dealer's draws)."""
    pick = random.Random(7)
    batch = [
        play(n, seed, raw, pick, 0.5) for seed in MT_EDGES for n, raw in ((4, {"reshuffle": False}), (9, {"tokens": 2}))
    ]
    batch += [Case(f"{c.label} (deal only)", c.n, c.seed, c.options, []) for c in batch]
    check(engine, batch)
    # the seeds differ by one bit or one word: their deals must differ too
    deals = {
        json.dumps([GAME.view(GAME.setup(c.n, c.seed, c.options), s) for s in range(c.n)]) for c in batch if not c.moves
    }
    assert len(deals) == len(MT_EDGES) * 2


def test_refuses_what_python_refuses(engine: EnginePage) -> None:
    """A move by the wrong seat or an action the rules refuse is refused by both."""
    case = play(5, 2**60 + 3, {}, random.Random(3), 0.5)
    wrong_seat = [*case.moves[:4], Move((case.moves[4].seat + 1) % 5, 4, case.moves[4].action, "b")]
    bad_action = [*case.moves[:4], Move(case.moves[4].seat, 4, "fold", "b")]
    for moves in (wrong_seat, bad_action):
        bad = Case(case.label, case.n, case.seed, case.options, moves)
        with pytest.raises(ReplayError):
            list(frames(GAME, bad.options, bad.seed, bad.n, bad.moves, after=True))
        (js,) = engine.raw([(bad.doc(), bad.options)])
        assert "decision 5" in js.get("error", ""), js
