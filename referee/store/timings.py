"""Response times: one log-bucket histogram, and the run's per-bot summary built on it.

The journal keeps no response times: ``Timings`` summarises them per bot as matches
end, is kept across ``--resume`` in ``OUTPUT/.timings-state.json`` and is rendered as
``timings.json``. ``LogBuckets`` is the bucket math, shared with the columns of older
journals that still hold response times in their lines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.record import MatchRecord
from referee.store.files import atomic_write
from referee.store.journal import dumps, no_constant

TIMINGS_STATE = ".timings-state.json"


class LogBuckets:
    """Times (ms) in buckets of equal width on a log scale, ``per_decade`` to a factor of 10:
    bucket 0 holds every time up to ``floor_ms``, bucket b >= 1 those from
    ``floor_ms * 10 ** ((b - 1) / per_decade)`` up to its upper edge; ``last``, if given,
    is the overflow bucket."""

    def __init__(self, floor_ms: float, per_decade: float, last: int | None = None) -> None:
        self.floor_ms, self.per_decade, self.last = floor_ms, per_decade, last
        self._lo = math.log10(floor_ms)
        self._width = math.log(10) / per_decade  # of a bucket, in natural log

    def bucket(self, ms: float) -> int:
        """The bucket of one time."""
        b = 0 if ms <= self.floor_ms else math.floor((math.log10(ms) - self._lo) * self.per_decade) + 1
        return b if self.last is None else min(b, self.last)

    def buckets(self, ms: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        """The bucket of each time, in C."""
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log10(np.maximum(ms, 1e-12))
        b = np.floor((logs - self._lo) * self.per_decade).astype(np.int64) + 1
        b[ms <= self.floor_ms] = 0
        return np.asarray(np.clip(b, 0, self.last if self.last is not None else None), np.int64)

    def upper(self, b: int) -> float:
        """The upper edge of bucket ``b``."""
        return float(10 ** (self._lo + b / self.per_decade))

    def middle(self, b: int) -> float:
        """The representative time of bucket ``b``: the geometric middle of its edges (0 for bucket 0)."""
        return 0.0 if b == 0 else self.floor_ms * math.exp((b - 0.5) * self._width)


def nearest_rank(counts: Iterable[tuple[int, int]], total: int, q: float) -> int | None:
    """The bucket holding the nearest-rank ``q`` percentile of ``total`` times, from
    ``(bucket, count)`` pairs in bucket order; None when the counts fall short."""
    k = max(1, math.ceil(q / 100.0 * total))
    seen = 0
    for b, n in counts:
        seen += n
        if seen >= k:
            return b
    return None


RUN_BUCKETS = LogBuckets(0.01, 1 / math.log10(1.01))  # 1 % wide: percentiles within 1 % of the exact ones


@dataclass
class _BotTimes:
    decisions: int = 0
    max_ms: float = 0.0
    voided: int = 0
    hist: dict[int, int] = field(default_factory=dict)

    def percentile(self, q: float) -> float | None:
        """Nearest-rank percentile ``q`` over the histogram."""
        if not self.decisions:
            return None
        b = nearest_rank(sorted(self.hist.items()), self.decisions, q)
        return self.max_ms if b is None else min(RUN_BUCKETS.middle(b), self.max_ms)


@dataclass
class Timings:
    """Response times per bot, summarised as matches end (the journal keeps none): a
    histogram of 1 %-wide buckets, the exact maximum, decisions and voided decisions.
    Kept across ``--resume`` in ``OUTPUT/.timings-state.json``; rendered as ``timings.json``.
    ``referee_lag``: the referee's own event-loop lag (``Pacer.report``), one entry per
    ``referee run`` or ``--resume`` in order (percentiles of separate runs do not merge)."""

    bots: dict[str, _BotTimes] = field(default_factory=dict)
    matches: int = 0
    match_seconds: float = 0.0
    voided: int = 0
    referee_lag: list[dict[str, Any]] = field(default_factory=list)

    def add(self, rec: MatchRecord) -> None:
        """Count one finished match's response times (``rec.latency_ms``, in memory only)."""
        self.matches += 1
        self.match_seconds += rec.duration_s
        self.voided += rec.voided
        for seat, name in enumerate(rec.bots):
            t = self.bots.setdefault(name, _BotTimes())
            for ms in rec.latency_ms[seat] if seat < len(rec.latency_ms) else ():
                if math.isfinite(ms):
                    b = RUN_BUCKETS.bucket(ms)
                    t.hist[b] = t.hist.get(b, 0) + 1
                    t.decisions += 1
                    t.max_ms = max(t.max_ms, ms)
        for name in set(rec.bots):
            self.bots[name].voided += rec.voided

    def document(self, bot_names: Sequence[str]) -> dict[str, Any]:
        """The body of ``timings.json`` (the shape ``standings.compute_timings`` gives)."""
        bots = {}
        for name in bot_names:
            t = self.bots.get(name, _BotTimes())
            bots[name] = {
                "decisions": t.decisions,
                "p50_ms": _round(t.percentile(50)),
                "p90_ms": _round(t.percentile(90)),
                "p99_ms": _round(t.percentile(99)),
                "max_ms": _round(t.max_ms) if t.decisions else None,
                "voided": t.voided,
            }
        return {
            "matches": self.matches,
            "match_seconds": _round(self.match_seconds),
            "voided": self.voided,
            "referee_lag": self.referee_lag,
            "bots": bots,
        }

    def save(self, out: Path) -> None:
        """Write the state to ``out`` (atomically: a kill leaves the previous one)."""
        doc = {
            "matches": self.matches,
            "match_seconds": self.match_seconds,
            "voided": self.voided,
            "referee_lag": self.referee_lag,
            "bots": {
                n: {"decisions": t.decisions, "max_ms": t.max_ms, "voided": t.voided, "hist": t.hist}
                for n, t in self.bots.items()
            },
        }
        path = out / TIMINGS_STATE
        atomic_write(path, dumps(doc))  # an OutputError naming the file

    @classmethod
    def load(cls, out: Path) -> Timings | None:
        """The state saved in ``out``, or None when there is none (or it is unreadable:
        timings are a convenience, never a reason to refuse a run)."""
        try:
            doc = json.loads((out / TIMINGS_STATE).read_text(), parse_constant=no_constant)
            t = cls(matches=int(doc["matches"]), match_seconds=float(doc["match_seconds"]), voided=int(doc["voided"]))
            lag = doc.get("referee_lag", [])  # absent in the state of an older referee
            t.referee_lag = [
                {str(k): v for k, v in r.items() if isinstance(v, (int, float)) and math.isfinite(v)}
                for r in (lag if isinstance(lag, list) else [])
                if isinstance(r, dict)
            ]
            for name, b in doc["bots"].items():
                t.bots[str(name)] = _BotTimes(
                    int(b["decisions"]),
                    float(b["max_ms"]),
                    int(b["voided"]),
                    {int(k): int(v) for k, v in b["hist"].items()},
                )
            return t
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4) + 0.0
