"""Verdicts (pure, numpy): how sure the standings are, and what else the journal says.

From ``Columns``, the standings order and the tournament seed alone, so the same journal
always gives the same numbers. The unit of resampling is the deal (``MAX_UNITS`` groups
at most); ``R`` multinomial weight vectors over the units make every statistic of a
resample a weighted sum. Mean score and mean rank get bootstrap-t intervals (Student-t
with the larger of the delta-method and jackknife errors below ``FEW_DEALS`` deals);
differences of neighbours are paired by deal; P(above), rank ranges and simultaneous
rank sets come from the same resamples; ratings are a Plackett-Luce fit by Newton's
method; head-to-head shares carry Wilson intervals; seat bias is checked per seat.
docs/verdicts.md explains each for organisers. Every float
leaves through ``standings.rnd``, so published bytes are stable.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from referee.games.base import Game
from referee.record import MatchRecord
from referee.stats.columns import BoolArray, Columns, FloatArray, IntArray, credit_mask
from referee.stats.standings import compute_standings, disqualifications, record_columns, rnd
from referee.stats.student import student_t  # scipy.stats is slow to import

DEFAULT_RESAMPLES = 2000
CONFIDENCE = 0.95
HISTORY_POINTS = 12
MAX_UNITS = 1024
FEW_DEALS = 30
_CHUNK = 64  # resamples per block of pairwise comparisons
_BIG = 1 << 30


@dataclass
class Verdicts:
    """What the journal says beyond the standings (see the module docstring)."""

    bots: dict[str, dict[str, Any]]
    differences: list[dict[str, Any]]
    above: dict[str, Any]
    head_to_head: list[dict[str, Any]]
    seat_bias: list[dict[str, Any]] | None
    rating_history: dict[str, Any]
    method: dict[str, Any]


# Reusable bootstrap machinery on arrays ----------------------------------------------


def bootstrap_rng(seed: int) -> np.random.Generator:
    """The resampling generator of the tournament with ``seed`` (never a global one)."""
    return np.random.Generator(
        np.random.PCG64(int.from_bytes(hashlib.sha256(f"verdicts/{seed}".encode()).digest()[:8], "big"))
    )


def resample_weights(n_units: int, resamples: int, rng: np.random.Generator) -> FloatArray:
    """``resamples`` bootstrap draws of ``n_units`` units, as counts per unit (R x U)."""
    out = np.zeros((resamples, n_units))
    step = max(1, (1 << 22) // max(1, n_units))  # rows per block: bounded memory for the draws
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        draws = rng.integers(0, n_units, (rows, n_units)) + (np.arange(rows) * n_units)[:, None]
        out[start : start + rows] = np.bincount(draws.ravel(), minlength=rows * n_units).reshape(rows, n_units)
    return out


@dataclass
class RatioIntervals:
    """Estimates, standard errors, intervals and resampled values of ratio statistics."""

    est: FloatArray
    se: FloatArray
    lo: FloatArray
    hi: FloatArray
    boot: FloatArray  # R x columns; NaN where undefined in a resample


def ratio_intervals(w: FloatArray, s: FloatArray, c: FloatArray, confidence: float = CONFIDENCE) -> RatioIntervals:
    """Bootstrap-t intervals of ``sum(s) / sum(c)`` per column; ``s``, ``c`` are units x columns."""
    ct = c.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = s.sum(0) / ct
        a = s - est * c
        se = np.sqrt((a * a).sum(0)) / ct
        units = (c > 0).sum(0)
        sw, cw = w @ s, w @ c
        r = sw / cw
        var = (w @ (s * s) - 2 * r * (w @ (s * c)) + r * r * (w @ (c * c))) / (cw * cw)
        jk = _jackknife_se((s.sum(0) - s) / (ct - c), c > 0)
    return _studentized(est, se, r, var, units, confidence, jk)


def ratio_difference_intervals(
    w: FloatArray,
    s: FloatArray,
    c: FloatArray,
    a: IntArray,
    b: IntArray,
    confidence: float = CONFIDENCE,
) -> RatioIntervals:
    """Bootstrap-t intervals of ``ratio[a] - ratio[b]`` for column pairs, paired by unit."""
    ct = c.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        est_all = s.sum(0) / ct
        infl = (s - est_all * c) / ct
        u = infl[:, a] - infl[:, b]
        units = ((c[:, a] > 0) | (c[:, b] > 0)).sum(0)
        est = est_all[a] - est_all[b]
        se = np.sqrt((u * u).sum(0))
        sa, ca, sb, cb = s[:, a], c[:, a], s[:, b], c[:, b]
        swa, cwa, swb, cwb = w @ sa, w @ ca, w @ sb, w @ cb
        ra, rb = swa / cwa, swb / cwb
        aa = w @ (sa * sa) - 2 * ra * (w @ (sa * ca)) + ra * ra * (w @ (ca * ca))
        bb = w @ (sb * sb) - 2 * rb * (w @ (sb * cb)) + rb * rb * (w @ (cb * cb))
        ab = w @ (sa * sb) - rb * (w @ (sa * cb)) - ra * (w @ (ca * sb)) + ra * rb * (w @ (ca * cb))
        var = aa / (cwa * cwa) + bb / (cwb * cwb) - 2 * ab / (cwa * cwb)
        loo = (s.sum(0) - s) / (ct - c)
        jk = _jackknife_se(loo[:, a] - loo[:, b], (c[:, a] > 0) | (c[:, b] > 0))
    return _studentized(est, se, ra - rb, var, units, confidence, jk)


def _jackknife_se(loo: FloatArray, present: BoolArray) -> FloatArray:
    """Delete-one-deal jackknife standard error per column from the leave-one-out estimates
    ``loo`` (units x columns), over the units where the column is ``present``; NaN where a
    leave-one-out estimate is undefined (a bot in a single deal)."""
    n = present.sum(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(present, loo, 0.0).sum(0) / n
        dev = np.where(present, loo - mean, 0.0)
        return np.asarray(np.sqrt((n - 1) / n * (dev * dev).sum(0)), np.float64)


def _studentized(
    est: FloatArray,
    se: FloatArray,
    boot: FloatArray,
    var: FloatArray,
    units: IntArray,
    conf: float,
    jk: FloatArray,
) -> RatioIntervals:
    """From ``FEW_DEALS`` deals on: ``[est - q_hi(t*) se, est - q_lo(t*) se]`` with
    t* = (boot - est) / se*, widened where needed to the Student-t interval on ``units - 1``
    degrees of freedom. Below: the Student-t interval with the larger of the delta-method
    and the delete-one-deal jackknife error (``jk``), widened where needed to the
    percentile interval of the resamples (tests/test_calibration.py measures both)."""
    tail = (1 - conf) / 2
    df = np.maximum(units - 1, 1)
    t_crit = student_t.ppf(1 - tail, df) * np.sqrt(np.maximum(units, 2) / df)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (boot - est) / np.sqrt(np.maximum(var, 0.0))
    t = np.where(np.isfinite(t), t, np.nan)
    boot = np.where(np.isfinite(boot), boot, np.nan)
    lo, hi = np.full_like(est, np.nan), np.full_like(est, np.nan)
    for j in range(est.shape[0]):
        if not math.isfinite(est[j]):
            continue
        col = t[:, j]
        col = col[~np.isnan(col)]
        if col.size == 0 or not se[j] > 0:
            lo[j] = hi[j] = est[j]
            continue
        if units[j] >= FEW_DEALS:
            lo[j], hi[j] = est[j] - t_crit[j] * se[j], est[j] + t_crit[j] * se[j]
            q_lo, q_hi = np.quantile(col, [tail, 1 - tail])
            lo[j], hi[j] = min(lo[j], est[j] - q_hi * se[j]), max(hi[j], est[j] - q_lo * se[j])
        else:
            # the jackknife error is larger where one deal weighs much (a bot in few deals,
            # counts that differ); both errors get the sqrt(n / (n - 1)) of t_crit, which for
            # the jackknife is a deliberate margin: without it equal bots were separated in
            # 6.7 % of heavy-tailed 20-deal tournaments (300, calibration model)
            small = float(np.fmax(se[j], jk[j]))
            lo[j], hi[j] = est[j] - t_crit[j] * small, est[j] + t_crit[j] * small
            # with few deals many resamples hold only 2-3 distinct deals, se* comes near 0 and
            # t* is unbounded (5 deals: intervals thousands of times too wide); the percentile
            # interval stays within the data and still leans the way a skewed mean does
            values = boot[:, j]
            p_lo, p_hi = np.quantile(values[~np.isnan(values)], [tail, 1 - tail])
            lo[j], hi[j] = min(lo[j], p_lo), max(hi[j], p_hi)
    return RatioIntervals(est, se, lo, hi, boot)


def simultaneous_rank_sets(
    theta: FloatArray, infl: FloatArray, boot: FloatArray, units: int, confidence: float = CONFIDENCE
) -> tuple[list[tuple[int, int]], float]:
    """Rank sets (lower theta is better) that hold for every entity at once, and the critical value.

    ``theta``: estimates (E); ``infl``: influence of each unit on each estimate (U x E),
    giving the pairwise standard errors; ``boot``: resampled estimates (R x E).
    """
    e = theta.shape[0]
    if e == 0:
        return [], 0.0
    cov = infl.T @ infl
    var = np.diag(cov)
    se = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2 * cov, 0.0))
    d = theta[:, None] - theta[None, :]
    usable = se > 1e-12 * (1 + np.abs(d))
    np.fill_diagonal(usable, False)
    maxima = []
    for start in range(0, boot.shape[0], _CHUNK):
        bt = boot[start : start + _CHUNK]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.abs((bt[:, :, None] - bt[:, None, :]) - d) / np.where(usable, se, 1.0)
        z = np.where(usable & np.isfinite(z), z, -np.inf)
        maxima.append(z.reshape(z.shape[0], -1).max(axis=1))
    mx = np.concatenate(maxima) if maxima else np.zeros(0)
    mx = mx[np.isfinite(mx)]
    crit = float(np.quantile(mx, confidence)) if mx.size else 0.0
    # few deals: at least the Bonferroni Student-t bound over the pairs (the bootstrap maximum alone is too small)
    pairs = max(1, e * (e - 1) // 2)
    df = max(units - 1, 1)
    crit = max(crit, float(student_t.ppf(1 - (1 - confidence) / (2 * pairs), df)) * math.sqrt(max(units, 2) / df))
    # k surely better than j: theta_j - theta_k > c se (or a difference with no spread at all)
    surely = np.where(usable, d - crit * se > 0, (d > 0) & ~usable)
    np.fill_diagonal(surely, False)
    better = surely.sum(axis=1)  # bots surely better than j
    worse = surely.sum(axis=0)  # bots j is surely better than
    return [(1 + int(better[j]), e - int(worse[j])) for j in range(e)], crit


# The verdicts of a tournament -----------------------------------------------------------


def analyse(
    game: Game, bot_names: Sequence[str], records: Sequence[MatchRecord], seed: int, resamples: int = DEFAULT_RESAMPLES
) -> Verdicts:
    """The verdicts of in-memory records (tests, small tools)."""
    cols = record_columns(game, bot_names, records)
    order = [r["name"] for r in compute_standings(game, bot_names, records)]
    return analyse_columns(game, cols, order, seed, resamples)


def analyse_columns(
    game: Game, cols: Columns, order: Sequence[str], seed: int, resamples: int = DEFAULT_RESAMPLES
) -> Verdicts:
    """Intervals, differences, rank ranges and sets, ratings, head-to-head and seat bias."""
    # one BLAS thread: as fast on a loaded 2-core machine, and sums in one order (stable bytes)
    with threadpool_limits(limits=1):
        return _analyse(game, cols, order, seed, resamples)


def _analyse(game: Game, cols: Columns, order: Sequence[str], seed: int, resamples: int) -> Verdicts:
    coop = game.info.cooperative
    names = cols.names
    n = len(names)
    pos = {name: i for i, name in enumerate(names)}
    credit = credit_mask(cols, coop)
    n_deals = cols.n_deals
    n_units = min(n_deals, MAX_UNITS)
    unit = cols.deal % MAX_UNITS if n_deals > MAX_UNITS else cols.deal
    unit_seat = np.broadcast_to(unit[:, None], cols.bot.shape)
    rng = bootstrap_rng(seed)
    w = resample_weights(n_units, resamples if n_units else 0, rng)

    def per_unit(values: Any, mask: BoolArray, who: IntArray, width: int) -> FloatArray:
        key = unit_seat[mask] * width + who[mask]
        weights = np.broadcast_to(values, cols.bot.shape)[mask].astype(np.float64)
        sums = np.bincount(key, weights=weights, minlength=n_units * width)
        return np.asarray(sums, np.float64).reshape(n_units, width)

    count = per_unit(1.0, credit, cols.bot, n)
    score = per_unit(cols.score, credit, cols.bot, n)
    rank = per_unit(cols.rank, credit, cols.bot, n)
    score_iv = ratio_intervals(w, score, count)
    rank_iv = ratio_intervals(w, rank, count)
    seats = cols.bot.shape[1]
    # a mean lies within the range of what it averages; an interval reaching past it (few
    # deals, scores piled at a bound) is cut there, which can never exclude a possible mean
    clip_intervals(rank_iv, 1.0, float(seats))
    bounds = game.info.score_bounds(seats)
    clip_intervals(score_iv, *bounds)
    dq = set(disqualifications(cols))
    is_dq = np.array([name in dq for name in names], bool)
    played = count.sum(0) > 0
    listed = played & (np.arange(n) < cols.ranked)

    # leaderboard keys in every resample: (group, k1, k2) as standings.order_key
    sign = 1.0 if cols.lower else -1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        cw = w @ count
        boot_score = sign * (w @ score) / cw
        boot_rank = (w @ rank) / cw
    group = np.where(is_dq[None, :], 2.0, np.where(cw > 0, 0.0, 1.0))
    group[:, cols.ranked :] = 3.0  # removed bots: below every bot of the tournament, in no one's place
    k1 = np.nan_to_num(boot_score if coop else boot_rank, nan=0.0)
    k2 = np.zeros_like(k1) if coop else np.nan_to_num(boot_score, nan=0.0)
    positions, above = _positions_and_above(group, k1, k2)

    eligible = [pos[name] for name in order if played[pos[name]] and not is_dq[pos[name]]]
    if coop:
        sets, crit = _rank_sets(eligible, score_iv, score, count, sign, n_units)
    else:
        sets, crit = _rank_sets(eligible, rank_iv, rank, count, 1.0, n_units)
    rank_set = {names[b]: sets[i] for i, b in enumerate(eligible)}

    games_bot, games_rank = contests(cols, credit, coop)
    ratings, history = rate(games_bot, games_rank, names)
    summary = _summaries(cols, credit)
    deals = _deals_per_bot(cols, n)
    bots = {
        name: _bot_row(deals[i], i, played[i], name in dq, coop, score_iv, rank_iv, positions, rank_set.get(name))
        | {"rating": ratings[name], "score_summary": summary[i]}
        for i, name in enumerate(names[: cols.ranked])
    }
    differences = _differences(order, pos, played, is_dq, w, score, rank, count, above, coop, seats, bounds)
    order_idx = [pos[name] for name in order]
    return Verdicts(
        bots=bots,
        differences=differences,
        above={
            "bots": list(order),
            "p": [[None if a == b else rnd(above[a, b]) for b in order_idx] for a in order_idx]
            if above.size
            else [[None] * len(order) for _ in order],
        },
        head_to_head=head_to_head(games_bot, games_rank, names, cols.ranked),
        seat_bias=None if coop else _seat_bias(cols, w, unit_seat, n_units, bounds),
        rating_history=history,
        method=_method(cols, coop, n_deals, n_units, resamples, crit, rank_iv if not coop else score_iv, listed),
    )


def _deals_per_bot(cols: Columns, n: int) -> list[int]:
    """How many distinct deals each of the ``n`` bots played (one pass over every seat)."""
    if not cols.matches:
        return [0] * n
    rows, seats = np.nonzero(cols.bot >= 0)
    width = int(cols.deal.max()) + 1
    pairs = np.unique(cols.bot[rows, seats].astype(np.int64) * width + cols.deal[rows])
    counts: list[int] = np.bincount(pairs // width, minlength=n).tolist()
    return counts


def _bot_row(
    deals: int,
    i: int,
    played: bool,
    dq: bool,
    coop: bool,
    score_iv: Any,
    rank_iv: Any,
    positions: Any,
    rs: Any,
) -> dict[str, Any]:
    """Bot ``i``'s deals and intervals (its rating and summary are added by the caller)."""
    span = _percentile_pair(positions[:, i]) if positions.size else None
    return {
        "deals": deals,
        "mean_score_ci": _pair(score_iv, i) if played else None,
        "mean_rank_ci": None if coop or not played else _pair(rank_iv, i),
        "rank_interval": None if dq or not played or span is None else [span[0], span[1]],
        "rank_set": None if rs is None else [rs[0], rs[1]],
    }


