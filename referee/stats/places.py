"""Prize places (pure, numpy): which bots take places 1..K, and whether that is settled.

The model is the rating column's: Plackett-Luce, each bot a log-strength ``theta``. Under
Plackett-Luce the chance that a finishes above b at a table is ``s_a / (s_a + s_b)``
whoever else sits there, so breaking every game into its pairs ("full rank breaking",
Azari Soufiani, Chen, Parkes and Xia 2013) gives a Bradley-Terry likelihood of the same
strengths whose only data is the ``n x n`` matrix of who finished above whom: the fit
costs the same after 1,000 matches as after 1,000,000 (flat), and it is opponent-adjusted,
so a bot that the ladder seats among the strong is not penalised for it. The pairs of a
game are not independent; at equal strengths the pairwise scores' covariance is exactly
``(k + 1) / 3`` times the Hessian (k seats), so the covariance of the estimate is that
factor times the inverse information (a sandwich, exact at equal strengths).

Anytime-valid like ``stop = "settled"`` (``sequential.py``): claims are made at looks,
any number of them, and a claim once made stands; what makes the looks free is a
time-uniform boundary instead of a fixed-time one. Each difference ``theta_a - theta_b``
gets the normal-mixture confidence sequence (Robbins; asymptotic form: Waudby-Smith,
Arbour, Sinha, Kennedy and Ramdas 2021) with intrinsic time the information ``1 / se^2``:
``|d| > se * sqrt((1 + RHO se^2) (log(1 + 1 / (RHO se^2)) + 2 log(1 / alpha')))``, Bonferroni
``alpha'`` over the unordered pairs, so every claim of every look holds at once with
probability ``confidence`` (``tests/test_places.py`` measures it). A bot's rank set is
``[1 + surely above it, n - surely below it]``; place p's candidates are the bots whose set
holds p; the place is settled when one is left. Chances are the share of normal draws of
``theta`` (the fit and its covariance) in which a candidate takes the place, among the
candidates: descriptive, not a guarantee.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from referee.schedule.final import FinalPlan
from referee.stats.columns import BoolArray, Columns, FloatArray, IntArray, credit_mask
from referee.stats.standings import disqualifications, rnd
from referee.stats.verdicts import contests

DEFAULT_TOP = 3
# the mixture's precision, fixed in advance: near-tightest from se 0.4 (a 5-bot sample) to
# 0.05 (a large season) at the alpha' in use; 16 cost 60 % more width at se 0.4, 2 % at 0.05
RHO = 1.0
DRAWS = 4000
FIRST_LOOKS = 64  # looks every LOOK_STEP matches up to FIRST_LOOKS of them, then spaced out
LOOK_STEP = 64
# a ladder's final seats the finalists not yet clearly out of its prize places: out once
# ``top`` finalists are this many standard errors of the difference above (where the seats
# go, never what is claimed: benchmarks/season_sim.py --final measured it)
FOCUS_MARGIN = 2.0
MARGIN = 0.0  # the ladder: out of contention once ``top`` bots are surely above (> 0: this many se instead)


def prize_places(top: int, bots: int) -> int:
    """The number of prize places: ``top`` (3 when 0), at most the number of bots."""
    return max(0, min(top if top > 0 else DEFAULT_TOP, bots))


class PairTally:
    """Who finished above whom: ``above[a, b]`` counts a above b at one table (a tie: a half
    each), and the widest table seen. Grows with the bots, never with the matches."""

    def __init__(self, n: int = 0) -> None:
        self.above = np.zeros((n, n))
        self.seats = 2

    def grow(self, n: int) -> None:
        """Make room for ``n`` bots."""
        old = self.above.shape[0]
        if n > old:
            bigger = np.zeros((n, n))
            bigger[:old, :old] = self.above
            self.above = bigger

    def add(self, bots: IntArray, ranks: IntArray) -> None:
        """Count games: ``bots[g, s]`` (-1: no one) finished at ``ranks[g, s]`` (1 best)."""
        bots, ranks = np.asarray(bots, np.int64), np.asarray(ranks, np.float64)
        if bots.size == 0:
            return
        n = self.above.shape[0]
        k = bots.shape[1]
        self.seats = max(self.seats, int((bots >= 0).sum(axis=1).max()))
        flat = np.zeros(n * n)
        for i in range(k):
            for j in range(k):
                if i == j:
                    continue
                ok = (bots[:, i] >= 0) & (bots[:, j] >= 0) & (bots[:, i] != bots[:, j])
                ri, rj = ranks[ok, i], ranks[ok, j]
                w = (ri < rj) + 0.5 * (ri == rj)
                flat += np.bincount(bots[ok, i] * n + bots[ok, j], weights=w, minlength=n * n)
        self.above += flat.reshape(n, n)


@dataclass
class Fit:
    """Log-strengths (higher is stronger) and the covariance of the estimate."""

    theta: FloatArray
    cov: FloatArray

    def pair_se(self) -> FloatArray:
        """The standard error of every difference ``theta_a - theta_b``."""
        v = np.diag(self.cov)
        return np.asarray(np.sqrt(np.maximum(v[:, None] + v[None, :] - 2 * self.cov, 0.0)), np.float64)


def fit(tally: PairTally, theta: FloatArray | None = None, iterations: int = 50) -> Fit:
    """The Bradley-Terry fit of the pairs (Newton from ``theta``), with the rating
    column's prior (one win and one loss against strength 1) and the sandwich factor."""
    above = tally.above
    n = above.shape[0]
    meet = above + above.T
    th = np.zeros(n) if theta is None or theta.shape[0] != n else theta.copy()
    h = np.zeros((n, n))
    for it in range(iterations + 1):
        p = 1.0 / (1.0 + np.exp(th[None, :] - th[:, None]))  # p[a, b]: a above b
        s = 1.0 / (1.0 + np.exp(-th))
        grad = (above - meet * p).sum(axis=1) + 1.0 - 2.0 * s
        h = meet * p * (1.0 - p)
        h[np.diag_indices(n)] = 0.0
        h[np.diag_indices(n)] = -h.sum(axis=1) - 2.0 * s * (1.0 - s)
        if it == iterations:
            break
        delta = np.clip(np.linalg.solve(-h, grad), -2.0, 2.0)
        th = th + delta
        if float(np.abs(delta).max(initial=0.0)) < 1e-9:
            break
    cov = np.linalg.inv(-h) * (tally.seats + 1.0) / 3.0
    return Fit(th, np.asarray(cov, np.float64))


