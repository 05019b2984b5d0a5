"""The match record and the fault kinds: what a played match leaves behind.

Below ``match`` (which fills it) and ``tournament`` (which journals, tallies and
publishes it), and above nothing: importing it loads no game, no HTTP client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TIMEOUT = "timeout"
ERROR = "error"
MALFORMED = "malformed"
ILLEGAL = "illegal"
FAULT_KINDS = (TIMEOUT, ERROR, MALFORMED, ILLEGAL)
BOT, FALLBACK = "bot", "fallback"  # who chose a played action


@dataclass(slots=True)
class Move:
    """One decision as it was played: the seat's decision number, the action, who chose
    it (the bot, or the fallback after a fault, a skip past ``max_faults`` or a
    disqualification), the fault kind if any, the bot's response time (None when it was
    not asked), the reply's extra fields (The Game's claims) and the bot's ``log``. Never
    changed once made (not frozen: a frozen dataclass costs a third more to build, one
    per decision)."""

    seat: int
    decision: int
    action: Any
    by: str
    fault: str | None = None
    ms: float | None = None
    extras: dict[str, Any] | None = None
    log: str | None = None


@dataclass
class MatchRecord:
    """Everything the journal keeps about one finished match."""

    id: str
    index: int
    seed: int
    bots: list[str]
    scores: list[float]
    ranks: list[int]
    lower_is_better: bool
    forfeited: list[int]
    faults: list[dict[str, Any]]
    latency_ms: list[list[float]]  # per seat, per decision; in memory only (timings.json summarises it)
    decisions: list[int]
    stats: list[dict[str, float]]
    details: dict[str, Any]
    duration_s: float
    deal_hash: str = ""
    restarts: list[int] = field(default_factory=list)  # restarts of each seat's bot this match caused
    disqualified: list[int] = field(default_factory=list)  # seats whose bot was disqualified
    voided: int = 0  # decisions asked again because the referee itself was late
    deal: int | None = None  # the deal index where several fixtures share a deal (duplicate, team)
    versions: list[str] = field(default_factory=list)  # each seat's bot version (run.versions), set by the sink
    extra: dict[str, Any] = field(default_factory=dict)
    # every decision in order (``Move``); for transcripts, never written to the journal
    moves: list[Move] = field(default_factory=list, compare=False, repr=False)
    # the transcript line of ``moves``, encoded where the match was played when that is not
    # where it is written (a Dask worker ships these bytes, not 240 pickled Moves)
    transcript: bytes | None = field(default=None, compare=False, repr=False)
    # the replay pack line (``store.packs``), made where the match was played, likewise
    pack: bytes | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The journal line of this match."""
        out = {
            "id": self.id,
            "index": self.index,
            "seed": self.seed,
            "bots": self.bots,
            "scores": self.scores,
            "ranks": self.ranks,
            "lower_is_better": self.lower_is_better,
            "forfeited": self.forfeited,
            "faults": self.faults,
            "decisions": self.decisions,
            "stats": self.stats,
            "details": self.details,
            "duration_s": self.duration_s,
            "deal_hash": self.deal_hash,
        }
        # written only when they happened, so ordinary journal lines stay as they were
        if any(self.restarts):
            out["restarts"] = self.restarts
        if self.disqualified:
            out["disqualified"] = self.disqualified
        if self.voided:
            out["voided"] = self.voided
        out.update(self.extra)
        if self.deal is not None:
            out["deal"] = self.deal
        if self.versions:
            out["versions"] = self.versions
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> MatchRecord:
        """A record read back from the journal."""
        known = {f for f in cls.__dataclass_fields__ if f not in ("extra", "moves", "transcript", "pack")}
        return cls(**{k: d[k] for k in known if k in d}, extra={k: v for k, v in d.items() if k not in known})
