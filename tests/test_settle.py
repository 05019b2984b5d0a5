"""The settled stopping rule (referee/stats/sequential.py) in simulation: in-process,
seeded, no HTTP. 5 bots at 4-seat tables in round-robin order, the ranking looked at
after every batch of 5 deals up to a budget of 400 deals, 500 tournaments per setting
(200 where only the power is measured).

The simulation runs all tournaments at once on arrays (``stopping_times``); a test
checks that it stops exactly where repeated calls of ``settled`` would."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from referee.stats.sequential import deals_needed, log_wealth, settled

pytestmark = pytest.mark.parallel

N, SEATS = 5, 4
ABSENT = [next(b for b in range(N) if b not in t) for t in itertools.combinations(range(N), SEATS)]
BATCH, BUDGET, RUNS, BOUND = 5, 400, 500, float(SEATS - 1)
THRESHOLD = np.log(N * (N - 1) / 0.05)  # 1 / alpha', alpha' = 0.05 / ordered pairs


def deal_ranks(strengths: list[float], runs: int, deals: int, seed: int, heavy: bool = False) -> np.ndarray:
    """runs x deals x bots: each deal's rank of every bot at its table (NaN for the bot left
    out); a bot's performance is its strength plus Gaussian or Student-t(3) noise."""
    rng = np.random.default_rng(seed)
    shape = (runs, deals, N)
    perf = np.asarray(strengths) + (rng.standard_t(3, size=shape) if heavy else rng.standard_normal(shape))
    absent = np.asarray([ABSENT[d % len(ABSENT)] for d in range(deals)])
    perf[:, np.arange(deals), absent] = -np.inf
    ranks = np.argsort(np.argsort(-perf, axis=-1), axis=-1).astype(float) + 1.0
    ranks[:, np.arange(deals), absent] = np.nan
    return ranks


def stopping_times(values: np.ndarray, top: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each tournament (axis 0): the deals played when it stopped (the budget if never),
    its order then (best first), and the peak log wealth of every ordered pair then."""
    runs, deals, n = values.shape
    x = (values.transpose(0, 2, 1)[:, None, :, :] - values.transpose(0, 2, 1)[:, :, None, :]) / BOUND
    peak = np.maximum.accumulate(log_wealth(x), axis=-1)  # runs x n x n x deals
    counts = np.cumsum(~np.isnan(values), axis=1)
    means = np.nancumsum(values, axis=1) / np.maximum(counts, 1)
    means = np.where(counts > 0, means, np.inf)
    k = n - 1 if top <= 0 else top
    stop = np.full(runs, deals)
    for t in range(BATCH, deals + 1, BATCH):
        order = np.argsort(means[:, t - 1], axis=-1, kind="stable")
        upper, lower = order[:, :k], order[:, 1 : k + 1]
        ok = peak[np.arange(runs)[:, None], upper, lower, t - 1] >= THRESHOLD
        stop = np.where((stop == deals) & ok.all(axis=1), t, stop)
    rows = np.arange(runs)
    order = np.argsort(means[rows, stop - 1], axis=-1, kind="stable")
    return stop, order, peak[rows, :, :, stop - 1]


def test_the_array_simulation_stops_where_settled_says() -> None:
    values = deal_ranks([0.0, 0.5, 1.0, 1.5, 2.0], 12, BUDGET, seed=1)
    stops, orders, _ = stopping_times(values)
    for v, stop, order in zip(values, stops, orders):
        looks = [t for t in range(BATCH, BUDGET + 1, BATCH) if settled(v[:t], BOUND).settled]
        assert stop == (looks[0] if looks else BUDGET)
        assert settled(v[:stop], BOUND).order == list(order)


@pytest.mark.parametrize("heavy", [False, True], ids=["gaussian", "heavy-tailed"])
def test_clearly_different_bots_settle_well_before_the_budget(heavy: bool) -> None:
    # strengths in the noise's own unit; ranks best first are bots 4, 3, 2, 1, 0 (higher is stronger)
    # 200 tournaments tell a median of 75-110 deals from the 133 allowed (a betting test with 0.6 of
    # the log wealth: 120-155, failing on heavy tails at 200 as at 500)
    stops, orders, _ = stopping_times(deal_ranks([0.0, 1.5, 3.0, 4.5, 6.0], 200, BUDGET, 11 + heavy, heavy))
    assert np.median(stops) <= BUDGET / 3, np.percentile(stops, [10, 50, 90])
    assert np.mean(stops < BUDGET) >= 0.99
    assert np.mean((orders == [4, 3, 2, 1, 0]).all(axis=1)) >= 0.95


@pytest.mark.parametrize("heavy", [False, True], ids=["gaussian", "heavy-tailed"])
def test_two_equal_bots_are_ordered_in_at_most_five_percent(heavy: bool) -> None:
    stops, _, peak = stopping_times(deal_ranks([1.0, 1.0, 2.5, 3.5, 4.5], RUNS, BUDGET, 21 + heavy, heavy))
    claimed = np.maximum(peak[:, 0, 1], peak[:, 1, 0]) >= THRESHOLD  # bots 0 and 1 are equal
    assert claimed.mean() <= 0.05, claimed.mean()
    assert np.mean(stops == BUDGET) >= 0.95  # so the whole ranking never settles: the budget is spent


def test_top_k_settles_sooner_than_the_whole_ranking() -> None:
    values = deal_ranks([0.0, 0.05, 0.1, 2.0, 4.0], 50, BUDGET, seed=8)
    top2, _, _ = stopping_times(values, top=2)
    whole, _, _ = stopping_times(values)
    assert np.median(top2) < np.median(whole) == BUDGET


def test_deals_needed_grows_as_bots_get_closer() -> None:
    far = deals_needed(deal_ranks([0.0, 1.0, 2.0, 3.0, 4.0], 1, 60, seed=3)[0], BOUND)
    near = deals_needed(deal_ranks([0.0, 0.3, 0.6, 0.9, 1.2], 1, 60, seed=3)[0], BOUND)
    assert far is not None and near is not None and far < near


def test_no_deals_or_an_absent_bot_are_not_settled() -> None:
    assert not settled(np.empty((0, 3)), 2.0).settled
    verdict = settled(np.asarray([[1.0, 2.0, np.nan]] * 50), 2.0)
    assert not verdict.settled and verdict.order == [0, 1, 2]
