"""``referee check-bot``: play a few real matches against one bot and report what an author must fix.

The bot under test (a URL, or a command started as a managed bot with ``{port}`` filled
in) plays matches of one game against a sample bot started the same way (a cooperative
game: it holds every seat, as in a ``team`` tournament), through the match machinery of
a tournament (``match.play_match`` and ``bots/*``). Its HTTP traffic goes through a
``Recorder`` (a transport wrapping the production one that keeps each request and
reply), so every fault is shown with the request that caused it and the reply. Then two probes: the same decision asked again (as the referee does when it
voids one) and several decisions asked at once (as concurrent matches do).

Each check ends ``ok``, ``WARN`` (worth fixing, not a fault: no keep-alive, a p99 close
to the deadline) or ``FAIL``; the check is clean when nothing failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bots import protocol, schema, wire
from referee.bots.control import BotRuntime
from referee.bots.process import ManagedBot, wait_ready
from referee.bots.transport import DeadlineExceeded, Reply, Target, Transport, TransportError
from referee.bots.wire import BotClient, Endpoint
from referee.config.model import BotConfig, Limits
from referee.config.redacted import Secret
from referee.errors import BotStartError
from referee.games import GAMES
from referee.games.base import Game
from referee.match.play import play_match
from referee.record import MatchRecord

OK, WARN, FAIL = "ok", "WARN", "FAIL"
CUT = 240  # characters of a request or reply shown in the report
EXAMPLES = 3  # faults shown per kind
CONCURRENT_PROBE = 4  # decisions asked at once by the concurrency probe
SAMPLE_MODULES = {"nimmt_plus": "nimmt", "drahtseilakt": "drahtseilakt", "dieci": "dieci", "the_game": "the_game"}
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
    replies: list[tuple[bytes, bytes]] = field(default_factory=list)  # (act request, reply body)

    def watched(self, target: Target) -> bool:
        """True for requests to the bot under test."""
        return (target.host, target.port) == (self.host, self.port)


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
            raise
        except (DeadlineExceeded, asyncio.CancelledError):
            seen.error = "no complete reply by the deadline"
            raise
        finally:
            t.in_flight -= 1
        status, data = reply.status, reply.body
        redirect = 300 <= status < 400
        seen.status, seen.reply, seen.over_cap = status, data, data is None and not redirect
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
            out.append(f"result: FAIL ({failed} check(s) failed, {warned} warning(s))")
        else:
            out.append(f"result: clean ({warned} warning(s))" if warned else "result: clean")
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
        log_dir.mkdir(parents=True, exist_ok=True)
        started: list[ManagedBot] = []
        stack.callback(_stop_all, started)
        hello = protocol.hello("check-bot", game.info.id, settings.option_sets[0], CANDIDATE)
        first, candidate = await _reach_candidate(settings, log_dir, hello, started)
        if candidate is None:
            return [Report([f"check-bot {settings.url or ' '.join(settings.command or ())}"], [first])]
        managed = started[0] if settings.command is not None else None
        opponent = None
        if not game.info.cooperative:
            opponent = await _start_opponent(settings, log_dir, started)
        reports = []
        for options in settings.option_sets:
            report = await _check_options(settings, game, players, options, candidate, opponent)
            report.checks.insert(0, first)
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
        f"the bot exited during the check (exit code {code}); in a tournament it is restarted, its matches meanwhile "
        "played by fallback",
        [f"{_log_where(bot, temporary)}:", *bot.log_excerpt().splitlines()],
    )


async def _reach_candidate(
    settings: CheckSettings, log_dir: Path, hello: bytes, started: list[ManagedBot]
) -> tuple[Check, Endpoint | None]:
    """Start the command (or reach the URL) and wait for hello: the hello check, and the
    bot's endpoint (None when it failed). A started bot gets a token, as in a tournament."""
    if settings.command is not None:
        bot = ManagedBot(BotConfig(CANDIDATE, command=settings.command, token=settings.token), log_dir, max_restarts=0)
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
        return Check(FAIL, "hello", f"{url} did not answer hello: {ex.fault}: {ex.detail}"), None
    return Check(OK, "hello", f"answered in {ex.latency_ms:.1f} ms"), endpoint


async def _start_opponent(settings: CheckSettings, log_dir: Path, started: list[ManagedBot]) -> Endpoint:
    """The sample bot of the game (random strategy) as a managed bot."""
    module = SAMPLE_MODULES[settings.game]
    command = ("python", "-m", f"sample_bots.{module}", "random", "--port", "{port}")
    bot = ManagedBot(BotConfig(OPPONENT, command=command), log_dir, max_restarts=0)
    started.append(bot)
    bot.start()
    hello = protocol.hello("check-bot", settings.game, {}, OPPONENT)
    await wait_ready(bot, bot.endpoint(), hello, settings.startup_ms, 2000, 65536)
    return bot.endpoint()


