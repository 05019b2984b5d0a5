"""A lean HTTP/1.1 keep-alive transport for httpx, on asyncio streams.

Why: on a 2-core VM, httpx's default transport (httpcore over anyio) spent ~450 µs of
CPU per loopback request, against ~95 µs for the httpx client layer itself and ~40 µs
for a bare asyncio-streams round trip (``python -m referee.bench`` shows the figures).
The referee must never be the bottleneck, so plain ``http://`` bot URLs go through
this transport; ``https://`` URLs keep httpx's own transport.

Requests are written by hand (the referee only ever POSTs small JSON bodies with a
Content-Length); responses are parsed by h11, which handles Content-Length, chunked
and close-delimited bodies. A connection goes back to the pool only after its
response was read to the end; one that was cancelled (a deadline) or broken is closed.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import h11
import httpx

_READ = 65536


class _Conn:
    __slots__ = ("reader", "writer", "parser")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.parser = h11.Connection(h11.CLIENT)

    def close(self) -> None:
        self.writer.close()


class _Body(httpx.AsyncByteStream):
    """The response body, read lazily; returns the connection to the pool when done."""

    def __init__(self, transport: LeanTransport, key: tuple[str, int], conn: _Conn, first: list[bytes]) -> None:
        self._t = transport
        self._key = key
        self._conn = conn
        self._first = first
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._first:
            yield chunk
        self._first = []
        conn = self._conn
        while True:
            event = await self._t._next_event(conn)
            if type(event) is h11.Data:
                yield bytes(event.data)
            elif type(event) is h11.EndOfMessage:
                self._done = True
                return

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None  # type: ignore[assignment]
        if conn is None:
            return
        if self._done and conn.parser.our_state is h11.DONE and conn.parser.their_state is h11.DONE:
            conn.parser.start_next_cycle()
            self._t._release(self._key, conn)
        else:
            conn.close()


class LeanTransport(httpx.AsyncBaseTransport):
    """Keep-alive HTTP/1.1 over asyncio streams, TCP_NODELAY, at most ``max_connections``
    idle connections kept per host."""

    def __init__(self, max_connections: int = 8) -> None:
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._max = max_connections

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        host = url.host
        port = url.port or 80
        key = (host, port)
        body = request.content
        head = [f"{request.method} {url.raw_path.decode('ascii')} HTTP/1.1\r\nHost: {host}:{port}\r\n"]
        for name, value in request.headers.items():
            if name not in ("host", "content-length", "transfer-encoding", "connection"):
                head.append(f"{name}: {value}\r\n")
        head.append(f"Content-Length: {len(body)}\r\n\r\n")
        data = "".join(head).encode("latin-1") + body

        conn = await self._acquire(key, data)
        try:
            conn.parser.send(h11.Request(method=request.method, target=url.raw_path,
                                         headers=[("Host", f"{host}:{port}"), ("Content-Length", str(len(body)))]))
            conn.parser.send(h11.Data(data=body))
            conn.parser.send(h11.EndOfMessage())
            event = await self._next_event(conn)
            while type(event) is h11.InformationalResponse:
                event = await self._next_event(conn)
            if type(event) is not h11.Response:
                raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} instead of a response")
        except BaseException:
            conn.close()
            raise
        return httpx.Response(
            status_code=event.status_code,
            headers=[(k, v) for k, v in event.headers],
            stream=_Body(self, key, conn, []),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": event.reason},
            request=request,
        )

    async def _acquire(self, key: tuple[str, int], data: bytes) -> _Conn:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.reader.at_eof() or conn.writer.is_closing():
                conn.close()
                continue
            try:
                conn.writer.write(data)
                return conn
            except (ConnectionError, OSError):
                conn.close()
        try:
            reader, writer = await asyncio.open_connection(key[0], key[1], limit=_READ)
        except OSError as exc:
            raise httpx.ConnectError(f"{exc.strerror or exc} ({key[0]}:{key[1]})") from exc
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _Conn(reader, writer)
        writer.write(data)
        return conn

    async def _next_event(self, conn: _Conn) -> h11.Event:
        parser = conn.parser
        while True:
            try:
                event = parser.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            try:
                chunk = await conn.reader.read(_READ)
            except (ConnectionError, OSError) as exc:
                raise httpx.ReadError(f"{type(exc).__name__}: {exc}") from exc
            if not chunk and parser.their_state is h11.SEND_RESPONSE:
                raise httpx.RemoteProtocolError("connection closed before a response")
            parser.receive_data(chunk)

    def _release(self, key: tuple[str, int], conn: _Conn) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < self._max:
            idle.append(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()
