"""A hostile bot: a real HTTP/1.1 server on raw asyncio streams that misbehaves on purpose.

    python tests/hostile/server.py --mode MODE --port PORT [--after N] [--delay-ms MS] [--seeds FILE]

It answers ``hello``, ``start`` and ``end`` with 200 ``{}``, plays its first N ``act``
requests well (``--after``, counted over all matches; with ``--seeds`` it plays the
referee's fallback move, as ``twin.py`` does, so a hostile run stays comparable with a
twin run; else the first legal action), then misbehaves on every ``act`` by MODE:

- ``slow``: the right answer, after ``--delay-ms``;
- ``trickle``: status line and headers (with Content-Length), then the body one byte
  every 50 ms;
- ``silent``: reads the request and never answers (the connection stays open);
- ``close``: reads the request and closes the connection without a byte;
- ``refuse``: closes its listening socket and every connection, so new connections are
  refused (the process lives on);
- ``http500``: ``500`` with a JSON body;  ``redirect``: ``302`` to http://127.0.0.1:1/;
- ``notjson``: 200 ``text/plain`` ``hello there``;  ``noaction``: 200 ``{"move": 3}``;
- ``illegal``: 200 with an action that is not in ``legal``;
- ``huge``: 200 with a 20 MB body, streamed in 64 KiB chunks (never held whole);
- ``chunks``: a valid reply as 60,000 one-byte chunks, written at once (a parser that
  never yields would stall the referee's loop while it reads them);
- ``informational``: an endless stream of ``102 Processing`` informational responses;
- ``exit``: the process exits with code 3 on reading the request;
- ``hello_then_dies``: answers ``hello``, then exits with code 3 (and would do the same
  on any ``act``).

Raw asyncio streams rather than ``http.server``, so it can misbehave at the byte level.
One line per request goes to stderr, which the referee captures into the bot's log.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

# Run as a script, so this file's folder is on sys.path: the twin's helpers are shared.
from twin import fallback_action, load_seeds

HUGE_BYTES = 20 * 1024 * 1024
CHUNK_BYTES = 64 * 1024
TRICKLE_S = 0.05
REDIRECT_TO = "http://127.0.0.1:1/"
EXIT_CODE = 3
_REASONS = {200: "OK", 302: "Found", 500: "Internal Server Error"}

Behaviour = Callable[["HostileBot", dict[str, Any], asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]


def log(line: str) -> None:
    """One line to stderr, flushed at once (the process may ``os._exit`` next)."""
    print(line, file=sys.stderr, flush=True)


def response_head(status: int, length: int, content_type: str = "application/json", extra: str = "") -> bytes:
    """Status line and headers of a keep-alive response with a ``length``-byte body."""
    return (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    ).encode("latin-1")


def not_legal(legal: list[Any]) -> str:
    """A JSON value that is not an element of ``legal``."""
    candidate = "not a legal action"
    while candidate in legal:
        candidate += "!"
    return candidate


async def read_request(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next request's JSON body, or None when the client closed the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    message: dict[str, Any] = json.loads(await reader.readexactly(length))
    return message


async def send(writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str = "application/json") -> None:
    """Write a whole response."""
    writer.write(response_head(status, len(body), content_type) + body)
    await writer.drain()


class HostileBot:
    """The server: counts ``act`` requests, answers the first ``after`` well, then
    misbehaves on each according to ``mode``."""

    def __init__(self, mode: str, after: int, delay_ms: int, seeds: dict[str, int] | None) -> None:
        self.mode = mode
        self.after = after
        self.delay_ms = delay_ms
        self.seeds = seeds
        self.acts = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    async def run(self, port: int) -> None:
        """Listen on 127.0.0.1:``port`` until the process is killed."""
        self.server = await asyncio.start_server(self.connection, "127.0.0.1", port)
        log(f"hostile {self.mode}: listening on http://127.0.0.1:{port}/ (plays well for {self.after} acts)")
        # Not serve_forever: ``refuse`` closes the server, and the process must live on.
        await asyncio.get_running_loop().create_future()

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one keep-alive connection until either side ends it."""
        self.writers.add(writer)
        try:
            while (message := await read_request(reader)) is not None:
                if not await self.answer(message, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the referee gave up on this exchange and closed the connection
        finally:
            self.writers.discard(writer)
            writer.close()

    async def answer(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must not be used again."""
        kind = message.get("type")
        where = f"match={message.get('match')} seat={message.get('seat')} decision={message.get('decision')}"
        if kind != "act":
            log(f"hostile {self.mode}: {kind} {where} -> 200 {{}}")
            await send(writer, 200, b"{}")
            if kind == "hello" and self.mode == "hello_then_dies":
                log(f"hostile {self.mode}: exits with code {EXIT_CODE} after hello")
                os._exit(EXIT_CODE)
            return True
        self.acts += 1
        if self.acts <= self.after:
            log(f"hostile {self.mode}: act #{self.acts} {where} -> plays well")
            await send(writer, 200, json.dumps({"action": self.good_action(message)}).encode())
            return True
        log(f"hostile {self.mode}: act #{self.acts} {where} -> misbehaves ({self.mode})")
        return await BEHAVIOURS[self.mode](self, message, reader, writer)

    def good_action(self, message: dict[str, Any]) -> Any:
        """The fallback's move when the seeds are known, else the first legal action."""
        return fallback_action(self.seeds, message) if self.seeds is not None else message["legal"][0]

    # Misbehaviours: each returns False when the connection must not be used again.

    async def slow(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """The right answer, ``--delay-ms`` late."""
        await asyncio.sleep(self.delay_ms / 1000.0)
        await send(writer, 200, json.dumps({"action": self.good_action(message)}).encode())
        return True

    async def trickle(
        self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Headers at once, then the body one byte every 50 ms."""
        body = json.dumps({"action": self.good_action(message)}).encode()
        writer.write(response_head(200, len(body)))
        await writer.drain()
        for i in range(len(body)):
            await asyncio.sleep(TRICKLE_S)
            writer.write(body[i : i + 1])
            await writer.drain()
        return True

    async def chunks(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """The right answer, padded to 60,000 bytes, one byte per chunk."""
        body = json.dumps({"action": self.good_action(message)}).encode().ljust(60_000)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        writer.write(head + b"".join(b"1\r\n%c\r\n" % c for c in body) + b"0\r\n\r\n")
        await writer.drain()
        return True

    async def informational(
        self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """``102 Processing`` until the referee hangs up."""
        while not writer.is_closing():
            writer.write(b"HTTP/1.1 102 Processing\r\n\r\n" * 64)
            await writer.drain()
            await asyncio.sleep(0)
        return False

    async def silent(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """No answer: wait until the referee closes the connection."""
        await reader.read()  # nothing more comes: this returns when the referee closes
        return False

    async def close(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Close the connection without a byte."""
        return False

    async def refuse(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Close the listening socket and every connection: new connections are refused."""
        if self.server is not None:
            self.server.close()
        for other in list(self.writers):
            other.close()
        return False

    async def http500(
        self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """HTTP 500 with a JSON body."""
        await send(writer, 500, b'{"error": "hostile: internal server error"}')
        return True

    async def redirect(
        self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """HTTP 302 to a port where nothing listens."""
        writer.write(response_head(302, 0, extra=f"Location: {REDIRECT_TO}\r\n"))
        await writer.drain()
        return True

    async def notjson(
        self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """HTTP 200 with a text/plain body."""
        await send(writer, 200, b"hello there", content_type="text/plain")
        return True

    async def noaction(
        self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """HTTP 200 with a JSON object without ``action``."""
        await send(writer, 200, b'{"move": 3}')
        return True

    async def illegal(
        self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """HTTP 200 with an action that is not in ``legal``."""
        await send(writer, 200, json.dumps({"action": not_legal(message["legal"])}).encode())
        return True

    async def huge(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """HTTP 200 with a 20 MB body, streamed in chunks of one reused buffer."""
        prefix, suffix = b'{"action": "', b'"}'
        padding = b"x" * CHUNK_BYTES  # the only body buffer: reused for every chunk
        writer.write(response_head(200, HUGE_BYTES) + prefix)
        left = HUGE_BYTES - len(prefix) - len(suffix)
        while left > 0:
            n = min(left, CHUNK_BYTES)
            writer.write(padding if n == CHUNK_BYTES else padding[:n])
            await writer.drain()  # raises once the referee has cut the reply off
            left -= n
        writer.write(suffix)
        await writer.drain()
        return True

    async def exit(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Exit the process without answering."""
        log(f"hostile {self.mode}: exits with code {EXIT_CODE}")
        os._exit(EXIT_CODE)


BEHAVIOURS: dict[str, Behaviour] = {
    "slow": HostileBot.slow,
    "trickle": HostileBot.trickle,
    "silent": HostileBot.silent,
    "chunks": HostileBot.chunks,
    "informational": HostileBot.informational,
    "close": HostileBot.close,
    "refuse": HostileBot.refuse,
    "http500": HostileBot.http500,
    "redirect": HostileBot.redirect,
    "notjson": HostileBot.notjson,
    "noaction": HostileBot.noaction,
    "illegal": HostileBot.illegal,
    "huge": HostileBot.huge,
    "exit": HostileBot.exit,
    "hello_then_dies": HostileBot.exit,  # it dies at hello; were it ever asked to act, it would die then
}


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve until killed."""
    parser = argparse.ArgumentParser(description="A bot server that misbehaves on purpose.")
    parser.add_argument("--mode", required=True, choices=sorted(BEHAVIOURS))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--after", type=int, default=0, help="act requests answered well before misbehaving")
    parser.add_argument("--delay-ms", type=int, default=2000, help="how late 'slow' answers")
    parser.add_argument("--seeds", help="JSON file: match id -> match seed (play the fallback's moves)")
    args = parser.parse_args(argv)
    seeds = load_seeds(args.seeds) if args.seeds else None
    asyncio.run(HostileBot(args.mode, args.after, args.delay_ms, seeds).run(args.port))


if __name__ == "__main__":
    main()