def _rank_sets(
    eligible: Sequence[int], primary: Any, sums: FloatArray, count: FloatArray, sign: float, n_units: int
) -> tuple[list[Any], float]:
    """Simultaneous rank sets of the ``eligible`` bots on the primary statistic (its
    interval ``primary``, per-unit ``sums``), oriented by ``sign`` so that lower is better."""
    if not eligible:
        return [], 0.0
    elig = np.array(eligible, np.int64)
    theta = sign * primary.est[elig]
    with np.errstate(divide="ignore", invalid="ignore"):
        infl = (sums[:, elig] - primary.est[elig] * count[:, elig]) / count[:, elig].sum(0)
    sets, crit = simultaneous_rank_sets(theta, sign * infl, sign * primary.boot[:, elig], n_units)
    return list(sets), crit


def _positions_and_above(group: FloatArray, k1: FloatArray, k2: FloatArray) -> tuple[Any, Any]:
    """Leaderboard positions per resample (R x N, shared ranks) and P(row above column) (N x N)."""
    r, n = k1.shape
    if r == 0:
        return np.zeros((0, n), np.int64), np.zeros((0, 0))
    positions = np.empty((r, n), np.int64)
    above = np.zeros((n, n))
    for start in range(0, r, _CHUNK):
        g, a, b = (x[start : start + _CHUNK] for x in (group, k1, k2))
        # less[r, i, j]: i's key is strictly better than j's
        less = (g[:, :, None] < g[:, None, :]) | (
            (g[:, :, None] == g[:, None, :])
            & ((a[:, :, None] < a[:, None, :]) | ((a[:, :, None] == a[:, None, :]) & (b[:, :, None] < b[:, None, :])))
        )
        positions[start : start + _CHUNK] = 1 + less.sum(axis=1)
        tie = ~less & ~less.transpose(0, 2, 1)
        above += less.sum(axis=0) + 0.5 * tie.sum(axis=0)
    return positions, above / r


