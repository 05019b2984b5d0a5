"""The tournament file: TOML in, validated frozen dataclasses out.

Every problem is a ``ConfigError`` that names the file, the key and the problem, with
a "did you mean" for misspelt keys; nothing is started on a bad file. Tokens may be
written as ``${VAR}`` and are then read from the environment; a token is held in a
``Secret`` whose repr never shows it.

Each key of the file is declared once, as a field of the dataclass it fills
(``setting(...)``: type, default, bounds or choices, meaning); the parser's checks and
their messages, the dataclass defaults and ``docs/config.md`` all come from there.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from referee.config.redacted import Secret
from referee.errors import ConfigError
from referee.games import GAMES, get_game
from referee.games.base import OptionError

FORMATS = ("round_robin", "random", "team", "gauntlet")
ON_FAULT = ("fallback", "forfeit")
SANDBOX_MODES = ("auto", "bwrap", "none")
NETWORKS = ("own", "host")  # --- cage: a started bot's network (bots/sandbox.py)
CAGE_KEYS = (
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
STOP_RULES = ("all", "settled")
TRANSCRIPTS = ("all", "none")
# The most matches one tournament may schedule: its fixtures are lazy, but resume keeps
# one bit per match and ids, seeds and the journal are sized for it. Counted before
# anything is allocated, so ``rounds = 10**9`` is a config error, not a MemoryError.
MAX_MATCHES = 100_000_000
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # \Z: "$" also matches before a final newline
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CLUSTER_RE = re.compile(r"^(tcp|tls)://[^\s/]+:[0-9]{1,5}\Z")


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED: Any = _Required()  # the default of a key that must be given


@dataclass(frozen=True)
class Key:
    """One key of the tournament file: its type, default, bounds or choices and meaning."""

    type: type
    default: Any = REQUIRED
    minimum: float | None = None  # at least this
    above: float | None = None  # more than this
    maximum: float | None = None  # at most this
    below: float | None = None  # less than this
    unit: str = ""  # after the lower bound in the message ("1 deal")
    note: str = ""  # after the bounds in the message ("(0: no limit)")
    choices: tuple[str, ...] = ()
    what: str = "value"  # "unknown <what> 'x'"
    explain: str = ""  # what the choices mean, in the message
    doc: str = ""

    def problem(self, value: Any) -> str | None:
        """Why ``value`` (already of the right type) is refused, or None."""
        if self.choices:
            if value in self.choices:
                return None
            explain = self.explain or "one of: " + ", ".join(self.choices)
            return f"unknown {self.what} {value!r}{_hint(value, self.choices)} ({explain})"
        if self.bounds and not self._within(value):
            return f"must be {self.bounds}{' ' + self.note if self.note else ''}, got {value}"
        return None

    @property
    def bounds(self) -> str:
        """The allowed range in words ("at least 1", "above 0 and at most 1"), or ""."""
        parts = []
        if self.minimum is not None:
            parts.append(f"at least {_num(self.minimum)}{self.unit}")
        if self.above is not None:
            parts.append(f"above {_num(self.above)}")
        if self.maximum is not None:
            parts.append(f"at most {_num(self.maximum)}")
        if self.below is not None:
            parts.append(f"below {_num(self.below)}")
        return " and ".join(parts)

    def _within(self, value: float) -> bool:
        # written so that NaN is outside every range
        return (
            (self.minimum is None or value >= self.minimum)
            and (self.above is None or value > self.above)
            and (self.maximum is None or value <= self.maximum)
            and (self.below is None or value < self.below)
        )


def setting(
    default: Any = REQUIRED,
    *,
    kind: type | None = None,
    derived: bool = False,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
    unit: str = "",
    note: str = "",
    choices: tuple[str, ...] = (),
    what: str = "value",
    explain: str = "",
    doc: str = "",
) -> Any:
    """A dataclass field that is a key of the tournament file, declared once.

    ``default`` is the key's value when the file leaves it out (and the field's default);
    ``derived``: the parser computes the field from it (no field default); ``kind`` the
    value's type in the file when the default does not tell it."""
    typ = kind or type(default)
    key = Key(typ, default, minimum, above, maximum, below, unit, note, choices, what, explain, doc)
    meta = {"key": key}
    if default is REQUIRED or derived:
        return field(metadata=meta)
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


