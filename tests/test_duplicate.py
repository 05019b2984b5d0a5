"""Duplicate deals end to end: ``duplicate = true`` with real sample-bot processes; from
the journal alone, every bot of a table held every hand of each deal, and the
leaderboard is computed over deals."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path

import pytest
import tomli_w

from referee.config.parse import load_config
from referee.games import get_game
from referee.report.publish import build_leaderboard
from referee.run.runner import JOURNAL, run_tournament
from referee.schedule.formats import schedule
from referee.schedule.settings import published
from referee.store.tournament_file import tournament_document

pytestmark = pytest.mark.parallel

NIMMT = ["python", "-m", "sample_bots.nimmt"]


def test_every_bot_of_a_table_holds_every_hand_of_each_deal(tmp_path: Path) -> None:
    doc = {
        "tournament": {
            "name": "dup",
            "game": "nimmt_plus",
            "seed": 5,
            "players": 3,
            "format": "round_robin",
            "rounds": 1,
            "duplicate": True,
            "concurrency": 4,
            "output": str(tmp_path / "out"),
        },
        "game": {"variant": "plus"},
        "bot": [
            {"name": n, "command": NIMMT + [s, "--port", "{port}"]}
            for n, s in (("greedy", "greedy"), ("cautious", "cautious"), ("random", "random"), ("g2", "greedy"))
        ],
    }
    path = tmp_path / "dup.toml"
    path.write_text(tomli_w.dumps(doc))
    config = load_config(path)
    asyncio.run(run_tournament(config))
    records = [json.loads(line) for line in (config.output / JOURNAL).read_text().splitlines()]
    assert len(records) == 4 * 3  # 4 tables (combinations of 3 of 4 bots) x 3 rotations

    game = get_game("nimmt_plus")
    deals: dict[int, list[dict]] = defaultdict(list)
    for rec in records:
        deals[rec["deal"]].append(rec)
    assert len(deals) == 4
    for deal, group in deals.items():
        assert len(group) == 3
        assert len({r["seed"] for r in group}) == 1 and len({r["deal_hash"] for r in group}) == 1, (
            "every rotation of a deal is dealt the same cards"
        )
        state = game.setup(3, group[0]["seed"], config.options)
        hands = [json.dumps(game.view(state, seat), sort_keys=True) for seat in range(3)]
        assert len(set(hands)) == 3
        held: dict[str, set[str]] = defaultdict(set)
        for rec in group:
            for seat, bot in enumerate(rec["bots"]):
                held[bot].add(hands[seat])
        assert len(held) == 3
        for bot, seen in held.items():
            assert seen == set(hands), f"deal {deal}: {bot} did not hold every hand"

    board = build_leaderboard(tournament_document(published(config), len(schedule(config))), records)
    assert board.document["method"]["unit"] == "deal" and board.document["method"]["deals"] == 4
    assert {r["name"]: r["matches"] for r in board.document["standings"]} == {
        "greedy": 9,
        "cautious": 9,
        "random": 9,
        "g2": 9,
    }
