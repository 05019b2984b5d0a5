"""Talking to bots over HTTP: deadlines, the size cap and fault classification.

Foreign exceptions (httpx, asyncio) end here: every call returns an ``Exchange``
whose ``fault`` is ``None`` or one of ``timeout``, ``error``, ``malformed``.
(``illegal`` is judged by the match, which knows the legal list.)

Measured on a 2-core loopback machine, and followed here:
- httpx's default transport costs ~450 µs of CPU per request here, so plain http://
  goes through ``transport.LeanTransport`` (asyncio streams + h11);
- one shared ``AsyncClient`` degrades quadratically above ~12 requests in flight,
  so each match gets a small client of its own (``new_client``);
- building a client builds an SSL context (~19 ms): one context is shared;
- httpx timeouts are per socket read, so the deadline is enforced around the whole
  exchange with ``asyncio.timeout``, from sending to the last byte.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from dataclasses import dataclass

import httpx

from ..config import Secret
from .transport import LeanTransport

TIMEOUT = "timeout"
ERROR = "error"
MALFORMED = "malformed"
ILLEGAL = "illegal"
FAULT_KINDS = (TIMEOUT, ERROR, MALFORMED, ILLEGAL)

_SSL: ssl.SSLContext | None = None
# httpx writes headers and body in two sends; with Nagle's algorithm on, the body
# waits for the ACK of the headers (measured: 2.5 ms instead of 0.2 ms per request).
_SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


@dataclass(frozen=True)
class Endpoint:
    """Where a bot answers, and the headers it gets."""

    name: str
    url: str
    headers: dict[str, str]

    @classmethod
    def make(cls, name: str, url: str, token: Secret | None) -> Endpoint:
        """An endpoint with the JSON and (if any) bearer-token headers."""
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token.reveal()}"
        return cls(name, url, headers)


@dataclass
class Exchange:
    """One request and its outcome: a body, or a fault with its detail."""

    body: bytes | None
    latency_ms: float
    fault: str | None = None
    detail: str = ""
    status: int | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """The one SSL context every client uses."""
    global _SSL
    if _SSL is None:
        _SSL = httpx.create_ssl_context()
    return _SSL


def new_client(max_connections: int) -> httpx.AsyncClient:
    """A small client for one match (or one purpose): no redirects, no proxies from
    the environment, no timeouts of its own (the deadline is ours). Plain http://
    goes through the lean keep-alive transport, https:// through httpx's own."""
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    tls = httpx.AsyncHTTPTransport(
        verify=shared_ssl_context(), limits=limits, trust_env=False, socket_options=_SOCKET_OPTIONS
    )
    return httpx.AsyncClient(
        transport=LeanTransport(max_connections),  # also keeps httpx from building an SSL context
        mounts={"https://": tls},
        timeout=httpx.Timeout(None),
        follow_redirects=False,
        trust_env=False,
    )


async def post(
    client: httpx.AsyncClient, endpoint: Endpoint, body: bytes, deadline_ms: int, max_bytes: int
) -> Exchange:
    """POST ``body`` and read the reply within ``deadline_ms``, at most ``max_bytes``."""
    started = time.perf_counter()

    def done(body: bytes | None = None, fault: str | None = None, detail: str = "", status: int | None = None) -> Exchange:
        return Exchange(body, (time.perf_counter() - started) * 1000.0, fault, detail, status)

    try:
        async with asyncio.timeout(deadline_ms / 1000.0):
            async with client.stream("POST", endpoint.url, content=body, headers=endpoint.headers) as resp:
                status = resp.status_code
                if resp.is_redirect or 300 <= status < 400:
                    return done(fault=ERROR, detail=f"HTTP {status} redirect (not followed)", status=status)
                if not 200 <= status < 300:
                    return done(fault=ERROR, detail=f"HTTP {status}", status=status)
                declared = resp.headers.get("content-length")
                if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                    return done(fault=MALFORMED, detail=f"body of {declared} bytes is over the cap of {max_bytes}", status=status)
                chunks: list[bytes] = []
                size = 0
                try:
                    # raw bytes: a compressed body is never inflated past the cap
                    async for chunk in resp.aiter_raw():
                        size += len(chunk)
                        if size > max_bytes:
                            break
                        chunks.append(chunk)
                except httpx.StreamConsumed:  # a response built in memory (MockTransport)
                    chunks, size = [resp.content], len(resp.content)
                if size > max_bytes:
                    return done(fault=MALFORMED, detail=f"body over the cap of {max_bytes} bytes (cut off)", status=status)
                return done(body=b"".join(chunks), status=status)
    except TimeoutError:
        return done(fault=TIMEOUT, detail=f"no complete reply within {deadline_ms} ms")
    except httpx.TransportError as exc:
        return done(fault=ERROR, detail=f"{type(exc).__name__}: {exc or 'connection failed'}")
    except httpx.HTTPError as exc:  # anything else httpx raises about the exchange
        return done(fault=ERROR, detail=f"{type(exc).__name__}: {exc}")
