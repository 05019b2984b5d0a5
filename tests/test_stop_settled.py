"""``stop = "settled"`` end to end with real sample-bot processes: the run stops at a batch
boundary once the top is settled, says why in the console, standings.json, README.md and
the page, gives byte-identical outputs whatever the concurrency, and ``referee plan``
estimates the matches from a pilot. The error rate under repeated looks is simulated in
tests/test_settle.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomli_w
from click.testing import CliRunner

from referee.cli.main import main
from referee.config.parse import load_config
from referee.run.stopping import DealValues, batches

pytestmark = pytest.mark.parallel

NIMMT = ["python", "-m", "sample_bots.nimmt"]
BOTS = (("greedy", "greedy"), ("random", "random"), ("random2", "random"), ("random3", "random"))


def _config(tmp_path: Path, out: str, **tournament: Any) -> Path:
    doc = {
        "tournament": {
            "name": "settled",
            "game": "nimmt_plus",
            "seed": 4,
            "players": 3,
            "format": "round_robin",
            "rounds": 50,
            "stop": "settled",
            "top": 1,
            "batch": 6,
            "concurrency": 6,
            "output": str(tmp_path / out),
            **tournament,
        },
        # out of any load's reach, the start included: the runs compared see no timeout
        "limits": {"deadline_ms": 30_000, "startup_ms": 120_000},
        "bot": [{"name": n, "command": NIMMT + [s, "--port", "{port}"]} for n, s in BOTS],
    }
    path = tmp_path / f"{out}.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


def test_a_clear_leader_stops_the_run_early_at_a_batch_boundary(tmp_path: Path) -> None:
    path = _config(tmp_path, "a")
    result = CliRunner().invoke(main, ["run", str(path), "-q"])
    assert result.exit_code == 0, result.output
    assert "stopped: settled: greedy > " in result.output
    out = tmp_path / "a"
    lines = (out / "matches.jsonl").read_text().splitlines()
    standings = json.loads((out / "standings.json").read_text())
    stopped = standings["stopped"]
    assert stopped["settled"] and stopped["rule"] == "settled" and stopped["budget"] == 200
    assert len(lines) == stopped["matches"] == stopped["deals"] < 200 and len(lines) % 6 == 0
    assert sorted(json.loads(x)["index"] for x in lines) == list(range(len(lines))), "whole batches, nothing beyond"
    assert standings["standings"][0]["name"] == "greedy"
    assert "- Stopped: settled: greedy \\> " in (out / "README.md").read_text()
    assert "settled: greedy &gt; " in (out / "index.html").read_text()
    assert json.loads((out / "tournament.json").read_text())["stopped"] == stopped

    # resumed, it replays the looks and plays nothing more
    again = CliRunner().invoke(main, ["run", str(path), "-q", "--resume"])
    assert again.exit_code == 0, again.output
    assert (out / "matches.jsonl").read_text().splitlines() == lines
    assert json.loads((out / "standings.json").read_text()) == standings

    # killed in the middle of the last batch: resumed, it plays that batch's rest and stops again there
    (out / "matches.jsonl").write_text("".join(x + "\n" for x in lines[:-4]))
    again = CliRunner().invoke(main, ["run", str(path), "-q", "--resume"])
    assert again.exit_code == 0, again.output

    def played(text: list[str]) -> list[tuple[Any, ...]]:  # what was played, durations aside
        return sorted((d["id"], d["seed"], d["bots"], d["scores"]) for d in map(json.loads, text))

    assert played((out / "matches.jsonl").read_text().splitlines()) == played(lines)
    assert json.loads((out / "standings.json").read_text()) == standings

    # whatever the concurrency, the same matches count: the outputs are byte-identical
    other = _config(tmp_path, "b", concurrency=1)
    assert CliRunner().invoke(main, ["run", str(other), "-q"]).exit_code == 0
    for name in ("README.md", "standings.json", "standings.csv"):
        assert (tmp_path / "a" / name).read_text().replace("/a", "/b") == (tmp_path / "b" / name).read_text()


def test_plan_estimates_the_matches_from_a_pilot(tmp_path: Path) -> None:
    path = _config(tmp_path, "p")
    result = CliRunner().invoke(main, ["plan", str(path), "--deals", "12"])
    assert result.exit_code == 0, result.output
    assert "pilot: 12 deals, 12 matches" in result.output
    assert "a settled top 1 at confidence 0.95: about " in result.output
    assert not (tmp_path / "p").exists(), "the pilot plays in a temporary folder"


def test_deal_values_of_duplicate_deals_average_the_rotations(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "d", duplicate=True, rounds=1))
    values = DealValues(cfg)
    assert values.deal_size == 3 and values.deals == 4 and values.bound == 2.0
    for i, (bots, ranks) in enumerate(
        [(["greedy", "random", "random2"], [1, 2, 3]), (["random", "random2", "greedy"], [3, 1, 2])]
    ):
        values.add(i, bots, ranks, [0.0] * 3, False)
    got = values.values(1)
    assert got[0, 0] == 1.5 and got[0, 1] == 2.5 and got[0, 2] == 2.0 and np.isnan(got[0, 3])
    assert list(batches(4, 3, 3)) == [(0, 9, 3), (9, 12, 4)]


def test_bad_stop_settings_are_one_line_errors(tmp_path: Path) -> None:
    for change, message in (
        ({"stop": "setled"}, "tournament.stop: unknown rule 'setled' (did you mean 'settled'?)"),
        ({"confidence": 1.0}, "tournament.confidence: must be at least 0.5 and below 1"),
        ({"top": -1}, "tournament.top: must be at least 0"),
        ({"batch": 0}, "tournament.batch: must be at least 1 deal"),
    ):
        result = CliRunner().invoke(main, ["run", str(_config(tmp_path, "e", **change))])
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_team_deal_values_rank_the_bots_on_each_deal(tmp_path: Path) -> None:
    path = _config(tmp_path, "t", game="the_game", format="team", matches=5, players=2, rounds=1)
    values = DealValues(load_config(path))
    assert values.deal_size == 4 and values.deals == 5 and values.bound == 3.0
    for b, (name, _) in enumerate(BOTS):  # deal 0: cards left 10, 3, 3, 40 (lower is better)
        values.add(b, [name, name], [1, 1], [[10.0, 3.0, 3.0, 40.0][b]] * 2, True)
    assert values.values(1).tolist() == [[3.0, 1.5, 1.5, 4.0]]