def choice(choices: tuple[str, ...], what: str = "value", *, explain: str = "", doc: str = "") -> Any:
    """A key of the file that takes one of ``choices``, the first by default; ``explain``
    (what they mean) is shown when a value is refused, and is the doc unless one is given."""
    return setting(choices[0], choices=choices, what=what, explain=explain, doc=doc or explain)


_DQ_DOC = "a bot faulting in more of its decisions is disqualified"
_LIVE_DOC = "re-render the outputs from the journal this often during the run"


def keys_of(cls: type) -> dict[str, Key]:
    """The file keys a config dataclass declares, in declaration order."""
    return {f.name: f.metadata["key"] for f in fields(cls) if "key" in f.metadata}


@dataclass(frozen=True)
class BotConfig:
    """One contestant: reached at ``url`` or started with ``command``."""

    name: str = setting(doc="the bot's name: 1-64 letters, digits, '.', '_' or '-'", kind=str)
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
    # --- cage, second round (issue 25)
    network: str = choice(
        NETWORKS, "network", explain="own: it reaches nothing, only the referee reaches it; host: the host's network"
    )
    limits: Mapping[str, Any] = setting({}, doc="a started bot's own [limits] of its cage, e.g. { memory_mb = 2048 }")
    # --- end cage

    @property
    def managed(self) -> bool:
        """True when the referee starts and stops this bot itself."""
        return self.command is not None


@dataclass(frozen=True)
class Limits:
    """Deadlines and the fault policy."""

    deadline_ms: int = setting(1000, minimum=1, doc="per decision, from sending to the last byte of the reply")
    on_fault: str = choice(ON_FAULT, "policy", doc="fallback: a seeded random legal action; forfeit: and it ranks last")
    max_faults: int = setting(10, minimum=0, doc="per seat per match; past it the seat is played by fallback")
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
    bot_user: str = setting("nobody", doc="who started bots run as when the referee runs as root (a user name)")
    # --- cage, second round (issue 25): per-bot totals; a [[bot]] may override any CAGE_KEYS
    disk_mb: int = setting(256, minimum=1, doc="all a started bot writes (home, /tmp), files bounded too (64 per MB)")
    cpus: float = setting(1.0, above=0, maximum=256, doc="CPU time of a started bot, all its processes (cores)")
    # --- end cage


