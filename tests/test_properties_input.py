"""Property tests: bad input is never a traceback (issue 7).

1. Tournament files. Hypothesis builds valid documents for every registered game, then
   mutates them (drops keys, adds unknown ones, retypes values, breaks bot tables and
   game options, ...) and writes them with ``tomli_w``; it also writes text and bytes
   that are not TOML at all. ``load_config`` must return a config or raise a
   ``ConfigError`` naming the file and, for a mutation at a known key, that key (the
   line, for a TOML syntax error). Tokens never show in messages, ``repr`` or
   ``settings()``, and an accepted config can be used: its names follow the documented
   rule and every bot URL makes an endpoint with a clean request head.
2. Bot replies. Arbitrary reply bodies judged by ``match.judge`` are a legal action or
   a fault kind, compared as JSON values (1, 1.0, true and "1" differ). Arbitrary raw
   HTTP responses from a real socket server on 127.0.0.1 come back from
   ``wire.post`` as an ``Exchange`` with no fault, ``timeout``, ``error`` or
   ``malformed`` within the deadline plus a margin; well-formed ones exactly as sent.
   A well-formed reply that came late (a loaded machine) is judged again under a deadline
   load cannot reach, so these run in the parallel pass too.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import itertools
import json
import math
import re
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee import record
from referee.bots.client import pool, wire
from referee.config import keys, model
from referee.config.model import TournamentConfig
from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.games import GAMES
from referee.games.base import Game, InvalidExtras, OptionError, OptionSpec
from referee.match.rules import judge
from referee.schedule.registry import check_format
from referee.schedule.settings import published

pytestmark = pytest.mark.parallel

SECRET = "Zq7-sEcReT-token-Kp3x"  # the value of ${FUZZ_SECRET}
LITERAL = "Lt9-lItErAl-token-Wm5"  # a token written in the file itself
ENV = {"FUZZ_SECRET": SECRET}
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # DESIGN: 1-64 letters, digits, . _ -
FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=100)


# 1. Tournament files ---------------------------------------------------------------------


def schema_types(schema: dict[str, keys.Key]) -> dict[str, type]:
    """Key -> value type of one of the config's schemas (which keys exist, and their types,
    are the config's to say; what it must do with them is this file's)."""
    return {key: spec.type for key, spec in schema.items()}


TOURNAMENT_TYPES = schema_types(model.TOURNAMENT_KEYS)
LIMIT_TYPES = schema_types(model.LIMIT_KEYS)
BOT_TYPES = schema_types(model.BOT_KEYS)
SECTIONS = {"tournament": TOURNAMENT_TYPES, "limits": LIMIT_TYPES}
# Integers below these are refused (each declared once, beside its key, in referee/config/model.py).
MINIMA = {
    (section, key): int(spec.minimum)
    for section, keys in (("tournament", model.TOURNAMENT_KEYS), ("limits", model.LIMIT_KEYS))
    for key, spec in keys.items()
    if spec.type is int and spec.minimum is not None
}
KEY_WORDS = sorted(
    {
        *TOURNAMENT_TYPES,
        *LIMIT_TYPES,
        *BOT_TYPES,
        "tournament",
        "limits",
        "bot",
        "game",
        "bots",
        "player",
        "deadline",
        "url ",
        "Name",
        *(o.name for g in GAMES.values() for o in g.info.options),
    }
)

texts = st.text(st.characters(codec="utf-8"), max_size=20)
scalars = (
    texts
    | st.sampled_from(["", "\x00", "é", "名前", "${FUZZ_SECRET}", "{port}", "http://", *GAMES])
    | st.integers(-(2**64), 2**64)
    | st.sampled_from([0, -1, 1, 2**63 - 1, -(2**63), 10**30])
    | st.floats()
    | st.booleans()
    | st.datetimes(timezones=st.none() | st.just(dt.UTC))
    | st.dates()
    | st.times()
)
toml_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=6
)


def toml_type(value: Any) -> type:
    """The schema type ``value`` has in TOML terms (bool is not an integer)."""
    return bool if isinstance(value, bool) else type(value)


def values_not_of(typ: type) -> st.SearchStrategy[Any]:
    """TOML values of any type but ``typ`` (an integer is a number too)."""
    accepted = (int, float) if typ is float else (typ,)
    return toml_values.filter(lambda v: toml_type(v) not in accepted)


def option_values(spec: OptionSpec) -> st.SearchStrategy[Any]:
    """Values the option accepts (each choice, both flags, numbers from the minimum)."""
    if spec.choices is not None:
        return st.sampled_from(spec.choices)
    if isinstance(spec.default, bool):
        return st.booleans()
    if isinstance(spec.default, int):
        low = spec.minimum if spec.minimum is not None else 0
        return st.integers(low, low + 1000 if spec.maximum is None else spec.maximum)
    if isinstance(spec.default, dict):
        return st.dictionaries(st.sampled_from(sorted(spec.default)), st.integers(1, 8), max_size=3)
    return st.just(spec.default)


bot_names = st.from_regex(NAME_RULE, fullmatch=True)


@st.composite
def valid_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid tournament document for any registered game; its first four bots are one
    of each kind (url, command, url with ``${FUZZ_SECRET}``, url with a literal token)."""
    gid = draw(st.sampled_from(sorted(GAMES)))
    game = GAMES[gid]
    players = draw(st.integers(game.info.min_seats, game.info.max_seats))
    count = draw(st.integers(1 if game.info.cooperative else players, players + 2))
    names = draw(st.lists(bot_names, min_size=count, max_size=count, unique=True))
    bots = []
    for i, name in enumerate(names):
        kind = i % 4 if i < 4 else draw(st.integers(0, 3))
        bot: dict[str, Any] = {"name": name}
        if kind == 1:
            bot["command"] = ["python", "-m", "sample_bots.nimmt", "random", "--port", "{port}"]
        else:
            bot["url"] = f"http://127.0.0.1:{8000 + i}/"
        if kind == 2:
            bot["token"] = "${FUZZ_SECRET}"
        elif kind == 3:
            bot["token"] = LITERAL
        if draw(st.booleans()):
            bot["max_concurrent"] = draw(st.integers(0, 16))
        bots.append(bot)
    options = {o.name: draw(option_values(o)) for o in game.info.options if draw(st.booleans())}
    try:
        game.check_options(players, options)
    except OptionError:
        options = {}
    formats = ["round_robin", "random"] + (["team"] if game.info.cooperative else [])
    fmt = draw(st.sampled_from(formats))
    tournament = {
        "name": draw(bot_names),
        "game": gid,
        "seed": draw(st.integers(0, 2**40)),
        "players": players,
        "format": fmt,
        "rounds": draw(st.integers(1, 5)),
        "matches": draw(st.integers(1, 50)),
        "concurrency": draw(st.integers(1, 16)),
        "output": "out/x",
        "duplicate": fmt != "team" and draw(st.booleans()),
    }
    limits = {
        "deadline_ms": draw(st.integers(1, 10**6)),
        "on_fault": draw(st.sampled_from(["fallback", "forfeit"])),
        "max_faults": draw(st.integers(0, 100)),
        "max_response_bytes": draw(st.integers(64, 10**7)),
        "startup_ms": draw(st.integers(1, 10**6)),
        "max_concurrent": draw(st.integers(0, 64)),
        "time_bank_ms": draw(st.integers(0, 10**5)),
        "max_fault_rate": draw(st.floats(0, 1, exclude_min=True)),
        "fault_rate_min_decisions": draw(st.integers(1, 500)),
        "max_restarts": draw(st.integers(0, 9)),
        "restart_backoff_ms": draw(st.integers(0, 5000)),
    }
    return {"tournament": tournament, "game": options, "limits": limits, "bot": bots}


