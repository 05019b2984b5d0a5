"""``referee plan``: a small pilot of a tournament, played in a temporary folder, and how
many deals a settled top K would need at the configured confidence."""

from __future__ import annotations

import math
import secrets
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from referee.config.model import TournamentConfig
from referee.run.runner import run_tournament
from referee.run.stopping import DealValues
from referee.stats.sequential import FloatArray, deals_needed, pair_matrix, settled
from referee.store import journal as jn
from referee.store.journal import JOURNAL


@dataclass(frozen=True)
class PilotEstimate:
    """What a pilot played and what it projects."""

    deals: int  # deals the pilot played
    deal_size: int  # matches per deal
    needed: int | None  # deals a settled top K needs; None: not in sight (a pair looks equal)
    # adjacent pairs whose pilot difference is within its noise (95%): if they are equal,
    # no budget settles them, whatever ``needed`` says (it takes the pilot's difference as real)
    equal: list[tuple[str, str]] = field(default_factory=list)


async def pilot(config: TournamentConfig, deals: int) -> PilotEstimate:
    """Play the first ``deals`` deals of ``config`` in a temporary folder (with a fresh
    seed when the config's is secret: the pilot's cards need not be) and estimate."""
    with tempfile.TemporaryDirectory(prefix="referee-plan-") as tmp:
        trial = config.with_overrides(output=Path(tmp))
        if trial.seed_secret:
            trial = trial.with_overrides(seed=secrets.randbits(63))
        report = await run_tournament(trial, pilot_deals=deals)
        trial = report.config or trial  # without the bots on_unready = "exclude" left out
        values = DealValues(trial)
        values.add_lines(jn.read_journal(trial.output / JOURNAL))
    played = min(deals, values.deals)
    table = values.values(played)
    need = deals_needed(table, values.bound, confidence=config.confidence, top=config.top)
    equal = looks_equal(table, values.bound, config.confidence, config.top)
    return PilotEstimate(played, values.deal_size, need, [(values.names[a], values.names[b]) for a, b in equal])


def looks_equal(values: FloatArray, bound: float, confidence: float, top: int) -> list[tuple[int, int]]:
    """The adjacent pairs of the pilot's order (the top ``top``) whose mean difference per
    shared deal is within 1.96 standard errors of zero: the pilot cannot tell them apart."""
    probe = settled(values, bound, confidence=confidence, top=top)
    x = pair_matrix(values, bound)
    out = []
    for a, b, _ in probe.pairs:
        row = x[a, b]
        shared = row[~np.isnan(row)]
        if len(shared) < 2:
            out.append((a, b))
            continue
        m, sd = float(np.mean(shared)), float(np.std(shared, ddof=1))
        if abs(m) <= 1.96 * sd / math.sqrt(len(shared)):
            out.append((a, b))
    return out
