"""Talking to bots: endpoints, the production client, posting, fault classification.

Foreign exceptions end here: ``post`` returns an ``Exchange`` whose ``fault`` is ``None``
or one of ``timeout``, ``error``, ``malformed`` (``illegal`` is judged by the match, which
knows the legal list). ``send_now`` puts a request on the wire at once when the transport
can (an idle keep-alive connection) and returns a ``Sent`` to await: no task per seat.

``BotClient`` is what production uses: plain http:// through the lean pool (its own, or
one a whole tournament shares, so connections are reused across matches), https://
through httpx, built on first use.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.bots.client.eventloop import clock_step
from referee.bots.client.pool import LeanPool
from referee.bots.client.transport import DeadlineExceeded, Reply, Target, Transport, TransportError
from referee.config.redacted import Secret
from referee.record import ERROR, MALFORMED, TIMEOUT

if TYPE_CHECKING:
    from referee.bots.client.https import HttpsTransport


@dataclass(frozen=True)
class Endpoint:
    """A bot by name, and where and how its requests go (``target``)."""

    name: str
    target: Target

    @property
    def url(self) -> str:
        """Where the bot answers."""
        return self.target.url

    @property
    def headers(self) -> dict[str, str]:
        """The request headers (a bearer token among them, if any)."""
        return self.target.headers

    @classmethod
    def make(cls, name: str, url: str, token: Secret | None) -> Endpoint:
        """An endpoint with the JSON and (if any) bearer-token headers."""
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token.reveal()}"
        return cls(name, Target.make(url, headers))


@dataclass(slots=True)
class Exchange:
    """One request and its outcome: a body, or a fault with its detail. ``late_ms`` is,
    for a timeout, how late the referee itself noticed it (its own lateness, not the bot's).
    ``public``: the detail fit to publish, where it differs (a transport error's, made
    where it failed: no address)."""

    body: bytes | None
    latency_ms: float
    fault: str | None = None
    detail: str = ""
    status: int | None = None
    late_ms: float = 0.0
    public: str | None = None

    @property
    def public_detail(self) -> str:
        """The fault's detail fit for a public page: no URL or address."""
        return self.detail if self.public is None else self.public

    def unanswered(self, window_ms: int) -> str:
        """Why a bot that never answered ``hello`` within ``window_ms`` is out, in a few
        public words, from this last try: "timed out after 15000 ms", "connection refused",
        "HTTP 500"."""
        return f"timed out after {window_ms} ms" if self.fault == TIMEOUT else self.public_detail


class BotClient(Transport):
    """The production client of one match (or one purpose): the lean pool for plain
    http:// (its own, or ``pool``, shared and left open), an ``HttpsTransport`` for the
    rest (built on first use)."""

    def __init__(self, max_connections: int, pool: LeanPool | None = None) -> None:
        self.max_connections = max_connections
        self.pool = pool if pool is not None else LeanPool(max_connections)
        self._owns_pool = pool is None
        self._https: HttpsTransport | None = None

    async def request(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST ``body`` to ``target`` through the transport its scheme needs."""
        if target.plain:
            return await self.pool.request(target, body, deadline, max_bytes)
        if self._https is None:
            from referee.bots.client.https import HttpsTransport  # httpx costs ~80 ms to import: https bots only

            self._https = HttpsTransport(self.max_connections)
        return await self._https.request(target, body, deadline, max_bytes)

    def send_now(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> asyncio.Future[Reply] | None:
        """The lean pool's ``send_now`` (``None`` for https://)."""
        return self.pool.send_now(target, body, deadline, max_bytes)

    async def aclose(self) -> None:
        """Close every connection (not those of a shared pool)."""
        if self._owns_pool:
            self.pool.close()
        if self._https is not None:
            await self._https.aclose()


def new_client(max_connections: int, pool: LeanPool | None = None) -> BotClient:
    """A small client for one match (or one purpose), on a shared lean ``pool`` if given."""
    return BotClient(max_connections, pool)


async def post(client: Transport, endpoint: Endpoint, body: bytes, deadline_ms: float, max_bytes: int) -> Exchange:
    """POST ``body`` and read the reply within ``deadline_ms``, at most ``max_bytes``."""
    started = time.perf_counter()
    deadline = _deadline(deadline_ms)
    try:
        reply = await client.request(endpoint.target, body, deadline, max_bytes)
    except (DeadlineExceeded, TransportError) as exc:
        return _failed(exc, started, deadline_ms)
    return _outcome(reply, started, max_bytes)


class Sent:
    """A request ``send_now`` put on the wire; ``result`` awaits its ``Exchange``
    (exactly what ``post`` would have returned)."""

    __slots__ = ("deadline_ms", "fut", "max_bytes", "started")

    def __init__(self, fut: asyncio.Future[Reply], started: float, deadline_ms: float, max_bytes: int) -> None:
        self.fut, self.started, self.deadline_ms, self.max_bytes = fut, started, deadline_ms, max_bytes

    async def result(self) -> Exchange:
        """The exchange, once its reply is in (or its deadline passed)."""
        if not self.fut.done():
            with contextlib.suppress(Exception):  # exchange_now reads it; a cancellation goes on
                await self.fut
        return self.exchange_now()

    def exchange_now(self) -> Exchange:
        """The exchange, its reply being in (the future done): what ``result`` returns,
        without a coroutine."""
        fut = self.fut
        exc = fut.exception()
        if exc is None:
            return _outcome(fut.result(), self.started, self.max_bytes)
        if isinstance(exc, DeadlineExceeded | TransportError):
            return _failed(exc, self.started, self.deadline_ms)
        raise exc

    def abandon(self) -> None:
        """Nobody will await this exchange (the match was cancelled): a lean connection is
        closed when its bytes or its deadline come."""
        fut = self.fut
        if not fut.done():
            fut.cancel()
        elif not fut.cancelled():
            fut.exception()  # retrieved: no "exception never retrieved" warning


def send_now(client: Transport, endpoint: Endpoint, body: bytes, deadline_ms: float, max_bytes: int) -> Sent | None:
    """Send ``body`` at once if ``client`` can (``Transport.send_now``) and return the
    ``Sent`` to await; ``None`` when it cannot (no idle connection, https://): use ``post``."""
    started = time.perf_counter()
    deadline = _deadline(deadline_ms)
    fut = client.send_now(endpoint.target, body, deadline, max_bytes)
    if fut is None:
        return None
    return Sent(fut, started, deadline_ms, max_bytes)


def _deadline(deadline_ms: float) -> float:
    """The event-loop time ``deadline_ms`` from now (never early on a coarse clock: ``eventloop.clock_step``)."""
    loop = asyncio.get_running_loop()
    return loop.time() + deadline_ms / 1000.0 + clock_step(loop)


def _failed(exc: DeadlineExceeded | TransportError, started: float, deadline_ms: float) -> Exchange:
    """The fault of an exchange that failed, timed when it failed (not when the match
    got to its seat)."""
    ms = (exc.done_at - started) * 1000.0
    if isinstance(exc, DeadlineExceeded):
        return Exchange(None, ms, TIMEOUT, f"no complete reply within {deadline_ms:.0f} ms", late_ms=exc.late_ms)
    return Exchange(None, ms, ERROR, str(exc), public=exc.public)


def _outcome(reply: Reply, started: float, max_bytes: int) -> Exchange:
    """What a complete HTTP reply amounts to: its body, or an error/malformed fault."""
    ms = (reply.done_at - started) * 1000.0
    status = reply.status
    if 200 <= status < 300:
        if reply.body is None:
            return Exchange(None, ms, MALFORMED, f"body over the cap of {max_bytes} bytes (cut off)", status)
        return Exchange(reply.body, ms, status=status)
    if 300 <= status < 400:
        return Exchange(None, ms, ERROR, f"HTTP {status} redirect (not followed)", status)
    return Exchange(None, ms, ERROR, f"HTTP {status}", status)
