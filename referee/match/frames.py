"""A played match's decisions again, through the rules (pure: no I/O).

``frames`` yields, for every decision, the view the deciding seat was sent, computed as
``play_match`` computed it: for a simultaneous choice every seat's view is taken before
any of them is applied. ``referee replay`` prints the frames; the viewer draws them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.errors import ReplayError
from referee.games.base import Game, IllegalAction, InvalidExtras
from referee.record import Move


@dataclass
class Frame:
    """One decision: its index in the match, the move, the view its seat was sent, how
    many legal actions it had, and every seat's view once the move was applied."""

    index: int
    move: Move
    sent: dict[str, Any]
    n_legal: int
    after: list[dict[str, Any]] | None


def frames(
    game: Game, options: Mapping[str, Any], seed: int, n: int, moves: Sequence[Move], after: bool = False
) -> Iterator[Frame]:
    """Every decision of ``moves`` in the match of ``n`` seats dealt from ``seed``, with the
    view its seat was sent; with ``after``, every seat's view once the decision is applied
    (what a spectator sees next). A move the rules refuse raises ReplayError."""
    state = game.setup(n, seed, options)
    # with ``after``, the views after the last decision are the views a group is sent next
    # (the state has not changed since): computed once, not twice
    now = [game.view(state, k) for k in range(n)] if after else None
    i = 0
    while not game.is_over(state) and i < len(moves):
        group = [
            (s, now[s] if now is not None else game.view(state, s), len(game.legal(state, s)))
            for s in game.to_act(state)
        ]
        for s, view, n_legal in group:
            if i >= len(moves):
                return
            mv = moves[i]
            if mv.seat != s:
                raise ReplayError(f"decision {i + 1} is seat {mv.seat}'s, the rules ask seat {s}")
            try:
                state = game.apply(state, s, mv.action)
            except IllegalAction as exc:
                raise ReplayError(
                    f"decision {i + 1} ({json.dumps(mv.action)[:80]}) is refused by the rules: {exc} "
                    "(referee verify checks the whole folder)"
                ) from exc
            if mv.extras:
                with contextlib.suppress(InvalidExtras):  # refused extras were a fault in play, nothing more
                    state = game.apply_extras(state, s, mv.extras)
            views = [game.view(state, k) for k in range(n)] if after else None
            yield Frame(i, mv, view, n_legal, views)
            i += 1
        if after:
            now = views
