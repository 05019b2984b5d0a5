"""A ladder season's final (pure): its fixtures, blocks and who sits where.

The season holds fixtures ``0 .. S - 1`` (S: its ``matches``); the final, once the season
is closed, ``S .. S + M - 1`` (ids go on: ``m005000``, ...). Its tables come in groups: a
group of ``k`` finalists plays ``k`` matches on one deal, one per seat rotation
(duplicate: every finalist of the group sits in every seat once on the same cards; the
deal is the index of the group's first match). Groups are cut from a stream of seeded
permutations of the finalists, each group taking the next ``k`` distinct ones, so every
finalist plays about equally often and, group by group, equally often in every seat.

The final is played in blocks of ``batch`` groups (deals), rounded up to whole rounds (a
round: every finalist once, about); after each whole block the places among the finalists
are looked at (``stats.places.FinalWatch``) and the final ends at the first block after
which its prize places are settled, or at its budget.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.schedule.fixture import derive_seed

FINAL_INDEX = -4  # derive_seed(seed, -4, secret) draws the groups: secret as long as the deals are


@dataclass(frozen=True)
class FinalPlan:
    """Where the final sits in the schedule: after ``start`` season matches, at most
    ``matches`` of them, ``finalists`` bots, ``players`` seats per table."""

    start: int
    matches: int
    finalists: int
    players: int
    batch: int = 10  # deals (groups) between two looks, rounded up to whole rounds

    @property
    def end(self) -> int:
        """The fixture index past the final's budget."""
        return self.start + self.matches

    def block_tables(self) -> int:
        """Tables per block: ``batch`` groups, rounded up to whole rounds of groups."""
        per_round = -(-self.finalists // self.players)
        return per_round * -(-self.batch // per_round) * self.players

    def blocks(self) -> list[tuple[int, int]]:
        """(first fixture, end fixture) of every block, in order."""
        size = self.block_tables()
        return [(lo, min(lo + size, self.end)) for lo in range(self.start, self.end, size)]

    def block_of(self, index: int) -> int:
        """The block of final fixture ``index``."""
        return (index - self.start) // self.block_tables()

    def deal(self, index: int) -> int:
        """The deal of final fixture ``index``: the index of its group's first match."""
        return self.start + (index - self.start) // self.players * self.players

    def holds(self, index: int) -> bool:
        """True for a fixture index of the final."""
        return self.start <= index < self.end


def final_plan(settings: Mapping[str, Any]) -> FinalPlan | None:
    """The final of a config's or ``tournament.json``'s settings (``matches``, ``players``,
    ``final``, ``closed``, ``batch``): None without a final or before the season is closed."""
    final = settings.get("final") or {}
    if not final or not settings.get("closed"):
        return None
    return FinalPlan(
        int(settings["matches"]),
        int(final["matches"]),
        int(final["bots"]),
        int(settings["players"]),
        int(settings.get("batch") or 10),
    )


def season_lineup(ladder: Mapping[str, Any] | None, plan: FinalPlan, epoch_tables: int | None = None) -> list[str]:
    """The bot names in play at the season's last epoch (a ladder plan's document, whose
    entry keys are ``name`` or ``name@version``): the bots the finalists are drawn from."""
    if not ladder:
        return []
    size = int(epoch_tables or ladder["epoch_tables"])
    last = (plan.start - 1) // size
    keys: Sequence[str] = ladder["lineups"][0]["bots"]
    for seg in ladder["lineups"]:
        if int(seg["from"]) > last:
            break
        keys = seg["bots"]
    return [k.split("@", 1)[0] for k in keys]


@dataclass
class FinalTables:
    """The final's groups, block by block: each block's drawn from its own seeded stream of
    permutations of the finalists it seats (``focus``: positions among the finalists)."""

    seed: int
    k: int
    _cache: dict[int, tuple[tuple[tuple[int, int], ...], list[tuple[int, ...]]]] = field(default_factory=dict)

    @classmethod
    def of(cls, seed: int, secret: bool, k: int) -> FinalTables:
        """The tables of a final at ``k`` seats, from the tournament's seed."""
        return cls(derive_seed(seed, FINAL_INDEX, secret), k)

    def seats(self, plan: FinalPlan, index: int, focus: Mapping[int, int]) -> tuple[int, ...]:
        """Finalist positions in the seats of final fixture ``index`` (its group, rotated),
        its block seating ``focus`` (position -> the final's matches it played before)."""
        block = plan.block_of(index)
        g, r = divmod(index - plan.start - block * plan.block_tables(), self.k)
        group = self.groups(plan, block, focus)[g]
        return group[r:] + group[:r]

    def groups(self, plan: FinalPlan, block: int, focus: Mapping[int, int]) -> list[tuple[int, ...]]:
        """The groups of ``block``: each the next ``k`` distinct of a stream of seeded
        permutations of ``focus``, the first with the finalists that played least first (so
        play stays even from block to block); a finalist skipped comes first in the next group."""
        key = tuple(sorted(focus.items()))
        cached = self._cache.get(block)
        if cached is not None and cached[0] == key:
            return cached[1]
        rng = random.Random(hashlib.sha256(f"referee/final/{self.seed}/{block}".encode()).digest())
        tie = {b: rng.random() for b, _ in key}
        stream = sorted(focus, key=lambda b: (focus[b], tie[b]))
        out: list[tuple[int, ...]] = []
        for _ in range(plan.block_tables() // self.k):
            chosen: list[int] = []
            rest: list[int] = []
            while len(chosen) < self.k:
                if not stream:
                    stream = [b for b, _ in key]
                    rng.shuffle(stream)
                b = stream.pop(0)
                (rest if b in chosen else chosen).append(b)
            stream = rest + stream
            out.append(tuple(chosen))
        self._cache = {block: (key, out)}
        return out
