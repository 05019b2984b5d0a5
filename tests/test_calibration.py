"""Calibration of the verdicts (issue 18): synthetic tournaments whose truth is known,
through the array functions the leaderboard uses (``ratio_intervals``,
``ratio_difference_intervals``, ``simultaneous_rank_sets``, ``resample_weights``).

The model and the full grid (3 noises x duplicate deals or not x 20 or 200 matches, 300
tournaments each, and the bounded scores) are ``benchmarks/calibration.py``, which prints
the figures. Here: the settings that fail first when a method is miscalibrated, at the
smallest size that still fails (each mutation measured on the grid, then here):

- 20 matches with duplicate deals (5 deals: the few-deals intervals), 300 tournaments,
  Gaussian and heavy-tailed: the rank sets without their Bonferroni Student-t floor held
  jointly in 0.87-0.90 (floor 0.94); normal instead of Student-t critical values covered
  0.82-0.87 (floor 0.92); the delta-method error without the jackknife separated the two
  equal bots in 0.063-0.073 (cap 0.06; 0.033-0.040 with it);
- 200 matches with duplicate deals, heavy tails, 150 tournaments: the percentile
  bootstrap covered the mean score in 0.912, the bootstrap-t without its Student-t
  widening 0.909 (floor 0.93; 0.945 as shipped);
- bounded scores (issue 26), floored at 0, 150 tournaments: cut at the bound the intervals
  cover exactly as often as uncut.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.calibration import RESAMPLES, calibrate, tournament, unit_matrices
from referee.stats.verdicts import ratio_difference_intervals, resample_weights

pytestmark = pytest.mark.parallel

# (noise, duplicate deals, matches, tournaments)
SETTINGS = [("gauss", True, 20, 300), ("heavy", True, 20, 300), ("heavy", True, 200, 150)]
BOUNDED = [("floored", dup, 20) for dup in (False, True)]


@pytest.mark.parametrize(("kind", "dup", "matches", "tournaments"), SETTINGS)
def test_intervals_rank_sets_and_differences_hold_their_level(
    kind: str, dup: bool, matches: int, tournaments: int
) -> None:
    f = calibrate(kind, dup, matches, tournaments)
    # heavy tails (t, 2.5 df) with duplicate deals at 50 deals measured 0.933 for the mean score: the one
    # setting held to 0.93 (the issue measured 0.85 there for the percentile bootstrap it replaces)
    floor = 0.92 if matches == 20 else 0.93 if (kind, dup) == ("heavy", True) else 0.94
    assert f.score >= floor and f.rank >= floor and f.difference >= floor, f
    assert f.joint_rank_sets >= 0.94, f
    assert f.equal_separated <= 0.06, f  # 5 % expected (measured 1.7-6.0 % over the 12 settings of the grid)


@pytest.mark.parametrize(("kind", "dup", "matches"), BOUNDED)
def test_intervals_of_a_bounded_score_stay_in_range_and_hold_their_level(kind: str, dup: bool, matches: int) -> None:
    """Scores floored at 0 (half of them 0): cut at the bound, the mean-score intervals never
    leave the range and cover exactly as often as uncut (a cut cannot drop a possible mean)."""
    f = calibrate(kind, dup, matches, tournaments=150)
    assert f.past_bound > 0.05, f  # the model does reach past the bound uncut
    assert f.score == f.score_unbounded and f.score >= 0.92 and f.rank >= 0.92, f


def test_duplicate_deals_tighten_the_difference_not_the_marginal_interval() -> None:
    widths = {}
    for dup in (False, True):
        count, score, _rank = unit_matrices(*tournament(np.random.default_rng(5), 200, dup, "gauss"))
        w = resample_weights(count.shape[0], RESAMPLES, np.random.default_rng(6))
        d = ratio_difference_intervals(w, score, count, np.array([0]), np.array([3]))
        widths[dup] = float(d.hi[0] - d.lo[0])
    assert widths[True] < 0.8 * widths[False], widths
