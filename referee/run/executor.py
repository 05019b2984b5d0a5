"""The one interface between the runner and whatever plays the matches: this process
(``local.LocalExecutor``) or a Dask cluster (``cluster.DaskExecutor``).

An executor is entered as an async context manager (bots up, greeted; on exit, down),
then ``use`` once (the lineup judged on the greetings, and the judge), ``play`` once or
more (the settled loop calls it per batch) and ``lag`` once at the end, also after a
failed or interrupted ``play``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from referee.config.model import TournamentConfig
from referee.run.dq import Gate
from referee.run.lineup import BotStatus
from referee.run.sink import Sink
from referee.schedule.formats import Fixture


class Executor(Protocol):
    """Plays fixtures pulled from an iterator, handing each finished match to the sink."""

    statuses: list[BotStatus]  # how every bot answered hello, once the executor is entered

    async def use(self, config: TournamentConfig, judge: Gate) -> None:
        """Play the fixtures of ``config`` (the entered config, or it without the bots
        ``lineup.judge_lineup`` excluded: theirs are stopped) under ``judge``."""
        ...

    async def play(self, fixtures: Iterator[Fixture], sink: Sink) -> None:
        """Play every fixture of ``fixtures``; ``sink.accept`` each record as its match ends.

        Pulls a fixture only when it can start it, so the schedule's length costs no
        memory; an exception from ``sink.accept`` (a full disk) cancels what is in
        flight and propagates."""
        ...

    async def lag(self) -> dict[str, Any] | None:
        """The referee's own lag figures (``Pacer.report``) for the console and
        ``timings.json``; None when they cannot be had (a cluster run cut short)."""
        ...
