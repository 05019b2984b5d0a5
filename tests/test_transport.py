"""The lean keep-alive pool against real sockets on 127.0.0.1: every kind of reply a bot
can send is classified, connections are reused only after a complete reply; the scripted
transport's replies are classified alike; wire messages are byte-stable.

Parallel: a reply that must come back whole is given ``HONEST_MS``, a deadline no load
reaches; only the replies that never come in time (silence, a trickle, a scripted sleep)
are given a short one, and load cannot make those come sooner."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from referee.bots.client import pool, protocol, scripted, wire
from referee.bots.client.https import HttpsTransport
from referee.bots.client.pool import LeanPool
from referee.bots.client.transport import Target, TransportError
from referee.config.redacted import Secret
from referee.games import GAMES
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = pytest.mark.parallel

HONEST_MS = UNREACHABLE_DEADLINE_MS  # the deadline of an exchange whose reply is complete at once
SHORT_MS = 300  # the deadline of one whose reply never comes in time

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    return await reader.readexactly(length)


def ok_json(body: bytes = b'{"action": 1}') -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


async def exchange(
    serve: Serve, requests: int = 1, deadline_ms: int = HONEST_MS, max_bytes: int = 1024
) -> tuple[list[wire.Exchange], int]:
    connections = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            await serve(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    ep = wire.Endpoint.make("bot", f"http://127.0.0.1:{port}/", None)
    out = []
    async with server, wire.new_client(2) as client:
        for _ in range(requests):
            out.append(await wire.post(client, ep, b'{"type": "act"}', deadline_ms, max_bytes))
    return out, connections


def run(serve: Serve, **kw: int) -> tuple[list[wire.Exchange], int]:
    return asyncio.run(exchange(serve, **kw))


async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        await read_request(reader)
        writer.write(ok_json())
        await writer.drain()


def test_keep_alive_reuses_one_connection() -> None:
    results, connections = run(keep_alive, requests=5)
    assert [r.body for r in results] == [b'{"action": 1}'] * 5
    assert all(r.fault is None and r.status == 200 for r in results)
    assert connections == 1


async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        await read_request(reader)
        writer.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"act\r\n8\r\nion": 2}\r\n0\r\n\r\n')
        await writer.drain()


async def close_delimited(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b'HTTP/1.0 200 OK\r\n\r\n{"action": 3}')
    await writer.drain()


def test_chunked_and_close_delimited_bodies() -> None:
    results, connections = run(chunked, requests=2)
    assert [r.body for r in results] == [b'{"action": 2}'] * 2 and connections == 1
    results, connections = run(close_delimited, requests=2)
    assert [r.body for r in results] == [b'{"action": 3}'] * 2 and connections == 2  # not reusable


async def status_500(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        await read_request(reader)
        writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom")
        await writer.drain()


async def redirect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://10.0.0.1/\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()


async def huge(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n")
    for _ in range(100):
        writer.write(b"x" * 100_000)
        await writer.drain()


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    await asyncio.sleep(5)


async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
    for _ in range(100):
        writer.write(b"x")
        await writer.drain()
        await asyncio.sleep(0.02)


async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)


async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"SPEAK FRIEND AND ENTER\r\n\r\n")
    await writer.drain()


@pytest.mark.parametrize(
    ("serve", "kind", "detail"),
    [
        (status_500, "error", "HTTP 500"),
        (redirect, "error", "HTTP 307 redirect (not followed)"),
        (huge, "malformed", "over the cap of 1024 bytes"),
        (silent, "timeout", "no complete reply within 300 ms"),
        (trickle, "timeout", "no complete reply within 300 ms"),
        (hang_up, "error", "connection closed before a complete response"),
        (garbage, "error", "malformed HTTP response"),
    ],
)
def test_bad_replies_are_classified(serve: Serve, kind: str, detail: str) -> None:
    results, _ = run(serve, deadline_ms=SHORT_MS if kind == "timeout" else HONEST_MS)
    assert results[0].fault == kind
    assert detail in results[0].detail
    assert (
        results[0].latency_ms < 4000
    )  # settled at the deadline, not when a 5 s silence ends (a loaded machine adds lag)


def test_refused_connection_is_an_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused

        async def go() -> wire.Exchange:
            ep = wire.Endpoint.make("bot", f"http://127.0.0.1:{port}/", None)
            async with wire.new_client(1) as client:
                return await wire.post(client, ep, b"{}", HONEST_MS, 1024)

        result = asyncio.run(go())
    assert result.fault == "error" and "cannot connect" in result.detail


async def answers_in_advance(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Each reply is followed by a second, unrequested one: the answer to the next
    request, sent in advance (it would show a 0 ms response time)."""
    n = 0
    while True:
        await read_request(reader)
        n += 1
        writer.write(ok_json(b'{"action": %d}' % n) + ok_json(b'{"action": 99}'))
        await writer.drain()


