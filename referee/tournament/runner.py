"""Runs a tournament: bots up, matches in flight, the journal, resume, bots down.

The journal ``matches.jsonl`` gets one line per finished match, written and flushed
as the match ends, so a killed run loses only the matches in flight. ``resume``
reads it back, checks every line belongs to this config's schedule, drops a torn last
line, and plays only what is missing. Standings are always computed from the journal
in fixture order, so they never depend on which match finished first.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bots import http, protocol
from ..bots.control import BotRuntime, Pacer, ReviveArgs
from ..bots.http import Endpoint
from ..bots.process import ManagedBot, wait_ready
from ..bots.sandbox import BotSpec, CageLimits
from ..config import BotConfig, TournamentConfig
from ..errors import BotStartError, JournalError
from ..games import get_game
from ..match import play_match
from ..record import MatchRecord
from . import transcripts
from .schedule import Fixture, schedule

JOURNAL = "matches.jsonl"


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
                max_fault_rate=lim.max_fault_rate,
                min_decisions=lim.fault_rate_min_decisions,
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
        async with http.new_client(1) as client:
            ex = await http.post(client, ep, body, max(lim.deadline_ms, 2000), lim.max_response_bytes)
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
        limits=CageLimits(
            sandbox=lim.sandbox,
            memory_mb=lim.memory_mb,
            max_processes=lim.max_processes,
            max_file_mb=lim.max_file_mb,
            max_open_files=lim.max_open_files,
            log_mb=lim.log_mb,
            bot_user=lim.bot_user,
        ),
    )


def parse_journal(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The complete lines of the journal at ``path`` and the byte offset where they end.

    A last line without its newline is a write cut short by a kill: left out (the bytes
    after the offset). A line that is not JSON before the last one is a JournalError.
    """
    data = path.read_bytes()
    records: list[dict[str, Any]] = []
    pos = 0
    number = 0
    while pos < len(data):
        number += 1
        nl = data.find(b"\n", pos)
        if nl < 0:
            break  # torn last line
        line = data[pos:nl]
        pos = nl + 1
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError as exc:
            if data[pos:].strip():
                raise JournalError(
                    f"{path}: line {number} is not JSON and is not the last line; the journal is damaged"
                ) from exc
            return records, nl - len(line)  # a damaged last line: torn too
    return records, pos


def read_journal(path: Path, fixtures: list[Fixture], bot_names: list[str], repair: bool) -> dict[int, dict[str, Any]]:
    """Finished matches of the journal at ``path`` by fixture index.

    A torn last line (a killed run) is dropped, and cut from the file when ``repair``.
    A line that does not match this config's schedule is a JournalError.
    """
    if not path.exists():
        return {}
    lines, good_end = parse_journal(path)
    records: dict[int, dict[str, Any]] = {}
    by_id = {f.id: f for f in fixtures}
    for rec in lines:
        f = by_id.get(str(rec.get("id"))) if isinstance(rec, dict) else None
        if f is None or rec.get("seed") != f.seed or rec.get("bots") != [bot_names[b] for b in f.seats]:
            raise JournalError(
                f"{path}: match {rec.get('id') if isinstance(rec, dict) else rec!r} does not belong to this "
                "tournament's schedule (another config, seed or bot list made it); use another --output or drop --resume"
            )
        records[f.index] = rec
    if repair and good_end < path.stat().st_size:
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
    return records


