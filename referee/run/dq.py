"""Disqualification for a bot's fault rate, judged in fixture order (one rule for
every executor: one process at any concurrency, or a Dask cluster of any size).

Fixture *i* is played with the bots disqualified by the fixtures before ``i - DQ_LAG``:
a bot is disqualified there when, over those fixtures (counted in fixture order, all in
the journal), it has answered at least ``fault_rate_min_decisions`` decisions and
faulted in more than ``max_fault_rate`` of them. Fixture *i* starts only once that
prefix is in the journal (at concurrency well below ``DQ_LAG`` it almost always is
already), so which bots a match sees as disqualified never depends on which match
finished first, on the concurrency or on the number of workers. A disqualified bot's
seats are played by the fallback without calling it; the record lists them
(``disqualified``). With ``max_fault_rate = 1`` (the default) nothing waits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from referee.config.model import TournamentConfig
from referee.record import MatchRecord
from referee.schedule.formats import Fixture
from referee.store import journal as jn

DQ_LAG = 512  # fixtures between the prefix a disqualification is judged on and the fixture it applies to


class Gate(Protocol):
    """What an executor asks before and after each match: a ``DqJudge``, or a ladder's
    ``season.LadderGate`` around one (which also gives each fixture its seats)."""

    lag: int

    def ready(self, index: int) -> bool:
        """True when fixture ``index`` may start."""
        ...

    def fixture(self, f: Fixture) -> Fixture:
        """The fixture to play for ``f`` (a ladder's: with its seats)."""
        ...

    def seats(self, index: int, seats: Sequence[int]) -> list[int]:
        """The disqualified seats of fixture ``index``."""
        ...

    def add(self, rec: dict[str, Any] | MatchRecord) -> None:
        """Count one journaled match."""
        ...


class DqJudge:
    """Fault-rate disqualification in fixture order (see the module doc).

    Counts arrive in any order; they are folded in fixture order as the prefix fills,
    holding only the counts of fixtures past a gap.
    """

    def __init__(self, config: TournamentConfig, total: int, lag: int | None = None) -> None:
        self.rate = config.limits.max_fault_rate
        self.min_decisions = config.limits.fault_rate_min_decisions
        self.enabled = self.rate < 1.0
        self.names = {b.name: i for i, b in enumerate(config.bots)}
        self.lag = DQ_LAG if lag is None else lag
        self.total = total
        self.settled = 0  # fixtures below this index are folded in
        self.decisions = [0] * len(config.bots)
        self.faults = [0] * len(config.bots)
        self.pending: dict[int, list[tuple[int, int, int]]] = {}
        self.dq_at: dict[int, int] = {}  # bot -> the settled prefix at which it was disqualified

    def prime(self, records: Iterable[dict[str, Any]]) -> None:
        """Count the matches already in the journal (on resume)."""
        for rec in records:
            self.add(rec)

    def add(self, rec: dict[str, Any] | MatchRecord) -> None:
        """Count one journaled match (a record or a journal line)."""
        if not self.enabled:
            return
        d = rec.to_json() if isinstance(rec, MatchRecord) else rec
        faulted = [0] * len(d["bots"])
        for f in d["faults"]:
            if f.get("phase") == "act":
                faulted[f["seat"]] += 1
        self.pending[int(d["index"])] = [
            (self.names.get(b, -1), d["decisions"][s], faulted[s]) for s, b in enumerate(d["bots"])
        ]
        self._fold()

    def _fold(self) -> None:
        """Fold the counts of the fixtures that extend the counted prefix."""
        while self.settled in self.pending:
            for bot, dec, flt in self.pending.pop(self.settled):
                if bot < 0:
                    continue
                self.decisions[bot] += dec
                self.faults[bot] += flt
                if (
                    bot not in self.dq_at
                    and self.decisions[bot] >= self.min_decisions
                    and self.faults[bot] / self.decisions[bot] > self.rate
                ):
                    self.dq_at[bot] = self.settled + 1
            self.settled += 1

    def fixture(self, f: Fixture) -> Fixture:
        """``f`` itself (its seats come from the schedule)."""
        return f

    def skip(self, index: int) -> None:
        """A fixture that is never played (a ladder's dropped table): nothing to count."""
        if self.enabled and index >= self.settled:
            self.pending[index] = []
            self._fold()

    def ready(self, index: int) -> bool:
        """True when fixture ``index`` may start: the prefix it is judged on is counted."""
        return not self.enabled or self.settled >= min(self.total, index - self.lag)

    def disqualified(self, index: int) -> list[int]:
        """The bots (config indices) disqualified for fixture ``index``."""
        cut = index - self.lag
        return sorted(b for b, at in self.dq_at.items() if at <= cut)

    def seats(self, index: int, seats: Sequence[int]) -> list[int]:
        """The seats of fixture ``index`` (bots ``seats``) whose bot is disqualified there."""
        if not self.dq_at:
            return []
        dq = set(self.disqualified(index))
        return [s for s, b in enumerate(seats) if b in dq]


def judge_for(config: TournamentConfig, total: int, journal: Path, resume: bool) -> DqJudge:
    """The judge of a run, primed with the journal's matches when resuming."""
    judge = DqJudge(config, total)
    if resume and judge.enabled and journal.exists():
        judge.prime(jn.read_journal(journal))
    return judge
