"""A team tournament of The Game with real sample-bot processes: every bot plays every
deal as a homogeneous team, on the same cards."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.cli import referee
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = pytest.mark.parallel


def test_team_tournament_gives_every_bot_the_same_deals(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cfg = tmp_path / "team.toml"
    bots = "".join(
        f'[[bot]]\nname = "{s}"\ncommand = ["python", "-m", "sample_bots.the_game", "{s}", "--port", "{{port}}"]\n'
        for s in ("heuristic", "greedy", "random")
    )
    cfg.write_text(
        f'[tournament]\nname = "team"\ngame = "the_game"\nplayers = 3\nformat = "team"\nmatches = 4\n'
        f'concurrency = 4\noutput = "{out}"\n[game]\ncommunication = "claims"\n'
        f"[limits]\ndeadline_ms = {UNREACHABLE_DEADLINE_MS}\n" + bots  # no fallback: the ranks are the bots' own
    )
    proc = referee("run", str(cfg))
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    assert len(recs) == 12
    by_deal: dict[int, list[dict]] = defaultdict(list)
    for r in recs:
        assert len(set(r["bots"])) == 1 and len(r["bots"]) == 3  # a homogeneous team
        assert len(set(r["scores"])) == 1  # one shared score
        by_deal[r["deal"]].append(r)
    assert sorted(by_deal) == [0, 1, 2, 3]
    for deal in by_deal.values():
        assert sorted(r["bots"][0] for r in deal) == ["greedy", "heuristic", "random"]
        assert len({r["seed"] for r in deal}) == 1
        assert len({r["deal_hash"] for r in deal}) == 1  # the same starting hands for every team
    assert len({deal[0]["deal_hash"] for deal in by_deal.values()}) == 4
    doc = json.loads((out / "standings.json").read_text())
    rows = {r["name"]: r for r in doc["standings"]}
    assert all(r["matches"] == 4 for r in rows.values())  # credited once per deal, not per seat
    for name, row in rows.items():
        left = [r["scores"][0] for r in recs if r["bots"][0] == name]
        assert row["mean_score"] == round(sum(left) / 4, 4)
        assert row["cards_left"] == row["mean_score"]
        assert row["wins"] == sum(1 for x in left if x == 0)
    assert rows["random"]["rank"] == 3  # random play leaves far more cards than either heuristic
    assert doc["lower_score_wins"] is True
