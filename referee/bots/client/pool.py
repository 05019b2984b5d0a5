"""The lean keep-alive pool: plain http:// requests on ``asyncio.Protocol`` connections.

It exists so that the referee is never the bottleneck: a request costs a fraction of the
CPU httpx needs (``make bench`` prints the figures), one future and an entry in the pool's
deadline queue, no task. Requests are written by hand (a small JSON POST with a
Content-Length). A reply with an ordinary head (``HTTP/1.1``, not 1xx, one Content-Length,
no Transfer-Encoding) is read by the fast path; anything else by h11, with the same
outcome. Both paths hold the caps: the size cap, ``MAX_HEAD_BYTES``, ``MAX_INFORMATIONAL``,
``MAX_CHUNKS``, and a yield to the loop after ``SLICE_S`` of parsing (then the deadline is
checked again). A connection goes back to the pool only after a reply read to its end with
nothing after it (a bot must not answer the next request in advance); an idle one that
receives anything is closed. A request on a reused connection that the bot had closed
meanwhile (no byte of a reply came back) is sent once more on a fresh one, as browsers do.
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import socket
import time
from typing import cast

import h11

from referee.bots.client.transport import DeadlineExceeded, Reply, Target, Transport, TransportError

MAX_HEAD_BYTES = 16 * 1024  # status line and headers of one response
MAX_INFORMATIONAL = 8  # 1xx responses before the final one
MAX_CHUNKS = 1024  # chunks of a chunked body
SLICE_S = 0.0003  # parsing work before yielding to the event loop

# An ordinary head in one match: the status line, then header lines as h11 accepts them.
# A header is name, colon, optional spaces, a value, optional spaces, where a value is
# visible characters with runs of spaces or tabs between: any mix of spaces, tabs and
# visible characters after the colon is exactly that, so one character class says it
# (linear, and cheaper than the grammar's nested form).
_HEAD = re.compile(
    rb"HTTP/1\.1 ([2-5][0-9][0-9])(?: [\t !-~\x80-\xff]*)?(?:\r\n[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t !-~\x80-\xff]*)*"
)

# Heads read before, and what they said: a bot's heads repeat (only the Date and the
# Content-Length change), so most are one dict lookup. Bounded: cleared when full.
_HEADS_SEEN: dict[bytes, tuple[int, int, bool]] = {}
_HEADS_KEPT = 512


class _Conn(asyncio.Protocol):
    """One keep-alive connection and the reply it is reading, if any."""

    def __init__(self, pool: LeanPool, key: tuple[str, int]) -> None:
        self.pool, self.key = pool, key
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()
        self.closed = False
        self.reusable = False
        # the exchange under way
        self.waiter: asyncio.Future[Reply] | None = None
        self.timer: asyncio.TimerHandle | None = None  # a timer of its own, for a deadline out of order
        self.gen = 0  # exchanges started: tells the pool's deadline queue which entry is live
        self.deadline = 0.0
        self.max_bytes = 0
        self.buf = bytearray()
        self.got_bytes = False
        self.head_end = -1
        self.status = 0
        self.length = 0
        self.keep_alive = True
        self.slow: h11.Connection | None = None  # the h11 fallback, once switched to it
        self.target: Target | None = None
        self.resend: bytes | None = None  # the body, to send again after a keep-alive close race
        self.pending = False  # parsing paused after a slice, to go on at the next loop turn
        self.informational = 0
        self.chunks = 0
        self.body_parts: list[bytes] = []
        self.body_size = 0

    # -- asyncio.Protocol ------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport; no Nagle (a reply to a small request must not wait for an ACK)."""
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is one, unregistered with the ABC
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        """Bytes from the bot: parse them, or drop the connection when nobody asked."""
        if self.waiter is None or self.waiter.done():
            self._drop()  # unrequested bytes: the connection is never reused
            return
        self.got_bytes = True
        if self.slow is not None:
            self.slow.receive_data(data)
            self._parse_slow()
            return
        self.buf += data
        self._parse_fast(len(data))

    def eof_received(self) -> bool:
        """The bot closed its side: a close-delimited body ends, anything else fails."""
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            slow = self.slow
            if slow is not None and slow.their_state is not h11.SEND_RESPONSE:
                slow.receive_data(b"")  # a close-delimited body ends here
                self._parse_slow()
            elif not self.got_bytes:
                self._fail(Retryable("connection closed before a complete response"))
            else:
                self._fail(TransportError("connection closed before a complete response"))
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone: fail the exchange under way, if any."""
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            detail = f"{type(exc).__name__}: {exc}" if exc else "connection closed before a complete response"
            self._fail(Retryable(detail) if not self.got_bytes else TransportError(detail))

    # -- one exchange -------------------------------------------------------------
    def start(
        self, target: Target, data: bytes, deadline: float, max_bytes: int, resend: bytes | None = None
    ) -> asyncio.Future[Reply]:
        """Send ``data`` and return the future of its reply. With ``resend`` (the body),
        a close before any byte of a reply sends it again on a fresh connection for the
        same future, at once (``LeanPool.send_now``)."""
        self.waiter = fut = self.loop.create_future()
        self.resend = resend
        self.target, self.deadline, self.max_bytes = target, deadline, max_bytes
        self.buf.clear()
        self.got_bytes = False
        self.head_end = -1
        self.keep_alive = True
        self.slow = None
        self.informational = self.chunks = self.body_size = 0
        self.body_parts = []
        self.reusable = False
        self.gen += 1
        if not self.pool._deadlines.add(self, deadline):
            self.timer = self.loop.call_at(deadline, self._on_deadline)
        assert self.transport is not None
        self.transport.write(data)
        return fut

    def _on_deadline(self) -> None:
        self.timer = None
        if self.waiter is None or self.waiter.done():
            return
        self._fail(DeadlineExceeded.noticed_now(self.deadline))

    def _fail(self, exc: Exception) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            if type(exc) is Retryable and self.resend is not None and self.target is not None:
                self.pool._resend(self.target, self.resend, self.deadline, self.max_bytes, waiter)
            else:
                waiter.set_exception(exc)
        self._finish()
        self._drop()

    def _succeed(self, body: bytes | None, reusable: bool) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(self.status, body, time.perf_counter()))
        self._finish()
        if reusable and self.keep_alive and not self.closed:
            self.reusable = True
            self.pool._put_idle(self)  # free for the next request at once, whoever awaits this one
        else:
            self._drop()

    def _stop_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _finish(self) -> None:
        self._stop_timer()
        self.waiter = None
        self.slow = None
        self.buf.clear()
        self.body_parts = []

    def _drop(self) -> None:
        self._stop_timer()
        self.reusable = False
        self.closed = True
        self.waiter = None
        if self.transport is not None:
            self.transport.close()

    def _parse_fast(self, new: int) -> None:
        buf = self.buf
        if self.head_end < 0:
            end = buf.find(b"\r\n\r\n", max(0, len(buf) - new - 3))  # a head trickled byte by byte stays linear
            if end < 0:
                if len(buf) > MAX_HEAD_BYTES:
                    self._fail(TransportError(f"malformed HTTP response: headers over {MAX_HEAD_BYTES} bytes"))
                return
            if end > MAX_HEAD_BYTES:
                self._fail(TransportError(f"malformed HTTP response: headers over {MAX_HEAD_BYTES} bytes"))
                return
            if not self._read_head(bytes(buf[:end])):
                self._switch_to_h11()
                self._parse_slow()
                return
            self.head_end = end + 4
            if self.length > self.max_bytes:
                self._succeed(None, reusable=False)  # cut off: never read, never reused
                return
        have = len(buf) - self.head_end
        if have >= self.length:
            body = bytes(buf[self.head_end : self.head_end + self.length])
            self._succeed(body, reusable=have == self.length)

    def _read_head(self, head: bytes) -> bool:
        """Status and Content-Length from an ordinary head; False when h11 must judge it."""
        known = _HEADS_SEEN.get(head)
        if known is not None:
            self.status, self.length, self.keep_alive = known
            return True
        m = _HEAD.fullmatch(head)
        if m is None:
            return False
        low = head.lower()
        at = low.find(b"\r\ncontent-length:")
        if at < 0 or b"\r\ntransfer-encoding:" in low or low.find(b"\r\ncontent-length:", at + 17) >= 0:
            return False
        value = _line_value(low, at + 17)
        if not value.isdigit() or len(value) > 18:
            return False
        status = int(m.group(1))
        if status in (204, 304):  # h11 reads no body for these
            return False
        keep_alive = True
        at = low.find(b"\r\nconnection:")
        while at >= 0:
            if b"close" in _line_value(low, at + 13):
                keep_alive = False
            at = low.find(b"\r\nconnection:", at + 13)
        self.status, self.length, self.keep_alive = status, int(value), keep_alive
        if len(_HEADS_SEEN) >= _HEADS_KEPT:
            _HEADS_SEEN.clear()
        _HEADS_SEEN[head] = (status, self.length, keep_alive)
        return True

    def _switch_to_h11(self) -> None:
        """Hand the reply read so far to h11, which reads the rest of it."""
        assert self.target is not None
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        # chunked framing lets one event serve every body length (h11's bytes are never sent)
        headers = [("Host", self.target.netloc), ("Transfer-Encoding", "chunked")]
        conn.send(h11.Request(method="POST", target=self.target.path, headers=headers))
        conn.send(h11.EndOfMessage())
        conn.receive_data(bytes(self.buf))
        self.buf.clear()
        self.slow = conn
        self.status = 0

    def _parse_slow(self) -> None:
        """Read h11's events for at most ``SLICE_S``, then yield to the loop."""
        conn = self.slow
        if conn is None or self.pending:
            return
        started = time.perf_counter()
        n = 0
        while True:
            n += 1
            if n % 32 == 0 and time.perf_counter() - started > SLICE_S:
                self.pending = True
                if self.transport is not None:
                    self.transport.pause_reading()
                self.loop.call_soon(self._resume)
                return
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                self._fail(TransportError(f"malformed HTTP response: {exc}", public="malformed HTTP response"))
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                if event is h11.NEED_DATA and conn.their_state is h11.SEND_RESPONSE and self.closed:
                    self._fail(TransportError("connection closed before a complete response"))
                return
            kind = type(event)
            if (kind is h11.Response or kind is h11.InformationalResponse) and _head_size(event) > MAX_HEAD_BYTES:
                self._fail(TransportError(f"malformed HTTP response: headers over {MAX_HEAD_BYTES} bytes"))
                return
            if kind is h11.InformationalResponse:
                self.informational += 1
                if self.informational > MAX_INFORMATIONAL:
                    self._fail(TransportError(f"more than {MAX_INFORMATIONAL} informational (1xx) responses"))
                    return
            elif kind is h11.Response:
                assert isinstance(event, h11.Response)
                self.status = event.status_code
                declared = next((v for k, v in event.headers if k == b"content-length"), None)
                if declared is not None and int(declared) > self.max_bytes and self.status not in (204, 304):
                    self._succeed(None, reusable=False)  # as the fast path: over the cap, never read
                    return
            elif kind is h11.Data:
                assert isinstance(event, h11.Data)
                if event.chunk_start:
                    self.chunks += 1
                    if self.chunks > MAX_CHUNKS:
                        self._fail(TransportError(f"more than {MAX_CHUNKS} chunks in one response"))
                        return
                self.body_size += len(event.data)
                if self.body_size > self.max_bytes:
                    self._succeed(None, reusable=False)
                    return
                self.body_parts.append(bytes(event.data))
            elif kind is h11.EndOfMessage:
                reusable = conn.our_state is h11.DONE and conn.their_state is h11.DONE and not conn.trailing_data[0]
                self._succeed(b"".join(self.body_parts), reusable=reusable)
                return
            else:
                self._fail(TransportError(f"unexpected {kind.__name__} in a response"))
                return

    def _resume(self) -> None:
        self.pending = False
        if self.waiter is None or self.waiter.done():
            return
        if self.loop.time() >= self.deadline:
            self._fail(DeadlineExceeded(0.0))  # noticed inside the bot's own exchange
            return
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()
        self._parse_slow()


