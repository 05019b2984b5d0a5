"""The ladder's matchmaking against uniform random tables, by simulation: figures, not asserts.

Synthetic bots of known strength (Thurstone: a table's ranks are the order of strength
plus standard normal noise; strengths drawn N(0, ``--spread``) afresh each season), the
same number of matches for both policies. Each season's journal lines go through
``build_columns`` and the verdicts' own bootstrap (``ratio_intervals``,
``simultaneous_rank_sets``, fed as ``analyse_columns`` feeds them; the first season is
checked against ``analyse_columns`` itself), so the rank sets are the ones the
leaderboard would publish. Printed: the mean size of the top 10 bots' rank sets per
policy and their ratio, the share of seasons in which every bot's true rank lies in its
set, match and seat balance, and the CPU cost of choosing a table.

    python -m benchmarks.ladder                 # 200 bots, 4 seats, 10,000 matches, 100 seasons
    python -m benchmarks.ladder --matches 10000 20000 --rule floor=0.5   # more settings
    python -m benchmarks.ladder --small         # a quick look (20 seasons, 100 bots)
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from referee.games import get_game
from referee.run.ladder import LadderRules, Summary, choose_epoch, epoch_size, seat_spread
from referee.stats.columns import Columns, IntArray, build_columns, credit_mask
from referee.stats.standings import standings_from_columns
from referee.stats.verdicts import (
    DEFAULT_RESAMPLES,
    MAX_UNITS,
    analyse_columns,
    bootstrap_rng,
    ratio_intervals,
    resample_weights,
    simultaneous_rank_sets,
)

GAME = "nimmt_plus"  # any competitive game: only its stat keys and flags are used
TOP = 10


@dataclass(frozen=True)
class Setting:
    """One simulated setting: the field, the budget and the model."""

    bots: int
    players: int
    matches: int
    spread: float
    resamples: int
    rules: tuple[tuple[str, Any], ...] = ()  # LadderRules fields to change


def published_rank_sets(cols: Columns, seed: int, resamples: int) -> IntArray:
    """Every bot's "rank set (all at once)" (bots x 2), computed as ``analyse_columns`` does."""
    n = len(cols.names)
    credit = credit_mask(cols, False)
    n_deals = cols.n_deals
    n_units = min(n_deals, MAX_UNITS)
    unit = cols.deal % MAX_UNITS if n_deals > MAX_UNITS else cols.deal
    unit_seat = np.broadcast_to(unit[:, None], cols.bot.shape)
    w = resample_weights(n_units, resamples, bootstrap_rng(seed))

    def per_unit(values: Any) -> Any:
        key = unit_seat[credit] * n + cols.bot[credit]
        weights = np.broadcast_to(values, cols.bot.shape)[credit].astype(np.float64)
        return np.bincount(key, weights=weights, minlength=n_units * n).reshape(n_units, n)

    count, rank = per_unit(1.0), per_unit(cols.rank)
    iv = ratio_intervals(w, rank, count)
    with np.errstate(divide="ignore", invalid="ignore"):
        infl = (rank - iv.est * count) / count.sum(0)
    sets, _ = simultaneous_rank_sets(iv.est, infl, iv.boot, n_units)
    return np.array(sets, np.int64)


def journal_lines(tables: IntArray, ranks: IntArray, names: Sequence[str]) -> list[dict[str, Any]]:
    """The journal lines of simulated matches (only what the columns read)."""
    k = tables.shape[1]
    empty: list[dict[str, float]] = [{} for _ in range(k)]
    return [
        {
            "id": f"m{i:06d}",
            "index": i,
            "bots": [names[b] for b in row],
            "scores": [float(-r) for r in rk],
            "ranks": [int(r) for r in rk],
            "lower_is_better": False,
            "forfeited": [],
            "faults": [],
            "decisions": [1] * k,
            "stats": empty,
            "duration_s": 0.0,
        }
        for i, (row, rk) in enumerate(zip(tables.tolist(), ranks.tolist()))
    ]


def play(tables: IntArray, strength: Any, rng: np.random.Generator) -> IntArray:
    """Ranks (1 = best) of every seat: strength plus standard normal noise."""
    perf = strength[tables] + rng.normal(size=tables.shape)
    return np.asarray(1 + np.argsort(np.argsort(-perf, axis=1), axis=1), np.int64)


def uniform_tables(s: Setting, seed: int) -> tuple[IntArray, float]:
    """The referee's ``random`` format: every table ``sample(range(bots), players)``; CPU s per table."""
    rng = random.Random(seed)
    start = time.process_time()
    tables = [rng.sample(range(s.bots), s.players) for _ in range(s.matches)]
    return np.array(tables, np.int64), (time.process_time() - start) / s.matches


