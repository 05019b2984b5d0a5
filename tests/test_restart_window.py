"""The restart window (issue 26): decisions that find a managed bot being restarted wait
for it within their deadline instead of each costing a fault ("cannot connect" at once).

A real tournament (6 nimmt!, 3 seats, four matches in flight) with a real bot that
crashes once and takes 800 ms to listen again, as a JVM does, against sample bots.

Parallel: the decisions that wait for the restart do so under a deadline no load reaches;
the test of a bot not back within a short deadline races it (marked serial)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from referee.config.parse import load_config
from referee.run.runner import JOURNAL, run_tournament
from tests.support.cli import ROOT
from tests.support.tournament import NIMMT

pytestmark = pytest.mark.parallel

RESTARTING = str(ROOT / "tests" / "bots" / "restarting.py")
CONCURRENCY = 4


def run(folder: Path, deadline_ms: int) -> tuple[list[dict[str, Any]], str]:
    """The journal and the subject's log of a tournament where it crashes on its 12th act
    (two round robins of four bots at three seats: four matches each; with one, the crash
    could come too late for any decision to wait on the restart)."""
    doc = {
        "tournament": {
            "name": "restart-window",
            "game": "nimmt_plus",
            "seed": 5,
            "players": 3,
            "rounds": 2,
            "concurrency": CONCURRENCY,
            "output": str(folder / "out"),
        },
        "limits": {"deadline_ms": deadline_ms, "restart_backoff_ms": 50, "max_faults": 100},
        "bot": [
            {"name": "subject", "command": ["python", RESTARTING, "12", "--startup-ms", "800", "--port", "{port}"]},
            {"name": "greedy", "command": [*NIMMT, "greedy", "--port", "{port}"]},
            {"name": "cautious", "command": [*NIMMT, "cautious", "--port", "{port}"]},
            {"name": "random", "command": [*NIMMT, "random", "--port", "{port}"]},
        ],
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "t.toml"
    path.write_text(tomli_w.dumps(doc))
    config = load_config(path)
    asyncio.run(run_tournament(config))
    records = [json.loads(x) for x in (config.output / JOURNAL).read_text().splitlines()]
    return records, (config.output / "logs" / "subject.log").read_text()


def test_decisions_that_arrive_while_a_bot_restarts_wait_for_it(tmp_path: Path) -> None:
    records, log = run(tmp_path, deadline_ms=30_000)  # far more than a restart takes, however loaded
    assert len(records) == 8
    assert "--- restart 1/3 after exit code 3" in log and "restart 2/" not in log
    assert sum(r for rec in records for r in rec.get("restarts", [])) == 1
    faults = [f for rec in records for f in rec["faults"]]
    assert all(f["bot"] == "subject" for f in faults)
    # only requests the bot had when it died are lost (one per match at most); none of
    # those that came while it restarted is charged
    assert not [f for f in faults if f["detail"].startswith("cannot connect")], faults
    assert len(faults) <= CONCURRENCY, faults


@pytest.mark.serial
def test_a_bot_not_back_within_the_deadline_is_charged_with_what_happened(tmp_path: Path) -> None:
    records, log = run(tmp_path, deadline_ms=300)
    assert "--- restart 1/3 after exit code 3" in log
    waited = [f for rec in records for f in rec["faults"] if "was being restarted" in f["detail"]]
    assert waited, [f for rec in records for f in rec["faults"]]
    for f in waited:
        assert f["kind"] == "error" and f["detail"].startswith("cannot connect")
        assert "not back within 300 ms" in f["detail"]
        assert f["latency_ms"] >= 290  # it waited the deadline out, not a fault at once
