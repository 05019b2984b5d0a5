"""The prize places as published (issue 33): ``places`` in standings.json, the headline in
README.md, the page and the console, the ladder's "Matches and why", and ``top`` naming the
prize places in any format. A real ``referee run`` of a small ladder against one real bot
process (``tests/bots/steady.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.report.places import ordinal, place_line
from tests.support.cli import run_here
from tests.support.ladder import names, write
from tests.support.steady import Steady

pytestmark = pytest.mark.parallel


def test_a_place_reads_as_a_sentence() -> None:
    assert [ordinal(p) for p in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "101st",
        "111th",
    ]
    settled = {"place": 1, "settled": True, "settled_at": 3412, "bot": "x", "candidates": [{"bot": "x", "chance": 1}]}
    assert place_line(settled) == "1st: x, settled at match 3,412"
    cands = [{"bot": b, "chance": c} for b, c in (("x", 0.61), ("y", 0.3), ("z", 0.09))]
    open_ = {"place": 2, "settled": False, "settled_at": None, "bot": None, "candidates": cands}
    assert place_line(open_) == "2nd: not settled: x, y or z (0.61, 0.30, 0.09)"
    more = cands + [{"bot": "u", "chance": 0.0}, {"bot": "v", "chance": 0.0}]
    assert (
        place_line({**open_, "candidates": more})
        == "2nd: not settled: x, y, z or 2 others (0.61, 0.30, 0.09, 0.00 together)"
    )


@pytest.mark.parallel
def test_a_ladder_publishes_its_places_and_why_each_bot_played(tmp_path: Path, steady_bot: Steady) -> None:
    cfg = write(tmp_path, steady_bot.url, names(9), 40, top="2")
    out = tmp_path / "out"
    console = run_here(cfg, out)
    doc = json.loads((out / "standings.json").read_text())
    assert doc["settings"]["top"] == 2
    places = doc["places"]
    assert [p["place"] for p in places] == [1, 2]
    everyone = {r["name"] for r in doc["standings"]}
    for p in places:
        assert set(p) >= {"place", "settled", "settled_at", "bot", "candidates"}
        assert {c["bot"] for c in p["candidates"]} <= everyone
        assert abs(sum(c["chance"] for c in p["candidates"]) - 1) < 1e-3
        assert (p["bot"] is None) == (not p["settled"]) and (p["settled_at"] is None) == (not p["settled"])
    # the ladder's standings are ranked by the model: rank 1, 2, ... with the model's rank sets
    rows = doc["standings"]
    assert [r["rank"] for r in rows] == list(range(1, 10))
    assert all(r["rank_set"][0] <= r["rank"] <= r["rank_set"][1] for r in rows)
    assert {r["matchmaking"] for r in rows} <= {"contender", "floor", "placement"}
    readme = (out / "README.md").read_text()
    lines = [f"- {line}" for line in console.splitlines() if line.startswith(("1st: ", "2nd: "))]
    assert len(lines) == 2 and all(line in readme for line in lines)
    assert readme.index("## Prize places") < readme.index("## Standings")
    assert console.index("1st: ") < console.index(rows[0]["name"])  # the headline before the standings
    page = (out / "index.html").read_text()
    assert page.index('id="places"') < page.index('id="standings-section"')
    assert "<strong>1st</strong>: " in page
    assert 'id="matchmaking-section"' in page


@pytest.mark.parallel
def test_top_names_the_prize_places_in_a_round_robin(tmp_path: Path, steady_bot: Steady) -> None:
    cfg = write(tmp_path, steady_bot.url, names(4), 2, top="4")
    text = cfg.read_text().replace('format = "ladder"', 'format = "round_robin"').replace("matches = 2\n", "")
    cfg.write_text(text)
    out = tmp_path / "rr"
    run_here(cfg, out)
    doc = json.loads((out / "standings.json").read_text())
    assert [p["place"] for p in doc["places"]] == [1, 2, 3, 4]
    assert "matchmaking" not in doc["standings"][0]


@pytest.mark.parallel
def test_stop_settled_on_a_ladder_asks_whether_the_prize_places_are_settled(tmp_path: Path, steady_bot: Steady) -> None:
    cfg = write(tmp_path, steady_bot.url, names(6), 30, stop='"settled"', top="2")
    out = tmp_path / "st"
    run_here(cfg, out)
    stopped = json.loads((out / "standings.json").read_text())["stopped"]
    # the steady bots all play alike: their places cannot be settled, so the budget is spent
    assert stopped["rule"] == "settled" and not stopped["settled"] and stopped["matches"] == 30
    assert "not settled" in stopped["reason"] and stopped["top"] == 2
