"""Managed bots: start each on a free port, wait until ``hello`` succeeds, stop them.

A managed bot runs in a process group of its own, so stopping it also stops the
children it started. Its stdout and stderr go to ``<output>/logs/<bot>.log``.
``python`` or ``python3`` as the first word of a command means the interpreter the
referee runs in, so sample bots find the same installed packages.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..config import BotConfig
from ..errors import BotStartError
from . import http

_READY_POLL_S = 0.05


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def expand_command(command: Sequence[str], port: int) -> list[str]:
    """The command with ``{port}`` filled in and ``python`` made this interpreter."""
    argv = [a.replace("{port}", str(port)) for a in command]
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


class ManagedBot:
    """One bot process the referee started."""

    def __init__(self, config: BotConfig, log_dir: Path) -> None:
        self.config = config
        self.log_path = log_dir / f"{config.name}.log"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Where the bot answers once started."""
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> None:
        """Launch the process on a free port (does not wait for readiness)."""
        if self.config.command is None:
            raise BotStartError(f"bot {self.config.name!r} has a url, not a command: nothing to start")
        self.port = free_port()
        argv = expand_command(self.config.command, self.port)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        try:
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} start: port {self.port}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise BotStartError(f"bot {self.config.name!r}: cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
        finally:
            log.close()

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 3.0) -> None:
        """SIGTERM the process group, then SIGKILL what is left after ``grace_s``."""
        if self.proc is None:
            return
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        try:  # children that outlived their parent
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def log_tail(self, lines: int = 8) -> str:
        """The last lines of the bot's log, for error messages."""
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join("    " + line for line in text[-lines:])


async def wait_ready(
    bot: ManagedBot, endpoint: http.Endpoint, hello_body: bytes, startup_ms: int, deadline_ms: int, max_bytes: int
) -> float:
    """Poll ``hello`` until it succeeds; return seconds taken or raise BotStartError."""
    started = time.monotonic()
    last = "no answer"
    async with http.new_client(2) as client:
        while True:
            if not bot.alive():
                code = bot.proc.returncode if bot.proc else None
                raise BotStartError(
                    f"bot {bot.config.name!r} exited with code {code} before it was ready; "
                    f"its log {bot.log_path}:\n{bot.log_tail()}"
                )
            ex = await http.post(client, endpoint, hello_body, min(deadline_ms, 2000), max_bytes)
            if ex.fault is None:
                return time.monotonic() - started
            last = ex.detail
            if (time.monotonic() - started) * 1000 > startup_ms:
                raise BotStartError(
                    f"bot {bot.config.name!r} did not answer hello within {startup_ms} ms "
                    f"(limits.startup_ms; last: {last}); its log {bot.log_path}:\n{bot.log_tail()}"
                )
            await asyncio.sleep(_READY_POLL_S)