def _differences(
    order: Sequence[str],
    pos: dict[str, int],
    played: BoolArray,
    is_dq: BoolArray,
    w: FloatArray,
    score: FloatArray,
    rank: FloatArray,
    count: FloatArray,
    above: Any,
    coop: bool,
    seats: int,
    bounds: tuple[float, float],
) -> list[dict[str, Any]]:
    """Adjacent rows of the standings (both in play): the difference with its signed
    interval (within what a difference of two possible means can be)."""
    rows = [pos[name] for name in order if played[pos[name]] and not is_dq[pos[name]]]
    if len(rows) < 2:
        return []
    a, b = np.array(rows[:-1]), np.array(rows[1:])
    sd = ratio_difference_intervals(w, score, count, a, b)
    clip_intervals(sd, bounds[0] - bounds[1], bounds[1] - bounds[0])
    rd = None if coop else ratio_difference_intervals(w, rank, count, a, b)
    if rd is not None:
        clip_intervals(rd, 1.0 - seats, seats - 1.0)
    names = list(pos)
    out = []
    for j in range(len(a)):
        item: dict[str, Any] = {"bot": names[a[j]], "next": names[b[j]]}
        if rd is not None:
            item["mean_rank_diff"] = rnd(rd.est[j])
            item["mean_rank_diff_ci"] = _pair(rd, j)
        item["mean_score_diff"] = rnd(sd.est[j])
        item["mean_score_diff_ci"] = _pair(sd, j)
        item["p_above"] = rnd(above[a[j], b[j]]) if above.size else None
        stat = sd if coop else rd
        assert stat is not None
        item["separated"] = bool(stat.lo[j] > 0 or stat.hi[j] < 0)
        out.append(item)
    return out


