"""``stop = "settled"``: play deal by deal in batches, stop when the ranking is settled.

The schedule is cut into batches of ``batch`` deals (a deal: one fixture, or with
``duplicate`` the rotations of one table, or in ``team`` one deal played by every bot),
in fixture order. After each batch is played *whole* the referee looks: it builds the
per-deal values of every bot (its mean rank over the deal's matches, NaN when it was not
at the table; in ``team`` its rank among the bots by score on that deal, since every bot
plays every deal) and asks ``sequential.settled`` whether every adjacent pair of the top
``top`` is separated at ``confidence``. The first batch at which it is ends the run.

Determinism: a look happens only at a batch boundary, with every match of the batch in
the journal and none beyond it, so what counts never depends on which match finished
first or on the concurrency; a resumed run replays the looks at the same boundaries.

Memory: two float arrays of deals x bots (sums and counts), never the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.config.model import TournamentConfig
from referee.schedule.formats import match_count
from referee.schedule.registry import format_class
from referee.stats import sequential
from referee.stats.places import Watch


@dataclass(frozen=True)
class Stop:
    """Why a settled run stopped (or that it spent its budget): for the console and standings.json."""

    rule: str
    settled: bool
    reason: str
    deals: int
    matches: int
    budget: int
    confidence: float
    top: int

    def document(self) -> dict[str, Any]:
        """The ``stopped`` field of standings.json and tournament.json."""
        return {
            "rule": self.rule,
            "settled": self.settled,
            "reason": self.reason,
            "deals": self.deals,
            "matches": self.matches,
            "budget": self.budget,
            "confidence": self.confidence,
            "top": self.top,
        }


class DealValues:
    """Per-deal sums and counts of every bot's value, grown as matches end (flat arrays)."""

    def __init__(self, config: TournamentConfig) -> None:
        self.names = [b.name for b in config.bots]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.team = format_class(config).plays_teams
        self.deal_size = len(self.names) if self.team else (config.players if config.duplicate else 1)
        self.deals = match_count(config) // self.deal_size
        self.bound = float(len(self.names) - 1 if self.team else config.players - 1)
        self._sums = np.zeros((0, len(self.names)))
        self._counts = np.zeros((0, len(self.names)))
        self._team_scores: dict[int, dict[int, float]] = {}  # team: a deal's scores until every bot played it
        self.lower_is_better = True
        self.watch: Watch | None = None  # a ladder's places, looked at batch after batch

    def _grow(self, deal: int) -> None:
        if deal >= len(self._sums):
            size = max(deal + 1, 2 * len(self._sums), 64)
            for name in ("_sums", "_counts"):
                old = getattr(self, name)
                new = np.zeros((size, len(self.names)))
                new[: len(old)] = old
                setattr(self, name, new)

    def add(self, index: int, bots: Sequence[str], ranks: Sequence[int], scores: Sequence[float], lower: bool) -> None:
        """Count one finished match (fixture ``index``)."""
        deal = index // self.deal_size
        self._grow(deal)
        if not self.team:
            for name, rank in zip(bots, ranks):
                b = self.index[name]
                self._sums[deal, b] += rank
                self._counts[deal, b] += 1
            return
        self.lower_is_better = lower
        pending = self._team_scores.setdefault(deal, {})
        pending[self.index[bots[0]]] = float(np.mean(scores)) * (1.0 if lower else -1.0)
        if len(pending) == len(self.names):  # every bot played the deal: rank them on it
            del self._team_scores[deal]
            vals = np.asarray([pending[b] for b in range(len(self.names))])
            below = (vals[None, :] < vals[:, None]).sum(axis=1)
            ties = (vals[None, :] == vals[:, None]).sum(axis=1)
            self._sums[deal] = below + (ties + 1) / 2.0  # mean rank, ties share
            self._counts[deal] = 1.0

    def add_lines(self, docs: Iterable[Mapping[str, Any]]) -> None:
        """Count journal lines (a resumed run's finished matches)."""
        for d in docs:
            if d["bots"][0] in self.index and all(b in self.index for b in d["bots"]):
                self.add(d["index"], d["bots"], d["ranks"], d["scores"], d["lower_is_better"])

    def values(self, deals: int) -> npt.NDArray[np.float64]:
        """The first ``deals`` deals x bots: mean value per deal, NaN where a bot did not play."""
        self._grow(deals - 1 if deals else 0)
        s, c = self._sums[:deals], self._counts[:deals]
        return np.where(c > 0, s / np.maximum(c, 1), np.nan)


def batches(deals: int, deal_size: int, batch: int) -> Iterable[tuple[int, int, int]]:
    """(first fixture, end fixture, deals up to the end) of every batch, in order."""
    for start in range(0, deals, batch):
        end = min(deals, start + batch)
        yield start * deal_size, end * deal_size, end


def look(values: DealValues, deals: int, config: TournamentConfig) -> sequential.Settlement:
    """The settled test on the first ``deals`` deals; on a ladder (tables chosen from
    results): its prize places are settled, on the opponent-adjusted model (stats/places.py)."""
    if format_class(config).adaptive:
        if values.watch is None:
            values.watch = Watch(len(values.names), config.top, config.confidence)
        return sequential.Settlement(*values.watch.look(values.values(deals)))
    return sequential.settled(values.values(deals), values.bound, confidence=config.confidence, top=config.top)


def make_stop(config: TournamentConfig, values: DealValues, verdict: sequential.Settlement | None, deals: int) -> Stop:
    """The record of how a settled run ended after ``deals`` deals."""
    done = verdict is not None and verdict.settled
    if verdict is None:
        reason = "no deal played"
    elif done:
        reason = f"{verdict.reason(values.names)} at confidence {config.confidence} after {deals} deals"
    else:
        reason = f"budget spent ({deals} deals), {verdict.reason(values.names)} at confidence {config.confidence}"
    return Stop(
        "settled",
        done,
        reason,
        deals,
        deals * values.deal_size,
        match_count(config),
        config.confidence,
        config.top,
    )