@dataclass(frozen=True)
class BotKey:
    """A key in bot table ``index``: messages name it ``bot[i].key`` or, when the table
    has a string name, ``bot[i] (name).key``; ``suffix`` "" is the table itself."""

    index: int
    suffix: str


Key = str | BotKey  # a plain key ending in "." stands for any key under it


@dataclass(frozen=True)
class Mutation:
    """One change to a valid document: what it did, the keys an error may then name,
    and whether the document can no longer be valid."""

    what: str
    keys: tuple[Key, ...]
    must_fail: bool


def key_prefixes(key: Key, doc: dict[str, Any]) -> list[str]:
    """How a message names ``key`` in ``doc``, up to the ": " before the problem."""
    if isinstance(key, str):
        return [key] if key.endswith(".") else [key + ": "]
    bots = doc.get("bot")
    table = bots[key.index] if isinstance(bots, list) and key.index < len(bots) else None
    name = table.get("name") if isinstance(table, dict) else None
    labels = [f"bot[{key.index}]"] + ([f"bot[{key.index}] ({name})"] if isinstance(name, str) else [])
    return [label + key.suffix + ": " for label in labels]


def bot_tables(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The bot tables of ``doc`` if it still has a list of tables, else none."""
    bots = doc.get("bot")
    return bots if isinstance(bots, list) and all(isinstance(b, dict) for b in bots) else []


def mutate_drop(draw: st.DrawFn, doc: dict[str, Any]) -> Mutation:
    """Drop a section, a key of a section, or a key of a bot table."""
    paths: list[tuple[Any, ...]] = [(s,) for s in doc]
    paths += [(s, k) for s in ("tournament", "game", "limits") if isinstance(doc.get(s), dict) for k in doc[s]]
    paths += [("bot", i, k) for i, b in enumerate(bot_tables(doc)) for k in b]
    path = draw(st.sampled_from(paths))
    if len(path) == 1:
        del doc[path[0]]
        required = {"tournament": "tournament.game", "bot": "bot"}
        return Mutation(f"drop [{path[0]}]", (required.get(path[0], path[0]),), path[0] in required)
    if len(path) == 2:
        del doc[path[0]][path[1]]
        key = f"{path[0]}.{path[1]}"
        return Mutation(f"drop {key}", (key, *knock_on(*path, doc)), key == "tournament.game")
    _, i, k = path
    del doc["bot"][i][k]
    if k == "name":
        return Mutation(f"drop bot[{i}].name", (BotKey(i, ".name"),), True)
    # without url or command a bot is refused; one that had both (an earlier mutation) is left with the other
    neither = k in ("url", "command") and not {"url", "command"} & doc["bot"][i].keys()
    return Mutation(f"drop bot[{i}].{k}", (BotKey(i, ""),), neither)


def mutate_unknown_key(draw: st.DrawFn, doc: dict[str, Any]) -> Mutation:
    """Add a key no schema knows to the top, a section or a bot table."""
    game = GAMES[doc["tournament"]["game"]]
    known = {
        "": {"tournament", "game", "limits", "bot"},
        "tournament": set(TOURNAMENT_TYPES),
        "limits": set(LIMIT_TYPES),
        "game": {o.name for o in game.info.options},
    }
    where = draw(st.sampled_from(["", "tournament", "limits", "game", "bot"]))
    if where == "bot":
        known[where] = set(BOT_TYPES)
    key = draw((st.sampled_from(KEY_WORDS) | texts).filter(lambda k: k not in known[where]))
    value = draw(toml_values)
    if where == "":
        doc[key] = value
        return Mutation(f"add {key!r} = {value!r}", (key,), True)
    if where == "bot":
        bots = bot_tables(doc)
        if not bots:
            return Mutation("nothing", (), False)
        i = draw(st.integers(0, len(bots) - 1))
        bots[i][key] = value
        return Mutation(f"add bot[{i}].{key!r}", (BotKey(i, "." + key),), True)
    table = doc.setdefault(where, {})
    if not isinstance(table, dict):
        return Mutation("nothing", (), False)
    table[key] = value
    return Mutation(f"add {where}.{key!r} = {value!r}", (f"{where}.{key}",), True)


def knock_on(section: str, key: str, doc: dict[str, Any]) -> tuple[Key, ...]:
    """Other keys a changed value can make invalid."""
    if (section, key) == ("tournament", "game"):
        return ("tournament.players", "tournament.format", "game.")
    if (section, key) == ("tournament", "players"):
        return ("game.",)
    if section == "bot" and key == "name":
        return tuple(f"bot[{j}].name" for j in range(len(bot_tables(doc))))
    return ()


def mutate_retype(draw: st.DrawFn, doc: dict[str, Any]) -> Mutation:
    """Give a known key a value of another type (must fail) or any value (may fail)."""
    game = GAMES[doc["tournament"]["game"]]
    spots: list[tuple[str, Any, type]] = [(s, k, t) for s, types in SECTIONS.items() for k, t in types.items()]
    spots += [("game", o.name, toml_type(o.default)) for o in game.info.options]
    spots += [("bot", (i, k), t) for i in range(len(bot_tables(doc))) for k, t in BOT_TYPES.items()]
    section, key, typ = draw(st.sampled_from(spots))
    wrong = draw(st.booleans())
    value = draw(values_not_of(typ) if wrong else toml_values)
    if section == "bot":
        i, k = key
        if k not in bot_tables(doc)[i]:
            return Mutation("nothing", (), False)
        bot_tables(doc)[i][k] = value
        keys: tuple[Key, ...] = (BotKey(i, "." + k), *knock_on("bot", k, doc))
        return Mutation(f"bot[{i}].{k} = {value!r}", keys, wrong)
    table = doc.get(section)
    if not isinstance(table, dict):
        return Mutation("nothing", (), False)
    table[key] = value
    return Mutation(f"{section}.{key} = {value!r}", (f"{section}.{key}", *knock_on(section, key, doc)), wrong)


def mutate_section_type(draw: st.DrawFn, doc: dict[str, Any]) -> Mutation:
    """Make a section something other than a table (bots: other than tables)."""
    section = draw(st.sampled_from(["tournament", "game", "limits", "bot"]))
    if section == "bot":
        doc["bot"] = draw(st.sampled_from([[], [1], ["x"], [[]], {"name": "x"}, "bots", 0]))
    else:
        doc[section] = draw(values_not_of(dict))
    return Mutation(f"[{section}] = {doc[section]!r}", (section,), True)


BAD_URLS = [
    "ftp://x",
    "127.0.0.1:8000",
    "",
    "http://",
    "http://a:99999/",
    "http://a:-1/",
    "http://a:x/",
    "http://[::1/",
    "http://ex ample/",
    "http://a/\x00",
    "http://a/\r\nX: y",
    "http://例え.jp/",
    "https:/x",
]
BAD_TOKENS = ["tok-\r\nX-Injected: 1", "tok-\n", "tok-\x00", "tok-ü", "tok with spaces", "tok-\t"]
BAD_NAMES = ["", "-x", "a b", "a/b", "a\n", "x" * 65, "é", "名前", "a:b"]


def mutate_bot(draw: st.DrawFn, doc: dict[str, Any]) -> Mutation:
    """Break one bot table in a way the file format forbids."""
    bots = bot_tables(doc)
    if not bots:
        return Mutation("nothing", (), False)
    i = draw(st.integers(0, len(bots) - 1))
    b = bots[i]
    kind = draw(
        st.sampled_from(
            [
                "both",
                "neither",
                "duplicate",
                "empty_command",
                "no_port",
                "non_str_command",
                "undefined_var",
                "bad_url",
                "bad_token",
                "bad_name",
                "max_concurrent",
            ]
        )
    )
    if kind == "both":
        b["url"], b["command"] = "http://127.0.0.1:9/", ["x", "{port}"]
        return Mutation(f"bot[{i}] url and command", (BotKey(i, ""),), True)
    if kind == "neither":
        b.pop("url", None)
        b.pop("command", None)
        return Mutation(f"bot[{i}] neither url nor command", (BotKey(i, ""),), True)
    if kind == "duplicate":
        named = [j for j, other in enumerate(bots) if j != i and "name" in other]
        if not named:
            return Mutation("nothing", (), False)
        j = draw(st.sampled_from(named))
        b["name"] = bots[j]["name"]
        keys = (f"bot[{max(i, j)}].name", BotKey(i, ".name"), BotKey(j, ".name"))
        return Mutation(f"bot[{i}] duplicates bot[{j}]'s name", keys, True)
    if kind == "max_concurrent":
        b["max_concurrent"] = draw(st.integers(max_value=-1))
        return Mutation(f"bot[{i}].max_concurrent = {b['max_concurrent']}", (BotKey(i, ".max_concurrent"),), True)
    if kind == "bad_name":
        b["name"] = draw(st.sampled_from(BAD_NAMES))
        return Mutation(f"bot[{i}].name = {b['name']!r}", (BotKey(i, ".name"),), True)
    if kind in ("empty_command", "no_port", "non_str_command"):
        b.pop("url", None)
        b["command"] = {
            "empty_command": [],
            "no_port": ["python", "bot.py", "--port", "80"],
            "non_str_command": ["python", 1, "{port}"],
        }[kind]
        return Mutation(f"bot[{i}] {kind}", (BotKey(i, ".command"),), True)
    if kind == "undefined_var":
        var = "UNDEFINED_" + draw(st.from_regex(r"[A-Z0-9_]{1,8}", fullmatch=True))
        b["token"] = "${" + var + "}"
        return Mutation(f"bot[{i}].token uses {var}", (BotKey(i, ".token"),), True)
    if kind == "bad_url":
        b.pop("command", None)
        b["url"] = draw(st.sampled_from(BAD_URLS))
        return Mutation(f"bot[{i}].url = {b['url']!r}", (BotKey(i, ".url"),), True)
    b["token"] = draw(st.sampled_from(BAD_TOKENS))
    return Mutation(f"bot[{i}].token = {b['token']!r}", (BotKey(i, ".token"),), True)


def mutate_game(draw: st.DrawFn, doc: dict[str, Any]) -> Mutation:
    """An unknown game, a bad value for one of the game's options, or a seat count out
    of the game's range."""
    t = doc["tournament"]
    game = GAMES[t["game"]]
    kind = draw(st.sampled_from(["unknown_game", "bad_option", "players"]))
    if kind == "unknown_game" or not game.info.options:
        t["game"] = draw(texts.filter(lambda g: g not in GAMES))
        return Mutation(f"game {t['game']!r}", ("tournament.game",), True)
    if kind == "players":
        t["players"] = draw(st.integers(-5, game.info.min_seats - 1) | st.integers(game.info.max_seats + 1, 10**6))
        return Mutation(f"players = {t['players']}", ("tournament.players",), True)
    spec = draw(st.sampled_from(game.info.options))
    options = doc.setdefault("game", {})
    if not isinstance(options, dict):
        return Mutation("nothing", (), False)
    options[spec.name] = value = draw(bad_option_values(spec))
    return Mutation(f"game.{spec.name} = {value!r}", (f"game.{spec.name}",), True)


def bad_option_values(spec: OptionSpec) -> st.SearchStrategy[Any]:
    """Values ``spec`` refuses: another type, not a choice, out of range, a table with
    an unknown key or a count that is not a small non-negative integer."""
    typ = toml_type(spec.default)
    bad = values_not_of(typ)
    if spec.choices is not None:
        bad |= texts.filter(lambda v: v not in spec.choices)
    if spec.minimum is not None:
        bad |= st.integers(-(2**63), spec.minimum - 1)
    if spec.maximum is not None:
        bad |= st.integers(spec.maximum + 1, 2**63)
    if typ is dict:
        keys = sorted(spec.default)
        bad |= st.dictionaries(texts.filter(lambda k: k not in spec.default), st.integers(0, 3), min_size=1, max_size=2)
        bad |= st.builds(
            lambda k, v: {k: v},
            st.sampled_from(keys),
            st.integers(max_value=-1) | st.integers(10**3) | values_not_of(int),
        )
    return bad


def mutate_numbers(draw: st.DrawFn, doc: dict[str, Any]) -> Mutation:
    """A number below its minimum, or an unknown format, fault policy or bad name."""
    kind = draw(st.sampled_from(["minimum", "format", "on_fault", "name", "output", "fault_rate", "duplicate"]))
    t, lim = doc["tournament"], doc.setdefault("limits", {})
    if not isinstance(lim, dict):
        return Mutation("nothing", (), False)
    if kind == "minimum":
        (section, key), low = draw(st.sampled_from(sorted(MINIMA.items())))
        table = t if section == "tournament" else lim
        table[key] = draw(st.integers(-(2**63), low - 1))
        return Mutation(f"{section}.{key} = {table[key]}", (f"{section}.{key}",), True)
    if kind == "format":
        game = GAMES[t["game"]]
        refused = ["swiss", "", "Round_Robin"] + ([] if game.info.cooperative else ["team"])
        t["format"] = draw(st.sampled_from(refused))
        return Mutation(f"format {t['format']!r}", ("tournament.format",), True)
    if kind == "on_fault":
        lim["on_fault"] = draw(texts.filter(lambda v: v not in ("fallback", "forfeit")))
        return Mutation(f"on_fault {lim['on_fault']!r}", ("limits.on_fault",), True)
    if kind == "fault_rate":
        lim["max_fault_rate"] = draw(
            st.floats(max_value=0) | st.floats(min_value=1, exclude_min=True) | st.just(math.nan)
        )
        return Mutation(f"max_fault_rate = {lim['max_fault_rate']}", ("limits.max_fault_rate",), True)
    if kind == "duplicate":
        if not GAMES[t["game"]].info.cooperative:
            return Mutation("nothing", (), False)
        t["format"], t["duplicate"] = "team", True
        return Mutation("duplicate team", ("tournament.duplicate", "tournament.format"), True)
    if kind == "name":
        t["name"] = draw(st.sampled_from(BAD_NAMES[1:]))
        return Mutation(f"name {t['name']!r}", ("tournament.name",), True)
    t["output"] = "out/\x00x"
    return Mutation("output with a NUL", ("tournament.output",), True)


MUTATORS = [
    mutate_drop,
    mutate_unknown_key,
    mutate_retype,
    mutate_section_type,
    mutate_bot,
    mutate_game,
    mutate_numbers,
]
NEED_GAME = (mutate_unknown_key, mutate_retype, mutate_game, mutate_numbers)  # read the tournament's game


@st.composite
def mutated_docs(draw: st.DrawFn) -> tuple[dict[str, Any], list[Mutation]]:
    """A valid document with one to three mutations applied in turn."""
    doc = copy.deepcopy(draw(valid_docs()))
    done: list[Mutation] = []
    for mutate in draw(st.lists(st.sampled_from(MUTATORS), min_size=1, max_size=3)):
        t = doc.get("tournament")
        if mutate in NEED_GAME and not (isinstance(t, dict) and isinstance(t.get("game"), str) and t["game"] in GAMES):
            continue
        done.append(mutate(draw, doc))
    done = [m for m in done if m.what != "nothing"]
    assume(done)
    return doc, done


@pytest.fixture(scope="module")
def toml_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one file every example is written to."""
    return tmp_path_factory.mktemp("props") / "fuzz.toml"


def load(path: Path, data: bytes) -> TournamentConfig | ConfigError:
    """``load_config`` on ``data``: the config, or the ConfigError. Any other exception
    escapes and fails the test."""
    path.write_bytes(data)
    try:
        return check_format(load_config(path, env=ENV))
    except ConfigError as exc:
        return exc


def assert_no_token_shown(text: str) -> None:
    """No token value, from the environment or from the file, is in ``text``."""
    for token in (SECRET, LITERAL, *BAD_TOKENS):
        assert token not in text, f"a token is shown: {text!r}"


def assert_usable(cfg: TournamentConfig) -> None:
    """An accepted config keeps its promises: names follow the rule, tokens stay
    hidden, the seat count fits the game, and every bot can be reached or started."""
    assert NAME_RULE.fullmatch(cfg.name), cfg.name
    assert "\x00" not in str(cfg.output)
    game = GAMES[cfg.game]
    assert game.info.min_seats <= cfg.players <= game.info.max_seats
    assert game.check_options(cfg.players, cfg.options) == dict(cfg.options)
    assert_no_token_shown(repr(cfg) + str(published(cfg)))
    for bot in cfg.bots:
        assert NAME_RULE.fullmatch(bot.name), bot.name
        if bot.command is not None:
            assert bot.command and all("\x00" not in a for a in bot.command)
            continue
        assert bot.url is not None
        endpoint = wire.Endpoint.make(bot.name, bot.url, bot.token)
        if endpoint.target.plain:  # the request head written by hand: one header per line
            lines = endpoint.target.head.split(b"\r\n")
            assert all(line and all(0x20 <= c < 0x7F for c in line) for line in lines[:-1]), lines
            assert lines[-1] == b"" and len(lines) == 3 + len(endpoint.headers)  # request line, Host, headers


def assert_names_file(exc: ConfigError, path: Path) -> str:
    """The message starts with the file; return the rest."""
    message = str(exc)
    assert message.startswith(f"{path}: "), message
    assert_no_token_shown(message)
    return message[len(f"{path}: ") :]


@FAST
@given(doc=valid_docs())
def test_valid_documents_load(toml_file: Path, doc: dict[str, Any]) -> None:
    """The generator's documents are valid (so mutations start from a valid file)."""
    cfg = load(toml_file, tomli_w.dumps(doc).encode())
    assert isinstance(cfg, TournamentConfig), cfg
    assert cfg.game == doc["tournament"]["game"] and cfg.players == doc["tournament"]["players"]
    assert [b.name for b in cfg.bots] == [b["name"] for b in doc["bot"]]
    tokens = [b.token.reveal() if b.token else None for b in cfg.bots]
    assert tokens == [
        {"${FUZZ_SECRET}": SECRET}.get(b["token"], b["token"]) if "token" in b else None for b in doc["bot"]
    ]
    assert_usable(cfg)


@settings(FAST, max_examples=300)
@given(case=mutated_docs())
def test_mutated_documents_are_refused_by_key_or_usable(
    toml_file: Path, case: tuple[dict[str, Any], list[Mutation]]
) -> None:
    doc, mutations = case
    out = load(toml_file, tomli_w.dumps(doc).encode())
    if isinstance(out, TournamentConfig):
        # a later mutation may undo an earlier one, never the other way round
        assert not mutations[-1].must_fail, f"accepted after {[m.what for m in mutations]}"
        assert_usable(out)
        return
    rest = assert_names_file(out, toml_file)
    prefixes = [p for m in mutations for k in m.keys for p in key_prefixes(k, doc)]
    assert any(rest.startswith(p) for p in prefixes), (
        f"{rest!r} names none of {prefixes} ({[m.what for m in mutations]})"
    )
    if len(mutations) == 1 and "UNDEFINED_" in mutations[0].what:
        assert mutations[0].what.split()[-1] in rest


def corrupt(text: str, cuts: list[tuple[int, str]]) -> str:
    """``text`` with each (position, replacement) applied: the character there replaced."""
    for pos, new in cuts:
        pos %= max(len(text), 1)
        text = text[:pos] + new + text[pos + 1 :]
    return text


near_toml = st.builds(
    lambda doc, cuts: corrupt(tomli_w.dumps(doc), cuts),
    valid_docs(),
    st.lists(
        st.tuples(
            st.integers(0, 10**4), st.sampled_from(["", "=", "[", "]", '"', "\n", "'", "{", ",", "#", "\x00", "é"])
        ),
        min_size=1,
        max_size=3,
    ),
)
pathological = st.sampled_from(
    [
        "a = " + "9" * 5000,  # more digits than Python turns into an int
        "a = " + "[" * 3000 + "]" * 3000,  # deeper than the parser's recursion
        "a = " + "{b = " * 1500 + "1" + "}" * 1500,
        '\ufeff[tournament]\ngame = "dieci"\n',
        '[tournament]\ngame = "dieci"\n\x00',
        "[tournament\n",
        "x = 1\nx = 2\n",
    ]
)


@settings(FAST, max_examples=150)
@given(
    raw=near_toml.map(str.encode)
    | pathological.map(str.encode)
    | st.text().map(lambda t: t.encode("utf-8", "surrogatepass"))
    | st.binary()
)
def test_text_that_is_not_toml_is_a_config_error(toml_file: Path, raw: bytes) -> None:
    out = load(toml_file, raw)
    if isinstance(out, TournamentConfig):
        assert_usable(out)
        return
    rest = assert_names_file(out, toml_file)
    try:
        tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError:
        assert rest.startswith("not valid TOML: ") and ("line" in rest or "end of document" in rest), rest
    except (ValueError, RecursionError):
        pass  # not UTF-8, or a document the parser cannot hold: named by the file only


# 2a. Reply bodies --------------------------------------------------------------------------


def legal_samples() -> list[tuple[str, list[Any]]]:
    """Real legal lists: the first decision of every game at its seat counts."""
    out = []
    for gid, game in sorted(GAMES.items()):
        for seats in (game.info.min_seats, game.info.max_seats):
            state = game.setup(seats, 5, game.check_options(seats, {}))
            out.append((gid, game.legal(state, game.to_act(state)[0])))
    return out


LEGALS = legal_samples()
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def near_misses(value: Any) -> st.SearchStrategy[Any]:
    """JSON values that look like ``value`` but are other JSON values (or are it)."""
    out: list[Any] = [value, [value], str(value), {"value": value}]
    if isinstance(value, bool):
        out += [int(value), str(value).lower()]
    elif isinstance(value, int):
        out += [float(value), value == 1, str(value), value + 1, -value]
    elif isinstance(value, list):
        out += [
            [float(v) if isinstance(v, int) else v for v in value],
            list(reversed(value)),
            value[:-1],
            value + value,
        ]
    elif isinstance(value, dict):
        out += [
            {k: float(v) if isinstance(v, int) else v for k, v in value.items()},
            {**value, "x": 1},
            dict(itertools.islice(value.items(), len(value) - 1)),
            {k: str(v) for k, v in value.items()},
        ]
    elif isinstance(value, str):
        out += [value.upper(), value + " ", [value], value[:-1]]
    return st.sampled_from(out)


@st.composite
def replies(draw: st.DrawFn) -> tuple[list[Any], bytes]:
    """A legal list and a reply body of any shape."""
    _, legal = draw(st.sampled_from(LEGALS))
    action = draw(near_misses(draw(st.sampled_from(legal))) | json_values)
    extra = draw(st.dictionaries(st.sampled_from(["claims", "x", "action"]), json_values, max_size=2))
    obj = {"action": action, **{k: v for k, v in extra.items() if k != "action"}}
    body = draw(
        st.sampled_from(
            [
                json.dumps(obj).encode(),
                json.dumps(action).encode(),  # not an object
                json.dumps(extra).encode(),  # maybe no action
                b"\xef\xbb\xbf" + json.dumps(obj).encode(),  # UTF-8 BOM
                json.dumps(obj).encode("utf-16"),  # UTF-16 with BOM
                b'{"action": ' + json.dumps(action).encode() + b', "action": 0}',  # duplicate key
                b'{"action": NaN}',
                b'{"action": -Infinity}',
                b'{"action": 1e999}',
                b'{"action": ' + b"9" * 5000 + b"}",
                b'{"action": "\\ud800"}',
                b'{"action": "\xff\xfe"}',
                b"{" * 50_000,
                b'{"action": ' + b"[" * 200 + b"]" * 200 + b"}",
                b'{"action": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                b"",
                b"null",
                b"[]",
                b'{"Action": 1}',
            ]
        )
    )
    return legal, draw(st.just(body) | st.binary(max_size=64))


def canonical(value: Any) -> str | None:
    """A JSON value's text with sorted keys: equal only for equal JSON values."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=True)
    except (RecursionError, ValueError):
        return None


def expected_kind(body: bytes, legal: list[Any]) -> str | None:
    """The fault a reply deserves, worked out independently of the referee."""
    try:
        reply = json.loads(body)
    except (ValueError, RecursionError):
        return record.MALFORMED
    if not isinstance(reply, dict) or "action" not in reply:
        return record.MALFORMED
    return None if canonical(reply["action"]) in {canonical(x) for x in legal} else record.ILLEGAL


@settings(FAST, max_examples=300)
@given(case=replies())
def test_any_reply_body_is_a_legal_action_or_a_fault(case: tuple[list[Any], bytes]) -> None:
    legal, body = case
    v = judge(wire.Exchange(body, 1.0), legal, ("claims",))
    action, extras, kind, detail = v.action, v.extras, v.fault, v.detail
    assert kind == expected_kind(body, legal), (body[:200], kind, detail)
    if kind is None:
        assert any(action is x for x in legal) and canonical(action) == canonical(json.loads(body)["action"])
    else:
        assert kind in record.FAULT_KINDS and action is None and extras is None
        detail.encode("utf-8")  # journal-safe: no lone surrogates
        assert len(detail) < 1000


EXTRA_GAMES = [g for g in GAMES.values() if g.info.extra_reply_fields]


@settings(FAST, max_examples=200)
@given(
    game=st.sampled_from(EXTRA_GAMES),
    value=json_values | st.lists(st.integers(-2, 5), max_size=5),
    seats=st.integers(1, 12),
)
def test_any_extra_reply_field_is_taken_or_refused(game: Game, value: Any, seats: int) -> None:
    """Optional reply fields (The Game's claims) are taken or refused with InvalidExtras."""
    seats = max(game.info.min_seats, min(seats, game.info.max_seats))
    for field in game.info.extra_reply_fields:
        state = game.setup(seats, 1, game.check_options(seats, {}))
        seat = game.to_act(state)[0]
        v = judge(
            wire.Exchange(json.dumps({"action": game.legal(state, seat)[0], field: value}).encode(), 1.0),
            game.legal(state, seat),
            game.info.extra_reply_fields,
        )
        extras, kind = v.extras, v.fault
        assert kind is None and canonical(extras) == canonical({field: value})
        try:
            game.apply_extras(state, seat, extras)
        except InvalidExtras as exc:
            str(exc).encode("utf-8")


# 2b. Raw HTTP responses from a real socket ------------------------------------------------

DEADLINE_MS = 250
# A reply left unfinished must end at the deadline, not wait for ever: a post still open
# after this long fails the test (generous: a loaded machine may be seconds late).
HANG_S = 60
CAP = 256
OK_STATUS = [200, 201, 202, 203, 299]
OTHER_STATUS = [301, 302, 303, 307, 308, 400, 401, 404, 418, 429, 500, 502, 503]


@dataclass(frozen=True)
class Plan:
    """What the scripted bot answers to one request: ``pieces`` written in turn, then
    the connection closed or kept; ``expect`` is (fault, body) for a well-formed reply."""

    pieces: tuple[bytes, ...]
    close: bool
    expect: tuple[str | None, bytes | None] | None


class ScriptedBot:
    """A raw-bytes HTTP server on 127.0.0.1 with its own thread and event loop. Each
    request body is a key into ``plans``; the plan says what to answer."""

    def __init__(self) -> None:
        self.plans: dict[bytes, Plan] = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self.port = 0

    def start(self) -> None:
        """Listen on a free port."""
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(self._listen(), self.loop).result(5)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._handle, "127.0.0.1", 0)

    def stop(self) -> None:
        """Close the server and every connection, stop the thread."""
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    async def _close(self) -> None:
        self.server.close()
        for writer in self.connections.values():
            writer.transport.abort()  # each handler then ends on a connection error
        if self.connections:
            await asyncio.wait(list(self.connections), timeout=5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.connections[task] = writer
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
                plan = self.plans.pop(await reader.readexactly(length), None)
                if plan is None:
                    return
                for piece in plan.pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.001)  # let the client see a partial reply
                if plan.close:
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            return
        finally:
            writer.close()
            del self.connections[task]


@pytest.fixture(scope="module")
def scripted_bot() -> Iterator[ScriptedBot]:
    """One scripted bot for every example of the test."""
    bot = ScriptedBot()
    bot.start()
    yield bot
    bot.stop()


def split(draw: st.DrawFn, raw: bytes) -> tuple[bytes, ...]:
    """``raw`` cut into one to three pieces."""
    cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=2)))
    bounds = [0, *cuts, len(raw)]
    return tuple(raw[a:b] for a, b in itertools.pairwise(bounds) if b > a) or (b"",)


