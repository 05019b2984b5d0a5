"""Runs a tournament: bots up, matches in flight, the journal, resume, bots down.

The run is three parts joined by two small seams, so that another executor (a Dask
cluster, issue 17) can replace the local one without touching the rest:

- **source**: ``pending(schedule, state)`` yields the fixtures not yet in the journal,
  lazily, in fixture order (``Schedule`` computes fixture *i* on demand; ``state`` is
  the journal read once into one bit per fixture and per-bot tallies).
- **executor**: anything with ``async def play(fixtures: Iterator[Fixture], sink:
  Sink) -> None`` that plays the fixtures it pulls from the iterator and calls
  ``sink.accept(fixture, record)`` once per finished match, in the head process, as
  each match ends. ``LocalExecutor`` plays them on this event loop with at most
  ``concurrency`` matches in flight: it pulls the next fixture only when a slot frees,
  so at most ``concurrency`` fixtures and matches exist at any time, whatever the
  schedule's length. An exception raised by ``accept`` (a full disk) stops the
  executor: it cancels what is in flight and re-raises.
- **sink**: ``Sink.accept`` sets the record's deal, runs the ``before_write`` hooks
  (transcripts are written there, before the journal line, so a journal line always
  has its transcript), appends the line to the journal (``journal.JournalWriter``:
  written whole and flushed, so a killed run loses only the matches in flight),
  tallies it and reports progress. Only the sink writes the journal.

``resume`` reads the journal once, line by line (``journal.scan``), checks every line
belongs to this config's schedule, drops a torn last line, and plays only what is
missing. Standings are always computed from the journal in fixture order, so they
never depend on which match finished first.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from referee.bots import protocol, wire
from referee.bots.control import BotRuntime, Pacer, ReviveArgs
from referee.bots.process import ManagedBot, wait_ready
from referee.bots.sandbox import BotSpec, CageLimits
from referee.bots.transport import LeanPool, Transport
from referee.bots.wire import Endpoint
from referee.config.model import BotConfig, TournamentConfig
from referee.errors import BotStartError, ConfigError, JournalError
from referee.games import get_game
from referee.games.base import Game
from referee.match.play import play_match
from referee.record import MatchRecord
from referee.run.dq import DqJudge, judge_for
from referee.run.stopping import DealValues, batches, look, make_stop
from referee.schedule.formats import Fixture, Schedule, schedule
from referee.store import journal as jn
from referee.store import transcripts
from referee.store.journal import JOURNAL as JOURNAL  # re-exported: callers may import it from here
from referee.store.journal import JournalState

TIMINGS_EVERY_S = 2.0  # a kill loses at most this much of the response-time summary


@dataclass
class BotStatus:
    """How a bot answered ``hello`` before play."""

    name: str
    url: str
    managed: bool
    ok: bool
    detail: str
    ms: float


@dataclass
class Progress:
    """Where a run stands, for the live display."""

    done: int
    total: int
    faults: int
    elapsed_s: float
    skipped: int

    @property
    def rate(self) -> float:
        """Matches per second played in this run."""
        played = self.done - self.skipped
        return played / self.elapsed_s if self.elapsed_s > 0 else 0.0


class BotPool:
    """The tournament's bots: managed ones started and stopped, all greeted with hello."""

    def __init__(self, config: TournamentConfig, log_dir: Path) -> None:
        self.config = config
        self.log_dir = log_dir
        self.managed: dict[str, ManagedBot] = {}
        self.endpoints: list[Endpoint] = []
        self.runtimes: list[BotRuntime] = []
        self.start_errors: dict[str, str] = {}  # managed bots that could not even be launched

    def __enter__(self) -> BotPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop every managed bot and its children, all at once."""
        for bot in self.managed.values():
            bot.begin_stop()
        for bot in self.managed.values():
            bot.wait_stopped()

    async def start(self) -> list[BotStatus]:
        """Start managed bots, send hello to every bot, and report each one's status."""
        cfg, lim = self.config, self.config.limits
        for b in cfg.bots:
            if b.managed:
                mb = ManagedBot(
                    bot_spec(cfg, b),
                    self.log_dir,
                    max_restarts=lim.max_restarts,
                    restart_backoff_ms=lim.restart_backoff_ms,
                )
                self.managed[b.name] = mb
                try:
                    mb.start()
                except BotStartError as exc:  # reported as this bot's status, not raised
                    self.start_errors[b.name] = str(exc)
        self.endpoints = [
            self.managed[b.name].endpoint() if b.managed else Endpoint.make(b.name, b.url or "", b.token)
            for b in cfg.bots
        ]
        self.runtimes = [
            BotRuntime(
                ep,
                max_concurrent=b.max_concurrent or lim.max_concurrent,
                managed=self.managed.get(b.name),
                revive_args=ReviveArgs(
                    protocol.hello(cfg.name, cfg.game, dict(cfg.options), b.name),
                    lim.startup_ms,
                    lim.deadline_ms,
                    lim.max_response_bytes,
                ),
            )
            for b, ep in zip(cfg.bots, self.endpoints)
        ]
        return list(await asyncio.gather(*(self._greet(b.name, ep) for b, ep in zip(cfg.bots, self.endpoints))))

    async def _greet(self, name: str, ep: Endpoint) -> BotStatus:
        cfg, lim = self.config, self.config.limits
        body = protocol.hello(cfg.name, cfg.game, dict(cfg.options), name)
        t0 = time.perf_counter()
        if name in self.start_errors:
            return BotStatus(name, ep.url, True, False, self.start_errors[name], 0.0)
        if name in self.managed:
            try:
                await wait_ready(self.managed[name], ep, body, lim.startup_ms, lim.deadline_ms, lim.max_response_bytes)
            except BotStartError as exc:
                return BotStatus(name, ep.url, True, False, str(exc), (time.perf_counter() - t0) * 1000)
            return BotStatus(name, ep.url, True, True, "ready", (time.perf_counter() - t0) * 1000)
        async with wire.new_client(1) as client:
            ex = await wire.post(client, ep, body, max(lim.deadline_ms, 2000), lim.max_response_bytes)
        if ex.fault is not None:
            return BotStatus(
                name, ep.url, False, False, f"bot {name!r} at {ep.url} did not answer hello: {ex.detail}", ex.latency_ms
            )
        return BotStatus(name, ep.url, False, True, f"answered hello (HTTP {ex.status})", ex.latency_ms)


