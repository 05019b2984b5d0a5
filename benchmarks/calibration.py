"""Calibration of the verdicts (issue 18) at full size: synthetic tournaments whose truth is
known, through the array functions the leaderboard uses (``ratio_intervals``,
``ratio_difference_intervals``, ``simultaneous_rank_sets``, ``resample_weights``).

5 bots of strengths 3, 1.5, 1.5, 0, -2 at 4-seat tables; scores = strength + the luck of
the hand + play noise, Gaussian, heavy-tailed (Student t, 2.5 df) or skewed
(exponential); with duplicate deals (every deal played in the 4 seat rotations of its
table, so the hand's luck is shared) or without; at 20 and 200 matches. The truth (the
expected mean score and mean rank of each bot under the schedule) comes from one
400,000-match tournament. In-process, numpy, seeded: the same figures every run.

    python -m benchmarks.calibration [tournaments] [resamples]

prints the grid. With the defaults (300 tournaments, 400 resamples): coverage of the mean
score 0.933-0.969, mean rank 0.940-0.963, neighbour differences 0.947-0.966; simultaneous
rank sets hold for all bots at once in 0.983-1.000 of tournaments; two equal bots separated
in 0.017-0.060. The mean width of the mean-rank differences, without / with duplicate
deals: 20 matches 1.89 / 1.55 (Gaussian), 1.89 / 1.65 (heavy), 1.88 / 1.66 (skewed); 200
matches 0.56 / 0.33, 0.56 / 0.36, 0.55 / 0.36. Below 30 deals (20 matches; 5 duplicate
deals) the intervals are the few-deals kind (Student-t on the jackknife error, widened to
the percentile interval): the bootstrap-t they replace made 5 % of the 5-deal difference
intervals wider than 6 ranks.

Bounded scores (issue 26): the "floored" model floors the Gaussian scores at 0 (a pile at
the bound, as The Game's cards left); the leaderboard cuts a mean-score interval at the
game's score range. At 20 matches 14 % (no duplicates) and 63 % (duplicates) of the uncut
intervals reached below 0; coverage 0.938 / 0.953, the same cut and uncut (a cut cannot
drop a possible mean); at 200 matches none reached past, 0.962 / 0.958.

``tests/test_calibration.py`` runs a few of these settings at a smaller size.
"""

from __future__ import annotations

import argparse
import functools
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from referee.stats.verdicts import (
    clip_intervals,
    ratio_difference_intervals,
    ratio_intervals,
    resample_weights,
    simultaneous_rank_sets,
)

SKILL = np.array([3.0, 1.5, 1.5, 0.0, -2.0])  # bots 1 and 2 are equal
SEATS = 4
TOURNAMENTS = 300
RESAMPLES = 400


def noise(rng: np.random.Generator, kind: str, size: tuple[int, ...]) -> np.ndarray:
    """Zero-mean noise of the given shape: Gaussian, heavy-tailed or skewed."""
    if kind == "gauss":
        return rng.normal(0.0, 10.0, size)
    if kind == "heavy":
        return rng.standard_t(2.5, size) * 6.0
    if kind == "floored":  # Gaussian, the scores then floored at 0 (cards left, heads): a pile at the bound
        return rng.normal(0.0, 10.0, size)
    return rng.exponential(10.0, size) - 10.0


def tournament(rng: np.random.Generator, matches: int, dup: bool, kind: str) -> tuple[np.ndarray, ...]:
    """deal (M), bot (M x seats), score, rank of a synthetic tournament."""
    n = SKILL.shape[0]
    if dup:
        deals = matches // SEATS
        who = np.argsort(rng.random((deals, n)), axis=1)[:, :SEATS]
        rot = (np.arange(SEATS)[None, :] - np.arange(SEATS)[:, None]) % SEATS  # match r, seat s -> hand slot
        bot = who[:, rot].reshape(deals * SEATS, SEATS)
        luck = noise(rng, kind, (deals, SEATS))[:, None, :].repeat(SEATS, 1).reshape(deals * SEATS, SEATS)
        deal = np.repeat(np.arange(deals), SEATS)
    else:
        bot = np.argsort(rng.random((matches, n)), axis=1)[:, :SEATS]
        luck = noise(rng, kind, (matches, SEATS))
        deal = np.arange(matches)
    score = SKILL[bot] + luck + 0.5 * noise(rng, kind, bot.shape)
    if kind == "floored":
        score = np.maximum(score, 0.0)
    rank = 1 + (score[:, None, :] > score[:, :, None]).sum(2)
    return deal, bot, score, rank