def test_a_reply_sent_in_advance_is_never_taken_for_the_next_answer() -> None:
    results, connections = run(answers_in_advance, requests=3)
    assert [r.body for r in results] == [b'{"action": 1}'] * 3  # each on a fresh connection
    assert connections == 3


async def closes_after_each_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Keep-alive reply (no Connection: close), then the bot closes the connection."""
    await read_request(reader)
    writer.write(ok_json())
    await writer.drain()
    await asyncio.sleep(0.02)  # the referee has already put the connection back in its pool


def test_a_connection_the_bot_closed_while_idle_costs_no_fault() -> None:
    results, connections = run(closes_after_each_reply, requests=3)
    assert all(r.fault is None and r.body == b'{"action": 1}' for r in results), [r.detail for r in results]
    assert connections == 3


# -- wire messages: byte for byte what the stdlib encoder wrote -------------------------

_OLD = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _old_act(
    ctx: protocol.MatchContext, seat: int, decision: int, deadline_ms: int, state: Any, legal: Any, bank: Any
) -> bytes:
    msg = {
        "protocol": 1,
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
    if bank is not None:
        msg["time_bank_ms"] = bank
    msg["state"] = state
    msg["legal"] = legal
    return _OLD(msg).encode()


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_messages_are_byte_identical_to_the_stdlib_encoder(game_id: str) -> None:
    game = GAMES[game_id]
    rng = random.Random(3)
    seats = game.info.min_seats
    options = game.check_options(seats, {})
    ctx = protocol.MatchContext("tourné «1»", "m000001", game_id, options, [f"bot\u2028{i}\x7f" for i in range(seats)])
    compared = 0
    for seed in range(3):
        state = game.setup(seats, seed, options)
        decision = 0
        while not game.is_over(state):
            for s in game.to_act(state):
                legal = game.legal(state, s)
                view = game.view(state, s)
                bank = None if decision % 2 else 1234
                assert protocol.act(ctx, s, decision, 1000, view, legal, bank) == _old_act(
                    ctx, s, decision, 1000, view, legal, bank
                )
                compared += 1
                state = game.apply(state, s, legal[rng.randrange(len(legal))])
                decision += 1
        result = {"scores": [1, -2.5], "ranks": [1, 2], "details": {"é\n": "\x1f"}}
        assert (
            protocol.end(ctx, 0, result)
            == _OLD({**json.loads(protocol.end(ctx, 0, result)), "result": result}).encode()
        )
    assert protocol.start(ctx, 1) == _OLD(json.loads(protocol.start(ctx, 1))).encode()
    assert compared > 10


@pytest.mark.parametrize("variant", ["plus", "plus_dealt_zeros", "zeros_negative", "simple"])
def test_act_with_lists_encoded_once_is_byte_identical(variant: str) -> None:
    """6 nimmt!'s history is encoded entry by entry once per match
    (``append_only_view_keys``): every act message of whole matches, 2 to 7 seats and a
    new hand's history, is what the stdlib encoder writes of the whole view."""
    game = GAMES["nimmt_plus"]
    assert game.info.append_only_view_keys == ("history",)
    rng = random.Random(11)
    compared = reused = 0
    for seats in range(2, 8):
        options = game.check_options(seats, {"variant": variant, "zero_heads": seats % 2})
        ctx = protocol.MatchContext(
            "t «1»", "m000002", "nimmt_plus", options, [f"b{i}" for i in range(seats)], ("history",)
        )
        state = game.setup(seats, seats, options)
        decision = 0
        while not game.is_over(state):
            for s in game.to_act(state):
                legal = game.legal(state, s)
                view = game.view(state, s)
                before = ctx._lists["history"].joined if "history" in ctx._lists else b""
                sent = protocol.act(ctx, s, decision, 1000, view, legal, None)
                assert sent == _old_act(ctx, s, decision, 1000, view, legal, None)
                assert json.loads(sent)["state"] == json.loads(json.dumps(view))
                reused += view["history"] != [] and ctx._lists["history"].joined is before
                assert ctx._lists["history"].items == view["history"]  # the entries kept are the ones sent
                compared += 1
                state = game.apply(state, s, legal[rng.randrange(len(legal))])
                decision += 1
    assert compared > 200
    # the seats of a simultaneous turn share the history's bytes (in simple one seat acts a turn)
    assert reused > compared // 4 if variant != "simple" else reused == 0


