"""The benches' bot server (``benchmarks/fast_bot.js``: Node's ``net``, a minimal HTTP
reader, the first legal action found by a bracket scan) answers as a bot must: the first
legal action exactly, whatever brackets and quotes the legal list holds, requests
pipelined on one keep-alive connection or split across reads, ``ok`` to everything else."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.speed import start_bot_server
from referee.bots import protocol

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    proc, port, kind = start_bot_server(tmp_path)  # the benches' own start-up of it
    try:
        assert kind == "node"
        yield port
    finally:
        proc.kill()
        proc.wait()


def _request(body: bytes) -> bytes:
    return b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body)


def _replies(sock: socket.socket, n: int) -> list[object]:
    data, out = b"", []
    while len(out) < n:
        chunk = sock.recv(65536)
        assert chunk, "the bot closed the connection"
        data += chunk
        while b"\r\n\r\n" in data:
            head, rest = data.split(b"\r\n\r\n", 1)
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            if len(rest) < length:
                break
            out.append(json.loads(rest[:length]))
            data = rest[length:]
    return out


def test_the_first_legal_action_whatever_it_holds_pipelined_and_split(port: int) -> None:
    ctx = protocol.MatchContext("t", "m", "g", {}, ["a", "b"])
    legals = [
        [[5, 6], [7]],
        [{"cards": [1, "]"], "s": 'x"],['}, 3],
        ['a\\"]b', "c"],
        [[[0, 0], []], 1],
        [42],
    ]
    state = {"legal": ["not", "this"], "history": [{"legal": [9]}]}
    bodies = [protocol.act(ctx, 0, i, 1000, state, legal) for i, legal in enumerate(legals)]
    bodies.append(protocol.start(ctx, 1))
    wire = b"".join(_request(b) for b in bodies)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(wire[:37])  # a request split across reads, then the rest pipelined
        s.sendall(wire[37:])
        got = _replies(s, len(bodies))
    assert got == [{"action": legal[0]} for legal in legals] + [{"ok": True}]
