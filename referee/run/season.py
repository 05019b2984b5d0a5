"""The ladder wired into the runner: which tables each epoch plays, chosen from the
journal (``referee.run.ladder`` chooses; this module feeds it and gates the executor).

Fixture i of a ladder is table ``i % T`` of epoch ``i // T`` (``T``: the epoch size, fixed
when the ladder starts); its id and deal seed are those of fixture i of ``random``. Epoch
k is chosen once every epoch before k - 1 is whole in the journal, from the lineup of its
segment, the seats of epochs < k and the results of epochs < k - 1 (``Summary.record`` of
whole epochs, in epoch order, never finish order): so the tables are the same at any
concurrency, on any number of Dask workers, and after a kill and ``--resume``.

``tournament.json`` keeps the plan (``LadderPlan.document``): the epoch size, the lineup
history as segments (first epoch, entry keys) and the dropped tables. On ``--resume`` a
changed lineup starts at the first epoch without a journaled match; the unplayed tables of
the epochs in flight that seat a bot no longer in the file are dropped (recorded, never
played, their seats still counted as assigned so the tables chosen before stay reproducible).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from referee.config.model import TournamentConfig
from referee.errors import JournalError
from referee.record import MatchRecord
from referee.run.dq import DqJudge
from referee.run.ladder import LadderRules, Summary, choose_epoch, epoch_size
from referee.schedule.formats import Fixture, derive_seed
from referee.schedule.registry import format_class
from referee.stats.places import prize_places
from referee.store import journal as jn
from referee.store.journal import JOURNAL
from referee.store.tournament_file import read_settings

MATCHMAKING_INDEX = -3  # derive_seed(seed, -3, secret): secret as long as the deals are


def entry_key(name: str, version: str | None = None) -> str:
    """The entry a seat counts for in matchmaking: ``name@version``, or the name alone for a
    seat without a version (a journal line of an older referee)."""
    return f"{name}@{version}" if version else name


def line_keys(d: Mapping[str, Any]) -> list[str]:
    """The entry keys of a journal line's seats (by its ``versions`` when it has them)."""
    versions = d.get("versions") or [None] * len(d["bots"])
    return [entry_key(b, v) for b, v in zip(d["bots"], versions)]


def lineup_keys(config: TournamentConfig, versions: Mapping[str, str] | None) -> tuple[str, ...]:
    """The entry keys of ``config``'s bots, in config order (names alone without ``versions``)."""
    return tuple(entry_key(b.name, (versions or {}).get(b.name)) for b in config.bots)


@dataclass
class LadderPlan:
    """The epoch size, lineup segments (first epoch, entry keys) and dropped tables."""

    epoch_tables: int
    lineups: list[tuple[int, tuple[str, ...]]]
    dropped: dict[int, tuple[str, ...]] = field(default_factory=dict)  # fixture index -> its entry keys

    def document(self) -> dict[str, Any]:
        """The ``ladder`` field of tournament.json's settings."""
        return {
            "epoch_tables": self.epoch_tables,
            "lineups": [{"from": e, "bots": list(keys)} for e, keys in self.lineups],
            "dropped": [[i, list(keys)] for i, keys in sorted(self.dropped.items())],
        }

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> LadderPlan:
        """The plan of a tournament.json's ``ladder`` field (checked by store.tournament_file)."""
        lineups = [(int(s["from"]), tuple(s["bots"])) for s in doc["lineups"]]
        dropped = {int(i): tuple(keys) for i, keys in doc.get("dropped", [])}
        return cls(int(doc["epoch_tables"]), lineups, dropped)

    def lineup(self, epoch: int) -> tuple[str, ...]:
        """The entry keys in play in ``epoch``."""
        keys = self.lineups[0][1]
        for start, seg in self.lineups:
            if start > epoch:
                break
            keys = seg
        return keys


def plan_of(config: TournamentConfig, versions: Mapping[str, str] | None = None) -> LadderPlan:
    """The plan a ladder config carries, or a fresh one for its bots (keyed by ``versions``)."""
    if config.ladder is not None:
        return LadderPlan.from_document(config.ladder)
    keys = lineup_keys(config, versions)
    return LadderPlan(epoch_size(len(keys), config.players), [(0, keys)])


