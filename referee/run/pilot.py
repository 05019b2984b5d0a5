"""``referee plan``: a small pilot of a tournament, played in a temporary folder, and how
many deals a settled top K would need at the configured confidence."""

from __future__ import annotations

import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from referee.config.model import TournamentConfig
from referee.run.runner import run_tournament
from referee.run.stopping import DealValues
from referee.stats.sequential import deals_needed
from referee.store import journal as jn
from referee.store.journal import JOURNAL


@dataclass(frozen=True)
class PilotEstimate:
    """What a pilot played and what it projects."""

    deals: int  # deals the pilot played
    deal_size: int  # matches per deal
    needed: int | None  # deals a settled top K needs; None: not in sight (a pair looks equal)


async def pilot(config: TournamentConfig, deals: int) -> PilotEstimate:
    """Play the first ``deals`` deals of ``config`` in a temporary folder (with a fresh
    seed when the config's is secret: the pilot's cards need not be) and estimate."""
    with tempfile.TemporaryDirectory(prefix="referee-plan-") as tmp:
        trial = config.with_overrides(output=Path(tmp))
        if trial.seed_secret:
            trial = trial.with_overrides(seed=secrets.randbits(63))
        await run_tournament(trial, pilot_deals=deals)
        values = DealValues(trial)
        values.add_lines(jn.read_journal(trial.output / JOURNAL))
    played = min(deals, values.deals)
    need = deals_needed(values.values(played), values.bound, confidence=config.confidence, top=config.top)
    return PilotEstimate(played, values.deal_size, need)
