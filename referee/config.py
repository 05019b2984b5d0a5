"""The tournament file: TOML in, validated frozen dataclasses out.

Every problem is a ``ConfigError`` that names the file, the key and the problem, with
a "did you mean" for misspelt keys; nothing is started on a bad file. Tokens may be
written as ``${VAR}`` and are then read from the environment; a token is held in a
``Secret`` whose repr never shows it.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError
from .games import GAMES, get_game
from .games.base import OptionError
from .secret import Secret

FORMATS = ("round_robin", "random", "team", "gauntlet")
TRANSCRIPTS = ("all", "none")
# The most matches one tournament may schedule: its fixtures are lazy, but resume keeps
# one bit per match and ids, seeds and the journal are sized for it. Counted before
# anything is allocated, so ``rounds = 10**9`` is a config error, not a MemoryError.
MAX_MATCHES = 100_000_000
ON_FAULT = ("fallback", "forfeit")
TRANSCRIPTS = ("all", "none")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")  # \Z: "$" also matches before a final newline
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CLUSTER_RE = re.compile(r"^(tcp|tls)://[^\s/]+:[0-9]{1,5}\Z")


@dataclass(frozen=True)
class BotConfig:
    """One contestant: reached at ``url`` or started with ``command``."""

    name: str
    url: str | None = None
    command: tuple[str, ...] | None = None
    token: Secret | None = None
    max_concurrent: int = 0  # requests in flight to this bot at once; 0 = limits.max_concurrent
    workdir: Path | None = None  # a managed bot's own files (read-only in its cage); default: its program's folder
    env: Mapping[str, str] = field(default_factory=dict)  # a managed bot's environment besides PATH, LANG, HOME

    @property
    def managed(self) -> bool:
        """True when the referee starts and stops this bot itself."""
        return self.command is not None


@dataclass(frozen=True)
class Limits:
    """Deadlines and the fault policy."""

    deadline_ms: int = 1000
    on_fault: str = "fallback"
    max_faults: int = 10
    max_response_bytes: int = 65536
    startup_ms: int = 15000
    max_concurrent: int = 0  # per bot, requests in flight at once; 0 = no limit
    time_bank_ms: int = 0  # per seat per match, spent by answers slower than the deadline
    max_fault_rate: float = 1.0  # a bot faulting in more of its decisions is disqualified
    fault_rate_min_decisions: int = 50  # decisions before the fault rate is judged
    max_restarts: int = 3  # restarts of a crashed managed bot before it is played by fallback
    restart_backoff_ms: int = 200  # first wait before a restart; doubles each time
    sandbox: str = "auto"  # managed bots: auto (bubblewrap when installed) | bwrap (required) | none
    memory_mb: int = 1024  # per process of a managed bot (RLIMIT_DATA)
    max_processes: int = 128  # processes and threads of a managed bot together
    max_file_mb: int = 64  # the largest file a managed bot may write
    max_open_files: int = 1024  # per process of a managed bot (every connection is one)
    log_mb: int = 10  # logs/<bot>.log, then one marker line and the rest dropped
    bot_user: str = "nobody"  # who managed bots run as when the referee runs as root


@dataclass(frozen=True)
class TournamentConfig:
    """A whole tournament file, validated."""

    path: Path
    name: str
    game: str
    seed: int
    players: int
    format: str
    rounds: int
    matches: int
    concurrency: int
    output: Path
    options: Mapping[str, Any]
    limits: Limits
    bots: tuple[BotConfig, ...]
    duplicate: bool = False  # every deal once per seat rotation of its table
    workers: int = 1  # worker processes on this machine (1: no Dask, today's single process)
    cluster: str | None = None  # the address of an existing Dask scheduler (tcp://HOST:PORT)
    # no seed in the file: the referee draws a 128-bit secret seed when the run starts
    # (``seed`` is 0 until then) and reveals it when the run is complete
    seed_secret: bool = False
    # gauntlet: the bots under test (every table holds one), the rest of the bots are the field
    challengers: tuple[str, ...] = ()
    challengers_meet: bool = False  # gauntlet: a challenger's opponents include the other challengers
    gauntlet_random: bool = False  # gauntlet: ``matches`` random tables instead of ``rounds`` over combinations
    stop: str = "all"  # all: play every match; settled: stop once the top ``top`` is settled (stopping.py)
    confidence: float = 0.95  # stop = "settled": the confidence of every claimed order, together
    top: int = 0  # stop = "settled": the places that must be settled (0: the whole ranking)
    batch: int = 10  # stop = "settled": deals played between two looks
    grow: bool = False  # fixtures keyed by bot names: bots may be added (or removed) and the run resumed
    publish_every_s: float = (
        0.0  # re-render the outputs from the journal this often during the run (0: only at the end)
    )

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

    transcripts: str = "all"  # "all": every decision kept in OUT/transcripts; "none": none

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
        if workers is not None:
            if workers < 1:
                raise ConfigError(f"--workers: must be at least 1, got {workers}")
            out = replace(out, workers=workers)
        if cluster is not None:
            if not _CLUSTER_RE.match(cluster):
                raise ConfigError(f"--cluster: {cluster!r} is not a scheduler address like tcp://HOST:PORT")
            out = replace(out, cluster=cluster)
        if seed is not None:
            if seed < 0:
                raise ConfigError(f"--seed: must be at least 0, got {seed}")
            out = replace(out, seed=seed, seed_secret=False)
        if concurrency is not None:
            if concurrency < 1:
                raise ConfigError(f"--concurrency: must be at least 1, got {concurrency}")
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
            "bots": [b.name for b in self.bots],
            "transcripts": self.transcripts,
        }

    def _gauntlet_rounds(self) -> bool:
        return self.format == "gauntlet" and not self.gauntlet_random

    def _gauntlet_settings(self) -> dict[str, Any]:
        if self.format != "gauntlet":
            return {}
        return {"challengers": list(self.challengers), "challengers_meet": self.challengers_meet}


# Schema: key -> (type, default). A default of _REQUIRED means the key must be given.
_REQUIRED = object()
_TOURNAMENT: dict[str, tuple[type | tuple[type, ...], Any]] = {
    "name": (str, None),
    "game": (str, _REQUIRED),
    "seed": (int, None),
    "players": (int, None),
    "format": (str, "round_robin"),
    "rounds": (int, 1),
    "matches": (int, 10),
    "concurrency": (int, 8),
    "output": (str, None),
    "duplicate": (bool, False),
    "challengers": (list, None),
    "challengers_meet": (bool, False),
    "stop": (str, "all"),
    "confidence": (float, 0.95),
    "top": (int, 0),
    "batch": (int, 10),
    "publish_every_s": (float, 0.0),
    "grow": (bool, False),
    "workers": (int, 1),
    "transcripts": (str, "all"),
}
STOP_RULES = ("all", "settled")
_LIMITS: dict[str, tuple[type | tuple[type, ...], Any]] = {
    "deadline_ms": (int, 1000),
    "on_fault": (str, "fallback"),
    "max_faults": (int, 10),
    "max_response_bytes": (int, 65536),
    "startup_ms": (int, 15000),
    "max_concurrent": (int, 0),
    "time_bank_ms": (int, 0),
    "max_fault_rate": (float, 1.0),
    "fault_rate_min_decisions": (int, 50),
    "max_restarts": (int, 3),
    "restart_backoff_ms": (int, 200),
    "sandbox": (str, "auto"),
    "memory_mb": (int, 1024),
    "max_processes": (int, 128),
    "max_file_mb": (int, 64),
    "max_open_files": (int, 1024),
    "log_mb": (int, 10),
    "bot_user": (str, "nobody"),
}
SANDBOX_MODES = ("auto", "bwrap", "none")
_BOT: dict[str, tuple[type | tuple[type, ...], Any]] = {
    "name": (str, _REQUIRED),
    "url": (str, None),
    "command": (list, None),
    "token": (str, None),
    "max_concurrent": (int, 0),
    "workdir": (str, None),
    "env": (dict, None),
}
_CLUSTER: dict[str, tuple[type | tuple[type, ...], Any]] = {"address": (str, None)}
_TOP = ("tournament", "game", "limits", "bot", "cluster")


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
    _unknown(err, "tournament.", t, _TOURNAMENT)
    tv = _values(err, "tournament", t, _TOURNAMENT)

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
    if players < 1:
        err.fail("tournament.players", f"must be at least 1, got {players}")

    fmt = tv["format"]
    if fmt not in FORMATS:
        err.fail(
            "tournament.format", f"unknown format {fmt!r}" + _hint(fmt, FORMATS) + f" (formats: {', '.join(FORMATS)})"
        )
    if fmt == "team" and not game.info.cooperative:
        err.fail(
            "tournament.format", f"team is for cooperative games; {game_id} is competitive (use round_robin or random)"
        )
    if players > len(bots) and not game.info.cooperative:
        err.fail(
            "tournament.players",
            f"{players} seats per match but only {len(bots)} bots: add bots or lower players",
        )
    for key in ("rounds", "matches", "concurrency", "seed", "workers"):
        minimum = 0 if key == "seed" else 1
        if tv[key] is not None and tv[key] < minimum:
            err.fail(f"tournament.{key}", f"must be at least {minimum}, got {tv[key]}")

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
    _unknown(err, "limits.", lim, _LIMITS)
    lv = _values(err, "limits", lim, _LIMITS)
    if lv["on_fault"] not in ON_FAULT:
        err.fail(
            "limits.on_fault",
            f"unknown policy {lv['on_fault']!r}"
            + _hint(lv["on_fault"], ON_FAULT)
            + f" (policies: {', '.join(ON_FAULT)})",
        )
    for key, minimum in (
        ("deadline_ms", 1),
        ("max_faults", 0),
        ("max_response_bytes", 64),
        ("startup_ms", 1),
        ("max_concurrent", 0),
        ("time_bank_ms", 0),
        ("fault_rate_min_decisions", 1),
        ("max_restarts", 0),
        ("restart_backoff_ms", 0),
        ("memory_mb", 16),
        ("max_processes", 1),
        ("max_file_mb", 1),
        ("max_open_files", 16),
        ("log_mb", 1),
    ):
        if lv[key] < minimum:
            err.fail(f"limits.{key}", f"must be at least {minimum}, got {lv[key]}")
    if lv["sandbox"] not in SANDBOX_MODES:
        err.fail(
            "limits.sandbox",
            f"unknown sandbox {lv['sandbox']!r}"
            + _hint(lv["sandbox"], SANDBOX_MODES)
            + " (auto: bubblewrap when installed; bwrap: required; none: bots not isolated)",
        )
    if not _NAME_RE.match(lv["bot_user"]):
        err.fail("limits.bot_user", f"{lv['bot_user']!r} is not a user name")
    if not 0.0 < lv["max_fault_rate"] <= 1.0:
        err.fail(
            "limits.max_fault_rate",
            f"must be a share above 0 and at most 1 (1 = never disqualify), got {lv['max_fault_rate']}",
        )
    if tv["duplicate"] and fmt == "team":
        err.fail(
            "tournament.duplicate",
            "team already plays every deal with every bot; duplicate is for round_robin and random",
        )

    cl = _table(err, doc, "cluster")
    _unknown(err, "cluster.", cl, _CLUSTER)
    address = _values(err, "cluster", cl, _CLUSTER)["address"]
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

    if tv["stop"] not in STOP_RULES:
        err.fail(
            "tournament.stop",
            f"unknown rule {tv['stop']!r}" + _hint(tv["stop"], STOP_RULES) + " (all: every match; settled: "
            "stop once the ranking is settled at the confidence)",
        )
    if not 0.5 <= tv["confidence"] < 1.0:
        err.fail("tournament.confidence", f"must be at least 0.5 and below 1, got {tv['confidence']}")
    if tv["top"] < 0:
        err.fail("tournament.top", f"must be at least 0 (0: the whole ranking), got {tv['top']}")
    if tv["batch"] < 1:
        err.fail("tournament.batch", f"must be at least 1 deal, got {tv['batch']}")
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
    if not 0.0 <= tv["publish_every_s"] <= 86400.0:
        err.fail(
            "tournament.publish_every_s",
            f"must be a number of seconds from 0 (only at the end) to 86400, got {tv['publish_every_s']}",
        )
    if tv["transcripts"] not in TRANSCRIPTS:
        err.fail(
            "tournament.transcripts",
            f"unknown value {tv['transcripts']!r}"
            + _hint(tv["transcripts"], TRANSCRIPTS)
            + ' (choose "all" or "none")',
        )
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


def _values(
    err: _Errors, section: str, table: Mapping[str, Any], schema: Mapping[str, tuple[Any, Any]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, (typ, default) in schema.items():
        if key not in table:
            if default is _REQUIRED:
                err.fail(f"{section}.{key}", "missing (required)")
            out[key] = default
            continue
        value = table[key]
        if typ is int and (isinstance(value, bool) or not isinstance(value, int)):
            err.fail(f"{section}.{key}", f"expected an integer, got {_tname(value)} {value!r}")
        elif typ is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
            err.fail(f"{section}.{key}", f"expected a number, got {_tname(value)} {value!r}")
        elif not isinstance(value, typ):
            err.fail(f"{section}.{key}", f"expected {_tname(typ())}, got {_tname(value)} {value!r}")
        out[key] = float(value) if typ is float else value
    return out


def _bot(err: _Errors, i: int, table: dict[str, Any], env: Mapping[str, str]) -> BotConfig:
    label = f"bot[{i}]" if not isinstance(table.get("name"), str) else f"bot[{i}] ({table['name']})"
    _unknown(err, f"{label}.", table, _BOT)
    v = _values(err, label, table, _BOT)
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
    if v["max_concurrent"] < 0:
        err.fail(
            f"{label}.max_concurrent", f"must be at least 0 (0 = limits.max_concurrent), got {v['max_concurrent']}"
        )
    if command is None and (v["workdir"] is not None or v["env"] is not None):
        err.fail(f"{label}.{'workdir' if v['workdir'] is not None else 'env'}", "only for a bot with a command")
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
    )


def _substitute(err: _Errors, key: str, env: Mapping[str, str], value: str) -> str:
    """``value`` with every ``${NAME}`` replaced from the referee's environment."""

    def one(m: re.Match[str]) -> str:
        if m.group(1) not in env:
            err.fail(key, f"environment variable {m.group(1)} is not set")
        return env[m.group(1)]

    return _ENV_RE.sub(one, value)
