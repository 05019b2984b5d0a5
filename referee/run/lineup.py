"""The tournament's bots before and after play: managed ones started and stopped, every
one greeted with ``hello``, and what each answered (``BotStatus``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots import protocol, wire
from referee.bots.control import BotRuntime, ReviveArgs
from referee.bots.process import ManagedBot, wait_ready
from referee.bots.sandbox import BotSpec, CageLimits
from referee.bots.wire import Endpoint
from referee.config.model import BotConfig, TournamentConfig
from referee.errors import BotStartError


@dataclass
class BotStatus:
    """How a bot answered ``hello`` before play."""

    name: str
    url: str
    managed: bool
    ok: bool
    detail: str
    ms: float


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


async def greet_all(config: TournamentConfig) -> list[BotStatus]:
    """Start the bots of ``config``, send each hello, stop them again (``referee check``)."""
    with BotPool(config, config.output / "logs") as pool:
        return await pool.start()


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


def readiness(statuses: Sequence[BotStatus]) -> tuple[str, bool]:
    """One line on the bots' hello (the ones not ready by name, first) and whether all are ready."""
    ready = ", ".join(f"{s.name} ({s.ms:.0f} ms)" for s in statuses if s.ok)
    failed = [s.name for s in statuses if not s.ok]
    if not failed:
        return f"all {len(statuses)} bots ready: {ready}", True
    return f"{len(failed)} of {len(statuses)} bots not ready: {', '.join(failed)}" + (
        f"; ready: {ready}" if ready else ""
    ), False


def require_ready(statuses: Sequence[BotStatus]) -> None:
    """Raise ``BotStartError`` naming every bot that did not answer hello."""
    failed = [s for s in statuses if not s.ok]
    if failed:
        raise BotStartError("; ".join(s.detail for s in failed))