async def _check_options(
    settings: CheckSettings,
    game: Game,
    players: int,
    options: Mapping[str, Any],
    candidate: Endpoint,
    opponent: Endpoint | None,
) -> Report:
    """Play ``settings.matches`` matches with ``options`` and run the probes."""
    limits = Limits(deadline_ms=settings.deadline_ms, max_response_bytes=settings.max_response_bytes)
    url = candidate.url
    assert candidate.target.plain  # the command line takes http:// only
    traffic = Traffic(candidate.target.host, candidate.target.port)
    me = BotRuntime(candidate, max_concurrent=settings.max_concurrent)
    them = BotRuntime(opponent) if opponent is not None else me
    shown = ", ".join(f"{k} = {json.dumps(v)}" for k, v in options.items())
    report = Report(
        [
            f"check-bot {url} on {game.info.id} ({shown}): {settings.matches} match"
            f"{'es' if settings.matches != 1 else ''} of {players} players, "
            f"deadline {settings.deadline_ms} ms, {settings.concurrency} matches in flight"
            + (", the bot holds every seat (cooperative)" if game.info.cooperative else "")
        ]
    )
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
                    tournament="check-bot",
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
    report.checks.append(_faults(records, traffic))
    report.checks.append(_notices(records, mine))
    report.checks.append(_latency(records, mine, settings.deadline_ms))
    report.checks.append(_keep_alive(traffic))
    report.checks.append(await _concurrency(traffic, candidate, settings, game.info.id))
    report.checks.append(await _reask(traffic, candidate, settings, game.info.id))
    report.checks.append(_size(traffic, settings.max_response_bytes))
    report.checks.append(_schema(traffic, game.info.id))
    return report


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


def _faults(records: Sequence[MatchRecord], traffic: Traffic) -> Check:
    """Every fault of the bot under test, by kind, with examples."""
    faults = [f for r in records for f in r.faults if f["bot"] == CANDIDATE]
    decisions = sum(d for r in records for s, d in enumerate(r.decisions) if r.bots[s] == CANDIDATE)
    if not faults:
        return Check(OK, "faults", f"none in {decisions} decisions of {len(records)} matches")
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
            details.append(f"{kind}: {where}, {f['latency_ms']} ms: {f['detail']}")
            if seen is not None:
                details.append(f"  request: {_show_request(seen.request)}")
                reply = seen.error or ("(over the size cap)" if seen.over_cap else _cut(seen.reply))
                details.append(f"  reply:   {f'HTTP {seen.status} ' if seen.status else ''}{reply}")
        if len(found) > EXAMPLES:
            details.append(f"{kind}: … and {len(found) - EXAMPLES} more")
    return Check(FAIL, "faults", f"{len(faults)} ({counts}) in {decisions} decisions", details)


def _notices(records: Sequence[MatchRecord], mine: Sequence[Sequence[int]]) -> Check:
    """Whether ``start`` and ``end`` were answered with a 2xx."""
    sent = sum(len(m) for m in mine)
    failed = [f for r in records for f in r.faults if f["bot"] == CANDIDATE and f["phase"] in ("start", "end")]
    if not failed:
        return Check(OK, "start/end", f"{sent} start and {sent} end messages accepted")
    return Check(
        FAIL,
        "start/end",
        f"{len(failed)} of {2 * sent} not accepted (answer any 2xx, within the same deadline as act)",
        [f"{f['phase']}: {f['kind']}: {f['detail']}" for f in failed[:EXAMPLES]],
    )


def _latency(records: Sequence[MatchRecord], mine: Sequence[Sequence[int]], deadline_ms: int) -> Check:
    """p50 / p99 / max response time of act against the deadline."""
    times = sorted(t for r, seats in zip(records, mine) for s in seats for t in r.latency_ms[s])
    if not times:
        return Check(FAIL, "latency", "no act was answered")
    p50 = statistics.median(times)
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    text = (
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {times[-1]:.1f} ms over {len(times)} acts (deadline {deadline_ms} ms)"
    )
    if p99 > deadline_ms:
        return Check(FAIL, "latency", text)
    if p99 > deadline_ms / 2:
        return Check(WARN, "latency", text + ": p99 above half the deadline, a loaded tournament machine may tip it")
    return Check(OK, "latency", text)


def _keep_alive(traffic: Traffic) -> Check:
    """Whether connections are reused (keep-alive) rather than one per request."""
    text = f"{traffic.requests} requests over {traffic.connections} connections"
    if traffic.requests > 1 and traffic.connections >= traffic.requests:
        return Check(
            WARN,
            "keep-alive",
            text + ": none reused; answer HTTP/1.1 with keep-alive (and Content-Length) to save a connect per request",
        )
    return Check(OK, "keep-alive", text)