def critical(se: FloatArray, alpha: float) -> FloatArray:
    """The normal-mixture boundary over ``se`` (the multiple of ``se`` a difference must pass)."""
    x = RHO * np.maximum(se, 1e-12) ** 2
    return np.asarray(np.sqrt((1.0 + x) * (np.log1p(1.0 / x) + 2.0 * math.log(1.0 / alpha))), np.float64)


def new_claims(f: Fit, alpha: float) -> BoolArray:
    """``out[a, b]``: a is surely stronger than b at this look."""
    se = f.pair_se()
    d = f.theta[:, None] - f.theta[None, :]
    out = d > critical(se, alpha) * se
    np.fill_diagonal(out, False)
    return np.asarray(out, np.bool_)


def pair_alpha(confidence: float, bots: int) -> float:
    """Each pair's error: Bonferroni over the unordered pairs."""
    return (1.0 - confidence) / max(1, bots * (bots - 1) // 2)


@dataclass
class Claims:
    """Every claim made so far (a claim stands once made), over ``n`` bots."""

    surely: BoolArray
    since: dict[int, int] = field(default_factory=dict)  # place -> the match count it settled at

    @classmethod
    def empty(cls, n: int) -> Claims:
        """No claim yet."""
        return cls(np.zeros((n, n), np.bool_))

    def grow(self, n: int) -> None:
        """Make room for ``n`` bots (no claim about the new ones)."""
        old = self.surely.shape[0]
        if n > old:
            bigger = np.zeros((n, n), np.bool_)
            bigger[:old, :old] = self.surely
            self.surely = bigger

    def add(self, claims: BoolArray) -> None:
        """Add this look's claims, each with the ones it implies through one other bot;
        a claim against one already made is refused (it can only come from the error)."""
        new = claims & ~self.surely.T
        both = self.surely | new
        implied = (both.astype(np.float64) @ both.astype(np.float64)) > 0
        self.surely = both | (implied & ~both.T)
        np.fill_diagonal(self.surely, False)

    def rank_sets(self, eligible: IntArray) -> tuple[IntArray, IntArray]:
        """Each eligible bot's lowest and highest possible place among the eligible."""
        s = self.surely[np.ix_(eligible, eligible)]
        e = eligible.shape[0]
        return 1 + s.sum(axis=0), e - s.sum(axis=1)

    def settle(self, eligible: IntArray, places: int, matches: int) -> None:
        """Note the places that are settled now and were not before."""
        lo, hi = self.rank_sets(eligible)
        for p in range(1, places + 1):
            if p not in self.since and int(((lo <= p) & (p <= hi)).sum()) == 1:
                self.since[p] = matches


def look_points(matches: int) -> list[int]:
    """The match counts at which the places are looked at: every ``LOOK_STEP`` up to
    ``FIRST_LOOKS`` looks, then with a step that doubles as the count doubles (a few hundred
    looks for a million matches), and at the end."""
    points = []
    m, step = LOOK_STEP, LOOK_STEP
    while m < matches:
        points.append(m)
        if m >= step * FIRST_LOOKS:
            step *= 2
        m += step
    return [*points, matches] if matches else []


def draw_positions(f: Fit, eligible: IntArray, seed: int) -> IntArray:
    """``out[d, j]``: the place (0 best) of eligible bot j in normal draw d of theta."""
    rng = np.random.Generator(
        np.random.PCG64(int.from_bytes(hashlib.sha256(f"places/{seed}".encode()).digest()[:8], "big"))
    )
    cov = f.cov[np.ix_(eligible, eligible)]
    w, v = np.linalg.eigh((cov + cov.T) / 2)
    root = v * np.sqrt(np.maximum(w, 0.0))
    draws = f.theta[eligible][None, :] + rng.standard_normal((DRAWS, eligible.shape[0])) @ root.T
    order = np.argsort(-draws, axis=1, kind="stable")
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.broadcast_to(np.arange(order.shape[1]), order.shape), axis=1)
    return np.asarray(pos, np.int64)


