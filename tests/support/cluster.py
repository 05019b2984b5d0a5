"""What the tests of Dask runs share: a sample bot reached by URL, the tournament file
of those runs, running it, and comparing two runs' outputs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.bots.cage.process import free_port
from referee.store import packs, transcripts
from tests.support.cli import ROOT, referee
from tests.support.tournament import NIMMT, journal, published, wait_port

DASK = str(Path(sys.executable).with_name("dask"))
MANAGED = [("greedy", "greedy"), ("cautious", "cautious"), ("random", "random"), ("slow1", "random")]


@contextlib.contextmanager
def serve_url_bot() -> Iterator[str]:
    """A sample bot the referee does not start: reached by URL from every worker."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sample_bots.nimmt", "greedy", "--port", str(port)], cwd=ROOT)
    try:
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop_process(proc)


def config_text(out: Path, url: str, *, rounds: int, extra: str = "") -> str:
    """The Dask tests' tournament: four started bots (one limited to a request at a time) and one URL bot."""
    lines_ = [
        "[tournament]",
        'name = "dist"',
        'game = "nimmt_plus"',
        "seed = 11",
        "players = 3",
        f"rounds = {rounds}",
        "concurrency = 3",
        f'output = "{out}"',
        extra,
        "[limits]",
        "deadline_ms = 30000",  # out of reach of any load: both runs of a comparison see no timeout
    ]
    for name, strategy in MANAGED:
        cmd = json.dumps(NIMMT + [strategy, "--port", "{port}"])
        lines_ += ["[[bot]]", f'name = "{name}"', f"command = {cmd}"]
        if name == "slow1":
            lines_.append("max_concurrent = 1")  # one request at a time across the whole cluster
    lines_ += ["[[bot]]", 'name = "remote"', f'url = "{url}"']
    return "\n".join(lines_) + "\n"


def run(config: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``referee run`` of ``config`` into ``out``; it must succeed."""
    done = referee("run", str(config), "--output", str(out), "-q", *extra, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def indices(out: Path) -> list[int]:
    """The fixture indices of the journal, in journal order."""
    return [json.loads(line)["index"] for line in (out / "matches.jsonl").read_text().splitlines()]


def assert_same_outputs(a_out: Path, b_out: Path) -> None:
    """Two runs published the same files, journal and transcripts (response times aside)."""
    a, b = published(a_out), published(b_out)
    assert sorted(a) == sorted(b) and "standings.json" in a and "index.html" in a
    for name in a:
        assert a[name] == b[name], f"{name} differs"
    assert journal(a_out) == journal(b_out)
    # the transcripts too (encoded on the workers, written by the head), response times aside
    ta, tb = (
        sorted(
            ({k: v for k, v in line.items() if k != "ms"} for _, line in transcripts.read_lines(o)),
            key=lambda t: t["id"],
        )
        for o in (a_out, b_out)
    )
    assert len(ta) == len(journal(a_out)) and ta == tb
    # the replay packs (made on the workers, written by the head in index order), byte for byte
    pa, pb = ({p.name: p.read_bytes() for p in packs.pack_files(o)} for o in (a_out, b_out))
    assert pa and pa == pb, "the replay packs differ"


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
