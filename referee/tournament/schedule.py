"""Which matches a tournament plays, in which order, with which seed (pure).

``round_robin``: every combination of ``players`` bots, each played ``rounds``
times; round r seats the combination rotated by r, so with ``rounds`` a multiple of
``players`` every bot sits in every seat equally often. Fixtures are round-major, so
a run stopped half-way has played whole rounds.

``random``: ``matches`` tables drawn from the tournament seed, seats shuffled.

``team`` (cooperative games): ``matches`` deals, and every bot plays every deal as a
homogeneous team (all seats the same bot), so bots are compared on identical cards.

``gauntlet``: every table holds one challenger and ``players - 1`` of its opponents (the
field, and the other challengers too with ``challengers_meet``): per round, challenger
by challenger (in the order of ``challengers``), every combination of its opponents,
the challenger first, the table rotated by the round as in round robin; or, with
``matches`` and no ``rounds``, ``matches`` tables, challengers in turn, opponents drawn
from the table's own seed, the table rotated by its turn.

``duplicate = true`` (round_robin, random and gauntlet): every table above is a deal, played
once per seat rotation of the table, one after another, all with the deal's seed, so
every bot of the table holds every hand of the deal (results are then compared per
deal, which removes most of the luck of the cards).

Every match seed is derived from the tournament seed and the fixture index alone (for
``team`` and duplicate deals, from the deal index, so every bot gets the same cards),
so the same config always deals the same cards. A seed written in the tournament file
is hashed with SHA-256 (``referee/{seed}/{index}``); a secret seed drawn by the referee
(no ``seed`` in the file) is a key: HMAC-SHA256 of ``referee/{index}``.

The schedule is lazy: ``schedule(config)`` is a ``Sequence`` of fixtures that computes
fixture *i* from the config and *i* (round robin combinations are unranked; random
tables are replayed from checkpoints of the generator's state every few thousand
tables), so a schedule of a hundred million matches takes a few megabytes.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import random
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from ..config import TournamentConfig


@dataclass(frozen=True)
class Fixture:
    """One scheduled match: its index, id, seed and the bot (by index) in each seat."""

    index: int
    id: str
    seed: int
    seats: tuple[int, ...]
    deal: int | None = None  # the deal index where several fixtures share a deal


def derive_seed(tournament_seed: int, index: int, secret: bool = False) -> int:
    """The seed of fixture ``index`` (63 bits, stable across platforms and versions);
    with ``secret``, keyed by the 128-bit secret seed (HMAC-SHA256)."""
    if secret:
        key = tournament_seed.to_bytes(16, "big")
        digest = hmac.new(key, f"referee/{index}".encode(), hashlib.sha256).digest()
    else:
        digest = hashlib.sha256(f"referee/{tournament_seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def match_id(index: int) -> str:
    """The id of the match with fixture ``index``: m000042."""
    return f"m{index:06d}"


def unrank_combination(rank: int, n: int, k: int) -> tuple[int, ...]:
    """The ``rank``-th k-combination of range(n) in ``itertools.combinations`` order."""
    out: list[int] = []
    x = 0
    for slot in range(k):
        while True:
            below = math.comb(n - x - 1, k - slot - 1)
            if rank < below:
                out.append(x)
                x += 1
                break
            rank -= below
            x += 1
    return tuple(out)


class Schedule(Sequence[Fixture]):
    """Every fixture of a tournament, in play order, computed on demand."""

    WINDOW = 4096  # random tables kept after the cursor passes them (journal lines come a little out of order)

    def __init__(self, config: TournamentConfig) -> None:
        self.n_bots, self.k = len(config.bots), config.players
        self.format = config.format
        self.seed, self.secret = config.seed, config.seed_secret
        self.duplicate = config.duplicate and config.format != "team"
        self.rotations = self.k if self.duplicate else 1
        if config.format == "round_robin":
            self.combos = math.comb(self.n_bots, self.k)
            tables = self.combos * config.rounds
        elif config.format == "team":
            tables = config.matches * self.n_bots
        elif config.format == "random":
            tables = config.matches
        elif config.format == "gauntlet":
            index = {b.name: i for i, b in enumerate(config.bots)}
            self.challengers = [index[c] for c in config.challengers]
            chal = set(self.challengers)
            self.opponents = [
                [b for b in range(self.n_bots) if b != c and (config.challengers_meet or b not in chal)]
                for c in self.challengers
            ]
            self.gauntlet_random = config.gauntlet_random
            self.combos = math.comb(len(self.opponents[0]), self.k - 1)
            tables = config.matches if self.gauntlet_random else len(self.challengers) * self.combos * config.rounds
        else:  # config.py refuses other formats before this point
            raise ValueError(f"unknown format {config.format!r}")
        self.tables = tables
        self.total = tables * self.rotations
        if config.format == "random":
            self._every = max(4096, tables // 4096)  # at most ~4096 checkpoints of 2.5 KB
            self._rng = random.Random(derive_seed(config.seed, -1, config.seed_secret))
            self._checkpoints: dict[int, tuple[Any, ...]] = {0: self._rng.getstate()}
            self._pos = 0  # the table the generator draws next
            self._recent: dict[int, tuple[int, ...]] = {}

    def __len__(self) -> int:
        return self.total

    @overload
    def __getitem__(self, i: int) -> Fixture: ...
    @overload
    def __getitem__(self, i: slice) -> list[Fixture]: ...
    def __getitem__(self, i: int | slice) -> Fixture | list[Fixture]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.total))]
        if i < 0:
            i += self.total
        if not 0 <= i < self.total:
            raise IndexError(f"fixture {i} out of range (the schedule has {self.total})")
        t, r = divmod(i, self.rotations)
        table = self.table(t)
        deal: int | None = None
        if self.duplicate:
            table, deal = table[r:] + table[:r], t
        elif self.format == "team":
            deal = t // self.n_bots
        return Fixture(i, match_id(i), derive_seed(self.seed, i if deal is None else deal, self.secret), table, deal)

    def __iter__(self) -> Iterator[Fixture]:
        return self.iter_from(0)

    def iter_from(self, start: int) -> Iterator[Fixture]:
        """Fixtures ``start``, ``start + 1``, ... to the end, lazily."""
        for i in range(start, self.total):
            yield self[i]

    def expected(self, index: int) -> tuple[str, int, Sequence[int]]:
        """(id, seed, seats) of fixture ``index``: what a journal line must hold."""
        f = self[index]
        return f.id, f.seed, f.seats

    def table(self, t: int) -> tuple[int, ...]:
        """Base table ``t`` (before duplicate rotations): the bot in each seat."""
        if self.format == "round_robin":
            rnd, c = divmod(t, self.combos)
            combo = unrank_combination(c, self.n_bots, self.k)
            shift = rnd % self.k
            return combo[shift:] + combo[:shift]
        if self.format == "team":
            return (t % self.n_bots,) * self.k
        if self.format == "gauntlet":
            return self._gauntlet_table(t)
        return self._random_table(t)

    def _gauntlet_table(self, t: int) -> tuple[int, ...]:
        n_chal = len(self.challengers)
        if self.gauntlet_random:
            turn, c = divmod(t, n_chal)
            rng = random.Random(derive_seed(self.seed, -2 - t, self.secret))  # the table's own draw: random access
            others = tuple(rng.sample(self.opponents[c], self.k - 1))
        else:
            turn, rest = divmod(t, n_chal * self.combos)
            c, rank = divmod(rest, self.combos)
            others = tuple(self.opponents[c][i] for i in unrank_combination(rank, len(self.opponents[c]), self.k - 1))
        table = (self.challengers[c], *others)
        shift = turn % self.k
        return table[shift:] + table[:shift]

    def _random_table(self, t: int) -> tuple[int, ...]:
        if t in self._recent:
            return self._recent[t]
        if not self._pos <= t < self._pos + self._every:
            base = max(c for c in self._checkpoints if c <= t)
            version, words, gauss = self._checkpoints[base]
            self._rng.setstate((version, tuple(words), gauss))
            self._pos = base
            self._recent.clear()
        table: tuple[int, ...] = ()
        while self._pos <= t:
            table = tuple(self._rng.sample(range(self.n_bots), self.k))
            self._recent[self._pos] = table
            self._recent.pop(self._pos - self.WINDOW, None)
            self._pos += 1
            if self._pos % self._every == 0 and self._pos not in self._checkpoints:
                self._checkpoints[self._pos] = _compact_state(self._rng.getstate())
        return table


def _compact_state(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """A Mersenne Twister state with its 625 words in an array (2.5 KB instead of ~20)."""
    version, words, gauss = state
    return (version, array("L", words), gauss)


def schedule(config: TournamentConfig) -> Schedule:
    """Every fixture of the tournament, in play order (lazy; see ``Schedule``)."""
    return Schedule(config)


def seat_balance(fixtures: Sequence[Fixture], n_bots: int, players: int) -> bool:
    """True when every bot sits in every seat equally often."""
    counts = [[0] * players for _ in range(n_bots)]
    for f in fixtures:
        for seat, bot in enumerate(f.seats):
            counts[bot][seat] += 1
    return all(len(set(row)) <= 1 for row in counts)
