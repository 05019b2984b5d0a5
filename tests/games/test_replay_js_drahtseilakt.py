"""Drahtseilakt's JavaScript replay engine (issue 35 point 4): ``replay.js`` rebuilds, in the
system Chromium, from a match's seed and moves alone, every view ``frames(..., after=True)``
gives in Python: the deal (CPython's MT19937 and shuffle, draw for draw, seeds past 2**53
and the edge seeds), every variant, every seat count, truncated matches, extras (ignored, as
the rules ignore them) and refused moves."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from referee.errors import ReplayError
from referee.games.drahtseilakt import rules as D
from referee.match.frames import frames
from referee.record import Move
from tests.support.replay_js import Case, EnginePage, check_all, opened

pytestmark = pytest.mark.parallel

GAME = D.GAME
JS = Path(D.__file__).with_name("replay.js").read_text(encoding="utf-8")
VARIANTS = [{"tactical": t, "chaotic": c} for t, c in itertools.product((False, True), repeat=2)]
SEATS = range(GAME.info.min_seats, GAME.info.max_seats + 1)
EDGE_SEEDS = [0, 1, 2**32 - 1, 2**32, 2**53 + 1, 2**64 - 1, 2**127]


def play_random(n: int, seed: int, options: Mapping[str, Any], pick: int) -> tuple[list[Move], D.DrahtState]:
    """A whole match played by the rules with moves chosen at random (seeded by ``pick``), and its end."""
    st = GAME.setup(n, seed, options)
    rng = random.Random(pick)
    moves: list[Move] = []
    while not GAME.is_over(st):
        for s in GAME.to_act(st):
            action = rng.choice(GAME.legal(st, s))
            moves.append(Move(s, len(moves) + 1, action, "b"))
            st = GAME.apply(st, s, action)
    return moves, st


def random_moves(n: int, seed: int, options: Mapping[str, Any], pick: int) -> list[Move]:
    """The moves of a whole match played at random."""
    return play_random(n, seed, options, pick)[0]


def rare(st: D.DrahtState) -> set[str]:
    """The rare turns a finished match took: a clean round cancelling the earliest of tied
    highest rounds, a clean round with nothing to cancel, two 0s cancelling each other."""
    seen = set()
    for log in st.rounds_log:
        r = log["round"]
        for s in range(st.seats):
            if r == 0 or log["scores"][s]:
                continue
            before = [c["round"] for old in st.rounds_log[:r] for c in old["cancels"] if c["seat"] == s]
            earlier = [0 if k in before else v for k, v in enumerate(st.raw_scores[s][:r])]
            top = max(earlier)
            seen.add(
                "clean, nothing to cancel" if top == 0 else "clean, tied highest" if earlier.count(top) > 1 else ""
            )
        cards = log["score_cards_revealed"]
        if any({a, b} == {D.RED_ZERO, D.BLUE_ZERO} for a, b in itertools.pairwise(cards)):
            seen.add("two 0s")
    return seen - {""}


@pytest.fixture(scope="module")
def engine() -> Iterator[EnginePage]:
    """One Chromium page with ``replay.js`` loaded as the viewer loads it: it adds no global."""
    with opened("drahtseilakt") as e:
        assert e.added == [], f"replay.js adds globals {e.added}"
        yield e


def test_the_file_only_sets_g_rebuild(engine: EnginePage) -> None:
    assert engine.keys == ["rebuild"]
    assert "G.rebuild = function" in JS and "</script" not in JS.lower(), "the viewer inlines the file in a <script>"


def test_the_deal_matches_python_for_the_edge_seeds(engine: EnginePage) -> None:
    cases: list[Case] = []
    for seed, n, o in itertools.product([*EDGE_SEEDS, -7], SEATS, VARIANTS):
        cases.append(Case(f"seed {seed}, {n} seats, {o}", n, seed, GAME.check_options(n, o), []))
    assert check_all(engine, GAME, cases) == 0
    four = GAME.check_options(4, {})
    dealt = engine.digested([(Case("", 4, s, four, []).doc(), four) for s in (0, 2**127)])
    assert dealt[0].digests != dealt[1].digests, "two seeds, one deal: the seed is not used"


def test_random_matches_of_every_variant_and_seat_count_rebuild_every_view(engine: EnginePage) -> None:
    rng = random.Random(35)
    cases: list[Case] = []
    for j, (n, o) in enumerate(itertools.product(SEATS, VARIANTS)):
        options = GAME.check_options(n, o)
        edge = [EDGE_SEEDS[(2 * j + e) % len(EDGE_SEEDS)] for e in (0, 1)]  # each edge seed in whole matches too
        for seed in [*edge, rng.getrandbits(64), rng.getrandbits(40), 2**62 + rng.getrandbits(20)]:
            moves = random_moves(n, seed, options, rng.getrandbits(32))
            cases.append(Case(f"seed {seed}, {n} seats, {o}", n, seed, options, moves))
    # and the first matches (of a seeded search) that take the rare turns
    wanted = {"clean, tied highest", "clean, nothing to cancel", "two 0s"}
    configs = itertools.cycle(itertools.product(SEATS, VARIANTS))
    for _, (n, o) in zip(range(3000), configs, strict=False):
        options, seed = GAME.check_options(n, o), rng.getrandbits(64)
        moves, end = play_random(n, seed, options, seed)
        if rare(end) & wanted:
            cases.append(Case(f"seed {seed}, {n} seats, {o}, {sorted(rare(end))}", n, seed, options, moves))
            wanted -= rare(end)
        if not wanted:
            break
    assert not wanted, f"no match in 3000 took the turns {sorted(wanted)}"
    decisions = check_all(engine, GAME, cases)
    assert decisions == sum(len(c.moves) for c in cases) and decisions > 40 * len(cases)


def test_cut_short_matches_and_extras_rebuild_as_frames_does(engine: EnginePage) -> None:
    rng = random.Random(36)
    cases: list[Case] = []
    for n, o in itertools.product(SEATS, VARIANTS):
        options = GAME.check_options(n, o)
        seed = rng.getrandbits(70)
        moves = random_moves(n, seed, options, seed)
        # mid-trick, mid-choice for chaotic, and in the next round's first trick
        for cut in (n // 2 + 1, 9 * n + 1, rng.randrange(1, len(moves))):
            cases.append(Case(f"seed {seed}, {n} seats, {o}, cut at {cut}", n, seed, options, moves[:cut]))
        if n != 3:  # whole matches with extras or too many moves: one seat count is enough
            continue
        # Drahtseilakt takes no reply fields besides the action: extras change nothing
        marked = [
            Move(m.seat, m.decision, m.action, m.by, extras={"claims": [0]} if i % 5 == 0 else None)
            for i, m in enumerate(moves)
        ]
        cases.append(Case(f"seed {seed}, {n} seats, {o}, with extras", n, seed, options, marked))
        # moves past the end of the match are never reached, in frames as in the rebuild
        cases.append(Case(f"seed {seed}, {n} seats, {o}, moves past the end", n, seed, options, [*moves, moves[-1]]))
    assert check_all(engine, GAME, cases) > 0


@pytest.mark.parametrize("o", VARIANTS, ids=lambda o: f"tactical={o['tactical']},chaotic={o['chaotic']}")
def test_a_move_the_rules_refuse_stops_the_rebuild_as_it_stops_frames(engine: EnginePage, o: dict[str, bool]) -> None:
    n, seed = 4, 2**60 + 3
    options = GAME.check_options(n, o)
    moves = random_moves(n, seed, options, 1)[:7]
    st = GAME.setup(n, seed, options)
    for m in moves:
        st = GAME.apply(st, m.seat, m.action)
    seat = GAME.to_act(st)[0]
    hand = GAME.legal(st, seat)
    played = next(m.action for m in moves if m.seat == seat)
    absent = next(c for c in range(1, st.max_card + 1) if c not in hand and c != played)
    bad = {
        "a card not in the hand": [*moves, Move(seat, 8, absent, "b")],
        "a card already played": [*moves, Move(seat, 8, played, "b")],
        "not a number": [*moves, Move(seat, 8, str(hand[0]), "b")],
        "true for a card": [*moves, Move(seat, 8, True, "b")],
        "a float for a card": [*moves, Move(seat, 8, hand[0] + 0.5, "b")],
        "the wrong seat": [*moves, Move((seat + 1) % n, 8, hand[0], "b")],
    }
    got = engine.raw([(Case(what, n, seed, options, v).doc(), options) for what, v in bad.items()])
    for (what, mv), g in zip(bad.items(), got, strict=True):
        with pytest.raises(ReplayError):
            list(frames(GAME, options, seed, n, mv, after=True))
        assert "decision 8" in g.get("error", ""), f"{what}: the rebuild did not refuse decision 8: {str(g)[:200]}"
