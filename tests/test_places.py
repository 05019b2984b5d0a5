"""Calibration of the prize places (issue 33): the claims of ``referee.stats.places`` hold
at their confidence, all at once and at every look, under uniform and adaptive tables.

The simulations of ``benchmarks/places_calibration.py`` (which prints them at full size:
200 and 80 seasons), at the smallest size that still fails on a miscalibrated boundary:

- equal bots (every claim is false), looked at every 16 matches up to 1,600, 30 seasons:
  the share with any claim stays within ``1 - confidence`` = 0.2 (measured 0.067). It was
  0.57 with no Bonferroni over the pairs, 0.57 without the sandwich factor of the
  covariance, 0.73 with a fixed-time (Bonferroni) z instead of the mixture boundary, and
  the fixed-time z of 1.96 of the contrast test claims in nearly all;
- a ladder on 12 bots (a clear top 3 over a close field), 30 seasons: every claim true and
  every true rank in its set in at least ``confidence`` of them, places settled (2.9 of 3;
  0.13 when the ladder does not seat the contenders together), the best bot published
  first, the top 3 holding more than their share of seats (0.45; 0.25 even).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.places_calibration import SEATS, ladder_seasons, null_seasons, ranks_of
from referee.stats.places import Watch

pytestmark = pytest.mark.parallel


def test_equal_bots_get_no_claim_at_any_look() -> None:
    rate = null_seasons(30, 0.8)
    assert rate <= 0.2, rate


def test_a_fixed_time_boundary_at_every_look_would_claim_between_equal_bots() -> None:
    # the contrast that makes the first test meaningful: the same looks with z = 1.96
    assert null_seasons(20, 0.8, naive=True) > 0.2


def test_ladder_claims_hold_and_settle_places() -> None:
    figures = ladder_seasons(30, 0.95)
    assert figures["all_true"] >= 0.95, figures
    assert figures["covered"] >= 0.95, figures
    assert figures["settled"] > 2.0, figures
    assert figures["best_first"] >= 0.8, figures
    assert figures["top_share"] > 3 / 12, figures  # the contenders got more than their share


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