@st.composite
def well_formed(draw: st.DrawFn) -> tuple[bytes, bool, tuple[str | None, bytes | None]]:
    """A correct response (length, chunked or close-delimited body, maybe after a
    100 Continue), whether the bot closes after it, and what the client must report."""
    status = draw(st.sampled_from(OK_STATUS) | st.sampled_from(OTHER_STATUS))
    body = draw(st.binary(max_size=CAP + 64) | st.sampled_from([b'{"action": 1}', b"", b"x" * (CAP + 1), b"y" * CAP]))
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    version = "HTTP/1.0" if framing == "length" and draw(st.booleans()) else "HTTP/1.1"
    headers = [f"{version} {status} {draw(st.sampled_from(['OK', 'Whatever', '']))}", "Content-Type: application/json"]
    headers += draw(
        st.lists(
            st.sampled_from(["X-Bot: 1", "Server: fuzz", "Connection: keep-alive", "Cache-Control: no-store"]),
            max_size=2,
        )
    )
    close = framing == "close" or draw(st.booleans())
    if framing == "length":
        headers.append(f"Content-Length: {len(body)}")
        payload = body
    elif framing == "chunked":
        headers.append("Transfer-Encoding: chunked")
        sizes = draw(st.lists(st.integers(1, 64), max_size=8))
        chunks, rest = [], body
        for size in sizes:
            chunks.append(rest[:size])
            rest = rest[size:]
        chunks.append(rest)
        payload = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks if c) + b"0\r\n\r\n"
    else:
        headers.append("Connection: close")
        payload = body
    raw = ("\r\n".join(headers) + "\r\n\r\n").encode() + payload
    if draw(st.booleans()):
        raw = b"HTTP/1.1 100 Continue\r\n\r\n" + raw
    if not 200 <= status < 300:
        expect: tuple[str | None, bytes | None] = (record.ERROR, None)
    elif len(body) > CAP:
        expect = (record.MALFORMED, None)
    else:
        expect = (None, body)
    return raw, close, expect