def _seat_bias(
    cols: Columns, w: FloatArray, unit_seat: Any, n_units: int, bounds: tuple[float, float]
) -> list[dict[str, Any]]:
    """Per seat position: matches, mean score and mean rank with intervals (within
    ``bounds`` and 1..seats) and flags."""
    k = cols.bot.shape[1]
    seated = cols.seated
    seat_idx = np.broadcast_to(np.arange(k)[None, :], cols.bot.shape)

    def per_unit(values: Any) -> FloatArray:
        key = unit_seat[seated] * k + seat_idx[seated]
        weights = np.broadcast_to(values, cols.bot.shape)[seated].astype(np.float64)
        sums = np.bincount(key, weights=weights, minlength=n_units * k)
        return np.asarray(sums, np.float64).reshape(n_units, k)

    count, score, rank = per_unit(1.0), per_unit(cols.score), per_unit(cols.rank)
    s_iv, r_iv = ratio_intervals(w, score, count), ratio_intervals(w, rank, count)
    clip_intervals(s_iv, *bounds)
    clip_intervals(r_iv, 1.0, float(k))
    total = count.sum()
    overall_score = score.sum() / total if total else math.nan
    overall_rank = rank.sum() / total if total else math.nan
    rows = []
    for s in range(k):
        matches = int(count[:, s].sum())
        flag_s = matches > 0 and not (s_iv.lo[s] <= overall_score <= s_iv.hi[s])
        flag_r = matches > 0 and not (r_iv.lo[s] <= overall_rank <= r_iv.hi[s])
        rows.append(
            {
                "seat": s,
                "matches": matches,
                "mean_score": rnd(s_iv.est[s]) if matches else None,
                "mean_score_ci": _pair(s_iv, s) if matches else None,
                "mean_rank": rnd(r_iv.est[s]) if matches else None,
                "mean_rank_ci": _pair(r_iv, s) if matches else None,
                "biased": bool(flag_s or flag_r),
            }
        )
    return rows


