"""``referee check-bot`` keeps the protocol's promises to a bot author, against real HTTP
bots: a bot that memoises its answers exactly as ``docs/protocol.md`` allows is clean in
every variant of every game, also checked twice at one URL (no decision key is ever sent
twice with another state); a near miss of a legal action (floats at any depth, a bare value
for a one-element list and the reverse, a misspelt key) gets a hint naming the legal value
as JSON; a slow bot is told it is slow, not that it cannot serve requests concurrently; a
bot that ignores its token is warned.

Parallel: every check here runs under ``HONEST``, a deadline no load reaches, but the two
of slow bots (marked serial), whose deadlines are short and their replies far past them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

from referee.audit.checkbot import _near_miss
from referee.bots.cage.process import free_port
from referee.games import GAMES
from tests.support.checkbot import HONEST, QUIRKS, ROOT, check_bot, line, quirky, wait_listening

pytestmark = pytest.mark.parallel

MEMO = str(ROOT / "tests" / "bots" / "memo.py")
TOKEN = "kit-token-for-the-test"


@pytest.fixture
def memo_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The memoising bot, long-lived at a URL with a token (given to check-bot in $KIT_TOKEN)."""
    monkeypatch.setenv("KIT_TOKEN", TOKEN)
    port = free_port()
    env = {"PATH": os.environ["PATH"], "REFEREE_BOT_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, MEMO, "--port", str(port)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        wait_listening(port)
        yield f"http://127.0.0.1:{port}/", proc
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_bot_memoising_as_the_docs_allow_is_clean_in_every_variant_of_every_game(
    memo_url: tuple[str, subprocess.Popen[str]],
) -> None:
    url, proc = memo_url
    names = []
    for game in [*sorted(GAMES), "nimmt_plus"]:  # the last one again: a second run at the same URL
        result = check_bot("--game", game, "--all-variants", "--matches", "1", "--token-env", "KIT_TOKEN", *HONEST, url)
        assert result.exit_code == 0, result.output
        sets = re.search(r"^(\d+) of (\d+) option sets clean$", result.output, re.M)
        assert sets is not None and sets[1] == sets[2], result.output
        assert line(result, "token").startswith("  ok") and "refused with HTTP 401" in line(result, "token")
        names += re.findall(r'; tournament "(check-bot-[0-9a-f]+-\d+)"$', result.output, re.M)
    assert len(names) == len(set(names)) > len(GAMES)  # a name per run and option set
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    assert "stale" not in out  # never a decision seen before under a key, with another state


@pytest.mark.parametrize(
    ("mode", "game", "hint"),
    [
        ("float", "nimmt_plus", r'hint: send \[(\d+)\], not \[\1\.0\]: floats where integers are legal \(no "\.0"\)'),
        (
            "float",
            "the_game",
            r'action \{"card": (\d+)\.0, "pile": (\d)\.0\} is not in legal \(\d+ actions\): '
            r'hint: send \{"card": \1, "pile": \2\}, not \{"card": \1\.0, "pile": \2\.0\}: floats where integers',
        ),
        ("bare", "nimmt_plus", r"hint: send \[(\d+)\], not \1: a bare value where a one-element list is legal"),
        ("bare", "drahtseilakt", r"hint: send (\d+), not \[\1\]: a one-element list where the bare value is legal"),
        (
            "key",
            "the_game",
            r'hint: send \{"card": (\d+), "pile": (\d)\}, not \{"car": \1, "pile": \2\}: '
            r'the key "car" where the legal action has "card"',
        ),
    ],
)
def test_a_near_miss_of_a_legal_action_gets_a_hint_in_json(mode: str, game: str, hint: str) -> None:
    result = check_bot("--game", game, "--matches", "1", *HONEST, "--", "python", QUIRKS, mode, "--port", "{port}")
    assert result.exit_code == 1
    assert line(result, "faults").startswith("  FAIL")
    assert re.search(hint, result.output), result.output
    assert "{'" not in result.output  # no Python spelling of an action


def test_near_misses_name_the_legal_value() -> None:
    """The hint alone, on values no sample game has (and on none to give)."""
    assert _near_miss([1.0, [2.0, {"a": 3.0}]], [[1, [2, {"a": 3}]]]).startswith('send [1, [2, {"a": 3}]], not')
    assert _near_miss({"c": 4, "p": 0}, [{"card": 4, "pile": 1}, {"card": 4, "pile": 0}]) == (
        'send {"card": 4, "pile": 0}, not {"c": 4, "p": 0}: the keys "c", "p" where the legal action has "card", "pile"'
    )
    assert _near_miss(35.0, [[35]]) == (
        'send [35], not 35.0: a float where an integer is legal (no ".0"); a bare value where a one-element list is legal'
    )
    assert _near_miss(True, [1]) == _near_miss(7, [1, 2]) == _near_miss({"card": 5}, [{"card": 4}]) == ""


@pytest.mark.serial
def test_a_slow_bot_is_told_it_is_slow_not_that_it_is_serial() -> None:
    # every other answer 300 ms past the deadline: a short one, so its 11 timeouts cost little
    result = check_bot(
        "--game",
        "nimmt_plus",
        "--matches",
        "1",
        "--deadline-ms",
        "150",
        "--",
        "python",
        QUIRKS,
        "slow",
        "--port",
        "{port}",
    )
    assert result.exit_code == 1
    assert "timeout" in line(result, "faults") and line(result, "faults").startswith("  FAIL")
    assert line(result, "latency").startswith("  FAIL") and "p99 past the deadline" in line(result, "latency")
    for name, what in (("concurrency", "whether it serves requests concurrently"), ("re-asked decision", "whether")):
        verdict = line(result, name)
        assert verdict.startswith(f"  skip {name}: skipped: the bot's replies were late ("), verdict
        assert "a decision asked alone here was late too" in verdict and f"show its slowness, not {what}" in verdict
    assert "serve requests concurrently" not in result.output


@pytest.mark.serial
def test_a_bot_spending_its_time_bank_fails_on_latency_alone(tmp_path: Path) -> None:
    """Every answer 300 ms past the deadline, in a tournament with a time bank: the probes
    grant the bank the request carries, as a match does; no concurrency or re-ask blame."""
    doc = {
        "tournament": {"name": "t", "game": "dieci", "players": 4},
        "game": {"max_manches": 1},  # a short match: every answer of the bot is late
        "limits": {"deadline_ms": 100, "time_bank_ms": 60000},
        "bot": [
            {"name": "mine", "command": ["python", QUIRKS, "late", "--port", "{port}"]},
            *({"name": f"other{i}", "url": "http://127.0.0.1:1/"} for i in range(3)),
        ],
    }
    config = tmp_path / "t.toml"
    config.write_text(tomli_w.dumps(doc))
    result = check_bot("--config", str(config), "--bot", "mine", "--matches", "1")
    assert result.exit_code == 1, result.output
    assert line(result, "faults").startswith("  ok")  # the bank covers every answer
    assert line(result, "latency").startswith("  FAIL")
    assert line(result, "concurrency").startswith("  ok") and line(result, "re-asked decision").startswith("  ok")


def test_a_bot_that_ignores_its_token_is_warned(monkeypatch: pytest.MonkeyPatch) -> None:
    started = quirky("plain", *HONEST)  # a started bot always has a token
    assert started.exit_code == 0, started.output
    token = line(started, "token")
    assert token.startswith("  WARN") and "without the token: HTTP 200; with a wrong token: HTTP 200" in token
    assert "must answer every request without it (or with another) with 401" in token
    assert started.output.rstrip().endswith("result: clean (1 warning)")
    port = free_port()
    proc = subprocess.Popen([sys.executable, QUIRKS, "plain", "--port", str(port)])
    try:
        wait_listening(port)
        url = f"http://127.0.0.1:{port}/"
        without = check_bot("--game", "nimmt_plus", "--matches", "1", *HONEST, url)
        assert line(without, "token") == (
            "  ok   token: not checked: the bot has no token (a bot at a URL gets one with --token-env NAME)"
        )
        monkeypatch.setenv("KIT_TOKEN", TOKEN)
        given = check_bot("--game", "nimmt_plus", "--matches", "1", "--token-env", "KIT_TOKEN", *HONEST, url)
        assert given.exit_code == 0 and line(given, "token").startswith("  WARN"), given.output
        assert TOKEN not in given.output
    finally:
        proc.terminate()
        proc.wait(10)
