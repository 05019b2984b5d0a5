"""The benches' fast bot (``benchmarks.fast_bot``), in Node and in Python, answers as a bot
must: the first legal action exactly, whatever brackets and quotes the legal list holds,
requests pipelined on one keep-alive connection or split across reads, ``ok`` to
everything else; with the ``random`` policy, legal actions and not always the same one."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks import fast_bot
from referee.bots.client import protocol

pytestmark = pytest.mark.parallel

CTX = protocol.MatchContext("t", "m", "g", {}, ["a", "b"])
LEGALS: list[list[Any]] = [
    [[5, 6], [7]],
    [{"cards": [1, "]"], "s": 'x"],['}, 3],
    ['a\\"]b', "c"],
    [[[0, 0], []], 1],
    [42],
]
STATE = {"legal": ["not", "this"], "history": [{"legal": [9]}]}


@pytest.fixture(params=["node", "python"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "node" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    return str(request.param)


def _request(body: bytes) -> bytes:
    return b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body)


def _replies(sock: socket.socket, n: int) -> list[Any]:
    data = b""
    out: list[Any] = []
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


def _exchange(bot: fast_bot.Running, bodies: list[bytes], split: int = 37) -> list[Any]:
    wire = b"".join(_request(b) for b in bodies)
    with socket.create_connection(("127.0.0.1", bot.port), timeout=5) as s:
        s.sendall(wire[:split])  # a request split across reads, then the rest pipelined
        s.sendall(wire[split:])
        return _replies(s, len(bodies))


@pytest.fixture
def first(kind: str) -> Iterator[fast_bot.Running]:
    with fast_bot.running("first", kind) as bot:  # the benches' own start-up of it
        assert bot.kind == kind
        yield bot


def test_the_first_legal_action_whatever_it_holds_pipelined_and_split(first: fast_bot.Running) -> None:
    bodies = [protocol.act(CTX, 0, i, 1000, STATE, legal) for i, legal in enumerate(LEGALS)]
    bodies.append(protocol.start(CTX, 1))
    assert _exchange(first, bodies) == [{"action": legal[0]} for legal in LEGALS] + [{"ok": True}]


def test_a_time_bank_before_the_legal_list_changes_nothing(first: fast_bot.Running) -> None:
    body = protocol.act(CTX, 1, 0, 1000, STATE, LEGALS[1], time_bank_ms=500)
    assert _exchange(first, [body], split=5) == [{"action": LEGALS[1][0]}]


def test_the_random_policy_answers_legal_actions_and_not_always_the_same(kind: str) -> None:
    bodies = [protocol.act(CTX, 0, i, 1000, STATE, legal) for i in range(40) for legal in LEGALS]
    with fast_bot.running("random", kind) as bot:
        got = _exchange(bot, bodies)
    assert all(isinstance(g, dict) and g["action"] in legal for g, legal in zip(got, LEGALS * 40))
    per_list = [{json.dumps(g) for g in got[i :: len(LEGALS)]} for i in range(len(LEGALS))]
    assert [len(s) for s in per_list] == [2, 2, 2, 2, 1]  # 40 draws from 2: both seen