def bot_spec(config: TournamentConfig, bot: BotConfig) -> BotSpec:
    """What the bots layer needs to start and cage the managed ``bot`` of ``config``."""
    lim = config.limits
    return BotSpec(
        name=bot.name,
        command=bot.command or (),
        base_dir=config.path.resolve().parent,
        workdir=bot.workdir,
        env=dict(bot.env),
        token=bot.token,
        limits=CageLimits.of(lim, bot.limits, bot.network),
    )


def read_journal(path: Path, fixtures: Schedule, bot_names: list[str], repair: bool) -> JournalState:
    """The journal at ``path`` read once into a ``JournalState`` (done fixtures, tallies).

    A torn last line (a killed run) is dropped, and cut from the file when ``repair``.
    A line that does not match this config's schedule is a JournalError.
    """
    state = jn.scan(path, fixtures, bot_names)
    if repair:
        jn.repair(path, state.good_end)
    return state


def pending_range(fixtures: Schedule, state: JournalState, lo: int, hi: int) -> Iterator[Fixture]:
    """The source of one batch: fixtures ``lo`` to ``hi`` (excluded) not yet in the journal."""
    for i in range(lo, hi):
        if not state.is_done(i):
            yield fixtures[i]


def pending(fixtures: Schedule, state: JournalState) -> Iterator[Fixture]:
    """The source: fixtures not yet in the journal, lazily, in fixture order."""
    done = state.done
    for byte_index, byte in enumerate(done):
        if byte == 0xFF:
            continue  # eight finished matches
        for i in range(byte_index * 8, min(byte_index * 8 + 8, fixtures.total)):
            if not byte & (1 << (i & 7)):
                yield fixtures[i]


@dataclass
class Sink:
    """The sink: journal line, tallies and progress of every finished match (see the module doc)."""

    writer: jn.JournalWriter
    state: JournalState
    progress: Progress
    started: float
    on_progress: Callable[[Progress], None] | None = None
    before_write: list[Callable[[Fixture, MatchRecord], None]] = field(default_factory=list)
    timings: jn.Timings = field(default_factory=jn.Timings)
    timings_dir: Path | None = None  # where the response-time summary is saved (every few seconds)
    _saved: float = 0.0

    def save_timings(self) -> None:
        """Save the response-time summary now (at the end, and every few seconds)."""
        if self.timings_dir is not None:
            self.timings.save(self.timings_dir)
            self._saved = time.monotonic()

    def accept(self, fixture: Fixture, rec: MatchRecord) -> None:
        """Journal one finished match (called once per match, in the head process)."""
        rec.deal = fixture.deal
        for hook in self.before_write:
            try:
                hook(fixture, rec)
            except OSError as exc:  # a full disk under a transcript: a message naming the file
                raise jn.write_error(Path(exc.filename or "output"), exc) from exc
        self.writer.write(rec)
        self.timings.add(rec)
        if time.monotonic() - self._saved > TIMINGS_EVERY_S:
            self.save_timings()
        self.state.mark(fixture.index)
        self.progress.done += 1
        self.progress.faults += len(rec.faults)
        self.progress.elapsed_s = time.perf_counter() - self.started
        if self.on_progress:
            self.on_progress(self.progress)


