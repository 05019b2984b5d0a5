"""Managed bots: start each on a free port, wait until ``hello`` succeeds, restart one
that crashed, stop them; no bot process outlives the referee, even one killed by -9.

Each bot runs under a guard (``guard.py``, whose docstring has the details): a small
process in a session and process group of its own whose stdin is a pipe that only the
referee holds open. When the referee ends in any way the kernel closes the pipe, and
the guard stops the bot and every process it started. The guard exits as the bot did,
so ``proc.returncode`` is the bot's. Stopping a bot is writing ``stop`` to that pipe and
closing it (the guard logs an EOF without ``stop`` as the referee's death); a guard
still there after the grace is SIGKILLed with its whole group.

Why a guard and not ``PR_SET_PDEATHSIG`` on the bot alone: the death signal reaches
only the bot and not the children it starts (a shell wrapper, a worker pool), is
Linux only, and fires when the *thread* that started the bot ends; the pipe's EOF
cannot be missed. The guard sets that signal on itself as a second line.

A guard is reaped only after a ``killpg`` of its group: while it is unreaped its pid
cannot be reused, so the signal can reach nothing but what the bot left behind.

A bot that crashed is restarted by ``revive`` on the same port (the endpoints of the
matches in flight point there), after a backoff that doubles with each restart, at
most ``max_restarts`` times in the tournament; a bot that cannot be restarted is
``down``. A port that another process took meanwhile makes that attempt fail (on the
host's network; a bot in a network of its own gets a new one, where nobody else can take
it, so the host's ports are not looked at). Decisions
that find the bot not listening meanwhile wait for it (``control.through_restart``).

The bot's stdout and stderr (and the guard's few lines) go to ``<output>/logs/<bot>.log``,
capped by the guard. ``python`` or ``python3`` as the first word of a command means the
interpreter the referee runs in, so sample bots find the same installed packages.

What a bot runs as, sees and may use is its cage (``sandbox.py``): a ``BotSpec`` built
by the caller says what to start (this layer never reads the tournament file). Every
request to a managed bot carries its per-run token (``ManagedBot.endpoint``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import errno
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

from referee.bots.cage import cgroups, guard, netns
from referee.bots.cage.sandbox import BotSpec, Cage, new_token, resolve_command
from referee.bots.client import wire
from referee.config.redacted import Secret
from referee.errors import BotStartError, Unready

GUARD = str(Path(__file__).with_name("guard.py"))
GRACE_S = 3.0  # from SIGTERM to SIGKILL when a bot is stopped
_GUARD_MARGIN_S = 1.0  # how much longer than the grace the referee waits for a guard
_READY_POLL_S = 0.05
_STOP_POLL_S = 0.01
_EXIT_SETTLE_S = 2.0  # a guard exits within milliseconds of its bot


class Revival(NamedTuple):
    """What ``ManagedBot.revive`` found or did. Unpack it, or test its truth (``alive``)."""

    alive: bool  # the bot is up: it never died, or it was restarted
    restarted_now: bool  # this very call restarted it: charge the restart to the caller's match
    attempts: int = 0  # restart attempts this very call made, successful or not

    def __bool__(self) -> bool:
        return self.alive


_HANDED_OUT: set[int] = set()  # the ports free_port gave in this process (at most the port range)
_TRIES = 100


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now and that this process has
    not handed out before. The system may give a port it gave a moment ago, before the bot
    that got it listens; two bots of a run on one port (each can bind it in its own network
    namespace) would share the pool's connections to that address, and one would answer the
    other's requests with HTTP 401."""
    port = 0
    for _ in range(_TRIES):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            break
    _HANDED_OUT.add(port)
    return port


def port_taken(port: int) -> bool:
    """True when a process listens on ``port`` of 127.0.0.1 (or of every address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def expand_command(command: Sequence[str], port: int) -> list[str]:
    """The command with ``{port}`` filled in and ``python`` made this interpreter."""
    argv = [a.replace("{port}", str(port)) for a in command]
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


class _StartsLikeABot(Protocol):
    """A tournament file's ``[[bot]]`` (``config.BotConfig``) seen from this layer."""

    @property
    def name(self) -> str: ...
    @property
    def command(self) -> tuple[str, ...] | None: ...
    @property
    def token(self) -> Secret | None: ...


def as_spec(bot: BotSpec | _StartsLikeABot) -> BotSpec:
    """A BotSpec as is; a ``[[bot]]`` with default limits (callers that know the
    tournament build the spec with ``tournament.runner.bot_spec``)."""
    if isinstance(bot, BotSpec):
        return bot
    return BotSpec(bot.name, tuple(bot.command or ()), token=bot.token)


