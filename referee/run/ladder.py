"""Matchmaking for the ladder (pure, numpy): the tables of each epoch.

Tables come in epochs of ``epoch_tables``. The tables of epoch k are a pure function of
the seed, the rules, the lineup (the entries in play, in config order) and a ``Summary``
holding the seats assigned in epochs < k and the results of epochs < k - ``lag`` (so
epoch k can be chosen while epoch k - 1 is still playing).

The policy answers the prize question: which entries take places 1..``top``, in order.
Per epoch, each entry gets a number of seats (its quota): first the floor (no entry
below ``floor`` times the mean match count: an entry that surely cannot reach the prize
places keeps its rating current and can come back), then new entries (fewer matches than
the field's median: placed first, up to ``new_share`` of the epoch, one seat per table),
then the contenders by need. Need comes from the opponent-adjusted model the places are
published from (``stats/places.py``: Plackett-Luce strengths fitted on who finished above
whom, with their covariance): an entry is out of contention once ``top`` entries are
surely above it as the page says it (the published claims' boundary at ``confidence``;
``margin`` > 0: that many standard errors of the difference instead, which in
``benchmarks/season_sim.py`` put the best bot first more often at small budgets but settled
nothing and left wider rank sets); the open pairs that decide the places (one of the two
among the current top ``top``, not yet surely apart) are LUCB's boundary pairs
(Kalyanakrishnan et al. 2012: sample the arms whose intervals straddle the top-k
boundary; the eliminated drop to the floor, as in successive elimination), and each open
pair's seats go to its two entries in proportion to their variance (the noisier learns
more), capped at ``cap`` times the mean. Tables draw their entries in proportion to the
quotas, so contenders mostly meet contenders (what separates them best; the model is
opponent-adjusted, so that does not bias the verdicts); seats go to the positions each
entry has held least. docs/seasons.md, "The ladder", says why and what was measured
(``python -m benchmarks.season_sim``).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from referee.stats.columns import BoolArray, FloatArray, IntArray
from referee.stats.places import DEFAULT_TOP, MARGIN, PairTally, contention, reason_names

MIN_EPOCH_TABLES = 64


def epoch_size(bots: int, players: int) -> int:
    """Tables per epoch for a ladder that starts with ``bots``: every bot can sit once (at least 64)."""
    return max(MIN_EPOCH_TABLES, -(-bots // players))


@dataclass(frozen=True)
class LadderRules:
    """The fixed parameters of a ladder's matchmaking (the module docstring says what each does)."""

    players: int
    epoch_tables: int = MIN_EPOCH_TABLES
    lag: int = 1
    floor: float = 0.35
    cap: float = 8.0
    new_share: float = 0.5
    top: int = DEFAULT_TOP
    margin: float = MARGIN  # se of the difference; 0: out only once the published claims say so
    confidence: float = 0.95