def _method(
    cols: Columns,
    coop: bool,
    n_deals: int,
    n_units: int,
    resamples: int,
    crit: float,
    primary: RatioIntervals,
    played: BoolArray,
) -> dict[str, Any]:
    """How the verdicts were computed, and how many deals a stated precision needs."""
    stat, target = ("mean_score", 1.0) if coop else ("mean_rank", 0.1)
    half = (primary.hi - primary.lo)[played] / 2 if played.any() else np.zeros(0)
    half = half[np.isfinite(half)]
    widest = float(half.max()) if half.size else 0.0
    needed = math.ceil(n_deals * (widest / target) ** 2) if widest > 0 else n_deals
    return {
        "unit": "deal",
        "deals": n_deals,
        "units": n_units,
        "resamples": resamples,
        "confidence": CONFIDENCE,
        "interval": "studentized bootstrap (bootstrap-t) over deals",
        "few_deals_interval": f"below {FEW_DEALS} deals: Student-t on the larger of the delta-method and "
        "jackknife errors, widened to the percentile interval",
        "rank_set": "max-type bootstrap over pairwise differences (simultaneous)",
        "rank_set_critical_value": rnd(crit),
        "rng": "numpy PCG64 seeded from sha256 of the tournament seed",
        "rating": "Plackett-Luce maximum likelihood (Newton), ties as Breslow, prior 1 win + 1 loss "
        "against strength 1; mu = log-strength, ordinal = mu - 3 sigma",
        "few_deals": n_deals < FEW_DEALS,
        "precision": {
            "statistic": stat,
            "half_width": target,
            "widest_half_width": rnd(widest),
            "deals_needed": needed,
        },
    }


