"""The tournament file: TOML in, a validated ``TournamentConfig`` out.

Every problem is a ``ConfigError`` that names the file, the key and the problem, with
a "did you mean" for misspelt keys; nothing is started on a bad file. Tokens and bot
environment values may be written as ``${VAR}`` and are then read from the environment.
What a format asks of its keys, and the match count, are checked by
``referee.schedule.formats.check`` (formats are above the config).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from referee.config.keys import REQUIRED, Key, hint, type_name
from referee.config.model import (
    BOT_KEYS,
    BOT_USERS,
    CAGE_KEYS,
    CLUSTER_KEYS,
    CLUSTER_RE,
    LIMIT_KEYS,
    NAME_RE,
    NAME_RULE,
    TOURNAMENT_KEYS,
    BotConfig,
    Limits,
    TournamentConfig,
)
from referee.config.redacted import Secret
from referee.errors import ConfigError
from referee.games import GAMES, get_game
from referee.games.base import Game, OptionError

_TOP = ("tournament", "game", "limits", "bot", "cluster")
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


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
    game = _game(err, tv["game"])
    bots = _bots(err, doc, env)
    players = tv["players"]
    if players is None:
        players = max(game.info.min_seats, min(len(bots), game.info.max_seats))
    _check_seats(err, game, players, len(bots))
    options = _options(err, game, players, _table(err, doc, "game"))
    lim = _table(err, doc, "limits")
    _unknown(err, "limits.", lim, LIMIT_KEYS)
    lv = _values(err, "limits", lim, LIMIT_KEYS)
    _check_bot_users(err, lv, bots)
    address = _cluster(err, doc)
    _check_grow(err, tv, lv)
    name = tv["name"] or path.stem
    if not NAME_RE.match(name):
        err.fail("tournament.name", f"{name!r} must be {NAME_RULE}")
    if tv["output"] is not None and "\x00" in tv["output"]:
        err.fail("tournament.output", "must not contain a NUL character (no file system accepts one)")
    return TournamentConfig(
        path=path,
        name=name,
        game=tv["game"],
        seed=0 if tv["seed"] is None else tv["seed"],
        seed_secret=tv["seed"] is None,
        players=players,
        format=tv["format"],
        rounds=tv["rounds"],
        matches=tv["matches"],
        concurrency=tv["concurrency"],
        output=Path(tv["output"]) if tv["output"] else Path("leaderboards") / name,
        duplicate=tv["duplicate"],
        workers=tv["workers"],
        cluster=address,
        transcripts=tv["transcripts"],
        options=options,
        limits=Limits(**lv),
        bots=bots,
        challengers=tuple(tv["challengers"]),
        challengers_meet=tv["challengers_meet"],
        given=frozenset(t),
        stop=tv["stop"],
        confidence=tv["confidence"],
        top=tv["top"],
        batch=tv["batch"],
        publish_every_s=tv["publish_every_s"],
        grow=tv["grow"],
        closed=tv["closed"],
        final=_final(err, tv, players, len(bots)),
        on_unready=tv["on_unready"],
    )


def _check_bot_users(err: _Errors, lv: Mapping[str, Any], bots: tuple[BotConfig, ...]) -> None:
    """``bot_user``: a bot in a cage never runs as root or as the referee's user, and a
    user name is retired (every started bot has a uid of its own)."""
    for i, bot in enumerate(bots):
        own = bot.limits.get("bot_user")
        key = f"bot[{i}] ({bot.name}).limits.bot_user" if own is not None else "limits.bot_user"
        user, sandbox = own or lv["bot_user"], bot.limits.get("sandbox", lv["sandbox"])
        if bot.managed and user != "own" and sandbox != "none":
            _check_bot_user(err, key, user, bot.name)
        if own is not None:
            _check_bot_user(err, key, own, None)
    _check_bot_user(err, "limits.bot_user", lv["bot_user"], None)


def _check_bot_user(err: _Errors, key: str, user: str, caged: str | None) -> None:
    """One ``bot_user`` value; ``caged``: the name of a bot in a cage that would run as it."""
    if user not in (*BOT_USERS, "root"):
        err.fail(
            key,
            f"{user!r}: user names are retired (every started bot runs as a uid of its own, docs/cage.md): "
            "leave the key out, or 'referee' (the referee's own user, with sandbox = 'none' only)",
        )
    if caged is not None:
        err.fail(
            key,
            f"bot {caged!r} may not run as {user!r} in a cage (a caged bot never runs as root or with "
            "capabilities): leave bot_user out (each bot gets a uid of its own), or give the bot sandbox = 'none'",
        )
    if user == "root":
        err.fail(
            key,
            "'root' is refused: a started bot runs as a uid of its own ('own', the default); "
            "without a cage, 'referee' runs it as the referee's own user",
        )


def _game(err: _Errors, game_id: str) -> Game:
    """The game named by ``tournament.game``."""
    if game_id not in GAMES:
        err.fail(
            "tournament.game",
            f"unknown game {game_id!r}" + hint(game_id, GAMES) + f" (games: {', '.join(sorted(GAMES))})",
        )
    return get_game(game_id)


def _bots(err: _Errors, doc: Mapping[str, Any], env: Mapping[str, str]) -> tuple[BotConfig, ...]:
    """The ``[[bot]]`` tables, each checked; at least one, names distinct."""
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
    return bots


def _check_seats(err: _Errors, game: Game, players: int, n_bots: int) -> None:
    """A competitive game has a bot for every seat."""
    if players > n_bots and not game.info.cooperative:
        err.fail(
            "tournament.players",
            f"{players} seats per match but only {n_bots} bots: add bots or lower players",
        )


def _options(err: _Errors, game: Game, players: int, g: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``[game]`` table, checked by the game itself."""
    try:
        return game.check_options(players, g)
    except OptionError as exc:
        key = "tournament.players" if exc.key == "players" and "players" not in g else f"game.{exc.key}"
        known = [o.name for o in game.info.options]
        err.fail(key, exc.message + (hint(exc.key, known) if exc.key not in {*known, "players"} else ""))


