"""The sample bots answer only the referee: real bot processes (Python and JavaScript)
given ``REFEREE_BOT_TOKEN`` answer 401 to a request without ``Authorization: Bearer
<token>`` or with another token, and play normally with it; without the variable they
accept every request. Each sample tournament, shortened, still plays without a fault."""

from __future__ import annotations

import contextlib
import http.client
import json
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from referee.bots.cage.process import free_port
from tests.support.tournament import UNREACHABLE_DEADLINE_MS, UNREACHABLE_STARTUP_MS

pytestmark = pytest.mark.parallel  # deadlines and start-up windows out of any load's reach

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "t0ken-for-the-test"
HELLO = {"protocol": 1, "type": "hello", "tournament": "t", "game": "nimmt_plus", "options": {}, "bot": "b"}
ACT: dict[str, Any] = {  # the curl example of sample_bots/README.md
    "protocol": 1,
    "type": "act",
    "tournament": "t",
    "match": "m1",
    "seat": 0,
    "players": ["a", "b"],
    "decision": 0,
    "deadline_ms": 1000,
    "game": "nimmt_plus",
    "options": {"variant": "plus"},
    "state": {
        "variant": "plus",
        "lower_is_better": False,
        "zero_heads": 0,
        "seat": 0,
        "seats": 2,
        "hand": [5, 27, 49],
        "rows": [[10], [20], [30], [40]],
        "hand_sizes": [3, 3],
        "points": [{"cards": [], "heads": 0}, {"cards": [], "heads": 0}],
        "history": [],
        "to_act": [0, 1],
        "your_turn": True,
    },
    "legal": [[5], [27], [49], [5, 27], [5, 49], [27, 49]],
}
PY_NIMMT = [sys.executable, "-m", "sample_bots.nimmt", "greedy"]
JS_NIMMT = ["node", str(ROOT / "sample_bots" / "js" / "nimmt.js")]
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


@contextlib.contextmanager
def bot(argv: list[str], token: str | None) -> Iterator[http.client.HTTPConnection]:
    """A sample bot process (with ``REFEREE_BOT_TOKEN`` when ``token``) and a keep-alive connection to it."""
    port = free_port()
    env = {"PATH": "/usr/bin:/bin"} | ({"REFEREE_BOT_TOKEN": token} if token is not None else {})
    proc = subprocess.Popen([*argv, "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening on http://127.0.0.1:")  # printed once it listens
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=UNREACHABLE_DEADLINE_MS / 1000)
        try:
            yield conn
        finally:
            conn.close()
    finally:
        proc.terminate()
        proc.wait(10)


def post(conn: http.client.HTTPConnection, message: dict[str, Any], auth: str | None) -> tuple[int, Any]:
    """POST ``message`` on the open connection; the status and the decoded reply."""
    headers = {"Content-Type": "application/json"} | ({"Authorization": auth} if auth is not None else {})
    conn.request("POST", "/", json.dumps(message), headers)
    resp = conn.getresponse()
    return resp.status, json.loads(resp.read() or b"null")


@pytest.mark.parametrize("argv", [PY_NIMMT, pytest.param(JS_NIMMT, marks=needs_node)], ids=["python", "js"])
def test_a_sample_bot_answers_only_its_token(argv: list[str]) -> None:
    with bot(argv, TOKEN) as conn:
        # on one keep-alive connection: a refused request leaves it usable for the next
        for auth in (None, "", "Bearer", "Bearer wrong", f"Bearer {TOKEN}x", TOKEN, "Bearer \u00e9t\u00e9"):
            for message in (HELLO, ACT):
                status, reply = post(conn, message, auth)
                assert status == 401 and "action" not in (reply or {}), (auth, message["type"])
        assert post(conn, HELLO, f"Bearer {TOKEN}") == (200, {"ok": True})
        status, reply = post(conn, ACT, f"Bearer {TOKEN}")
        assert status == 200 and reply["action"] in ACT["legal"]


@pytest.mark.parametrize("argv", [PY_NIMMT, pytest.param(JS_NIMMT, marks=needs_node)], ids=["python", "js"])
def test_a_sample_bot_given_no_token_accepts_every_request(argv: list[str]) -> None:
    with bot(argv, None) as conn:
        for auth in (None, "Bearer anything"):
            status, reply = post(conn, ACT, auth)
            assert status == 200 and reply["action"] in ACT["legal"]


@pytest.mark.parametrize("module", ["drahtseilakt", "dieci", "the_game"])
def test_every_python_sample_checks_its_token(module: str) -> None:
    with bot([sys.executable, "-m", f"sample_bots.{module}", "random"], TOKEN) as conn:
        assert post(conn, HELLO, None)[0] == 401
        assert post(conn, HELLO, "Bearer wrong")[0] == 401
        assert post(conn, HELLO, f"Bearer {TOKEN}") == (200, {"ok": True})


@pytest.mark.parametrize("name", ["nimmt_plus", "drahtseilakt", "dieci", "the_game"])
def test_each_sample_tournament_plays_without_a_fault(tmp_path: Path, name: str) -> None:
    """The sample tournament of each game, a few matches long: every bot gets its token and answers it."""
    doc = tomllib.loads((ROOT / "configs" / f"{name}.toml").read_text())
    t = doc["tournament"]
    t["output"] = str(tmp_path / "out")
    t.pop("seed", None)
    limits = doc.setdefault("limits", {})
    limits |= {"deadline_ms": UNREACHABLE_DEADLINE_MS, "startup_ms": UNREACHABLE_STARTUP_MS}  # a fault: a token's
    if "rounds" in t:
        t["rounds"] = 1
    else:
        t["matches"] = 4
    config = tmp_path / f"{name}.toml"
    config.write_text(tomli_w.dumps(doc))
    done = subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads((tmp_path / "out" / "standings.json").read_text())["standings"]
    assert {r["name"] for r in rows} == {b["name"] for b in doc["bot"]}
    for r in rows:
        assert r["matches"] > 0 and r["decisions"] > 0, r["name"]
        assert r["faults"]["total"] == 0 and r["notice_faults"] == 0, r
