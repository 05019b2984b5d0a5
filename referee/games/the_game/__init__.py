"""The Game: the rules (``rules.py``), the wire schema (``schema.json``) and the replay
viewer's renderer (``viewer.js``); the registry takes ``GAME``."""

from referee.games.the_game.rules import GAME

__all__ = ["GAME"]