def _cluster(err: _Errors, doc: Mapping[str, Any]) -> str | None:
    """The ``[cluster]`` table's scheduler address, or None."""
    cl = _table(err, doc, "cluster")
    _unknown(err, "cluster.", cl, CLUSTER_KEYS)
    address: str | None = _values(err, "cluster", cl, CLUSTER_KEYS)["address"]
    if address is not None and not CLUSTER_RE.match(address):
        err.fail("cluster.address", f"{address!r} is not a scheduler address like tcp://HOST:PORT")
    return address


def _check_grow(err: _Errors, tv: Mapping[str, Any], lv: Mapping[str, Any]) -> None:
    """``grow`` alone (where fixtures can be keyed by names: the format's check)."""
    if not tv["grow"]:
        return
    if lv["max_fault_rate"] < 1.0:
        err.fail(
            "tournament.grow",
            "cannot be combined with limits.max_fault_rate yet (disqualification is judged by position)",
        )
    if tv["stop"] == "settled":
        err.fail("tournament.grow", "a tournament that grows cannot also stop when settled (choose one)")


FINAL_KEYS = ("bots", "matches")


def _final(err: _Errors, tv: Mapping[str, Any], players: int, n_bots: int) -> dict[str, int]:
    """``final = { bots = N, matches = M }`` checked ({} when off): N finalists, at least 2
    and a table's seats, at most the bots; M matches, at least 1 (the format's check says
    where a final is allowed)."""
    doc = tv["final"]
    if not doc:
        return {}
    for key in doc:
        if key not in FINAL_KEYS:
            err.fail(f"tournament.final.{key}", f"unknown key{hint(key, FINAL_KEYS)} (a final takes bots and matches)")
    out: dict[str, int] = {}
    for key in FINAL_KEYS:
        value = doc.get(key)
        if value is None:
            err.fail(f"tournament.final.{key}", "missing: a final is { bots = N, matches = M }")
        if isinstance(value, bool) or not isinstance(value, int):
            err.fail(f"tournament.final.{key}", f"expected an integer, got {type_name(value)} {value!r}")
        out[key] = value
    least = max(2, players)
    if not least <= out["bots"] <= n_bots:
        err.fail(
            "tournament.final.bots",
            f"must be at least {least} (2, and the {players} seats of a table) and at most the {n_bots} bots, "
            f"got {out['bots']}",
        )
    if out["matches"] < 1:
        err.fail("tournament.final.matches", f"must be at least 1, got {out['matches']}")
    if tv["stop"] == "settled":
        err.fail("tournament.final", 'a season with a final plays its budget: drop stop = "settled" or the final')
    return out


class _Errors:
    """Raises the ConfigError of a key of the file at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> NoReturn:
        raise ConfigError(f"{self.path}: {key}: {problem}")


def _unknown(err: _Errors, prefix: str, table: Mapping[str, Any], known: Any) -> None:
    for key in table:
        if key not in known:
            err.fail(f"{prefix}{key}", "unknown key" + hint(key, known) + f" (known: {', '.join(known)})")


def _table(err: _Errors, doc: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        err.fail(key, f"must be a table [{key}], got {type_name(value)}")
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
            err.fail(where, f"expected an integer, got {type_name(value)} {value!r}")
        elif typ is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
            err.fail(where, f"expected a number, got {type_name(value)} {value!r}")
        elif typ is not float and not isinstance(value, typ):
            err.fail(where, f"expected {type_name(typ())}, got {type_name(value)} {value!r}")
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
    if not NAME_RE.match(v["name"]):
        err.fail(f"{label}.name", f"{v['name']!r} must be {NAME_RULE}")
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
        token = Secret(_substitute(err, f"{label}.token", env, v["token"]))
        if not _printable_ascii(token.reveal()):  # it goes into a header line; never show it
            err.fail(f"{label}.token", "must be printable ASCII without spaces (the value is not shown)")
    for key in ("workdir", "env", "network", "limits"):
        if command is None and key in table:
            err.fail(f"{label}.{key}", "only for a bot with a command")
    own = v["limits"] or {}  # a bot's own limits, checked as in [limits]
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
            err.fail(f"{label}.env.{key}", f"expected a string, got {type_name(value)}")
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