def ladder_tables(
    s: Setting, seed: int, names: list[str], strength: Any, rng: np.random.Generator
) -> tuple[IntArray, IntArray, float, Summary]:
    """The ladder's tables played epoch by epoch (results counted ``lag`` epochs late); CPU s per table."""
    rules = LadderRules(players=s.players, epoch_tables=epoch_size(s.bots, s.players), **dict(s.rules))
    summary = Summary(s.players)
    pending: list[tuple[int, IntArray, IntArray]] = []
    all_tables, all_ranks = [], []
    spent, done, epoch = 0.0, 0, 0
    while done < s.matches:
        while pending and pending[0][0] < epoch - rules.lag:
            _, t, r = pending.pop(0)
            summary.record(names, t, r)
        start = time.process_time()
        tables = choose_epoch(rules, seed, names, summary, epoch)
        summary.assign(names, tables)
        spent += time.process_time() - start
        tables = tables[: s.matches - done]
        ranks = play(tables, strength, rng)
        pending.append((epoch, tables, ranks))
        all_tables.append(tables)
        all_ranks.append(ranks)
        done += tables.shape[0]
        epoch += 1
    return np.concatenate(all_tables), np.concatenate(all_ranks), spent / done, summary


def season(args: tuple[Setting, int, bool]) -> dict[str, Any]:
    """One season with each policy: top-10 rank set sizes, coverage, balance and costs."""
    s, index, check = args
    with threadpool_limits(limits=1):
        rng = np.random.default_rng([index, 27])
        strength = rng.normal(0.0, s.spread, s.bots)
        true_rank = 1 + np.argsort(np.argsort(-strength))
        top = np.argsort(-strength)[:TOP]
        names = [f"bot{i:03d}" for i in range(s.bots)]
        game = get_game(GAME)
        keys = [st.key for st in game.info.stats]
        out: dict[str, Any] = {}
        u_tables, u_cost = uniform_tables(s, index)
        l_tables, l_ranks, l_cost, summary = ladder_tables(s, index, names, strength, rng)
        runs = {"random": (u_tables, play(u_tables, strength, rng)), "ladder": (l_tables, l_ranks)}
        for policy, (tables, ranks) in runs.items():
            cols = build_columns(journal_lines(tables, ranks, names), names, keys)
            sets = published_rank_sets(cols, index, s.resamples)
            if check:
                order = [r["name"] for r in standings_from_columns(game, cols)]
                full = analyse_columns(game, cols, order, index, s.resamples).bots
                assert all(full[n]["rank_set"] == list(sets[i]) for i, n in enumerate(names)), policy
            count = np.bincount(tables.ravel(), minlength=s.bots)
            out[policy] = {
                "top_size": float((sets[top, 1] - sets[top, 0] + 1).mean()),
                "covered": bool(((sets[:, 0] <= true_rank) & (true_rank <= sets[:, 1])).all()),
                "matches": (int(count.min()), int(count.max())),
            }
        out["random"]["cost"], out["ladder"]["cost"] = u_cost, l_cost
        out["ladder"]["seat_spread"] = int(seat_spread(summary, names).max())
        return out


def run(s: Setting, seasons: int, workers: int, check: bool = True) -> None:
    """Simulate ``seasons`` seasons of setting ``s`` and print the figures."""
    print(
        f"\n{s.bots} bots, {s.players} seats, {s.matches:,} matches per season, strength N(0, {s.spread}), "
        f"{seasons} seasons, {s.resamples} resamples"
    )
    jobs = [(s, i, i == 0 and check) for i in range(seasons)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(season, jobs))
    print("  rank sets checked against analyse_columns on season 0: identical")
    sizes = {}
    for policy in ("random", "ladder"):
        rows = [r[policy] for r in results]
        sizes[policy] = float(np.mean([r["top_size"] for r in rows]))
        cover = float(np.mean([r["covered"] for r in rows]))
        lo = min(r["matches"][0] for r in rows)
        hi = max(r["matches"][1] for r in rows)
        cost = float(np.mean([r["cost"] for r in rows])) * 1e6
        print(
            f"  {policy:7s} top-{TOP} rank set size {sizes[policy]:6.2f}   every true rank in its set: "
            f"{cover:6.1%}   matches per bot {lo}-{hi}   CPU per table {cost:6.1f} us"
        )
    spread = max(r["ladder"]["seat_spread"] for r in results)
    print(
        f"  ladder/random size ratio {sizes['ladder'] / sizes['random']:.3f} "
        f"({1 - sizes['ladder'] / sizes['random']:.1%} narrower); widest seat spread of a bot: {spread}"
    )


def main(argv: list[str] | None = None) -> None:
    """Parse the options and run every setting."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ladder", description=__doc__.splitlines()[0])
    parser.add_argument("--seasons", type=int, default=100)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--matches", type=int, nargs="+", default=[10_000], help="one setting per budget")
    parser.add_argument("--spread", type=float, default=1.0)
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", help="a LadderRules field")
    parser.add_argument("--small", action="store_true", help="20 seasons of 100 bots, 5,000 matches")
    a = parser.parse_args(argv)
    if a.small:
        a.seasons, a.bots, a.matches = 20, 100, [5_000]
    for m in a.matches:
        rules = tuple((k, int(v) if k in ("top", "lag") else float(v)) for k, v in (r.split("=", 1) for r in a.rule))
        run(Setting(a.bots, a.players, m, a.spread, a.resamples, rules), a.seasons, a.workers)


if __name__ == "__main__":
    main()
