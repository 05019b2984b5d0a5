"""``referee check-bot``: play a few real matches against one bot and report what an author must fix.

The bot under test (a URL, or a command started as a managed bot with ``{port}`` filled
in) plays matches of one game against a sample bot started the same way (a cooperative
game: it holds every seat, as in a ``team`` tournament), through the match machinery of
a tournament (``match.play_match`` and ``bots/*``). Its HTTP traffic goes through a
``Recorder`` (a transport wrapping the production one that keeps each request and
reply), so every fault is shown with the request that caused it and the reply. Then two
probes: the same decision asked again with the same bytes (as the referee does when it
voids one) and several decisions asked at once (as concurrent matches do). A bot with a
token is sent ``hello`` without it and with a wrong one (the docs' rule: a 401 each).

Each run and option set is a tournament of its own name (``check-bot-<hex>-<k>``), so no
``(tournament, match, seat, decision)`` is ever sent twice with another state: a bot that
memoises as docs/protocol.md allows is never given a stale key.

Each check ends ``ok``, ``WARN`` (worth fixing, not a fault: no keep-alive, a p99 close
to the deadline, the TCP-delay pattern, a token not checked), ``FAIL``, or ``skip`` with
why when an earlier finding made it tell nothing (every reply faulted: nothing to probe
with; the bot late even asked alone: its slowness, not its concurrency). Each reply gets
one verdict: a faulted one is shown under ``faults`` (with a hint where its cause is
known: a 401, a near miss of a legal action named as JSON, an answer to an earlier
decision), the others are checked against the schema. The check is clean when nothing
failed.

``settings_for`` checks a bot as a tournament file runs it: its game, options, seats,
limits, cage and token.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import secrets
import shlex
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bots.cage.process import ManagedBot, wait_ready
from referee.bots.cage.sandbox import BotSpec
from referee.bots.client import protocol, schema, wire
from referee.bots.client.transport import DeadlineExceeded, Reply, Target, Transport, TransportError
from referee.bots.client.wire import BotClient, Endpoint
from referee.bots.control import BotRuntime
from referee.config.model import BotConfig, Limits, TournamentConfig
from referee.config.redacted import Secret
from referee.errors import BotStartError, OutputError
from referee.games import GAMES
from referee.games.base import Game
from referee.match.play import play_match
from referee.record import ILLEGAL, TIMEOUT, MatchRecord
from referee.run.lineup import bot_spec

OK, WARN, FAIL, SKIP = "ok", "WARN", "FAIL", "skip"
EVERY_REPLY_FAULTED = "skipped: every reply faulted (see faults)"
NAGLE_MS = (36.0, 50.0)  # a median in here, with most replies too: Nagle's algorithm meets delayed ACKs
CUT = 240  # characters of a request or reply shown in the report
EXAMPLES = 3  # faults shown per kind
CONCURRENT_PROBE = 4  # decisions asked at once by the concurrency probe
CANDIDATE, OPPONENT = "candidate", "sample-random"


@dataclass
class Seen:
    """One request to the bot under test and what came back."""

    request: bytes
    status: int | None = None
    reply: bytes | None = None
    error: str = ""
    over_cap: bool = False


@dataclass
class Traffic:
    """Everything the recorder saw of the bot under test (``connections``: those the lean
    pool opened to it)."""

    host: str
    port: int
    seen: dict[tuple[str, str, int, int], Seen] = field(default_factory=dict)
    requests: int = 0
    connections: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    largest_reply: int = 0
    dropped: int = 0  # exchanges whose connection the referee closed (a timeout, a broken or too long reply)
    replies: list[tuple[bytes, bytes]] = field(default_factory=list)  # (act request, reply body)

    def watched(self, target: Target) -> bool:
        """True for requests to the bot under test."""
        return (target.host, target.port) == (self.host, self.port)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 request``, ``2 requests`` (``many``: an irregular plural)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def _key(request: bytes) -> tuple[str, str, int, int]:
    msg = json.loads(request)
    return (msg.get("type", ""), msg.get("match", ""), msg.get("seat", -1), msg.get("decision", -1))


class Recorder(Transport):
    """A transport that sends through ``inner`` and keeps each exchange with the bot under
    test. It never sends at once (``send_now``), so each request is seen from start to end."""

    def __init__(self, inner: Transport, traffic: Traffic) -> None:
        self.inner = inner
        self.traffic = traffic

    async def request(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST through ``inner``; note the request and its outcome."""
        t = self.traffic
        if not t.watched(target):
            return await self.inner.request(target, body, deadline, max_bytes)
        seen = Seen(body)
        t.seen[_key(body)] = seen
        t.requests += 1
        t.in_flight += 1
        t.max_in_flight = max(t.max_in_flight, t.in_flight)
        try:
            reply = await self.inner.request(target, body, deadline, max_bytes)
        except TransportError as exc:
            seen.error = str(exc)
            t.dropped += 1
            raise
        except (DeadlineExceeded, asyncio.CancelledError):
            seen.error = "no complete reply by the deadline"
            t.dropped += 1
            raise
        finally:
            t.in_flight -= 1
        status, data = reply.status, reply.body
        redirect = 300 <= status < 400
        seen.status, seen.reply, seen.over_cap = status, data, data is None and not redirect
        t.dropped += seen.over_cap
        if data is not None:
            t.largest_reply = max(t.largest_reply, len(data))
            if b'"act"' in body[:40] and 200 <= status < 300:
                t.replies.append((body, data))
        return reply

    async def aclose(self) -> None:
        """Close ``inner``."""
        await self.inner.aclose()


