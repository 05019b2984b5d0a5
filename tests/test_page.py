"""The leaderboard page in a real headless browser: a real ``referee run`` of sample bots
publishes ``index.html``, the system Chromium opens it from disk, and the test checks
what it shows against ``standings.json`` and that it asked for nothing but the file.
The screenshot is kept in ``tests/artifacts/leaderboard.png``. Takes about 5 s (7 s on a busy machine).

Without ``/usr/bin/chromium`` the test fails (``make test`` installs it), unless
``REFEREE_SKIP_BROWSER=1`` asks to skip it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, LAUNCH_ARGS, require_chromium
from tests.support.cli import ROOT, run_here

pytestmark = pytest.mark.parallel

ARTIFACTS = ROOT / "tests" / "artifacts"
BOTS = [("greedy", "greedy"), ("cautious", "cautious"), ("random", "random"), ("random-b", "random")]

ROW_DATA = """rows => rows.map(r => ({data: {...r.dataset},
    cells: Object.fromEntries([...r.cells].map(c => [c.dataset.col, c.innerText.replace(/\\s+/g, ' ').trim()]))}))"""
CELL_DATA = "cells => cells.map(c => ({data: {...c.dataset}, text: c.innerText.replace(/\\s+/g, ' ').trim()}))"


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of a real 12-match round robin of four sample bots."""
    require_chromium()
    tmp = tmp_path_factory.mktemp("page")
    lines = [
        "[tournament]",
        'name = "page-check"',
        'game = "nimmt_plus"',
        "seed = 3",
        "players = 3",
        "rounds = 3",
        "concurrency = 4",
        f'output = "{tmp / "out"}"',
    ]
    for name, strategy in BOTS:
        lines += [
            "[[bot]]",
            f'name = "{name}"',
            f'command = ["python", "-m", "sample_bots.nimmt", "{strategy}", "--port", "{{port}}"]',
        ]
    (tmp / "page.toml").write_text("\n".join(lines) + "\n")
    run_here(tmp / "page.toml", tmp / "out")
    return tmp / "out"


def visible_box(page: Any, selector: str) -> dict[str, float]:
    loc = page.locator(selector)
    assert loc.count() == 1 and loc.is_visible(), selector
    box = loc.bounding_box()
    assert box is not None and box["width"] > 50 and box["height"] > 50, (selector, box)
    return box


def test_the_page_shows_standings_plots_and_heat_map_from_disk_without_network(output: Path) -> None:
    from playwright.sync_api import sync_playwright

    doc = json.loads((output / "standings.json").read_text())
    rows = doc["standings"]
    html = (output / "index.html").read_text()
    # nothing to fetch, by construction (links, to the replays and the bot pages, are followed only when clicked)
    assert not re.search(r"https?:|src\s*=|href\s*=(?!\"(replays/index|bots/[a-z0-9_.-]+)\.html\")|@import|url\(", html)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto((output / "index.html").as_uri(), wait_until="load", timeout=15000)

            shown = page.eval_on_selector_all("#standings tbody tr", ROW_DATA)
            assert [r["data"]["bot"] for r in shown] == [r["name"] for r in rows]
            for got, row in zip(shown, rows):
                cells, data = got["cells"], got["data"]
                assert cells["bot"].split(" version ")[0] == row["name"] and cells["rank"] == str(row["rank"])
                assert cells["matches"] == str(row["matches"]) and cells["wins"].startswith(f"{row['wins']} (")
                lo, hi = row["mean_score_ci"]
                assert float(data["meanScore"]) == row["mean_score"]
                assert [float(data["meanScoreLo"]), float(data["meanScoreHi"])] == [lo, hi]
                assert cells["mean-score"] == f"{row['mean_score']:.2f} [{lo:.2f}, {hi:.2f}]"
                lo, hi = row["mean_rank_ci"]
                assert float(data["meanRank"]) == row["mean_rank"]
                assert cells["mean-rank"] == f"{row['mean_rank']:.2f} [{lo:.2f}, {hi:.2f}]"
                assert [int(data["rankLo"]), int(data["rankHi"])] == row["rank_interval"]
                assert float(data["ordinal"]) == row["rating"]["ordinal"]
                assert cells["rating"].startswith(f"{row['rating']['ordinal']:.2f}")

            visible_box(page, "#standings")
            visible_box(page, "#score-distribution")
            dist = page.eval_on_selector_all("#score-distribution tr.dist", "gs => gs.map(g => g.dataset.bot)")
            assert dist == [r["name"] for r in rows]

            visible_box(page, "#head-to-head")
            cells = page.eval_on_selector_all("#head-to-head td.h2h", CELL_DATA)
            n = len(rows)
            assert len(cells) == n * (n - 1)
            pairs = {(q["bot"], q["opponent"]): q for q in doc["head_to_head"]}
            for cell in cells:
                pair = pairs[(cell["data"]["bot"], cell["data"]["opponent"])]
                assert float(cell["data"]["share"]) == pair["share"]
                assert int(cell["data"]["meetings"]) == pair["meetings"] > 0
                assert cell["text"].startswith(f"{pair['share']:.0%}")
                assert f"{pair['above']}\u2013{pair['below']}" in cell["text"]

            box = visible_box(page, "#rating-history")
            lines = page.locator("#rating-history polyline.series")
            assert lines.count() == n
            for i in range(n):
                line_box = lines.nth(i).bounding_box()
                assert line_box is not None and line_box["width"] > box["width"] / 2
            steps = len(doc["rating_history"]["step"])
            games = doc["rating_history"]["games"]
            assert games == doc["matches"] and steps == min(12, games + 1)  # at most 12 fitted points
            points = page.eval_on_selector_all(
                "#rating-history polyline.series", "ls => ls.map(l => l.points.numberOfItems)"
            )
            assert points == [steps] * n

            assert page.locator("#seat-bias tbody tr").count() == len(doc["seat_bias"]) == 3
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)
        finally:
            browser.close()
    assert requests and all(url.startswith("file://") for url in requests), requests
    assert (ARTIFACTS / "leaderboard.png").stat().st_size > 10_000
