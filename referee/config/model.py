"""The validated tournament file: frozen dataclasses, each key declared on its field.

Also the facts other layers check against: the formats' names, the sandbox modes and the
bot-name rule (``NAME_RE``). Parsing is in ``referee.config.parse``; what a format asks of
its keys is checked by the format (``referee.schedule.registry``), and the settings a
run publishes are declared in ``referee.schedule.settings``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.config.keys import Key, choice, keys_of, setting
from referee.config.redacted import Secret
from referee.errors import ConfigError

# The formats' names: each is a class in referee.schedule.registry (a test holds the two equal).
FORMATS = ("round_robin", "random", "team", "gauntlet", "ladder")
ON_FAULT = ("fallback", "forfeit")
SANDBOX_MODES = ("auto", "bwrap", "none")
BOT_USERS = ("own", "referee")  # a started bot's uid (bots/cage/uids.py); user names are retired
NETWORKS = ("own", "host")  # a started bot's network (bots/cage/sandbox.py)
CAGE_KEYS = (  # the [limits] keys a [[bot]] may override in its own `limits` table
    "sandbox",
    "memory_mb",
    "max_processes",
    "max_file_mb",
    "max_open_files",
    "log_mb",
    "bot_user",
    "disk_mb",
    "cpus",
)
# the [limits] keys a bot may raise for itself: above the tournament's, the bot is marked
_RAISABLE = ("memory_mb", "disk_mb", "cpus", "max_processes", "max_file_mb", "max_open_files", "log_mb")
STOP_RULES = ("all", "settled")
# The version of the tables a random tournament deals (tournament.json's ``schedule_version``;
# absent: 1, the unbalanced tables drawn before). A resumed run keeps its journal's.
SCHEDULE_VERSION = 2
ON_UNREADY = ("stop", "exclude")
TRANSCRIPTS = ("all", "none")
# a bot's (or tournament's) name; \Z: "$" also matches before a final newline
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
NAME_RULE = "1-64 letters, digits, '_', '.' or '-', the first a letter or a digit"  # NAME_RE in words
CLUSTER_RE = re.compile(r"^(tcp|tls)://[^\s/]+:[0-9]{1,5}\Z")
_DQ_DOC = "a bot faulting in more of its decisions is disqualified: DQ in the leaderboard, no longer called"
_LIVE_DOC = "re-render the outputs from the journal this often during the run"


@dataclass(frozen=True)
class BotConfig:
    """One contestant: reached at ``url`` or started with ``command``."""

    name: str = setting(doc=f"the bot's name: {NAME_RULE}", kind=str)
    url: str | None = setting(None, kind=str, doc="a running bot's address")
    command: tuple[str, ...] | None = setting(
        None, kind=list, doc="a bot the referee starts: its command line, with {port}"
    )
    token: Secret | None = setting(None, kind=str, doc="sent as Authorization: Bearer; may be ${VAR}")  # noqa: RUF009
    max_concurrent: int = setting(
        0, minimum=0, note="(0 = limits.max_concurrent)", doc="requests in flight to this bot at once"
    )
    workdir: Path | None = setting(  # noqa: RUF009 (a Field: setting() is a field specifier)
        None, kind=str, doc="a started bot's own files, read-only in its cage (default: its program's folder)"
    )
    env: Mapping[str, str] = setting(
        {}, doc="a started bot's environment besides PATH, LANG, HOME; values may hold ${VAR}"
    )
    network: str = choice(
        NETWORKS, "network", explain="own: it reaches nothing, only the referee reaches it; host: the host's network"
    )
    limits: Mapping[str, Any] = setting({}, doc="a started bot's own [limits] of its cage, e.g. { memory_mb = 2048 }")

    @property
    def managed(self) -> bool:
        """True when the referee starts and stops this bot itself."""
        return self.command is not None


@dataclass(frozen=True)
class Limits:
    """Deadlines and the fault policy."""

    deadline_ms: int = setting(1000, minimum=1, doc="per decision, from sending to the last byte of the reply")
    on_fault: str = choice(ON_FAULT, "policy", doc="fallback: a seeded random legal action; forfeit: and it ranks last")
    max_faults: int = setting(10, minimum=0, doc="per seat per match; past it the seat is played by fallback uncalled")
    max_response_bytes: int = setting(65536, minimum=64, doc="longer replies are cut off (a malformed fault)")
    startup_ms: int = setting(15000, minimum=1, doc="how long a started bot may take to answer hello")
    max_concurrent: int = setting(0, minimum=0, note="(0: no limit)", doc="per bot, requests in flight at once")
    time_bank_ms: int = setting(0, minimum=0, doc="per seat per match, spent by answers slower than the deadline")
    max_fault_rate: float = setting(1.0, above=0, maximum=1, note="(a share; 1 = never disqualify)", doc=_DQ_DOC)
    fault_rate_min_decisions: int = setting(50, minimum=1, doc="decisions before the fault rate is judged")
    max_restarts: int = setting(3, minimum=0, doc="restarts of a crashed started bot before it is played by fallback")
    restart_backoff_ms: int = setting(200, minimum=0, doc="first wait before a restart; doubles each time")
    sandbox: str = choice(
        SANDBOX_MODES, "sandbox", explain="auto: bubblewrap when installed; bwrap: required; none: no cage"
    )
    memory_mb: int = setting(1024, minimum=16, doc="a started bot's memory: all its processes, shared memory and disk")
    max_processes: int = setting(128, minimum=1, doc="processes and threads of a started bot together")
    max_file_mb: int = setting(64, minimum=1, doc="the largest file a started bot may write")
    max_open_files: int = setting(1024, minimum=16, doc="per process of a started bot (every connection is one)")
    log_mb: int = setting(10, minimum=1, doc="logs/BOT.log, then one marker line and the rest dropped")
    bot_user: str = setting(
        "own", doc="own: a uid of its own (a root referee); referee: the referee's own, only with sandbox = 'none'"
    )
    disk_mb: int = setting(256, minimum=1, doc="all a started bot writes (home, /tmp), files bounded too (64 per MB)")
    cpus: float = setting(1.0, above=0, maximum=256, doc="CPU time of a started bot, all its processes (cores)")


# The [cluster] table: no field of its own (TournamentConfig.cluster holds its address).
CLUSTER_KEYS = {
    "address": Key(str, None, doc="an existing Dask scheduler, tls://HOST:PORT (or tcp://, unauthenticated)")
}


@dataclass(frozen=True, kw_only=True)
class TournamentConfig:
    """A whole tournament file, validated."""

    path: Path
    name: str = setting(None, kind=str, derived=True, doc="match ids and output folder name (default: the file's name)")
    game: str = setting(kind=str, doc="the game's id")
    # no seed in the file: the referee draws a 128-bit secret seed when the run starts
    # (``seed`` is 0 until then) and reveals it when the run is complete
    seed: int = setting(None, kind=int, derived=True, minimum=0, doc="same seed, same deals (default: secret)")
    players: int = setting(
        None, kind=int, derived=True, minimum=1, doc="seats per match (default: as many bots as the game allows)"
    )
    format: str = choice(
        FORMATS,
        "format",
        doc="how bots are drawn into tables (team: cooperative games). A competitive game takes round_robin, random, "
        "gauntlet or ladder; a cooperative game takes team, round_robin or random, never gauntlet or ladder",
    )
    rounds: int = setting(1, minimum=1, doc="round_robin and gauntlet: times every combination is played")
    matches: int = setting(10, minimum=1, doc="random, team, ladder (its budget) and a gauntlet without rounds: tables")
    concurrency: int = setting(8, minimum=1, doc="matches in flight (per worker with workers > 1)")
    output: Path = setting(None, kind=str, derived=True, doc="the output folder (default: leaderboards/NAME)")  # noqa: RUF009
    duplicate: bool = setting(False, doc="every deal once per seat rotation of its table")
    # gauntlet: the bots under test (every table holds one), the rest of the bots are the field
    challengers: tuple[str, ...] = setting((), kind=list, doc="gauntlet: names of the bots under test")
    challengers_meet: bool = setting(False, doc="gauntlet: a challenger's opponents include the other challengers")
    stop: str = choice(STOP_RULES, "rule", explain="all: every match; settled: stop once the top is settled")
    confidence: float = setting(
        0.95,
        minimum=0.5,
        below=1,
        doc='stop = "settled" and a ladder\'s final: the confidence of every claimed order, together',
    )
    top: int = setting(
        0,
        minimum=0,
        note='(0: 3 prize places; with stop = "settled", the whole ranking)',
        doc='the prize places, published first; stop = "settled": the places that must be settled',
    )
    batch: int = setting(
        10, minimum=1, unit=" deal", doc='stop = "settled" and a ladder\'s final: deals played between two looks'
    )
    publish_every_s: float = setting(0.0, minimum=0, maximum=86400, note="(seconds; 0: only at the end)", doc=_LIVE_DOC)
    grow: bool = setting(False, doc="fixtures keyed by bot names: bots may be added (or removed) and the run resumed")
    closed: bool = setting(False, doc="ladder: the season is over; the run that plays its last match reveals the seed")
    final: Mapping[str, int] = setting(
        {},
        doc="ladder: { bots = N, matches = M }: once the season is closed and played, its top N play a final of at "
        "most M more matches (seats balanced, duplicate deals) until the prize places among them are settled; "
        "{}: no final",
    )
    on_unready: str = choice(
        ON_UNREADY,
        "policy",
        explain="stop: a bot that does not answer hello stops the run; exclude: the run plays without it and names it",
    )
    workers: int = setting(1, minimum=1, doc="worker processes on this machine (more than 1: Dask)")
    transcripts: str = choice(TRANSCRIPTS, explain="all: every decision kept in OUT/transcripts; none: none")
    options: Mapping[str, Any]
    limits: Limits
    bots: tuple[BotConfig, ...]
    cluster: str | None = CLUSTER_KEYS["address"].default
    seed_secret: bool = False  # the seed was drawn by the referee (no seed in the file)
    schedule_version: int = SCHEDULE_VERSION  # random: which tables (1: a journal made before balanced tables)
    ladder: Mapping[str, Any] | None = None  # ladder: epoch size and lineup history (run.season.LadderPlan.document)
    given: frozenset[str] = frozenset()  # the [tournament] keys the file writes (a format's checks ask)
    # on_unready = "exclude": the bots of the file this run plays without, with the reason (run.lineup)
    excluded: tuple[tuple[str, str], ...] = ()
    # the mark the command opens its part of each started bot's log with (bots.cage.process.log_mark)
    log_section: str = ""

    def with_overrides(
        self,
        seed: int | None = None,
        concurrency: int | None = None,
        output: Path | None = None,
        workers: int | None = None,
        cluster: str | None = None,
    ) -> TournamentConfig:
        """The same config with the command line's overrides applied."""
        out = self
        for flag, value in (("workers", workers), ("seed", seed), ("concurrency", concurrency)):
            problem = None if value is None else TOURNAMENT_KEYS[flag].problem(value)
            if problem:
                raise ConfigError(f"--{flag}: {problem}")
        if workers is not None:
            out = replace(out, workers=workers)
        if cluster is not None:
            if not CLUSTER_RE.match(cluster):
                raise ConfigError(f"--cluster: {cluster!r} is not a scheduler address like tls://HOST:PORT")
            out = replace(out, cluster=cluster)
        if seed is not None:
            out = replace(out, seed=seed, seed_secret=False)
        if concurrency is not None:
            out = replace(out, concurrency=concurrency)
        if output is not None:
            out = replace(out, output=output)
        return out

    def max_concurrent(self, bot: BotConfig) -> int:
        """Requests in flight at once to ``bot``: its own limit, else the tournament's (0: none)."""
        return bot.max_concurrent or self.limits.max_concurrent

    def cage_marks(self, shared_uid: bool = False) -> dict[str, list[str]]:
        """Per started bot, each setting of its own that gives it less of a cage than the
        tournament's ``[limits]`` (``"sandbox = none"``, ``"network = host"``,
        ``"memory_mb 4096 > 1024"``, ``"bot_user = referee"``; ``"shared uid"`` when the
        run's bots share one uid); an empty list when none. Rows of the standings carry them."""
        lim = self.limits
        strength = {mode: i for i, mode in enumerate(("none", "auto", "bwrap"))}
        marks: dict[str, list[str]] = {}
        for bot in self.bots:
            if not bot.managed:
                continue
            found = []
            sandbox = bot.limits.get("sandbox", lim.sandbox)
            if sandbox == "none" or strength[sandbox] < strength[lim.sandbox]:
                found.append(f"sandbox = {sandbox}")
            if bot.network != "own":
                found.append(f"network = {bot.network}")
            if bot.limits.get("bot_user", lim.bot_user) != "own":
                found.append(f"bot_user = {bot.limits.get('bot_user', lim.bot_user)}")
            for key in _RAISABLE:
                own, ours = bot.limits.get(key), getattr(lim, key)
                if own is not None and own > ours:
                    found.append(f"{key} {own:g} > {ours:g}")
            if shared_uid and bot.limits.get("bot_user", lim.bot_user) == "own":
                found.append("shared uid")
            marks[bot.name] = found
        return marks


TOURNAMENT_KEYS = keys_of(TournamentConfig)
LIMIT_KEYS = keys_of(Limits)
BOT_KEYS = keys_of(BotConfig)