def log_mark(command: str, argv: Sequence[str]) -> str:
    """The mark ``<command> <UTC time> (<argv>)`` with which a command (``check``, ``run``,
    ``check-bot``) opens its part of a bot's log that the next command appends to; the
    command hands it to every ``ManagedBot`` it starts (``section``)."""
    at = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return printable(f"{command} {at} ({shlex.join(argv)})")


class ManagedBot:
    """One bot process the referee started, restarted when it crashes. Its async
    methods belong to one event loop (the tournament's)."""

    def __init__(
        self,
        bot: BotSpec | _StartsLikeABot,
        log_dir: Path,
        *,
        max_restarts: int = 3,
        restart_backoff_ms: int = 200,
        section: str = "",
    ) -> None:
        spec = as_spec(bot)
        self.config = spec  # its name and command (the tournament file's bot, reduced to what starts it)
        self.log_path = log_dir / f"{spec.name}.log"
        self.max_restarts = max_restarts
        self.restart_backoff_ms = restart_backoff_ms
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0  # restart attempts made, successful or not
        self.down = False  # gave up restarting: the bot is played by fallback from now
        self._stopped = False
        self._stop_event = asyncio.Event()
        self._restart_lock = asyncio.Lock()
        self._cage: Cage | None = None
        self._netns: int | None = None  # the network namespace of the bot's current start
        self.token = spec.token if spec.token is not None else new_token()  # per run: in its env and requests
        self._section = section  # the command's mark (log_mark) that opens this bot's lines in its log
        self._marked = False

    @property
    def url(self) -> str:
        """Where the bot answers once started."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def cage(self) -> Cage:
        """The bot's cage (made on first use: ``sandbox = "bwrap"`` without bubblewrap raises BotStartError)."""
        if self._cage is None:
            self._cage = Cage(self.config, self.token)
        return self._cage

    def endpoint(self) -> wire.Endpoint:
        """The endpoint of this bot: its URL, with its token as a bearer token; its
        connections are made by ``connect`` (the bot may live in a network of its own)."""
        endpoint = wire.Endpoint.make(self.config.name, self.url, self.token)
        assert endpoint.target is not None
        return dataclasses.replace(endpoint, target=dataclasses.replace(endpoint.target, connect=self.connect))

    async def connect(self) -> socket.socket:
        """A new connection to the bot: in its own network when its cage has one, else
        on the host's loopback."""
        if self._cage is None or not self._cage.own_network:
            return await netns.connect(None, self.port)
        if self._netns is None and self.proc is not None and self.proc.returncode is None:
            self._netns = netns.find(self.proc.pid)
        if self._netns is None:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "its network is not up yet")
        return await netns.connect(self._netns, self.port)

    def _forget_network(self) -> None:
        """Close the descriptor of the namespace of a start that is over."""
        if self._netns is not None:
            os.close(self._netns)
            self._netns = None

    def start(self) -> None:
        """Launch the bot under its guard (does not wait for readiness): on a free port
        the first time, on the same port after."""
        name = self.config.name
        if self._stopped:
            raise BotStartError(
                f"bot {name!r} was stopped", Unready("not_started", "was stopped", f"bot {name!r} was stopped")
            )
        if self.port == 0:
            self.port = free_port()
        argv = expand_command(resolve_command(self.config.command, self.config.base_dir), self.port)
        program = shutil.which(argv[0])
        if program is None:
            detail = f"bot {name!r}: cannot start {argv[0]!r}: no such executable"
            raise BotStartError(detail, Unready("no_program", "cannot start its command: no such executable", detail))
        argv[0] = program  # looked up on the referee's PATH: the bot's own PATH is the allow-listed one
        try:
            prepared = self.cage.prepare(argv)
        except OSError as exc:
            raise BotStartError(f"bot {name!r}: cannot prepare its private folder: {exc.strerror or exc}") from exc
        self._forget_network()
        self._log_line(f"{time.strftime('%Y-%m-%d %H:%M:%S')} start: port {self.port}{prepared.note}")
        setup = json.dumps(prepared.setup, separators=(",", ":"))
        guarded = [sys.executable, "-I", "-S", GUARD, "--grace", f"{GRACE_S:g}", "--setup", setup, "--"]
        try:
            with open(self.log_path, "ab") as log:
                # the pipe's write end reaches no other process: Python opens it non-inheritable
                # (PEP 446), and close_fds (the default) closes all but 0-2 in the guard
                self.proc = subprocess.Popen(
                    [*guarded, *prepared.argv],
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    env=prepared.env,
                    pass_fds=prepared.fds,
                )
        except OSError as exc:
            where = (
                f"cannot open its log {self.log_path}"
                if exc.filename == str(self.log_path)
                else "cannot start its guard"
            )
            raise BotStartError(f"bot {name!r}: {where}: {exc.strerror or exc}") from exc

    def alive(self) -> bool:
        """True while the bot runs; once it has exited, ``proc.returncode`` is its code."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return False
        if _running(proc):
            return True
        self._reap()
        return False

    def stop(self) -> None:
        """Stop the bot and everything it started, also while it is being restarted.
        Idempotent; a later ``revive`` or ``start`` does nothing or refuses."""
        self.begin_stop()
        self.wait_stopped()

    def begin_stop(self) -> None:
        """Ask the bot to stop without waiting (``stop_all`` stops many at once)."""
        self._stopped = True
        self._stop_event.set()
        if self.proc is not None and self.proc.returncode is None:
            _ask_guard_to_stop(self.proc)  # the guard SIGTERMs the group, SIGKILLs it after the grace

    def wait_stopped(self) -> None:
        """Wait until the bot asked to stop is gone (at most the grace and a margin)."""
        proc = self.proc
        if proc is not None and proc.returncode is None:
            deadline = time.monotonic() + GRACE_S + _GUARD_MARGIN_S
            while _running(proc) and time.monotonic() < deadline:
                time.sleep(_STOP_POLL_S)
        self._reap()

    def _reap(self) -> None:
        """Reap the guard (SIGKILL to its group first) and whatever is left in the bot's
        cgroup; once stopped, remove the private folder and the cgroup."""
        if self.proc is not None and self.proc.returncode is None:
            _reap(self.proc)
        if self._cage is not None:
            if self._cage.cgroup is not None:
                cgroups.kill_members(self._cage.cgroup)
            if self._stopped:
                self._forget_network()
                self._cage.cleanup()

    async def revive(self, hello_body: bytes, startup_ms: int, deadline_ms: int, max_bytes: int) -> Revival:
        """After an ``error`` fault: restart the bot if its process died.

        A live bot: ``(True, False)`` at once, the fault was the bot's alone. A dead one
        is restarted by exactly one caller however many notice the death together: it
        gets ``(True, True)``, the others wait and get ``(True, False)``. ``(False,
        False)`` once the bot is ``down`` (or stopped).
        """
        async with self._restart_lock:  # a caller that waited finds the bot restarted, or down
            if self.down or self._stopped:
                return Revival(False, False)
            if await self._still_up():
                return Revival(True, False)
            return await self._restart(hello_body, startup_ms, deadline_ms, max_bytes)

    async def revive_unresponsive(
        self, hello_body: bytes, startup_ms: int, deadline_ms: int, max_bytes: int
    ) -> Revival:
        """After several timeouts in a row: a bot whose process runs but that does not
        answer ``hello`` within its deadline is hung (an endless loop, a deadlock); it is
        killed, with everything it started, and restarted like a crashed one. A bot that
        answers is left alone (it was only slow), and so is one already restarted."""
        async with self._restart_lock:
            if self.down or self._stopped:
                return Revival(False, False)
            if await self._still_up():
                try:
                    await wait_ready(self, self.endpoint(), hello_body, deadline_ms, deadline_ms, max_bytes)
                    return Revival(True, False)
                except BotStartError:
                    self._log_line(f"unresponsive: no answer to hello within {deadline_ms} ms; killed")
                    self._reap()
            return await self._restart(hello_body, startup_ms, deadline_ms, max_bytes)

    def log_tail(self, lines: int = 8) -> str:
        """The last lines of the bot's log, for error messages, control characters escaped."""
        text = self._log_end(4096)
        return "\n".join("    " + printable(line) for line in text[-lines:])

    def _log_end(self, size: int) -> list[str]:
        """The lines of the last ``size`` bytes of the bot's log (a capped log is still 10 MB)."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(max(0, fh.seek(0, os.SEEK_END) - size))
                return fh.read().decode(errors="replace").splitlines()
        except OSError:
            return []

    def log_excerpt(self, lines: int = 12) -> str:
        """What a failed start needs shown: the first error the bot logged since it was
        last started (see ``first_error``), control characters escaped."""
        text = self._log_end(262144)
        if not text:
            return ""
        starts = [i for i, line in enumerate(text) if line.startswith("--- ") and "start" in line]
        since = text[starts[-1] + 1 :] if starts else text
        return "\n".join("    " + printable(line) for line in first_error(since, lines))

    async def _still_up(self) -> bool:
        """Whether the bot runs. The guard exits a moment after its bot (it cleans up
        first): when the guard runs but the bot no longer does, wait for the guard."""
        deadline = time.monotonic() + _EXIT_SETTLE_S
        while self.alive():
            if self.proc is None or _child_running(self.proc.pid) is not False or time.monotonic() > deadline:
                return True
            await asyncio.sleep(_STOP_POLL_S)
        return False

    async def _restart(self, hello_body: bytes, startup_ms: int, deadline_ms: int, max_bytes: int) -> Revival:
        """Start the dead bot again, with backoff, until it answers hello or no restart is left."""
        why = _describe_exit(self.proc.returncode if self.proc else None)
        endpoint = self.endpoint()
        first = self.restarts
        while self.restarts < self.max_restarts:
            if await self._stopped_within(self.restart_backoff_ms * 2**self.restarts / 1000):
                return Revival(False, False, self.restarts - first)
            self.restarts += 1
            self._log_line(f"restart {self.restarts}/{self.max_restarts} after {why}")
            failure = await self._attempt(endpoint, hello_body, startup_ms, deadline_ms, max_bytes)
            if self._stopped:
                return Revival(False, False, self.restarts - first)
            if failure is not None:
                self._log_line(f"restart {self.restarts}/{self.max_restarts} failed: {failure}")
                why = failure
                continue
            return Revival(True, True, self.restarts - first)
        self.down = True
        self._log_line(f"down after {self.restarts} restart(s): played by fallback from now")
        return Revival(False, False, self.restarts - first)

    async def _attempt(
        self, endpoint: wire.Endpoint, hello_body: bytes, startup_ms: int, deadline_ms: int, max_bytes: int
    ) -> str | None:
        """One restart on the same port: None once the bot answers hello, else why not."""
        own = self._cage is not None and self._cage.own_network  # a new namespace: nobody else can hold the port
        if not own and port_taken(self.port):
            return f"port {self.port} is taken by another process"
        try:
            self.start()
        except BotStartError as exc:
            return str(exc)
        try:
            await wait_ready(self, endpoint, hello_body, startup_ms, deadline_ms, max_bytes)
        except BotStartError:
            proc = self.proc
            if proc is not None and self.alive():
                self._reap()  # up but silent: no grace for a failed restart
                return f"no hello within {startup_ms} ms"
            return _describe_exit(proc.returncode if proc else None)
        return None

    async def _stopped_within(self, seconds: float) -> bool:
        """Wait ``seconds``; True (at once) when ``stop`` is called meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop_event.wait(), seconds)
        return self._stopped

    def _log_line(self, text: str) -> None:
        """A ``--- `` line of the referee's own in the bot's log; the first one of this bot
        is preceded by the section mark of the command (``log_mark``). Best effort: a
        full disk costs the line, the run reports it where the journal meets it."""
        lines = f"--- {text}\n"
        if not self._marked:
            self._marked = True
            if self._section:
                lines = f"--- {self._section}\n" + lines
        with contextlib.suppress(OSError):
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.log_path, "ab") as log:
                log.write(lines.encode())