# The [cluster] table: no field of its own (TournamentConfig.cluster holds its address).
CLUSTER_KEYS = {"address": Key(str, None, doc="an existing Dask scheduler, tcp://HOST:PORT")}


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
    format: str = choice(FORMATS, "format", doc="how bots are drawn into tables (team: cooperative games)")
    rounds: int = setting(1, minimum=1, doc="round_robin and gauntlet: times every combination is played")
    matches: int = setting(10, minimum=1, doc="random and team (and a gauntlet without rounds): tables")
    concurrency: int = setting(8, minimum=1, doc="matches in flight (per worker with workers > 1)")
    output: Path = setting(None, kind=str, derived=True, doc="the output folder (default: leaderboards/NAME)")  # noqa: RUF009
    duplicate: bool = setting(False, doc="every deal once per seat rotation of its table")
    # gauntlet: the bots under test (every table holds one), the rest of the bots are the field
    challengers: tuple[str, ...] = setting((), kind=list, doc="gauntlet: names of the bots under test")
    challengers_meet: bool = setting(False, doc="gauntlet: a challenger's opponents include the other challengers")
    stop: str = choice(STOP_RULES, "rule", explain="all: every match; settled: stop once the top is settled")
    confidence: float = setting(
        0.95, minimum=0.5, below=1, doc='stop = "settled": the confidence of every claimed order, together'
    )
    top: int = setting(
        0, minimum=0, note="(0: the whole ranking)", doc='stop = "settled": the places that must be settled'
    )
    batch: int = setting(10, minimum=1, unit=" deal", doc='stop = "settled": deals played between two looks')
    publish_every_s: float = setting(0.0, minimum=0, maximum=86400, note="(seconds; 0: only at the end)", doc=_LIVE_DOC)
    grow: bool = setting(False, doc="fixtures keyed by bot names: bots may be added (or removed) and the run resumed")
    workers: int = setting(1, minimum=1, doc="worker processes on this machine (more than 1: Dask)")
    transcripts: str = choice(TRANSCRIPTS, explain="all: every decision kept in OUT/transcripts; none: none")
    options: Mapping[str, Any]
    limits: Limits
    bots: tuple[BotConfig, ...]
    cluster: str | None = CLUSTER_KEYS["address"].default
    seed_secret: bool = False  # the seed was drawn by the referee (no seed in the file)
    gauntlet_random: bool = False  # gauntlet: ``matches`` random tables instead of ``rounds`` over combinations

    @property
    def match_count(self) -> int:
        """How many matches the schedule holds, counted without building it."""
        return match_count(
            self.format,
            len(self.bots),
            self.players,
            self.rounds,
            self.matches,
            self.duplicate,
            gauntlet=self.gauntlet_shape,
        )

    @property
    def gauntlet_shape(self) -> tuple[int, int, bool]:
        """(challengers, opponents each challenger meets, random tables) of a gauntlet."""
        n_chal = len(self.challengers)
        opponents = len(self.bots) - 1 if self.challengers_meet else len(self.bots) - n_chal
        return n_chal, opponents, self.gauntlet_random

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
            if not _CLUSTER_RE.match(cluster):
                raise ConfigError(f"--cluster: {cluster!r} is not a scheduler address like tcp://HOST:PORT")
            out = replace(out, cluster=cluster)
        if seed is not None:
            out = replace(out, seed=seed, seed_secret=False)
        if concurrency is not None:
            out = replace(out, concurrency=concurrency)
        if output is not None:
            out = replace(out, output=output)
        return out

    def settings(self) -> dict[str, Any]:
        """The settings worth publishing beside the results (no tokens, no commands).

        A secret seed is None here (the runner adds its commitment, and the seed itself
        once the run is complete)."""
        secret = {"seed_secret": True} if self.seed_secret else {}
        return {
            "name": self.name,
            "game": self.game,
            "options": dict(self.options),
            "seed": None if self.seed_secret else self.seed,
            **secret,
            "players": self.players,
            "format": self.format,
            "rounds": self.rounds if self.format == "round_robin" or self._gauntlet_rounds() else None,
            "matches": self.matches if self.format in ("random", "team") or self.gauntlet_random else None,
            "deadline_ms": self.limits.deadline_ms,
            "on_fault": self.limits.on_fault,
            "max_faults": self.limits.max_faults,
            "duplicate": self.duplicate,
            **self._gauntlet_settings(),
            **({"grow": True} if self.grow else {}),
            **(
                {"stop": self.stop, "confidence": self.confidence, "top": self.top, "batch": self.batch}
                if self.stop != "all"
                else {}
            ),
            "time_bank_ms": self.limits.time_bank_ms,
            "max_fault_rate": self.limits.max_fault_rate,
            "sandbox": self.limits.sandbox,
            **self._cage_settings(),
            "bots": [b.name for b in self.bots],
            "transcripts": self.transcripts,
        }

    def _cage_settings(self) -> dict[str, Any]:
        """--- cage: the limits of started bots, and each bot's own where it has any."""
        if not any(b.managed for b in self.bots):
            return {}
        lim = self.limits
        own = {
            b.name: {**b.limits, **({"network": b.network} if b.network != "own" else {})}
            for b in self.bots
            if b.managed and (b.limits or b.network != "own")
        }
        cage = {
            "memory_mb": lim.memory_mb,
            "disk_mb": lim.disk_mb,
            "cpus": lim.cpus,
            "max_processes": lim.max_processes,
        }
        return {"cage": cage, **({"cage_bots": own} if own else {})}

    def _gauntlet_rounds(self) -> bool:
        return self.format == "gauntlet" and not self.gauntlet_random

    def _gauntlet_settings(self) -> dict[str, Any]:
        if self.format != "gauntlet":
            return {}
        return {"challengers": list(self.challengers), "challengers_meet": self.challengers_meet}


