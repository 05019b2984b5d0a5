"""The event loop the referee plays on (``bots/client/eventloop.py``): uvloop where it is
installed, asyncio's own when asked (or without uvloop); the same tournament on each
publishes the same files, journal and transcripts (response times aside); a deadline
taken from uvloop's millisecond clock is never early."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from pathlib import Path

import pytest

from referee.bots.cage.process import free_port
from referee.bots.client import eventloop, wire
from referee.bots.client.pool import LeanPool
from referee.bots.client.transport import Target, TransportError
from tests.support.cluster import assert_same_outputs, config_text, run, serve_url_bot

pytestmark = pytest.mark.parallel


async def _loop_and_lead() -> tuple[type, float]:
    """The running loop's class, and how far past the true time (``time.monotonic``, the
    clock of both loops) a 1000 ms deadline lies, read just before it is taken."""
    await asyncio.sleep(0.0037)  # off any millisecond boundary
    before = time.monotonic()
    deadline = wire._deadline(1000.0)
    return type(asyncio.get_running_loop()), deadline - before


def test_asyncio_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """``REFEREE_EVENT_LOOP=asyncio``: asyncio's own loop, whose clock needs no step."""
    monkeypatch.setenv(eventloop.ENV, "asyncio")
    assert eventloop.loop_factory() is None and eventloop.name() == "asyncio"
    kind, lead = eventloop.run(_loop_and_lead())
    assert issubclass(kind, asyncio.BaseEventLoop)
    assert eventloop.clock_step(asyncio.new_event_loop()) == 0.0
    assert lead >= 1.0


def test_uvloop_where_installed_and_its_deadlines_are_never_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the variable uvloop is picked where installed; its clock counts whole
    milliseconds, so a deadline is set a step later: never before 1000 ms from the true time."""
    uvloop = pytest.importorskip("uvloop")
    monkeypatch.delenv(eventloop.ENV, raising=False)
    assert eventloop.name() == "uvloop"
    for _ in range(20):
        kind, lead = eventloop.run(_loop_and_lead())
        assert kind is uvloop.Loop
        assert lead >= 1.0
    assert eventloop.clock_step(uvloop.new_event_loop()) == 0.001


def test_a_tournament_publishes_the_same_on_both_loops(tmp_path: Path) -> None:
    """The CLI's run on uvloop and on asyncio's loop: the same outputs, response times aside."""
    pytest.importorskip("uvloop")
    with serve_url_bot() as url:
        outs = {}
        for kind in ("uvloop", "asyncio"):
            outs[kind] = tmp_path / kind
            config = tmp_path / f"{kind}.toml"
            config.write_text(config_text(outs[kind], url, rounds=1))
            run(config, outs[kind], env={eventloop.ENV: kind})
    assert_same_outputs(outs["uvloop"], outs["asyncio"])


async def _fault_details(refused_port: int, reset_port: int) -> list[str]:
    """The fault details of a request to a closed port and of one to a bot that resets
    the connection once the request is in, through the lean pool."""
    pool = LeanPool()
    out = []
    for port in (refused_port, reset_port):
        target = Target.make(f"http://127.0.0.1:{port}/", {"Content-Type": "application/json"})
        try:
            await pool.request(target, b"{}", asyncio.get_running_loop().time() + 10, 1000)
        except TransportError as exc:
            out.append(str(exc))
    pool.close()
    return out


def test_connection_failures_read_the_same_on_both_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused connection and a reset one are the same faults, word for word, on uvloop
    and on asyncio's loop (a Dask worker plays on asyncio's while the head is on uvloop)."""
    pytest.importorskip("uvloop")
    refused = free_port()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        stop = threading.Event()

        def reset_each() -> None:
            """Read a request, then reset the connection (RST, not FIN)."""
            while not stop.is_set():
                conn, _ = server.accept()
                conn.recv(65536)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()

        threading.Thread(target=reset_each, daemon=True).start()
        details = {}
        for kind in ("asyncio", "uvloop"):
            monkeypatch.setenv(eventloop.ENV, kind)
            details[kind] = eventloop.run(_fault_details(refused, server.getsockname()[1]))
        stop.set()
    assert details["asyncio"] == details["uvloop"]
    assert details["asyncio"][0] == f"cannot connect to 127.0.0.1:{refused}: Connection refused"
    assert len(details["asyncio"]) == 2