def _line_value(head: bytes, start: int) -> bytes:
    """A header's value: from ``start`` to the end of its line, without spaces and tabs around."""
    end = head.find(b"\r\n", start)
    return head[start : end if end >= 0 else len(head)].strip(b" \t")


def _head_size(event: object) -> int:
    """Bytes of a response head, as h11 parsed it."""
    assert isinstance(event, (h11.Response, h11.InformationalResponse))
    return sum(len(k) + len(v) + 4 for k, v in event.headers) + len(event.reason) + 15


class Retryable(TransportError):
    """The connection closed before any byte of a reply (maybe a keep-alive close race):
    the request may be sent once more on a fresh connection (``LeanPool._post_fresh``)."""


class _Deadlines:
    """The deadlines of a pool's exchanges in the order they started, and one loop timer
    for the earliest one still waiting: a request costs a deque entry, not a timer of its
    own (asyncio keeps timers in a heap compared in Python, and a cancelled one stays in
    it). Deadlines come in order when every request has the same time to answer; one
    earlier than the last queued gets a timer of its own (``add`` returns False). The
    timer outlives the pool's ``close``: an exchange still under way ends at its deadline."""

    def __init__(self) -> None:
        self.queue: collections.deque[tuple[float, _Conn, int]] = collections.deque()
        self.timer: asyncio.TimerHandle | None = None

    def add(self, conn: _Conn, deadline: float) -> bool:
        """Queue ``conn``'s exchange under way; False when its deadline is out of order."""
        queue = self.queue
        if queue and deadline < queue[-1][0]:
            return False
        queue.append((deadline, conn, conn.gen))
        if self.timer is None:
            self.timer = conn.loop.call_at(deadline, self._fire)
        return True

    def _fire(self) -> None:
        """End the exchanges whose deadline came; wait for the next one still waiting."""
        self.timer = None
        queue = self.queue
        while queue:
            deadline, conn, gen = queue[0]
            if conn.gen != gen or conn.waiter is None or conn.waiter.done():
                queue.popleft()  # ended before its deadline
                continue
            if deadline - conn.loop.time() > 1e-6:
                self.timer = conn.loop.call_at(deadline, self._fire)
                return
            queue.popleft()
            conn._on_deadline()