_TOP = ("tournament", "game", "limits", "bot", "cluster")
TOURNAMENT_KEYS = keys_of(TournamentConfig)
LIMIT_KEYS = keys_of(Limits)
BOT_KEYS = keys_of(BotConfig)


def keys_markdown() -> str:
    """The table of every key of the tournament file, as docs/config.md shows it."""
    lines = [
        "# The tournament file's keys",
        "",
        "Written by `python -m referee.config.model` from the declarations in `referee/config/model.py`"
        " (a test keeps it current). The annotated example in the README shows them in use.",
    ]
    for section, keys in (
        ("[tournament]", TOURNAMENT_KEYS),
        ("[limits]", LIMIT_KEYS),
        ("[[bot]]", BOT_KEYS),
        ("[cluster]", CLUSTER_KEYS),
    ):
        lines += ["", f"## {section}", "", "| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        for name, k in keys.items():
            default = "required" if k.default is REQUIRED else "—" if k.default is None else _toml(k.default)
            allowed = " / ".join(f"`{c}`" for c in k.choices) if k.choices else k.bounds
            allowed += f" {k.note}" if k.note and allowed else ""
            typ = _tname(k.type()).split(" ", 1)[1]
            doc = k.doc.replace("|", "\\|")
            lines.append(f"| `{name}` | {typ} | {default} | {allowed} | {doc} |")
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, (tuple, list)):
        return "`[]`"
    if isinstance(value, dict):
        return "`{}`"
    return f"`{value}`"