class Summary:
    """What matchmaking keeps of the matches: per entry (a bot or a version, by key) its
    assigned matches, seats per position, and the count, sum and sum of squares of its
    ranks. Integers only, a few per entry: flat in the number of matches."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.keys: list[str] = []
        self.pos: dict[str, int] = {}
        self.assigned = np.zeros(0, np.int64)
        self.seats = np.zeros((0, players), np.int64)
        self.played = np.zeros(0, np.int64)
        self.rank_sum = np.zeros(0, np.int64)
        self.rank_sq = np.zeros(0, np.int64)
        self.pairs = PairTally()

    def ids(self, keys: Sequence[str]) -> IntArray:
        """The entry numbers of ``keys``, adding the ones not seen before."""
        for key in keys:
            if key not in self.pos:
                self.pos[key] = len(self.keys)
                self.keys.append(key)
        grow = len(self.keys) - self.assigned.shape[0]
        if grow:
            self.assigned = np.concatenate([self.assigned, np.zeros(grow, np.int64)])
            self.seats = np.concatenate([self.seats, np.zeros((grow, self.players), np.int64)])
            self.played = np.concatenate([self.played, np.zeros(grow, np.int64)])
            self.rank_sum = np.concatenate([self.rank_sum, np.zeros(grow, np.int64)])
            self.rank_sq = np.concatenate([self.rank_sq, np.zeros(grow, np.int64)])
            self.pairs.grow(len(self.keys))
        return np.array([self.pos[k] for k in keys], np.int64)

    def assign(self, lineup: Sequence[str], tables: IntArray) -> None:
        """Count the seats of ``tables`` (positions in ``lineup``, tables x players) as assigned."""
        self._seats(self.ids(lineup)[tables])

    def record(self, lineup: Sequence[str], tables: IntArray, ranks: IntArray) -> None:
        """Count the results: ``ranks[t, s]`` of the bot in seat ``s`` of table ``t``."""
        self._results(self.ids(lineup)[tables], np.asarray(ranks, np.int64))

    def assign_lines(self, lines: Iterable[Mapping[str, Any]]) -> None:
        """Count the seats of journal lines (their ``bots`` are entry keys) as assigned."""
        who, _ = self._lines(lines)
        self._seats(who)

    def record_lines(self, lines: Iterable[Mapping[str, Any]]) -> None:
        """Count the results of journal lines (their ``bots`` are entry keys)."""
        self._results(*self._lines(lines))

    def _lines(self, lines: Iterable[Mapping[str, Any]]) -> tuple[IntArray, IntArray]:
        keys: list[str] = []
        ranks: list[int] = []
        for d in lines:
            keys.extend(d["bots"])
            ranks.extend(d["ranks"])
        shape = (-1, self.players)
        return self.ids(keys).reshape(shape), np.array(ranks, np.int64).reshape(shape)

    def _seats(self, who: IntArray) -> None:
        n = len(self.keys)
        self.assigned += np.bincount(who.ravel(), minlength=n)
        for s in range(self.players):
            self.seats[:, s] += np.bincount(who[:, s], minlength=n)

    def _results(self, who: IntArray, ranks: IntArray) -> None:
        n = len(self.keys)
        flat, r = who.ravel(), ranks.ravel().astype(np.float64)
        self.played += np.bincount(flat, minlength=n)
        self.rank_sum += np.bincount(flat, weights=r, minlength=n).astype(np.int64)
        self.rank_sq += np.bincount(flat, weights=r * r, minlength=n).astype(np.int64)
        self.pairs.add(who, ranks)

    def view(self, lineup: Sequence[str]) -> dict[str, IntArray]:
        """The lineup's rows (zeros for keys never seen), without adding them."""
        idx = np.array([self.pos.get(k, -1) for k in lineup], np.int64)
        known = idx >= 0
        out = {}
        for name in ("assigned", "played", "rank_sum", "rank_sq"):
            col = getattr(self, name)
            out[name] = np.where(known, col[np.maximum(idx, 0)] if col.size else 0, 0).astype(np.int64)
        seats = self.seats[np.maximum(idx, 0)] if self.seats.size else np.zeros((len(lineup), self.players), np.int64)
        out["seats"] = np.where(known[:, None], seats, 0).astype(np.int64)
        return out

    def pairs_of(self, lineup: Sequence[str]) -> PairTally:
        """Who finished above whom among the lineup's entries (zeros for keys never seen)."""
        idx = np.array([self.pos.get(k, -1) for k in lineup], np.int64)
        out = PairTally(len(lineup))
        out.seats = max(self.pairs.seats, self.players)
        known = np.flatnonzero(idx >= 0)
        if known.size:
            out.above[np.ix_(known, known)] = self.pairs.above[np.ix_(idx[known], idx[known])]
        return out


