"""A ladder season's final: the runner's gate for it, and how it is played block by block.

Once a closed season's last table is journaled (or dropped), the finalists are the top
``final.bots`` of the season's order (``stats.places.FinalWatch``: computed from the
journal alone, so a resumed run and ``verify`` find the same ones); the final's fixtures
come after the season's (``schedule.final``: groups of finalists, each group's seat
rotations on one deal). The runner plays it a block at a time (``play_final``): after each
whole block the final's places are looked at, and the final ends at the first look that
settles its prize places or when its budget is played. Every look happens at a block
boundary with the whole block in the journal, so the final is the same at any
concurrency, on Dask workers and after a kill and ``--resume``. The seed stays secret
until the final ends: the run reports its end as a ``Stop`` (rule ``final``), which
``report.policy`` takes as the season's completion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.config.model import TournamentConfig
from referee.errors import ConfigError
from referee.record import MatchRecord
from referee.run.season import LadderGate
from referee.run.stopping import Stop
from referee.schedule.final import FinalPlan, FinalTables, final_plan, season_lineup
from referee.schedule.formats import Fixture, Schedule
from referee.schedule.registry import format_class
from referee.stats.places import FinalResult, FinalWatch, prize_places
from referee.store import journal as jn


def plan_for(config: TournamentConfig) -> FinalPlan | None:
    """The final of ``config`` (None: no final, or the season is not closed)."""
    if not format_class(config).adaptive:
        return None
    return final_plan(
        {
            "matches": config.matches,
            "players": config.players,
            "final": config.final,
            "closed": config.closed,
            "batch": config.batch,
        }
    )


def watch_for(config: TournamentConfig, plan: FinalPlan, ladder: Mapping[str, Any] | None) -> FinalWatch:
    """The final's watch of ``config`` (its lineup from the ladder plan ``ladder``)."""
    return FinalWatch(plan, season_lineup(ladder, plan), config.top, config.confidence)


class FinalGate:
    """The runner's gate of a ladder with a final (the ``Gate`` interface): the season's
    fixtures go to the ladder's gate, the final's get their seats here."""

    def __init__(self, config: TournamentConfig, ladder: LadderGate, plan: FinalPlan) -> None:
        self.config, self.ladder, self.plan = config, ladder, plan
        self.judge = ladder.judge
        self.lag = ladder.lag
        self.watch = watch_for(config, plan, config.ladder)
        self.index = {b.name: i for i, b in enumerate(config.bots)}
        self.tables = FinalTables.of(config.seed, config.seed_secret, config.players)
        self._seats: list[int] | None = None  # config positions of the finalists

    def rebuild(self, journal: Path) -> None:
        """Count the journal's lines (a resumed run)."""
        if journal.exists():
            for d in jn.read_journal(journal):
                self.watch.add(d)

    def season_whole(self) -> bool:
        """True once every table of the season is journaled or dropped."""
        return self.ladder.whole * self.ladder.T >= self.plan.start

    def ready(self, index: int) -> bool:
        """The ladder's answer for a season fixture; a final fixture waits for the whole season."""
        if index < self.plan.start:
            return self.ladder.ready(index)
        if not self.season_whole():
            self.ladder.ready(self.plan.start - 1)
            if not self.season_whole():
                return False
        return self.judge.ready(index)

    def fixture(self, f: Fixture) -> Fixture:
        """``f`` with its seats: the ladder's, or its group's finalists rotated."""
        if f.index < self.plan.start:
            return self.ladder.fixture(f)
        seats = self.finalist_seats()
        focus = self.watch.focus(self.plan.block_of(f.index))
        return replace(f, seats=tuple(seats[p] for p in self.tables.seats(self.plan, f.index, focus)))

    def finalist_seats(self) -> list[int]:
        """The finalists' config positions, in the season's order (once the season is whole)."""
        if self._seats is None:
            missing = [b for b in self.watch.finalists() if b not in self.index]
            if missing:
                raise ConfigError(
                    f"{self.config.path}: finalist(s) {', '.join(map(repr, missing))} not in the file: "
                    "the final seats the season's top bots; put them back to play it"
                )
            self._seats = [self.index[b] for b in self.watch.finalists()]
        return self._seats

    def seats(self, index: int, seats: Sequence[int]) -> list[int]:
        """The disqualified seats (the judge's)."""
        return self.judge.seats(index, seats)

    def add(self, rec: dict[str, Any] | MatchRecord) -> None:
        """Count one journaled match: the season's in the ladder's gate, every one in the watch."""
        d = rec.to_json() if isinstance(rec, MatchRecord) else rec
        if int(d["index"]) < self.plan.start:
            self.ladder.add(d)
        else:
            self.judge.add(d)
        self.watch.add(d)

    def dropped(self, index: int) -> bool:
        """The ladder's dropped tables (the final drops none)."""
        return index < self.plan.start and self.ladder.dropped(index)


Play = Callable[[Iterator[Fixture]], Any]  # an executor's play of some fixtures (awaitable)
Pending = Callable[[int, int], Iterator[Fixture]]  # the fixtures of [lo, hi) not yet journaled


async def play_final(gate: FinalGate, fixtures: Schedule, play: Play, pending: Pending) -> Stop:
    """Play the season, then the final block by block until a look settles its prize
    places or its budget is spent; why it ended."""
    await play(pending(0, gate.plan.start))
    for lo, hi in gate.plan.blocks():
        if gate.watch.result().over:
            break
        await play(pending(lo, hi))
    return final_stop(gate.config, gate.plan, gate.watch.result(), fixtures.total)


def final_stop(config: TournamentConfig, plan: FinalPlan, result: FinalResult, budget: int) -> Stop:
    """How a season with a final ended (``stopped`` of tournament.json and standings.json)."""
    n = len(result.finalists)
    places = f"places 1-{prize_places(config.top, n)}"
    if n < plan.players:
        reason = f"no final: {n} bot(s) of the season can play it, a table seats {plan.players}"
    elif result.settled:
        reason = (
            f"the final settled {places} among its {n} finalists at confidence {config.confidence} "
            f"after {result.played} of its {plan.matches} matches"
        )
    else:
        reason = f"the final played its {plan.matches} matches; {places} among its {n} finalists not all settled"
    return Stop(
        "final",
        result.settled,
        reason,
        result.played,
        plan.start + result.played,
        budget,
        config.confidence,
        config.top,
    )
