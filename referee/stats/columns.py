"""Per-match columns of a journal (pure, numpy): what every published number is computed from.

``build_columns`` reads an iterable of journal line dicts ONCE, keeps from each line only
what the standings and verdicts need, in typed buffers (a few bytes per seat), and never
holds a whole record. The lines may come in any order: the columns are sorted by the
match ``index`` at the end (the last line of an index wins, as in ``--resume``), so the
same set of lines always gives the same arrays, whatever the file order.

Per match ``m`` and seat ``s`` (seats padded with bot ``-1`` up to the widest table):
``bot[m, s]`` (position in the config's bot list), ``score``, ``rank``, ``faults[m, s, k]``
(act faults per kind of ``FAULT_KINDS``), ``notice`` (failed start/end messages),
``forfeited``, ``disqualified``, ``decisions``, ``restarts``, ``stats[m, s, j]`` (the
game's stat ``j``, NaN when absent), ``won`` (the ``won`` stat, for cooperative wins);
per match ``index``, ``deal`` (deal number, numbered in fixture order; a match without
``deal`` is a deal of its own). Response times (``latency_ms``, when a journal still has
them) go only into a per-bot log-scale histogram for ``timings.json``.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.errors import JournalError
from referee.record import FAULT_KINDS
from referee.store.timings import LogBuckets

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# response-time histogram: 100 bins per decade from 0.001 ms to 1000 s (about 2.3 % wide),
# plus underflow and overflow; its figures are the upper edges of the bins
LAT_BINS = 9 * 100 + 2
LATENCY_BUCKETS = LogBuckets(0.001, 100, last=LAT_BINS - 1)
_FLUSH = 1 << 20


@dataclass
class Columns:
    """The arrays of a journal, in fixture order (see the module docstring)."""

    names: list[str]
    stat_keys: list[str]
    lower: bool
    index: IntArray
    deal: IntArray
    bot: IntArray
    score: FloatArray
    rank: IntArray
    faults: IntArray
    notice: IntArray
    forfeited: BoolArray
    disqualified: BoolArray
    decisions: IntArray
    restarts: IntArray
    stats: FloatArray
    won: FloatArray
    voided: IntArray
    ids: dict[int, str]  # match id of every match with a disqualification, by row
    latency_hist: IntArray = field(default_factory=lambda: np.zeros((0, LAT_BINS), np.int64))
    latency_max: FloatArray = field(default_factory=lambda: np.zeros(0))  # exact, per bot
    duration_s: float = 0.0
    listed: int | None = None  # the first ``listed`` names are the tournament's; the rest only played (removed)

    @property
    def ranked(self) -> int:
        """How many of ``names`` (the first ones) are ranked: the tournament's bots."""
        return len(self.names) if self.listed is None else self.listed

    @property
    def matches(self) -> int:
        """Number of matches."""
        return int(self.index.shape[0])

    @property
    def seated(self) -> BoolArray:
        """True where a seat holds a bot (not padding)."""
        return np.asarray(self.bot >= 0)

    @property
    def n_deals(self) -> int:
        """Number of distinct deals."""
        return int(self.deal.max()) + 1 if self.deal.size else 0


class _Buffers:
    """Typed, growing buffers: one entry per match or per seat."""

    def __init__(self, n_stats: int) -> None:
        self.index = array("q")
        self.deal_kind = array("b")
        self.deal_value = array("q")
        self.width = array("b")
        self.voided = array("q")
        self.bot = array("q")
        self.score = array("d")
        self.rank = array("q")
        self.forfeited = array("b")
        self.disqualified = array("b")
        self.decisions = array("q")
        # rare counts, sparse: (line, seat, value), faults also by kind
        self.fault_at = array("q")
        self.fault_n = array("q")
        self.notice_at = array("q")
        self.notice_n = array("q")
        self.restart_at = array("q")
        self.restart_n = array("q")
        self.stats = array("d")
        self.won = array("d")
        self.n_stats = n_stats


class _Others(dict[str, int]):
    """Bot positions that give a bot not in the list the next one (``build_columns(others=True)``)."""

    def __missing__(self, name: str) -> int:
        if not isinstance(name, str) or not name:
            raise KeyError(name)
        self[name] = len(self)
        return self[name]


