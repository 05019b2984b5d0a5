"""``tests/bots/steady.py`` as a running process: a bot at a URL whose pace and faults the
test chooses, and that counts what it was asked (``stats``)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

from referee.bots.cage.process import free_port
from tests.support.cli import ROOT
from tests.support.tournament import wait_port

STEADY = ROOT / "tests" / "bots" / "steady.py"


class Steady:
    """A running ``steady.py`` bot process (its options: ``steady.py --help``)."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.proc = subprocess.Popen(
            [sys.executable, str(STEADY), "--port", str(self.port), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_port(self.port, self.proc, timeout_s=10)
        except AssertionError:
            self.stop()
            raise

    def stats(self) -> dict[str, Any]:
        """What the bot counted: ``acts``, ``max_in_flight``, ``refused``, ..."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"GET /stats HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
                data += s.recv(65536)
        return json.loads(data.split(b"\r\n\r\n", 1)[1])

    def stop(self) -> None:
        """Kill the process."""
        self.proc.kill()
        self.proc.wait(5)


def _length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 1 << 30
