"""JSON Schemas (draft 2020-12) of the wire protocol: the one source of truth for bot authors.

The files are package data: ``referee/schemas/protocol.json`` (``hello``, ``start``, ``act``,
``end`` and the act reply) and, per game, ``schema.json`` of its folder (``Game.schema_text``),
published as ``games/<id>.json`` (``state``, ``action`` (an item of ``legal``), ``details``
(``result.details``), the game's options and its messages and reply, which refer to the
protocol file). ``docs/schema/`` holds copies under the published names (``make schemas``
refreshes them; a test fails when they differ).

The schemas are open: an object may carry fields they do not list, so the referee can add
fields without breaking a bot that validates what it receives. ``strict`` gives a closed
copy (every listed object refuses unlisted fields): the tests validate what the referee
sends against it, so a field added to a view without its schema fails a test.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
import referencing

from referee.games import GAMES

DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://referee.example/schema/"
PROTOCOL = "protocol.json"


def schema_names() -> list[str]:
    """Every schema file by its published name: ``protocol.json``, ``games/<id>.json``."""
    return [PROTOCOL, *(game_schema_name(g) for g in sorted(GAMES))]


def schema_text(name: str) -> str:
    """The text of one schema file (by its published name), as shipped."""
    folder, _, file = name.partition("/")
    if folder == "games":
        return GAMES[file.removesuffix(".json")].schema_text()
    return (resources.files("referee") / "schemas" / name).read_text(encoding="utf-8")


@cache
def load(name: str) -> dict[str, Any]:
    """One schema file, parsed."""
    doc: dict[str, Any] = json.loads(schema_text(name))
    return doc


def game_schema_name(game: str) -> str:
    """The published name of a game's schema."""
    return f"games/{game}.json"


def _registry(strict: bool) -> referencing.Registry:
    """Every schema under its ``$id``, so relative ``$ref``s between files resolve offline."""
    resources_ = []
    for name in schema_names():
        doc = close(load(name)) if strict else load(name)
        resources_.append((doc["$id"], referencing.Resource.from_contents(doc)))
    registry: referencing.Registry = referencing.Registry().with_resources(resources_)
    return registry


@cache
def validator(name: str, definition: str | None = None, strict: bool = False) -> jsonschema.Draft202012Validator:
    """A validator for schema file ``name`` (or its ``$defs/<definition>``)."""
    ref = BASE + name + (f"#/$defs/{definition}" if definition else "")
    return jsonschema.Draft202012Validator({"$ref": ref}, registry=_registry(strict))


def errors(instance: Any, name: str, definition: str | None = None, strict: bool = False) -> list[str]:
    """Every place where ``instance`` breaks the schema, one line each (empty when valid)."""
    found = sorted(validator(name, definition, strict).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{_where(e.absolute_path)}: {_cut(e.message)}" for e in found]


def message_schema(message: Any, game: str | None = None) -> tuple[str, str | None]:
    """The schema file and definition a message the referee sends is checked against: its
    ``type``'s, in the game's schema where it has one, else in the protocol's."""
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in ("hello", "start", "act", "end"):
        return PROTOCOL, None
    if game is not None and kind != "hello":
        return game_schema_name(game), kind
    return PROTOCOL, kind


def message_errors(message: Any, game: str | None = None, strict: bool = False) -> list[str]:
    """``errors`` for a message the referee sends (``message_schema``)."""
    return errors(message, *message_schema(message, game), strict)


def reply_errors(reply: Any, game: str | None = None) -> list[str]:
    """``errors`` for an act reply (open: fields the schema does not list are allowed)."""
    if game is not None:
        return errors(reply, game_schema_name(game), "act_reply")
    return errors(reply, PROTOCOL, "act_reply")


def close(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy where every ``"type": "object"`` schema that lists ``properties`` refuses
    fields it does not list (the per-game overlays, which have no ``type``, stay open)."""
    out = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(out)
    return out


def _where(path: Any) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "(top)"


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