def choose_epoch(rules: LadderRules, seed: int, lineup: Sequence[str], summary: Summary, epoch: int) -> IntArray:
    """The tables of ``epoch``: positions in ``lineup``, one row per table, in seat order.

    ``summary`` must hold the seats assigned in epochs < ``epoch`` and the results of epochs
    < ``epoch - rules.lag``; it is not changed.
    """
    k, t = rules.players, rules.epoch_tables
    if len(set(lineup)) != len(lineup):
        raise ValueError("the lineup names an entry twice")
    if len(lineup) < k:
        raise ValueError(f"a ladder needs at least {k} bots, got {len(lineup)}")
    rng = random.Random(_seed(seed, epoch))
    v = summary.view(lineup)
    with threadpool_limits(limits=1):  # one BLAS thread: the same sums on every machine
        quota = quotas(
            rules, v, rng, contention(summary.pairs_of(lineup), rules.top, rules.margin, rules.confidence)[1]
        )
    tables = _fill(quota, t, k, rng)
    return _seat(tables, v["seats"], rng)


def quotas(rules: LadderRules, v: Mapping[str, IntArray], rng: random.Random, need: FloatArray) -> IntArray:
    """Seats per entry in the next epoch: floor, then new entries, then by ``need``, capped."""
    k, t = rules.players, rules.epoch_tables
    seats = t * k
    a = v["assigned"]
    n = a.shape[0]
    mean_after = (float(a.sum()) + seats) / n
    new = a < np.median(a)
    floor = np.clip(np.ceil(rules.floor * mean_after - a), 0, t).astype(np.int64)
    quota = _take(floor, seats, rng)
    room = seats - int(quota.sum())
    if new.any() and room:
        want = np.where(new, np.minimum(np.median(a) - a, t), 0).astype(np.int64)
        share = math.ceil(rules.new_share * seats / int(new.sum()))
        want = np.minimum(np.maximum(want - quota, 0), share)
        quota += _take(want, min(room, int(rules.new_share * seats)), rng)
        room = seats - int(quota.sum())
    if room:
        cap = np.where(new, t, np.clip(np.floor(rules.cap * mean_after - a), 0, t)).astype(np.int64)
        cap = np.maximum(cap - quota, 0)
        need = np.where(new, 0.0, need)
        quota += _spread(need, cap, room, rng)
        room = seats - int(quota.sum())
    if room:  # every cap reached: the rest as evenly as one seat per table allows
        quota += _spread(np.ones(n), t - quota, room, rng)
    return quota


def _take(want: IntArray, total: int, rng: random.Random) -> IntArray:
    """``want`` if it fits in ``total``; else ``total`` seats, one at a time to the largest remaining want."""
    if int(want.sum()) <= total:
        return want.copy()
    return _spread(want.astype(np.float64), want, total, rng)


def _spread(weight: FloatArray, cap: IntArray, total: int, rng: random.Random) -> IntArray:
    """``total`` seats in proportion to ``weight`` (all alike if none), at most ``cap`` each
    (water-filling, then largest remainders with seeded tie-breaks); fewer if caps bind."""
    cap = np.maximum(cap, 0)
    total = min(total, int(cap.sum()))
    if total <= 0:
        return np.zeros(cap.shape[0], np.int64)
    w = np.where(cap > 0, np.maximum(weight, 0.0), 0.0)
    if not w.sum() > 0:
        w = (cap > 0).astype(np.float64)
    x = _water(w, cap.astype(np.float64), float(total))
    out = np.floor(x).astype(np.int64)
    left = total - int(out.sum())
    if left:
        tie = np.array([rng.random() for _ in range(out.shape[0])])
        frac = np.where(out < cap, x - out, -1.0)
        pick = np.lexsort((tie, -frac))[:left]
        out[pick] += 1
    return out