class LadderGate:
    """The runner's seam for a ladder: wraps the disqualification judge (same interface:
    ``ready``, ``seats``, ``add``, ``lag``) and gives each fixture its seats (``fixture``)."""

    def __init__(
        self, config: TournamentConfig, judge: DqJudge, plan: LadderPlan, total: int, versions: Mapping[str, str]
    ) -> None:
        self.config, self.judge, self.plan = config, judge, plan
        self.total = min(total, config.matches)  # the season's tables (a final's come after them: run.final)
        self.lag = judge.lag
        self.T = plan.epoch_tables
        self.rules = LadderRules(
            players=config.players,
            epoch_tables=self.T,
            top=prize_places(config.top, len(config.bots)),
            confidence=config.confidence,
        )
        self.seed = derive_seed(config.seed, MATCHMAKING_INDEX, config.seed_secret)
        self.index = {k: i for i, k in enumerate(lineup_keys(config, versions))}
        self.summary = Summary(config.players)
        self.tables: dict[int, list[tuple[str, ...]]] = {}  # chosen epochs not yet recorded
        self.results: dict[int, list[tuple[Sequence[str], Sequence[int]]]] = {}
        self.counts: dict[int, int] = {}  # journaled or dropped tables per epoch not yet recorded
        self.chosen = 0  # epochs < chosen are chosen and assigned
        self.whole = 0  # epochs < whole have every table journaled (or dropped)
        self.recorded = 0  # epochs < recorded have their results in the summary
        self.choose_s = 0.0  # CPU seconds spent choosing tables (the bench prints its share)
        self.journaled: set[int] = set()  # on resume: the journaled fixtures of the epochs chosen again
        for i in plan.dropped:
            judge.skip(i)

    def size(self, epoch: int) -> int:
        """Tables of ``epoch`` within the budget."""
        return max(0, min(self.T, self.total - epoch * self.T))

    def dropped(self, index: int) -> bool:
        """True for a table that is never played (it seats a bot removed from the file)."""
        return index in self.plan.dropped

    def ready(self, index: int) -> bool:
        """True when fixture ``index`` may start: its epoch chosen (choosing it if it can be)."""
        epoch = index // self.T
        while self.chosen <= epoch and self.whole >= self.chosen - self.rules.lag:
            self._choose(self.chosen)
        return epoch < self.chosen and self.judge.ready(index)

    def fixture(self, f: Fixture) -> Fixture:
        """``f`` with its seats (config positions of the bots at its table)."""
        keys = self.tables[f.index // self.T][f.index % self.T]
        return replace(f, seats=tuple(self.index[k] for k in keys))

    def seats(self, index: int, seats: Sequence[int]) -> list[int]:
        """The disqualified seats (the judge's)."""
        return self.judge.seats(index, seats)

    def add(self, rec: dict[str, Any] | MatchRecord) -> None:
        """Count one journaled match: the judge's, and its epoch's results."""
        d = rec.to_json() if isinstance(rec, MatchRecord) else rec
        self.judge.add(d)
        self._count(d)

    def close(self, epoch: int) -> None:
        """Count the tables of ``epoch`` (chosen, the oldest not whole) not journaled as if
        they were (without results), so later epochs can be chosen: verify goes on past a
        missing line."""
        if epoch == self.whole < self.chosen:
            self.counts[epoch] = self.size(epoch)
            self._advance()

    def _count(self, d: Mapping[str, Any]) -> None:
        """Count a journal line towards its epoch (results kept until they are recorded)."""
        epoch = int(d["index"]) // self.T
        self.results.setdefault(epoch, []).append((line_keys(d), d["ranks"]))
        self.counts[epoch] = self.counts.get(epoch, 0) + 1
        self._advance()

    def _advance(self) -> None:
        """Move ``whole`` past the epochs whose every table is journaled or dropped."""
        while self.counts.get(self.whole, 0) >= self.size(self.whole) and self.whole < self.chosen:
            self.counts.pop(self.whole, None)
            self.tables.pop(self.whole, None)  # none of its tables is asked for again
            self.whole += 1

    def _choose(self, epoch: int) -> None:
        """Record the results of the epochs before ``epoch - lag`` (whole, in epoch order), then
        choose ``epoch``'s tables and count their seats as assigned."""
        cpu = time.process_time()
        while self.recorded < epoch - self.rules.lag:
            rows = self.results.pop(self.recorded, [])
            self.summary.record_lines({"bots": b, "ranks": r} for b, r in rows)
            self.recorded += 1
        lineup = list(self.plan.lineup(epoch))
        chosen = choose_epoch(self.rules, self.seed, lineup, self.summary, epoch)[: self.size(epoch)]
        self.summary.assign(lineup, chosen)
        self.tables[epoch] = [tuple(lineup[b] for b in row) for row in chosen.tolist()]
        self.chosen = epoch + 1
        for t in range(len(chosen)):
            if self.dropped(epoch * self.T + t):
                self.counts[epoch] = self.counts.get(epoch, 0) + 1
        self.choose_s += time.process_time() - cpu
        self._advance()

    def rebuild(self, journal: Path) -> None:
        """Bring a resumed ladder to where its journal stands: seats of the epochs before the
        last two with a journaled match and their results (streamed: flat memory), then those
        two chosen again and checked against the journal, their unplayed tables to come."""
        last = last_epoch(journal, self.T, self.total)
        if last < 0:
            return
        keep: dict[int, list[dict[str, Any]]] = {}
        chunk: list[dict[str, Any]] = []
        for d in jn.read_journal(journal):
            if int(d["index"]) >= self.total:
                continue  # a final's match (run.final)
            e = int(d["index"]) // self.T
            if e >= last - 2:
                keep.setdefault(e, []).append(d)
            if e < last - 1:
                chunk.append(d)
            if len(chunk) >= 4096:
                self._count_old(chunk, last)
                chunk = []
        self._count_old(chunk, last)
        self.chosen = max(0, last - 1)
        self.whole = self.recorded = max(0, last - 2)
        for e in range(self.recorded, self.chosen):  # chosen before the journal's last two: results only
            self.counts[e] = sum(1 for i in self.plan.dropped if i // self.T == e)
            for d in keep.get(e, []):
                self._count(d)
            self._advance()
        dropped = [[*keys] for i, keys in self.plan.dropped.items() if i // self.T < self.chosen]
        if dropped:  # chosen, never played: their seats were counted as assigned when chosen
            self.summary.assign_lines({"bots": keys, "ranks": [0] * len(keys)} for keys in dropped)
        for e in range(self.chosen, last + 1):
            self.ready(e * self.T)  # chosen again from the same inputs
            for d in keep.get(e, []):
                want = list(self.tables[e][int(d["index"]) % self.T])
                if line_keys(d) != want:
                    raise JournalError(
                        f"{journal}: match {d['id']!r} seats {d['bots']}, the ladder's table is {want}: "
                        "another config, seed or lineup history made it; use another --output or drop --resume"
                    )
                self.journaled.add(int(d["index"]))
                self._count(d)

    def _count_old(self, lines: list[dict[str, Any]], last: int) -> None:
        """Seats (epochs < last - 1) and results (epochs < last - 2) of journal lines."""
        rows = [{"bots": line_keys(d), "ranks": d["ranks"]} for d in lines]
        self.summary.assign_lines(rows)
        self.summary.record_lines(r for r, d in zip(rows, lines) if int(d["index"]) // self.T < last - 2)


def last_epoch(path: Path, T: int, season: int | None = None) -> int:
    """The last epoch with a match in the journal at ``path`` (-1: none); with ``season``,
    of the matches before it (a final's come after)."""
    last = -1
    if path.exists():
        for d in jn.read_journal(path):
            if season is None or int(d["index"]) < season:
                last = max(last, int(d["index"]) // T)
    return last


def resolve_ladder(
    config: TournamentConfig, resume: bool, versions: Mapping[str, str] | None = None
) -> TournamentConfig:
    """``config`` with its ladder plan, its entries keyed by the bots' ``versions``: read back
    on ``resume`` (a changed lineup, a new version included, starts at the first epoch without
    a journaled match; in-flight tables seating an entry no longer in play are dropped), else
    a fresh one; other formats unchanged. Without ``versions`` (before the bots answered
    hello) a resumed plan is read back as it is: the lineup is judged once they have."""
    if not format_class(config).adaptive:
        return config
    plan = plan_of(replace(config, ladder=None), versions)
    journal = config.output / JOURNAL
    if resume and journal.exists():
        old = _recorded_plan(config.output)
        if old is not None:
            plan = old
        keys = lineup_keys(config, versions)
        if versions is not None and keys != plan.lineups[-1][1]:
            last = last_epoch(journal, plan.epoch_tables, config.matches)
            start = last + 1
            plan.lineups = [s for s in plan.lineups if s[0] < start] + [(start, keys)]
            _drop_removed(replace(config, ladder=plan.document()), plan, journal, set(keys), versions)
    return replace(config, ladder=plan.document())


def _recorded_plan(out: Path) -> LadderPlan | None:
    """The plan in ``out``'s tournament.json, if it has one."""
    settings = read_settings(out)
    return LadderPlan.from_document(settings["ladder"]) if settings and settings.get("ladder") else None


def _drop_removed(
    config: TournamentConfig, plan: LadderPlan, journal: Path, present: set[str], versions: Mapping[str, str]
) -> None:
    """Add to ``plan.dropped`` the unplayed tables of the epochs in flight seating an entry
    no longer in play (a removed bot, or the old version of a changed one)."""
    judge = DqJudge(config, config.matches)
    gate = open_gate(config, judge, config.matches, journal, resume=True, versions=versions)
    for epoch, rows in gate.tables.items():
        for t, keys in enumerate(rows):
            i = epoch * plan.epoch_tables + t
            if i not in gate.journaled and not present.issuperset(keys):
                plan.dropped[i] = keys


def open_gate(
    config: TournamentConfig, judge: DqJudge, total: int, journal: Path, resume: bool, versions: Mapping[str, str]
) -> LadderGate:
    """The gate of a ladder run (its bots' ``versions``: name -> id), brought to where its
    journal stands when resuming."""
    gate = LadderGate(config, judge, plan_of(config, versions), total, versions)
    if resume and journal.exists():
        gate.rebuild(journal)
    return gate