@dataclass
class Check:
    """One line of the report, with indented details under it."""

    status: str
    name: str
    summary: str
    details: list[str] = field(default_factory=list)


@dataclass
class Report:
    """What ``check_bot`` found, per option set."""

    header: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when no check failed."""
        return bool(self.checks) and all(c.status != FAIL for c in self.checks)

    def lines(self) -> list[str]:
        """The report as text."""
        out = list(self.header)
        for c in self.checks:
            out.append(f"  {c.status:<4} {c.name}: {c.summary}")
            out.extend(f"         {d}" for d in c.details)
        failed = sum(c.status == FAIL for c in self.checks)
        warned = sum(c.status == WARN for c in self.checks)
        if not self.checks:
            out.append("result: FAIL (nothing was checked)")
        elif failed:
            out.append(f"result: FAIL ({plural(failed, 'check')} failed, {plural(warned, 'warning')})")
        else:
            out.append(f"result: clean ({plural(warned, 'warning')})" if warned else "result: clean")
        return out


@dataclass(frozen=True)
class CheckSettings:
    """What ``referee check-bot`` was asked to do."""

    game: str
    option_sets: tuple[Mapping[str, Any], ...]
    url: str | None = None
    command: tuple[str, ...] | None = None
    matches: int = 3
    players: int | None = None
    concurrency: int = 4
    deadline_ms: int = 1000
    max_response_bytes: int = 65536
    startup_ms: int = 15000
    seed: int = 1
    log_dir: Path | None = None
    token: Secret | None = None  # sent as a bearer token (a started bot gets a random one without it)
    max_concurrent: int = 0  # requests in flight to the bot at once, as a tournament may promise; 0: no limit
    limits: Limits | None = None  # a tournament's [limits] (deadline, caps, time bank ...); None: the above
    spec: BotSpec | None = None  # how a tournament starts and cages the command; None: default cage
    origin: str = ""  # where the settings come from ("FILE, bot NAME"), for the report
    log_section: str = ""  # the mark opening this check's part of each bot's log (process.log_mark)

    def match_limits(self) -> Limits:
        """The limits the matches are played under."""
        if self.limits is not None:
            return self.limits
        return Limits(deadline_ms=self.deadline_ms, max_response_bytes=self.max_response_bytes)


def settings_for(config: TournamentConfig, bot: str, **given: Any) -> CheckSettings:
    """The settings that check bot ``bot`` of ``config`` as the tournament runs it: its
    game, options and seats, its deadline and every limit, its cage, command or URL and
    token; ``given``: check-bot's own settings (matches, concurrency, seed, log_dir ...).
    Raises KeyError when the file has no such bot."""
    b = next((x for x in config.bots if x.name == bot), None)
    if b is None:
        raise KeyError(bot)
    lim = config.limits
    return CheckSettings(
        game=config.game,
        option_sets=(dict(config.options),),
        url=b.url,
        command=b.command,
        players=config.players,
        deadline_ms=lim.deadline_ms,
        max_response_bytes=lim.max_response_bytes,
        startup_ms=lim.startup_ms,
        token=b.token,
        max_concurrent=config.max_concurrent(b),
        limits=lim,
        spec=bot_spec(config, b) if b.managed else None,
        origin=f"{config.path}, bot {bot}",
        **given,
    )


def option_sets(game: Game, players: int, options: Mapping[str, Any], all_variants: bool) -> list[dict[str, Any]]:
    """The game's options to check: ``options`` completed with defaults, or with
    ``all_variants`` every combination of its choice and yes/no options that the game
    accepts at ``players`` seats (``options`` fixing some of them)."""
    if not all_variants:
        return [game.check_options(players, dict(options))]
    axes = []
    for o in game.info.options:
        if o.name in options:
            axes.append([(o.name, options[o.name])])
        elif o.choices is not None:
            axes.append([(o.name, c) for c in o.choices])
        elif isinstance(o.default, bool):
            axes.append([(o.name, False), (o.name, True)])
    out = []
    for combo in itertools.product(*axes):
        chosen = {**options, **dict(combo)}
        with contextlib.suppress(Exception):
            out.append(game.check_options(players, chosen))
    return out


def default_players(game: Game) -> int:
    """Four seats, or the nearest the game allows."""
    return max(game.info.min_seats, min(game.info.max_seats, 4))


async def check_bot(settings: CheckSettings) -> list[Report]:
    """Start or reach the bot, play the matches of every option set, probe, and report."""
    game = GAMES[settings.game]
    players = settings.players or default_players(game)
    with contextlib.ExitStack() as stack:
        log_dir = settings.log_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="check-bot-")))
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"--log-dir {log_dir}: cannot create it: {exc.strerror or exc}") from exc
        started: list[ManagedBot] = []
        stack.callback(_stop_all, started)
        # a tournament name of its own per run and option set: a bot that keys its memory by
        # (tournament, match, seat), as docs/protocol.md says, never meets a key of another check
        run = f"check-bot-{secrets.token_hex(4)}"
        hello = protocol.hello(run, game.info.id, settings.option_sets[0], CANDIDATE)
        first, candidate = await _reach_candidate(settings, log_dir, hello, started)
        if candidate is None:
            return [Report([f"check-bot {settings.url or ' '.join(settings.command or ())}"], [first])]
        token = await _token_check(candidate, hello, settings)
        managed = started[0] if settings.command is not None else None
        sample = None if game.info.cooperative else game.sample_opponent()
        opponent = None if sample is None else await _start_opponent(settings, sample, log_dir, started)
        reports = []
        for k, options in enumerate(settings.option_sets, 1):
            report = await _check_options(settings, game, players, options, candidate, opponent, f"{run}-{k}")
            report.checks[0:0] = [first, token]
            if managed is not None and not managed.alive():
                report.checks.append(_died(managed, settings.log_dir is None))
            reports.append(report)
            if managed is not None and not managed.alive():
                break  # nothing left to check
        return reports


def _stop_all(bots: list[ManagedBot]) -> None:
    for bot in bots:
        bot.begin_stop()
    for bot in bots:
        bot.wait_stopped()


def _log_where(bot: ManagedBot, temporary: bool) -> str:
    return f"its log {bot.log_path}" + (" (deleted at the end; --log-dir DIR keeps it)" if temporary else "")


def _died(bot: ManagedBot, temporary: bool) -> Check:
    """The bot under test exited during the check."""
    code = bot.proc.returncode if bot.proc is not None else None
    return Check(
        FAIL,
        "process",
        f"the bot exited during the check (exit code {code}); in a tournament it is restarted (its decisions wait "
        "for it within their deadline, then are played by fallback)",
        [f"{_log_where(bot, temporary)}:", *bot.log_excerpt().splitlines()],
    )


async def _reach_candidate(
    settings: CheckSettings, log_dir: Path, hello: bytes, started: list[ManagedBot]
) -> tuple[Check, Endpoint | None]:
    """Start the command (or reach the URL) and wait for hello: the hello check, and the
    bot's endpoint (None when it failed). A started bot gets a token, as in a tournament."""
    if settings.command is not None:
        spec: BotSpec | BotConfig = BotConfig(CANDIDATE, command=settings.command, token=settings.token)
        if settings.spec is not None:
            spec = dataclasses.replace(settings.spec, name=CANDIDATE)
        bot = ManagedBot(spec, log_dir, max_restarts=0, section=settings.log_section)
        started.append(bot)
        try:
            bot.start()
            endpoint = bot.endpoint()
            took = await wait_ready(bot, endpoint, hello, settings.startup_ms, settings.deadline_ms, 65536)
        except BotStartError as exc:
            first = str(exc).splitlines()
            return Check(FAIL, "start", first[0], [*first[1:], _log_where(bot, settings.log_dir is None)]), None
        return Check(OK, "start", f"answered hello {took * 1000:.0f} ms after it was started"), endpoint
    url = settings.url or ""
    endpoint = Endpoint.make(CANDIDATE, url, settings.token)
    async with BotClient(1) as client:
        ex = await wire.post(client, endpoint, hello, settings.startup_ms, 65536)
    if ex.fault is not None:
        hint = [_token_hint(settings)] if ex.status == 401 else []
        return Check(FAIL, "hello", f"{url} did not answer hello: {ex.fault}: {ex.detail}", hint), None
    return Check(OK, "hello", f"answered in {ex.latency_ms:.1f} ms"), endpoint


