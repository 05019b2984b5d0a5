"""While matches are played the cyclic collector runs with ``PLAY_GC_THRESHOLD`` (the
default's collections cost 13 % of the referee at concurrency 128); the thresholds the
process had are back once the run ends, also when it fails."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

from referee.config.parse import parse_config
from referee.errors import BotStartError
from referee.record import MatchRecord
from referee.run.local import PLAY_GC_THRESHOLD
from referee.run.runner import run_tournament
from referee.schedule.formats import Fixture

pytestmark = pytest.mark.parallel

NIMMT = ["python", "-m", "sample_bots.nimmt"]


def _config(tmp_path: Path, command: list[str]) -> object:
    doc = {
        "tournament": {"name": "gc", "game": "nimmt_plus", "players": 2, "rounds": 1, "output": str(tmp_path / "out")},
        "bot": [{"name": n, "command": command + [n, "--port", "{port}"]} for n in ("greedy", "random")],
    }
    return parse_config(doc, tmp_path / "gc.toml", {})


def test_matches_are_played_with_the_play_thresholds_and_the_old_ones_come_back(tmp_path: Path) -> None:
    before = gc.get_threshold()
    assert before != PLAY_GC_THRESHOLD
    seen: list[tuple[int, ...]] = []

    def hook(f: Fixture, rec: MatchRecord) -> None:
        seen.append(gc.get_threshold())

    asyncio.run(run_tournament(_config(tmp_path, NIMMT), before_write=[hook]))  # type: ignore[arg-type]
    assert seen and set(seen) == {PLAY_GC_THRESHOLD}
    assert gc.get_threshold() == before


def test_a_run_whose_bots_fail_leaves_the_thresholds_as_they_were(tmp_path: Path) -> None:
    before = gc.get_threshold()
    with pytest.raises(BotStartError):
        asyncio.run(run_tournament(_config(tmp_path, [str(tmp_path / "missing")])))  # type: ignore[arg-type]
    assert gc.get_threshold() == before