class Executor(Protocol):
    """Plays fixtures pulled from an iterator, handing each finished match to the sink."""

    async def play(self, fixtures: Iterator[Fixture], sink: Sink) -> None:
        """Play every fixture of ``fixtures``; ``sink.accept`` each record as its match ends."""
        ...


@dataclass
class LocalExecutor:
    """Today's executor: matches on this event loop, at most ``concurrency`` in flight.

    Fixture *i* starts once the prefix its disqualifications are judged on is journaled
    (``dq.DqJudge.ready``) and plays with the seats the judge disqualifies there, so a
    run's outputs are the same at any concurrency and for any number of workers."""

    config: TournamentConfig
    game: Game
    runtimes: list[BotRuntime]
    pacer: Pacer | None
    judge: DqJudge | None = None
    pool: LeanPool | None = None  # keep-alive connections shared by every match (else one client per match)

    async def play(self, fixtures: Iterator[Fixture], sink: Sink) -> None:
        """Play ``fixtures``, pulling the next only when a slot frees (see the module doc)."""
        judge = self.judge or DqJudge(self.config, 0)
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

    async def _one(self, f: Fixture, disqualified: list[int]) -> MatchRecord:
        async with wire.new_client(self.config.players + 2, self.pool) as client:
            return await play_fixture(self.config, self.game, self.runtimes, self.pacer, f, disqualified, client)


# The cyclic collector's thresholds while matches are played. The default (700, 10, 10)
# ran a collection every 700 container objects the matches in flight keep, and each
# full one walked every live match: at concurrency 128, 16-19 µs of CPU per decision
# (13 % of the referee), 0.8-7 µs with these (``python -m benchmarks.speed``). A match's
# own structures hold no cycles (reference counting frees them as it ends); the little
# cyclic garbage (asyncio's failed futures and their tracebacks) is collected a few
# thousand allocations later, not never: the playing RSS stays flat (``make bench-scale``).
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


