"""The gauntlet format: one challenger per table against the field, from the journal of
real runs (sample-bot processes over HTTP) and from the schedule itself."""

from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.games import get_game
from referee.report.publish import build_leaderboard, render_markdown
from referee.run.runner import JOURNAL, run_tournament
from referee.schedule.formats import match_count, schedule
from referee.schedule.registry import GauntletFormat, check_format
from referee.schedule.settings import published
from referee.store.tournament_file import tournament_document

pytestmark = pytest.mark.parallel

NIMMT = ["python", "-m", "sample_bots.nimmt"]
FIELD = (("f-greedy", "greedy"), ("f-cautious", "cautious"), ("f-random", "random"), ("f-greedy2", "greedy"))


def _config(tmp_path: Path, **tournament: Any) -> Path:
    doc = {
        "tournament": {
            "name": "gauntlet",
            "game": "nimmt_plus",
            "seed": 9,
            "players": 3,
            "format": "gauntlet",
            "challengers": ["c-cautious", "c-random"],
            "concurrency": 4,
            "output": str(tmp_path / "out"),
            **tournament,
        },
        "game": {"variant": "plus"},
        "bot": [
            {"name": n, "command": NIMMT + [s, "--port", "{port}"]}
            for n, s in (*FIELD, ("c-cautious", "cautious"), ("c-random", "random"))
        ],
    }
    path = tmp_path / "gauntlet.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


def _records(tmp_path: Path, **tournament: Any) -> tuple[Any, list[dict[str, Any]]]:
    config = load_config(_config(tmp_path, **tournament))
    asyncio.run(run_tournament(config))
    return config, [json.loads(line) for line in (config.output / JOURNAL).read_text().splitlines()]


def test_every_table_holds_one_challenger_and_each_sits_every_seat_equally(tmp_path: Path) -> None:
    config, records = _records(tmp_path, rounds=3)
    # 2 challengers x C(4 field bots, 2) x 3 rounds
    assert len(records) == match_count(config) == 2 * 6 * 3
    challengers = set(config.challengers)
    seats: dict[str, Counter[int]] = defaultdict(Counter)
    tables: Counter[tuple[str, frozenset[str]]] = Counter()
    for rec in records:
        at_table = [b for b in rec["bots"] if b in challengers]
        assert len(at_table) == 1, rec["bots"]
        seats[at_table[0]][rec["bots"].index(at_table[0])] += 1
        tables[(at_table[0], frozenset(rec["bots"]))] += 1
    for c in challengers:
        assert seats[c] == {0: 6, 1: 6, 2: 6}, (c, seats[c])
    assert len(tables) == 12 and set(tables.values()) == {3}, "every field combination once a round"

    board = build_leaderboard(tournament_document(published(config), match_count(config)), records)
    roles = {r["name"]: r["role"] for r in board.document["standings"]}
    assert roles == {"c-cautious": "challenger", "c-random": "challenger", **{n: "field" for n, _ in FIELD}}
    text = render_markdown(board)
    assert "c-random (challenger)" in text and "f-greedy (field)" in text and "challengers never meet" in text


def test_duplicate_gauntlet_deals_every_hand_of_a_deal_to_the_challenger(tmp_path: Path) -> None:
    config, records = _records(tmp_path, rounds=1, duplicate=True, challengers=["c-cautious"])
    assert len(records) == 10 * 3  # C(5 field bots, 2) deals (c-random is in the field now) x 3 rotations
    game = get_game("nimmt_plus")
    deals: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        deals[rec["deal"]].append(rec)
    for group in deals.values():
        assert len(group) == 3 and len({r["seed"] for r in group}) == 1
        state = game.setup(3, group[0]["seed"], config.options)
        hands = [json.dumps(game.view(state, seat), sort_keys=True) for seat in range(3)]
        held = {hands[rec["bots"].index("c-cautious")] for rec in group}
        assert held == set(hands), "the challenger held every hand of the deal"
        assert all(sum(b == "c-cautious" for b in rec["bots"]) == 1 for rec in group)


def test_challengers_meet_only_when_asked(tmp_path: Path) -> None:
    apart = schedule(load_config(_config(tmp_path, rounds=1)))
    meet = schedule(load_config(_config(tmp_path, rounds=1, challengers_meet=True)))
    c = {4, 5}  # bot indices of the challengers
    assert all(len(c & set(f.seats)) == 1 for f in apart)
    assert len(meet) == 2 * 10  # each challenger meets C(5 other bots, 2) tables
    assert any(len(c & set(f.seats)) == 2 for f in meet)


def test_random_gauntlet_tables_are_drawn_from_the_seed(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, matches=40))
    fixtures = schedule(cfg)
    assert len(fixtures) == 40 and GauntletFormat.size_key(cfg) == "matches"
    assert [f.seats for f in fixtures] == [f.seats for f in schedule(cfg)]
    assert Counter(next(b for b in f.seats if b >= 4) for f in fixtures) == {4: 20, 5: 20}
    assert len({f.seats for f in fixtures}) > 10
    assert fixtures[17] == schedule(cfg)[17]  # random access gives what iteration gives


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"challengers": ["nobody"]}, "tournament.challengers[0]: 'nobody' is not the name of a [[bot]]"),
        ({"challengers": []}, "a gauntlet needs challengers"),
        ({"challengers": ["c-random", "c-random"]}, "named twice"),
        ({"players": 5, "challengers": ["c-random", "c-cautious", "f-greedy"]}, "the field has 3"),
        ({"format": "round_robin"}, "tournament.challengers: is for format = 'gauntlet'"),
    ],
)
def test_bad_gauntlets_are_one_line_errors(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        check_format(load_config(_config(tmp_path, **change)))
    assert message in str(err.value) and "\n" not in str(err.value)