def test_act_with_an_entry_orjson_refuses_falls_back_to_the_stdlib() -> None:
    """An append-only list whose entry orjson refuses (a 70-bit integer) is sent as the
    stdlib encodes it, and the cache does not keep a half-encoded list."""
    ctx = protocol.MatchContext("t", "m", "g", {}, ["a"], ("history",))
    big = {"turn": 1, "n": 2**70}
    state = {"history": [{"turn": 0}, big], "x": 1}
    assert protocol.act(ctx, 0, 0, 1000, state, [[1]], None) == _old_act(ctx, 0, 0, 1000, state, [[1]], None)
    assert "history" not in ctx._lists
    state = {"history": [{"turn": 0}], "x": 2}
    assert protocol.act(ctx, 0, 1, 1000, state, [[1]], None) == _old_act(ctx, 0, 1, 1000, state, [[1]], None)
    state["history"] = [{"turn": 9}]  # a new list (a new hand): encoded anew
    assert protocol.act(ctx, 0, 2, 1000, state, [[1]], None) == _old_act(ctx, 0, 2, 1000, state, [[1]], None)


def _old_notice(kind: str, ctx: protocol.MatchContext, seat: int) -> dict[str, Any]:
    return {
        "protocol": 1,
        "type": kind,
        "tournament": ctx.tournament,
        "match": ctx.match,
        "game": ctx.game,
        "options": ctx.options,
        "seat": seat,
        "players": ctx.players,
    }


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_start_and_end_built_from_parts_are_byte_identical_to_the_stdlib_encoder(game_id: str) -> None:
    """``start`` and ``end`` (result encoded once for every seat, each seat's final view)
    against the stdlib encoding of the whole message as it was built before."""
    game = GAMES[game_id]
    seats = game.info.min_seats
    options = game.check_options(seats, {})
    ctx = protocol.MatchContext("tourné «1»", "m000001", game_id, options, [f"bot\u2028{i}" for i in range(seats)])
    state = game.setup(seats, 5, options)
    rng = random.Random(5)
    while not game.is_over(state):
        for s in game.to_act(state):
            legal = game.legal(state, s)
            state = game.apply(state, s, legal[rng.randrange(len(legal))])
    result = {"scores": [1, -2.5, None], "ranks": [1, 2], "lower_is_better": True, "details": {"é\n": "\x1f"}}
    views = [game.view(state, s) for s in range(seats)]
    sent = protocol.ends(ctx, result, views, range(seats))
    for s in range(seats):
        assert protocol.start(ctx, s) == _OLD(_old_notice("start", ctx, s)).encode()
        assert sent[s] == _OLD({**_old_notice("end", ctx, s), "result": result, "state": views[s]}).encode()
        assert protocol.end(ctx, s, result) == _OLD({**_old_notice("end", ctx, s), "result": result}).encode()


def test_values_orjson_refuses_are_sent_as_before_and_a_nan_result_is_refused() -> None:
    ctx = protocol.MatchContext("t", "m", "g", {}, ["a"])
    odd = {"1": {2: "int key"}, "big": 2**70}
    assert protocol.act(ctx, 0, 0, 1, odd, [1]) == _old_act(ctx, 0, 0, 1, odd, [1], None)
    with pytest.raises(ValueError):  # NaN in options or results is refused as before
        protocol.end(ctx, 0, {"scores": [float("nan")]})


# -- the lean reader: fast path, fallback, caps, yielding -------------------------------


