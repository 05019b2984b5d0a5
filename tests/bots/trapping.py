"""A bot that traps SIGTERM, as a JVM's shutdown hook would: it logs the signal, takes
100 ms to wind down and exits 0.

    python tests/bots/trapping.py --port P
"""

from __future__ import annotations

import json
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # head and body leave at once (else ~40 ms a reply)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        body = json.dumps({"action": message["legal"][0]} if message.get("type") == "act" else {}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def trap(*_: object) -> None:
    print("trapped SIGTERM: saving and exiting", flush=True)
    time.sleep(0.1)
    sys.exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, trap)
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Handler)
    server.daemon_threads = True
    server.serve_forever(poll_interval=0.05)