def build_columns(
    lines: Iterable[Mapping[str, Any]],
    names: Sequence[str],
    stat_keys: Sequence[str],
    where: str = "matches.jsonl",
    others: bool = False,
) -> Columns:
    """The columns of the journal ``lines`` (any order) for the bots ``names`` (config order).

    A line seating a bot not in ``names`` is an error, unless ``others``: then such bots
    (removed from the tournament) follow ``names`` in name order, and ``Columns.listed``
    says how many are the tournament's."""
    pos: dict[str, int] = _Others() if others else {}
    pos.update((n, i) for i, n in enumerate(names))
    buf = _Buffers(len(stat_keys))
    ids: dict[int, str] = {}
    lat_bot = array("i")
    lat_val = array("d")
    hist = np.zeros((len(names), LAT_BINS), np.int64)
    top = np.full(len(names), -np.inf)
    durations = array("d")
    lower: bool | None = None
    lower_at_index = -1
    kinds = {k: i for i, k in enumerate(FAULT_KINDS)}
    nk = len(FAULT_KINDS)
    n = 0
    for batch in _batches(lines):
        # the common line (no faults, restarts or response times) a batch at a time, with
        # whole-batch conversions in C; any other batch line by line, with the exact checks
        found = _take_batch(batch, buf, pos, stat_keys, durations)
        if found is not None:
            idx_min, low, dq_ids = found
            if lower is None or idx_min < lower_at_index:
                lower, lower_at_index = low, idx_min
            ids.update(dq_ids)
            n += len(batch)
            continue
        for d in batch:
            n += 1
            try:
                _take(d, buf, pos, stat_keys, kinds, nk, lat_bot, lat_val, durations)
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                ident = d.get("id") if isinstance(d, Mapping) else None
                raise JournalError(f"{where}: match {ident!r} (line {n}): {_why(exc)}") from None
            idx = int(d["index"])
            if lower is None or idx < lower_at_index:
                lower, lower_at_index = bool(d.get("lower_is_better", False)), idx
            if d.get("disqualified"):
                ids[idx] = str(d.get("id", ""))
            if len(lat_val) >= _FLUSH:
                hist, top = _room(hist, top, len(pos))
                _flush(hist, top, lat_bot, lat_val)
                lat_bot, lat_val = array("i"), array("d")
    hist, top = _room(hist, top, len(pos))
    _flush(hist, top, lat_bot, lat_val)
    every = list(names)
    if len(pos) > len(names):  # removed bots in name order, whatever the order of the lines
        every, hist, top = _name_order(buf, pos, len(names), hist, top)
    cols = _assemble(buf, every, list(stat_keys), bool(lower), ids, hist, math.fsum(durations))
    cols.latency_max = top
    cols.listed = len(names) if others else None
    return cols


def _room(hist: IntArray, top: FloatArray, n: int) -> tuple[IntArray, FloatArray]:
    """The response-time arrays with a row for each of ``n`` bots."""
    grow = n - hist.shape[0]
    if grow <= 0:
        return hist, top
    return np.concatenate([hist, np.zeros((grow, LAT_BINS), np.int64)]), np.concatenate([top, np.full(grow, -np.inf)])


def _name_order(
    buf: _Buffers, pos: Mapping[str, int], listed: int, hist: IntArray, top: FloatArray
) -> tuple[list[str], IntArray, FloatArray]:
    """Renumber the bots after the first ``listed`` in name order: (names, hist, top)."""
    found = sorted(pos, key=pos.__getitem__)
    every = found[:listed] + sorted(found[listed:])
    at = {n: i for i, n in enumerate(every)}
    new = np.array([at[n] for n in found], np.int64)
    bots = np.frombuffer(buf.bot, np.int64) if len(buf.bot) else np.zeros(0, np.int64)
    renumbered = array("q")
    renumbered.frombytes(new[bots].tobytes())
    buf.bot = renumbered
    h, t = np.empty_like(hist), np.empty_like(top)
    h[new], t[new] = hist, top
    return every, h, t


_BATCH = 2048


