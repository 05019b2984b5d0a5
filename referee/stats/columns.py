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
from itertools import accumulate, islice
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

    The lines are checked ones (``store.journal``'s reader, or ``MatchRecord.to_json()``):
    their shape is ``store.line.LINE``'s, so nothing here checks it again. A line seating
    a bot not in ``names`` is an error, unless ``others``: then such bots (removed from
    the tournament) follow ``names`` in name order, and ``Columns.listed`` says how many
    are the tournament's."""
    pos: dict[str, int] = _Others() if others else {}
    pos.update((n, i) for i, n in enumerate(names))
    buf = _Buffers(len(stat_keys))
    ids: dict[int, str] = {}
    lat = _Latencies(array("i"), array("d"))
    hist = np.zeros((len(names), LAT_BINS), np.int64)
    top = np.full(len(names), -np.inf)
    durations = array("d")
    lower: bool | None = None
    lower_at_index = -1
    n = 0
    for batch in _batches(lines):
        try:
            idx_min, low = _take_batch(batch, buf, pos, stat_keys, ids, lat, durations)
        except (KeyError, TypeError, ValueError, IndexError, OverflowError):
            raise _culprit(batch, n, pos, stat_keys, where) from None
        n += len(batch)
        if lower is None or idx_min < lower_at_index:
            lower, lower_at_index = low, idx_min
        if len(lat.values) >= _FLUSH:
            hist, top = _room(hist, top, len(pos))
            _flush(hist, top, lat.bots, lat.values)
            lat = _Latencies(array("i"), array("d"))
    hist, top = _room(hist, top, len(pos))
    _flush(hist, top, lat.bots, lat.values)
    every = list(names)
    if len(pos) > len(names):  # removed bots in name order, whatever the order of the lines
        every, hist, top = _name_order(buf, pos, len(names), hist, top)
    cols = _assemble(buf, every, list(stat_keys), bool(lower), ids, hist, math.fsum(durations))
    cols.latency_max = top
    cols.listed = len(names) if others else None
    return cols


@dataclass
class _Latencies:
    """Response times waiting for the histogram: the bot (by position) and the value."""

    bots: array[int]
    values: array[float]


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
    ids: dict[int, str],
    lat: _Latencies,
    durations: array[float],
) -> tuple[int, bool]:
    """Append a batch of checked lines to the buffers: (smallest index, its ``lower_is_better``).

    Every line's per-seat lists go in whole-batch conversions (in C); only the rare parts
    (faults, forfeits, disqualifications, restarts, response times) take a loop, line by line."""
    index = [d["index"] for d in batch]
    width = [len(d["bots"]) for d in batch]
    try:
        seat_bots = [pos[name] for d in batch for name in d["bots"]]
    except KeyError as exc:
        raise ValueError(f"bot {exc.args[0]!r} is not in tournament.json") from None
    scores = [x for d in batch for x in d["scores"]]
    ranks = [x for d in batch for x in d["ranks"]]
    decisions = [x for d in batch for x in d["decisions"]]
    seat_stats = [st for d in batch for st in d["stats"]]
    deals = [d.get("deal") for d in batch]
    first_line, first_seat = len(b.index), len(b.bot)
    b.index.extend(index)
    b.deal_kind.extend([x is None for x in deals])
    b.deal_value.extend([i if x is None else x for i, x in zip(index, deals)])
    b.width.extend(width)
    b.voided.extend([d.get("voided", 0) for d in batch])
    b.bot.extend(seat_bots)
    b.score.extend(scores)
    b.rank.extend(ranks)
    b.decisions.extend(decisions)
    if stat_keys:
        b.stats.extend([st.get(key, _NAN) for st in seat_stats for key in stat_keys])
    b.won.extend([st.get("won") == 1 for st in seat_stats])
    b.forfeited.frombytes(bytes(len(seat_bots)))
    b.disqualified.frombytes(bytes(len(seat_bots)))
    durations.extend([d["duration_s"] for d in batch])
    starts = list(accumulate(width, initial=first_seat))
    for i, d in enumerate(batch):
        if d["forfeited"] or d["faults"] or "disqualified" in d or "restarts" in d or "latency_ms" in d:
            _take_rare(d, b, first_line + i, starts[i], pos, ids, lat)
    first = index.index(min(index))
    return index[first], bool(batch[first]["lower_is_better"])


def _take_rare(
    d: Mapping[str, Any],
    b: _Buffers,
    line: int,
    start: int,
    pos: Mapping[str, int],
    ids: dict[int, str],
    lat: _Latencies,
) -> None:
    """The rare parts of line ``d`` (buffered as line ``line``, its seats from ``start``)."""
    for s in d["forfeited"]:
        b.forfeited[start + s] = 1
    if d.get("disqualified"):
        for s in d["disqualified"]:
            b.disqualified[start + s] = 1
        ids[d["index"]] = str(d["id"])
    if d["faults"]:
        _take_faults(d["faults"], b, line)
    for seat, x in enumerate(d.get("restarts") or ()):
        if x:
            b.restart_at.extend((line, seat))
            b.restart_n.append(x)
    for s, values in enumerate(d.get("latency_ms") or ()):
        lat.values.extend(values)
        lat.bots.extend([pos[d["bots"][s]]] * len(values))


def _culprit(
    batch: list[Mapping[str, Any]], before: int, pos: dict[str, int], stat_keys: Sequence[str], where: str
) -> JournalError:
    """The error naming the first line of ``batch`` that cannot be taken (the lines before
    it numbered ``before``): each line is taken again alone, into scratch buffers."""
    for i, d in enumerate(batch):
        try:
            _take_batch(
                [d], _Buffers(len(stat_keys)), pos, stat_keys, {}, _Latencies(array("i"), array("d")), array("d")
            )
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            ident = d.get("id") if isinstance(d, Mapping) else None
            return JournalError(f"{where}: match {ident!r} (line {before + i + 1}): {_why(exc)}")
    return JournalError(f"{where}: lines {before + 1}-{before + len(batch)}: not journal lines")


def _why(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return str(exc) or type(exc).__name__


def _take_faults(faults_in: Sequence[Mapping[str, Any]], b: _Buffers, line: int) -> None:
    """Append the act faults per seat and kind, and the notice faults per seat, of one line."""
    faults: dict[int, int] = {}
    notice: dict[int, int] = {}
    for f in faults_in:
        seat = f["seat"]
        if f.get("phase", "act") == "act":
            at = seat * _NK + _KIND[f["kind"]]
            faults[at] = faults.get(at, 0) + 1
        else:
            notice[seat] = notice.get(seat, 0) + 1
    for at, count in faults.items():
        b.fault_at.extend((line, at // _NK, at % _NK))
        b.fault_n.append(count)
    for seat, count in notice.items():
        b.notice_at.extend((line, seat))
        b.notice_n.append(count)


_KIND = {k: i for i, k in enumerate(FAULT_KINDS)}
_NK = len(FAULT_KINDS)
_NAN = math.nan


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
