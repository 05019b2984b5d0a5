"""The tournament's bots before and after play: managed ones started and stopped, every
one greeted with ``hello``, and what each answered (``BotStatus``); with
``on_unready = "exclude"`` the lineup the run plays with (``judge_lineup``).

A URL bot is greeted again and again (backoff from 0.1 s, doubling to 1 s) until it
answers or ``startup_ms`` has passed, as a started bot is. The lineup is judged once, by
the head, on every bot's worst answer (on Dask: over every worker)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.bots.cage.process import ManagedBot, wait_ready
from referee.bots.cage.sandbox import BotSpec, CageLimits
from referee.bots.client import protocol, wire
from referee.bots.client.wire import Endpoint
from referee.bots.control import BotRuntime, ReviveArgs
from referee.config.model import BotConfig, TournamentConfig
from referee.errors import BotStartError, Unready
from referee.record import TIMEOUT
from referee.schedule.registry import format_class

GREET_BACKOFF_S = 0.1  # first wait before a running bot is greeted again
GREET_BACKOFF_MAX_S = 1.0


@dataclass(frozen=True)
class BotStatus:
    """How a bot answered ``hello`` before play: ready, or ``unready`` and why (made where
    it failed: its public reason and the organiser's detail)."""

    name: str
    url: str
    managed: bool
    ms: float
    version: str = ""  # the optional ``version`` of its hello reply
    unready: Unready | None = None

    @property
    def ok(self) -> bool:
        """True when the bot answered hello."""
        return self.unready is None

    @property
    def detail(self) -> str:
        """Why the bot is not ready, in full (``ready`` when it is)."""
        return "ready" if self.unready is None else self.unready.detail


class BotPool:
    """The tournament's bots: managed ones started and stopped, all greeted with hello."""

    def __init__(self, config: TournamentConfig, log_dir: Path) -> None:
        self.config = config
        self.log_dir = log_dir
        self.managed: dict[str, ManagedBot] = {}
        self.endpoints: list[Endpoint] = []
        self.runtimes: list[BotRuntime] = []
        self.start_errors: dict[str, Unready] = {}  # managed bots that could not even be launched

    def __enter__(self) -> BotPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop every managed bot and its children, all at once."""
        _stop_all(list(self.managed.values()))

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
                    section=cfg.log_section,
                )
                self.managed[b.name] = mb
                try:
                    mb.start()
                except BotStartError as exc:  # reported as this bot's status, not raised
                    self.start_errors[b.name] = exc.unready
        self.endpoints = [
            self.managed[b.name].endpoint() if b.managed else Endpoint.make(b.name, b.url or "", b.token)
            for b in cfg.bots
        ]
        self.runtimes = [
            BotRuntime(
                ep,
                max_concurrent=cfg.max_concurrent(b),
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
            return BotStatus(name, ep.url, True, 0.0, unready=self.start_errors[name])
        if name in self.managed:
            answer: list[bytes] = []
            try:
                await wait_ready(
                    self.managed[name], ep, body, lim.startup_ms, lim.deadline_ms, lim.max_response_bytes, answer
                )
            except BotStartError as exc:
                return BotStatus(name, ep.url, True, (time.perf_counter() - t0) * 1000, unready=exc.unready)
            ms = (time.perf_counter() - t0) * 1000
            return BotStatus(name, ep.url, True, ms, protocol.hello_version(answer[0] if answer else None))
        ex = await _greet_url(ep, body, lim.startup_ms, max(lim.deadline_ms, 2000), lim.max_response_bytes)
        ms = (time.perf_counter() - t0) * 1000
        if ex.fault is not None:
            detail = (
                f"bot {name!r} at {ep.url} did not answer hello within {lim.startup_ms} ms "
                f"(limits.startup_ms; last: {ex.detail})"
            )
            public = ex.unanswered(lim.startup_ms)
            return BotStatus(name, ep.url, False, ms, unready=Unready("no_hello", public, detail))
        return BotStatus(name, ep.url, False, ms, protocol.hello_version(ex.body))

    def keep(self, config: TournamentConfig) -> None:
        """Play on with the bots of ``config`` only (a subset of this pool's): the others'
        runtimes dropped and their started processes stopped."""
        names = {b.name for b in config.bots}
        _stop_all([self.managed.pop(n) for n in list(self.managed) if n not in names])
        kept = [i for i, b in enumerate(self.config.bots) if b.name in names]
        self.endpoints = [self.endpoints[i] for i in kept]
        self.runtimes = [self.runtimes[i] for i in kept]
        self.config = config


async def _greet_url(ep: Endpoint, body: bytes, startup_ms: int, deadline_ms: int, max_bytes: int) -> wire.Exchange:
    """Send hello to a running bot until it answers or ``startup_ms`` has passed (backoff
    from ``GREET_BACKOFF_S`` doubling to ``GREET_BACKOFF_MAX_S``); the answer, else the last
    failure that says why (a timeout of an attempt the window cut short says less than the
    failure before it)."""
    started = time.monotonic()
    wait = GREET_BACKOFF_S
    last: wire.Exchange | None = None
    async with wire.new_client(1) as client:
        while True:
            budget = max(1.0, min(deadline_ms, startup_ms - (time.monotonic() - started) * 1000))
            ex = await wire.post(client, ep, body, budget, max_bytes)
            if ex.fault is None:
                return ex
            if last is None or ex.fault != TIMEOUT or budget >= deadline_ms:
                last = ex
            left_s = (startup_ms - (time.monotonic() - started) * 1000) / 1000
            if left_s <= 0:
                return last
            await asyncio.sleep(min(wait, left_s))
            wait = min(wait * 2, GREET_BACKOFF_MAX_S)


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
    """One short line on the bots' hello (the ones not ready by name) and whether all are ready."""
    ready = [s for s in statuses if s.ok]
    failed = [s.name for s in statuses if not s.ok]
    slowest = max(ready, key=lambda s: s.ms, default=None)
    slow = f", slowest {slowest.name} {slowest.ms:.0f} ms" if slowest is not None else ""
    if not failed:
        return f"{len(statuses)} bots ready{slow}", True
    return f"{len(failed)} of {len(statuses)} bots not ready: {', '.join(failed)}; {len(ready)} ready{slow}", False


def readiness_list(statuses: Sequence[BotStatus]) -> list[str]:
    """A line per bot: ready (with its hello's time and version) or why not (``--verbose``)."""
    return [
        f"  {s.name}: ready in {s.ms:.0f} ms" + (f", version {s.version!r}" if s.version else "")
        if s.ok
        else f"  {s.name}: NOT READY: {s.detail}"
        for s in statuses
    ]


def require_ready(statuses: Sequence[BotStatus]) -> None:
    """Raise ``BotStartError`` naming every bot that did not answer hello."""
    failed = [s for s in statuses if not s.ok]
    if failed:
        raise BotStartError("; ".join(s.detail for s in failed))


def public_reason(status: BotStatus) -> str:
    """Why a bot was excluded, fit to publish: the public text of its ``unready``, made
    where it failed (``tournament.json`` never holds a URL, address, command or log)."""
    return status.unready.public[:300] if status.unready is not None else "did not answer hello"


def without(config: TournamentConfig, excluded: Mapping[str, str]) -> TournamentConfig:
    """``config`` as if the bots ``excluded`` (name -> reason) were not in its file, with
    them named in ``config.excluded``; a BotStartError when too few bots are left."""
    if not excluded:
        return config
    bots = tuple(b for b in config.bots if b.name not in excluded)
    challengers = tuple(c for c in config.challengers if c not in excluded)
    named = ", ".join(sorted(excluded))
    needs_challenger = format_class(config).needs_challengers
    if len(bots) < config.players or (needs_challenger and not challengers):
        raise BotStartError(
            f"{len(excluded)} bot(s) not ready ({named}): too few bots are left for {config.format} "
            f"with {config.players} players" + ("" if challengers or not needs_challenger else " (no challenger)")
        )
    known = {n for n, _ in config.excluded}
    more = tuple((b.name, excluded[b.name]) for b in config.bots if b.name in excluded and b.name not in known)
    return replace(config, bots=bots, challengers=challengers, excluded=config.excluded + more)


def judge_lineup(config: TournamentConfig, statuses: Sequence[BotStatus], fixed: bool) -> TournamentConfig:
    """The config the run plays with: with ``on_unready = "exclude"`` the bots that did
    not answer hello are left out (``without``); else, or when the lineup is ``fixed``
    (a resumed tournament that cannot grow), a BotStartError names them."""
    failed = [s for s in statuses if not s.ok]
    if not failed:
        return config
    if config.on_unready != "exclude":
        require_ready(statuses)
    if fixed:
        raise BotStartError(
            "; ".join(s.detail for s in failed) + ". A resumed tournament plays the fixtures it started with: "
            "without grow = true no bot of them can be excluded now (wait until it answers, then --resume)"
        )
    names = {b.name for b in config.bots}
    return without(config, {s.name: public_reason(s) for s in failed if s.name in names})


def excluded_before(config: TournamentConfig, settings: Mapping[str, Any]) -> dict[str, str]:
    """The bots of ``config`` that a resumed tournament without grow still plays without:
    those its ``tournament.json`` ``settings`` name as excluded when it started (name ->
    reason). Any other change of the bot list stays what it was: another tournament. A
    ladder or a tournament with grow greets them again like any bot: they may join."""
    earlier = settings.get("excluded")
    if config.grow or format_class(config).adaptive or not isinstance(earlier, list):
        return {}
    reasons = {e["name"]: str(e["reason"]) for e in earlier if isinstance(e, dict)}
    bots = settings.get("bots")
    started = set(bots) if isinstance(bots, list) else set()
    return {b.name: reasons[b.name] for b in config.bots if b.name in reasons and b.name not in started}


def _stop_all(bots: list[ManagedBot]) -> None:
    """Stop ``bots`` and their children, all at once (each is signalled before any is waited for)."""
    for bot in bots:
        bot.begin_stop()
    for bot in bots:
        bot.wait_stopped()
