"""Wire protocol v1: the only module where the JSON field names of messages live.

The referee POSTs one JSON object per message; ``type`` is ``hello``, ``start``,
``act`` or ``end``. Only ``act`` needs a meaningful answer: ``{"action": X}`` with X
equal, as a JSON value, to one element of ``legal``.

Messages are encoded with orjson (one C call for plain dicts and lists, no schema to
declare), byte for byte as the stdlib encoder writes them (``ensure_ascii=False``, compact
separators, key order; ``tests/test_transport.py`` compares the two), but for the spelling
of some floats (``1e-07`` is ``1e-7``: the same number). What orjson refuses (integer
keys, integers over 64 bits) goes to the stdlib encoder. NaN and infinities are refused
except in the games' views and legal lists (built from integers and strings: looking for
them there would cost more than the encoding). The fields every message of a match shares
are encoded once per match; per decision, only the state and the legal list.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

PROTOCOL = 1
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
_stdlib = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dumps(obj: Any, check_finite: bool = True, plain: Any = None) -> bytes:
    """Compact UTF-8 JSON, byte-compatible with the stdlib encoder (see the module doc): the
    encoder of every wire message and transcript line. ``plain``: what the stdlib encodes
    when orjson refuses ``obj``, if not ``obj`` itself (``obj`` holds ``orjson.Fragment``s)."""
    try:
        out = orjson.dumps(obj)
    except TypeError:
        return _stdlib(obj if plain is None else plain).encode()
    if check_finite and b"null" in out and _has_non_finite(obj):  # orjson writes NaN as null
        raise ValueError("Out of range float values are not JSON compliant")
    return out


def _has_non_finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return not math.isfinite(obj)
    if isinstance(obj, dict):
        return any(_has_non_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_has_non_finite(v) for v in obj)
    return False


@dataclass
class _EncodedList:
    """One append-only list of a match as last sent: its entries (kept alive, so they are
    recognised by identity), each one's encoding, and the whole list's."""

    items: list[Any] = field(default_factory=list)
    parts: list[bytes] = field(default_factory=list)
    joined: bytes = b"[]"
    fragment: orjson.Fragment = field(default_factory=lambda: orjson.Fragment(b"[]"))  # ``joined``, as orjson embeds it

    def update(self, value: list[Any]) -> bool:
        """Make ``joined`` the encoding of ``value``, encoding only the entries not kept
        already; False when orjson refuses one of them."""
        items = self.items
        k = len(items)
        # the kept list's first and last entries in place: under the contract, so is every
        # one between (a constant-time check); else compare from the start
        if not (k and len(value) >= k and value[k - 1] is items[k - 1] and value[0] is items[0]):
            same = min(len(value), k)
            k = 0
            while k < same and value[k] is items[k]:
                k += 1
        if k == len(items) == len(value):
            return True
        try:
            new = [orjson.dumps(e) for e in value[k:]]
        except TypeError:
            return False
        del items[k:], self.parts[k:]
        items.extend(value[k:])
        self.parts.extend(new)
        self.joined = b"[" + b",".join(self.parts) + b"]"
        self.fragment = orjson.Fragment(self.joined)
        return True


@dataclass(frozen=True)
class MatchContext:
    """What every message of one match shares."""

    tournament: str
    match: str
    game: str
    options: Mapping[str, Any]
    players: Sequence[str]
    # keys of the game's view whose value is a list that only grows within a match and
    # whose entries never change once in it (``GameInfo.append_only_view_keys``)
    append_only: tuple[str, ...] = ()
    _act_heads: dict[int, bytes] = field(default_factory=dict, compare=False, repr=False)
    _lists: dict[str, _EncodedList] = field(default_factory=dict, compare=False, repr=False)

    def shared_fields(self) -> bytes:
        """``"tournament":…,"match":…,"game":…,"options":…,`` as every message has them."""
        got = self._act_heads.get(-1)
        if got is None:
            got = self._act_heads[-1] = b'"tournament":%b,"match":%b,"game":%b,"options":%b,' % (
                dumps(self.tournament),
                dumps(self.match),
                dumps(self.game),
                dumps(self.options),
            )
        return got

    def players_json(self) -> bytes:
        """The encoded ``players`` list."""
        got = self._act_heads.get(-2)
        if got is None:
            got = self._act_heads[-2] = dumps(self.players)
        return got

    def act_head(self, seat: int) -> bytes:
        """The constant start of every ``act`` message to ``seat``, up to ``"decision":``."""
        head = self._act_heads.get(seat)
        if head is None:
            head = b'{"protocol":%d,"type":"act",%b"seat":%d,"players":%b,"decision":' % (
                PROTOCOL,
                self.shared_fields(),
                seat,
                self.players_json(),
            )
            self._act_heads[seat] = head
        return head

    def with_encoded_lists(self, state: Any) -> Any:
        """``state`` with each ``append_only`` list replaced by its encoding, made from
        the encodings of its entries kept since they were first sent: every seat of a
        turn gets the same history, and a turn adds one entry to it (6 nimmt!'s history
        is ~60 % of an ``act`` message's bytes). Entries are recognised by identity, which
        the kept list holds alive; a list that is not the kept one plus new entries (a
        new hand) is encoded anew from where they part."""
        if type(state) is not dict:
            return state
        out = state
        for key in self.append_only:
            value = state.get(key)
            if type(value) is not list:
                continue
            kept = self._lists.get(key)
            if kept is None:
                kept = self._lists[key] = _EncodedList()
            if not kept.update(value):  # an entry orjson refuses: the whole state goes to the stdlib encoder
                del self._lists[key]
                return state
            if out is state:
                out = dict(state)
            out[key] = kept.fragment
        return out


def hello(tournament: str, game: str, options: Mapping[str, Any], bot: str) -> bytes:
    """The readiness check sent once to every bot before play."""
    return dumps(
        {"protocol": PROTOCOL, "type": "hello", "tournament": tournament, "game": game, "options": options, "bot": bot}
    )


HELLO_VERSION_MAX = 64  # characters of the ``version`` a hello reply may carry


def hello_version(body: bytes | None) -> str:
    """The optional ``version`` of a hello reply: a string of 1-64 printable ASCII
    characters in a JSON object; anything else (no body, not JSON, too long) is ""."""
    if not body or len(body) > 65536:
        return ""
    try:
        reply = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    v = reply.get("version") if isinstance(reply, dict) else None
    if isinstance(v, str) and 0 < len(v) <= HELLO_VERSION_MAX and v.isascii() and v.isprintable():
        return v
    return ""


def start(ctx: MatchContext, seat: int) -> bytes:
    """A match begins; ``seat`` is the receiver's seat."""
    return _notice_head("start", ctx, seat) + b"}"


def _notice_head(kind: str, ctx: MatchContext, seat: int) -> bytes:
    """The fields ``start`` and ``end`` share, in wire order, without the closing brace."""
    return b'{"protocol":%d,"type":"%b",%b"seat":%d,"players":%b' % (
        PROTOCOL,
        kind.encode(),
        ctx.shared_fields(),
        seat,
        ctx.players_json(),
    )


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
    bank = b"" if time_bank_ms is None else b',"time_bank_ms":%d' % time_bank_ms
    # one encoder call for both: '{"state":…,"legal":…}' without its opening brace
    shown = ctx.with_encoded_lists(state) if ctx.append_only else state
    plain = None if shown is state else {"state": state, "legal": legal}
    tail = dumps({"state": shown, "legal": legal}, check_finite=False, plain=plain)
    return b'%b%d,"deadline_ms":%d%b,%b' % (ctx.act_head(seat), decision, deadline_ms, bank, tail[1:])


def end(ctx: MatchContext, seat: int, result: Mapping[str, Any], state: Any = None) -> bytes:
    """The match is over; ``result`` is the match result as published, ``state`` the
    seat's view of the final position (the match's last hand or round complete)."""
    return ends(ctx, result, [state], [seat])[0]


def ends(ctx: MatchContext, result: Mapping[str, Any], states: Sequence[Any], seats: Sequence[int]) -> list[bytes]:
    """``end`` for each of ``seats`` (``states[i]`` is the view of ``seats[i]``): the
    result is encoded (and checked for NaN) once, not once per seat."""
    res = b',"result":%b' % dumps({**result, "scores": [_whole(x) for x in result["scores"]]})
    return [
        _notice_head("end", ctx, seat)
        + res
        + (b"}" if state is None else b',"state":%b}' % dumps(state, check_finite=False))
        for seat, state in zip(seats, states)
    ]


def _whole(x: Any) -> Any:
    """A score as the schema types it: an integer where the value is one (the games keep
    float totals; typed decoders such as Go's int or Java's long refuse ``104.0``)."""
    return int(x) if isinstance(x, float) and x.is_integer() else x


class ReplyError(ValueError):
    """A reply body that is not a valid answer to ``act``."""


def parse_act_reply(body: bytes) -> dict[str, Any]:
    """Decode an ``act`` reply; it must be a JSON object with an ``action`` field."""
    try:
        # orjson reads integers past 64 bits as floats: the stdlib reads them exactly
        reply = json.loads(body) if len(body) >= 19 and _LONG_DIGITS.search(body) else orjson.loads(body)
    except orjson.JSONDecodeError:
        # what orjson refuses but the stdlib accepts (NaN, a BOM, lone surrogates) is
        # judged by the stdlib: the verdict must not depend on the decoder
        try:
            reply = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise ReplyError(f"not JSON: {_excerpt(body)}") from exc
    except (ValueError, RecursionError) as exc:
        raise ReplyError(f"not JSON: {_excerpt(body)}") from exc
    if type(reply) is not dict:
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
    try:
        i = legal.index(action)  # the first equal one, in C; equal is not always the same JSON
    except ValueError:
        return -1
    if _same_json(legal[i], action):
        return i
    for i, candidate in enumerate(legal):
        if candidate == action and _same_json(candidate, action):
            return i
    return -1


_NESTED = (list, dict)  # a tuple: ``list | dict`` would be built anew at every call


def _same_json(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b``, equal, are the same JSON value (types equal throughout)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        for x, y in zip(a, b):  # a loop, not all() of a generator: an action is a short list of scalars
            if type(x) is not type(y) or (isinstance(x, _NESTED) and not _same_json(x, y)):
                return False
        return True
    if isinstance(a, dict):
        return all(_same_json(a[k], b[k]) for k in a)
    return True


def _excerpt(body: bytes, limit: int = 80) -> str:
    text = body[:limit].decode("utf-8", "replace")
    return repr(text + ("…" if len(body) > limit else ""))