def clip_intervals(iv: RatioIntervals, low: float, high: float) -> None:
    """Bound intervals to the values the statistic can take (NaN stays NaN)."""
    iv.lo = np.where(np.isnan(iv.lo), iv.lo, np.clip(iv.lo, low, high))
    iv.hi = np.where(np.isnan(iv.hi), iv.hi, np.clip(iv.hi, low, high))


def _pair(iv: RatioIntervals, j: int) -> list[float | None] | None:
    lo, hi = iv.lo[j], iv.hi[j]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return [rnd(lo), rnd(hi)]


def _percentile_pair(values: Any) -> tuple[int, int] | None:
    """The central ``CONFIDENCE`` nearest-rank percentile range of integer ``values``."""
    ordered = np.sort(values)
    m = ordered.shape[0]
    if not m:
        return None
    tail = (1 - CONFIDENCE) / 2
    lo = ordered[max(0, min(m - 1, math.ceil(tail * m) - 1))]
    hi = ordered[max(0, min(m - 1, math.ceil((1 - tail) * m) - 1))]
    return int(lo), int(hi)


def _summaries(cols: Columns, credit: BoolArray) -> list[dict[str, float | None] | None]:
    """Five-number summary (nearest-rank quartiles) of each bot's credited scores."""
    bot, score = cols.bot[credit], cols.score[credit]
    order = np.lexsort((score, bot))
    bot, score = bot[order], score[order]
    starts = np.searchsorted(bot, np.arange(len(cols.names)), side="left")
    ends = np.searchsorted(bot, np.arange(len(cols.names)), side="right")
    out: list[dict[str, float | None] | None] = []
    for lo, hi in zip(starts, ends):
        m = int(hi - lo)
        if not m:
            out.append(None)
            continue
        mine = score[lo:hi]

        def q(p: float, mine: Any = mine, m: int = m) -> float | None:
            return rnd(mine[max(0, min(m - 1, math.ceil(p / 100 * m) - 1))])

        out.append({"min": rnd(mine[0]), "q1": q(25), "median": q(50), "q3": q(75), "max": rnd(mine[-1])})
    return out


# Games, ratings and head-to-head --------------------------------------------------------


def contests(cols: Columns, credit: BoolArray, coop: bool) -> tuple[IntArray, IntArray]:
    """The rated games in fixture order as (bot, rank) matrices padded with bot -1; >= 2 bots each."""
    if coop:
        n = len(cols.names)
        key = cols.deal[:, None] * n + cols.bot
        keys, inverse = np.unique(key[credit], return_inverse=True)
        total = np.bincount(inverse, weights=cols.score[credit])
        mean = total / np.bincount(inverse)
        deal, bot = keys // n, keys % n
        if not keys.size:
            return np.zeros((0, 1), np.int64), np.zeros((0, 1), np.int64)
        sizes = np.bincount(deal)
        start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        slot = np.arange(keys.shape[0]) - start[deal]
        width = int(sizes.max())
        gb = np.full((sizes.shape[0], width), -1, np.int64)
        gm = np.full((sizes.shape[0], width), np.nan)
        gb[deal, slot], gm[deal, slot] = bot, mean
        better = (gm[:, None, :] < gm[:, :, None]) if cols.lower else (gm[:, None, :] > gm[:, :, None])
        gr = 1 + better.sum(axis=2)
        gr = np.where(gb >= 0, gr, 0)
    else:
        gb = np.where(cols.seated, cols.bot, -1)
        gr = cols.rank.copy()
        k = gb.shape[1]
        for j in range(1, k):  # a bot in several seats: one entry, its best rank
            for i in range(j):
                same = (gb[:, j] >= 0) & (gb[:, j] == gb[:, i])
                gr[:, i] = np.where(same, np.minimum(gr[:, i], gr[:, j]), gr[:, i])
                gb[:, j] = np.where(same, -1, gb[:, j])
    keep = (gb >= 0).sum(axis=1) >= 2
    return gb[keep], gr[keep]