def chances(pos: IntArray, places: int) -> FloatArray:
    """``out[p, j]``: the share of draws in which eligible bot j takes place p + 1."""
    e = pos.shape[1]
    return np.asarray([(pos == p).sum(axis=0) / pos.shape[0] for p in range(places)], np.float64).reshape(places, e)


def position_ranges(pos: IntArray, confidence: float) -> list[tuple[int, int]]:
    """Each eligible bot's central ``confidence`` range of places (1 best) over the draws."""
    tail = (1 - confidence) / 2
    lo = np.quantile(pos, tail, axis=0, method="inverted_cdf")
    hi = np.quantile(pos, 1 - tail, axis=0, method="inverted_cdf")
    return [(int(a) + 1, int(b) + 1) for a, b in zip(lo, hi)]


@dataclass
class PlacesResult:
    """The published places, the fit and the rank sets (positions in ``Columns.names``)."""

    places: list[dict[str, Any]]
    fit: Fit
    eligible: IntArray
    lo: IntArray
    hi: IntArray
    ranges: list[tuple[int, int]]  # the central range of each eligible bot's place over the draws
    tally: PairTally


def places_from_columns(cols: Columns, coop: bool, top: int, confidence: float, seed: int) -> PlacesResult:
    """The places of a journal, looked at as it grew (``look_points``) in fixture order."""
    # one BLAS thread: as fast on a loaded 2-core machine, and sums in one order (stable bytes)
    with threadpool_limits(limits=1):
        return _places(cols, coop, top, confidence, seed)


def _places(cols: Columns, coop: bool, top: int, confidence: float, seed: int) -> PlacesResult:
    n = len(cols.names)
    gb, gr, end = _games(cols, coop)
    dq = disqualifications(cols)
    played = np.zeros(n, np.bool_)
    played[np.unique(gb[gb >= 0])] = True
    eligible = np.asarray([b for b in range(cols.ranked) if played[b] and cols.names[b] not in dq], np.int64)
    k = prize_places(top, eligible.shape[0])
    alpha = pair_alpha(confidence, eligible.shape[0])
    tally, claims = PairTally(n), Claims.empty(n)
    f = fit(tally)
    done = 0
    for m in look_points(cols.matches):
        upto = int(np.searchsorted(end, m, side="right"))
        tally.add(gb[done:upto], gr[done:upto])
        done = upto
        f = fit(tally, f.theta)
        claims.add(new_claims(f, alpha) & _among(eligible, n))
        claims.settle(eligible, k, m)
    lo, hi = claims.rank_sets(eligible)
    pos = draw_positions(f, eligible, seed) if eligible.size else np.zeros((DRAWS, 0), np.int64)
    share = chances(pos, k)
    places = [_place(p, cols.names, eligible, lo, hi, share[p - 1], claims.since.get(p)) for p in range(1, k + 1)]
    return PlacesResult(places, f, eligible, lo, hi, position_ranges(pos, confidence), tally)


