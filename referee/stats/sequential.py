"""When is a ranking settled? An anytime-valid sequential test over deals (pure, numpy).

With ``stop = "settled"``, after each batch of deals ``settled`` asks whether every
adjacent pair of the current top K is separated at the configured confidence. Each
ordered pair is a test martingale (testing by betting, Waudby-Smith and Ramdas 2024):
per deal both bots played, ``x = (v_b - v_a) / bound`` in [-1, 1]; the wealth
``prod (1 + lambda_i x_i)``, with a bet from earlier deals only (aGRAPA, capped at
``MAX_BET``), reaching ``1 / alpha'`` claims a above b, and by Ville's inequality looking
after every batch does not inflate the error; ``alpha'`` is Bonferroni over ordered
pairs. docs/verdicts.md says what it promises and what not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
MAX_BET = 0.8  # 1 + bet * x stays >= 0.2: one bad deal never wipes the wealth out
PRIOR_DEALS = 4.0  # the running estimates start from this many pseudo-deals of x = 0, variance 1/4


@dataclass(frozen=True)
class Settlement:
    """The answer after a batch: settled or not, the order, and each adjacent pair's state."""

    settled: bool
    order: list[int]  # bot indices, best first (by mean value, then index)
    pairs: list[tuple[int, int, bool]]  # (upper, lower, separated) for the adjacent pairs checked
    threshold: float  # the wealth a claim needs: 1 / alpha'

    def reason(self, names: list[str]) -> str:
        """One line saying why the tournament stops, or what is still open."""
        open_pairs = [f"{names[a]} / {names[b]}" for a, b, ok in self.pairs if not ok]
        if self.settled:
            return "settled: " + " > ".join(names[b] for b in self.order[: len(self.pairs) + 1])
        return "not settled: " + ", ".join(open_pairs)


def pair_matrix(values: FloatArray, bound: float) -> FloatArray:
    """``x`` for every ordered pair: shape (bots, bots, deals), ``x[a, b]`` positive when a
    did better than b in a deal (``values``: deals x bots, lower is better, NaN absent)."""
    v = np.asarray(values, dtype=np.float64).T  # bots x deals
    return np.asarray((v[None, :, :] - v[:, None, :]) / bound, dtype=np.float64)


def settled(values: FloatArray, bound: float, *, confidence: float = 0.95, top: int = 0) -> Settlement:
    """Whether the order of the top ``top`` bots (0: all) is settled by the deals so far.

    ``values``: one row per deal in play order, one column per bot, the bot's mean rank in
    that deal (or its score, signed so that lower is better), NaN where it did not play;
    ``bound``: the largest possible difference between two bots in one deal.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[1]
    counts = np.sum(~np.isnan(values), axis=0)
    sums = np.nansum(values, axis=0)
    means = np.where(counts > 0, sums / np.maximum(counts, 1), np.inf)
    order = sorted(range(n), key=lambda b: (means[b], b))
    alpha = (1.0 - confidence) / max(1, n * (n - 1))
    threshold = 1.0 / alpha
    if len(values) == 0 or n < 2:
        return Settlement(False, order, [], threshold)
    x = pair_matrix(values, bound)
    peak = np.max(log_wealth(x), axis=-1) if x.shape[-1] else np.zeros((n, n))
    k = n - 1 if top <= 0 else min(top, n - 1)
    pairs = [(order[i], order[i + 1], bool(peak[order[i], order[i + 1]] >= math.log(threshold))) for i in range(k)]
    return Settlement(all(ok for _, _, ok in pairs), order, pairs, threshold)


def log_wealth(x: FloatArray) -> FloatArray:
    """The log wealth of the betting test of each row of ``x`` after every deal (rows:
    comparisons, last axis: deals in play order; NaN where a deal did not hold both
    bots, which skips it), so that a claim once made stands. Vectorised over rows."""
    present = ~np.isnan(x)
    xs = np.where(present, x, 0.0)
    count = np.cumsum(present, axis=-1)
    total = np.cumsum(xs, axis=-1)
    squares = np.cumsum(xs * xs, axis=-1)
    zero = np.zeros_like(count[..., :1])
    prev_n = np.concatenate([zero, count[..., :-1]], axis=-1) + PRIOR_DEALS
    prev_sum = np.concatenate([zero, total[..., :-1]], axis=-1)
    prev_sq = np.concatenate([zero, squares[..., :-1]], axis=-1) + PRIOR_DEALS * 0.25
    mean = prev_sum / prev_n
    var = np.maximum(prev_sq / prev_n - mean * mean, 1e-6)
    bet = np.clip(mean / (var + mean * mean), 0.0, MAX_BET)
    return np.asarray(np.cumsum(np.where(present, np.log1p(bet * xs), 0.0), axis=-1), dtype=np.float64)


def deals_needed(values: FloatArray, bound: float, *, confidence: float = 0.95, top: int = 0) -> int | None:
    """How many deals in all a settled top ``top`` needs, estimated from pilot deals:
    for each adjacent pair, the deals at which the expected log wealth of the optimal
    bet, ``m^2 / (2 (v + m^2))`` per shared deal, reaches the threshold, divided by the
    share of deals the pair shares; the largest over the pairs. None when a pair looks
    equal (no finite number of deals separates it)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[1]
    probe = settled(values, bound, confidence=confidence, top=top)
    x = pair_matrix(values, bound)
    need = 0.0
    for a, b, _ in probe.pairs:
        row = x[a, b]
        shared = row[~np.isnan(row)]
        if len(shared) < 2:
            return None
        m, v = float(np.mean(shared)), float(np.var(shared, ddof=1))
        growth = m * m / (2.0 * (v + m * m)) if m > 0 else 0.0
        if growth <= 1e-9:
            return None
        need = max(need, math.log(probe.threshold) / growth / (len(shared) / len(values)))
    return math.ceil(need) if n > 1 else 0
