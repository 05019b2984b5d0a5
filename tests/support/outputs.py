"""A run's output folder for the verify and replay tests: a small real run of a sample
tournament, its journal and transcripts read and rewritten, a copy to change."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

from referee.store import transcripts
from tests.support.cli import ROOT, here
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

SAMPLE_CONFIGS = {
    "nimmt_plus": "nimmt_plus.toml",
    "drahtseilakt": "drahtseilakt.toml",
    "dieci": "dieci.toml",
    "the_game": "the_game.toml",
}


def small_config(tmp: Path, game: str, extra: str = "") -> Path:
    """The sample config of ``game``, cut to a handful of matches (``extra``: more
    ``[tournament]`` lines), with a deadline no load reaches: verify sees no fallback."""
    text = (ROOT / "configs" / SAMPLE_CONFIGS[game]).read_text()
    text = re.sub(r"(?m)^rounds = \d+", "rounds = 1", text)
    text = re.sub(r"(?m)^matches = \d+", "matches = 2", text)
    text = re.sub(r"(?m)^concurrency = \d+", "concurrency = 2", text)
    text = re.sub(r"(?m)^deadline_ms = \d+", f"deadline_ms = {UNREACHABLE_DEADLINE_MS}", text)
    text = text.replace("[tournament]\n", "[tournament]\n" + extra, 1)
    path = tmp / f"{game}.toml"
    path.write_text(text)
    return path


def run_small(tmp: Path, game: str, extra: str = "") -> Path:
    """Run ``small_config`` with ``referee run`` (in this process; the bots are real
    processes); its output folder."""
    out = tmp / f"out_{game}"
    done = here("run", str(small_config(tmp, game, extra)), "--output", str(out), "-q")
    assert done.returncode == 0, done.stderr
    return out


def journal_lines(out: Path) -> list[dict[str, Any]]:
    """The journal's records as written, in journal order."""
    return [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]


def write_journal(out: Path, recs: list[dict[str, Any]]) -> None:
    """Replace the journal with ``recs``."""
    (out / "matches.jsonl").write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))


def transcript_lines(out: Path) -> list[dict[str, Any]]:
    """Every transcript line of ``out``, in the order written."""
    return [line for _, line in transcripts.read_lines(out)]


def rewrite_transcripts(out: Path, lines: list[dict[str, Any]]) -> None:
    """Replace the transcripts with ``lines``, in one part."""
    shutil.rmtree(out / "transcripts")
    (out / "transcripts").mkdir()
    with gzip.open(out / "transcripts" / "part-00000.jsonl.gz", "wt") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")


def copy(src: Path, tmp: Path) -> Path:
    """A copy of the output folder ``src`` in ``tmp``, to change."""
    dst = tmp / "copy"
    shutil.copytree(src, dst)
    return dst
