"""The reproducibility statement of docs/outputs.md, exactly: the leaderboard files are a function of
matches.jsonl and tournament.json alone, and read none of the journal's timing fields
(latency_ms, duration_s, voided, a fault's latency_ms); only timings.json does."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from referee.report.publish import build_leaderboard, write_leaderboard
from referee.store.tournament_file import load_output_dir

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "leaderboards" / "nimmt_plus"
BOARD_FILES = ("README.md", "index.html", "standings.json", "standings.csv")


def publish(folder: Path) -> dict[str, bytes]:
    tournament, records = load_output_dir(folder)
    write_leaderboard(folder, build_leaderboard(tournament, records, resamples=200))
    return {name: (folder / name).read_bytes() for name in (*BOARD_FILES, "timings.json")}


def test_leaderboard_files_ignore_timing_fields_and_line_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        folder.mkdir()
        shutil.copy(SAMPLE / "tournament.json", folder)
    lines = (SAMPLE / "matches.jsonl").read_text().splitlines()
    (a / "matches.jsonl").write_text("\n".join(lines) + "\n")
    rng = random.Random(3)
    changed = []
    for line in lines:
        rec = json.loads(line)
        # response times as older journals held them (today's lines keep none)
        rec["latency_ms"] = [[round(rng.uniform(0, 900), 2) for _ in range(20)] for _ in rec["bots"]]
        rec["duration_s"] = round(rng.uniform(0, 60), 4)
        rec["voided"] = rng.randrange(1, 5)
        for fault in rec["faults"]:
            fault["latency_ms"] = round(rng.uniform(0, 900), 1)
        changed.append(json.dumps(rec))
    rng.shuffle(changed)
    (b / "matches.jsonl").write_text("\n".join(changed) + "\n")
    first, second = publish(a), publish(b)
    for name in BOARD_FILES:
        assert first[name] == second[name], f"{name} depends on a timing field or on the journal's line order"
    assert first["timings.json"] != second["timings.json"]  # the timing fields did change, and only here