def load_config(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> TournamentConfig:
    """Read and validate the tournament file at ``path``."""
    p = Path(path)
    env = os.environ if env is None else env
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the file: {exc.strerror or exc}") from exc
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from exc
    except ValueError as exc:  # tomllib lets int() refuse a number thousands of digits long
        raise ConfigError(f"{p}: not valid TOML: a number too long to read ({exc})") from exc
    except RecursionError as exc:
        raise ConfigError(f"{p}: not valid TOML: arrays or tables nested too deeply") from exc
    return parse_config(doc, p, env)


def parse_config(doc: Mapping[str, Any], path: Path, env: Mapping[str, str]) -> TournamentConfig:
    """Validate an already parsed TOML document (``path`` is used in messages)."""
    err = _Errors(path)
    _unknown(err, "", doc, _TOP)
    t = _table(err, doc, "tournament")
    _unknown(err, "tournament.", t, TOURNAMENT_KEYS)
    tv = _values(err, "tournament", t, TOURNAMENT_KEYS)

    game_id = tv["game"]
    if game_id not in GAMES:
        err.fail(
            "tournament.game",
            f"unknown game {game_id!r}" + _hint(game_id, GAMES) + f" (games: {', '.join(sorted(GAMES))})",
        )
    game = get_game(game_id)

    bots_raw = doc.get("bot", [])
    if not isinstance(bots_raw, list) or not all(isinstance(b, dict) for b in bots_raw):
        err.fail("bot", "must be an array of tables: write each bot as [[bot]]")
    bots = tuple(_bot(err, i, b, env) for i, b in enumerate(bots_raw))
    if not bots:
        err.fail("bot", "no bots: add at least one [[bot]] table with a name and a url or a command")
    seen: dict[str, int] = {}
    for i, b in enumerate(bots):
        if b.name in seen:
            err.fail(f"bot[{i}].name", f"duplicate name {b.name!r} (also bot[{seen[b.name]}])")
        seen[b.name] = i

    players = tv["players"]
    if players is None:
        players = max(game.info.min_seats, min(len(bots), game.info.max_seats))

    fmt = tv["format"]
    if fmt == "team" and not game.info.cooperative:
        err.fail(
            "tournament.format", f"team is for cooperative games; {game_id} is competitive (use round_robin or random)"
        )
    if players > len(bots) and not game.info.cooperative:
        err.fail(
            "tournament.players",
            f"{players} seats per match but only {len(bots)} bots: add bots or lower players",
        )

    g = _table(err, doc, "game")
    try:
        options = game.check_options(players, g)
    except OptionError as exc:
        key = "tournament.players" if exc.key == "players" and "players" not in g else f"game.{exc.key}"
        hint = (
            _hint(exc.key, [o.name for o in game.info.options])
            if exc.key not in {o.name for o in game.info.options} | {"players"}
            else ""
        )
        err.fail(key, exc.message + hint)

    lim = _table(err, doc, "limits")
    _unknown(err, "limits.", lim, LIMIT_KEYS)
    lv = _values(err, "limits", lim, LIMIT_KEYS)
    if not _NAME_RE.match(lv["bot_user"]):
        err.fail("limits.bot_user", f"{lv['bot_user']!r} is not a user name")
    if tv["duplicate"] and fmt == "team":
        err.fail(
            "tournament.duplicate",
            "team already plays every deal with every bot; duplicate is for round_robin and random",
        )

    cl = _table(err, doc, "cluster")
    _unknown(err, "cluster.", cl, CLUSTER_KEYS)
    address = _values(err, "cluster", cl, CLUSTER_KEYS)["address"]
    if address is not None and not _CLUSTER_RE.match(address):
        err.fail("cluster.address", f"{address!r} is not a scheduler address like tcp://HOST:PORT")
    challengers = _challengers(err, fmt, tv, t, bots, players, game.info.cooperative)
    n_opp = len(bots) - 1 if tv["challengers_meet"] else len(bots) - len(challengers)
    gauntlet_random = fmt == "gauntlet" and "matches" in t and "rounds" not in t
    count = match_count(
        fmt,
        len(bots),
        players,
        tv["rounds"],
        tv["matches"],
        tv["duplicate"],
        gauntlet=(len(challengers), n_opp, gauntlet_random),
    )
    if count > MAX_MATCHES:
        key = (
            "tournament.rounds" if fmt in ("round_robin", "gauntlet") and not gauntlet_random else "tournament.matches"
        )
        err.fail(
            key,
            f"the tournament would schedule {count:,} matches, more than the limit of {MAX_MATCHES:,}; "
            + (
                f"{len(bots)} bots in tables of {players} make {math.comb(len(bots), players):,} tables a round"
                if fmt == "round_robin"
                else "lower it"
            ),
        )

    if tv["grow"] and (fmt == "random" or gauntlet_random):
        err.fail(
            "tournament.grow",
            "is for round_robin, gauntlet (with rounds) and team: random tables depend on the bot list",
        )
    if tv["grow"] and lv["max_fault_rate"] < 1.0:
        err.fail(
            "tournament.grow",
            "cannot be combined with limits.max_fault_rate yet (disqualification is judged by position)",
        )
    if tv["grow"] and tv["stop"] == "settled":
        err.fail("tournament.grow", "a tournament that grows cannot also stop when settled (choose one)")
    name = tv["name"] or path.stem
    if not _NAME_RE.match(name):
        err.fail("tournament.name", f"{name!r} must be 1-64 letters, digits, '.', '_' or '-'")
    if tv["output"] is not None and "\x00" in tv["output"]:
        err.fail("tournament.output", "must not contain a NUL character (no file system accepts one)")
    output = Path(tv["output"]) if tv["output"] else Path("leaderboards") / name
    return TournamentConfig(
        path=path,
        name=name,
        game=game_id,
        seed=0 if tv["seed"] is None else tv["seed"],
        seed_secret=tv["seed"] is None,
        players=players,
        format=fmt,
        rounds=tv["rounds"],
        matches=tv["matches"],
        concurrency=tv["concurrency"],
        output=output,
        duplicate=tv["duplicate"],
        workers=tv["workers"],
        cluster=address,
        transcripts=tv["transcripts"],
        options=options,
        limits=Limits(**lv),
        bots=bots,
        challengers=challengers,
        challengers_meet=tv["challengers_meet"],
        gauntlet_random=gauntlet_random,
        stop=tv["stop"],
        confidence=tv["confidence"],
        top=tv["top"],
        batch=tv["batch"],
        publish_every_s=tv["publish_every_s"],
        grow=tv["grow"],
    )


def _challengers(
    err: _Errors,
    fmt: str,
    tv: Mapping[str, Any],
    table: Mapping[str, Any],
    bots: tuple[BotConfig, ...],
    players: int,
    cooperative: bool,
) -> tuple[str, ...]:
    """The gauntlet's challengers, checked (names of bots, and a field big enough)."""
    if fmt != "gauntlet":
        for key in ("challengers", "challengers_meet"):
            if key in table:
                err.fail(f"tournament.{key}", "is for format = 'gauntlet'")
        return ()
    if cooperative:
        err.fail("tournament.format", "gauntlet is for competitive games (cooperative games: use team)")
    raw = tv["challengers"]
    if not raw:
        err.fail("tournament.challengers", 'a gauntlet needs challengers = ["bot name", ...]')
    names = {b.name for b in bots}
    out: list[str] = []
    for i, c in enumerate(raw):
        if not isinstance(c, str) or c not in names:
            err.fail(
                f"tournament.challengers[{i}]",
                f"{c!r} is not the name of a [[bot]]" + (_hint(c, names) if isinstance(c, str) else ""),
            )
        if c in out:
            err.fail(f"tournament.challengers[{i}]", f"{c!r} is named twice")
        out.append(c)
    if players < 2:
        err.fail("tournament.players", "a gauntlet needs at least 2 seats per table")
    opponents = len(bots) - 1 if tv["challengers_meet"] else len(bots) - len(out)
    if opponents < players - 1:
        err.fail(
            "tournament.challengers",
            f"each table needs {players - 1} bots besides its challenger but the field has {opponents}: "
            "add bots, lower players or set challengers_meet = true",
        )
    return tuple(out)


def match_count(
    fmt: str,
    n_bots: int,
    players: int,
    rounds: int,
    matches: int,
    duplicate: bool,
    gauntlet: tuple[int, int, bool] = (0, 0, False),
) -> int:
    """The number of matches a schedule of these settings holds (arithmetic only); a
    gauntlet's ``(challengers, opponents each meets, random tables)`` in ``gauntlet``."""
    if fmt == "gauntlet":
        n_chal, n_opp, rnd = gauntlet
        tables = matches if rnd else n_chal * math.comb(n_opp, players - 1) * rounds
    elif fmt == "round_robin":
        tables = math.comb(n_bots, players) * rounds
    elif fmt == "team":
        tables = matches * n_bots
    else:
        tables = matches
    return tables * (players if duplicate and fmt != "team" else 1)


class _Errors:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> None:
        raise ConfigError(f"{self.path}: {key}: {problem}")


def _num(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def _hint(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown(err: _Errors, prefix: str, table: Mapping[str, Any], known: Any) -> None:
    for key in table:
        if key not in known:
            err.fail(f"{prefix}{key}", "unknown key" + _hint(key, known) + f" (known: {', '.join(known)})")


def _table(err: _Errors, doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        err.fail(key, f"must be a table [{key}], got {_tname(value)}")
    return dict(value)


def _printable_ascii(text: str) -> bool:
    return all("!" <= c <= "~" for c in text)


def _is_http_url(url: str) -> bool:
    """An http(s) URL the HTTP layer can write into a request: printable ASCII, a host,
    a port in range if one is given."""
    if not re.match(r"^https?://[^/\s]+", url) or not _printable_ascii(url):
        return False
    try:
        parts = urlsplit(url)
        return bool(parts.hostname) and (parts.port is None or parts.port >= 1)  # .port raises past 65535
    except ValueError:
        return False


def _tname(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _values(err: _Errors, section: str, table: Mapping[str, Any], schema: Mapping[str, Key]) -> dict[str, Any]:
    """Every key of ``schema``: its value in ``table`` checked against its declaration, or
    its default."""
    out: dict[str, Any] = {}
    for key, spec in schema.items():
        where = f"{section}.{key}"
        if key not in table:
            if spec.default is REQUIRED:
                err.fail(where, "missing (required)")
            out[key] = spec.default
            continue
        value, typ = table[key], spec.type
        if typ is int and (isinstance(value, bool) or not isinstance(value, int)):
            err.fail(where, f"expected an integer, got {_tname(value)} {value!r}")
        elif typ is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
            err.fail(where, f"expected a number, got {_tname(value)} {value!r}")
        elif typ is not float and not isinstance(value, typ):
            err.fail(where, f"expected {_tname(typ())}, got {_tname(value)} {value!r}")
        value = float(value) if typ is float else value
        problem = spec.problem(value)
        if problem:
            err.fail(where, problem)
        out[key] = value
    return out


def _bot(err: _Errors, i: int, table: dict[str, Any], env: Mapping[str, str]) -> BotConfig:
    label = f"bot[{i}]" if not isinstance(table.get("name"), str) else f"bot[{i}] ({table['name']})"
    _unknown(err, f"{label}.", table, BOT_KEYS)
    v = _values(err, label, table, BOT_KEYS)
    if not _NAME_RE.match(v["name"]):
        err.fail(f"{label}.name", f"{v['name']!r} must be 1-64 letters, digits, '.', '_' or '-'")
    if (v["url"] is None) == (v["command"] is None):
        err.fail(label, "give exactly one of url (a running bot) or command (a bot the referee starts)")
    command = None
    if v["command"] is not None:
        if not v["command"] or not all(isinstance(a, str) and "\x00" not in a for a in v["command"]):
            err.fail(f"{label}.command", "must be a non-empty array of strings (without NUL characters)")
        if not any("{port}" in a for a in v["command"]):
            err.fail(f"{label}.command", "must contain {port}, replaced by the free port the bot listens on")
        command = tuple(v["command"])
    url = v["url"]
    if url is not None and _is_http_url(url) and "@" in urlsplit(url).netloc:
        err.fail(
            f"{label}.url",
            'must not contain a user name or password (user:pass@): give the bot a token = "${VAR}" instead',
        )
    if url is not None and not _is_http_url(url):
        err.fail(
            f"{label}.url",
            f"{url!r} is not an http:// or https:// address (printable ASCII, "
            "a host, a port 1-65535 if any; an international name in its xn-- form)",
        )
    token = None
    if v["token"] is not None:

        def sub(m: re.Match[str]) -> str:
            if m.group(1) not in env:
                err.fail(f"{label}.token", f"environment variable {m.group(1)} is not set")
            return env[m.group(1)]

        token = Secret(_ENV_RE.sub(sub, v["token"]))
        if not _printable_ascii(token.reveal()):  # it goes into a header line; never show it
            err.fail(f"{label}.token", "must be printable ASCII without spaces (the value is not shown)")
    for key in ("workdir", "env", "network", "limits"):
        if command is None and key in table:
            err.fail(f"{label}.{key}", "only for a bot with a command")
    # --- cage: a bot's own limits, checked as in [limits]
    own = v["limits"] or {}
    _unknown(err, f"{label}.limits.", own, {k: LIMIT_KEYS[k] for k in CAGE_KEYS})
    own = _values(err, f"{label}.limits", own, {k: LIMIT_KEYS[k] for k in CAGE_KEYS if k in own})
    workdir = None
    if v["workdir"] is not None:
        if "\x00" in v["workdir"] or not v["workdir"]:
            err.fail(f"{label}.workdir", "must be a folder's path")
        workdir = (err.path.parent / v["workdir"]).resolve()
        if not workdir.is_dir():
            err.fail(f"{label}.workdir", f"{str(workdir)!r} is not a folder (relative to the tournament file's folder)")
    env_table: dict[str, str] = {}
    for key, value in (v["env"] or {}).items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*\Z", key) or key == "REFEREE_BOT_TOKEN":
            err.fail(f"{label}.env.{key}", "must be a variable name (letters, digits, _), not REFEREE_BOT_TOKEN")
        if not isinstance(value, str) or "\x00" in value:
            err.fail(f"{label}.env.{key}", f"expected a string, got {_tname(value)}")
        env_table[key] = _substitute(err, f"{label}.env.{key}", env, value)
    return BotConfig(
        name=v["name"],
        url=url,
        command=command,
        token=token,
        max_concurrent=v["max_concurrent"],
        workdir=workdir,
        env=env_table,
        network=v["network"],
        limits=own,
    )


def _substitute(err: _Errors, key: str, env: Mapping[str, str], value: str) -> str:
    """``value`` with every ``${NAME}`` replaced from the referee's environment."""

    def one(m: re.Match[str]) -> str:
        if m.group(1) not in env:
            err.fail(key, f"environment variable {m.group(1)} is not set")
        return env[m.group(1)]

    return _ENV_RE.sub(one, value)


if __name__ == "__main__":
    print(keys_markdown(), end="")
