"""The transport seam: how one request reaches a bot and its reply comes back.

``Transport`` is the one interface every client implements: the lean keep-alive pool
(``pool.py``, plain http://), httpx (``https.py``), the production router between the two
(``wire.BotClient``), the scripted transport of the tests (``scripted.py``) and check-bot's
recorder. ``request`` sends one POST and returns a ``Reply`` by an absolute deadline, or
raises ``TransportError`` (the exchange failed) or ``DeadlineExceeded``. This module
imports no implementation.

The clock: a reply's time is taken when its last byte is parsed (``Reply.done_at``), not
when the awaiting task resumes; ``DeadlineExceeded.late_ms`` is the referee's own
lateness only when its deadline timer itself fired late.
"""

from __future__ import annotations

import abc
import asyncio
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Self
from urllib.parse import urlsplit


class TransportError(Exception):
    """The exchange failed below HTTP: connect, reset, or a malformed response;
    ``done_at`` is the ``time.perf_counter()`` at which it failed; ``public`` the message
    fit to publish where the message itself names an address (else None)."""

    def __init__(self, *args: object, public: str | None = None) -> None:
        super().__init__(*args)
        self.done_at = time.perf_counter()
        self.public = public


class DeadlineExceeded(Exception):
    """No complete reply by the deadline; ``late_ms`` is how late the referee's own
    timer fired (0 when the deadline was noticed while parsing the bot's own bytes)."""

    def __init__(self, late_ms: float) -> None:
        super().__init__(f"deadline passed (noticed {late_ms:.1f} ms late)")
        self.late_ms = late_ms
        self.done_at = time.perf_counter()

    @classmethod
    def noticed_now(cls, deadline: float) -> DeadlineExceeded:
        """The error for ``deadline`` (event-loop time), noticed by a timer firing now."""
        return cls(max(0.0, (asyncio.get_running_loop().time() - deadline) * 1000.0))


@dataclass(slots=True)
class Reply:
    """A reply: status, body (``None`` when cut off at the size cap), and the
    ``time.perf_counter()`` at which its last byte was parsed."""

    status: int
    body: bytes | None
    done_at: float


@dataclass(frozen=True)
class Target:
    """Where and how to POST a bot's requests: its URL and request headers (never shown
    by ``repr``: they may hold a bearer token). For a plain http:// URL (``plain``), also
    what the lean pool writes by hand: host, port, path, and the request head without
    Content-Length."""

    url: str
    headers: dict[str, str] = field(repr=False)
    plain: bool = False
    host: str = ""
    port: int = 0
    path: bytes = b""
    netloc: str = ""
    head: bytes = field(default=b"", repr=False)
    # a managed bot in a network of its own: how to get a socket connected to it (bots/cage/netns.py)
    connect: Callable[[], Awaitable[socket.socket]] | None = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        return f"Target({self.url!r})"

    @classmethod
    def make(cls, url: str, headers: dict[str, str]) -> Target:
        """A target for ``url`` with the given request headers."""
        if not url.startswith("http://"):
            return cls(url, headers)
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"POST {path} HTTP/1.1", f"Host: {parts.netloc}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        head = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        return cls(url, headers, True, parts.hostname or "", parts.port or 80, path.encode(), parts.netloc, head)


class Transport(abc.ABC):
    """What sends one request to a bot (see the module doc); usable as ``async with``."""

    @abc.abstractmethod
    async def request(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST ``body`` to ``target``; the reply by ``deadline`` (event-loop time), its
        body ``None`` past ``max_bytes``. Raises ``TransportError`` or ``DeadlineExceeded``."""

    def send_now(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> asyncio.Future[Reply] | None:
        """Put the request on the wire at once, without a coroutine, and return the future
        of its reply (as ``request`` would end); ``None`` when this transport cannot, now."""
        return None

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Close every connection."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