async def _token_check(candidate: Endpoint, hello: bytes, settings: CheckSettings) -> Check:
    """A bot with a token is sent ``hello`` without it and with a wrong one: the docs'
    rule is a 401 for each (anyone who can reach its port can send it requests)."""
    if "Authorization" not in candidate.headers:
        return Check(OK, "token", "not checked: the bot has no token (a bot at a URL gets one with --token-env NAME)")
    answers = []
    async with BotClient(1) as client:
        for label, token in (("without the token", None), ("with a wrong token", Secret(secrets.token_hex(16)))):
            made = Endpoint.make(candidate.name, candidate.url, token)
            endpoint = dataclasses.replace(
                made, target=dataclasses.replace(made.target, connect=candidate.target.connect)
            )
            ex = await wire.post(client, endpoint, hello, settings.match_limits().deadline_ms, 65536)
            answers.append(
                (label, ex.status, f"HTTP {ex.status}" if ex.status is not None else f"{ex.fault}: {ex.detail}")
            )
    if all(status == 401 for _, status, _ in answers):
        return Check(OK, "token", "hello without the token and with a wrong token refused with HTTP 401")
    got = "; ".join(f"{label}: {shown}" for label, _, shown in answers)
    return Check(
        WARN,
        "token",
        f"hello {got}: a bot with a token must answer every request without it (or with another) with 401 "
        "(docs/protocol.md, The token): anyone who can reach its port can send it requests",
    )