def _water(w: FloatArray, cap: FloatArray, total: float) -> FloatArray:
    """``min(cap, lam * w)`` with the ``lam`` that makes it sum to ``total`` (sum of caps >= total)."""
    pos = w > 0
    if float(cap[pos].sum()) <= total:  # the weighted ones fill up; the rest evenly over the others
        x = np.where(pos, cap, 0.0)
        rest = ~pos & (cap > 0)
        if rest.any():
            x = x + np.where(rest, _water(rest.astype(np.float64), np.where(rest, cap, 0.0), total - x.sum()), 0.0)
        return x
    ratio = np.where(pos, cap / np.where(pos, w, 1.0), np.inf)
    order = np.argsort(ratio, kind="stable")[: int(pos.sum())]
    r, ws, cs = ratio[order], w[order], cap[order]
    capped = np.concatenate([[0.0], np.cumsum(cs)])  # caps of the first i (their ratio is below lam)
    free = np.concatenate([np.cumsum(ws[::-1])[::-1], [0.0]])  # weights from i on
    # the sum at lam = r[i] grows with i: the first i where it reaches total bounds lam
    i = int(np.searchsorted(capped[1:] + r * free[1:], total, side="left"))
    lam = (total - capped[i]) / free[i]
    return np.where(pos, np.minimum(cap, lam * w), 0.0)


def _fill(quota: IntArray, tables: int, k: int, rng: random.Random) -> IntArray:
    """``tables`` tables of ``k`` distinct entries, entry j in ``quota[j]`` of them (each
    quota <= tables, sum = tables * k): an entry whose quota equals the tables left must sit;
    the other seats are drawn in proportion to the quota left."""
    left = quota.astype(np.int64).copy()
    out = np.empty((tables, k), np.int64)
    for t in range(tables):
        remaining = tables - t
        chosen = [int(j) for j in np.flatnonzero(left == remaining)]
        avail = left.copy()
        avail[chosen] = 0
        while len(chosen) < k:
            cum = np.cumsum(avail)
            j = int(np.searchsorted(cum, rng.randrange(int(cum[-1])), side="right"))
            chosen.append(j)
            avail[j] = 0
        out[t] = chosen
        left[chosen] -= 1
    return out


def _seat(tables: IntArray, seats: IntArray, rng: random.Random) -> IntArray:
    """Each table's bots in the seat order that keeps each bot's seat counts most even
    (the smallest sum of squared excesses over its least-held seat; seeded tie-breaks)."""
    k = tables.shape[1]
    counts = seats.copy()
    perms = np.array(list(permutations(range(k))) if k <= 6 else [tuple(range(k))], np.int64)
    out = np.empty_like(tables)
    for t in range(tables.shape[0]):
        bots = tables[t]
        c = counts[bots]  # bot x seat
        excess = (c - c.min(axis=1, keepdims=True) + 1) ** 2
        cost = excess[np.arange(k)[None, :], perms].sum(axis=1)  # perms[p, i]: the seat of bot i
        best = np.flatnonzero(cost == cost.min())
        p = perms[best[rng.randrange(best.shape[0])]]
        row = np.empty(k, np.int64)
        row[p] = bots
        out[t] = row
        counts[row, np.arange(k)] += 1
    return out


def _seed(seed: int, epoch: int) -> int:
    """The generator seed of ``epoch`` (stable across platforms and versions)."""
    return int.from_bytes(hashlib.sha256(f"referee/ladder/{seed}/{epoch}".encode()).digest()[:8], "big")


def seat_spread(summary: Summary, lineup: Sequence[str]) -> IntArray:
    """Per entry of the lineup: most minus fewest times in one seat position."""
    s = summary.view(lineup)["seats"]
    return np.asarray(s.max(axis=1) - s.min(axis=1), np.int64)


def reasons(rules: LadderRules, summary: Summary, lineup: Sequence[str]) -> list[str]:
    """Per entry of the lineup, why it gets its seats now: "placement" (a new entry),
    "contender" (it can still reach the prize places) or "floor" (it surely cannot)."""
    with threadpool_limits(limits=1):
        contender, _ = contention(summary.pairs_of(lineup), rules.top, rules.margin, rules.confidence)
    return reason_names(new_entries(summary, lineup), contender)


def new_entries(summary: Summary, lineup: Sequence[str]) -> BoolArray:
    """Entries that the ladder still treats as new (fewer matches than the median)."""
    a = summary.view(lineup)["assigned"]
    return np.asarray(a < np.median(a), np.bool_)
