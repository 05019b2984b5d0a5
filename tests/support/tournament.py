"""Real tournaments for end-to-end tests: a tournament file of started bots, the journal
read for comparison, a run killed with SIGKILL once its journal has grown, and the check
that no bot outlives its referee."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

NIMMT = ["python", "-m", "sample_bots.nimmt"]
# Honest bots answer in milliseconds; a deadline no load on the machine can reach keeps a
# test that compares two runs from seeing a timeout (and its fallback) in one of them.
UNREACHABLE_DEADLINE_MS = 30_000
# The same for the start-up window (limits.startup_ms) of honest bots that start in under a second.
UNREACHABLE_STARTUP_MS = 60_000
# Response times and run time differ between runs; everything else must be identical.
TIMING_FIELDS = ("latency_ms", "duration_s", "voided")
VARYING_FILES = {"timings.json", ".timings-state.json", "matches.jsonl", "matches.jsonl.prev"}


def write_config(
    tmp_path: Path,
    bots: list[tuple[str, list[str]]],
    *,
    players: int = 3,
    rounds: int = 3,
    concurrency: int = 2,
    extra: str = "",
    variant: str = "plus",
    deadline_ms: int = UNREACHABLE_DEADLINE_MS,
) -> Path:
    """``tmp_path/e2e.toml``: 6 nimmt! of started ``bots`` (name, command without ``--port``),
    seed 7, writing to ``tmp_path/out``; ``extra`` lines go in ``[limits]``."""
    lines = [
        "[tournament]",
        'name = "e2e"',
        'game = "nimmt_plus"',
        "seed = 7",
        f"players = {players}",
        f"rounds = {rounds}",
        f"concurrency = {concurrency}",
        f'output = "{tmp_path / "out"}"',
        "[game]",
        f'variant = "{variant}"',
        "[limits]",
        f"deadline_ms = {deadline_ms}",
        extra,
    ]
    for name, command in bots:
        lines += ["[[bot]]", f'name = "{name}"', f"command = {json.dumps(command + ['--port', '{port}'])}"]
    path = tmp_path / "e2e.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def lines(out: Path) -> int:
    """Complete lines in ``out``'s journal (0 before it exists)."""
    try:
        return (out / "matches.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kill9_after(proc: subprocess.Popen[Any], out: Path, at_least: int, timeout_s: float = 60) -> int:
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
    """The journal's records by fixture index, without what varies between runs (times)."""
    recs = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    for r in recs:
        for f in TIMING_FIELDS:
            r.pop(f, None)
        for fault in r["faults"]:
            fault.pop("latency_ms", None)
    return sorted(recs, key=lambda r: r["index"])


def published(out: Path) -> dict[str, bytes]:
    """The bytes of every published file of ``out`` that must not vary between runs."""
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name not in VARYING_FILES}


def bot_ports(logs: Path) -> list[int]:
    """The ports the started bots logged under ``logs`` (any depth: workers have folders)."""
    return [int(p) for log in logs.rglob("*.log") for p in re.findall(r"start: port (\d+)", log.read_text())]


def assert_nothing_listens(ports: list[int], within_s: float = 10.0) -> None:
    """No process listens on any of ``ports`` on 127.0.0.1 within ``within_s`` from now
    (bots whose referee was killed die as their guard notices, later on a loaded machine)."""
    deadline = time.monotonic() + within_s
    for port in ports:
        while True:
            with socket.socket() as s:
                s.settimeout(1)
                if s.connect_ex(("127.0.0.1", port)) != 0:
                    break
            assert time.monotonic() < deadline, f"a bot still listens on port {port}"
            time.sleep(0.05)


def wait_port(port: int, proc: subprocess.Popen[Any], timeout_s: float = 60) -> None:
    """Wait until something listens on ``port``, failing if ``proc`` exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"process exited with {proc.returncode}"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise AssertionError(f"nothing listens on port {port}")
