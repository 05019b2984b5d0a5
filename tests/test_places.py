"""Calibration of the prize places (issue 33): the claims of ``referee.stats.places`` hold at
their confidence, all at once and at every look, under uniform and adaptive tables.

Synthetic Plackett-Luce bots (strength + Gumbel noise), in-process, seeded. Three checks:

- equal bots (every claim is false), looked at every 16 matches up to 1,600: the share of
  seasons with any claim stays within ``1 - confidence`` (the anytime-valid promise: many
  looks do not inflate it). With confidence 0.8 on 6 bots at 4-seat tables, 200 seasons:
  0.045 (the mixture boundary and Bonferroni are conservative); the same looks with a
  fixed-time z of 1.96 claimed something in 0.95 of them, which is what the test guards
  against;
- a ladder (``choose_epoch`` with ``top = 3``: the contenders meet each other far more
  often) on 12 bots, a clear top 3 over a close field, 25 epochs of 16 tables, 80 seasons:
  every claim true and every true rank in its set in at least ``confidence`` of the
  seasons (measured: 0.988 and 0.988: one season of 80 had a false claim), places do get
  settled (measured: 2.96 of 3 on average), the contenders get more than their share of
  seats (measured: the top 3 held 0.45 of them, 0.25 would be even);
- the published order under the ladder is the model's, so the truly best bot is first in
  most seasons although it met the strongest bots most (measured: 1.00).

``python tests/test_places.py`` prints the figures.
"""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from referee.run.ladder import LadderRules, Summary, choose_epoch
from referee.stats.places import Claims, Fit, PairTally, Watch, fit, new_claims, pair_alpha

pytestmark = pytest.mark.parallel

SEATS = 4


def ranks_of(theta: np.ndarray, tables: np.ndarray, rng: np.random.Generator) -> np.ndarray:
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


def test_equal_bots_get_no_claim_at_any_look() -> None:
    rate = null_seasons(120, 0.8)
    assert rate <= 0.2, rate


def test_a_fixed_time_boundary_at_every_look_would_claim_between_equal_bots() -> None:
    # the contrast that makes the first test meaningful: the same looks with z = 1.96
    assert null_seasons(40, 0.8, naive=True) > 0.2


def test_ladder_claims_hold_and_settle_places() -> None:
    figures = ladder_seasons(80, 0.95)
    assert figures["all_true"] >= 0.95, figures
    assert figures["covered"] >= 0.95, figures
    assert figures["settled"] > 2.0, figures
    assert figures["best_first"] >= 0.8, figures
    assert figures["top_share"] > 3 / 12, figures  # the contenders got more than their share


if __name__ == "__main__":
    print("equal bots, any claim:", null_seasons(200, 0.8))
    print("equal bots, fixed-time z at every look:", null_seasons(200, 0.8, naive=True))
    print("ladder:", ladder_seasons(80, 0.95))


def watch_run(theta: np.ndarray, deals: int, batch: int = 20) -> tuple[bool, list[int], int]:
    """``stop = "settled"`` on a ladder, in miniature: deals of 4 of the bots, a look every ``batch``."""
    n = theta.shape[0]
    rng = np.random.default_rng(3)
    watch = Watch(n, 3, 0.95)
    values = np.full((deals, n), np.nan)
    for start in range(0, deals, batch):
        tables = np.argsort(rng.random((batch, n)), axis=1)[:, :SEATS]
        np.put_along_axis(values[start : start + batch], tables, ranks_of(theta, tables, rng).astype(float), axis=1)
        done, order, pairs, _ = watch.look(values[: start + batch])
        assert len(pairs) == 3
        if done:
            return True, order, start + batch
    return False, order, deals


def test_a_ladder_stops_once_its_prize_places_are_settled() -> None:
    done, order, deals = watch_run(np.array([6.0, 4.0, 2.0, 0.0, -2.0, -2.0]), 4000)
    assert done and order[:3] == [0, 1, 2] and deals < 4000, (done, order, deals)
    done, _, deals = watch_run(np.zeros(6), 1000)
    assert not done and deals == 1000
