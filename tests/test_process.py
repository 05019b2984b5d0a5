"""Managed bot processes with real processes and sockets: nothing survives the referee
(SIGKILL or SIGTERM), a crashed bot is restarted once on its port however many matches
notice, a bot that keeps dying ends ``down`` after its restarts with backoff, ``stop``
also stops a bot being restarted, a restart never starts on a port another process took,
and the guard's pipe reaches no other process. About 5 s."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.bots.cage.process import ManagedBot, Revival, free_port, port_taken, wait_ready
from referee.bots.cage.sandbox import BotSpec, CageLimits
from referee.bots.client import protocol, wire
from referee.errors import BotStartError
from tests.support.cli import start
from tests.support.tournament import UNREACHABLE_STARTUP_MS

# Start-up windows out of reach and polled waits that a loaded machine does not run out of:
# what these tests see is a load's business only where a test says serial.
pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
SPAWNER = ["python", str(ROOT / "tests" / "bots" / "spawner.py")]
GREEDY = ["python", "-m", "sample_bots.nimmt", "greedy"]
DIES_AT_ONCE = ["python", "-c", "import sys; print('dying at once', flush=True); sys.exit(3)"]
# Exits at its first start; at every later one prints its pid and sleeps, never listening.
DIES_THEN_HANGS = [
    "python",
    "-c",
    "import os, sys, time; f = sys.argv[1]; first = not os.path.exists(f); "
    "open(f, 'a').close(); first and sys.exit(3); print('hanging', os.getpid(), flush=True); "
    "time.sleep(60)",
]
HELLO = protocol.hello("t", "nimmt_plus", {}, "bot")
UNCAGED = CageLimits(sandbox="none", bot_user="referee")
PATIENCE_S = 60  # polled: a quiet machine waits no time of it, a loaded one never all of it


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> None:
    """Poll ``predicate`` every 20 ms until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        time.sleep(0.02)


