"""referee/games/nimmt_plus/replay.js in the system Chromium: ``G.rebuild(doc, options)``
rebuilds from a match's moves every view ``frames(..., after=True)`` yields in Python.

Matches are played through the Python rules with seeded random legal moves (every variant,
``zero_heads`` on and off, 2-7 seats, seeds 0 and past 2**53), plus the sample leaderboard's
real matches; all are rebuilt in one page, a batch per evaluate, and every start, sent and
after view (as JSON: same keys, values and types) and every legal count is compared.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.errors import ReplayError
from referee.games.nimmt_plus.rules import GAME, VARIANTS
from referee.match.frames import frames
from referee.record import BOT, Move
from referee.store import packs, replay_data, transcripts
from referee.store.matches import match_of
from referee.store.tournament_file import load_output_dir
from tests.support import replay_js
from tests.support.replay_js import Case, EnginePage, Rebuilt, opened, script

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD = ROOT / "leaderboards" / "nimmt_plus"
EDGE_SEEDS = [0, 1, 2**32 - 1, 2**32, 2**53, 2**53 + 1, 2**64 - 1, 2**127, -(2**70) - 3]
# reply fields a bot may send along (the game takes none: Game.apply_extras keeps the state)
EXTRAS: list[dict[str, Any]] = [{"claims": [1, 2]}, {"claims": "none"}, {"note": None}, {"x": {"y": [0]}}]


def played(name: str, n: int, seed: int, settings: Mapping[str, Any], rng: random.Random, extras: bool = False) -> Case:
    """A whole match through the Python rules, each move drawn from the legal ones by ``rng``;
    with ``extras``, some decisions carry reply fields the game does not take."""
    options = GAME.check_options(n, settings)
    state = GAME.setup(n, seed, options)
    moves: list[Move] = []
    while not GAME.is_over(state):
        for s in GAME.to_act(state):
            action = rng.choice(GAME.legal(state, s))
            state = GAME.apply(state, s, action)
            more: dict[str, Any] | None = None
            if extras and rng.random() < 0.1:
                more = rng.choice(EXTRAS)
            moves.append(Move(s, len(moves), action, BOT, extras=more))
    return Case(name, n, seed, options, moves)


def random_cases() -> list[Case]:
    """Every variant at every seat count, zero_heads 0 and 3, varied seeds (0, past 2**53,
    past 2**64), some with extras; and more of the usual table (plus, 4 seats)."""
    rng = random.Random(35)
    cases = []
    for variant in VARIANTS:
        for n in range(2, 8):
            for k in range(3 if n <= 4 else 1):
                seed = [rng.getrandbits(130), 0, 2**53 + rng.getrandbits(20)][(k + n) % 3]
                settings = {"variant": variant, "zero_heads": 3 if (k + n) % 2 else 0}
                cases.append(played(f"{variant}/{n}/{k}", n, seed, settings, rng, extras=k == 1))
    for k in range(10):
        cases.append(played(f"plus/4/r{k}", 4, rng.getrandbits(63), {}, rng))
    return cases


def leaderboard_cases() -> Iterator[Case]:
    """The real matches of the sample 6 nimmt! leaderboard (read, never changed)."""
    tournament, records = load_output_dir(LEADERBOARD)
    by_id = {str(r["id"]): r for r in records}
    for tr in transcripts.read_all(LEADERBOARD):
        m = match_of(GAME, tournament["settings"], by_id[tr.id], tr)
        yield Case(f"{LEADERBOARD.name}/{tr.id}", len(m.record["bots"]), int(m.record["seed"]), m.options, tr.moves)


@pytest.fixture(scope="module")
def engine() -> Iterator[EnginePage]:
    """The system Chromium, once for the module, with a page holding the engine."""
    with opened("nimmt_plus") as e:
        yield e


def mismatch(case: Case, out: Mapping[str, Any]) -> str | None:
    """The first difference of the JS rebuild ``out`` (raw) from Python's frames, or None."""
    return replay_js.mismatch(GAME, case, replay_js.want(GAME, case), Rebuilt.of(out))


def check_all(engine: EnginePage, cases: Sequence[Case]) -> None:
    """Rebuild ``cases`` in the page and fail on the first difference from Python."""
    replay_js.check_all(engine, GAME, cases)


def test_random_matches_rebuild_every_view(engine: EnginePage) -> None:
    """Every variant, option and seat count: all views and legal counts equal frames()'s."""
    cases = random_cases()
    assert {(c.options["variant"], c.options["zero_heads"]) for c in cases} == {
        (v, z) for v in VARIANTS for z in (0, 3)
    }
    assert {c.n for c in cases} == set(range(2, 8))
    assert any(c.seed >= 2**64 for c in cases) and any(c.seed == 0 for c in cases)
    assert any(m.extras for c in cases for m in c.moves)
    check_all(engine, cases)


