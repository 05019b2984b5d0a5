"""A lean HTTP/1.1 keep-alive connection pool on asyncio streams, for plain http:// bots.

Why: on a 2-core VM, one loopback POST through httpx cost ~500 µs of the referee's CPU
with httpx's default transport (httpcore over anyio) and ~250 µs with httpx's client
layer over a lean transport, against ~40 µs for a bare asyncio-streams round trip
(``python -m referee.bench`` prints the figures of the machine it runs on). The referee
must never be the bottleneck, so ``http.post`` sends plain-http requests of a
``BotClient`` straight through this pool; https and injected clients (tests with
``httpx.MockTransport``) go through httpx.

Requests are written by hand: the referee only ever POSTs a small JSON body with a
Content-Length. Responses are parsed by h11 (Content-Length, chunked and
close-delimited bodies, malformed framing). A connection goes back to the pool only
after a response was read to its end with nothing after it; one that was cancelled by a
deadline, broken, cut off at the size cap, or that carried bytes nobody asked for (a
bot must not answer the next request in advance) is closed, and so is an idle one
that receives anything. A request on a reused connection that the bot had closed
meanwhile (keep-alive close race: no byte of a response came back) is sent once more
on a fresh connection, as browsers and HTTP clients do.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11

_READ = 65536


class TransportError(Exception):
    """The exchange failed below HTTP: connect, reset, or a malformed response."""


@dataclass(frozen=True)
class Target:
    """Where and how to POST: host, port, and the request head without Content-Length."""

    host: str
    port: int
    head: bytes
    h11_request: h11.Request

    @classmethod
    def make(cls, url: str, headers: dict[str, str]) -> Target:
        """A target for ``url`` with the given request headers."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or 80
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {path} HTTP/1.1", f"Host: {parts.netloc}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        head = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        # h11 tracks our side of the exchange; chunked framing lets one event serve every
        # body length (the bytes h11 would write are never sent: ``head`` is).
        req = h11.Request(
            method="POST", target=path.encode(), headers=[("Host", parts.netloc), ("Transfer-Encoding", "chunked")]
        )
        return cls(host, port, head, req)


class _Conn:
    __slots__ = ("parser", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.parser = h11.Connection(h11.CLIENT, max_incomplete_event_size=_READ)


class LeanPool:
    """Idle keep-alive connections per (host, port), at most ``max_idle`` each."""

    def __init__(self, max_idle: int = 8) -> None:
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._max = max_idle

    async def post(self, target: Target, body: bytes, max_bytes: int) -> tuple[int, bool, bytes | None]:
        """POST ``body``; return (status, is_redirect, body), body None when over ``max_bytes``."""
        data = target.head + b"Content-Length: %d\r\n\r\n" % len(body) + body
        conn, reused = await self._acquire(target, data)
        ok = False
        try:
            parser = conn.parser
            parser.send(target.h11_request)
            parser.send(h11.EndOfMessage())
            try:
                event = await self._next_event(conn)
            except TransportError:
                if not reused or conn.parser.their_state is not h11.SEND_RESPONSE:
                    raise
                conn.writer.close()  # closed by the bot while idle: once more, on a new connection
                conn, _ = await self._acquire(target, data, fresh=True)
                conn.parser.send(target.h11_request)
                conn.parser.send(h11.EndOfMessage())
                event = await self._next_event(conn)
            while type(event) is h11.InformationalResponse:
                event = await self._next_event(conn)
            if type(event) is not h11.Response:
                raise TransportError(f"unexpected {type(event).__name__} instead of a response")
            status = event.status_code
            chunks: list[bytes] = []
            size = 0
            while True:
                event = await self._next_event(conn)
                if type(event) is h11.Data:
                    size += len(event.data)
                    if size > max_bytes:
                        return status, False, None  # cut off: the connection is closed below
                    chunks.append(bytes(event.data))
                elif type(event) is h11.EndOfMessage:
                    break
                else:
                    raise TransportError(f"unexpected {type(event).__name__} in a response body")
            ok = True
            return status, 300 <= status < 400, b"".join(chunks)
        finally:
            if (
                ok
                and conn.parser.our_state is h11.DONE
                and conn.parser.their_state is h11.DONE
                and not conn.parser.trailing_data[0]
            ):
                conn.parser.start_next_cycle()
                self._release((target.host, target.port), conn)
            else:
                conn.writer.close()

    async def _acquire(self, target: Target, data: bytes, fresh: bool = False) -> tuple[_Conn, bool]:
        """A connection with ``data`` written to it, and whether it was reused."""
        key = (target.host, target.port)
        idle = None if fresh else self._idle.get(key)
        while idle:
            conn = idle.pop()
            # unsolicited bytes while idle (CPython's StreamReader keeps them in _buffer)
            if conn.reader.at_eof() or conn.writer.is_closing() or getattr(conn.reader, "_buffer", None):
                conn.writer.close()
                continue
            conn.writer.write(data)
            return conn, True
        try:
            reader, writer = await asyncio.open_connection(target.host, target.port, limit=_READ)
        except OSError as exc:
            raise TransportError(f"cannot connect to {target.host}:{target.port}: {exc.strerror or exc}") from exc
        sock = writer.get_extra_info("socket")
        if sock is not None:  # no Nagle: a reply to a small request must not wait for an ACK
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Conn(reader, writer)
        writer.write(data)
        return conn, False

    @staticmethod
    async def _next_event(conn: _Conn) -> h11.Event:
        parser = conn.parser
        while True:
            try:
                event = parser.next_event()
            except h11.RemoteProtocolError as exc:
                raise TransportError(f"malformed HTTP response: {exc}") from exc
            if event is not h11.NEED_DATA and event is not h11.PAUSED:
                return event  # type: ignore[return-value]
            try:
                chunk = await conn.reader.read(_READ)
            except (ConnectionError, OSError) as exc:
                raise TransportError(f"{type(exc).__name__}: {exc}") from exc
            if not chunk and parser.their_state is h11.SEND_RESPONSE:
                raise TransportError("connection closed before a complete response")
            parser.receive_data(chunk)

    def _release(self, key: tuple[str, int], conn: _Conn) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < self._max:
            idle.append(conn)
        else:
            conn.writer.close()

    def close(self) -> None:
        """Close every idle connection."""
        for conns in self._idle.values():
            for conn in conns:
                conn.writer.close()
        self._idle.clear()