def model_order(rows: list[dict[str, Any]], result: PlacesResult, names: Sequence[str]) -> list[dict[str, Any]]:
    """Standings rows (``rows``: standings order) ranked by the model: the eligible bots by
    strength (rank 1, 2, ...; a name breaks a tie), then the others as they were; for the
    eligible, ``rank_set`` and ``rank_interval`` from the model (set below by the caller)."""
    theta = {names[int(b)]: float(result.fit.theta[int(b)]) for b in result.eligible}
    ranked = sorted((r for r in rows if r["name"] in theta), key=lambda r: (-theta[r["name"]], r["name"]))
    for i, r in enumerate(ranked):
        r["rank"] = i + 1
    return ranked + [r for r in rows if r["name"] not in theta]


def model_sets(result: PlacesResult, names: Sequence[str]) -> dict[str, dict[str, list[int]]]:
    """Per eligible bot: ``rank_set`` (all at once, anytime-valid) and ``rank_interval``."""
    return {
        names[int(b)]: {
            "rank_set": [int(result.lo[j]), int(result.hi[j])],
            "rank_interval": [result.ranges[j][0], result.ranges[j][1]],
        }
        for j, b in enumerate(result.eligible)
    }


def _among(eligible: IntArray, n: int) -> BoolArray:
    mask = np.zeros(n, np.bool_)
    mask[eligible] = True
    return np.asarray(mask[:, None] & mask[None, :], np.bool_)


def _place(
    p: int, names: Sequence[str], eligible: IntArray, lo: IntArray, hi: IntArray, share: FloatArray, at: int | None
) -> dict[str, Any]:
    """One entry of the ``places`` list."""
    can = np.flatnonzero((lo <= p) & (p <= hi))
    weight = share[can]
    total = float(weight.sum())
    chance = weight / total if total > 0 else np.full(can.shape[0], 1.0 / max(1, can.shape[0]))
    order = sorted(range(can.shape[0]), key=lambda i: (-chance[i], int(can[i])))
    candidates = [{"bot": names[int(eligible[can[i]])], "chance": rnd(chance[i])} for i in order]
    settled = at is not None and len(candidates) == 1
    return {
        "place": p,
        "settled": settled,
        "settled_at": at if settled else None,
        "bot": candidates[0]["bot"] if settled else None,
        "candidates": candidates,
    }