def test_endpoint_repr_never_shows_the_token() -> None:
    ep = wire.Endpoint.make("bot", "http://127.0.0.1:9/", Secret("s3cret-token"))
    assert "s3cret" not in repr(ep) and "Bearer" not in repr(ep)
    assert "s3cret" not in repr(ep.target) and "s3cret" not in str(ep)
    assert ep.headers["Authorization"] == "Bearer s3cret-token"  # still sent


def raw_reply(payload: bytes) -> Serve:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(payload)
            await writer.drain()

    return serve


@pytest.mark.parametrize(
    "payload",
    [
        ok_json(),  # fast path
        b'HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: keep-alive\r\nX-A: b c\r\n\r\n{"action": 1}',
        b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n{"acti\r\n7\r\non": 1}\r\n0\r\n\r\n',
        b"HTTP/1.1 100 Continue\r\n\r\n" + ok_json(),  # 1xx: h11
        b'HTTP/1.1 200 OK\r\ncontent-length:13\r\n\r\n{"action": 1}',
    ],
)
def test_fast_path_and_fallback_read_the_same_reply_and_reuse_the_connection(payload: bytes) -> None:
    results, connections = run(raw_reply(payload), requests=3)
    assert [(r.fault, r.body) for r in results] == [(None, b'{"action": 1}')] * 3
    assert connections == 1


@pytest.mark.parametrize(
    ("payload", "reused"),
    [
        (b'HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 13\r\n\r\n{"action": 1}', False),
        (b'HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 13\r\n\r\n{"action": 1}', True),
        (b'HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Pad: \t a \t b \t\r\nContent-Length:  13 \r\n\r\n{"action": 1}', True),
    ],
)
def test_the_fast_path_honours_connection_close_and_odd_spacing(payload: bytes, reused: bool) -> None:
    results, connections = run(raw_reply(payload), requests=3)
    assert [(r.fault, r.body) for r in results] == [(None, b'{"action": 1}')] * 3
    assert connections == (1 if reused else 3)


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        (b"HTTP/1.1 100 Continue\r\n\r\n" * 9 + ok_json(), "more than 8 informational"),
        (b"HTTP/1.1 200 OK\r\nX:" + b" \t" * 7000 + b"\x00\r\nContent-Length: 2\r\n\r\n{}", "malformed HTTP"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1\r\nx\r\n" * 2000 + b"0\r\n\r\n",
            "more than 1024 chunks",
        ),
        (b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 20000 + b"\r\nContent-Length: 2\r\n\r\n{}", "headers over"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "malformed HTTP response"),
    ],
)
def test_stall_caps_end_the_exchange_as_an_error(payload: bytes, detail: str) -> None:
    results, _ = run(raw_reply(payload))
    assert results[0].fault == "error" and detail in results[0].detail, results[0].detail


def test_an_endless_1xx_stream_is_the_bots_error_not_the_referees_lateness() -> None:
    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        for _ in range(100_000):
            writer.write(b"HTTP/1.1 102 Processing\r\n\r\n" * 50)
            await writer.drain()

    results, _ = run(flood)
    assert results[0].fault == "error" and "informational" in results[0].detail
    assert results[0].late_ms == 0.0


