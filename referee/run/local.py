"""The local executor: matches on this process's event loop, at most ``concurrency`` in
flight; and the pieces every executor shares (``play_fixture``, ``play_gc``)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.bots.client import wire
from referee.bots.client.pool import LeanPool
from referee.bots.client.transport import Transport
from referee.bots.control import BotRuntime, Pacer
from referee.config.model import TournamentConfig
from referee.games import get_game
from referee.games.base import Game
from referee.match.play import play_match
from referee.record import MatchRecord
from referee.run.dq import DqJudge, Gate
from referee.run.lineup import BotPool, BotStatus
from referee.run.sink import Sink
from referee.schedule.formats import Fixture

# The cyclic collector's thresholds while matches are played. A match's own structures
# hold no cycles (reference counting frees them as it ends), so the default (700, 10, 10)
# only made full collections walk every live match, over and over; the little cyclic
# garbage (asyncio's failed futures and their tracebacks) is still collected, a few
# thousand allocations later.
PLAY_GC_THRESHOLD = (10_000, 20, 20)


@contextlib.contextmanager
def play_gc() -> Iterator[None]:
    """``PLAY_GC_THRESHOLD`` while matches are played here; the thresholds before it after."""
    before = gc.get_threshold()
    gc.set_threshold(*PLAY_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


async def play_fixture(
    config: TournamentConfig,
    game: Game,
    runtimes: Sequence[BotRuntime],
    pacer: Pacer | None,
    f: Fixture,
    disqualified: Collection[int],
    client: Transport,
) -> MatchRecord:
    """Play fixture ``f`` of ``config`` over ``client`` (the one match call of every
    executor: this process's and each Dask worker's)."""
    return await play_match(
        game,
        config.options,
        tournament=config.name,
        match_id=f.id,
        index=f.index if f.order is None else f.order,
        seed=f.seed,
        seats=[runtimes[b].endpoint for b in f.seats],
        client=client,
        limits=config.limits,
        runtimes=[runtimes[b] for b in f.seats],
        pacer=pacer,
        disqualified=disqualified,
    )


@dataclass
class LocalExecutor:
    """Matches on this event loop, at most ``concurrency`` in flight (an ``Executor``).

    Fixture *i* starts once the prefix its disqualifications are judged on is journaled
    (``dq.DqJudge.ready``) and plays with the seats the judge disqualifies there, so a
    run's outputs are the same at any concurrency and for any number of workers."""

    config: TournamentConfig
    game: Game
    runtimes: list[BotRuntime]
    pacer: Pacer | None
    judge: Gate | None = None
    pool: LeanPool | None = None  # keep-alive connections shared by every match (else one client per match)
    statuses: list[BotStatus] = field(default_factory=list)
    bots: BotPool | None = None

    async def use(self, config: TournamentConfig, judge: Gate) -> None:
        """Play ``config``'s lineup (the excluded bots' processes stopped) under ``judge``."""
        if self.bots is not None and len(config.bots) != len(self.config.bots):
            await asyncio.to_thread(self.bots.keep, config)
            self.runtimes = self.bots.runtimes
        self.config, self.judge = config, judge

    async def play(self, fixtures: Iterator[Fixture], sink: Sink) -> None:
        """Play ``fixtures``, pulling the next only when a slot frees."""
        judge: Gate = self.judge or DqJudge(self.config, 0)
        in_flight: dict[asyncio.Task[MatchRecord], Fixture] = {}
        nxt: Fixture | None = None
        try:
            while True:
                while len(in_flight) < self.config.concurrency:
                    if nxt is None:
                        nxt = next(fixtures, None)
                        if nxt is None:
                            break
                    if not judge.ready(nxt.index):
                        break  # waits for a match in flight below it to end
                    nxt = judge.fixture(nxt)
                    in_flight[asyncio.create_task(self._one(nxt, judge.seats(nxt.index, nxt.seats)))] = nxt
                    nxt = None
                if not in_flight:
                    if nxt is not None:  # cannot happen: fixtures come in order, so the prefix is in flight
                        raise RuntimeError(f"fixture {nxt.index} waits for a prefix nobody plays")
                    return
                finished, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(finished, key=lambda t: in_flight[t].index):
                    rec = task.result()
                    sink.accept(in_flight.pop(task), rec)
                    judge.add(rec)
        finally:
            for task in in_flight:
                task.cancel()
            await asyncio.gather(*in_flight, return_exceptions=True)

    async def lag(self) -> dict[str, Any] | None:
        """The pacer's lag figures (also those of an interrupted run)."""
        return self.pacer.report() if self.pacer is not None else {"samples": 0}

    async def _one(self, f: Fixture, disqualified: list[int]) -> MatchRecord:
        async with wire.new_client(self.config.players + 2, self.pool) as client:
            return await play_fixture(self.config, self.game, self.runtimes, self.pacer, f, disqualified, client)


@contextlib.asynccontextmanager
async def open_local(config: TournamentConfig) -> AsyncIterator[LocalExecutor]:
    """The local executor of ``config``: its bots started and greeted, a pacer, one
    keep-alive pool for the run (a bot's connections are reused across matches) and the
    play GC thresholds; all of it stopped on exit."""
    with BotPool(config, config.output / "logs") as bots:
        statuses = await bots.start()
        lean = LeanPool(max_idle=config.concurrency * config.players)
        try:
            async with Pacer.for_tournament(config.limits.deadline_ms, config.concurrency, config.players) as pacer:
                with play_gc():
                    yield LocalExecutor(config, get_game(config.game), bots.runtimes, pacer, None, lean, statuses, bots)
        finally:
            lean.close()
