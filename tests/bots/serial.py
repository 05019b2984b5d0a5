"""A bot that serves one request at a time: a plain ``HTTPServer`` (no threads) with
HTTP/1.1 keep-alive, so while one connection stays open every other one waits.
It plays the first legal action. ``python tests/bots/serial.py --port N``."""

from __future__ import annotations

import argparse
import json
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # head and body leave at once (else ~40 ms a reply)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = {"action": message["legal"][0]} if message["type"] == "act" else {}
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    HTTPServer(("127.0.0.1", parser.parse_args().port), Handler).serve_forever()