BROKEN_BITS = [
    b"",
    b"\r\n",
    b"\n",
    b"\x00",
    b":",
    b" ",
    b"HTTP/1.1 ",
    b"Content-Length: -1\r\n",
    b"Content-Length: 99999\r\n",
    b"Content-Length: 1\r\nContent-Length: 2\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"zz\r\n",
    b"\r\n\r\n",
    b"X: " + b"a" * 70_000 + b"\r\n",
    b" folded\r\n",
    b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
    b"\xff\xfe",
]


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    """A well-formed reply, a broken one (a well-formed reply with bytes cut, inserted or
    replaced), or arbitrary bytes. The connection is mostly closed after a broken reply:
    one left open with a reply cut short costs a whole deadline."""
    raw, close, expect = draw(well_formed())
    kind = draw(st.sampled_from(["well_formed", "well_formed", "broken", "broken", "bytes"]))
    if kind == "well_formed":
        return Plan(split(draw, raw), close, expect)
    if kind == "bytes":
        raw = draw(st.binary(max_size=300))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(raw)))
        cut = draw(st.integers(0, 8))
        raw = raw[:pos] + draw(st.sampled_from(BROKEN_BITS) | st.binary(max_size=8)) + raw[pos + cut :]
    return Plan(split(draw, raw), draw(st.sampled_from([True] * 7 + [False])), None)