def unit_matrices(deal: np.ndarray, bot: np.ndarray, score: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per deal and bot: count, score sum, rank sum (as the leaderboard builds them)."""
    n, units = SKILL.shape[0], int(deal.max()) + 1
    key = (np.broadcast_to(deal[:, None], bot.shape) * n + bot).ravel()
    shape = (units, n)
    count = np.bincount(key, minlength=units * n).reshape(shape).astype(float)
    return (
        count,
        np.bincount(key, weights=score.ravel(), minlength=units * n).reshape(shape),
        np.bincount(key, weights=rank.ravel(), minlength=units * n).reshape(shape),
    )


@functools.cache
def truth(kind: str, dup: bool) -> tuple[np.ndarray, np.ndarray]:
    """The expected mean score and mean rank of each bot, from one 400,000-match tournament."""
    count, score, rank = unit_matrices(*tournament(np.random.default_rng(99), 400_000, dup, kind))
    return score.sum(0) / count.sum(0), rank.sum(0) / count.sum(0)


@dataclass
class Figures:
    """Coverage of the 95 % intervals (share of intervals holding the truth) and error rates."""

    score: float
    rank: float
    difference: float
    joint_rank_sets: float
    equal_separated: float
    tournaments: int
    difference_width: float  # mean width of the mean-rank difference intervals
    score_unbounded: float  # coverage of the mean score before its interval is cut at the score's bounds
    past_bound: float  # share of mean-score intervals that reached below the score's lower bound


def calibrate(
    kind: str, dup: bool, matches: int, tournaments: int = TOURNAMENTS, resamples: int = RESAMPLES
) -> Figures:
    """Run ``tournaments`` synthetic tournaments and measure the verdicts against the truth."""
    true_score, true_rank = truth(kind, dup)
    true_position = 1 + (true_rank[None, :] < true_rank[:, None]).sum(1)
    a, b = np.arange(4), np.arange(1, 5)
    true_diff = true_rank[a] - true_rank[b]
    rng = np.random.default_rng(1)
    cov_s = cov_r = cov_d = joint = separated = width = raw_s = outside = 0.0
    low = 0.0 if kind == "floored" else -np.inf
    done = 0
    with threadpool_limits(limits=1):
        while done < tournaments:
            count, score, rank = unit_matrices(*tournament(rng, matches, dup, kind))
            if (count.sum(0) == 0).any():
                continue  # a bot that never played has no interval
            done += 1
            w = resample_weights(count.shape[0], resamples, rng)
            s_iv, r_iv = ratio_intervals(w, score, count), ratio_intervals(w, rank, count)
            raw_s += float(((s_iv.lo <= true_score) & (true_score <= s_iv.hi)).mean())
            outside += float((s_iv.lo < low).mean())
            clip_intervals(s_iv, low, np.inf)  # as the leaderboard does with a game's bounds
            clip_intervals(r_iv, 1.0, float(SEATS))
            cov_s += float(((s_iv.lo <= true_score) & (true_score <= s_iv.hi)).mean())
            cov_r += float(((r_iv.lo <= true_rank) & (true_rank <= r_iv.hi)).mean())
            d_iv = ratio_difference_intervals(w, rank, count, a, b)
            cov_d += float(((d_iv.lo <= true_diff) & (true_diff <= d_iv.hi)).mean())
            width += float((d_iv.hi - d_iv.lo).mean())
            separated += not (d_iv.lo[1] <= 0 <= d_iv.hi[1])  # bots 1 and 2 are equal
            infl = (rank - r_iv.est * count) / count.sum(0)
            sets, _ = simultaneous_rank_sets(r_iv.est, infl, r_iv.boot, count.shape[0])
            joint += all(lo <= t <= hi for (lo, hi), t in zip(sets, true_position))
    return Figures(
        cov_s / done,
        cov_r / done,
        cov_d / done,
        joint / done,
        separated / done,
        done,
        width / done,
        raw_s / done,
        outside / done,
    )


SETTINGS = [(kind, dup, m) for kind in ("gauss", "heavy", "skew") for dup in (False, True) for m in (20, 200)]
BOUNDED = [("floored", dup, m) for dup in (False, True) for m in (20, 200)]


def main() -> None:
    """Print the figures of every setting."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.calibration", description=main.__doc__)
    parser.add_argument("tournaments", type=int, nargs="?", default=TOURNAMENTS, help="per setting")
    parser.add_argument("resamples", type=int, nargs="?", default=RESAMPLES, help="bootstrap resamples")
    args = parser.parse_args()
    reps, boots = args.tournaments, args.resamples
    print(
        "model  duplicate matches  score  rank   diff   joint-sets  equal-separated  tournaments  diff-width"
        "  score-uncut  past-bound"
    )
    for kind, dup, m in SETTINGS + BOUNDED:
        f = calibrate(kind, dup, m, reps, boots)
        print(
            f"{kind:6} {dup!s:9} {m:7}  {f.score:.3f}  {f.rank:.3f}  {f.difference:.3f}  {f.joint_rank_sets:.3f}"
            f"       {f.equal_separated:.3f}            {f.tournaments}          {f.difference_width:.3f}"
            f"       {f.score_unbounded:.3f}        {f.past_bound:.3f}"
        )


if __name__ == "__main__":
    main()
