"""The registry of games: every game the referee can run, by id.

A game is one folder, ``referee/games/<id>/`` (see ``referee/games/base.py``); adding one
is adding its folder and its line in ``FOLDERS``.
"""

from __future__ import annotations

import importlib

from referee.games.base import Game

FOLDERS = (
    "dieci",
    "drahtseilakt",
    "nimmt_plus",
    "the_game",
)

GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add ``game`` to the registry under its id."""
    GAMES[game.info.id] = game
    return game


def get_game(game_id: str) -> Game:
    """The registered game ``game_id``; KeyError if there is none."""
    return GAMES[game_id]


def _load() -> None:
    for folder in FOLDERS:
        register(importlib.import_module(f"{__name__}.{folder}").GAME)


_load()
