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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from referee.config.model import TournamentConfig


@dataclass(frozen=True)
class Fixture:
    """One scheduled match: its index, id, seed and the bot (by index) in each seat."""

    index: int
    id: str
    seed: int
    seats: tuple[int, ...]
    deal: int | None = None  # the deal index where several fixtures share a deal
    order: int | None = None  # grow: the journal's ``index``, from the names (``index`` is the position)


def derive_seed(tournament_seed: int, index: int, secret: bool = False) -> int:
    """The seed of fixture ``index`` (63 bits, stable across platforms and versions);
    with ``secret``, keyed by the 128-bit secret seed (HMAC-SHA256)."""
    if secret:
        key = tournament_seed.to_bytes(16, "big")
        digest = hmac.new(key, f"referee/{index}".encode(), hashlib.sha256).digest()
    else:
        digest = hashlib.sha256(f"referee/{tournament_seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def derive_key_seed(tournament_seed: int, key: str, secret: bool = False) -> int:
    """The seed of the fixture with name ``key`` in a tournament that grows (63 bits)."""
    if secret:
        mac = hmac.new(tournament_seed.to_bytes(16, "big"), f"referee/grow/{key}".encode(), hashlib.sha256)
        digest = mac.digest()
    else:
        digest = hashlib.sha256(f"referee/{tournament_seed}/grow/{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _bits(text: str, bits: int) -> int:
    """``bits`` bits of the SHA-256 of ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> (64 - bits)


def rank_combination(combo: Sequence[int], n: int) -> int:
    """The rank of the sorted ``combo`` of range(n) in ``itertools.combinations`` order."""
    k, rank, prev = len(combo), 0, -1
    for slot, x in enumerate(combo):
        for y in range(prev + 1, x):
            rank += math.comb(n - y - 1, k - slot - 1)
        prev = x
    return rank


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
        self.names = [b.name for b in config.bots]
        self.position_of = {n: i for i, n in enumerate(self.names)}
        self.grow = config.grow
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
            self.challenger_pos = {c: i for i, c in enumerate(self.challengers)}
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
        if self.grow:
            return self._grown(i, t, r)
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

    def _grown(self, i: int, t: int, r: int) -> Fixture:
        """Fixture ``i`` of a tournament that grows: its seed, id, order and deal come from
        the round and the names at its table, never from positions in the bot list."""
        if self.format == "team":
            d, b = divmod(t, self.n_bots)
            order = (d << 40) | _bits(f"team/{self.names[b]}", 40)
            return Fixture(i, f"g{order:x}", derive_seed(self.seed, d, self.secret), (b,) * self.k, d, order)
        rnd, canon = self._canonical(t)
        key = f"{rnd}/" + "|".join(self.names[b] for b in canon)
        deal = (rnd << 50) | _bits(key, 50)
        order = (deal << 6) | r
        shift = (rnd + r) % self.k
        seats = canon[shift:] + canon[:shift]
        seed = derive_key_seed(self.seed, key, self.secret)
        return Fixture(i, f"g{order:x}", seed, seats, deal if self.duplicate else None, order)

    def _canonical(self, t: int) -> tuple[int, tuple[int, ...]]:
        """(round, the table in name order) of base table ``t`` of a tournament that grows;
        a gauntlet's challenger first, then its opponents by name."""
        if self.format == "gauntlet":
            rnd, rest = divmod(t, len(self.challengers) * self.combos)
            c, rank = divmod(rest, self.combos)
            opp = self.opponents[c]
            others = sorted(
                (opp[j] for j in unrank_combination(rank, len(opp), self.k - 1)), key=self.names.__getitem__
            )
            return rnd, (self.challengers[c], *others)
        rnd, c = divmod(t, self.combos)
        return rnd, tuple(sorted(unrank_combination(c, self.n_bots, self.k), key=self.names.__getitem__))

    def position(self, doc: Mapping[str, Any]) -> int | None:
        """The fixture a journal line is of: its ``index``; in a tournament that grows, the
        position its round and names give (-1 when none fits, None when a bot of the line
        is no longer in the file)."""
        if not self.grow:
            return int(doc["index"])
        bots, order = doc["bots"], int(doc["index"])
        if any(b not in self.position_of for b in bots):
            return None
        if self.format == "team":
            return (order >> 40) * self.n_bots + self.position_of[bots[0]]
        rnd, r, k = order >> 56, order & 63, self.k
        if len(set(bots)) != k or r >= self.rotations:
            return -1
        if self.format == "gauntlet":
            seat = (k - (rnd + r) % k) % k
            ci = self.challenger_pos.get(self.position_of[bots[seat]])
            if ci is None:
                return -1
            opp = {b: j for j, b in enumerate(self.opponents[ci])}
            others = [opp.get(self.position_of[b], -1) for s, b in enumerate(bots) if s != seat]
            if -1 in others:
                return -1
            rank = rank_combination(sorted(others), len(opp))
            t = (rnd * len(self.challengers) + ci) * self.combos + rank
        else:
            t = rnd * self.combos + rank_combination(sorted(self.position_of[b] for b in bots), self.n_bots)
        return t * self.rotations + r

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
