"""A referee killed with ``kill -9`` at any moment loses nothing: ``referee run --resume``
finishes the tournament, and the outputs equal those of an uninterrupted run with the
same seed and deterministic bots (the sample bots are: their choices are seeded by the
message). Real ``referee`` processes, real bot processes; no orphan survives a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from test_e2e import NIMMT, ROOT, assert_nothing_listens, bot_ports, write_config

# Response times and run time differ between runs; everything else must be identical.
TIMING_FIELDS = ("latency_ms", "duration_s", "voided")
VARYING_FILES = {"timings.json", "matches.jsonl", "matches.jsonl.prev"}
BOTS = [
    ("greedy", NIMMT + ["greedy"]),
    ("cautious", NIMMT + ["cautious"]),
    ("random", NIMMT + ["random"]),
    ("greedy2", NIMMT + ["greedy"]),
]


def start(config: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "referee", "run", str(config), "--output", str(out), "-q", *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def lines(out: Path) -> int:
    try:
        return (out / "matches.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kill9_after(proc: subprocess.Popen[str], out: Path, at_least: int, timeout_s: float = 60) -> int:
    """SIGKILL ``proc`` once the journal has ``at_least`` lines; return the count then."""
    deadline = time.monotonic() + timeout_s
    while lines(out) < at_least:
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()}"
        assert time.monotonic() < deadline, "the journal did not grow"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    return lines(out)


def journal(out: Path) -> list[dict[str, Any]]:
    recs = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    for r in recs:
        for f in TIMING_FIELDS:
            r.pop(f, None)
        for fault in r["faults"]:
            fault.pop("latency_ms", None)
    return sorted(recs, key=lambda r: r["index"])


def published(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name not in VARYING_FILES}


def test_kill_9_twice_then_resume_gives_the_outputs_of_an_uninterrupted_run(tmp_path: Path) -> None:
    config = write_config(tmp_path, BOTS, players=3, rounds=3, concurrency=2)  # 12 matches
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    done = subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "--output", str(whole), "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    total = lines(whole)
    assert total == 12

    first = kill9_after(start(config, cut), cut, 2)
    assert 2 <= first < total
    time.sleep(0.2)
    assert_nothing_listens(bot_ports(cut))  # the bots died with the referee: no orphans

    # a write cut short by the kill: half of the next line, no newline
    torn = (whole / "matches.jsonl").read_text().splitlines()[first][:57]
    with open(cut / "matches.jsonl", "a") as fh:
        fh.write(torn)
    second = kill9_after(start(config, cut, "--resume"), cut, first + 2)
    assert second < total, "killed before the end"
    time.sleep(0.2)
    assert_nothing_listens(bot_ports(cut))

    final = subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "--output", str(cut), "-q", "--resume"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert final.returncode == 0, final.stderr
    assert lines(cut) == total
    assert journal(cut) == journal(whole)
    a, b = published(whole), published(cut)
    assert sorted(a) == sorted(b) and "standings.json" in a and "README.md" in a
    for name in a:
        assert a[name] == b[name], f"{name} differs between the uninterrupted and the killed-and-resumed run"


def test_resume_refuses_the_journal_of_another_tournament_and_touches_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path, BOTS[:3], players=3, rounds=1, concurrency=1)
    out = tmp_path / "out"
    first = subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "--output", str(out), "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    other = subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "--output", str(out), "-q", "--resume", "--seed", "99"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert other.returncode == 1
    assert "does not belong to this tournament's schedule" in other.stderr and "matches.jsonl" in other.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
