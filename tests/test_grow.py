"""A tournament that grows (``grow = true``): fixtures keyed by round and names, so adding a
bot and resuming keeps every finished match, plays only what the new bot adds and ends
where a run with every bot from the start ends, byte for byte (timings.json aside); a
removed bot's matches stay in the journal and count for the bots it met (it has no row)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from click.testing import CliRunner

from referee.audit.verify import verify
from referee.cli.main import main
from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.schedule.formats import schedule
from referee.schedule.registry import check_format

pytestmark = pytest.mark.parallel

NIMMT = ["python", "-m", "sample_bots.nimmt"]
BOTS = (("greedy", "greedy"), ("cautious", "cautious"), ("random", "random"), ("r2", "random"), ("late", "greedy"))


def _write(tmp_path: Path, file: str, out: str, bots: tuple[tuple[str, str], ...], **tournament: Any) -> Path:
    doc = {
        "tournament": {
            "name": "ladder",
            "game": "nimmt_plus",
            "seed": 12,
            "players": 3,
            "rounds": 3,
            "grow": True,
            "concurrency": 4,
            "output": str(tmp_path / out),
            **tournament,
        },
        "limits": {"deadline_ms": 30_000},  # out of any load's reach: the runs compared see no timeout
        "bot": [{"name": n, "command": NIMMT + [s, "--port", "{port}"]} for n, s in bots],
    }
    path = tmp_path / file
    path.write_text(tomli_w.dumps(doc))
    return path


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, ["run", *args, "-q"])
    assert result.exit_code == 0, result.output
    return result.output


# plain: 3 rounds (the rounds are in the key); duplicate: 1 round of 3 seat rotations per deal
@pytest.mark.parametrize(("duplicate", "rounds"), [(False, 3), (True, 1)], ids=["plain", "duplicate"])
def test_adding_a_bot_and_resuming_equals_a_run_with_every_bot_from_the_start(
    tmp_path: Path, duplicate: bool, rounds: int
) -> None:
    ladder = _write(tmp_path, "ladder.toml", "ladder", BOTS[:4], duplicate=duplicate, rounds=rounds)
    _run(str(ladder))
    first = (tmp_path / "ladder" / "matches.jsonl").read_text().splitlines(keepends=True)
    rot = (3 if duplicate else 1) * rounds
    assert len(first) == 4 * rot  # C(4, 3) tables x rounds (x 3 rotations)

    _write(tmp_path, "ladder.toml", "ladder", BOTS, duplicate=duplicate, rounds=rounds)  # a submission arrives
    output = _run(str(ladder), "--resume")
    assert f"grow: {len(first)} finished matches kept, {(10 - 4) * rot} to play" in output
    grown = (tmp_path / "ladder" / "matches.jsonl").read_text().splitlines(keepends=True)
    assert grown[: len(first)] == first, "the first run's lines are unchanged"
    assert len(grown) == 10 * rot and all("late" in json.loads(x)["bots"] for x in grown[len(first) :])

    scratch = _write(tmp_path, "scratch.toml", "scratch", BOTS, duplicate=duplicate, rounds=rounds)
    _run(str(scratch))
    fresh = (tmp_path / "scratch" / "matches.jsonl").read_text().splitlines()

    def fixtures(lines: list[str]) -> set[tuple[Any, ...]]:
        return {(d["id"], d["index"], d["seed"], tuple(d["bots"]), d.get("deal")) for d in map(json.loads, lines)}

    assert fixtures(grown) == fixtures(fresh), "same fixtures, same seeds"
    for name in ("README.md", "index.html", "standings.json", "standings.csv"):
        assert (tmp_path / "ladder" / name).read_bytes() == (tmp_path / "scratch" / name).read_bytes(), name
    assert json.loads((tmp_path / "ladder" / "standings.json").read_text())["matches"] == 10 * rot


def test_a_removed_bot_has_no_row_but_its_matches_keep_counting_for_the_bots_it_met(tmp_path: Path) -> None:
    ladder = _write(tmp_path, "ladder.toml", "ladder", BOTS)
    _run(str(ladder))
    out = tmp_path / "ladder"
    lines = (out / "matches.jsonl").read_text()
    _write(tmp_path, "ladder.toml", "ladder", BOTS[:2] + BOTS[3:])  # "random" withdrawn
    output = _run(str(ladder), "--resume")
    assert "note: bot 'random' is no longer in" in output and "its 18 match(es) stay in the journal" in output
    assert "count for the bots it met" in output
    assert (out / "matches.jsonl").read_text() == lines, "kept in the journal, nothing played"
    doc = json.loads((out / "standings.json").read_text())
    rows = doc["standings"]
    assert sorted(r["name"] for r in rows) == ["cautious", "greedy", "late", "r2"]
    assert [r["rank"] for r in rows] == list(range(1, 5))  # no place taken by the removed bot
    assert all(r["rank_set"][1] <= 4 and r["rank_interval"][1] <= 4 for r in rows)
    recs = [json.loads(x) for x in lines.splitlines()]
    assert doc["matches"] == len(recs) == 30  # every match of the journal counts
    for r in rows:  # each bot's numbers hold all its matches, those against "random" too
        mine = [d for d in recs if r["name"] in d["bots"]]
        assert r["matches"] == len(mine) == 18
        assert r["mean_rank"] == round(sum(d["ranks"][d["bots"].index(r["name"])] for d in mine) / 18, 4)
    assert not any("random" in (p["bot"], p["opponent"]) for p in doc["head_to_head"])
    assert len(doc["head_to_head"]) == 4 * 3 and set(doc["rating_history"]["mu"]) == {r["name"] for r in rows}
    # a run of the four from the start has fewer matches: the standings differ from it
    scratch = _write(tmp_path, "scratch.toml", "scratch", BOTS[:2] + BOTS[3:])
    _run(str(scratch))
    assert json.loads((tmp_path / "scratch" / "standings.json").read_text())["matches"] == 12
    # a pure function of the journal: its lines in another order give the same bytes
    published = {n: (out / n).read_bytes() for n in ("README.md", "standings.json", "standings.csv", "index.html")}
    (out / "matches.jsonl").write_text("".join(x + "\n" for x in reversed(lines.splitlines())))
    assert CliRunner().invoke(main, ["leaderboard", str(out)]).exit_code == 0
    for n, data in published.items():
        assert (out / n).read_bytes() == data, n
    bot_page = (out / "bots" / "bots.js").read_text()
    assert '"random"' in bot_page  # named in the match lists, linking its page: it played
    removed = (out / "bots" / "random.html").read_text()
    assert "<b>Removed</b> from the tournament: its 18 matches stay in the journal" in removed
    report = verify(out)
    assert report.ok, report


@pytest.mark.parametrize(
    "settings",
    [
        {"duplicate": True},
        {"format": "gauntlet", "challengers": ["late", "r2"], "duplicate": True, "rounds": 2},
        {"format": "gauntlet", "challengers": ["late", "r2"], "challengers_meet": True, "rounds": 3},
    ],
    ids=["round_robin", "gauntlet", "gauntlet-meet"],
)
def test_fixture_identity_does_not_depend_on_positions_and_lines_find_their_fixture(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    forward = schedule(load_config(_write(tmp_path, "f.toml", "f", BOTS, **settings)))
    backward = schedule(load_config(_write(tmp_path, "b.toml", "b", BOTS[::-1], **settings)))

    def named(s: Any) -> set[tuple[Any, ...]]:
        return {(f.id, f.order, f.seed, tuple(s.names[b] for b in f.seats), f.deal) for f in s}

    assert named(forward) == named(backward)
    assert len({f.order for f in forward}) == len(forward)
    for s in (forward, backward):
        for f in s:
            assert s.position({"index": f.order, "bots": [s.names[b] for b in f.seats]}) == f.index


def test_team_grows_too_and_todays_fixtures_are_unchanged_without_grow(tmp_path: Path) -> None:
    team = {"game": "the_game", "format": "team", "matches": 4, "players": 2}
    small = schedule(load_config(_write(tmp_path, "s.toml", "s", BOTS[:3], **team)))
    big = schedule(load_config(_write(tmp_path, "b.toml", "b", BOTS, **team)))
    assert {(f.id, f.seed) for f in small} < {(f.id, f.seed) for f in big}
    for f in big:
        assert big.position({"index": f.order, "bots": [big.names[f.seats[0]]] * 2}) == f.index
    plain = schedule(load_config(_write(tmp_path, "p.toml", "p", BOTS[:4], grow=False)))
    assert [f.id for f in plain][:3] == ["m000000", "m000001", "m000002"] and plain[0].order is None


def test_grow_with_random_tables_or_settled_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tournament\.grow: is for round_robin"):
        check_format(load_config(_write(tmp_path, "r.toml", "r", BOTS, format="random", matches=5)))
    with pytest.raises(ConfigError, match="cannot also stop when settled"):
        load_config(_write(tmp_path, "s.toml", "s", BOTS, stop="settled"))
