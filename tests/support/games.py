"""Every registered game at every seat count and every combination of its options: the
grid the conformance and schema tests walk."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest

from referee.bots.client import protocol
from referee.games import GAMES
from referee.games.base import Game, OptionError


def option_grid(game: Game) -> list[dict[str, Any]]:
    """Every combination of the game's enumerable options (others at their default)."""
    axes = []
    for o in game.info.options:
        if o.choices is not None:
            axes.append([(o.name, c) for c in o.choices])
        elif isinstance(o.default, bool):
            axes.append([(o.name, False), (o.name, True)])
    return [dict(combo) for combo in itertools.product(*axes)]


def cases() -> list[Any]:
    """``pytest.param(game, seats, options)`` for every game, seat count and option grid
    point the game accepts, labelled ``GAME-Np-OPTIONS``."""
    out = []
    for gid, game in sorted(GAMES.items()):
        for seats in range(game.info.min_seats, game.info.max_seats + 1):
            for opts in option_grid(game):
                try:
                    full = game.check_options(seats, opts)
                except OptionError:
                    continue  # a combination the game refuses for this seat count
                label = f"{gid}-{seats}p-" + "-".join(f"{k}={v}" for k, v in sorted(opts.items()))
                out.append(pytest.param(game, seats, full, id=label))
    return out


def roundtrip(x: Any) -> Any:
    """``x`` through JSON and back, encoded as the referee encodes every wire message
    (``protocol.dumps``)."""
    return orjson.loads(protocol.dumps(x))
