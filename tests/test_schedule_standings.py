"""Schedules (pure) and standings (pure) on synthetic data."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from referee.config import BotConfig, Limits, TournamentConfig
from referee.games import get_game
from referee.record import MatchRecord
from referee.tournament.schedule import derive_seed, schedule, seat_balance
from referee.tournament.standings import DQ, compute_standings, compute_timings, percentile


def config(
    n_bots: int, players: int, fmt: str = "round_robin", rounds: int = 1, matches: int = 10, seed: int = 1
) -> TournamentConfig:
    return TournamentConfig(
        path=Path("x.toml"),
        name="t",
        game="nimmt_plus",
        seed=seed,
        players=players,
        format=fmt,
        rounds=rounds,
        matches=matches,
        concurrency=1,
        output=Path("/tmp/x"),
        options={"variant": "plus"},
        limits=Limits(),
        bots=tuple(BotConfig(name=f"b{i}", url="http://127.0.0.1:1/") for i in range(n_bots)),
    )


def test_round_robin_plays_every_combination_each_round_with_rotating_seats() -> None:
    fx = schedule(config(5, 4, rounds=4))
    assert len(fx) == 5 * 4  # C(5,4) combinations x 4 rounds
    tables = Counter(frozenset(f.seats) for f in fx)
    assert len(tables) == 5 and set(tables.values()) == {4}
    assert seat_balance(fx, 5, 4)
    seats_of_b0 = Counter(f.seats.index(0) for f in fx if 0 in f.seats)
    assert seats_of_b0 == {0: 4, 1: 4, 2: 4, 3: 4}
    assert not seat_balance(schedule(config(4, 4, rounds=2)), 4, 4)


def test_random_tables_are_seeded_and_shuffled() -> None:
    a, b = schedule(config(6, 4, "random", matches=30)), schedule(config(6, 4, "random", matches=30))
    assert [f.seats for f in a] == [f.seats for f in b]
    assert all(len(set(f.seats)) == 4 for f in a)
    assert len({f.seats for f in a}) > 20
    c = schedule(config(6, 4, "random", matches=30, seed=2))
    assert [f.seats for f in a] != [f.seats for f in c]


def test_match_seeds_depend_on_tournament_seed_and_fixture_only() -> None:
    fx = schedule(config(4, 4, rounds=2))
    assert [f.seed for f in fx] == [derive_seed(1, i) for i in range(2)]
    assert len({f.seed for f in schedule(config(6, 2, rounds=3))}) == 45
    assert derive_seed(1, 0) != derive_seed(2, 0)


def rec(
    index: int,
    bots: list[str],
    scores: list[float],
    ranks: list[int],
    faults: list[dict] | None = None,
    lower: bool = False,
) -> MatchRecord:
    return MatchRecord(
        id=f"m{index:06d}",
        index=index,
        seed=index,
        bots=bots,
        scores=scores,
        ranks=ranks,
        lower_is_better=lower,
        forfeited=[],
        faults=faults or [],
        latency_ms=[[float(index + s)] for s in range(len(bots))],
        decisions=[1] * len(bots),
        stats=[{} for _ in bots],
        details={},
        duration_s=0.0,
    )


def test_standings_rank_by_mean_rank_then_score() -> None:
    game = get_game("nimmt_plus")
    records = [
        rec(0, ["a", "b", "c"], [30, 20, 10], [1, 2, 3]),
        rec(1, ["b", "c", "a"], [50, 10, 40], [1, 3, 2]),
        rec(
            2,
            ["c", "a", "b"],
            [5, 60, 60],
            [3, 1, 1],
            faults=[{"seat": 0, "phase": "act", "kind": "timeout"}, {"seat": 0, "phase": "start", "kind": "error"}],
        ),
    ]
    rows = compute_standings(game, ["a", "b", "c", "d"], records)
    by = {r["name"]: r for r in rows}
    assert [r["name"] for r in rows] == ["a", "b", "c", "d"]  # a and b tie on mean rank and score: by name
    assert by["a"]["mean_rank"] == by["b"]["mean_rank"] == round(4 / 3, 4)
    assert by["b"]["mean_score"] == round(130 / 3, 4) and by["a"]["mean_score"] == round(130 / 3, 4)
    assert by["a"]["wins"] == 2 and by["b"]["wins"] == 2 and by["c"]["wins"] == 0
    assert by["b"]["rank"] == by["a"]["rank"] == 1  # equal mean rank and score share the rank
    assert by["c"]["rank"] == 3 and by["c"]["faults"]["timeout"] == 1 and by["c"]["notice_faults"] == 1
    assert by["c"]["faults"]["total"] == 1
    assert by["d"]["matches"] == 0 and by["d"]["rank"] == 4 and by["d"]["mean_rank"] is None
    assert all("p50_ms" not in r and "p99_ms" not in r for r in rows)  # timings vary run to run: not standings
    timings = compute_timings(["a", "b", "c", "d"], records)
    # a's latencies are 0, 3, 3 (index + seat); percentiles from a log histogram, within one 2.3 % bin
    assert timings["bots"]["a"]["p50_ms"] == pytest.approx(3.0, rel=0.024)
    assert timings["bots"]["a"]["max_ms"] == 3.0 and timings["bots"]["a"]["decisions"] == 3
    assert timings["bots"]["d"] == {
        "decisions": 0,
        "p50_ms": None,
        "p90_ms": None,
        "p99_ms": None,
        "max_ms": None,
        "voided": 0,
    }


def test_disqualified_bot_is_ranked_dq_last_with_its_note_and_restarts_add_up() -> None:
    game = get_game("nimmt_plus")
    act = {"phase": "act", "kind": "error"}
    records = [
        rec(0, ["a", "b", "c"], [30, 20, 10], [1, 2, 3], faults=[{**act, "seat": 0}, {**act, "seat": 0}]),
        rec(1, ["b", "c", "a"], [50, 10, 40], [1, 3, 2], faults=[{**act, "seat": 2}, {**act, "seat": 0}]),
        rec(2, ["c", "a", "b"], [5, 60, 1], [2, 1, 3]),
    ]
    for r, decisions in zip(records, ([4, 4, 4], [5, 5, 5], [6, 6, 6])):
        r.decisions = decisions
    records[1].restarts, records[1].voided = [0, 2, 1], 3
    records[2].disqualified, records[2].restarts = [1], [1, 0, 0]
    rows = compute_standings(game, ["a", "b", "c"], list(reversed(records)))
    assert [r["name"] for r in rows] == ["b", "c", "a"]  # a has the best mean rank but is disqualified
    assert [r["rank"] for r in rows] == [1, 2, DQ]
    by = {r["name"]: r for r in rows}
    assert by["a"]["disqualified"] and by["a"]["disqualified_note"] == (
        "disqualified in m000002: faults in 3 of 15 decisions (20 %)"
    )
    assert not by["b"]["disqualified"] and by["b"]["disqualified_note"] is None
    assert (by["a"]["restarts"], by["b"]["restarts"], by["c"]["restarts"]) == (1, 0, 3)
    timings = compute_timings(["a", "b", "c"], records)  # voided depends on the referee's load: a timing
    assert all("voided" not in r for r in rows) and timings["voided"] == 3
    assert all(timings["bots"][n]["voided"] == 3 for n in "abc")  # every bot sat in the match with 3 voided


def test_percentile_nearest_rank() -> None:
    values = sorted(float(i) for i in range(1, 101))
    assert percentile(values, 50) == 50.0 and percentile(values, 99) == 99.0 and percentile(values, 100) == 100.0
    assert percentile([], 50) is None


def test_team_format_gives_every_bot_the_same_deals() -> None:
    cfg = config(3, 4, "team", matches=5)
    fx = schedule(cfg)
    assert len(fx) == 15
    for d in range(5):
        deal = [f for f in fx if f.deal == d]
        assert sorted(f.seats for f in deal) == [(0,) * 4, (1,) * 4, (2,) * 4]
        assert len({f.seed for f in deal}) == 1
    assert len({f.seed for f in fx}) == 5


def test_duplicate_plays_every_deal_once_per_rotation_with_one_seed() -> None:
    from dataclasses import replace

    for fmt in ("round_robin", "random"):
        fx = schedule(replace(config(5, 4, fmt=fmt, rounds=2, matches=6), duplicate=True))
        deals: dict[int, list] = {}
        for f in fx:
            assert f.deal is not None
            deals.setdefault(f.deal, []).append(f)
        assert len(fx) == len(deals) * 4
        for d, group in deals.items():
            assert len({f.seed for f in group}) == 1, "every rotation of a deal has the deal's seed"
            assert group[0].seed == derive_seed(1, d)
            # every bot of the table holds every seat (hand) of the deal exactly once
            for bot in group[0].seats:
                assert sorted(f.seats.index(bot) for f in group) == [0, 1, 2, 3]
        assert len({f.seed for f in fx}) == len(deals)
    plain = schedule(config(5, 4, rounds=2))
    assert all(f.deal is None for f in plain) and len(plain) == 10