def _games(cols: Columns, coop: bool) -> tuple[IntArray, IntArray, IntArray]:
    """The rated games in fixture order and, for each, the match count at which it is complete."""
    credit = credit_mask(cols, coop)
    gb, gr = contests(cols, credit, coop)
    if coop:  # one game per deal with two bots or more: complete at the deal's last match
        n = len(cols.names)
        keys = np.unique((cols.deal[:, None] * n + cols.bot)[credit])
        sizes = np.bincount(keys // n, minlength=int(cols.deal.max()) + 1 if cols.matches else 0)
        last = np.zeros(sizes.shape[0], np.int64)
        last[cols.deal] = np.arange(1, cols.matches + 1)  # the last assignment wins: rows are in order
        end = last[sizes >= 2]
    else:
        seated = np.where(cols.seated, cols.bot, -1)
        distinct = np.zeros(cols.matches, np.int64)
        for j in range(seated.shape[1]):
            fresh = seated[:, j] >= 0
            for i in range(j):
                fresh &= seated[:, j] != seated[:, i]
            distinct += fresh
        end = np.flatnonzero(distinct >= 2) + 1
    return gb, gr, np.asarray(end, np.int64)


def contention(
    pairs: PairTally, top: int, margin: float = MARGIN, confidence: float = 0.95
) -> tuple[BoolArray, FloatArray]:
    """Per bot: whether it can still reach the top ``top`` places (fewer than ``top`` bots
    surely above it: more than ``margin`` standard errors of the difference, or with
    ``margin`` 0 past the published claims' boundary at ``confidence``), and its need: the
    open pairs that decide the places it is part of (LUCB's boundary pairs: one of the two
    among the current top ``top``, both contenders, not yet surely apart), each weighted by
    the share of the pair's variance it holds (the noisier learns more)."""
    n = pairs.above.shape[0]
    f = fit(pairs)
    se = f.pair_se()
    var = np.diag(f.cov)
    d = f.theta[:, None] - f.theta[None, :]  # > 0: the row bot looks stronger
    bound = margin if margin > 0 else critical(se, pair_alpha(confidence, n))  # 0: the published claims' boundary
    sure = d > bound * se
    np.fill_diagonal(sure, False)
    contender = sure.sum(axis=0) < top
    order = np.lexsort((np.arange(n), -f.theta))
    place = np.empty(n, np.int64)
    place[order] = np.arange(n)
    deciding = (np.minimum(place[:, None], place[None, :]) < top) & contender[:, None] & contender[None, :]
    open_ = deciding & ~sure & ~sure.T
    np.fill_diagonal(open_, False)
    both = var[:, None] + var[None, :]
    need = (open_ * (var[:, None] / np.where(both > 0, both, 1.0))).sum(axis=1)
    return np.asarray(contender, np.bool_), np.asarray(need, np.float64)


def reason_names(new: BoolArray, contender: BoolArray) -> list[str]:
    """Why each entry of a ladder gets its seats: a new entry is placed ("placement"), one
    that can still reach the prize places is a "contender", the others get the "floor"."""
    return ["placement" if a else "contender" if b else "floor" for a, b in zip(new.tolist(), contender.tolist())]


def ladder_reasons(
    result: PlacesResult, names: Sequence[str], matches: Sequence[int], top: int, confidence: float
) -> dict[str, str]:
    """Why each eligible bot of a ladder gets its seats, as the published model sees it now:
    "placement" (fewer matches than the median), "contender" or "floor"."""
    with threadpool_limits(limits=1):
        contender, _ = contention(result.tally, prize_places(top, result.eligible.shape[0]), MARGIN, confidence)
    played = np.asarray(matches, np.float64)
    new = played < np.median(played[result.eligible]) if result.eligible.size else played < 0
    why = reason_names(new, contender)
    return {names[int(b)]: why[int(b)] for b in result.eligible}


class Watch:
    """The places looked at as a run goes (``stop = "settled"`` on a ladder): each look adds
    the deals since the last one (deals x bots of ranks, NaN where a bot did not play), and
    a claim once made stands. Flat: the tally, never the deals."""

    def __init__(self, bots: int, top: int, confidence: float) -> None:
        self.tally, self.claims = PairTally(bots), Claims.empty(bots)
        self.places = prize_places(top, bots)
        self.alpha = pair_alpha(confidence, bots)
        self.theta: FloatArray | None = None
        self.seen = 0

    def look(self, values: FloatArray) -> tuple[bool, list[int], list[tuple[int, int, bool]], float]:
        """Settled or not, the order (strongest first), and per place p the pair (p-th,
        (p+1)-th, place p settled); and the threshold (1 / alpha'), after ``values``."""
        new = np.asarray(values[self.seen :], np.float64)
        self.seen = values.shape[0]
        absent = np.isnan(new)
        width = int((~absent).sum(axis=1).max(initial=0))
        order = np.argsort(absent, axis=1, kind="stable")[:, :width]
        present = ~np.take_along_axis(absent, order, 1)
        with threadpool_limits(limits=1):
            self.tally.add(np.where(present, order, -1), np.where(present, np.take_along_axis(new, order, 1), 0.0))
            f = fit(self.tally, self.theta)
            self.theta = f.theta
            self.claims.add(new_claims(f, self.alpha))
        n = f.theta.shape[0]
        self.claims.settle(np.arange(n), self.places, self.seen)
        best = [int(b) for b in np.lexsort((np.arange(n), -f.theta))]
        pairs = [(best[p], best[p + 1], p + 1 in self.claims.since) for p in range(min(self.places, n - 1))]
        return all(ok for _, _, ok in pairs), best, pairs, 1.0 / self.alpha


@dataclass
class FinalResult:
    """A ladder's final as its journal stands: the finalists (the season's order), what was
    played, whether its prize places are settled, and the finalists in the final's order
    with their rank sets and places among the finalists."""

    season_order: list[str]  # the season's eligible bots, by the season's fit
    finalists: list[str]  # the first of them, season order
    played: int  # the final's matches in the journal
    looks: int  # whole blocks looked at
    settled: bool  # the final's prize places settled at a look
    end: int  # the fixture index past the final's last match to play (settled: its block's end)
    order: list[str]  # the finalists, the final's order (season order before the final's first match)
    rank_sets: dict[str, list[int]]  # finalist -> [lo, hi] among the finalists (anytime-valid)
    ranges: dict[str, list[int]]  # finalist -> the central confidence range of its place over the draws
    places: list[dict[str, Any]]  # the prize places among the finalists (``places``' shape)
    spent: bool  # every match of the budget played

    @property
    def over(self) -> bool:
        """True once the final is done: settled, or every match of its budget played."""
        return self.settled or self.spent

    def document(self, plan: FinalPlan) -> dict[str, Any]:
        """The ``final`` field of standings.json."""
        return {
            "bots": plan.finalists,
            "budget": plan.matches,
            "first_match": plan.start,
            "played": self.played,
            "settled": self.settled,
            "over": self.over,
            "finalists": list(self.finalists),
            "order": list(self.order),
        }


class FinalWatch:
    """A ladder's final from the journal lines (any order): who finished above whom by bot
    name (flat: a tally of the bots, the disqualified, the matches played), and the final's
    own lines (at most its budget). The finalists are the top of the season's order: the
    Plackett-Luce fit of the season's pairs, the bots of its last lineup that played and
    were never disqualified, strongest first (a name breaks a tie).

    The final's places are looked at after each whole block, on the fit of every match,
    the season's and the final's (the finalists' season matches are most of what is known
    of them), with the prize places' claims: each pair's time-uniform boundary with
    Bonferroni over the pairs of the season's eligible bots, the same family the season's
    published claims draw on, so a claim holds whichever look made it and however the
    finalists were chosen. Each block's tables seat the finalists still in contention
    (``focus``: not placed below the prize places by the claims, and fewer than ``top``
    finalists ``FOCUS_MARGIN`` standard errors above; at least a table's worth). Looks are kept as they are made (a whole block never changes), so a run that
    looks after every block fits once per block."""

    def __init__(self, plan: FinalPlan, lineup: Sequence[str], top: int, confidence: float) -> None:
        self.plan, self.lineup = plan, list(lineup)
        self.top, self.confidence = top, confidence
        self.pos: dict[str, int] = {}
        self.tally = PairTally()
        self.played: list[int] = []
        self.dq: set[str] = set()
        self.rows: list[tuple[int, list[str], list[int]]] = []  # the final's lines: index, bots, ranks
        self._pending: dict[int, list[tuple[list[int], list[int]]]] = {}  # seats -> season lines not yet tallied
        self._waiting = 0
        self._looks: _Looks | None = None
        self._focus: dict[int, dict[int, int]] = {}  # block -> its focus (asked once per fixture)

    def add(self, d: Mapping[str, Any]) -> None:
        """Count one journal line: the season's, or the final's."""
        index = int(d["index"])
        if index >= self.plan.start:
            self.rows.append((index, list(d["bots"]), list(d["ranks"])))
            if any(index < self.plan.start + b * self.plan.block_tables() for b in self._focus):
                self._focus = {}  # a line of a block looked at already (only in a damaged journal)
            return
        for seat in d.get("disqualified") or ():
            self.dq.add(d["bots"][seat])
        ids = [self._id(b) for b in d["bots"]]
        for b in set(ids):
            self.played[b] += 1
        self._pending.setdefault(len(ids), []).append((ids, list(d["ranks"])))
        self._waiting += 1
        if self._waiting >= 4096:
            self._flush()
        self._looks = None  # a season's line after the looks (only in a damaged journal): look again
        self._focus = {}

    def _flush(self) -> None:
        """Count the season's lines kept back (tallied in bulk: one numpy pass per few thousand)."""
        for rows in self._pending.values():
            self.tally.add(np.asarray([r[0] for r in rows], np.int64), np.asarray([r[1] for r in rows], np.float64))
        self._pending, self._waiting = {}, 0

    def watch(self, records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """``records``, each counted as it passes."""
        for d in records:
            self.add(d)
            yield d

    def _id(self, name: str) -> int:
        if name not in self.pos:
            self.pos[name] = len(self.pos)
            self.played.append(0)
            self.tally.grow(len(self.pos))
        return self.pos[name]

    def season_order(self) -> list[str]:
        """The season's eligible bots, strongest first by the season's fit."""
        return self._start().season

    def finalists(self) -> list[str]:
        """The top ``plan.finalists`` of the season's order."""
        return self._start().finalists

    def focus(self, block: int) -> dict[int, int]:
        """The finalists block ``block`` seats (positions in ``finalists()`` -> the final's
        matches each played before it): after the looks at the blocks before it, those that
        can still take a prize place, then the strongest others until a table is full."""
        if block in self._focus:
            return self._focus[block]
        looks = self._look(block)
        at = {b: i for i, b in enumerate(looks.finalists)}
        first = self.plan.start + block * self.plan.block_tables()
        counts = [0] * len(looks.finalists)
        for index, bots, _ in self.rows:
            if self.plan.start <= index < first:
                for b in set(bots) & at.keys():
                    counts[at[b]] += 1
        self._focus = {block: {i: counts[i] for i in self._contenders(looks)}}
        return self._focus[block]

    def _contenders(self, looks: _Looks) -> list[int]:
        """Those that can still take a prize place, then the strongest others to fill a table."""
        n = len(looks.finalists)
        sub = looks.theta[looks.at]
        order = sorted(range(n), key=lambda i: (-float(sub[i]), i))
        k = prize_places(self.top, n)
        if looks.cov is None:  # no look yet: all of them
            return list(range(n))
        cov = looks.cov[np.ix_(looks.at, looks.at)]
        v = np.diag(cov)
        se = np.sqrt(np.maximum(v[:, None] + v[None, :] - 2 * cov, 0.0))
        above = (sub[:, None] - sub[None, :]) > FOCUS_MARGIN * se  # [a, b]: a is clearly above b
        np.fill_diagonal(above, False)
        lo, _ = looks.claims.rank_sets(np.arange(n))
        keep = [i for i in order if int(lo[i]) <= k and int(above[:, i].sum()) < k]
        keep += [i for i in order if i not in keep][: max(0, self.plan.players - len(keep))]
        return sorted(keep)

    def _start(self) -> _Looks:
        """The looks so far (made when first asked: the season's fit and the finalists)."""
        if self._looks is None:
            self._flush()
            eligible = [b for b in self.lineup if b in self.pos and self.played[self.pos[b]] and b not in self.dq]
            with threadpool_limits(limits=1):
                f = fit(self.tally) if eligible else Fit(np.zeros(len(self.pos)), np.zeros((0, 0)))
            season = sorted(eligible, key=lambda b: (-float(f.theta[self.pos[b]]), b))
            finalists = season[: self.plan.finalists]
            tally = PairTally(self.tally.above.shape[0])
            tally.above, tally.seats = self.tally.above.copy(), self.tally.seats
            self._looks = _Looks(
                season,
                finalists,
                np.asarray([self.pos[b] for b in finalists], np.int64),
                tally,
                Claims.empty(len(finalists)),
                f.theta,
                pair_alpha(self.confidence, len(season)),
            )
        return self._looks

    def _look(self, upto: int) -> _Looks:
        """The looks at every whole block before ``upto`` (until one settles the places)."""
        looks = self._start()
        blocks = self.plan.blocks()
        if looks.done >= min(upto, len(blocks)) or looks.settled_at is not None:
            return looks
        per = self._blocks(looks.done, upto)
        k = prize_places(self.top, len(looks.finalists))
        with threadpool_limits(limits=1):
            for b in range(looks.done, min(upto, len(blocks))):
                lo, hi = blocks[b]
                if len(per.get(b, ())) < hi - lo:
                    break  # a block in play: no look before it is whole
                _tally_rows(looks.tally, per[b], self.pos)
                f = fit(looks.tally, looks.theta)
                looks.theta, looks.cov, looks.done = f.theta, f.cov, b + 1
                sub = new_claims(f, looks.alpha)[np.ix_(looks.at, looks.at)]
                looks.claims.add(sub)
                looks.claims.settle(np.arange(len(looks.finalists)), k, hi)
                if k and all(p in looks.claims.since for p in range(1, k + 1)):
                    looks.settled_at = hi
                    break
        return looks

    def _blocks(self, first: int, upto: int) -> dict[int, list[tuple[list[str], list[int]]]]:
        """The final's rows of blocks ``first`` to ``upto`` (excluded), by block."""
        out: dict[int, list[tuple[list[str], list[int]]]] = {}
        for index, bots, ranks in sorted(self.rows, key=lambda r: r[0]):
            if self.plan.holds(index) and first <= self.plan.block_of(index) < upto:
                out.setdefault(self.plan.block_of(index), []).append((bots, ranks))
        return out

    def result(self, seed: int | None = None) -> FinalResult:
        """The final as it stands: looks at every whole block in order, up to the first that
        settles the prize places; with ``seed``, the places' chances (normal draws)."""
        looks = self._look(len(self.plan.blocks()))
        finalists, n = looks.finalists, len(looks.finalists)
        end = looks.settled_at if looks.settled_at is not None else self.plan.end
        rows = [r for r in self.rows if self.plan.holds(r[0]) and r[0] < end]
        tally = PairTally(looks.tally.above.shape[0])
        tally.above, tally.seats = looks.tally.above.copy(), looks.tally.seats
        done = self.plan.blocks()[looks.done - 1][1] if looks.done else self.plan.start
        with threadpool_limits(limits=1):
            _tally_rows(tally, [(b, r) for i, b, r in rows if i >= done], self.pos)  # a block in play
            f = fit(tally, looks.theta)
        theta = f.theta[looks.at] if n else np.zeros(0)
        at = {b: i for i, b in enumerate(finalists)}
        order = sorted(finalists, key=lambda b: (-float(theta[at[b]]), at[b])) if rows else list(finalists)
        lo_, hi_ = looks.claims.rank_sets(np.arange(n))
        sets = {b: [int(lo_[at[b]]), int(hi_[at[b]])] for b in finalists}
        ranges, places = {}, []
        k = prize_places(self.top, n)
        if seed is not None and n:
            with threadpool_limits(limits=1):
                pos = draw_positions(f, looks.at, seed) if rows else _fixed(n, [at[b] for b in order])
            share = chances(pos, k)
            ranges = {b: list(r) for b, r in zip(finalists, position_ranges(pos, self.confidence))}
            places = [
                _place(p, finalists, np.arange(n), lo_, hi_, share[p - 1], looks.claims.since.get(p))
                for p in range(1, k + 1)
            ]
        spent = len(rows) == self.plan.matches or n < self.plan.players  # too few finalists: no final to play
        settled = looks.settled_at is not None
        return FinalResult(
            looks.season, finalists, len(rows), looks.done, settled, end, order, sets, ranges, places, spent
        )


@dataclass
class _Looks:
    """The final's looks so far: the season's order, the finalists (and their tally
    positions), the tally of every match counted, the claims among the finalists, the fit,
    the pairs' error, the blocks looked at and the end of the block that settled it."""

    season: list[str]
    finalists: list[str]
    at: IntArray
    tally: PairTally
    claims: Claims
    theta: FloatArray
    alpha: float
    cov: FloatArray | None = None  # the fit's covariance at the last look
    done: int = 0
    settled_at: int | None = None


def _tally_rows(tally: PairTally, rows: Sequence[tuple[list[str], list[int]]], pos: Mapping[str, int]) -> None:
    """Count the final's ``rows`` (bots, ranks) in ``tally`` (``pos``: name -> position)."""
    if rows:
        bots = np.asarray([[pos.get(b, -1) for b in bots] for bots, _ in rows], np.int64)
        tally.add(bots, np.asarray([ranks for _, ranks in rows], np.float64))


def _fixed(n: int, order: Sequence[int]) -> IntArray:
    """Draws that all put the bots in ``order`` (no final match yet: the season's order)."""
    pos = np.empty(n, np.int64)
    pos[np.asarray(order, np.int64)] = np.arange(n)
    return np.asarray(np.broadcast_to(pos, (DRAWS, n)), np.int64)
