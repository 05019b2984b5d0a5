"""Schedules (pure) and standings (pure) on synthetic data."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from referee.config.model import BotConfig, Limits, TournamentConfig
from referee.games import get_game
from referee.record import MatchRecord
from referee.schedule.formats import Fixture, derive_seed, match_count, schedule, seat_balance
from referee.stats.standings import DQ, compute_standings, compute_timings, percentile

pytestmark = pytest.mark.parallel


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
    assert timings["bots"]["a"]["p50_ms"] == 3.0  # a's latencies are 0, 3, 3 (index + seat)
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


# --- the lazy schedule equals the list the referee built before it was lazy ---


def eager_schedule(cfg: TournamentConfig) -> list[Fixture]:
    """The schedule as it was built before it was lazy (every fixture in a list): the
    reference the lazy one must equal, so existing journals still resume."""
    import itertools
    import random

    n_bots, k = len(cfg.bots), cfg.players
    tables: list[tuple[int, ...]] = []
    deals: list[int | None] = []
    if cfg.format == "round_robin":
        combos = list(itertools.combinations(range(n_bots), k))
        for r in range(cfg.rounds):
            for combo in combos:
                shift = r % k
                tables.append(combo[shift:] + combo[:shift])
    elif cfg.format == "team":
        for d in range(cfg.matches):
            for b in range(n_bots):
                tables.append((b,) * k)
                deals.append(d)
    else:
        rng = random.Random(derive_seed(cfg.seed, -1))
        for _ in range(cfg.matches):
            tables.append(tuple(rng.sample(range(n_bots), k)))
    if cfg.duplicate and cfg.format != "team":
        rotated, deals = [], []
        for d, t in enumerate(tables):
            for r in range(len(t)):
                rotated.append(t[r:] + t[:r])
                deals.append(d)
        tables = rotated
    if not deals:
        deals = [None] * len(tables)
    return [
        Fixture(i, f"m{i:06d}", derive_seed(cfg.seed, i if d is None else d), t, deal=d)
        for i, (t, d) in enumerate(zip(tables, deals))
    ]


@settings(max_examples=60, deadline=None)
@given(
    fmt=st.sampled_from(["round_robin", "random", "team"]),
    n_bots=st.integers(1, 8),
    players=st.integers(1, 5),
    rounds=st.integers(1, 4),
    matches=st.integers(1, 40),
    seed=st.integers(0, 2**64),
    duplicate=st.booleans(),
)
def test_lazy_schedule_equals_the_eager_list_for_every_format(
    fmt: str, n_bots: int, players: int, rounds: int, matches: int, seed: int, duplicate: bool
) -> None:
    assume(fmt == "team" or players <= n_bots)
    duplicate = duplicate and fmt != "team"
    # version 1 of random tables: what journals made before balanced tables still resume with
    cfg = replace(config(n_bots, players, fmt, rounds, matches, seed), duplicate=duplicate, schedule_version=1)
    lazy, eager = schedule(cfg), eager_schedule(cfg)
    assert len(lazy) == len(eager) == match_count(cfg)
    assert list(lazy) == eager
    # random access, in any order (a resumed journal's lines come out of order)
    order = list(range(len(eager)))
    random.Random(seed).shuffle(order)
    assert [lazy[i] for i in order] == [eager[i] for i in order]


def test_random_access_far_into_a_long_random_schedule_uses_checkpoints() -> None:
    cfg = replace(config(9, 4, "random", matches=30_000), schedule_version=1)
    eager = eager_schedule(cfg)
    lazy = schedule(cfg)
    for i in (29_999, 5, 17_000, 4_095, 4_096, 0, 29_998, 12):
        assert lazy[i] == eager[i]
    assert lazy[-1] == eager[-1] and lazy[10:13] == eager[10:13]


def test_secret_seeds_are_keyed_and_differ_from_plain_seeds() -> None:
    secret = 0x1234_5678_9ABC_DEF0_1122_3344_5566_7788
    cfg = replace(config(5, 4, "random", matches=20), seed=secret, seed_secret=True)
    fx = schedule(cfg)
    assert [f.seed for f in fx] == [derive_seed(secret, i, secret=True) for i in range(20)]
    assert derive_seed(secret, 3, secret=True) != derive_seed(secret, 3)
    assert [f.seats for f in fx] != [f.seats for f in schedule(replace(cfg, seed_secret=False))]
    assert all(0 <= f.seed < 2**63 for f in fx)


def test_a_huge_round_robin_is_counted_not_listed() -> None:
    cfg = config(60, 7, rounds=1)
    assert match_count(cfg) == 386_206_920
    fx = schedule(cfg)  # lazy: nothing listed
    assert len(fx) == 386_206_920
    assert fx[386_206_919].seats == tuple(range(53, 60)) and fx[0].seats == tuple(range(7))


def test_the_executor_holds_at_most_concurrency_fixtures_and_the_sink_journals_after_its_hooks(
    tmp_path: Path,
) -> None:
    """Source -> executor -> sink on a 1,000,000-fixture schedule: the executor pulls a
    fixture only when a slot frees (the match itself is replaced by a short sleep)."""
    import asyncio
    import json

    from referee.run.local import LocalExecutor
    from referee.run.runner import pending
    from referee.run.sink import Progress, Sink
    from referee.store import journal as jn

    cfg = replace(config(6, 4, "random", matches=1_000_000), concurrency=5)
    fixtures = schedule(cfg)
    state = jn.empty_state(fixtures.total)
    for i in (0, 2, 3):  # already in the journal
        state.mark(i)
    pulled, live, peak = [], [0], [0]

    def source() -> Iterator[Fixture]:
        for f in pending(fixtures, state):
            pulled.append(f.index)
            yield f
            if len(pulled) >= 40:
                return

    class Fake(LocalExecutor):
        async def _one(self, f: Fixture, disqualified: list[int]) -> MatchRecord:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
            await asyncio.sleep(0.001 * (f.index % 3))
            live[0] -= 1
            return rec(f.index, [f"b{b}" for b in f.seats], [1.0, 2.0, 3.0, 4.0], [4, 3, 2, 1])

    seen_by_hook: list[int] = []
    path = tmp_path / "matches.jsonl"

    def hook(f: Fixture, r: MatchRecord) -> None:  # e.g. the transcript, written before the journal line
        seen_by_hook.append(len(path.read_text().splitlines()) if path.exists() else 0)

    async def main() -> None:
        with jn.JournalWriter(path) as writer:
            sink = Sink(writer, state, Progress(3, fixtures.total, 0, 0.0, 3), 0.0, before_write=[hook])
            await Fake(cfg, None, [], None).play(source(), sink)  # type: ignore[arg-type]

    asyncio.run(main())
    assert peak[0] <= 5 and len(pulled) == 40
    assert pulled[:3] == [1, 4, 5], "done fixtures are skipped, the rest taken in order"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(d["index"] for d in lines) == pulled
    assert seen_by_hook == list(range(40)), "every hook runs before its match's journal line"
    assert all(state.is_done(i) for i in pulled) and not state.is_done(pulled[-1] + 1)
