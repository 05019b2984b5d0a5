"""A throwaway game written as a folder outside the source tree and registered for one
test (what adding a game takes: a folder and a registry line): Tiny, two seats picking 1
or 2 in turn. Used by the game-folder and the replay-pack tests."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.bots.client import schema as wire
from referee.games import GAMES
from referee.games.base import Game
from tests.support.cli import run_here
from tests.support.steady import Steady
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

TINY_RULES = '''
"""Tiny: two seats pick 1 or 2 in turn, twice each; the higher sum wins."""

from dataclasses import dataclass, field

from referee.games.base import Game, GameInfo, IllegalAction, Result, compact, ranks_from_scores

TURNS = 4


@dataclass
class TinyState:
    seats: int
    picks: list = field(default_factory=list)


class Tiny(Game):
    info = GameInfo(id="tiny", title="Tiny", min_seats=2, max_seats=2, cooperative=False, score_min=0)

    def setup(self, seats, seed, options):
        self.check_options(seats, options)
        return TinyState(seats)

    def to_act(self, state):
        return () if self.is_over(state) else (len(state.picks) % state.seats,)

    def view(self, state, seat):
        return {"picks": list(state.picks)}

    def legal(self, state, seat):
        return [1, 2]

    def apply(self, state, seat, action):
        if seat not in self.to_act(state) or action not in (1, 2):
            raise IllegalAction(f"seat {seat} cannot play {action!r}")
        state.picks.append(action)
        return state

    def is_over(self, state):
        return len(state.picks) >= TURNS

    def result(self, state):
        scores = [float(sum(state.picks[s :: state.seats])) for s in range(state.seats)]
        return Result(scores, ranks_from_scores(scores, False), lower_is_better=False)

    def redeal_hidden(self, state, seat, rng):
        return self.copy(state)  # nothing is hidden

    def glance(self, view):
        return f"tiny picks {compact(view['picks'])}"

    def sample_opponent(self):
        return None  # no sample bot: check-bot lets the bot under test hold every seat


GAME = Tiny()
'''

TINY_SCHEMA = {
    "$schema": wire.DIALECT,
    "$id": wire.BASE + "games/tiny.json",
    "$defs": {
        "state": {"type": "object", "properties": {"picks": {"type": "array", "items": {"enum": [1, 2]}}}},
        "action": {"enum": [1, 2]},
        "act_reply": {
            "allOf": [{"$ref": "../protocol.json#/$defs/act_reply"}],
            "properties": {"action": {"$ref": "#/$defs/action"}},
        },
    },
}

TINY_VIEWER = (
    "// Tiny's renderer.\nG.board=(pub,vs,acting)=>`<p id=\"tiny-board\">picks ${esc(pub.picks.join(' '))}</p>`;\n"
)


def tiny_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, replay_js: str | None = None
) -> Iterator[Game]:
    """Tiny written to ``tmp_path/<package>/tiny`` (with ``replay_js`` as its replay.js if
    given) and registered while the caller's fixture lasts."""
    folder = tmp_path / package / "tiny"
    folder.mkdir(parents=True)
    (folder.parent / "__init__.py").write_text("")
    (folder / "__init__.py").write_text(f"from {package}.tiny.rules import GAME\n")
    (folder / "rules.py").write_text(textwrap.dedent(TINY_RULES))
    (folder / "schema.json").write_text(json.dumps(TINY_SCHEMA, indent=1) + "\n")
    (folder / "viewer.js").write_text(TINY_VIEWER)
    if replay_js is not None:
        (folder / "replay.js").write_text(replay_js)
    monkeypatch.syspath_prepend(str(tmp_path))
    game: Game = importlib.import_module(f"{package}.tiny").GAME
    monkeypatch.setitem(GAMES, "tiny", game)
    yield game
    for name in [m for m in sys.modules if m.startswith(package)]:
        del sys.modules[name]


def play_tiny(tmp_path: Path, name: str, rounds: int) -> Path:
    """A real tournament of Tiny between two seats of one real bot (``rounds`` rounds, a
    deadline no load reaches), run in this process into ``tmp_path/out``; the folder."""
    bot = Steady()
    try:
        cfg = tmp_path / "tiny.toml"
        cfg.write_text(
            f'[tournament]\nname = "{name}"\ngame = "tiny"\nseed = 5\nplayers = 2\nrounds = {rounds}\n'
            f"[limits]\ndeadline_ms = {UNREACHABLE_DEADLINE_MS}\n"
            f'[[bot]]\nname = "one"\nurl = "{bot.url}"\n[[bot]]\nname = "two"\nurl = "{bot.url}"\n'
        )
        out = tmp_path / "out"
        run_here(cfg, out)
    finally:
        bot.stop()
    return out