def printable(text: str) -> str:
    """``text`` safe for a terminal: control and format characters (escape sequences,
    OSC, bidi overrides) shown as ``\\xNN`` / ``\\uNNNN``."""
    return "".join(c if c == "\t" or unicodedata.category(c) not in ("Cc", "Cf") else ascii(c)[1:-1] for c in text)


_ERROR_MARKS = ("Traceback", "Error", "error", "ERROR", "Exception", "panic", "fatal", "FATAL", "cannot", "Cannot")


def first_error(log: list[str], limit: int = 12) -> list[str]:
    """The lines of a bot's log that explain a failed start: from its first line that
    looks like an error to the end of that error (a Python traceback ends at its first
    unindented line after the ``Traceback`` line), at most ``limit`` lines, with a note
    of what was left out; without such a line, the bot's first lines. The referee's own
    ``--- `` lines are left out (a tail would show them, and cut the error off)."""
    own = [line for line in log if not line.startswith("--- ")]
    start = next((i for i, line in enumerate(own) if any(m in line for m in _ERROR_MARKS)), None)
    if start is None:
        shown = own[:limit]
    else:
        end = start + 1
        if own[start].startswith("Traceback"):
            while end < len(own) and (own[end].startswith((" ", "\t")) or not own[end].strip()):
                end += 1
            end += 1  # the exception line itself
        shown = (
            own[start : min(end, start + limit)]
            if end - start <= limit
            else own[start : start + limit - 1] + own[end - 1 : end]
        )
    left = len(own) - len(shown)
    return shown + ([f"... ({left} more line(s) in the log)"] if left > 0 else [])