async def _start_opponent(
    settings: CheckSettings, command: tuple[str, ...], log_dir: Path, started: list[ManagedBot]
) -> Endpoint:
    """The game's sample opponent (``Game.sample_opponent``: ``command``) as a managed bot."""
    bot = ManagedBot(BotConfig(OPPONENT, command=command), log_dir, max_restarts=0, section=settings.log_section)
    started.append(bot)
    hello = protocol.hello("check-bot", settings.game, {}, OPPONENT)
    try:
        bot.start()
        await wait_ready(bot, bot.endpoint(), hello, settings.startup_ms, 2000, 65536)
    except BotStartError as exc:
        raise BotStartError(_opponent_failed(bot, exc), exc.unready) from exc
    return bot.endpoint()


def _opponent_failed(bot: ManagedBot, exc: BotStartError) -> str:
    """One line on why the opponent did not start (not the bot under test: no report), with
    the first error of its log (which is deleted at the end without --log-dir)."""
    what = f"check-bot's opponent, the sample bot {shlex.join(bot.config.command[:4])!r}, did not start"
    if exc.unready.kind not in ("exited", "no_hello"):
        return f"{what}: {str(exc).splitlines()[0]}"
    logged = bot.log_excerpt(1).splitlines()
    return f"{what}: it {exc.unready.public}" + (f" ({logged[0].strip()})" if logged else "")


async def _check_options(
    settings: CheckSettings,
    game: Game,
    players: int,
    options: Mapping[str, Any],
    candidate: Endpoint,
    opponent: Endpoint | None,
    tournament: str,
) -> Report:
    """Play ``settings.matches`` matches with ``options`` as tournament ``tournament`` and
    run the probes."""
    limits = settings.match_limits()
    assert candidate.target.plain  # the command line takes http:// only
    traffic = Traffic(candidate.target.host, candidate.target.port)
    me = BotRuntime(candidate, max_concurrent=settings.max_concurrent)
    them = BotRuntime(opponent) if opponent is not None else me
    report = Report(_header(settings, game, players, options, candidate.url, tournament))
    gate = asyncio.Semaphore(settings.concurrency)
    production = BotClient(max(16, settings.concurrency * players))
    async with Recorder(production, traffic) as client:

        async def one(i: int) -> MatchRecord:
            seat = i % players
            runtimes = [me if (game.info.cooperative or s == seat) else them for s in range(players)]
            async with gate:
                return await play_match(
                    game,
                    options,
                    tournament=tournament,
                    match_id=f"check{i:04d}",
                    index=i,
                    seed=settings.seed * 100_000 + i,
                    seats=[rt.endpoint for rt in runtimes],
                    client=client,
                    limits=limits,
                    runtimes=runtimes,
                )

        records = await asyncio.gather(*(one(i) for i in range(settings.matches)))
    traffic.connections = production.pool.opened[(traffic.host, traffic.port)]
    # the probes come after the matches' connections are closed, so a bot that serves one
    # connection at a time is judged by the probe alone
    mine = [[s for s, name in enumerate(r.bots) if name == CANDIDATE] for r in records]
    clean = _clean_acts(records, traffic)
    deadline = limits.deadline_ms
    report.checks.append(_faults(records, traffic, settings))
    report.checks.append(_notices(records, mine))
    report.checks.append(_latency(records, mine, deadline))
    report.checks.append(_keep_alive(traffic))
    # the re-ask probe asks one decision at a time: whether the bot is late even then tells
    # slowness from a lack of concurrency
    reask, slow = await _reask(clean, candidate, settings, _lateness(records, mine, deadline))
    report.checks.append(await _concurrency(traffic, clean, candidate, settings, slow))
    report.checks.append(reask)
    report.checks.append(_size(traffic, limits.max_response_bytes))
    report.checks.append(_schema(traffic, clean, game.info.id))
    return report