async def run_tournament(
    config: TournamentConfig,
    *,
    resume: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    on_ready: Callable[[list[BotStatus]], None] | None = None,
) -> dict[str, Any]:
    """Play every fixture not yet in the journal, appending each to it as it ends.
    Returns the referee's own lag figures (``Pacer.report``)."""
    game = get_game(config.game)
    fixtures = schedule(config)
    names = [b.name for b in config.bots]
    out = config.output
    out.mkdir(parents=True, exist_ok=True)
    journal = out / JOURNAL
    if resume:
        done = read_journal(journal, fixtures, names, repair=True)
    else:
        if journal.exists() and journal.stat().st_size > 0:
            journal.replace(out / (JOURNAL + ".prev"))
        done = {}
    todo = [f for f in fixtures if f.index not in done]
    faults = sum(len(r["faults"]) for r in done.values())
    started = time.perf_counter()
    progress = Progress(len(done), len(fixtures), faults, 0.0, len(done))
    if on_progress:
        on_progress(progress)

    if config.workers > 1 or config.cluster:
        from .distributed import DaskExecutor  # Dask is imported only when used

        async with DaskExecutor(config, done.values()) as executor:
            if on_ready:
                on_ready(executor.statuses)
            failed = [s for s in executor.statuses if not s.ok]
            if failed:
                raise BotStartError("; ".join(s.detail for s in failed))
            with (
                transcripts.Writer(out, config.transcripts == "all", resume) as tw,
                open(journal, "a", encoding="utf-8") as fh,
            ):
                try:
                    async for f, rec in executor.play(todo):
                        _sink(fh, tw, f, rec, progress, started, on_progress)
                finally:
                    os.fsync(fh.fileno())
            return await executor.report()

    with BotPool(config, out / "logs") as pool:
        statuses = await pool.start()
        if on_ready:
            on_ready(statuses)
        failed = [s for s in statuses if not s.ok]
        if failed:
            raise BotStartError("; ".join(s.detail for s in failed))
        _restore_tallies(pool.runtimes, done.values())
        pacer = Pacer.for_tournament(config.limits.deadline_ms, config.concurrency, config.players)
        async with pacer:
            with (
                transcripts.Writer(out, config.transcripts == "all", resume) as tw,
                open(journal, "a", encoding="utf-8") as fh,
            ):
                await _play_all(config, game, todo, pool.runtimes, pacer, fh, tw, progress, started, on_progress)
        return pacer.report()


def _restore_tallies(runtimes: list[BotRuntime], records: Any) -> None:
    """Fault tallies and disqualifications of the matches already in the journal."""
    by_name = {rt.name: rt for rt in runtimes}
    for rec in records:
        faulted = {(f["seat"], f["decision"]) for f in rec["faults"] if f.get("phase") == "act"}
        for s, bot in enumerate(rec["bots"]):
            rt = by_name[bot]
            rt.decisions += rec["decisions"][s]
            rt.faults += sum(1 for seat, _ in faulted if seat == s)
            if s in rec.get("disqualified", ()):
                rt.disqualified = True


def _sink(
    fh: Any,
    tw: transcripts.Writer,
    f: Fixture,
    rec: MatchRecord,
    progress: Progress,
    started: float,
    on_progress: Callable[[Progress], None] | None,
) -> None:
    """A finished match: its transcript, then its journal line, written and flushed; the
    progress display."""
    line = rec.to_json()
    if f.deal is not None:
        line["deal"] = f.deal
    tw.write(rec)  # a journal line always has its transcript
    fh.write(json.dumps(line, separators=(",", ":")) + "\n")
    fh.flush()
    progress.done += 1
    progress.faults += len(rec.faults)
    progress.elapsed_s = time.perf_counter() - started
    if on_progress:
        on_progress(progress)


async def _play_all(config, game, todo, runtimes, pacer, fh, tw, progress, started, on_progress) -> None:  # type: ignore[no-untyped-def]
    sem = asyncio.Semaphore(config.concurrency)
    max_conn = config.players + 2

    async def one(f: Fixture) -> None:
        async with sem, http.new_client(max_conn) as client:
            rec = await play_match(
                game,
                config.options,
                tournament=config.name,
                match_id=f.id,
                index=f.index,
                seed=f.seed,
                seats=[runtimes[b].endpoint for b in f.seats],
                client=client,
                limits=config.limits,
                runtimes=[runtimes[b] for b in f.seats],
                pacer=pacer,
            )
        _sink(fh, tw, f, rec, progress, started, on_progress)

    tasks = [asyncio.create_task(one(f)) for f in todo]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        os.fsync(fh.fileno())
