"""Talking to bots over HTTP: deadlines, the size cap and fault classification.

Foreign exceptions (httpx, h11, asyncio) end here: every call returns an ``Exchange``
whose ``fault`` is ``None`` or one of ``timeout``, ``error``, ``malformed``.
(``illegal`` is judged by the match, which knows the legal list.)

Measured on a 2-core loopback machine, and followed here:
- a POST through httpx costs the referee 250-500 µs of CPU here, a bare asyncio
  exchange ~40 µs: plain http:// bots of a ``BotClient`` go through the lean
  keep-alive pool of ``transport.py``; https:// and injected httpx clients (tests use
  ``httpx.MockTransport``) go through httpx;
- one shared ``AsyncClient`` degrades quadratically above ~12 requests in flight,
  so each match gets a small client of its own (``new_client``);
- building an httpx client builds an SSL context (~19 ms): one context is shared, and
  the httpx client is only built when an https bot needs it;
- httpx timeouts are per socket read, so the deadline is enforced around the whole
  exchange with ``asyncio.timeout``, from sending to the last byte.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from dataclasses import dataclass, field

import httpx

from ..record import ERROR, MALFORMED, TIMEOUT
from ..secret import Secret
from .transport import LeanPool, Target, TransportError

_SSL: ssl.SSLContext | None = None
# httpx writes headers and body in two sends; with Nagle's algorithm on, the body
# waits for the ACK of the headers.
_SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


@dataclass(frozen=True)
class Endpoint:
    """Where a bot answers, and the headers it gets."""

    name: str
    url: str
    headers: dict[str, str]
    target: Target | None = field(default=None, compare=False, repr=False)

    @classmethod
    def make(cls, name: str, url: str, token: Secret | None) -> Endpoint:
        """An endpoint with the JSON and (if any) bearer-token headers."""
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token.reveal()}"
        target = Target.make(url, headers) if url.startswith("http://") else None
        return cls(name, url, headers, target)


@dataclass
class Exchange:
    """One request and its outcome: a body, or a fault with its detail."""

    body: bytes | None
    latency_ms: float
    fault: str | None = None
    detail: str = ""
    status: int | None = None


class BotClient:
    """The HTTP client of one match (or one purpose): the lean pool for http://, an
    httpx client for https:// (built on first use). No redirects are followed, no
    proxies are read from the environment, and no timeouts apply but the deadline."""

    def __init__(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self.pool = LeanPool(max_connections)
        self._httpx: httpx.AsyncClient | None = None

    def httpx_client(self) -> httpx.AsyncClient:
        """The httpx client for https:// bots."""
        if self._httpx is None:
            limits = httpx.Limits(max_connections=self.max_connections, max_keepalive_connections=self.max_connections)
            tls = httpx.AsyncHTTPTransport(
                verify=shared_ssl_context(), limits=limits, trust_env=False, socket_options=_SOCKET_OPTIONS
            )
            self._httpx = httpx.AsyncClient(
                transport=tls, timeout=httpx.Timeout(None), follow_redirects=False, trust_env=False
            )
        return self._httpx

    async def __aenter__(self) -> BotClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.pool.close()
        if self._httpx is not None:
            await self._httpx.aclose()


def shared_ssl_context() -> ssl.SSLContext:
    """The one SSL context every client uses."""
    global _SSL
    if _SSL is None:
        _SSL = httpx.create_ssl_context()
    return _SSL


def new_client(max_connections: int) -> BotClient:
    """A small client for one match (or one purpose)."""
    return BotClient(max_connections)


async def post(
    client: BotClient | httpx.AsyncClient, endpoint: Endpoint, body: bytes, deadline_ms: float, max_bytes: int
) -> Exchange:
    """POST ``body`` and read the reply within ``deadline_ms``, at most ``max_bytes``."""
    started = time.perf_counter()

    def done(
        body: bytes | None = None, fault: str | None = None, detail: str = "", status: int | None = None
    ) -> Exchange:
        return Exchange(body, (time.perf_counter() - started) * 1000.0, fault, detail, status)

    try:
        async with asyncio.timeout(deadline_ms / 1000.0):
            if isinstance(client, BotClient) and endpoint.target is not None:
                status, redirect, data = await client.pool.post(endpoint.target, body, max_bytes)
            else:
                hc = client.httpx_client() if isinstance(client, BotClient) else client
                status, redirect, data = await _post_httpx(hc, endpoint, body, max_bytes)
    except TimeoutError:
        return done(fault=TIMEOUT, detail=f"no complete reply within {deadline_ms:.0f} ms")
    except TransportError as exc:
        return done(fault=ERROR, detail=str(exc))
    except httpx.HTTPError as exc:
        return done(fault=ERROR, detail=f"{type(exc).__name__}: {exc or 'connection failed'}")
    if redirect:
        return done(fault=ERROR, detail=f"HTTP {status} redirect (not followed)", status=status)
    if not 200 <= status < 300:
        return done(fault=ERROR, detail=f"HTTP {status}", status=status)
    if data is None:
        return done(fault=MALFORMED, detail=f"body over the cap of {max_bytes} bytes (cut off)", status=status)
    return done(body=data, status=status)


async def _post_httpx(
    client: httpx.AsyncClient, endpoint: Endpoint, body: bytes, max_bytes: int
) -> tuple[int, bool, bytes | None]:
    """(status, is_redirect, body or None when over the cap) through httpx."""
    async with client.stream("POST", endpoint.url, content=body, headers=endpoint.headers) as resp:
        status = resp.status_code
        if resp.is_redirect or 300 <= status < 400:
            return status, True, None
        declared = resp.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_bytes:
            return status, False, None
        chunks: list[bytes] = []
        size = 0
        try:
            # raw bytes: a compressed body is never inflated past the cap
            async for chunk in resp.aiter_raw():
                size += len(chunk)
                if size > max_bytes:
                    return status, False, None
                chunks.append(chunk)
        except httpx.StreamConsumed:  # a response built in memory (MockTransport)
            if len(resp.content) > max_bytes:
                return status, False, None
            chunks = [resp.content]
        return status, False, b"".join(chunks)
