"""A managed bot that hangs (its process alive, its port held, no answer to anything) is
found out after a few timeouts in a row, killed and restarted: later decisions are its
own again, and the restarts are counted in the journal and the standings. Its timeouts
stay its faults; the other bots are not charged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.store import transcripts
from tests.support.cli import ROOT, referee
from tests.support.tournament import NIMMT

pytestmark = pytest.mark.serial

FREEZING = ["python", str(ROOT / "tests" / "bots" / "freezing.py")]
# answers per life before it hangs: 15 answers and 3 timeouts a life, so 2 restarts in the
# match's 45 decisions and 9 to spare (each life costs its timeouts, a hello and a restart)
LIFE = 15


def test_a_hung_bot_is_restarted_and_plays_again(tmp_path: Path) -> None:
    bots = [("hangs", FREEZING + [str(LIFE)]), ("greedy", NIMMT + ["greedy"]), ("cautious", NIMMT + ["cautious"])]
    lines = [
        "[tournament]",
        'name = "hung"',
        'game = "nimmt_plus"',
        "seed = 4",
        "players = 3",
        'format = "random"',
        "matches = 1",  # 45 decisions of the hung bot: 3 lives (the backoff doubles with each)
        "concurrency = 1",
        f'output = "{tmp_path / "out"}"',
        "[limits]",
        "deadline_ms = 300",
        "max_faults = 1000",
        "max_restarts = 10",
        "restart_backoff_ms = 50",
    ]
    for name, command in bots:
        lines += ["[[bot]]", f'name = "{name}"', f"command = {json.dumps(command + ['--port', '{port}'])}"]
    config = tmp_path / "hung.toml"
    config.write_text("\n".join(lines) + "\n")
    done = referee("run", str(config), "-q")
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    recs = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    restarts = sum(r.get("restarts", [0] * 3)[r["bots"].index("hangs")] for r in recs)
    assert restarts >= 2, recs  # it hangs after 5 answers each life: found out and restarted again and again
    faults = [f for r in recs for f in r["faults"]]
    assert faults and {f["bot"] for f in faults} == {"hangs"} and {f["kind"] for f in faults} == {"timeout"}
    # between hangs it answers again: runs of its own moves after runs of fallbacks
    by = "".join(
        ("b" if m.by == "bot" else "f")
        for t in transcripts.read_all(out)
        for m in t.moves
        if t.seats and recs[0]["bots"] and m.seat == next(r for r in recs if r["id"] == t.id)["bots"].index("hangs")
    )
    assert "fb" in by, by
    log = (out / "logs" / "hangs.log").read_text()
    assert "unresponsive: no answer to hello" in log and "restart 1/10" in log
    standings = json.loads((out / "standings.json").read_text())
    row = next(r for r in standings["standings"] if r["name"] == "hangs")
    assert row["restarts"] == restarts
