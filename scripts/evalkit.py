"""What the in-process evaluation scripts share: the ``act`` message exactly as the
wire carries it (built and decoded by the referee's own protocol module), and a mean
with its 95 % confidence interval (the referee's own formula)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from referee.bots import protocol
from referee.tournament.standings import ci95


def act_message(
    game: str,
    options: Mapping[str, Any],
    tournament: str,
    match: str,
    players: Sequence[str],
    seat: int,
    decision: int,
    state: Any,
    legal: Sequence[Any],
) -> dict[str, Any]:
    """The ``act`` message a bot at ``seat`` would receive, as decoded JSON."""
    ctx = protocol.MatchContext(tournament, match, game, dict(options), list(players))
    return json.loads(protocol.act(ctx, seat, decision, 1000, state, legal))


def mean_ci(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % interval (nan for fewer than two values)."""
    half = ci95(xs)
    return statistics.fmean(xs), float("nan") if half is None else half
