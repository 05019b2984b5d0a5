"""A bot that checks the referee's token, as sample_bots/README.md shows bot authors:
every request without ``Authorization: Bearer $REFEREE_BOT_TOKEN`` gets HTTP 401.

    python tests/bots/token_bot.py --port P

On start it prints its user id, its working directory, ``GREETING`` from its
environment and whether it can write a file next to itself, for ``tests/test_cage_unit.py``.
"""

from __future__ import annotations

import hmac
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TOKEN = os.environ.get("REFEREE_BOT_TOKEN", "")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # head and body leave at once (else ~40 ms a reply)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        given = self.headers.get("Authorization", "")
        if not TOKEN or not hmac.compare_digest(given, f"Bearer {TOKEN}"):
            self.send(401, {"error": "not the referee"})
            return
        message = json.loads(body)
        self.send(200, {"action": message["legal"][0]} if message.get("type") == "act" else {})

    def send(self, status: int, reply: dict[str, object]) -> None:
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    port = int(sys.argv[sys.argv.index("--port") + 1])
    try:
        (Path(__file__).parent / "written-by-bot").write_text("x")
        own_files = "writable"
    except OSError:
        own_files = "read-only"
    print(
        f"uid={os.getuid()} cwd={os.getcwd()} greeting={os.environ.get('GREETING')} own-files={own_files}", flush=True
    )
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
