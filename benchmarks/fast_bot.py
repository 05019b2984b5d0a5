"""The benches' bot: answers every ``act`` with the first legal action (policy ``random``:
a random legal one, so transcripts hold what a real field plays) and everything else with
``{"ok": true}``, at a cost next to nothing so the referee is what a bench measures.

It runs in Node (``fast_bot.js``) where Node is installed, else in Python (``serve``, an
``asyncio.Protocol``): same command line, same answers. Node takes about a third of the
Python one's CPU per request, which keeps the bot server from bounding the speed bench's
floor; the Python one lets every bench run where Node is missing.

    python -m benchmarks.fast_bot PORT [first|random]      # the Python one (0: a free port)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POLICIES = ("first", "random")
NODE_BOT = Path(__file__).resolve().parent / "fast_bot.js"
_OK = b'{"ok":true}'


def command(policy: str = "first", port: str = "{port}", kind: str | None = None) -> tuple[list[str], str]:
    """The fast bot's command line and its kind (``node``, or ``python`` without Node or when asked)."""
    node = shutil.which("node") if kind != "python" else None
    if node is not None:
        return [node, str(NODE_BOT), port, policy], "node"
    if kind == "node":
        raise SystemExit("node is not installed")
    # a script path, not ``-m``: a caged bot sees the files named on its command line, but
    # benchmarks/ is not installed, so its interpreter could not import it
    return [sys.executable, str(Path(__file__).resolve()), port, policy], "python"


@dataclass(frozen=True)
class Running:
    """A fast bot server started by ``running``."""

    port: int
    kind: str

    @property
    def url(self) -> str:
        """The bot's URL."""
        return f"http://127.0.0.1:{self.port}/"


@contextlib.contextmanager
def running(policy: str = "first", kind: str | None = None) -> Iterator[Running]:
    """One fast bot server in its own process on a free port, stopped on exit."""
    argv, kind = command(policy, "0", kind)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "listening on http://127.0.0.1:PORT/"
        if not line:
            raise SystemExit(f"the fast bot did not start: {argv}")
        yield Running(int(line.rstrip(b"/\n").rsplit(b":", 1)[1]), kind)
    finally:
        proc.terminate()
        proc.wait()


def _reply(body: bytes, choose: Callable[[list[Any]], Any]) -> bytes:
    """The HTTP reply to one request body."""
    data = _OK
    if b'"type":"act"' in body:
        at = body.rfind(b'"legal":')  # legal is the act message's last field
        legal = json.loads(body[at + 8 : body.rindex(b"}")]) if at >= 0 else None
        if legal:
            data = b'{"action":%b}' % json.dumps(choose(legal), separators=(",", ":")).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b" % (len(data), data)


class _Connection(asyncio.Protocol):
    """One keep-alive connection: every complete request in the buffer answered, in order."""

    def __init__(self, choose: Callable[[list[Any]], Any]) -> None:
        self.choose = choose
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buf, replies = self.buf + data, []
        while (end := buf.find(b"\r\n\r\n")) >= 0:
            at = buf.lower().find(b"content-length:", 0, end)
            stop = end + 4 + (int(buf[at + 15 : buf.find(b"\r\n", at)]) if at >= 0 else 0)
            if len(buf) < stop:
                break
            replies.append(_reply(buf[end + 4 : stop], self.choose))
            buf = buf[stop:]
        self.buf = buf
        if replies and self.transport is not None:
            self.transport.write(b"".join(replies))


def serve(port: int, policy: str = "first") -> None:
    """Run the Python fast bot on 127.0.0.1:``port`` until killed."""
    choose: Callable[[list[Any]], Any] = random.Random().choice if policy == "random" else (lambda legal: legal[0])

    async def listen() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Connection(choose), "127.0.0.1", port)
        print(f"listening on http://127.0.0.1:{server.sockets[0].getsockname()[1]}/", flush=True)
        async with server:
            await server.serve_forever()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    asyncio.run(listen())


def main(argv: list[str] | None = None) -> None:
    """Run the Python fast bot (the benches start it through ``command`` or ``running``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fast_bot", description="the benches' bot, in Python")
    parser.add_argument("port", type=int, help="0: a free port (printed)")
    parser.add_argument("policy", nargs="?", default="first", choices=POLICIES)
    args = parser.parse_args(argv)
    serve(args.port, args.policy)


if __name__ == "__main__":
    main()
