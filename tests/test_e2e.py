"""End to end: ``referee run`` as a real process against real sample-bot processes."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import ROOT, referee, start
from tests.support.tournament import NIMMT, assert_nothing_listens, bot_ports, write_config

pytestmark = pytest.mark.parallel


def without_timings(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    for row in doc["standings"]:
        row.pop("p50_ms", None), row.pop("p99_ms", None)  # older outputs had them; timings.json has them now
    return doc


def test_run_a_small_tournament(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path, [("greedy", NIMMT + ["greedy"]), ("random", NIMMT + ["random"]), ("cautious", NIMMT + ["cautious"])]
    )
    proc = referee("run", str(cfg))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    doc = json.loads((out / "standings.json").read_text())
    assert doc["tournament"] == "e2e" and doc["game"] == "nimmt_plus" and doc["matches"] == 3
    rows = {r["name"]: r for r in doc["standings"]}
    assert set(rows) == {"greedy", "random", "cautious"}
    assert all(r["matches"] == 3 and r["faults"]["total"] == 0 for r in rows.values())
    assert sorted(r["rank"] for r in rows.values())[0] == 1
    assert sum(r["wins"] for r in rows.values()) >= 3
    lines = (out / "matches.jsonl").read_text().splitlines()
    assert len(lines) == 3
    recs = [json.loads(line) for line in lines]
    assert sorted(r["id"] for r in recs) == ["m000000", "m000001", "m000002"]
    for line, r in zip(lines, recs, strict=True):
        assert sorted(r["bots"]) == ["cautious", "greedy", "random"] and len(r["scores"]) == 3
        # the per-hand breakdown stays in the transcript (verify and replay rebuild it)
        assert r["details"]["variant"] == "plus" and "hands" not in r["details"]
        assert len(line.encode()) + 1 <= 700
    readme = (out / "README.md").read_text()
    assert re.search(r"^\| Rank\s+\| Bot\s+\|", readme, re.M)
    for name, row in rows.items():
        assert re.search(rf"^\| {row['rank']}\s+\| {name}\s+\| 3\s+\| {row['wins']} \(", readme, re.M), name
    assert "Rank" in proc.stdout and "greedy" in proc.stdout  # the table printed at the end
    assert_nothing_listens(bot_ports(out / "logs"))


def test_a_bot_that_dies_mid_run_costs_only_itself(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        [
            ("dying", ["python", str(ROOT / "tests" / "bots" / "dying.py"), "25"]),
            ("greedy", NIMMT + ["greedy"]),
            ("random", NIMMT + ["random"]),
        ],
        extra="max_faults = 3",
    )
    proc = referee("run", str(cfg))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out" / "standings.json").read_text())
    rows = {r["name"]: r for r in doc["standings"]}
    assert doc["matches"] == 3
    assert rows["dying"]["faults"]["error"] > 0
    assert rows["greedy"]["faults"]["total"] == 0 and rows["random"]["faults"]["total"] == 0
    assert rows["greedy"]["notice_faults"] == 0 and rows["random"]["notice_faults"] == 0
    recs = [json.loads(line) for line in (tmp_path / "out" / "matches.jsonl").read_text().splitlines()]
    assert all(f["bot"] == "dying" for r in recs for f in r["faults"])


def test_interrupted_then_resumed_equals_uninterrupted(tmp_path: Path) -> None:
    bots = [("greedy", NIMMT + ["greedy"]), ("random", NIMMT + ["random"]), ("cautious", NIMMT + ["cautious"])]
    whole_dir, cut_dir = tmp_path / "whole", tmp_path / "cut"
    whole_dir.mkdir(), cut_dir.mkdir()
    whole = write_config(whole_dir, bots, rounds=6, concurrency=1)
    cut = write_config(cut_dir, bots, rounds=6, concurrency=1)
    assert referee("run", str(whole)).returncode == 0

    journal = cut_dir / "out" / "matches.jsonl"
    proc = start("run", str(cut))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 2:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "--resume" in err
    finished = len(journal.read_text().splitlines())
    assert 2 <= finished < 6
    with open(journal, "a") as fh:  # a torn last line, as a kill -9 mid-write leaves
        fh.write('{"id": "m0000')
    assert_nothing_listens(bot_ports(cut_dir / "out" / "logs"))

    resumed = referee("run", str(cut), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    a = json.loads((whole_dir / "out" / "standings.json").read_text())
    b = json.loads((cut_dir / "out" / "standings.json").read_text())
    a["settings"].pop("name"), b["settings"].pop("name")
    assert without_timings(a) == without_timings(b)
    ids = [json.loads(line)["id"] for line in journal.read_text().splitlines()]
    assert sorted(ids) == [f"m{i:06d}" for i in range(6)]


def test_check_reports_every_bot_and_plays_nothing(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [("greedy", NIMMT + ["greedy"]), ("random", NIMMT + ["random"])], players=2)
    proc = referee("check", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"ok\s+greedy\s+started", proc.stdout) and re.search(r"ok\s+random\s+started", proc.stdout)
    assert not (tmp_path / "out" / "matches.jsonl").exists()


def test_a_bot_that_never_becomes_ready_stops_the_run_before_play(tmp_path: Path) -> None:
    cfg = write_config(
        tmp_path,
        [
            ("greedy", NIMMT + ["greedy"]),
            ("broken", ["python", "-c", "import sys; print('cannot start'); sys.exit(4)"]),
        ],
        players=2,
    )
    proc = referee("run", str(cfg))
    assert proc.returncode == 1
    assert "bot 'broken' exited with code 4 before it was ready" in proc.stderr
    assert "cannot start" in proc.stderr  # the tail of its log
    journal = tmp_path / "out" / "matches.jsonl"
    assert not journal.exists() or not journal.read_text().strip()
    assert_nothing_listens(bot_ports(tmp_path / "out" / "logs"))


def test_bad_config_exits_2_and_starts_nothing(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [("greedy", NIMMT + ["greedy"]), ("random", NIMMT + ["random"])], players=2)
    cfg.write_text(cfg.read_text().replace("rounds", "roundz"))
    proc = referee("run", str(cfg))
    assert proc.returncode == 2
    assert f"{cfg}: tournament.roundz: unknown key (did you mean 'rounds'?)" in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("token_env", ["REFEREE_E2E_TOKEN"])
def test_tokens_never_reach_outputs_or_logs(tmp_path: Path, token_env: str) -> None:
    cfg = write_config(tmp_path, [("greedy", NIMMT + ["greedy"]), ("random", NIMMT + ["random"])], players=2, rounds=1)
    text = cfg.read_text().replace('name = "random"', f'name = "random"\ntoken = "${{{token_env}}}"')
    cfg.write_text(text)
    secret = "tok-SHOULD-NOT-LEAK-4711"
    proc = referee("run", str(cfg), env={token_env: secret})
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout + proc.stderr
    for f in (tmp_path / "out").rglob("*"):
        if f.is_file():
            assert secret not in f.read_text(errors="replace"), f
