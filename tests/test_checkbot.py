"""``referee check-bot`` against real bot servers: misbehaving ones (each finding reported
once, with a hint where its cause is known, exit non-zero; checks a fault made impossible
skipped), bots with a quirk worth a warning, a bot checked as a tournament file runs it,
and the sample bots, Python and JavaScript (clean, exit 0); its recorder over a scripted
transport.

Parallel: every check here runs under ``HONEST``, a deadline no load reaches, but those
whose point is a late reply, a serial bot or the TCP-delay pattern (marked serial)."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

from referee.audit.checkbot import Recorder, Traffic
from referee.bots.client import wire
from referee.bots.client.scripted import ScriptedTransport
from referee.bots.client.transport import Target, TransportError
from referee.bots.client.wire import Endpoint
from tests.support.checkbot import HONEST, HOSTILE, ROOT, SERIAL, check_bot, line, quirky, wait_listening

pytestmark = pytest.mark.parallel

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH: the JavaScript sample bot cannot run")


@pytest.fixture
def hostile_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A hostile server of the mode given by indirect parametrization, at a URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mode, *extra = request.param.split()
    proc = subprocess.Popen([sys.executable, HOSTILE, "--mode", mode, "--port", str(port), *extra])
    try:
        wait_listening(port)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("hostile_url", ["illegal"], indirect=True)
def test_illegal_moves_are_reported_with_request_and_reply(hostile_url: str) -> None:
    result = check_bot(hostile_url, "--game", "nimmt_plus", "--matches", "2", *HONEST)
    assert result.exit_code == 1, result.output
    faults = line(result, "faults")
    assert faults.startswith("  FAIL") and "illegal 22" in faults  # 11 faulted acts per match, then fallback
    assert 'action "not a legal action" is not in legal' in result.output  # as JSON, never Python's repr
    assert "request: act decision 0: state {" in result.output
    assert 'reply:   HTTP 200 {"action": "not a legal action"}' in result.output
    # every reply faulted: the probes have nothing to ask with, the schema nothing to judge
    # (one verdict per reply); a concurrent bot is not told to serve requests concurrently
    for name in ("concurrency", "re-asked decision", "reply schema"):
        assert line(result, name) == f"  skip {name}: skipped: every reply faulted (see faults)"
    assert line(result, "start/end").startswith("  ok")
    assert result.output.rstrip().endswith("result: FAIL (1 check failed, 0 warnings)")


@pytest.mark.parametrize("hostile_url", ["notjson"], indirect=True)
def test_garbage_is_reported(hostile_url: str) -> None:
    result = check_bot(hostile_url, "--game", "drahtseilakt", "--matches", "1", "--players", "3", *HONEST)
    assert result.exit_code == 1
    assert "malformed 11" in line(result, "faults")
    assert "not JSON: 'hello there'" in result.output
    assert "reply:   HTTP 200 hello there" in result.output


@pytest.mark.parametrize("hostile_url", ["close"], indirect=True)
def test_closed_connections_are_reported(hostile_url: str) -> None:
    result = check_bot(hostile_url, "--game", "nimmt_plus", "--matches", "1", *HONEST)
    assert result.exit_code == 1
    assert "error 11" in line(result, "faults")
    assert "connection closed before a complete response" in result.output


@pytest.mark.serial
@pytest.mark.parametrize("hostile_url", ["slow --delay-ms 900"], indirect=True)
def test_timeouts_are_reported(hostile_url: str) -> None:
    # 11 timeouts in a row: a short deadline, each reply far past it
    result = check_bot(hostile_url, "--game", "nimmt_plus", "--matches", "1", "--deadline-ms", "100")
    assert result.exit_code == 1
    assert "timeout 11" in line(result, "faults")
    assert "no complete reply within 100 ms" in result.output
    assert line(result, "latency").startswith("  FAIL")
    # a slow bot may well serve requests concurrently: with every reply late, that cannot be told;
    # and the connections closed after each timeout are the referee's, not a keep-alive failure
    assert line(result, "concurrency").startswith("  skip")
    keep_alive = line(result, "keep-alive")
    assert keep_alive.startswith("  ok") and "closed by the referee after a fault)" in keep_alive


@pytest.mark.serial
def test_a_bot_serving_one_request_at_a_time_fails_the_concurrency_probe() -> None:
    # one match: the bot holds one seat, so only the probe asks it two things at once
    result = check_bot(
        "--game", "nimmt_plus", "--matches", "1", "--deadline-ms", "400", "--", "python", SERIAL, "--port", "{port}"
    )
    assert result.exit_code == 1
    concurrency = line(result, "concurrency")
    assert concurrency.startswith("  FAIL") and "not answered in time" in concurrency
    # asked again on one connection, it answers: that finding is not confused with the other
    assert line(result, "re-asked decision").startswith("  ok")


def test_a_one_at_a_time_bot_is_clean_when_the_tournament_promises_one_request() -> None:
    result = check_bot(
        "--game",
        "nimmt_plus",
        "--matches",
        "2",
        "--max-concurrent",
        "1",
        *HONEST,
        "--",
        "python",
        SERIAL,
        "--port",
        "{port}",
    )
    assert result.exit_code == 0, result.output
    assert "not probed: --max-concurrent 1 (up to 1 request in flight" in line(result, "concurrency")


def test_a_bot_that_dies_is_reported_with_its_log() -> None:
    result = check_bot(
        "--game", "nimmt_plus", "--matches", "1", *HONEST, "--", "python", HOSTILE, "--mode", "exit", "--port", "{port}"
    )
    assert result.exit_code == 1
    process = line(result, "process")
    assert process.startswith("  FAIL") and "exit code 3" in process
    assert "hostile exit: exits with code 3" in result.output  # the first error of its log
    assert line(result, "faults").startswith("  FAIL")


def test_a_bot_that_checks_its_token_gets_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    token_bot = str(ROOT / "tests" / "bots" / "token_bot.py")
    started = check_bot(
        "--game", "nimmt_plus", "--matches", "1", *HONEST, "--", "python", token_bot, "--port", "{port}"
    )
    assert started.exit_code == 0, started.output  # a started bot: its random token, as in a tournament
    assert line(started, "token").startswith("  ok") and started.output.rstrip().endswith("result: clean")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"PATH": "/usr/bin:/bin", "REFEREE_BOT_TOKEN": "s3cret-for-the-test"}
    # a copy: uncaged, the bot writes a file next to itself, which must not land in tests/bots/
    copy = str(shutil.copy(token_bot, tmp_path / "token_bot.py"))
    proc = subprocess.Popen([sys.executable, copy, "--port", str(port)], env=env, stdout=subprocess.DEVNULL)
    try:
        wait_listening(port)
        url = f"http://127.0.0.1:{port}/"
        without = check_bot("--game", "nimmt_plus", "--matches", "1", "--startup-ms", "5000", *HONEST, url)
        assert without.exit_code == 1 and "HTTP 401" in without.output
        assert "hint: HTTP 401: the bot wants a token; give it with --token-env NAME" in without.output
        monkeypatch.setenv("BOT_TOKEN", "s3cret-for-the-test")
        with_token = check_bot("--game", "nimmt_plus", "--matches", "1", "--token-env", "BOT_TOKEN", *HONEST, url)
        assert with_token.exit_code == 0, with_token.output
        assert "refused with HTTP 401" in line(with_token, "token")  # without it, and with a wrong one
        assert "s3cret" not in with_token.output
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_bot_that_does_not_start_shows_its_log() -> None:
    result = check_bot("--game", "nimmt_plus", "--", "python", "-c", "import sys; sys.exit('bad {port}')")
    assert result.exit_code == 1
    assert line(result, "start").startswith("  FAIL")
    assert "exited with code 1 before it was ready" in result.output
    assert "bad " in result.output


def test_usage_errors() -> None:
    assert check_bot("--game", "chess", "http://127.0.0.1:1/").exit_code == 2
    assert check_bot("--game", "nimmt_plus", "--", "python", "bot.py").exit_code == 2  # no {port}
    bad = check_bot("--game", "nimmt_plus", "--option", "variant=pluss", "http://127.0.0.1:1/")
    assert bad.exit_code == 2 and "variant" in bad.output
    assert check_bot("--game", "nimmt_plus", "--players", "9", "http://127.0.0.1:1/").exit_code == 2
    https = check_bot("--game", "nimmt_plus", "https://127.0.0.1:1/")
    assert https.exit_code == 2 and "http:// only" in https.output


def test_an_unreachable_url_fails() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = check_bot("--game", "nimmt_plus", "--startup-ms", "500", f"http://127.0.0.1:{port}/")
    assert result.exit_code == 1
    assert line(result, "hello").startswith("  FAIL")


@pytest.mark.parametrize(
    ("game", "command"),
    [
        ("nimmt_plus", ["python", "-m", "sample_bots.nimmt", "cautious"]),
        ("drahtseilakt", ["python", "-m", "sample_bots.drahtseilakt", "balance"]),
        ("dieci", ["python", "-m", "sample_bots.dieci", "keeper"]),
        ("the_game", ["python", "-m", "sample_bots.the_game", "heuristic"]),
    ],
)
def test_the_sample_bots_are_clean(game: str, command: list[str]) -> None:
    result = check_bot("--game", game, "--matches", "2", *HONEST, "--", *command, "--port", "{port}")
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith("result: clean")
    assert "FAIL" not in result.output


def test_every_variant_of_the_game_with_claims() -> None:
    result = check_bot(
        "--game",
        "the_game",
        "--all-variants",
        "--option",
        "pro=false",
        "--option",
        "reduced_hand=false",
        "--matches",
        "1",
        *HONEST,
        "--",
        "python",
        "-m",
        "sample_bots.the_game",
        "heuristic",
        "--port",
        "{port}",
    )
    assert result.exit_code == 0, result.output
    assert "4 of 4 option sets clean" in result.output  # on_fire x communication
    assert 'communication = "none"' in result.output


@needs_node
def test_the_javascript_sample_is_clean_in_every_variant() -> None:
    result = check_bot(
        "--game",
        "nimmt_plus",
        "--all-variants",
        "--matches",
        "2",
        *HONEST,
        "--",
        "node",
        "sample_bots/js/nimmt.js",
        "--port",
        "{port}",
    )
    assert result.exit_code == 0, result.output
    assert "4 of 4 option sets clean" in result.output


def test_the_recorder_keeps_each_exchange_with_the_bot_under_test_and_passes_all_on() -> None:
    """The recorder wraps any transport (here a scripted one): requests to the bot under
    test are kept with their outcome, others pass unrecorded, nothing is sent at once."""

    async def bot(target: Target, body: bytes) -> tuple[int, bytes]:
        msg = json.loads(body)
        await asyncio.sleep(0)  # every request is in flight before any is answered
        if msg["match"] == "slow":
            await asyncio.sleep(5)
        if msg["match"] == "broken":
            raise TransportError("connection closed before a complete response")
        if msg["match"] == "big":
            return 200, b"x" * 2000
        return (500 if msg["match"] == "bad" else 200), b'{"action": 1}'

    def act(match: str) -> bytes:
        return json.dumps({"type": "act", "match": match, "seat": 0, "decision": 1}).encode()

    def deadline(match: str) -> int:
        return 300 if match == "slow" else 30_000  # only the slow one's reply is never in time

    async def go() -> tuple[Traffic, list[str | None], bool]:
        traffic = Traffic("127.0.0.1", 9)
        watched = Endpoint.make("candidate", "http://127.0.0.1:9/", None)
        other = Endpoint.make("sample", "http://127.0.0.1:10/", None)
        async with Recorder(ScriptedTransport(bot), traffic) as client:
            sent_now = wire.send_now(client, watched, act("ok"), 300, 1024) is not None
            asks = [
                wire.post(client, watched, act(m), deadline(m), 1024) for m in ("ok", "bad", "slow", "broken", "big")
            ]
            asks.append(wire.post(client, other, act("elsewhere"), deadline("elsewhere"), 1024))
            faults = [ex.fault for ex in await asyncio.gather(*asks)]
        return traffic, faults, sent_now

    traffic, faults, sent_now = asyncio.run(go())
    assert faults == [None, "error", "timeout", "error", "malformed", None]
    assert not sent_now
    seen = {key[1]: s for key, s in traffic.seen.items()}
    assert sorted(seen) == ["bad", "big", "broken", "ok", "slow"]  # not the other bot's
    assert (seen["ok"].status, seen["ok"].reply) == (200, b'{"action": 1}')
    assert (seen["bad"].status, seen["bad"].error) == (500, "")
    assert seen["slow"].error == "no complete reply by the deadline"
    assert seen["broken"].error == "connection closed before a complete response"
    assert seen["big"].over_cap and seen["big"].reply is None
    assert traffic.requests == 5 and traffic.max_in_flight == 5 and traffic.in_flight == 0
    assert traffic.replies == [(act("ok"), b'{"action": 1}')]  # answered acts, for the probes
    assert traffic.largest_reply == len(b'{"action": 1}')


def test_a_float_for_an_integer_is_reported_once_as_that() -> None:
    result = quirky("float", *HONEST)
    assert result.exit_code == 1
    assert "illegal 11" in line(result, "faults")
    assert (
        'action 1.0 is not in legal (9 actions): hint: send 1, not 1.0: a float where an integer is legal (no ".0")'
        in result.output
    )
    # one verdict per reply: never "ok reply schema" beside the fault
    assert line(result, "reply schema").startswith("  skip")
    assert " ok   reply schema" not in result.output


def test_an_answer_to_an_earlier_decision_says_which() -> None:
    result = quirky("earlier", *HONEST)
    assert result.exit_code == 1
    assert "it is in the legal list of decision 0 of this match and seat" in result.output
    schema_line = line(result, "reply schema")  # the legal replies only, the faulted ones counted apart
    assert schema_line.startswith("  ok") and "faulted replies under faults)" in schema_line


@pytest.mark.serial
def test_the_tcp_delay_pattern_is_warned() -> None:
    nagle = quirky("nagle")  # its ~40 ms replies are what is judged: under load they would be others
    assert nagle.exit_code == 0, nagle.output
    latency = line(nagle, "latency")
    assert latency.startswith("  WARN") and "TCP-delay pattern" in latency and "sun.net.httpserver.nodelay" in latency


def test_connections_never_reused_are_warned() -> None:
    closing = quirky("close", *HONEST)
    assert closing.exit_code == 0, closing.output
    keep_alive = line(closing, "keep-alive")
    assert (
        keep_alive.startswith("  WARN")
        and "29 requests over 29 connections: the bot closes its connections" in keep_alive
    )
    assert line(closing, "latency").startswith("  ok")  # TCP_NODELAY: no 40 ms


def test_a_bot_is_checked_as_its_tournament_file_runs_it(tmp_path: Path) -> None:
    sample = ["python", "-m", "sample_bots.drahtseilakt"]
    doc = {
        "tournament": {"name": "t", "game": "drahtseilakt", "players": 3},
        "game": {"chaotic": True},
        "limits": {"deadline_ms": 30000, "max_response_bytes": 4096, "memory_mb": 512},
        "bot": [
            {"name": "mine", "command": [*sample, "balance", "--port", "{port}"], "limits": {"memory_mb": 300}},
            {"name": "other", "command": [*sample, "random", "--port", "{port}"]},
            {"name": "third", "url": "http://127.0.0.1:1/"},
        ],
    }
    config = tmp_path / "t.toml"
    config.write_text(tomli_w.dumps(doc))
    result = check_bot("--config", str(config), "--bot", "mine", "--matches", "1")
    assert result.exit_code == 0, result.output
    head = result.output.splitlines()[:2]
    assert "on drahtseilakt (tactical = false, chaotic = true): 1 match of 3 players, deadline 30000 ms" in head[0]
    assert f"as {config}, bot mine runs it: deadline 30000 ms" in head[1]
    assert "replies up to 4096 bytes" in head[1] and "memory 300 MB" in head[1]  # the bot's own cage limit
    assert "(cap 4096)" in line(result, "reply size")
    assert check_bot("--config", str(config), "--bot", "nobody").exit_code == 2
    both = check_bot("--config", str(config), "--bot", "mine", "--deadline-ms", "5")
    assert both.exit_code == 2 and "--deadline-ms: with --config these come from" in both.output
