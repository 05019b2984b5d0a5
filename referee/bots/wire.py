"""Talking to bots over HTTP: deadlines, the size cap and fault classification.

Foreign exceptions (httpx, h11, asyncio) end here: every call returns an ``Exchange``
whose ``fault`` is ``None`` or one of ``timeout``, ``error``, ``malformed``.
(``illegal`` is judged by the match, which knows the legal list.)

Every client is a ``transport.Transport``. Measured on a 2-core loopback machine, and
followed here:
- a POST through httpx costs the referee 250-500 µs of CPU, through the lean pool of
  ``transport.py`` ~25 µs: ``BotClient`` (what production uses) sends plain http:// to
  the lean pool and only https:// through httpx (``HttpxTransport``);
- one shared httpx ``AsyncClient`` degrades quadratically above ~12 requests in
  flight, so each match gets a small client of its own (``new_client``); the lean pool
  has no such cost, so a tournament shares one (``new_client(..., pool=...)``) and
  reuses its keep-alive connections across matches;
- ``send_now`` puts a request on the wire at once on an idle connection and returns a
  ``Sent`` to await: no coroutine chain, no task per seat;
- building an httpx client builds an SSL context (~19 ms): one context is shared, and
  the httpx client is only built when an https bot needs it;
- httpx timeouts are per socket read, so its deadline is enforced around the whole
  exchange with ``asyncio.timeout``, from sending to the last byte.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from dataclasses import dataclass, field

import httpx

from referee.bots.transport import DeadlineExceeded, LeanPool, Reply, Target, Transport, TransportError, drop_unawaited
from referee.config.redacted import Secret
from referee.record import ERROR, MALFORMED, TIMEOUT

_SSL: ssl.SSLContext | None = None
# httpx writes headers and body in two sends; with Nagle's algorithm on, the body
# waits for the ACK of the headers.
_SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


@dataclass(frozen=True)
class Endpoint:
    """Where a bot answers, and the headers it gets (never shown by ``repr``: they may
    hold a bearer token)."""

    name: str
    url: str
    headers: dict[str, str] = field(repr=False)
    target: Target | None = field(default=None, compare=False, repr=False)

    @classmethod
    def make(cls, name: str, url: str, token: Secret | None) -> Endpoint:
        """An endpoint with the JSON and (if any) bearer-token headers."""
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token.reveal()}"
        target = Target.make(url, headers) if url.startswith("http://") else None
        return cls(name, url, headers, target)


@dataclass(slots=True)
class Exchange:
    """One request and its outcome: a body, or a fault with its detail. ``late_ms`` is,
    for a timeout, how late the referee itself noticed it (its own lateness, not the bot's)."""

    body: bytes | None
    latency_ms: float
    fault: str | None = None
    detail: str = ""
    status: int | None = None
    late_ms: float = 0.0


class HttpxTransport:
    """https:// bots through httpx: no redirects followed, no proxies read from the
    environment, no timeouts but the deadline."""

    def __init__(self, max_connections: int) -> None:
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        tls = httpx.AsyncHTTPTransport(
            verify=shared_ssl_context(), limits=limits, trust_env=False, socket_options=_SOCKET_OPTIONS
        )
        self.client = httpx.AsyncClient(
            transport=tls, timeout=httpx.Timeout(None), follow_redirects=False, trust_env=False
        )

    async def request(self, endpoint: Endpoint, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST through httpx; the reply by ``deadline`` (event-loop time)."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(deadline):
                status, data = await self._post(endpoint, body, max_bytes)
        except TimeoutError:
            raise DeadlineExceeded(max(0.0, (loop.time() - deadline) * 1000.0)) from None
        except httpx.HTTPError as exc:
            raise TransportError(f"{type(exc).__name__}: {exc or 'connection failed'}") from exc
        return Reply(status, data, time.perf_counter())

    async def _post(self, endpoint: Endpoint, body: bytes, max_bytes: int) -> tuple[int, bytes | None]:
        async with self.client.stream("POST", endpoint.url, content=body, headers=endpoint.headers) as resp:
            status = resp.status_code
            if 300 <= status < 400:
                return status, None
            declared = resp.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                return status, None
            chunks: list[bytes] = []
            size = 0
            # raw bytes: a compressed body is never inflated past the cap
            async for chunk in resp.aiter_raw():
                size += len(chunk)
                if size > max_bytes:
                    return status, None
                chunks.append(chunk)
            return status, b"".join(chunks)

    async def aclose(self) -> None:
        """Close every connection."""
        await self.client.aclose()


class BotClient:
    """The production client of one match (or one purpose): the lean pool for http://
    (its own, or ``pool``, shared and left open), an ``HttpxTransport`` for https://
    (built on first use)."""

    def __init__(self, max_connections: int, pool: LeanPool | None = None) -> None:
        self.max_connections = max_connections
        self.pool = pool if pool is not None else LeanPool(max_connections)
        self._owns_pool = pool is None
        self._https: HttpxTransport | None = None

    async def request(self, endpoint: Endpoint, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST ``body`` to ``endpoint`` through the transport its scheme needs."""
        if endpoint.target is not None:
            return await self.pool.request(endpoint, body, deadline, max_bytes)
        if self._https is None:
            self._https = HttpxTransport(self.max_connections)
        return await self._https.request(endpoint, body, deadline, max_bytes)

    async def aclose(self) -> None:
        """Close every connection (not those of a shared pool)."""
        if self._owns_pool:
            self.pool.close()
        if self._https is not None:
            await self._https.aclose()

    async def __aenter__(self) -> BotClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def shared_ssl_context() -> ssl.SSLContext:
    """The one SSL context every client uses."""
    global _SSL
    if _SSL is None:
        _SSL = httpx.create_ssl_context()
    return _SSL


def new_client(max_connections: int, pool: LeanPool | None = None) -> BotClient:
    """A small client for one match (or one purpose), on a shared lean ``pool`` if given."""
    return BotClient(max_connections, pool)


async def post(client: Transport, endpoint: Endpoint, body: bytes, deadline_ms: float, max_bytes: int) -> Exchange:
    """POST ``body`` and read the reply within ``deadline_ms``, at most ``max_bytes``."""
    started = time.perf_counter()
    deadline = asyncio.get_running_loop().time() + deadline_ms / 1000.0
    try:
        reply = await client.request(endpoint, body, deadline, max_bytes)
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
        """Nobody will await this exchange (the match was cancelled)."""
        drop_unawaited(self.fut)


def send_now(client: Transport, endpoint: Endpoint, body: bytes, deadline_ms: float, max_bytes: int) -> Sent | None:
    """Send ``body`` at once on an idle keep-alive connection of ``client`` (a
    ``BotClient`` or ``LeanPool``) and return the ``Sent`` to await; ``None`` when that
    is not possible (no idle connection, https://, another transport): use ``post``."""
    target = endpoint.target
    if target is None:
        return None
    if type(client) is BotClient:
        pool = client.pool
    elif type(client) is LeanPool:
        pool = client
    else:
        return None
    started = time.perf_counter()
    deadline = asyncio.get_running_loop().time() + deadline_ms / 1000.0
    fut = pool.send_now(target, body, deadline, max_bytes)
    if fut is None:
        return None
    return Sent(fut, started, deadline_ms, max_bytes)


def _failed(exc: DeadlineExceeded | TransportError, started: float, deadline_ms: float) -> Exchange:
    """The fault of an exchange that failed, timed when it failed (not when the match
    got to its seat)."""
    ms = (exc.done_at - started) * 1000.0
    if isinstance(exc, DeadlineExceeded):
        return Exchange(None, ms, TIMEOUT, f"no complete reply within {deadline_ms:.0f} ms", late_ms=exc.late_ms)
    return Exchange(None, ms, ERROR, str(exc))


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
