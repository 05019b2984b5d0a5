"""A bot that remembers every answer it gave, exactly as ``docs/protocol.md`` allows: its
memory is keyed by ``(tournament, match, seat)``, a ``start`` begins that key afresh, and a
decision number seen before under a key is answered from memory without looking at the
state (nothing is ever forgotten otherwise). A first answer is a random legal action. A
decision seen before that comes with another state breaks the docs' promise: the bot
answers it with ``"stale"`` (never legal) and prints ``stale`` and the key on stdout. It
checks the token.
Any game:

    python tests/bots/memo.py --port P
"""

from __future__ import annotations

import hmac
import json
import os
import random
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = os.environ.get("REFEREE_BOT_TOKEN", "")
memory: dict[tuple[str, str, int], dict[int, tuple[str, Any]]] = {}  # decision -> (state and legal, action)
lock = threading.Lock()


def answer(message: dict[str, Any]) -> dict[str, Any]:
    """The reply to one message: an act's action from memory or a new random one."""
    key = (message["tournament"], message.get("match", ""), message.get("seat", -1))
    with lock:
        if message["type"] == "start":
            memory[key] = {}
        if message["type"] != "act":
            return {}
        seen = memory.setdefault(key, {})
        asked = json.dumps([message["state"], message["legal"]], sort_keys=True)
        if message["decision"] not in seen:
            seen[message["decision"]] = (asked, random.choice(message["legal"]))
        before, action = seen[message["decision"]]
    if before != asked:
        print("stale", *key, message["decision"], flush=True)
        return {"action": "stale"}
    return {"action": action}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        """One message: 401 without the token, else its answer."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        given = self.headers.get("Authorization", "").encode("latin-1")
        if TOKEN and not hmac.compare_digest(given, f"Bearer {TOKEN}".encode()):
            self.send(401, b"")
            return
        self.send(200, json.dumps(answer(json.loads(body))).encode())

    def send(self, status: int, data: bytes) -> None:
        """Answer with ``status`` and the JSON ``data``."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """No access log."""


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Handler).serve_forever()