def head_to_head(gb: IntArray, gr: IntArray, names: Sequence[str], shown: int | None = None) -> list[dict[str, Any]]:
    """Every ordered pair of distinct bots among the first ``shown`` (all by default): meetings,
    above, below, ties, share and its Wilson interval."""
    n = len(names)
    shown = n if shown is None else shown
    k = gb.shape[1]
    tally = np.zeros((3, n * n), np.int64)
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            ok = (gb[:, i] >= 0) & (gb[:, j] >= 0)
            key = gb[ok, i] * n + gb[ok, j]
            ri, rj = gr[ok, i], gr[ok, j]
            for c, cond in enumerate((ri < rj, ri > rj, ri == rj)):
                tally[c] += np.bincount(key[cond], minlength=n * n)
    out = []
    for a in range(shown):
        for b in range(shown):
            if a == b:
                continue
            x, y, z = (int(tally[c, a * n + b]) for c in range(3))
            m = x + y + z
            share = (x + z / 2) / m if m else None
            out.append(
                {
                    "bot": names[a],
                    "opponent": names[b],
                    "meetings": m,
                    "above": x,
                    "below": y,
                    "ties": z,
                    "share": rnd(share),
                    "share_ci": None if share is None else [rnd(v) for v in wilson(share, m)],
                }
            )
    return out