async def _ask(
    client: BotClient, endpoint: Endpoint, body: bytes, settings: CheckSettings
) -> tuple[bool, str, bytes | None]:
    """One probe request: (answered legally, what went wrong, reply)."""
    ex = await wire.post(client, endpoint, body, settings.deadline_ms, settings.max_response_bytes)
    if ex.fault is not None:
        return False, f"{ex.fault}: {ex.detail}", ex.body
    try:
        reply = protocol.parse_act_reply(ex.body or b"")
    except protocol.ReplyError as exc:
        return False, f"malformed: {exc}", ex.body
    if protocol.find_legal(reply["action"], json.loads(body)["legal"]) < 0:
        return False, f"illegal: {_cut(repr(reply['action']), 120)}", ex.body
    return True, f"{ex.latency_ms:.1f} ms", ex.body


async def _unanswered(
    endpoint: Endpoint, settings: CheckSettings, asks: dict[str, bytes], *, at_once: bool
) -> list[str]:
    """Ask every request of ``asks`` (all at once, each on its own connection, or one after
    another on one); a line "label: what went wrong" for each not answered legally."""
    async with BotClient(len(asks) if at_once else 1) as client:
        if at_once:
            results = await asyncio.gather(*(_ask(client, endpoint, b, settings) for b in asks.values()))
        else:
            results = [await _ask(client, endpoint, b, settings) for b in asks.values()]
    return [f"{label}: {why}" for label, (ok, why, _) in zip(asks, results, strict=True) if not ok]


def _answered_acts(traffic: Traffic) -> list[bytes]:
    return [req for req, _ in traffic.replies]


async def _concurrency(traffic: Traffic, endpoint: Endpoint, settings: CheckSettings, game: str) -> Check:
    """Several decisions of different matches asked at once, each on its own connection."""
    during = f"up to {traffic.max_in_flight} requests in flight during the matches"
    at_once = settings.max_concurrent or CONCURRENT_PROBE
    if at_once == 1:
        return Check(OK, "concurrency", f"not probed: --max-concurrent 1 ({during}); ask for max_concurrent = 1")
    acts = _answered_acts(traffic) or [s.request for k, s in traffic.seen.items() if k[0] == "act"]
    if not acts:
        return Check(FAIL, "concurrency", "no act request to probe with")
    bodies = []
    for i in range(at_once):
        msg = json.loads(acts[i % len(acts)])
        msg["match"] = f"probe{i:02d}"
        bodies.append(json.dumps(msg).encode())
    bad = await _unanswered(endpoint, settings, {f"probe{i:02d}": b for i, b in enumerate(bodies)}, at_once=True)
    if bad:
        return Check(
            FAIL,
            "concurrency",
            f"{len(bad)} of {at_once} decisions asked at once not answered in time ({during}); "
            "serve requests concurrently: one process serves many matches (and seats) at once "
            "(or ask the organiser for max_concurrent and check with --max-concurrent)",
            bad,
        )
    return Check(OK, "concurrency", f"{at_once} decisions asked at once all answered; {during}")


async def _reask(traffic: Traffic, endpoint: Endpoint, settings: CheckSettings, game: str) -> Check:
    """A decision asked again with the same decision number (a voided one) is answered again."""
    acts = _answered_acts(traffic)
    if not acts:
        return Check(FAIL, "re-asked decision", "no act was answered, nothing to ask again")
    body = acts[len(acts) // 2]
    msg = json.loads(body)
    bad = await _unanswered(endpoint, settings, {"ask 2": body, "ask 3": body}, at_once=False)
    where = f"{msg['match']} seat {msg['seat']} decision {msg['decision']}"
    if bad:
        return Check(
            FAIL,
            "re-asked decision",
            f"{where} asked again was not answered legally; a voided decision comes again with the same "
            "decision number and must be safe to answer twice",
            bad + [f"request: {_show_request(body)}"],
        )
    return Check(OK, "re-asked decision", f"{where} asked twice more: answered legally both times")


def _size(traffic: Traffic, cap: int) -> Check:
    """The largest reply against the size cap."""
    over = sum(s.over_cap for s in traffic.seen.values())
    text = f"largest {traffic.largest_reply} bytes (cap {cap})"
    if over:
        return Check(FAIL, "reply size", f"{over} repl(ies) over the cap of {cap} bytes, cut off; " + text)
    return Check(OK, "reply size", text)


def _schema(traffic: Traffic, game: str) -> Check:
    """Every act reply that is JSON, against the game's act reply schema."""
    name = f"{schema.game_schema_name(game)}#/$defs/act_reply"
    problems: list[str] = []
    checked = bad = 0
    for request, body in traffic.replies:
        try:
            reply = json.loads(body)
        except ValueError:
            continue  # not JSON: already a malformed fault
        checked += 1
        broken = schema.reply_errors(reply, game)
        if broken:
            bad += 1
            if len(problems) < EXAMPLES * 2:
                msg = json.loads(request)
                problems.append(
                    f"{msg['match']} seat {msg['seat']} decision {msg['decision']}: {'; '.join(broken[:3])}"
                )
                problems.append(f"  reply: {_cut(body)}")
    if bad:
        return Check(FAIL, "reply schema", f"{bad} of {checked} JSON replies break {name}", problems)
    return Check(OK, "reply schema", f"{checked} JSON replies valid against {name}")