def test_a_parse_slice_yields_to_the_loop_and_other_work_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a zero slice, every 32 h11 events the reader yields: a ticker task counts
    loop turns during one reply of 1,000 chunks (no timing asserted)."""
    monkeypatch.setattr(pool, "SLICE_S", 0.0)
    body = b'{"action": 1}' + b" " * 987
    payload = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(b"1\r\n%c\r\n" % c for c in body)
    payload += b"0\r\n\r\n"

    async def go() -> tuple[wire.Exchange, int]:
        ticks = 0
        stop = False

        async def ticker() -> None:
            nonlocal ticks
            while not stop:
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.create_task(ticker())
        server = await asyncio.start_server(raw_reply(payload), "127.0.0.1", 0)
        ep = wire.Endpoint.make("bot", f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/", None)
        async with server, wire.new_client(1) as client:
            await asyncio.sleep(0.05)
            before = ticks
            ex = await wire.post(client, ep, b"{}", HONEST_MS, 1 << 20)
            during = ticks - before
        stop = True
        await t
        return ex, during

    ex, during = asyncio.run(go())
    assert ex.fault is None and ex.body is not None and ex.body.startswith(b'{"action": 1}')
    assert during >= 1000 // 32


def test_find_legal_compares_as_json_values() -> None:
    legal: list[Any] = [1, True, 1.0, [1], [True], {"a": 1}, {"a": True}, "x"]
    assert [protocol.find_legal(a, legal) for a in (1, True, 1.0, [1], [True], {"a": True}, "x")] == [
        0,
        1,
        2,
        3,
        4,
        6,
        7,
    ]
    assert protocol.find_legal(False, legal) == -1 and protocol.find_legal([1.0], legal) == -1
    assert protocol.find_legal(2, legal) == -1 and protocol.find_legal(None, []) == -1


def test_a_declared_length_over_the_cap_is_judged_alike_on_both_paths() -> None:
    """Content-Length over the cap, and the bot closes before sending all of it: the fast
    path and the h11 fallback (a 1xx first sends the reply there) both call it cut off."""
    over = b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n" + b"x" * 1024

    def close_after(payload: bytes) -> Serve:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_request(reader)
            writer.write(payload)
            await writer.drain()

        return serve

    for payload in (over, b"HTTP/1.1 100 Continue\r\n\r\n" + over):
        results, _ = run(close_after(payload), max_bytes=1024)
        assert (results[0].fault, results[0].body) == ("malformed", None), results[0]
        assert "over the cap" in results[0].detail


# -- the scripted transport: the interface without sockets ------------------------------


def scripted_post(handler: scripted.Handler, deadline_ms: float = HONEST_MS, max_bytes: int = 1024) -> wire.Exchange:
    async def go() -> wire.Exchange:
        ep = wire.Endpoint.make("bot", "http://bot.test/", None)
        async with scripted.ScriptedTransport(handler) as client:
            return await wire.post(client, ep, b'{"type": "act"}', deadline_ms, max_bytes)

    return asyncio.run(go())


async def slow_answer(target: Target, body: bytes) -> tuple[int, bytes]:
    await asyncio.sleep(5)
    return 200, b"{}"


def refuse(target: Target, body: bytes) -> tuple[int, bytes]:
    raise TransportError(f"cannot connect to {target.host}:{target.port}: refused")


@pytest.mark.parametrize(
    ("handler", "kind", "detail"),
    [
        (lambda t, b: (200, b'{"action": 1}'), None, ""),
        (lambda t, b: (500, b"boom"), "error", "HTTP 500"),
        (lambda t, b: (307, b""), "error", "HTTP 307 redirect (not followed)"),
        (lambda t, b: (200, b"x" * 1025), "malformed", "over the cap of 1024 bytes"),
        (slow_answer, "timeout", "no complete reply within 300 ms"),
        (refuse, "error", "cannot connect to bot.test:80: refused"),
    ],
)
def test_a_scripted_reply_is_classified_as_one_from_a_socket(
    handler: scripted.Handler, kind: str | None, detail: str
) -> None:
    ex = scripted_post(handler, SHORT_MS if kind == "timeout" else HONEST_MS)
    assert ex.fault == kind and detail in ex.detail, ex
    assert ex.latency_ms < 4000  # a slow handler ends at the deadline, not when it would answer
    if kind is None:
        assert (ex.status, ex.body) == (200, b'{"action": 1}')


def test_send_now_is_the_transports_own_say_not_its_type() -> None:
    """``wire.send_now`` asks the transport: the scripted one sends at once, httpx never,
    the lean pool only on an idle connection."""

    async def go() -> tuple[wire.Exchange | None, bool, bool]:
        ep = wire.Endpoint.make("bot", "http://127.0.0.1:9/", None)
        async with scripted.ScriptedTransport(lambda t, b: (200, b + b"!")) as client:
            sent = wire.send_now(client, ep, b"{}", HONEST_MS, 1024)
            got = await sent.result() if sent is not None else None
        async with HttpsTransport(1) as https, LeanPool(1) as lean:
            return (
                got,
                wire.send_now(https, ep, b"{}", 300, 1024) is None,
                wire.send_now(lean, ep, b"{}", 300, 1024) is None,
            )

    got, https_none, lean_none = asyncio.run(go())
    assert got is not None and (got.fault, got.body) == (None, b"{}!")
    assert https_none and lean_none  # the pool has no idle connection yet
