"""Bots a resumed tournament was excluding, greeted again on every ``--resume``.

A ladder or a tournament with ``grow = true`` greets them with the others (they join when
they answer: ``lineup.excluded_before`` keeps none out). Any other format dealt its
fixtures without them, so they stay out; they are greeted all the same, so that the reason
published is today's: why they are still not ready, or that they are ready again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from referee.config.model import TournamentConfig
from referee.run.lineup import greet_all, public_reason

READY_AGAIN = "ready again, but the fixtures were dealt without it (only a ladder or grow = true takes a bot back)"


async def greet_again(config: TournamentConfig, excluded: Mapping[str, str]) -> dict[str, str]:
    """The bots of ``config`` named in ``excluded`` (name -> reason) greeted again (started
    and stopped when managed): name -> the reason to publish now."""
    if not excluded:
        return {}
    subset = replace(config, bots=tuple(b for b in config.bots if b.name in excluded))
    statuses = await greet_all(subset)
    return {s.name: READY_AGAIN if s.ok else public_reason(s) for s in statuses}