async def run_tournament(
    config: TournamentConfig,
    *,
    resume: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    on_ready: Callable[[list[BotStatus]], None] | None = None,
    before_write: list[Callable[[Fixture, MatchRecord], None]] | None = None,
    pilot_deals: int | None = None,
    publish: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Play every fixture not yet in the journal, appending each to it as it ends.
    Returns the referee's own lag figures (``Pacer.report``), and with ``stop =
    "settled"`` why the run stopped (``stopped``). ``pilot_deals``: play only the
    first that many deals (``referee plan``). ``publish``: called in a worker thread
    every ``publish_every_s`` seconds while matches are played (``LivePublisher``)."""
    game = get_game(config.game)
    fixtures = schedule(config)
    names = [b.name for b in config.bots]
    out = config.output
    out.mkdir(parents=True, exist_ok=True)
    journal = out / JOURNAL
    if resume:
        state = read_journal(journal, fixtures, names, repair=True)
    else:
        if journal.exists() and journal.stat().st_size > 0:
            journal.replace(out / (JOURNAL + ".prev"))
        state = jn.empty_state(fixtures.total)
    judge = judge_for(config, fixtures.total, journal, resume)  # disqualification in fixture order
    started = time.perf_counter()
    progress = Progress(state.count, fixtures.total, state.faults, 0.0, state.count)
    if on_progress:
        on_progress(progress)

    if config.workers > 1 or config.cluster:
        from referee.run.cluster import DaskExecutor  # Dask is imported only when used

        if config.stop == "settled" or config.grow or pilot_deals is not None:
            raise ConfigError(
                f"{config.path}: stop = 'settled', grow and referee plan play in this process for now: "
                "drop workers / --cluster for them"
            )

        async with DaskExecutor(config, judge) as executor:
            if on_ready:
                on_ready(executor.statuses)
            failed = [s for s in executor.statuses if not s.ok]
            if failed:
                raise BotStartError("; ".join(s.detail for s in failed))
            with _open_sink(config, state, progress, started, on_progress, before_write, resume) as sink:
                live = LivePublisher(config.publish_every_s, publish) if publish and config.publish_every_s else None
                try:
                    async for f, rec in executor.play(pending(fixtures, state)):
                        sink.accept(f, rec)
                finally:
                    if live is not None:
                        await live.stop()
                    with contextlib.suppress(JournalError):
                        sink.save_timings()
                report = await executor.report()
                sink.timings.referee_lag.append(_lag_entry(report))
                with contextlib.suppress(JournalError):
                    sink.save_timings()
            return report

    with BotPool(config, out / "logs") as pool:
        statuses = await pool.start()
        if on_ready:
            on_ready(statuses)
        failed = [s for s in statuses if not s.ok]
        if failed:
            raise BotStartError("; ".join(s.detail for s in failed))
        pacer = Pacer.for_tournament(config.limits.deadline_ms, config.concurrency, config.players)
        async with pacer:
            with play_gc(), _open_sink(config, state, progress, started, on_progress, before_write, resume) as sink:
                # one keep-alive pool for the run: a bot's connections are reused across matches
                lean = LeanPool(max_idle=config.concurrency * config.players)
                local = LocalExecutor(config, game, pool.runtimes, pacer, judge, lean)
                stopped: dict[str, Any] | None = None
                live = LivePublisher(config.publish_every_s, publish) if publish and config.publish_every_s else None
                try:
                    if config.stop == "settled" or pilot_deals is not None:
                        stopped = await play_until_settled(config, fixtures, state, sink, local, pilot_deals)
                    else:
                        await local.play(pending(fixtures, state), sink)
                finally:
                    lean.close()
                    if live is not None:
                        await live.stop()
                    sink.timings.referee_lag.append(_lag_entry(pacer.report()))  # an interrupted run's lag too
                    with contextlib.suppress(JournalError):  # a full disk: the journal's error is the one to report
                        sink.save_timings()
        report = pacer.report()
        if stopped is not None:
            report["stopped"] = stopped
        return report


@contextlib.contextmanager
def _open_sink(
    config: TournamentConfig,
    state: JournalState,
    progress: Progress,
    started: float,
    on_progress: Callable[[Progress], None] | None,
    before_write: list[Callable[[Fixture, MatchRecord], None]] | None,
    resume: bool,
) -> Iterator[Sink]:
    """The sink of a run, with its transcript writer, journal writer and response-time
    summary open (the same for one process and for Dask)."""
    out = config.output
    timings = (jn.Timings.load(out) if resume else None) or jn.Timings()
    with (
        transcripts.Writer(out, config.transcripts == "all", resume) as tw,
        jn.JournalWriter(out / JOURNAL) as writer,
    ):
        hooks = [lambda f, rec: tw.write(rec), *(before_write or ())]  # a journal line always has its transcript
        sink = Sink(writer, state, progress, started, on_progress, hooks, timings, out)
        sink._saved = time.monotonic()
        yield sink


class LivePublisher:
    """Calls ``publish`` every ``every_s`` seconds in a worker thread while the run goes on
    (rendering reads the journal and takes CPU: the event loop keeps serving the bots).
    ``stop`` waits for a publish in progress, so the final publish never races with it."""

    def __init__(self, every_s: float, publish: Callable[[], None]) -> None:
        self.every_s, self.publish = every_s, publish
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.every_s)
            if not self._stop.is_set():
                await asyncio.to_thread(self.publish)

    async def stop(self) -> None:
        """Stop publishing, after the publish in progress (if any) has finished."""
        self._stop.set()
        await asyncio.shield(self._task)


async def play_until_settled(
    config: TournamentConfig,
    fixtures: Schedule,
    state: JournalState,
    sink: Sink,
    executor: Executor,
    pilot_deals: int | None = None,
) -> dict[str, Any] | None:
    """Play batch after batch of deals, looking after each whole batch (stopping.py);
    return the ``stopped`` document (None for a pilot)."""
    values = DealValues(config)
    if state.count:  # a resumed run: its finished matches count, and the looks are replayed
        values.add_lines(jn.read_journal(config.output / JOURNAL))
    sink.before_write.append(lambda f, rec: values.add(f.index, rec.bots, rec.ranks, rec.scores, rec.lower_is_better))
    deals = values.deals if pilot_deals is None else min(values.deals, pilot_deals)
    verdict, upto = None, 0
    for lo, hi, upto in batches(deals, values.deal_size, config.batch):
        await executor.play(pending_range(fixtures, state, lo, hi), sink)
        if pilot_deals is None:
            verdict = look(values, upto, config)
            if verdict.settled:
                break
    if pilot_deals is not None:
        return None
    return make_stop(config, values, verdict, upto).document()


def _lag_entry(report: dict[str, Any]) -> dict[str, Any]:
    """The numbers of a lag report, as ``timings.json`` keeps them."""
    return {k: v for k, v in report.items() if isinstance(v, (int, float))}
