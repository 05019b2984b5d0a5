"""Calibration of the prize places (issue 33) at full size: the claims of
``referee.stats.places`` hold at their confidence, all at once and at every look, under
uniform and adaptive tables. Synthetic Plackett-Luce bots (strength + Gumbel noise),
in-process, seeded.

- equal bots (every claim is false), looked at every 16 matches up to 1,600: the share of
  seasons with any claim stays within ``1 - confidence`` (the anytime-valid promise: many
  looks do not inflate it). With confidence 0.8 on 6 bots at 4-seat tables, 200 seasons:
  0.045 (the mixture boundary and Bonferroni are conservative); the same looks with a
  fixed-time z of 1.96 claimed something in 0.95 of them;
- a ladder (``choose_epoch`` with ``top = 3``: the contenders meet each other far more
  often) on 12 bots, a clear top 3 over a close field, 25 epochs of 16 tables, 80 seasons:
  every claim true and every true rank in its set in 0.988 of the seasons (one season of
  80 had a false claim), 2.96 of 3 places settled on average, the top 3 held 0.45 of the
  seats (0.25 would be even), and the truly best bot was published first in all of them
  although it met the strongest bots most.

    python -m benchmarks.places_calibration [seasons]

prints the figures; ``tests/test_places.py`` runs the same simulations at a smaller size.
"""

from __future__ import annotations

import argparse

import numpy as np
from threadpoolctl import threadpool_limits

from referee.run.ladder import LadderRules, Summary, choose_epoch
from referee.stats.places import Claims, Fit, PairTally, fit, new_claims, pair_alpha

SEATS = 4


def ranks_of(theta: np.ndarray, tables: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The finishing ranks (1 best) of ``tables`` (bot numbers) under Plackett-Luce."""
    perf = theta[tables] + rng.gumbel(size=tables.shape)
    return np.asarray(1 + np.argsort(np.argsort(-perf, axis=1), axis=1), np.int64)


def null_seasons(seasons: int, confidence: float, naive: bool = False) -> float:
    """Share of seasons of 6 equal bots in which some claim was made at some look."""
    n, looks, step = 6, 100, 16
    rng = np.random.default_rng(7)
    theta = np.zeros(n)
    alpha = pair_alpha(confidence, n)
    bad = 0
    with threadpool_limits(limits=1):
        for _ in range(seasons):
            tally, claims = PairTally(n), Claims.empty(n)
            f: Fit | None = None
            for _ in range(looks):
                tables = np.argsort(rng.random((step, n)), axis=1)[:, :SEATS]
                tally.add(tables, ranks_of(theta, tables, rng))
                f = fit(tally, None if f is None else f.theta)
                if naive:  # a fixed-time two-sided z of 1.96 at every look, for contrast
                    se = f.pair_se()
                    d = f.theta[:, None] - f.theta[None, :]
                    claims.add((d > 1.96 * se) & ~np.eye(n, dtype=bool))
                else:
                    claims.add(new_claims(f, alpha))
            bad += bool(claims.surely.any())
    return bad / seasons


def ladder_seasons(seasons: int, confidence: float) -> dict[str, float]:
    """12 bots of spread strengths on the ladder: claims true, ranks covered, places settled."""
    n, epochs = 12, 25
    theta = np.concatenate([[4.0, 3.0, 2.0], np.linspace(1.0, 0.0, n - 3)])  # a clear top 3, a close field
    lineup = [f"b{i:02d}" for i in range(n)]
    rules = LadderRules(players=SEATS, epoch_tables=16, top=3)
    rng = np.random.default_rng(11)
    alpha = pair_alpha(confidence, n)
    true_rank = np.arange(1, n + 1)
    out = {"all_true": 0.0, "covered": 0.0, "settled": 0.0, "best_first": 0.0, "top_share": 0.0}
    with threadpool_limits(limits=1):
        for s in range(seasons):
            summary = Summary(SEATS)
            tally, claims = PairTally(n), Claims.empty(n)
            f: Fit | None = None
            pending: list[tuple[np.ndarray, np.ndarray]] = []
            for epoch in range(epochs):
                while len(pending) > rules.lag:
                    summary.record(lineup, *pending.pop(0))
                tables = choose_epoch(rules, s, lineup, summary, epoch)
                summary.assign(lineup, tables)
                ranks = ranks_of(theta, tables, rng)
                pending.append((tables, ranks))
                tally.add(tables, ranks)
                f = fit(tally, None if f is None else f.theta)
                claims.add(new_claims(f, alpha))
                claims.settle(np.arange(n), 3, (epoch + 1) * rules.epoch_tables)
            assert f is not None
            lo, hi = claims.rank_sets(np.arange(n))
            out["all_true"] += not (claims.surely & (theta[:, None] < theta[None, :])).any()
            out["covered"] += bool(((lo <= true_rank) & (true_rank <= hi)).all())
            out["settled"] += len(claims.since)
            out["best_first"] += int(np.argmax(f.theta)) == 0
            a = summary.view(lineup)["assigned"]
            out["top_share"] += float(a[:3].sum() / a.sum())
    return {k: v / seasons for k, v in out.items()}


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.places_calibration", description=main.__doc__)
    parser.add_argument(
        "seasons", type=int, nargs="?", default=200, help="seasons of equal bots (the ladder: 2/5 of it)"
    )
    seasons = parser.parse_args().seasons
    print("equal bots, any claim:", null_seasons(seasons, 0.8))
    print("equal bots, fixed-time z at every look:", null_seasons(seasons, 0.8, naive=True))
    print("ladder:", ladder_seasons(max(1, seasons * 2 // 5), 0.95))


if __name__ == "__main__":
    main()
