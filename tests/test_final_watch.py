"""The final's pure parts: who the finalists are (``stats.places.FinalWatch``), its tables
(``schedule.final``), its looks and where it ends, on journal lines made here."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from referee.schedule.final import FinalPlan, FinalTables, final_plan, season_lineup
from referee.stats.places import FinalWatch

pytestmark = pytest.mark.parallel

NAMES = [f"b{i}" for i in range(8)]


def line(index: int, bots: list[str], **extra: Any) -> dict[str, Any]:
    """A journal line whose ranks follow the bots' numbers (b0 beats b1 beats ...)."""
    ranks = [1 + sorted(bots).index(b) for b in bots]
    return {"index": index, "bots": bots, "ranks": ranks, **extra}


def season(n: int, rng: random.Random) -> list[dict[str, Any]]:
    return [line(i, rng.sample(NAMES, 3)) for i in range(n)]


def test_the_finalists_are_the_season_top_of_its_last_lineup_never_disqualified() -> None:
    plan = FinalPlan(start=60, matches=30, finalists=4, players=3, batch=2)
    w = FinalWatch(plan, [b for b in NAMES if b != "b1"], top=2, confidence=0.95)
    lines = season(60, random.Random(1))
    lines[5] = line(5, ["b2", "b0", "b7"], disqualified=[0])  # b2 is disqualified once
    for d in lines:
        w.add(d)
    assert w.season_order()[:3] == ["b0", "b3", "b4"]  # b1 left the lineup, b2 was disqualified
    assert w.finalists() == ["b0", "b3", "b4", "b5"]


def test_a_final_ends_at_the_look_that_settles_its_places() -> None:
    plan = FinalPlan(start=60, matches=3000, finalists=4, players=3, batch=2)
    w = FinalWatch(plan, NAMES, top=2, confidence=0.95)
    for d in season(60, random.Random(2)):
        w.add(d)
    finalists = w.finalists()
    tables = FinalTables.of(7, False, 3)
    seen: Counter[tuple[str, int]] = Counter()
    for b, (lo, hi) in enumerate(plan.blocks()):
        if w.result().over:
            break
        focus = w.focus(b)
        assert len(focus) >= 3 and set(focus) <= set(range(4))
        for i in range(lo, hi):
            bots = [finalists[p] for p in tables.seats(plan, i, focus)]
            assert len(set(bots)) == 3
            seen.update((x, s) for s, x in enumerate(bots))
            w.add(line(i, bots))
    r = w.result(seed=1)
    assert r.settled and r.over and r.end < plan.end and r.played == r.end - plan.start
    assert (r.end - plan.start) % plan.block_tables() == 0  # at a block's end
    assert r.order[:2] == ["b0", "b1"] and sorted(r.order) == sorted(finalists)
    assert [p["bot"] for p in r.places] == r.order[:2] and all(p["settled"] for p in r.places)
    for x in {x for x, _ in seen}:  # every finalist equally often in every seat
        assert seen[(x, 0)] == seen[(x, 1)] == seen[(x, 2)]
    w.add(line(r.end, [finalists[0], finalists[1], finalists[2]]))  # a line past the end does not count
    assert w.result().played == r.played


def test_the_tables_are_the_same_from_the_same_inputs_and_even_in_play() -> None:
    plan = FinalPlan(start=10, matches=120, finalists=5, players=3, batch=3)
    focus = {i: 0 for i in range(5)}
    a, b = FinalTables.of(9, False, 3), FinalTables.of(9, False, 3)
    first = [a.seats(plan, i, focus) for i in range(10, 130)]
    assert first == [b.seats(plan, i, focus) for i in range(10, 130)]
    assert first != [FinalTables.of(10, False, 3).seats(plan, i, focus) for i in range(10, 130)]
    played = {0: 0, 1: 3, 2: 3, 3: 3, 4: 3}  # the one that played least comes first
    assert 0 in a.groups(plan, 1, played)[0]


def test_the_plan_comes_from_the_settings_of_a_closed_season() -> None:
    s = {"matches": 100, "players": 4, "final": {"bots": 16, "matches": 1000}, "closed": True, "batch": 10}
    plan = final_plan(s)
    assert plan is not None and plan.block_tables() == 48 and plan.blocks()[0] == (100, 148)
    assert plan.blocks()[-1][1] == 1100 and plan.deal(105) == 104
    assert final_plan({**s, "closed": False}) is None and final_plan({**s, "final": {}}) is None
    ladder = {"epoch_tables": 64, "lineups": [{"from": 0, "bots": ["a@0123456789ab", "b"]}, {"from": 2, "bots": ["c"]}]}
    assert season_lineup(ladder, plan) == ["a", "b"]  # the season's last epoch is 1