async def until(predicate: Callable[[], object], timeout: float, what: str) -> None:
    """``wait_until`` for a coroutine: polls every 5 ms without blocking the loop."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.005)


def running(pid: int) -> bool:
    """True while ``pid`` is a live process (a zombie is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"


def marked(marker: str) -> set[int]:
    """Live processes (but this one) whose environment holds ``marker``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ and running(int(entry.name)):
            found.add(int(entry.name))
    return found


def spawner_pids(log: Path) -> list[tuple[int, int]]:
    """(bot pid, sleeper pid) of every start of the spawner bot, in order."""
    return [(int(a), int(b)) for a, b in re.findall(r"spawner: pid (\d+) sleeper (\d+)", log.read_text())]


def managed(tmp_path: Path, command: list[str], **limits: int) -> ManagedBot:
    """A bot outside the cage (sandbox none, as the referee's user): these tests watch its
    pids and files from outside; the cage has tests of its own (test_cage.py)."""
    spec = BotSpec("bot", command=tuple(command + ["--port", "{port}"]), limits=UNCAGED)
    return ManagedBot(spec, tmp_path / "logs", **limits)


async def revive(bot: ManagedBot, startup_ms: int = UNREACHABLE_STARTUP_MS) -> Revival:
    return await bot.revive(HELLO, startup_ms, 1000, 65536)


def record_backoffs(bot: ManagedBot) -> list[float]:
    """The backoffs the bot waits before its restarts, in seconds, as it starts each wait
    (the real wait still happens): checked by value, not by a wall clock."""
    waits: list[float] = []
    real = bot._stopped_within

    async def recorded(seconds: float) -> bool:
        waits.append(seconds)
        return await real(seconds)

    bot._stopped_within = recorded  # type: ignore[method-assign]
    return waits


async def start_ready(bot: ManagedBot) -> None:
    bot.start()
    await wait_ready(bot, bot.endpoint(), HELLO, UNREACHABLE_STARTUP_MS, 1000, 65536)


async def answers_hello(bot: ManagedBot) -> bool:
    async with wire.new_client(1) as client:
        ex = await wire.post(client, bot.endpoint(), HELLO, 2000, 65536)
    return ex.fault is None


# --- the referee dies: nothing of its run survives ---------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_no_bot_process_survives_the_referee(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "out"
    cfg = tmp_path / "t.toml"
    bots = [("spawner", SPAWNER), ("greedy", GREEDY)]
    marker = f"orphan-mark-{uuid.uuid4().hex}"  # in the environment of every process of the run
    cfg.write_text(
        "\n".join(
            [
                "[tournament]",
                'name = "orphans"',
                'game = "nimmt_plus"',
                "players = 2",
                "rounds = 1000",
                "concurrency = 1",
                f'output = "{out}"',
                "[limits]",
                f"startup_ms = {UNREACHABLE_STARTUP_MS}",
            ]
            + [
                f'[[bot]]\nname = "{n}"\ncommand = {json.dumps(c + ["--port", "{port}"])}\n'
                f'env = {{ REFEREE_TEST_MARK = "{marker}" }}'
                for n, c in bots
            ]
        )
        + "\n"
    )
    referee = start("run", str(cfg), env={"REFEREE_TEST_MARK": marker}, pipe=False)
    try:
        journal = out / "matches.jsonl"
        wait_until(
            lambda: journal.exists() and journal.read_text().count("\n") >= 1, PATIENCE_S, "a first match played"
        )
        before = marked(marker) - {referee.pid}
        assert spawner_pids(out / "logs" / "spawner.log")  # its sleeper runs (pids of its own namespace)
        assert len(before) >= 5, before  # the spawner, its sleeper, two guards, the other bot
        referee.send_signal(sig)
        referee.wait(timeout=PATIENCE_S)
        wait_until(lambda: not marked(marker), PATIENCE_S, f"every process of the run gone after {sig.name}")
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
    gone = "[guard] the referee is gone: stopping the bot" in (out / "logs" / "spawner.log").read_text()
    # SIGKILL: the guard saw the referee go (its pipe closed, or its death signal); SIGTERM:
    # the referee stopped its bots itself
    assert gone == (sig == signal.SIGKILL)


# --- restarts ----------------------------------------------------------------------------------


@pytest.mark.serial  # its death is seen only if its guard exits within the referee's 2 s settle window
def test_a_killed_bot_is_restarted_once_on_its_port_however_many_notice(tmp_path: Path) -> None:
    bot = managed(tmp_path, SPAWNER, max_restarts=3, restart_backoff_ms=50)

    async def scenario() -> None:
        await start_ready(bot)
        port = bot.port
        assert await revive(bot) == (True, False, 0)  # alive: the fault was the bot's alone
        await until(lambda: spawner_pids(bot.log_path), PATIENCE_S, "its first line in its log (the guard copies it)")
        [(pid, sleeper)] = spawner_pids(bot.log_path)
        os.kill(pid, signal.SIGKILL)  # the bot only: its sleeper is left to the guard
        await until(lambda: not running(pid), PATIENCE_S, "the bot dead")  # as a match would notice it
        results = await asyncio.wait_for(asyncio.gather(*(revive(bot) for _ in range(10))), PATIENCE_S)
        assert all(r.alive for r in results)
        assert sum(r.restarted_now for r in results) == 1
        assert bot.restarts == 1 and not bot.down and bot.port == port
        assert await answers_hello(bot)
        assert not running(pid) and not running(sleeper)  # what the dead bot left was killed
        assert await revive(bot) == (True, False, 0) and bot.restarts == 1

    try:
        asyncio.run(scenario())
    finally:
        bot.stop()
    log = bot.log_path.read_text()
    assert "--- restart 1/3 after exit code -9 (SIGKILL)" in log
    assert "[guard] killed 1 leftover process(es) of the bot" in log
    assert len(re.findall(rf"start: port {bot.port}\n", log)) == 2
    (_, _), (new_pid, new_sleeper) = spawner_pids(bot.log_path)
    assert not running(new_pid) and not running(new_sleeper)
    assert bot.proc is not None and bot.proc.returncode is not None
    bot.stop()  # idempotent


def test_a_bot_that_keeps_dying_ends_down_after_its_restarts_with_backoff(tmp_path: Path) -> None:
    bot = managed(tmp_path, DIES_AT_ONCE, max_restarts=3, restart_backoff_ms=50)
    bot.start()
    wait_until(lambda: not bot.alive(), PATIENCE_S, "the bot's first exit")
    assert bot.proc is not None and bot.proc.returncode == 3  # the guard exits as the bot did

    waits = record_backoffs(bot)

    async def scenario() -> list[Revival]:
        return await asyncio.gather(*(revive(bot) for _ in range(5)))

    try:
        results = asyncio.run(scenario())
        assert [r[:2] for r in results] == [(False, False)] * 5
        assert sum(r.attempts for r in results) == 3  # the failed attempts are counted
        assert bot.down and bot.restarts == 3
        assert waits == [0.05, 0.1, 0.2]  # one backoff before each restart (5 callers share them), doubling
        assert asyncio.run(revive(bot)) == (False, False, 0) and bot.restarts == 3
    finally:
        bot.stop()
    log = bot.log_path.read_text()
    for n in (1, 2, 3):
        assert f"--- restart {n}/3 after exit code 3\n" in log
        assert f"--- restart {n}/3 failed: exit code 3\n" in log
    assert "--- restart 4/3" not in log and "--- down after 3 restart(s)" in log
    assert len(re.findall(rf"start: port {bot.port}\n", log)) == 4


def test_stop_stops_a_bot_waiting_for_its_restart(tmp_path: Path) -> None:
    # a backoff of an hour: the revival can only end within the test's minute if stop cuts it short
    bot = managed(tmp_path, DIES_AT_ONCE, max_restarts=3, restart_backoff_ms=3_600_000)
    bot.start()
    wait_until(lambda: not bot.alive(), PATIENCE_S, "the bot's first exit")
    waits = record_backoffs(bot)

    async def scenario() -> Revival:
        task = asyncio.create_task(revive(bot))
        await until(lambda: bool(waits), PATIENCE_S, "the backoff began")
        bot.stop()
        return await asyncio.wait_for(task, PATIENCE_S)

    result = asyncio.run(scenario())
    assert result == (False, False, 0) and waits == [3600.0]
    assert bot.restarts == 0 and bot.log_path.read_text().count("start: port") == 1


def test_stop_stops_a_restarted_bot_that_is_not_ready_yet(tmp_path: Path) -> None:
    bot = managed(tmp_path, DIES_THEN_HANGS + [str(tmp_path / "started-once")], max_restarts=3, restart_backoff_ms=10)
    bot.start()
    wait_until(lambda: not bot.alive(), PATIENCE_S, "the bot's first exit")

    async def scenario() -> Revival:
        # a start-up window ten times the test's patience: the revival ends in time only if stop cuts it short
        task = asyncio.create_task(revive(bot, startup_ms=10 * PATIENCE_S * 1000))
        await until(lambda: "hanging" in bot.log_path.read_text(), PATIENCE_S, "the restarted bot started")
        bot.stop()
        return await asyncio.wait_for(task, PATIENCE_S)

    assert asyncio.run(scenario()) == (False, False, 1)
    [hanging] = re.findall(r"hanging (\d+)", bot.log_path.read_text())
    assert not running(int(hanging))
    assert bot.restarts == 1 and not bot.alive()
    with pytest.raises(BotStartError, match="was stopped"):
        bot.start()


# --- the guard's pipe ----------------------------------------------------------------------------


def test_the_guard_pipe_reaches_no_other_process(tmp_path: Path) -> None:
    up = ["python", "-c", "import time; print('up', flush=True); time.sleep(60)"]
    first, second = managed(tmp_path / "a", up), managed(tmp_path / "b", up)
    try:
        first.start()
        second.start()
        for bot in (first, second):
            wait_until(lambda bot=bot: "up" in bot.log_path.read_text(), PATIENCE_S, "the bot started by its guard")
        assert first.proc is not None and first.proc.stdin is not None
        pipe = f"pipe:[{os.fstat(first.proc.stdin.fileno()).st_ino}]"
        holders = set()
        for fd in Path("/proc").glob("[0-9]*/fd/*"):
            try:
                if os.readlink(fd) == pipe:
                    holders.add(int(fd.parts[2]))
            except OSError:
                continue
        assert holders == {os.getpid(), first.proc.pid}  # the write end here, the read end in its guard
    finally:
        first.stop()
        second.stop()


def test_a_restart_refuses_a_port_another_process_took(tmp_path: Path) -> None:
    bot = managed(tmp_path, GREEDY, max_restarts=2, restart_backoff_ms=10)

    async def scenario() -> Revival:
        await start_ready(bot)
        assert bot.proc is not None
        os.killpg(bot.proc.pid, signal.SIGKILL)
        # the bot may close its socket after its guard is gone
        await until(lambda: not bot.alive() and not port_taken(bot.port), PATIENCE_S, "the bot and its port gone")
        with socket.create_server(("127.0.0.1", bot.port)):  # a squatter that would answer hello
            return await asyncio.wait_for(revive(bot), PATIENCE_S)

    try:
        assert asyncio.run(scenario()) == (False, False, 2)  # two attempts, both failed
    finally:
        bot.stop()
    assert bot.down and bot.restarts == 2
    log = bot.log_path.read_text()
    assert log.count(f"failed: port {bot.port} is taken by another process") == 2
    assert log.count("start: port") == 1  # nothing was started on the squatter's port


def test_free_port_never_hands_out_a_port_twice() -> None:
    """The system offers a port again once its probe is closed, often before the bot that
    got it listens (3,000 bare probes here gave ~300 repeats); two caged bots of a run on one
    port shared the pool's connections to it and answered each other's requests with 401."""
    ports = [free_port() for _ in range(3000)]
    assert len(set(ports)) == len(ports)
