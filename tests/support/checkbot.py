"""What the check-bot tests share: running the command in-process, reading its report's
lines, the quirky test bot, and waiting for a port."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from click.testing import CliRunner, Result

from referee.cli.main import main
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

ROOT = Path(__file__).resolve().parent.parent.parent
HOSTILE = str(ROOT / "tests" / "hostile" / "server.py")
SERIAL = str(ROOT / "tests" / "bots" / "serial.py")
QUIRKS = str(ROOT / "tests" / "bots" / "quirks.py")
# check-bot's deadline for a check whose outcome needs no reply to be late: no load reaches it
# (honest bots answer in milliseconds), so such a check may run in the parallel pass
HONEST = ("--deadline-ms", str(UNREACHABLE_DEADLINE_MS))


def check_bot(*args: str) -> Result:
    return CliRunner().invoke(main, ["check-bot", *args], catch_exceptions=False)


def line(result: Result, name: str) -> str:
    """The report line of check ``name`` (its status and summary)."""
    found = [ln for ln in result.output.splitlines() if ln[7:].startswith(name + ":")]
    assert found, f"no {name!r} line in:\n{result.output}"
    return found[0]


def wait_listening(port: int) -> None:
    """Until something listens on ``port`` (at most 15 s)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)


def quirky(mode: str, *args: str) -> Result:
    """check-bot on Drahtseilakt (3 players, 1 match) against ``tests/bots/quirks.py MODE``."""
    return check_bot(
        "--game",
        "drahtseilakt",
        "--players",
        "3",
        "--matches",
        "1",
        *args,
        "--",
        "python",
        QUIRKS,
        mode,
        "--port",
        "{port}",
    )
