"""Which matches a tournament plays, in which order, with which seed (pure).

``round_robin``: every combination of ``players`` bots, each played ``rounds``
times; round r seats the combination rotated by r, so with ``rounds`` a multiple of
``players`` every bot sits in every seat equally often. Fixtures are round-major, so
a run stopped half-way has played whole rounds.

``random``: ``matches`` tables drawn from the tournament seed, seats shuffled.

``team`` (cooperative games): ``matches`` deals, and every bot plays every deal as a
homogeneous team (all seats the same bot), so bots are compared on identical cards.

``duplicate = true`` (round_robin and random): every table above is a deal, played
once per seat rotation of the table, one after another, all with the deal's seed, so
every bot of the table holds every hand of the deal (results are then compared per
deal, which removes most of the luck of the cards).

Every match seed is derived from the tournament seed and the fixture index alone (for
``team``, from the deal index, so every bot gets the same cards), so the same config
always deals the same cards.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass

from ..config import TournamentConfig


@dataclass(frozen=True)
class Fixture:
    """One scheduled match: its index, id, seed and the bot (by index) in each seat."""

    index: int
    id: str
    seed: int
    seats: tuple[int, ...]
    deal: int | None = None  # the deal index where several fixtures share a deal


def derive_seed(tournament_seed: int, index: int) -> int:
    """The seed of fixture ``index`` (63 bits, stable across platforms and versions)."""
    digest = hashlib.sha256(f"referee/{tournament_seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def match_id(index: int) -> str:
    """The id of the match with fixture ``index``: m000042."""
    return f"m{index:06d}"


def schedule(config: TournamentConfig) -> list[Fixture]:
    """Every fixture of the tournament, in play order."""
    n_bots, k = len(config.bots), config.players
    tables: list[tuple[int, ...]] = []
    deals: list[int | None] = []  # the deal of each table, where tables share deals
    if config.format == "round_robin":
        combos = list(itertools.combinations(range(n_bots), k))
        for r in range(config.rounds):
            for combo in combos:
                shift = r % k
                tables.append(combo[shift:] + combo[:shift])
    elif config.format == "team":
        for d in range(config.matches):
            for b in range(n_bots):
                tables.append((b,) * k)
                deals.append(d)
    elif config.format == "random":
        rng = random.Random(derive_seed(config.seed, -1))
        for _ in range(config.matches):
            tables.append(tuple(rng.sample(range(n_bots), k)))
    else:  # config.py refuses other formats before this point
        raise ValueError(f"unknown format {config.format!r}")
    if config.duplicate and config.format != "team":
        tables, deals = _rotations(tables)
    if not deals:
        deals = [None] * len(tables)
    return [
        Fixture(i, match_id(i), derive_seed(config.seed, i if d is None else d), t, deal=d)
        for i, (t, d) in enumerate(zip(tables, deals))
    ]


def _rotations(tables: list[tuple[int, ...]]) -> tuple[list[tuple[int, ...]], list[int | None]]:
    """Every table as a deal played once per seat rotation (deal d = table d)."""
    out: list[tuple[int, ...]] = []
    deals: list[int | None] = []
    for d, t in enumerate(tables):
        for r in range(len(t)):
            out.append(t[r:] + t[:r])
            deals.append(d)
    return out, deals


def seat_balance(fixtures: list[Fixture], n_bots: int, players: int) -> bool:
    """True when every bot sits in every seat equally often."""
    counts = [[0] * players for _ in range(n_bots)]
    for f in fixtures:
        for seat, bot in enumerate(f.seats):
            counts[bot][seat] += 1
    return all(len(set(row)) <= 1 for row in counts)
