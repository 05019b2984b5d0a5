"""Wire protocol v1: the only module where the JSON field names of messages live.

The referee POSTs one JSON object per message; ``type`` is ``hello``, ``start``,
``act`` or ``end``. Only ``act`` needs a meaningful answer: ``{"action": X}`` with X
equal, as a JSON value, to one element of ``legal``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PROTOCOL = 1
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@dataclass(frozen=True)
class MatchContext:
    """What every message of one match shares."""

    tournament: str
    match: str
    game: str
    options: Mapping[str, Any]
    players: Sequence[str]


def hello(tournament: str, game: str, options: Mapping[str, Any], bot: str) -> bytes:
    """The readiness check sent once to every bot before play."""
    return _dumps(
        {"protocol": PROTOCOL, "type": "hello", "tournament": tournament, "game": game, "options": options, "bot": bot}
    ).encode()


def start(ctx: MatchContext, seat: int) -> bytes:
    """A match begins; ``seat`` is the receiver's seat."""
    return _dumps(
        {
            "protocol": PROTOCOL,
            "type": "start",
            "tournament": ctx.tournament,
            "match": ctx.match,
            "game": ctx.game,
            "options": ctx.options,
            "seat": seat,
            "players": ctx.players,
        }
    ).encode()


def act(
    ctx: MatchContext,
    seat: int,
    decision: int,
    deadline_ms: int,
    state: Any,
    legal: Sequence[Any],
    time_bank_ms: int | None = None,
) -> bytes:
    """A decision is needed from ``seat``. ``time_bank_ms`` (only in tournaments with a
    time bank) is what the seat has left to spend on answers slower than the deadline."""
    msg = {
        "protocol": PROTOCOL,
        "type": "act",
        "tournament": ctx.tournament,
        "match": ctx.match,
        "game": ctx.game,
        "options": ctx.options,
        "seat": seat,
        "players": ctx.players,
        "decision": decision,
        "deadline_ms": deadline_ms,
    }
    if time_bank_ms is not None:
        msg["time_bank_ms"] = time_bank_ms
    msg["state"] = state
    msg["legal"] = legal
    return _dumps(msg).encode()


def end(ctx: MatchContext, seat: int, result: Mapping[str, Any]) -> bytes:
    """The match is over; ``result`` is the match result as published."""
    return _dumps(
        {
            "protocol": PROTOCOL,
            "type": "end",
            "tournament": ctx.tournament,
            "match": ctx.match,
            "game": ctx.game,
            "options": ctx.options,
            "seat": seat,
            "players": ctx.players,
            "result": result,
        }
    ).encode()


class ReplyError(ValueError):
    """A reply body that is not a valid answer to ``act``."""


def parse_act_reply(body: bytes) -> dict[str, Any]:
    """Decode an ``act`` reply; it must be a JSON object with an ``action`` field."""
    try:
        reply = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise ReplyError(f"not JSON: {_excerpt(body)}") from exc
    if not isinstance(reply, dict):
        raise ReplyError(f"not a JSON object: {_excerpt(body)}")
    if "action" not in reply:
        raise ReplyError(f"no 'action' field: {_excerpt(body)}")
    return reply


def reply_log(reply: Mapping[str, Any]) -> str | None:
    """The optional ``log`` string of an act reply (kept in the transcript, shown in
    replays, never sent to any bot); anything but a string is ignored."""
    log = reply.get("log")
    return log if isinstance(log, str) else None


def find_legal(action: Any, legal: Sequence[Any]) -> int:
    """Index of ``action`` in ``legal`` comparing as JSON values (1 is not true,
    1.0 is not 1), or -1."""
    for i, candidate in enumerate(legal):
        if candidate == action and _same_json(candidate, action):
            return i
    return -1


def _same_json(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return all(_same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return all(_same_json(a[k], b[k]) for k in a)
    return True


def _excerpt(body: bytes, limit: int = 80) -> str:
    text = body[:limit].decode("utf-8", "replace")
    return repr(text + ("…" if len(body) > limit else ""))
