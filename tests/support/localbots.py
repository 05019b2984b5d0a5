"""Bots as real HTTP servers on 127.0.0.1 for match tests: each bot is a handler
``async (message) -> httpx.Response`` (httpx only describes the reply), served by a raw
asyncio server on a free port, so matches run through the lean pool production uses.
``good``, ``illegal`` and ``on_act`` are the handlers several tests share."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

Handler = Callable[[dict[str, Any]], Awaitable[httpx.Response]]


@dataclass
class Seen:
    """One request a bot received: which bot, its headers (lower-case names) and body."""

    bot: str
    headers: dict[str, str]
    content: bytes


async def good(msg: dict[str, Any]) -> httpx.Response:
    """A well-behaved bot: ``ok`` to everything, the first legal action to ``act``."""
    if msg["type"] != "act":
        return httpx.Response(200, json={"ok": True})
    return httpx.Response(200, json={"action": msg["legal"][0]})


async def illegal(msg: dict[str, Any]) -> httpx.Response:
    """An action no game allows."""
    return httpx.Response(200, json={"action": [999]})


def on_act(bad: Handler) -> Handler:
    """``bad`` for ``act`` messages, ``good`` for the others."""

    async def handler(msg: dict[str, Any]) -> httpx.Response:
        return await (bad(msg) if msg["type"] == "act" else good(msg))

    return handler


async def _read(reader: asyncio.StreamReader) -> tuple[dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    headers = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return headers, await reader.readexactly(int(headers["content-length"]))


@contextlib.asynccontextmanager
async def serve(handlers: dict[str, Handler], seen: list[Seen] | None = None) -> AsyncIterator[dict[str, str]]:
    """Serve every handler on its own port; yields each bot's URL. A handler that raises
    ``httpx.ConnectError`` has its connection closed without a reply."""
    servers = []
    urls = {}
    for name, handler in handlers.items():

        async def conn(
            reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str = name, handler: Handler = handler
        ) -> None:
            try:
                while True:
                    headers, body = await _read(reader)
                    if seen is not None:
                        seen.append(Seen(name, headers, body))
                    try:
                        resp = await handler(json.loads(body))
                    except httpx.ConnectError:
                        return
                    content = resp.content
                    head = f"HTTP/1.1 {resp.status_code} {resp.reason_phrase}\r\n"
                    for k, v in resp.headers.items():
                        if k.lower() != "content-length":
                            head += f"{k}: {v}\r\n"
                    head += f"Content-Length: {len(content)}\r\n\r\n"
                    writer.write(head.encode("latin-1") + content)
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(conn, "127.0.0.1", 0)
        servers.append(server)
        urls[name] = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    try:
        yield urls
    finally:
        for server in servers:
            server.close()


@contextlib.contextmanager
def serving(server: http.server.HTTPServer, scheme: str = "http") -> Iterator[str]:
    """Serve ``server`` (a standard library one, bound to 127.0.0.1) in a thread: its URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
