"""The registry of games: every game the referee can run, by id."""

from __future__ import annotations

from referee.games.base import Game

GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add ``game`` to the registry under its id."""
    GAMES[game.info.id] = game
    return game


def get_game(game_id: str) -> Game:
    """The registered game ``game_id``; KeyError if there is none."""
    return GAMES[game_id]


def _load() -> None:
    from referee.games import dieci, drahtseilakt, nimmt_plus, the_game

    for module in (dieci, drahtseilakt, nimmt_plus, the_game):
        register(module.GAME)


_load()
