"""A bot with one quirk a bot author may have, to see what ``referee check-bot`` says:

    python tests/bots/quirks.py MODE --port P

- ``float``: answers the first legal action with every integer in it a JSON float
  (``5.0`` for ``5``, ``[35.0]`` for ``[35]``, ``{"card": 4.0, "pile": 0.0}``);
- ``bare``: answers the first legal action unwrapped when it is a one-element list
  (``35`` for ``[35]``) and wrapped in one otherwise (``[5]`` for ``5``);
- ``key``: answers the first legal action with its first key misspelt (``"car"`` for
  ``"card"``) when it is an object;
- ``slow``: plays the first legal action, and answers every other ``act`` 300 ms past its
  deadline (a slow bot, not a serial one); ``late``: every ``act``;
- ``earlier``: answers each decision with the action it chose for the one before
  (state kept from an earlier request);
- ``nagle``: plays the first legal action, writing the head and the body of each reply
  in two sends without TCP_NODELAY (the ~40 ms TCP-delay pattern; every other mode sets
  TCP_NODELAY);
- ``close``: plays the first legal action over HTTP/1.0, one connection per request;
- any other (``plain``): plays the first legal action.

Every mode serves requests concurrently and checks no token (check-bot warns of that).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODE = sys.argv[1]
previous: dict[tuple[str, int], Any] = {}
lock = threading.Lock()
acts = itertools.count()


def floats(value: Any) -> Any:
    """``value`` with every integer in it a float."""
    if isinstance(value, bool) or not isinstance(value, (int, list, dict)):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [floats(v) for v in value]
    return {k: floats(v) for k, v in value.items()}


def choose(message: dict[str, Any]) -> Any:
    """The action of this bot's quirk."""
    first = message["legal"][0]
    if MODE == "float":
        return floats(first)
    if MODE == "bare":
        return first[0] if isinstance(first, list) and len(first) == 1 else [first]
    if MODE == "key" and isinstance(first, dict):
        name = next(iter(first))
        return {(name[:-1] if k == name else k): v for k, v in first.items()}
    if MODE == "late" or (MODE == "slow" and next(acts) % 2):
        time.sleep((message["deadline_ms"] + 300) / 1000)
    if MODE == "earlier":
        key = (message["match"], message["seat"])
        with lock:
            action = previous.get(key, first)
            previous[key] = first
        return action
    return first


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0" if MODE == "close" else "HTTP/1.1"
    disable_nagle_algorithm = MODE != "nagle"

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        reply = {"action": choose(message)} if message.get("type") == "act" else {}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()  # the head in one send (wbufsize 0), the body in another
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    port = int(sys.argv[sys.argv.index("--port") + 1])
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