def _header(
    settings: CheckSettings, game: Game, players: int, options: Mapping[str, Any], url: str, tournament: str
) -> list[str]:
    """The report's first lines: what was played, under which deadline and limits."""
    shown = ", ".join(f"{k} = {json.dumps(v)}" for k, v in options.items())
    limits = settings.match_limits()
    out = [
        f"check-bot {url} on {game.info.id} ({shown}): {plural(settings.matches, 'match', 'matches')} of "
        f"{players} players, deadline {limits.deadline_ms} ms, {settings.concurrency} matches in flight"
        + (
            ", the bot holds every seat (cooperative)"
            if game.info.cooperative
            else ", the bot holds every seat (no sample opponent)"
            if game.sample_opponent() is None
            else ""
        )
        + f"; tournament {json.dumps(tournament)}"
    ]
    if settings.origin:
        cage = settings.spec.limits if settings.spec is not None else None
        out.append(
            f"  as {settings.origin} runs it: deadline {limits.deadline_ms} ms, time bank {limits.time_bank_ms} ms, "
            f"replies up to {limits.max_response_bytes} bytes, hello within {limits.startup_ms} ms, "
            f"max_concurrent {settings.max_concurrent or 'unlimited'}"
            + (
                f"; cage: sandbox {cage.sandbox}, network {cage.network}, memory {cage.memory_mb} MB, "
                f"cpus {cage.cpus:g}, processes {cage.max_processes}, disk {cage.disk_mb} MB, "
                f"open files {cage.max_open_files}"
                if cage is not None
                else ""
            )
        )
    return out


def _clean_acts(records: Sequence[MatchRecord], traffic: Traffic) -> list[bytes]:
    """The act requests of the bot under test answered without a fault (one verdict per
    reply: a faulted one is judged under faults only)."""
    faulted = {(r.id, f["seat"], f["decision"]) for r in records for f in r.faults if f["bot"] == CANDIDATE}
    out = []
    for request, _ in traffic.replies:
        _, match, seat, decision = _key(request)
        if (match, seat, decision) not in faulted:
            out.append(request)
    return out


def _cut(data: bytes | str | None, limit: int = CUT) -> str:
    if data is None:
        return "(none)"
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def _show_request(request: bytes) -> str:
    """A request as an author wants to see it: what was asked, the state and legal cut."""
    try:
        msg = json.loads(request)
    except ValueError:
        return _cut(request)
    if msg.get("type") != "act":
        return _cut(request)
    compact = json.dumps
    legal = msg.get("legal", [])
    return (
        f"act decision {msg.get('decision')}: state {_cut(compact(msg.get('state'), separators=(',', ':')), 160)}"
        f" legal ({len(legal)}): {_cut(compact(legal, separators=(',', ':')), 100)}"
    )


def _faults(records: Sequence[MatchRecord], traffic: Traffic, settings: CheckSettings) -> Check:
    """Every fault of the bot under test, by kind, with examples and what they hint at."""
    faults = [f for r in records for f in r.faults if f["bot"] == CANDIDATE]
    decisions = sum(d for r in records for s, d in enumerate(r.decisions) if r.bots[s] == CANDIDATE)
    matches = plural(len(records), "match", "matches")
    if not faults:
        return Check(OK, "faults", f"none in {plural(decisions, 'decision')} of {matches}")
    by_kind: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for r in records:
        for f in r.faults:
            if f["bot"] == CANDIDATE:
                by_kind.setdefault(f["kind"], []).append((r.id, f))
    counts = ", ".join(f"{k} {len(v)}" for k, v in sorted(by_kind.items()))
    details = []
    for kind, found in sorted(by_kind.items()):
        for match_id, f in found[:EXAMPLES]:
            dec = f["decision"] if f["decision"] is not None else -1
            seen = traffic.seen.get((f["phase"], match_id, f["seat"], dec))
            where = f"{f['phase']} {match_id} seat {f['seat']}" + (f" decision {dec}" if dec >= 0 else "")
            why = _why(f, seen, traffic) if seen is not None else ""
            shown = _shown_detail(f, seen)
            details.append(f"{kind}: {where}, {f['latency_ms']} ms: {shown}" + (f": hint: {why}" if why else ""))
            if seen is not None:
                details.append(f"  request: {_show_request(seen.request)}")
                reply = seen.error or ("(over the size cap)" if seen.over_cap else _cut(seen.reply))
                details.append(f"  reply:   {f'HTTP {seen.status} ' if seen.status else ''}{reply}")
        if len(found) > EXAMPLES:
            details.append(f"{kind}: … and {len(found) - EXAMPLES} more")
    if any(f["detail"].startswith("HTTP 401") for f in faults):
        details.append(_token_hint(settings))
    return Check(FAIL, "faults", f"{len(faults)} ({counts}) in {plural(decisions, 'decision')}", details)


def _token_hint(settings: CheckSettings) -> str:
    """What an HTTP 401 means, for a started bot or one at a URL."""
    if settings.command is not None:
        return (
            "hint: HTTP 401 is the bot refusing the referee's token: a started bot gets it in REFEREE_BOT_TOKEN "
            "and every request carries Authorization: Bearer <token> (docs/protocol.md)"
        )
    return (
        "hint: HTTP 401: the bot wants a token; give it with --token-env NAME (NAME: an environment variable "
        "holding the token the bot expects), sent as Authorization: Bearer <token>"
    )