def _batches(lines: Iterable[Mapping[str, Any]]) -> Iterator[list[Mapping[str, Any]]]:
    """The lines in lists of at most ``_BATCH``."""
    it = iter(lines)
    while batch := list(islice(it, _BATCH)):
        yield batch


def _take_batch(
    batch: list[Mapping[str, Any]],
    b: _Buffers,
    pos: Mapping[str, int],
    stat_keys: Sequence[str],
    durations: array[float],
) -> tuple[int, bool, dict[int, str]] | None:
    """Append a batch of common lines to the buffers: (smallest index, its ``lower_is_better``,
    ids of lines with a disqualification); None (nothing appended) if a line is not common
    or fails a check, so that the line-by-line path takes the batch and names the problem."""
    k = _common_width(batch)
    if k is None:
        return None
    try:
        index = [d["index"] for d in batch]
        scores = [x for d in batch for x in d["scores"]]
        ranks = [x for d in batch for x in d["ranks"]]
        decisions = [x for d in batch for x in d["decisions"]]
        seat_stats = [st for d in batch for st in (d.get("stats") or ())]
        deals = [d.get("deal") for d in batch]
        voided = [d.get("voided", 0) for d in batch]
        dur = [d.get("duration_s", 0.0) for d in batch]
        seat_bots = [pos[name] for d in batch for name in d["bots"]]
    except (KeyError, TypeError, AttributeError):
        return None
    m = len(batch)
    ints = (index, ranks, decisions, voided)
    if not all(_INT_TYPE.issuperset(map(type, x)) for x in ints) or not _NUMBER_TYPES.issuperset(map(type, scores)):
        return None
    if len(scores) != m * k or len(ranks) != m * k or len(decisions) != m * k or len(seat_stats) != m * k:
        return None
    if not all(type(st) is dict for st in seat_stats) or not _NUMBER_TYPES.issuperset(map(type, dur)):
        return None
    try:
        idx = np.array(index, np.int64)
        sc = np.array(scores, np.float64)
        rk = np.array(ranks, np.int64)
        dc = np.array(decisions, np.int64)
        np.array(voided, np.int64)
    except OverflowError:
        return None
    if idx.min() < 0 or rk.min() < 1 or rk.max() > k or dc.min() < 0 or min(voided) < 0:
        return None
    if not (np.isfinite(sc).all() and np.abs(sc).max() < 1e15):
        return None
    if not all(x is None or type(x) is int for x in deals):
        return None
    values = [st.get(key, _NAN) for st in seat_stats for key in stat_keys]
    if not _NUMBER_TYPES.issuperset(map(type, values)):
        values = [v if type(v) is float else _number(v) for v in values]
    forfeited = np.zeros((m, k), np.int8)
    disqualified = np.zeros((m, k), np.int8)
    dq_ids: dict[int, str] = {}
    for i, d in enumerate(batch):
        f, q = d.get("forfeited"), d.get("disqualified")
        if f or q:
            try:
                forfeited[i, [s for s in range(k) if s in f] if f else []] = 1
                disqualified[i, [s for s in range(k) if s in q] if q else []] = 1
            except TypeError:
                return None
            if q:
                dq_ids[index[i]] = str(d.get("id", ""))
    b.index.extend(index)
    b.deal_kind.frombytes(np.array([x is None for x in deals], np.int8).tobytes())
    b.deal_value.extend([i if x is None else x for i, x in zip(index, deals)])
    b.width.frombytes(np.full(m, k, np.int8).tobytes())
    b.voided.extend(voided)
    b.bot.extend(seat_bots)
    b.score.frombytes(sc.tobytes())
    b.rank.frombytes(rk.tobytes())
    b.decisions.frombytes(dc.tobytes())
    b.forfeited.frombytes(forfeited.tobytes())
    b.disqualified.frombytes(disqualified.tobytes())
    if stat_keys:
        b.stats.frombytes(np.array(values, np.float64).tobytes())
    b.won.frombytes(np.array([st.get("won") == 1 for st in seat_stats], np.float64).tobytes())
    durations.extend([float(x) for x in dur])
    first = int(np.argmin(idx))
    return index[first], bool(batch[first].get("lower_is_better", False)), dq_ids