_request_ids = itertools.count()


async def post_plans(
    bot: ScriptedBot, first: Plan, second: Plan, deadline_ms: float = DEADLINE_MS
) -> list[wire.Exchange]:
    """Two POSTs through one client (the second may reuse the connection): their Exchanges."""
    endpoint = wire.Endpoint.make("fuzz", f"http://127.0.0.1:{bot.port}/", None)
    out = []
    async with wire.new_client(2) as client:
        for plan in (first, second):
            body = b'{"type":"act","n":%d}' % next(_request_ids)
            bot.plans[body] = plan
            out.append(await asyncio.wait_for(wire.post(client, endpoint, body, deadline_ms, CAP), HANG_S))
            bot.plans.pop(body, None)
    return out


def checked(results: list[wire.Exchange], first: Plan, second: Plan) -> list[tuple[wire.Exchange, Plan]]:
    """The exchanges whose outcome is known, with their plans: the first reply goes over a
    fresh connection, the second one too or over a connection left clean by a well-formed
    first reply that kept it open."""
    pairs = [(results[0], first)]
    if first.expect is not None and not first.close:
        pairs.append((results[1], second))
    return [(ex, plan) for ex, plan in pairs if plan.expect is not None]


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(first=plans(), second=plans())
def test_any_raw_http_reply_is_an_exchange(scripted_bot: ScriptedBot, first: Plan, second: Plan) -> None:
    results = asyncio.run(post_plans(scripted_bot, first, second))
    if any(ex.fault == record.TIMEOUT for ex, _ in checked(results, first, second)):
        # a well-formed reply never times out, but on a loaded machine the 250 ms deadline may
        # pass before the scripted bytes arrive: decide with a deadline load cannot reach
        results = asyncio.run(post_plans(scripted_bot, first, second, 20 * DEADLINE_MS))
    for ex in results:
        assert isinstance(ex, wire.Exchange)
        assert ex.fault in (None, record.TIMEOUT, record.ERROR, record.MALFORMED), ex
        assert 0 <= ex.latency_ms <= HANG_S * 1000, ex  # within the wait for it: no clock read here
        if ex.fault is None:
            assert ex.status is not None and 200 <= ex.status < 300 and ex.body is not None and len(ex.body) <= CAP
        else:
            assert ex.body is None and ex.detail
    for ex, plan in checked(results, first, second):
        assert (ex.fault, ex.body) == plan.expect, (ex, plan)