def _why(fault: Mapping[str, Any], seen: Seen, traffic: Traffic) -> str:
    """What an illegal action most likely is: a near miss of a legal one (``_near_miss``),
    or the answer to an earlier decision (its action is in that decision's legal list)."""
    asked = _asked(fault, seen)
    if asked is None:
        return ""
    action, legal = asked
    near = _near_miss(action, legal)
    if near:
        return near
    _, match, seat, decision = _key(seen.request)
    for earlier in range(decision - 1, -1, -1):
        before = traffic.seen.get(("act", match, seat, earlier))
        if before is not None and protocol.find_legal(action, json.loads(before.request)["legal"]) >= 0:
            return (
                f"it is in the legal list of decision {earlier} of this match and seat: the reply may answer "
                "an earlier decision (state kept from an earlier request?)"
            )
    return ""


def _json(value: Any) -> str:
    """A value as JSON, as every author reads it (never Python's repr)."""
    return json.dumps(value, ensure_ascii=False)


def _whole_numbers(value: Any) -> Any:
    """``value`` with every float that is a whole number made an integer, at any depth."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    return value


def _near_miss(action: Any, legal: Sequence[Any]) -> str:
    """The legal action ``action`` was meant to be, and how it missed: floats where integers
    are legal (at any depth), a bare value where a one-element list is legal or the reverse,
    a wrong key name in an object; "" when none fits."""
    fixed = _whole_numbers(action)
    floats = "a float where an integer is" if isinstance(action, float) else "floats where integers are"
    why = [f'{floats} legal (no ".0")'] if _json(fixed) != _json(action) else []
    meant: Any = None
    if protocol.find_legal(fixed, legal) >= 0:
        meant = fixed
    elif not isinstance(fixed, list) and protocol.find_legal([fixed], legal) >= 0:
        meant, why = [fixed], [*why, "a bare value where a one-element list is legal"]
    elif isinstance(fixed, list) and len(fixed) == 1 and protocol.find_legal(fixed[0], legal) >= 0:
        meant, why = fixed[0], [*why, "a one-element list where the bare value is legal"]
    elif isinstance(fixed, dict):
        meant, renamed = _renamed(fixed, legal)
        if renamed:
            why = [*why, renamed]
    if meant is None or not why:
        return ""
    return f"send {_json(meant)}, not {_json(action)}: {'; '.join(why)}"


def _renamed(action: Mapping[str, Any], legal: Sequence[Any]) -> tuple[Any, str]:
    """The legal object ``action`` equals but for the names of some keys, and which keys
    (``the key "car" where the legal action has "card"``); (None, "") when there is none."""
    for candidate in legal:
        if not isinstance(candidate, dict) or len(candidate) != len(action) or candidate.keys() == action.keys():
            continue
        if any(k in candidate and protocol.find_legal(v, [candidate[k]]) < 0 for k, v in action.items()):
            continue
        missing = [k for k in candidate if k not in action]
        wrong, right = [], []
        for name in (k for k in action if k not in candidate):
            meant = next((m for m in missing if protocol.find_legal(action[name], [candidate[m]]) >= 0), None)
            if meant is None:
                break
            missing.remove(meant)
            wrong.append(_json(name))
            right.append(_json(meant))
        else:
            keys = "the key" if len(wrong) == 1 else "the keys"
            return candidate, f"{keys} {', '.join(wrong)} where the legal action has {', '.join(right)}"
    return None, ""


def _shown_detail(fault: Mapping[str, Any], seen: Seen | None) -> str:
    """A fault's detail, with an illegal action written as JSON (the record keeps Python's
    spelling of it)."""
    asked = _asked(fault, seen) if seen is not None else None
    if asked is None:
        return str(fault["detail"])
    action, legal = asked
    return f"action {_cut(_json(action), 120)} is not in legal ({len(legal)} actions)"


def _asked(fault: Mapping[str, Any], seen: Seen) -> tuple[Any, list[Any]] | None:
    """The action of an illegal reply and the legal list it missed; None for other faults."""
    if fault["kind"] != ILLEGAL or seen.reply is None:
        return None
    try:
        return json.loads(seen.reply)["action"], json.loads(seen.request)["legal"]
    except (ValueError, KeyError, TypeError):
        return None


def _notices(records: Sequence[MatchRecord], mine: Sequence[Sequence[int]]) -> Check:
    """Whether ``start`` and ``end`` were answered with a 2xx."""
    sent = sum(len(m) for m in mine)
    failed = [f for r in records for f in r.faults if f["bot"] == CANDIDATE and f["phase"] in ("start", "end")]
    if not failed:
        return Check(OK, "start/end", f"{plural(sent, 'start message')} and {plural(sent, 'end message')} accepted")
    return Check(
        FAIL,
        "start/end",
        f"{len(failed)} of {2 * sent} not accepted (answer any 2xx, within the same deadline as act)",
        [f"{f['phase']}: {f['kind']}: {f['detail']}" for f in failed[:EXAMPLES]],
    )


def _latency(records: Sequence[MatchRecord], mine: Sequence[Sequence[int]], deadline_ms: int) -> Check:
    """p50 / p99 / max response time of act against the deadline, and the TCP-delay pattern."""
    times = sorted(t for r, seats in zip(records, mine) for s in seats for t in r.latency_ms[s])
    if not times:
        return Check(FAIL, "latency", "no act was answered")
    p50 = statistics.median(times)
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    text = (
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {times[-1]:.1f} ms over {plural(len(times), 'act')} "
        f"(deadline {deadline_ms} ms)"
    )
    if p99 > deadline_ms:
        return Check(FAIL, "latency", text + ": p99 past the deadline, the bot is too slow")
    low, high = NAGLE_MS
    if low <= p50 <= high and sum(low - 4 <= t <= high for t in times) >= 0.5 * len(times):
        return Check(
            WARN,
            "latency",
            text + ": most replies take about 40 ms, the TCP-delay pattern (Nagle's algorithm meeting delayed "
            "ACKs): set TCP_NODELAY on the connection and write each reply in one send (the JDK's HttpServer: "
            "-Dsun.net.httpserver.nodelay=true)",
        )
    if p99 > deadline_ms / 2:
        return Check(WARN, "latency", text + ": p99 above half the deadline, a loaded tournament machine may tip it")
    return Check(OK, "latency", text)


def _keep_alive(traffic: Traffic) -> Check:
    """Whether the bot keeps connections open (keep-alive): a warning when more than half
    of the replies read to their end were followed by a new connection (those the
    referee itself closed after a fault are not the bot's)."""
    n, opened, dropped = traffic.requests, traffic.connections, traffic.dropped
    text = f"{plural(n, 'request')} over {plural(opened, 'connection')}"
    if dropped:
        text += f" ({dropped} closed by the referee after a fault)"
    completed = n - dropped
    if completed > 2 and opened - dropped > completed / 2:
        return Check(
            WARN,
            "keep-alive",
            f"{text}: the bot closes its connections; answer HTTP/1.1 with keep-alive (and Content-Length) "
            "to save a connect per request",
        )
    return Check(OK, "keep-alive", text)


@dataclass(frozen=True)
class Asked:
    """One probe request's outcome."""

    label: str
    answered: bool  # an HTTP reply came, in time
    late: bool  # no complete reply by the deadline (plus the time bank the request carried)
    legal: bool
    why: str


async def _ask(client: BotClient, endpoint: Endpoint, label: str, body: bytes, settings: CheckSettings) -> Asked:
    """One probe request, under the deadline plus the time bank it carries."""
    limits = settings.match_limits()
    msg = json.loads(body)
    deadline = limits.deadline_ms + int(msg.get("time_bank_ms", 0))
    ex = await wire.post(client, endpoint, body, deadline, limits.max_response_bytes)
    if ex.fault is not None:
        return Asked(label, ex.status is not None, ex.fault == TIMEOUT, False, f"{ex.fault}: {ex.detail}")
    try:
        reply = protocol.parse_act_reply(ex.body or b"")
    except protocol.ReplyError as exc:
        return Asked(label, True, False, False, f"malformed: {exc}")
    if protocol.find_legal(reply["action"], msg["legal"]) < 0:
        return Asked(label, True, False, False, f"illegal: {_cut(_json(reply['action']), 120)}")
    return Asked(label, True, False, True, f"{ex.latency_ms:.1f} ms")


async def _probe(endpoint: Endpoint, settings: CheckSettings, asks: dict[str, bytes], *, at_once: bool) -> list[Asked]:
    """Ask every request of ``asks`` (all at once, each on its own connection, or one after
    another on one)."""
    async with BotClient(len(asks) if at_once else 1) as client:
        if at_once:
            return list(await asyncio.gather(*(_ask(client, endpoint, k, b, settings) for k, b in asks.items())))
        return [await _ask(client, endpoint, k, b, settings) for k, b in asks.items()]


@dataclass(frozen=True)
class Lateness:
    """How late the bot was: its act replies in the matches past the deadline (a timeout,
    or time bank spent), and whether a decision asked alone (the re-ask probe) was late."""

    late: int
    acts: int
    deadline_ms: int
    alone: bool = False

    def skipped(self, name: str, what: str) -> Check:
        """The check ``name`` skipped: a late answer would tell slowness, not ``what``."""
        seen = [f"{self.late} of {plural(self.acts, 'act')} in the matches past the deadline of {self.deadline_ms} ms"]
        if self.alone:
            seen = [*seen[: bool(self.late)], "a decision asked alone here was late" + (" too" if self.late else "")]
        return Check(
            SKIP,
            name,
            f"skipped: the bot's replies were late ({', '.join(seen)}): a late answer here would show its slowness, "
            f"not {what}; see faults and latency",
        )


def _lateness(records: Sequence[MatchRecord], mine: Sequence[Sequence[int]], deadline_ms: int) -> Lateness:
    """The bot's act replies in the matches past the deadline."""
    times = [t for r, seats in zip(records, mine) for s in seats for t in r.latency_ms[s]]
    timeouts = sum(f["kind"] == TIMEOUT for r in records for f in r.faults if f["bot"] == CANDIDATE)
    return Lateness(max(timeouts, sum(t >= deadline_ms for t in times)), len(times), deadline_ms)


async def _concurrency(
    traffic: Traffic, clean: Sequence[bytes], endpoint: Endpoint, settings: CheckSettings, slow: Lateness
) -> Check:
    """Several decisions of different matches asked at once, each on its own connection:
    all answered in time (whether legally is the faults' business). Skipped when the bot is
    late even asked one decision alone: then the cause is its slowness."""
    during = f"up to {plural(traffic.max_in_flight, 'request')} in flight during the matches"
    at_once = settings.max_concurrent or CONCURRENT_PROBE
    if at_once == 1:
        return Check(OK, "concurrency", f"not probed: --max-concurrent 1 ({during}); ask for max_concurrent = 1")
    if not clean:
        return Check(SKIP, "concurrency", EVERY_REPLY_FAULTED)
    if slow.alone:
        return slow.skipped("concurrency", "whether it serves requests concurrently")
    bodies = {}
    for i in range(at_once):  # each probe match id once per tournament: no decision is sent twice differently
        msg = json.loads(clean[i % len(clean)])
        msg["match"] = f"probe{i:02d}"
        bodies[f"probe{i:02d}"] = json.dumps(msg).encode()
    results = await _probe(endpoint, settings, bodies, at_once=True)
    late = [f"{a.label}: {a.why}" for a in results if not a.answered]
    if late:
        return Check(
            FAIL,
            "concurrency",
            f"{len(late)} of {at_once} decisions asked at once not answered in time, though one asked alone was "
            f"({during}); serve requests concurrently: one process serves many matches (and seats) at once "
            "(or ask the organiser for max_concurrent and check with --max-concurrent)",
            late,
        )
    return Check(OK, "concurrency", f"{at_once} decisions asked at once all answered in time; {during}")


async def _reask(
    clean: Sequence[bytes], endpoint: Endpoint, settings: CheckSettings, slow: Lateness
) -> tuple[Check, Lateness]:
    """A decision asked again with the same bytes (a voided one) is answered again; and
    ``slow`` with whether that decision, asked alone, was late."""
    if not clean:
        return Check(SKIP, "re-asked decision", EVERY_REPLY_FAULTED), slow
    body = clean[len(clean) // 2]
    msg = json.loads(body)
    results = await _probe(endpoint, settings, {"ask 2": body, "ask 3": body}, at_once=False)
    slow = dataclasses.replace(slow, alone=any(a.late for a in results))
    bad = [f"{a.label}: {a.why}" for a in results if not a.legal]
    where = f"{msg['match']} seat {msg['seat']} decision {msg['decision']}"
    if slow.alone and slow.late and all(a.late for a in results if not a.legal):
        return slow.skipped("re-asked decision", "whether it answers a decision asked again"), slow
    if bad:
        return Check(
            FAIL,
            "re-asked decision",
            f"{where}, answered legally once, was not answered legally when asked again; a voided decision "
            "comes again with the same decision number and must be safe to answer twice",
            bad + [f"request: {_show_request(body)}"],
        ), slow
    return Check(OK, "re-asked decision", f"{where} asked twice more: answered legally both times"), slow


def _size(traffic: Traffic, cap: int) -> Check:
    """The largest reply against the size cap."""
    over = sum(s.over_cap for s in traffic.seen.values())
    text = f"largest {traffic.largest_reply} bytes (cap {cap})"
    if over:
        return Check(
            FAIL, "reply size", f"{plural(over, 'reply', 'replies')} over the cap of {cap} bytes, cut off; " + text
        )
    return Check(OK, "reply size", text)


def _schema(traffic: Traffic, clean: Sequence[bytes], game: str) -> Check:
    """Every act reply without a fault against the game's act reply schema (a faulted one
    has its verdict under faults)."""
    name = f"{schema.game_schema_name(game)}#/$defs/act_reply"
    if not clean:
        return Check(SKIP, "reply schema", EVERY_REPLY_FAULTED)
    judged = set(clean)
    faulted = len(traffic.replies) - len(judged)
    problems: list[str] = []
    checked = bad = 0
    for request, body in traffic.replies:
        if request not in judged:
            continue
        checked += 1
        broken = schema.reply_errors(json.loads(body), game)
        if broken:
            bad += 1
            if len(problems) < EXAMPLES * 2:
                msg = json.loads(request)
                problems.append(
                    f"{msg['match']} seat {msg['seat']} decision {msg['decision']}: {'; '.join(broken[:3])}"
                )
                problems.append(f"  reply: {_cut(body)}")
    also = f" ({plural(faulted, 'faulted reply', 'faulted replies')} under faults)" if faulted else ""
    if bad:
        return Check(
            FAIL, "reply schema", f"{bad} of {plural(checked, 'reply', 'replies')} break {name}{also}", problems
        )
    return Check(OK, "reply schema", f"{plural(checked, 'reply', 'replies')} valid against {name}{also}")
