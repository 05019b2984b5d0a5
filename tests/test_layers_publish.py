"""The pure modules of the leaderboard load no HTTP client and no runner (issue 11, part 1):
standings, columns, verdicts, table and page are pure, and publish reads the journal
without the runner. Checked in a fresh interpreter, so nothing else imported them first."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.parallel

PURE = (
    "referee.stats.columns",
    "referee.stats.standings",
    "referee.stats.verdicts",
    "referee.report.text",
    "referee.report.page",
    "referee.report.publish",
)


@pytest.mark.parametrize("module", PURE)
def test_a_leaderboard_module_loads_neither_httpx_nor_the_runner_nor_a_match(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "bad = [m for m in ('httpx', 'referee.match.play', 'referee.run.runner', 'referee.bots.client.wire') "
        "if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} loads {out.stdout.strip()}"