class LeanPool(Transport):
    """Idle keep-alive connections per (host, port), at most ``max_idle`` each; plain
    http:// only. One pool may serve a whole tournament (connections reused across
    matches); a connection goes back to it the moment its reply was read to the end."""

    def __init__(self, max_idle: int = 8) -> None:
        self._idle: dict[tuple[str, int], list[_Conn]] = {}
        self._max = max_idle
        self._resending: set[asyncio.Task[None]] = set()
        self._deadlines = _Deadlines()
        self.opened: collections.Counter[tuple[str, int]] = collections.Counter()  # connections made, per address

    async def request(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST ``body`` to a plain http:// ``target``; the reply by ``deadline``."""
        if not target.plain:
            raise TransportError(f"not a plain http:// URL: {target.url}", public="not a plain http:// URL")
        conn = self._idle_conn((target.host, target.port))
        if conn is not None:
            try:
                return await _wait(conn, conn.start(target, _request(target, body), deadline, max_bytes))
            except Retryable:
                pass  # closed by the bot while idle: once more, on a new connection
        return await self._post_fresh(target, body, deadline, max_bytes)

    def send_now(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> asyncio.Future[Reply] | None:
        """Send ``body`` on an idle connection and return the future of its reply (no task,
        no coroutine); ``None`` when no connection is idle. A connection the bot closed
        while idle is replaced at once, for the same future."""
        conn = self._idle_conn((target.host, target.port)) if target.plain else None
        if conn is None:
            return None
        return conn.start(target, _request(target, body), deadline, max_bytes, resend=body)

    async def aclose(self) -> None:
        """Close every idle connection."""
        self.close()

    def close(self) -> None:
        """Close every idle connection (an exchange under way ends on its own)."""
        for conns in self._idle.values():
            for conn in conns:
                conn._drop()
        self._idle.clear()

    def _resend(
        self, target: Target, body: bytes, deadline: float, max_bytes: int, waiter: asyncio.Future[Reply]
    ) -> None:
        """Send ``body`` again on a fresh connection; its outcome settles ``waiter``."""

        async def again() -> None:
            try:
                reply = await self._post_fresh(target, body, deadline, max_bytes)
            except (TransportError, DeadlineExceeded) as exc:
                if not waiter.done():
                    waiter.set_exception(exc)
                return
            if not waiter.done():
                waiter.set_result(reply)

        task = asyncio.ensure_future(again())
        self._resending.add(task)
        task.add_done_callback(self._resending.discard)

    async def _post_fresh(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST ``body`` to ``target`` on a new connection."""
        conn = await self._connect(target, deadline)
        try:
            return await _wait(conn, conn.start(target, _request(target, body), deadline, max_bytes))
        except Retryable as exc:
            raise TransportError(str(exc)) from None

    def _put_idle(self, conn: _Conn) -> None:
        idle = self._idle.get(conn.key)
        if idle is None:
            idle = self._idle[conn.key] = []
        if len(idle) < self._max:
            idle.append(conn)
        else:
            conn._drop()

    def _idle_conn(self, key: tuple[str, int]) -> _Conn | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.reusable and not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn
            conn._drop()
        return None

    async def _connect(self, target: Target, deadline: float) -> _Conn:
        key = (target.host, target.port)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(deadline):
                if target.connect is not None:
                    sock = await target.connect()
                    transport, conn = await loop.create_connection(lambda: _Conn(self, key), sock=sock)
                else:
                    transport, conn = await loop.create_connection(lambda: _Conn(self, key), target.host, target.port)
        except TimeoutError:
            raise DeadlineExceeded.noticed_now(deadline) from None
        except OSError as exc:
            why = _os_reason(exc)
            raise TransportError(
                f"cannot connect to {target.host}:{target.port}: {why}",
                public=why.lower() if exc.errno else "cannot connect",
            ) from exc
        self.opened[key] += 1
        if conn.transport is None:  # uvloop calls connection_made at its next turn, after this returns
            conn.connection_made(transport)
        return conn


def _os_reason(exc: OSError) -> str:
    """Why a connection failed, in the same words on every event loop (asyncio says "Connect
    call failed ('127.0.0.1', 8001)" where uvloop says "Connection refused"): the system's
    text for the error number where there is one."""
    if exc.errno is not None and exc.errno > 0:
        return os.strerror(exc.errno)
    return str(exc.strerror or exc)


def _request(target: Target, body: bytes) -> bytes:
    return b"%bContent-Length: %d\r\n\r\n%b" % (target.head, len(body), body)


async def _wait(conn: _Conn, fut: asyncio.Future[Reply]) -> Reply:
    """The reply of ``fut``; a cancelled wait drops the connection (its reply is nobody's)."""
    try:
        return await fut
    except asyncio.CancelledError:
        conn._drop()
        raise