@settings(deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(first=plans(), second=plans())
def test_the_fast_path_reads_every_reply_as_h11_does(scripted_bot: ScriptedBot, first: Plan, second: Plan) -> None:
    """The same raw replies through the lean reader's fast path and with every reply
    forced through its h11 fallback: the same fault kind, status and body."""

    def both(deadline_ms: float) -> list[tuple[wire.Exchange, wire.Exchange]]:
        fast = asyncio.run(post_plans(scripted_bot, first, second, deadline_ms))
        original = pool._Conn._read_head
        pool._Conn._read_head = lambda self, head: False  # type: ignore[method-assign]
        try:
            slow = asyncio.run(post_plans(scripted_bot, first, second, deadline_ms))
        finally:
            pool._Conn._read_head = original  # type: ignore[method-assign]
        return list(zip(fast, slow))

    pairs = both(DEADLINE_MS)
    if any((a.fault == record.TIMEOUT) != (b.fault == record.TIMEOUT) for a, b in pairs):
        # one path timed out and the other did not: on a loaded machine the 250 ms deadline
        # may pass before the scripted bytes arrive, so decide with a deadline load cannot reach
        pairs = both(20 * DEADLINE_MS)
    for a, b in pairs:
        assert (a.fault, a.status, a.body) == (b.fault, b.status, b.body), (a, b)
