"""https:// bots through httpx: no redirects followed, no proxies read from the
environment, no timeouts but the deadline.

httpx's timeouts are per socket read, so the deadline is enforced around the whole
exchange, from sending to the last byte. Each ``BotClient`` builds its own
``HttpsTransport`` on first use (one httpx client shared by many requests in flight slows
down sharply), and every one shares a single SSL context (building one is costly).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time

import httpx

from referee.bots.client.transport import DeadlineExceeded, Reply, Target, Transport, TransportError

_SSL: ssl.SSLContext | None = None
# httpx writes headers and body in two sends; with Nagle's algorithm on, the body
# waits for the ACK of the headers.
_SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


def shared_ssl_context() -> ssl.SSLContext:
    """The one SSL context every client uses."""
    global _SSL
    if _SSL is None:
        _SSL = httpx.create_ssl_context()
    return _SSL


class HttpsTransport(Transport):
    """Requests through one httpx client of at most ``max_connections`` connections."""

    def __init__(self, max_connections: int) -> None:
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        tls = httpx.AsyncHTTPTransport(
            verify=shared_ssl_context(), limits=limits, trust_env=False, socket_options=_SOCKET_OPTIONS
        )
        self.client = httpx.AsyncClient(
            transport=tls, timeout=httpx.Timeout(None), follow_redirects=False, trust_env=False
        )

    async def request(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """POST through httpx; the reply by ``deadline`` (event-loop time)."""
        try:
            async with asyncio.timeout_at(deadline):
                status, data = await self._post(target, body, max_bytes)
        except TimeoutError:
            raise DeadlineExceeded.noticed_now(deadline) from None
        except httpx.HTTPError as exc:
            public = "cannot connect" if isinstance(exc, httpx.ConnectError) else f"HTTPS failed ({type(exc).__name__})"
            raise TransportError(f"{type(exc).__name__}: {exc or 'connection failed'}", public=public) from exc
        return Reply(status, data, time.perf_counter())

    async def _post(self, target: Target, body: bytes, max_bytes: int) -> tuple[int, bytes | None]:
        async with self.client.stream("POST", target.url, content=body, headers=target.headers) as resp:
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