def test_sample_leaderboards_rebuild_every_view(engine: EnginePage) -> None:
    """The real matches of the sample leaderboard (the bots' own choices), rebuilt from the
    docs its published packs hold, equal Python's frames, in the very view table the
    format-1 replay data holds (replay_data.make's)."""
    cases = list(leaderboard_cases())[::2]  # every other: 20 of its 40 (the module's time)
    assert len(cases) >= 20
    tournament, records = load_output_dir(LEADERBOARD)
    by_id = {str(r["id"]): r for r in records}
    docs = []
    for c in cases:
        doc = packs.find(LEADERBOARD, int(by_id[c.label.split("/")[-1]]["index"]))
        assert doc is not None and "views" not in doc, f"{c.label}: no moves-only entry in the sample's packs"
        docs.append(doc)
    outs = engine.raw([(doc, c.options) for doc, c in zip(docs, cases, strict=True)])
    for case, out in zip(cases, outs, strict=True):
        bad = mismatch(case, out)
        assert bad is None, bad
        mid = case.label.split("/")[-1]
        made = replay_data.make(match_of(GAME, tournament["settings"], by_id[mid], transcripts.find(LEADERBOARD, mid)))
        for key in ("views", "start", "sent", "after", "legal"):
            assert out[key] == made[key], f"{case.label}: {key} differs from the format-1 replay data"


def test_deal_of_edge_seeds(engine: EnginePage) -> None:
    """The deal of every variant for MT19937 seeding edge cases (0, word edges, 2**127,
    negative: Python seeds with the absolute value), and one decision past it."""
    cases = []
    for seed in EDGE_SEEDS:
        for variant in VARIANTS:
            n = 3 if variant == "plus_dealt_zeros" else 5
            options = GAME.check_options(n, {"variant": variant})
            state = GAME.setup(n, seed, options)
            s = GAME.to_act(state)[0]
            cases.append(Case(f"{variant}/{seed}", n, seed, options, [Move(s, 0, GAME.legal(state, s)[-1], BOT)]))
    check_all(engine, cases)


def test_partial_and_overlong_moves(engine: EnginePage) -> None:
    """Moves that stop inside a simultaneous turn, or go on past the match's end, rebuild
    as frames() reads them (up to the last move, up to the end)."""
    rng = random.Random(7)
    whole = played("cut", 5, 2**60 + 11, {"variant": "plus_dealt_zeros"}, rng)
    simple = played("simple", 3, 99, {"variant": "simple"}, rng)
    cases = [
        Case("cut", whole.n, whole.seed, whole.options, whole.moves[:7]),
        Case("none", whole.n, whole.seed, whole.options, []),
        Case("overlong", simple.n, simple.seed, simple.options, simple.moves + simple.moves[:3]),
    ]
    check_all(engine, cases)


def test_refused_moves_are_refused(engine: EnginePage) -> None:
    """A move out of turn or not in the hand: Python's frames refuses it, so does the JS."""
    rng = random.Random(8)
    base = played("base", 4, 12345, {}, rng)
    wrong_seat = list(base.moves)
    wrong_seat[2] = Move(0, 2, wrong_seat[2].action, BOT)
    not_held = list(base.moves)
    not_held[1] = Move(not_held[1].seat, 1, [105], BOT)
    unsorted = list(base.moves)
    unsorted[0] = Move(0, 0, [3, 1], BOT)
    cases = [
        Case(name, 4, base.seed, base.options, moves)
        for name, moves in (("seat", wrong_seat), ("card", not_held), ("order", unsorted))
    ]
    outs = engine.raw([(c.doc(), c.options) for c in cases])
    for case, out in zip(cases, outs, strict=True):
        with pytest.raises(ReplayError):
            list(frames(GAME, case.options, case.seed, case.n, case.moves, after=True))
        assert "error" in out, f"{case.label}: the JS took a move the rules refuse"
    assert outs[0]["error"].startswith("decision 3 is seat 0's")
    assert outs[1]["error"].startswith("decision 2 is refused")


def test_the_comparison_finds_a_changed_view(engine: EnginePage) -> None:
    """The checker is no rubber stamp: one card changed in a stored view, or a seat's
    after-index pointing elsewhere, is reported with the match, the decision and the key."""
    case = played("probe", 4, 31337, {}, random.Random(9))
    (out,) = engine.raw([(case.doc(), case.options)])
    assert mismatch(case, out) is None
    changed = json.loads(json.dumps(out))
    i = 20
    k = changed["after"][i][1]
    changed["views"].append({"b": k, "set": {"totals": [9, 9, 9, 9]}})
    changed["after"][i][1] = len(changed["views"]) - 1
    bad = mismatch(case, changed)
    assert bad is not None and f"decision {i + 1}: seat 1's view after it: key 'totals'" in bad
    changed = json.loads(json.dumps(out))
    changed["legal"][5] += 1
    assert "decision 6: " in (mismatch(case, changed) or "")


def test_the_file_sets_g_rebuild_and_no_global(engine: EnginePage) -> None:
    """Inlined as the viewer does (after the shared files, in one scope) the engine sets
    G.rebuild and makes no global; loaded as plain scripts after ``const G={}`` too (PyRandom
    and ViewTable are then top-level constants, never window's), and runs with the defaults."""
    assert engine.added == [] and engine.keys == ["rebuild"]
    page = engine.browser.new_page()
    page.set_content(
        "<!doctype html><title>globals</title>"
        "<script>window.before=Object.getOwnPropertyNames(window);const G={};</script>"
    )
    page.add_script_tag(content=script("nimmt_plus"))
    added = page.evaluate("() => Object.getOwnPropertyNames(window).filter(k => !window.before.includes(k))")
    assert added == ["before"], f"replay.js made globals: {added}"
    assert page.evaluate("() => Object.keys(G)") == ["rebuild"]
    case = played("defaults", 4, 2**64 + 5, {}, random.Random(10))
    out = page.evaluate("doc => JSON.stringify(G.rebuild(doc, {}))", case.doc())
    page.close()
    assert mismatch(case, json.loads(out)) is None
