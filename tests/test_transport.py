"""The lean keep-alive pool against real sockets on 127.0.0.1: every kind of reply a bot
can send is classified, connections are reused only after a complete reply."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from referee.bots import http

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
    serve: Serve, requests: int = 1, deadline_ms: int = 500, max_bytes: int = 1024
) -> tuple[list[http.Exchange], int]:
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
    ep = http.Endpoint.make("bot", f"http://127.0.0.1:{port}/", None)
    out = []
    async with server, http.new_client(2) as client:
        for _ in range(requests):
            out.append(await http.post(client, ep, b'{"type": "act"}', deadline_ms, max_bytes))
    return out, connections


def run(serve: Serve, **kw: int) -> tuple[list[http.Exchange], int]:
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
    results, _ = run(serve, deadline_ms=300)
    assert results[0].fault == kind
    assert detail in results[0].detail
    assert results[0].latency_ms < 1500  # settled within the deadline plus a small margin


def test_refused_connection_is_an_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused

        async def go() -> http.Exchange:
            ep = http.Endpoint.make("bot", f"http://127.0.0.1:{port}/", None)
            async with http.new_client(1) as client:
                return await http.post(client, ep, b"{}", 500, 1024)

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
