"""The JavaScript sample bot (sample_bots/js/nimmt.js) in its tournament file against the
Python samples, as a real ``referee run``. Skipped, saying why, when node is not on PATH."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
import tomli_w

from tests.support.cli import ROOT, here
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = [
    pytest.mark.parallel,
    pytest.mark.skipif(
        shutil.which("node") is None, reason="node is not on PATH: the JavaScript sample bot cannot run"
    ),
]


def test_js_sample_plays_its_tournament_without_a_fault(tmp_path: Path) -> None:
    out = tmp_path / "out"
    doc = tomllib.loads((ROOT / "configs" / "nimmt_plus_js.toml").read_text())
    doc.setdefault("limits", {})["deadline_ms"] = UNREACHABLE_DEADLINE_MS  # a fault is the bot's, never load's
    for bot in doc["bot"]:  # the file's paths are relative to its folder; the copy lives elsewhere
        bot["command"] = [str((ROOT / "configs" / a).resolve()) if a.startswith("../") else a for a in bot["command"]]
    config = tmp_path / "nimmt_plus_js.toml"
    config.write_text(tomli_w.dumps(doc))
    proc = here("run", str(config), "--output", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "standings.json").read_text())
    rows = {r["name"]: r for r in doc["standings"]}
    assert set(rows) == {"cautious", "greedy", "random-a", "random-b", "js-careful"}
    js = rows["js-careful"]
    assert js["matches"] == 16 and js["decisions"] > 0
    assert js["faults"]["total"] == 0 and js["notice_faults"] == 0
    # a heuristic, not noise: it beats both random bots on mean score (highest wins in plus)
    assert js["mean_score"] > max(rows["random-a"]["mean_score"], rows["random-b"]["mean_score"])
    assert "listening on http://127.0.0.1:" in (out / "logs" / "js-careful.log").read_text()