def _common_width(batch: list[Mapping[str, Any]]) -> int | None:
    """The seats of every line of ``batch`` if they are all common lines of one width
    (no faults, restarts or response times), else None."""
    try:
        if not all(type(d) is dict for d in batch):
            return None
        k = len(batch[0]["bots"])
        if not 0 < k <= 127:
            return None
        for d in batch:
            if len(d["bots"]) != k or len(d["scores"]) != k or len(d["ranks"]) != k or len(d["decisions"]) != k:
                return None
            if len(d.get("stats") or ()) != k:
                return None
        if any(d.get("faults") or d.get("restarts") or "latency_ms" in d for d in batch):
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    return k


def _why(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return str(exc) or type(exc).__name__


def _take(
    d: Mapping[str, Any],
    b: _Buffers,
    pos: Mapping[str, int],
    stat_keys: Sequence[str],
    kinds: Mapping[str, int],
    nk: int,
    lat_bot: array[int],
    lat_val: array[float],
    durations: array[float],
) -> None:
    """Append one journal line to the buffers (validating what is taken)."""
    seat_bots = _seat_bots(d, pos)
    bots, index, k = d["bots"], d["index"], len(seat_bots)
    deal = d.get("deal")
    b.index.append(index)
    if deal is None:
        b.deal_kind.append(1)
        b.deal_value.append(index)
    else:
        if isinstance(deal, bool) or not isinstance(deal, int):
            raise ValueError("deal must be an integer")
        b.deal_kind.append(0)
        b.deal_value.append(deal)
    b.width.append(k)
    b.voided.append(int(d.get("voided", 0)))
    b.bot.extend(seat_bots)
    b.score.extend(d["scores"])
    b.rank.extend(d["ranks"])
    b.decisions.extend(d["decisions"])
    line = len(b.index) - 1
    if d.get("faults"):
        _take_faults(d["faults"], b, line, k, kinds, nk)
    forfeited, dq = d.get("forfeited"), d.get("disqualified")
    b.forfeited.extend([s in forfeited for s in range(k)] if forfeited else _ZEROS[:k])
    b.disqualified.extend([s in dq for s in range(k)] if dq else _ZEROS[:k])
    restarts = d.get("restarts")
    if restarts:
        if not isinstance(restarts, list) or len(restarts) > k:
            raise ValueError("restarts must be a list with at most one entry per seat")
        for seat, x in enumerate([int(x) for x in restarts]):
            if x:
                b.restart_at.extend((line, seat))
                b.restart_n.append(x)
    stats = d.get("stats") or ()
    per_seat = [st if isinstance(st, dict) else {} for st in stats[:k]] + [{}] * (k - len(stats[:k]))
    if stat_keys:
        values = [st.get(key, _NAN) for st in per_seat for key in stat_keys]
        b.stats.extend([v if type(v) is float else _number(v) for v in values])
    b.won.extend([1.0 if st.get("won") == 1 else 0.0 for st in per_seat])
    lat = d.get("latency_ms")
    if isinstance(lat, list):
        for s, values in enumerate(lat[:k]):
            if isinstance(values, list):
                lat_val.extend(float(v) for v in values if isinstance(v, int | float))
                lat_bot.extend([pos[bots[s]]] * (len(lat_val) - len(lat_bot)))
    dur = d.get("duration_s", 0.0)
    durations.append(float(dur) if isinstance(dur, int | float) else 0.0)


def _seat_bots(d: Mapping[str, Any], pos: Mapping[str, int]) -> list[int]:
    """The bot (by position) in each seat of line ``d``, once its per-seat lists and index
    are checked (whole-list checks in C: map, min, max, sum; no Python loop per field)."""
    bots = d["bots"]
    scores, ranks, decisions = d["scores"], d["ranks"], d["decisions"]
    k = len(bots)
    if not (isinstance(bots, list) and 0 < k <= 127):
        raise ValueError("bots must be a non-empty list")
    for label, seq in (("scores", scores), ("ranks", ranks), ("decisions", decisions)):
        if not isinstance(seq, list) or len(seq) != k:
            raise ValueError(f"{label} must be a list with one entry per seat")
    index = d["index"]
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError("index must be a non-negative integer")
    try:
        seat_bots = [pos[name] for name in bots]
    except (KeyError, TypeError):
        bad = next(name for name in bots if not isinstance(name, str) or name not in pos)
        raise ValueError(f"bot {bad!r} is not in tournament.json") from None
    if not _NUMBER_TYPES.issuperset(map(type, scores)) or not -1e15 < min(scores) <= max(scores) < 1e15:
        raise ValueError("scores must be finite numbers")
    total = sum(scores)
    if total - total != 0:  # a NaN (min and max can miss one)
        raise ValueError("scores must be finite numbers")
    if not _INT_TYPE.issuperset(map(type, ranks)) or not 1 <= min(ranks) <= max(ranks) <= k:
        raise ValueError("ranks must be integers from 1 to the number of seats")
    if not _INT_TYPE.issuperset(map(type, decisions)) or min(decisions) < 0:
        raise ValueError("decisions must be non-negative integers")
    return seat_bots


def _take_faults(
    faults_in: Sequence[Mapping[str, Any]], b: _Buffers, line: int, k: int, kinds: Mapping[str, int], nk: int
) -> None:
    """Append the act faults per seat and kind, and the notice faults per seat, of one line."""
    faults: dict[int, int] = {}
    notice: dict[int, int] = {}
    for f in faults_in:
        seat = f["seat"]
        if not isinstance(seat, int) or not 0 <= seat < k:
            raise ValueError("a fault's seat is out of range")
        if f.get("phase", "act") == "act":
            at = seat * nk + kinds[f["kind"]]
            faults[at] = faults.get(at, 0) + 1
        else:
            notice[seat] = notice.get(seat, 0) + 1
    for at, count in faults.items():
        b.fault_at.extend((line, at // nk, at % nk))
        b.fault_n.append(count)
    for seat, count in notice.items():
        b.notice_at.extend((line, seat))
        b.notice_n.append(count)


_ZEROS = (0,) * 1024
_NUMBER_TYPES = frozenset((int, float))
_INT_TYPE = frozenset((int,))
_NAN = math.nan


def _number(v: Any) -> float:
    """A stat value as a float; NaN when absent or not a finite number."""
    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        return float(v)
    return math.nan


def _flush(hist: IntArray, top: FloatArray, lat_bot: array[int], lat_val: array[float]) -> None:
    """Add buffered response times to the per-bot histogram."""
    if not lat_val:
        return
    bots = np.frombuffer(lat_bot, np.int32).astype(np.int64)
    values = np.frombuffer(lat_val, np.float64)
    hist += np.bincount(bots * LAT_BINS + LATENCY_BUCKETS.buckets(values), minlength=hist.size).reshape(hist.shape)
    np.maximum.at(top, bots, values)


def _assemble(
    b: _Buffers,
    names: list[str],
    stat_keys: list[str],
    lower: bool,
    ids: dict[int, str],
    hist: IntArray,
    duration: float,
) -> Columns:
    """Sort the buffered lines by index (the last line of an index wins) and pad seats."""
    index = np.frombuffer(b.index, np.int64) if b.index else np.zeros(0, np.int64)
    m = index.shape[0]
    width = np.frombuffer(b.width, np.int8).astype(np.int64) if m else np.zeros(0, np.int64)
    kmax = int(width.max()) if m else 1
    start = np.concatenate([[0], np.cumsum(width)[:-1]]) if m else np.zeros(0, np.int64)
    keep = kept_rows(index)
    rows = keep.shape[0]
    uniform = bool(m) and int(width.min()) == kmax  # every line as wide as the widest
    identity = rows == m and bool((keep == np.arange(m)).all())  # in order, no line replaced
    row_of = np.full(m, -1, np.int64)
    row_of[keep] = np.arange(rows)

    def per_seat(name: str, dtype: Any, fill: Any, per: int | None = None) -> Any:
        """A (rows, seats) column, or (rows, seats, per) with ``per`` values a seat; the
        buffer is released (or, in order and unpadded, the column is a view of it)."""
        buf = getattr(b, name)
        src = np.frombuffer(buf, dtype) if len(buf) else np.zeros(0, dtype)
        shape = (rows, kmax) if per is None else (rows, kmax, per)
        if uniform:
            out = src.reshape((m, *shape[1:]))
            if identity:
                return out
            out = out[keep]
        else:
            seat = np.arange(kmax)
            valid = seat[None, :] < width[keep][:, None]
            flat = (start[keep][:, None] + seat[None, :])[valid]
            out = np.full(shape, fill, dtype)
            out[valid] = src[flat] if per is None else src.reshape(-1, per)[flat]
        del src
        setattr(b, name, array(buf.typecode))
        return out

    def sparse(at: array[int], counts: array[int], per: int | None = None) -> IntArray:
        """A (rows, seats[, per]) column of counts from its (line, seat[, kind]) entries."""
        out = np.zeros((rows, kmax) if per is None else (rows, kmax, per), np.int64)
        if counts:
            where = np.frombuffer(at, np.int64).reshape(len(counts), -1).copy()
            where[:, 0] = row_of[where[:, 0]]
            live = where[:, 0] >= 0  # the line of a replaced index counts nothing
            np.add.at(out, tuple(where[live].T), np.frombuffer(counts, np.int64)[live])
        return out

    deal = _deal_numbers(b, keep)
    ns = max(1, len(stat_keys))
    stats = (
        per_seat("stats", np.float64, math.nan, len(stat_keys)) if stat_keys else np.full((rows, kmax, ns), math.nan)
    )
    return Columns(
        names=names,
        stat_keys=stat_keys,
        lower=lower,
        index=index[keep].copy(),
        deal=deal,
        bot=per_seat("bot", np.int64, -1),
        score=per_seat("score", np.float64, 0.0),
        rank=per_seat("rank", np.int64, 0),
        faults=sparse(b.fault_at, b.fault_n, len(FAULT_KINDS)),
        notice=sparse(b.notice_at, b.notice_n),
        forfeited=per_seat("forfeited", np.int8, 0).astype(bool),
        disqualified=per_seat("disqualified", np.int8, 0).astype(bool),
        decisions=per_seat("decisions", np.int64, 0),
        restarts=sparse(b.restart_at, b.restart_n),
        stats=stats,
        won=per_seat("won", np.float64, 0.0),
        voided=(np.frombuffer(b.voided, np.int64)[keep] if m else np.zeros(0, np.int64)).copy(),
        ids=dict(sorted(ids.items())),  # every index has its kept line
        latency_hist=hist,
        duration_s=duration,
    )


def kept_rows(index: IntArray) -> IntArray:
    """The buffered lines kept, in index order: the last line of each index in file order wins."""
    rev = np.arange(index.shape[0])[::-1]
    _, first_rev = np.unique(index[rev], return_index=True)
    keep = np.sort(rev[first_rev])
    return np.asarray(keep[np.argsort(index[keep], kind="stable")], np.int64)


def _deal_numbers(b: _Buffers, keep: IntArray) -> IntArray:
    """The deal of each kept line, deals numbered in the order of their first fixture."""
    if not keep.shape[0]:
        return np.zeros(0, np.int64)
    kind = np.frombuffer(b.deal_kind, np.int8)[keep]
    value = np.frombuffer(b.deal_value, np.int64)[keep]
    _, first, inverse = np.unique(np.stack([kind, value], 1), axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    renum = np.empty_like(order)
    renum[order] = np.arange(order.shape[0])
    return np.asarray(renum[inverse.reshape(-1)], np.int64)


def credit_mask(cols: Columns, coop: bool) -> BoolArray:
    """Seats that are a credited result: every seat, or in cooperative games each bot's first seat."""
    mask = cols.seated.copy()
    if coop:
        for j in range(1, cols.bot.shape[1]):
            for i in range(j):
                mask[:, j] &= cols.bot[:, j] != cols.bot[:, i]
    return mask


def wins(cols: Columns, coop: bool) -> BoolArray:
    """Per seat: a win (rank 1, or in cooperative games the ``won`` stat equal to 1)."""
    return np.asarray((cols.won == 1) if coop else (cols.rank == 1)) & cols.seated
