"""A tiny HTTP server for sample bots, on the standard library only.

A bot is a function ``act(message) -> reply``: ``message`` is the decoded JSON the
referee sent with ``"type": "act"``, the reply a dict with at least ``"action"``. Every
other message type (``hello``, ``start``, ``end``) is answered ``{"ok": true}``.

A request without ``Authorization: Bearer $REFEREE_BOT_TOKEN`` gets HTTP 401: the
referee sends its token on every request, so the bot answers no one else (a rival, a
process on another port). Without ``REFEREE_BOT_TOKEN`` every request is accepted.

Three settings matter for speed (without them each answer waits ~44 ms on Nagle's
algorithm and delayed ACKs): HTTP/1.1 keep-alive, an unbuffered write file, and
TCP_NODELAY.
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import random
import signal
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Act = Callable[[dict[str, Any]], dict[str, Any]]
TOKEN_ENV = "REFEREE_BOT_TOKEN"


def message_rng(message: dict[str, Any], salt: str = "") -> random.Random:
    """A random generator seeded by the decision itself, so a bot stays deterministic
    however many matches the referee plays at once."""
    key = f"{message.get('match')}:{message.get('seat')}:{message.get('decision')}:{salt}"
    return random.Random(key)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # unbuffered writes: one send per answer
    disable_nagle_algorithm = True
    act: Act  # set on the subclass made by serve()
    token: bytes  # idem: b"Bearer <token>", or b"" to accept every request

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)  # read first, so the connection stays usable after a 401
        given = self.headers.get("Authorization", "").encode("latin-1")  # bytes: compare_digest refuses non-ASCII str
        if self.token and not hmac.compare_digest(given, self.token):
            self._send(401, {"error": "missing or wrong token"})
            return
        try:
            message = json.loads(body)
        except ValueError:
            self._send(400, {"error": "body is not JSON"})
            return
        if message.get("type") == "act":
            try:
                reply = type(self).act(message)
            except Exception as exc:  # a bug in a sample strategy: report it, keep serving
                self._send(500, {"error": f"{type(exc).__name__}: {exc}"})
                return
            self._send(200, reply)
        else:
            self._send(200, {"ok": True})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request would drown the log


class _Server(ThreadingHTTPServer):
    # The listen backlog: the referee opens a connection per request in flight, many at
    # once when matches start together; with socketserver's default of 5 the kernel drops
    # the rest and the client retries a second later, past a typical deadline.
    request_queue_size = 128


def serve(act: Act, port: int, host: str = "127.0.0.1") -> None:
    """Answer the referee with ``act`` on ``host:port`` until SIGTERM or Ctrl-C."""
    token = os.environ.get(TOKEN_ENV, "")
    bearer = f"Bearer {token}".encode() if token else b""
    handler = type("Handler", (_Handler,), {"act": staticmethod(act), "token": bearer})
    server = _Server((host, port), handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"listening on http://{host}:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(strategies: dict[str, Act], argv: list[str] | None = None) -> None:
    """Command line of a sample bot module: ``STRATEGY --port N [--host H]``."""
    parser = argparse.ArgumentParser(description="A sample bot for the referee.")
    parser.add_argument("strategy", choices=sorted(strategies))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    serve(strategies[args.strategy], args.port, args.host)
