"""6 nimmt! Plus: the rules (``rules.py``), the wire schema (``schema.json``) and the replay
viewer's renderer (``viewer.js``); the registry takes ``GAME``."""

from referee.games.nimmt_plus.rules import GAME

__all__ = ["GAME"]