def _running(proc: subprocess.Popen[bytes]) -> bool:
    """True while ``proc`` has not exited; never reaps it (see ``_reap``)."""
    if hasattr(os, "waitid"):
        with contextlib.suppress(ChildProcessError):
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    return proc.poll() is None


def _ask_guard_to_stop(proc: subprocess.Popen[bytes]) -> None:
    """Write ``stop`` to the guard's pipe and close it (a few bytes to an empty pipe
    never block; a guard already gone raises a suppressed BrokenPipeError)."""
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(OSError):
            proc.stdin.write(guard.STOP)
            proc.stdin.flush()
        _close_pipe(proc)


def _close_pipe(proc: subprocess.Popen[bytes]) -> None:
    """Close the referee's end of the guard's pipe."""
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(OSError):
            proc.stdin.close()


def _reap(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the guard's whole group (whatever is left of it), then reap the guard.

    Before the reaping the guard's pid, which is its group's id, cannot be reused, so
    the signal reaches nothing else."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _close_pipe(proc)


def _describe_exit(code: int | None) -> str:
    """``exit code 3``, ``exit code -9 (SIGKILL)``."""
    if code is None:
        return "an exit"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"exit code {code} ({signal.Signals(-code).name})"
    return f"exit code {code}"


def _child_running(pid: int) -> bool | None:
    """Whether a child of ``pid`` (a guard's: its bot) is running; None where the kernel
    does not list children (a bot's death is then noticed once its guard is gone)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    for child in children:
        try:
            stat = Path(f"/proc/{child}/stat").read_bytes()
        except OSError:
            continue
        if stat[stat.rindex(b")") + 2 :].split()[0] != b"Z":
            return True
    return False


async def start_managed(
    spec: BotSpec,
    log_dir: Path,
    hello_body: bytes,
    *,
    startup_ms: int = 15000,
    deadline_ms: int = 1000,
    max_bytes: int = 65536,
) -> ManagedBot:
    """Start one managed bot in its cage and wait until it answers ``hello`` (stop it
    with ``stop()``); a BotStartError, with its log's tail, when it does not."""
    bot = ManagedBot(spec, log_dir, max_restarts=0)
    try:
        bot.start()
        await wait_ready(bot, bot.endpoint(), hello_body, startup_ms, deadline_ms, max_bytes)
    except BaseException:
        bot.stop()
        raise
    return bot


async def wait_ready(
    bot: ManagedBot,
    endpoint: wire.Endpoint,
    hello_body: bytes,
    startup_ms: int,
    deadline_ms: int,
    max_bytes: int,
    answer: list[bytes] | None = None,
) -> float:
    """Poll ``hello`` until it succeeds; return seconds taken or raise BotStartError.
    ``answer``: the reply's body is appended to it (its optional ``version``)."""
    started = time.monotonic()
    async with wire.new_client(2) as client:
        while True:
            if not bot.alive():
                code = bot.proc.returncode if bot.proc else None
                detail = (
                    f"bot {bot.config.name!r} exited with code {code} before it was ready; "
                    f"its log {bot.log_path}:\n{bot.log_excerpt()}"
                )
                raise BotStartError(detail, Unready("exited", f"exited with code {code} before it was ready", detail))
            ex = await wire.post(client, endpoint, hello_body, min(deadline_ms, 2000), max_bytes)
            if ex.fault is None:
                if answer is not None:
                    answer.append(ex.body or b"")
                return time.monotonic() - started
            if (time.monotonic() - started) * 1000 > startup_ms:
                detail = (
                    f"bot {bot.config.name!r} did not answer hello within {startup_ms} ms "
                    f"(limits.startup_ms; last: {ex.detail}); its log {bot.log_path}:\n{bot.log_excerpt()}"
                )
                public = ex.unanswered(startup_ms)
                raise BotStartError(detail, Unready("no_hello", public, detail))
            await asyncio.sleep(_READY_POLL_S)