def wilson(p: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a share ``p`` over ``n`` trials."""
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


class _PL:
    """The Plackett-Luce log-likelihood's gradient and Hessian over padded game matrices.

    Identical games (the same bots in the same finishing order with the same ties) are one
    row with a count, so a tournament of few bots costs a few hundred rows however many
    matches it has; ``weights(g)`` gives the rows' counts among the first ``g`` games.
    """

    def __init__(self, gb: IntArray, gr: IntArray, n: int) -> None:
        ranked = np.where(gb >= 0, gr, _BIG)
        order = np.argsort(ranked, axis=1, kind="stable")
        b = np.take_along_axis(gb, order, 1)
        r = np.take_along_axis(ranked, order, 1)
        del ranked, order
        k = gb.shape[1]
        tied = np.zeros(b.shape, bool)  # tied with the position before
        tied[:, 1:] = r[:, 1:] == r[:, :-1]
        del r
        self.inverse, b, tied = _unique_games(b, tied, n)
        self.v = b >= 0
        self.n = n
        small: Any = np.int8 if k < 128 else np.int64  # positions in a game: small arrays at a million games
        idx: Any = np.broadcast_to(np.arange(k, dtype=small), b.shape)
        self.first = np.maximum.accumulate(np.where(~tied, idx, 0), axis=1)
        end = np.ones_like(self.v)
        end[:, :-1] = ~tied[:, 1:]
        self.last = np.minimum.accumulate(np.where(end, idx, k - 1)[:, ::-1], axis=1)[:, ::-1].astype(small)
        nvalid = self.v.sum(axis=1, keepdims=True)
        self.stage = self.v & (nvalid - self.first >= 2)
        self.bc = np.where(self.v, b, 0)
        del b, tied
        # per ordered pair of positions: the last stage that holds both, and their Hessian cell
        self.lm = np.minimum(self.last[:, :, None], self.last[:, None, :]).reshape(-1, k * k)
        bc: Any = self.bc.astype(np.int32 if n * n < 2**31 else np.int64)
        self.cell = (bc[:, :, None] * n + bc[:, None, :]).reshape(-1, k * k)

    def weights(self, games: int) -> FloatArray:
        """How many of the first ``games`` games each row stands for (the rows they use)."""
        return np.bincount(self.inverse[:games]).astype(np.float64)

    def step(self, theta: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Gradient and Hessian (prior included) at ``theta``, each row counted ``w`` times."""
        n = self.n
        grad = np.zeros(n)
        hess = np.zeros(n * n)
        used = w.shape[0]
        for lo in range(0, used, _ROWS):  # bounded temporaries
            rows = slice(lo, min(lo + _ROWS, used))
            v, bc, stage, wv = self.v[rows], self.bc[rows], self.stage[rows], w[rows, None]
            g = np.where(v, np.exp(theta[bc]), 0.0)
            suffix = np.cumsum(g[:, ::-1], axis=1)[:, ::-1]
            d = np.take_along_axis(suffix, self.first[rows], 1)
            inv = np.where(stage, 1.0 / np.where(d > 0, d, 1.0), 0.0)
            p1 = np.take_along_axis(np.cumsum(inv, axis=1), self.last[rows], 1)
            p2 = np.cumsum(inv * inv, axis=1)
            gd = (g * p1 * wv).ravel()
            grad += np.bincount(bc[stage], weights=np.broadcast_to(wv, v.shape)[stage], minlength=n)
            grad -= np.bincount(bc.ravel(), weights=gd, minlength=n)
            val = ((g * wv)[:, :, None] * g[:, None, :]).reshape(g.shape[0], -1)
            val *= np.take_along_axis(p2, self.lm[rows], 1)
            hess += np.bincount(self.cell[rows].ravel(), weights=val.ravel(), minlength=n * n)
            hess[:: n + 1] -= np.bincount(bc.ravel(), weights=gd, minlength=n)
        h = hess.reshape(n, n)
        s = 1.0 / (1.0 + np.exp(-theta))
        grad += 1.0 - 2.0 * s
        h[np.diag_indices(n)] -= 2.0 * s * (1.0 - s)
        return grad, h


_ROWS = 1 << 16  # game rows per block of a Newton step


def _unique_games(b: IntArray, tied: BoolArray, n: int) -> tuple[IntArray, IntArray, BoolArray]:
    """The distinct rows of (bots in order, ties): (row of each game, bots, ties)."""
    k = b.shape[1]
    if b.shape[0] == 0:
        return np.zeros(0, np.int64), b, tied
    if k * (math.log2(n + 1) + 1) < 62:  # one integer key per game
        key = np.zeros(b.shape[0], np.int64)
        for j in range(k):
            key = (key * (n + 1) + (b[:, j] + 1)) * 2 + tied[:, j]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    else:
        both = np.concatenate([b, tied.astype(b.dtype)], axis=1)
        _, first, inverse = np.unique(both, axis=0, return_index=True, return_inverse=True)
    # rows in order of their first game: the first g games use a prefix of the rows
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return rank[inverse.reshape(-1)], b[first[order]], tied[first[order]]


def _newton(
    model: _PL, w: FloatArray, theta: FloatArray, iterations: int, final: bool
) -> tuple[FloatArray, FloatArray | None]:
    """Newton's method from ``theta``; with ``final``, the Hessian at the result too."""
    th = theta.copy()
    prev = math.inf
    for _ in range(iterations):
        grad, h = model.step(th, w)
        delta = np.clip(np.linalg.solve(-h, grad), -2.0, 2.0)
        th = th + delta
        size = float(np.abs(delta).max(initial=0.0))
        # converged, or at the noise floor of the float sums (steps no longer shrink)
        if size < 1e-9 or (size < 1e-7 and size > prev / 4):
            break
        prev = size
    return th, model.step(th, w)[1] if final else None


def rate(gb: IntArray, gr: IntArray, names: Sequence[str]) -> tuple[dict[str, dict[str, float | None]], dict[str, Any]]:
    """Plackett-Luce ratings after every game and the history of mu over prefixes of the games."""
    n = len(names)
    total = gb.shape[0]
    steps = _thin(total + 1)
    model = _PL(gb, gr, n)
    mus = []
    theta = np.zeros(n)
    for g in steps:
        if g == 0:
            mus.append(np.zeros(n))
            continue
        if g < total:  # history: a few warm-started steps on the first g games
            theta, _ = _newton(model, model.weights(g), theta, 4, False)
            mus.append(theta)
    theta, h = _newton(model, model.weights(total), theta, 60, True)
    assert h is not None
    sigma = np.sqrt(np.maximum(np.diag(np.linalg.inv(-h)), 0.0))
    if total:
        mus.append(theta)
    history = {
        "games": total,
        "step": steps,
        "mu": {name: [rnd(m[i]) for m in mus] for i, name in enumerate(names)},
    }
    final = {
        name: {"mu": rnd(theta[i]), "sigma": rnd(sigma[i]), "ordinal": rnd(theta[i] - 3 * sigma[i])}
        for i, name in enumerate(names)
    }
    return final, history


def _thin(n: int) -> list[int]:
    """At most ``HISTORY_POINTS`` evenly spaced indices of ``range(n)``, first and last kept."""
    if n <= HISTORY_POINTS:
        return list(range(n))
    return sorted({round(i * (n - 1) / (HISTORY_POINTS - 1)) for i in range(HISTORY_POINTS)})
