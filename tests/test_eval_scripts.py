"""The in-process evaluation scripts run end to end with tiny counts and print a table
with a mean and an interval for every strategy they evaluate (they once all failed on
import and nothing noticed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    ("eval_dieci.py", ["--matches", "4"], ["threshold", "bold", "keeper"]),
    ("eval_drahtseilakt.py", ["--matches", "2"], ["balance", "middle"]),
    ("eval_nimmt.py", ["--matches", "3", "--variant", "plus"], ["greedy", "cautious"]),
    ("eval_the_game.py", ["--deals", "3", "--players", "2", "--comm", "none"], ["heuristic"]),
]


@pytest.mark.parametrize(("script", "args", "names"), CASES, ids=[c[0] for c in CASES])
def test_eval_script_runs_and_reports_each_strategy(script: str, args: list[str], names: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    for name in names:
        assert name in out.stdout, (name, out.stdout[-2000:])
    assert re.search(r"\d ± +\d", out.stdout) or re.search(r"±\d", out.stdout), out.stdout[-2000:]
