"""What the in-process evaluation scripts share: the ``act`` message exactly as the
wire carries it (built and decoded by the referee's own protocol module), and a mean
with its 95 % normal-approximation confidence interval."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from referee.bots.client import protocol


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
    if len(xs) < 2:
        return (statistics.fmean(xs) if xs else float("nan")), float("nan")
    return statistics.fmean(xs), 1.96 * statistics.stdev(xs) / math.sqrt(len(xs))
