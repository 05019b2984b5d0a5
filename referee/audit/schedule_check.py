"""``verify``'s check of the schedule: once the seed is public, the schedule is derived
again from ``tournament.json``'s settings, and every journal line must be its fixture's
(its id, its seed, its bots), every scheduled match in the journal or dropped.

A ladder's tables are chosen again epoch by epoch from the journal as the runner chose
them (``run.season.LadderGate``: the seed, the lineup history and dropped tables of the
settings' plan, the results of the epochs before), so a journal whose matches were
swapped between tables fails even when its standings files were rendered again from it.

Memory stays flat: one bit per fixture (like ``--resume``'s ``JournalState``), and for a
ladder the gate's per-entry tallies and the tables of the epochs in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from referee.config.model import BotConfig, Limits, TournamentConfig
from referee.run.dq import DqJudge
from referee.run.final import plan_for, watch_for
from referee.run.season import LadderGate, line_keys, plan_of
from referee.schedule.final import FinalPlan, FinalTables
from referee.schedule.formats import Schedule, schedule
from referee.schedule.registry import format_named
from referee.store.tournament_file import TOURNAMENT_FILE

# (match id, field, detail): a difference, reported by verify as a Problem
Add = Callable[[str, str, str], None]
NOT_YET = "the schedule (the secret seed is not revealed yet: verify checks it once the season is complete)"


def config_of(settings: Mapping[str, Any], out: Path) -> TournamentConfig:
    """The part of a config that makes the schedule, from ``tournament.json``'s settings
    (whose seed is revealed): the bots by name, the format, its size and keys."""
    given = frozenset(k for k in ("rounds", "matches") if settings.get(k) is not None)
    return TournamentConfig(
        path=out / TOURNAMENT_FILE,
        output=out,
        name=settings["name"],
        game=settings["game"],
        seed=int(settings["seed"]),
        players=int(settings["players"]),
        format=settings["format"],
        rounds=int(settings.get("rounds") or 1),
        matches=int(settings.get("matches") or 1),
        duplicate=bool(settings.get("duplicate")),
        challengers=tuple(settings.get("challengers") or ()),
        challengers_meet=bool(settings.get("challengers_meet")),
        grow=bool(settings.get("grow")),
        closed=bool(settings.get("closed")),
        final=dict(settings.get("final") or {}),
        top=int(settings.get("top") or 0),
        confidence=float(settings.get("confidence", 0.95)),
        batch=int(settings.get("batch") or 10),  # a final's blocks
        seed_secret=bool(settings.get("seed_secret")),
        schedule_version=int(settings.get("schedule_version", 1)),  # written only past the first
        ladder=settings.get("ladder"),
        given=given,
        options=dict(settings["options"]),
        limits=Limits(max_fault_rate=float(settings.get("max_fault_rate", 1.0))),
        bots=tuple(BotConfig(name=n, url="http://127.0.0.1:9/") for n in settings["bots"]),
    )


class ScheduleCheck:
    """Checks journal lines, in journal order, against the schedule; ``finish`` names the
    scheduled matches the journal lacks."""

    def __init__(self, tournament: Mapping[str, Any], out: Path, add: Add) -> None:
        settings = tournament["settings"]
        self.add = add
        self.config = config_of(settings, out)
        self.fixtures: Schedule = schedule(self.config)
        self.total = self.fixtures.total
        self.done = bytearray((self.total + 7) // 8)
        self.left_out = 0  # grow: lines of bots no longer in the file
        self.stopped = "stopped" in tournament
        self.names = list(settings["bots"])
        self.gate: LadderGate | None = None
        self.dropped: set[int] = set()
        if format_named(self.config.format).adaptive:
            plan = plan_of(self.config)
            self.dropped = set(plan.dropped)
            self.gate = LadderGate(self.config, DqJudge(self.config, self.total), plan, self.total, {})
        final = plan_for(self.config)
        self.final = FinalCheck(self.config, final, self.dropped, add) if final is not None else None

    def line(self, rec: Mapping[str, Any]) -> None:
        """Check one journal line: its fixture's id, seed and bots."""
        mid = rec["id"]
        i = self.fixtures.position(rec)
        if i is None:
            self.left_out += 1
            return
        if not 0 <= i < self.total:
            self.add(mid, "unexpected", f"no scheduled match has this id, index and bots (index {rec['index']})")
            return
        f = self.fixtures[i]
        if f.id != mid and self.fixtures.grow is not None:  # the names at a table give its id
            self.add(mid, "bots", f"expected another table: {rec['bots']} are the bots of scheduled match {f.id}")
            return
        if f.id != mid:
            self.add(mid, "unexpected", f"expected the id {f.id} for index {i}, found {mid}")
            return
        if self.done[i >> 3] & (1 << (i & 7)):
            self.add(mid, "unexpected", "in the journal twice")
            return
        self.done[i >> 3] |= 1 << (i & 7)
        if rec["seed"] != f.seed:
            self.add(mid, "seed", f"expected {f.seed}, found {rec['seed']}")
        if i in self.dropped:
            self.add(mid, "unexpected", "a dropped table (tournament.json settings.ladder.dropped), yet played")
            return
        if self.final is not None and self.final.line(mid, i, rec):
            return
        if self.gate is not None:
            self._ladder(mid, i, rec)
            return
        want = [self.names[b] for b in f.seats]
        if list(rec["bots"]) != want:
            self.add(mid, "bots", f"expected {want}, found {rec['bots']}")

    def _ladder(self, mid: str, i: int, rec: Mapping[str, Any]) -> None:
        """The ladder's table ``i``, chosen again from the journal before it, against ``rec``."""
        gate = self.gate
        assert gate is not None
        epoch, t = divmod(i, gate.T)
        while epoch >= gate.whole:
            gate.ready(i)
            if epoch < gate.chosen:
                break
            gate.close(gate.whole)  # an epoch before lacks a match (reported by finish): go on without it
        rows = gate.tables.get(epoch)
        if rows is None or t >= len(rows):
            self.add(mid, "unexpected", f"epoch {epoch} was complete before this line")
            return
        found = line_keys(rec)
        if found != list(rows[t]):
            self.add(mid, "bots", f"expected {list(rows[t])}, found {found}")
        gate.add(dict(rec))

    def finish(self, complete: bool) -> list[str]:
        """Report the scheduled matches neither in the journal nor dropped: all of them when
        the run is ``complete``, else those before the last journaled one (a run in progress,
        stopped or interrupted has not played the rest; a growing one: none); what could not
        be checked, for the report."""
        notes: list[str] = []
        if self.left_out:
            notes.append(f"{self.left_out} matches of bots no longer in the file (grow)")
        if self.fixtures.grow is not None and not complete:
            return notes
        end = self.total if complete else self._last() + 1
        if self.final is not None and self.stopped:  # the final ended: every match up to its end
            end = max(end, self.final.end())
        for byte in range((end + 7) // 8):
            if self.done[byte] == 0xFF:
                continue
            for i in range(byte * 8, min(end, byte * 8 + 8)):
                if not self.done[byte] & (1 << (i & 7)) and i not in self.dropped:
                    self.add(
                        self.fixtures[i].id, "missing", f"scheduled match {i} is neither in the journal nor dropped"
                    )
        return notes

    def _last(self) -> int:
        """The last fixture in the journal (-1: none)."""
        for byte in range(len(self.done) - 1, -1, -1):
            if self.done[byte]:
                return byte * 8 + self.done[byte].bit_length() - 1
        return -1


class FinalCheck:
    """A ladder's final checked as ``verify`` reads the journal: its finalists found again
    from the season's lines (``run.final``), each final line's bots its group's rotation,
    no final line before the season's last nor past the look that settled the final."""

    def __init__(self, config: TournamentConfig, plan: FinalPlan, dropped: set[int], add: Add) -> None:
        self.config, self.plan, self.add = config, plan, add
        self.watch = watch_for(config, plan, config.ladder)
        self.season_left = plan.start - len([i for i in dropped if i < plan.start])
        self.tables = FinalTables.of(config.seed, config.seed_secret, config.players)
        self.block = -1
        self.settled_end = plan.end  # the end of the block whose look settled the final (so far)

    def line(self, mid: str, i: int, rec: Mapping[str, Any]) -> bool:
        """Check a line of the final (True), or count a season's line (False)."""
        if not self.plan.holds(i):
            self.season_left -= 1
            self.watch.add(rec)
            return False
        if self.season_left > 0:
            self.add(
                mid,
                "unexpected",
                f"a final's match while {self.season_left} match(es) of the season were still to come",
            )
        block = self.plan.block_of(i)
        if block > self.block:  # every block before it is whole by now: the looks before it
            self.block = block
            result = self.watch.result()
            self.settled_end = result.end if result.settled else self.plan.end
        if i >= self.settled_end:
            self.add(
                mid, "unexpected", f"the final was settled at match {self.settled_end}: no match after it is played"
            )
        finalists = self.watch.finalists()
        focus = self.watch.focus(block)
        seats = self.tables.seats(self.plan, i, focus) if len(finalists) >= self.config.players else ()
        want = [finalists[p] for p in seats]
        if list(rec["bots"]) != want:
            self.add(mid, "bots", f"expected the final's table {want}, found {rec['bots']}")
        self.watch.add(rec)
        return True

    def end(self) -> int:
        """The fixture index past the final's last match to play, by the journal's looks."""
        result = self.watch.result()
        return result.end if result.settled else self.plan.end
