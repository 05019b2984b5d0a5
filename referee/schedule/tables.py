"""One class per format: how many base tables it holds and who sits at table *t* (pure).

A base table is a deal; with ``duplicate`` it is played once per seat rotation, so a
format's ``count()`` is its tables times its rotations. Every table is computed from
*t* alone (round robin combinations are unranked; random tables are replayed from
checkpoints of the generator's state), so a schedule of a hundred million matches
takes a few megabytes. ``Grow`` keys the fixtures of a tournament that grows by names.
"""

from __future__ import annotations

import abc
import math
import random
from array import array
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from referee.schedule.final import FinalPlan
from referee.schedule.fixture import Fixture, derive_key_seed, derive_seed, key_bits


class Tables(abc.ABC):
    """The base tables of a format (its layout); subclasses give ``table(t)``."""

    key = "tournament.matches"  # the setting that sizes the schedule (named when it is too big)

    def __init__(self, n_bots: int, players: int, tables: int, duplicate: bool) -> None:
        self.n_bots, self.k, self.tables = n_bots, players, tables
        self.duplicate = duplicate
        self.rotations = players if duplicate else 1

    def count(self) -> int:
        """The number of matches: tables times seat rotations."""
        return self.tables * self.rotations

    def too_many(self) -> str:
        """What to say when the schedule is too big."""
        return "lower it"

    @abc.abstractmethod
    def table(self, t: int) -> tuple[int, ...]:
        """Base table ``t``: the bot in each seat."""

    def seats(self, t: int, r: int) -> tuple[tuple[int, ...], int | None]:
        """The seats of rotation ``r`` of table ``t`` and its deal (None: a deal of its own)."""
        table = self.table(t)
        if self.duplicate:
            return table[r:] + table[:r], t
        return table, None

    def canonical(self, t: int, names: Sequence[str]) -> tuple[int, tuple[int, ...]]:
        """(round, the table in name order) of base table ``t``, for ``Grow``."""
        raise ValueError(f"{type(self).__name__} fixtures cannot be keyed by names")

    def locate(self, rnd: int, r: int, seats: Sequence[int]) -> int:
        """The base table of round ``rnd`` whose rotation ``r`` seats ``seats``, or -1."""
        raise ValueError(f"{type(self).__name__} fixtures cannot be keyed by names")


class RoundRobin(Tables):
    """Every combination of ``players`` bots, ``rounds`` times; round r seats the combination
    rotated by r (rounds a multiple of players: every bot in every seat equally often).
    Round-major, so a run stopped half-way has played whole rounds."""

    key = "tournament.rounds"

    def __init__(self, n_bots: int, players: int, rounds: int, duplicate: bool) -> None:
        self.combos = math.comb(n_bots, players)
        super().__init__(n_bots, players, self.combos * rounds, duplicate)

    def too_many(self) -> str:
        """The size of one round, the usual culprit."""
        return f"{self.n_bots} bots in tables of {self.k} make {self.combos:,} tables a round"

    def table(self, t: int) -> tuple[int, ...]:
        """Combination ``t % combos``, rotated by its round."""
        rnd, c = divmod(t, self.combos)
        combo = unrank_combination(c, self.n_bots, self.k)
        shift = rnd % self.k
        return combo[shift:] + combo[:shift]

    def canonical(self, t: int, names: Sequence[str]) -> tuple[int, tuple[int, ...]]:
        """(round, the combination in name order)."""
        rnd, c = divmod(t, self.combos)
        return rnd, tuple(sorted(unrank_combination(c, self.n_bots, self.k), key=names.__getitem__))

    def locate(self, rnd: int, r: int, seats: Sequence[int]) -> int:
        """The table of round ``rnd`` holding the bots ``seats``."""
        return rnd * self.combos + rank_combination(sorted(seats), self.n_bots)


class RandomTables(Tables):
    """``matches`` tables drawn from the tournament seed, seats shuffled."""

    WINDOW = 4096  # tables kept after the cursor passes them (journal lines come a little out of order)

    def __init__(self, n_bots: int, players: int, matches: int, duplicate: bool, seed: int, secret: bool) -> None:
        super().__init__(n_bots, players, matches, duplicate)
        self._every = max(4096, matches // 4096)  # at most ~4096 checkpoints of 2.5 KB
        self._rng = random.Random(derive_seed(seed, -1, secret))
        self._checkpoints: dict[int, tuple[Any, ...]] = {0: self._rng.getstate()}
        self._pos = 0  # the table the generator draws next
        self._recent: dict[int, tuple[int, ...]] = {}

    def table(self, t: int) -> tuple[int, ...]:
        """Table ``t``: replayed from the nearest checkpoint unless recently drawn."""
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


class BalancedTables(Tables):
    """``matches`` tables in rounds of ``n_bots`` tables (version 2 of random tables).

    Round r draws a permutation of the bots and ``players`` distinct offsets from the seed
    and r alone; its table j seats, in seat s, the bot at position ``(j + offset[s]) % n``
    of the permutation. A whole round seats every bot once in every seat; the last round,
    when partial, uses evenly spread offsets (``floor(s * n / players)``), so any run of
    its tables holds each bot ``floor`` or ``ceil`` of its share of them. Over the whole
    schedule every bot plays the same number of matches (+-1) and sits in each seat the
    same number of times (+-1). Random access: one permutation (the round's) is cached.
    """

    def __init__(self, n_bots: int, players: int, matches: int, duplicate: bool, seed: int, secret: bool) -> None:
        super().__init__(n_bots, players, matches, duplicate)
        self.seed, self.secret = seed, secret
        self._round = -1
        self._perm: list[int] = []
        self._offsets: list[int] = []

    def layout(self, rnd: int) -> tuple[list[int], list[int]]:
        """The permutation and seat offsets of round ``rnd`` (a pure function of the seed and ``rnd``)."""
        n, k = self.n_bots, self.k
        rng = random.Random(derive_key_seed(self.seed, f"random2/{rnd}", self.secret))
        perm = list(range(n))
        rng.shuffle(perm)
        if (rnd + 1) * n <= self.tables:
            offsets = rng.sample(range(n), k)
        else:  # the partial last round: evenly spread offsets keep every bot's count within one
            offsets = [s * n // k for s in range(k)]
        return perm, offsets

    def table(self, t: int) -> tuple[int, ...]:
        """Table ``t``: round ``t // n_bots``, row ``t % n_bots``."""
        rnd, j = divmod(t, self.n_bots)
        if rnd != self._round:
            self._perm, self._offsets = self.layout(rnd)
            self._round = rnd
        n, perm = self.n_bots, self._perm
        return tuple(perm[(j + o) % n] for o in self._offsets)


class LadderTables(Tables):
    """A ladder's budget of ``matches`` tables, and after them its ``final`` (once the season
    is closed); who sits where comes from the results (``referee.run.season``,
    ``referee.run.final``), so ``table`` is unknown here: fixtures carry no seats."""

    def __init__(self, n_bots: int, players: int, matches: int, final: FinalPlan | None = None) -> None:
        super().__init__(n_bots, players, matches + (final.matches if final else 0), False)
        self.final = final

    def table(self, t: int) -> tuple[int, ...]:
        """Unknown to the schedule: the empty table."""
        return ()

    def seats(self, t: int, r: int) -> tuple[tuple[int, ...], int | None]:
        """No seats; a final's match shares its group's deal (``schedule.final``)."""
        if self.final is not None and self.final.holds(t):
            return (), self.final.deal(t)
        return (), None


class Team(Tables):
    """Cooperative games: ``matches`` deals, every bot playing every deal as a homogeneous
    team (all seats the same bot), so bots are compared on identical cards."""

    def __init__(self, n_bots: int, players: int, matches: int) -> None:
        super().__init__(n_bots, players, matches * n_bots, False)

    def table(self, t: int) -> tuple[int, ...]:
        """Bot ``t % n_bots`` in every seat."""
        return (t % self.n_bots,) * self.k

    def seats(self, t: int, r: int) -> tuple[tuple[int, ...], int | None]:
        """The team of table ``t``; its deal is ``t // n_bots``."""
        return self.table(t), t // self.n_bots


class Gauntlet(Tables):
    """Every table holds one challenger and ``players - 1`` of its opponents (the field, and
    the other challengers too with ``meet``): per round, challenger by challenger, every
    combination of its opponents, the challenger first, rotated by the round; or, with
    ``random``, ``matches`` tables, challengers in turn, opponents drawn from the table's
    own seed, rotated by its turn."""

    def __init__(
        self,
        n_bots: int,
        players: int,
        challengers: Sequence[int],
        meet: bool,
        tables: tuple[int, int, bool],
        duplicate: bool,
        seed: int,
        secret: bool,
    ) -> None:
        rounds, matches, self.random = tables
        self.challengers, self.meet = list(challengers), meet
        n_opponents = n_bots - 1 if meet else n_bots - len(self.challengers)
        self.combos = math.comb(n_opponents, players - 1)
        size = matches if self.random else len(self.challengers) * self.combos * rounds
        super().__init__(n_bots, players, size, duplicate)
        self.key = "tournament.matches" if self.random else "tournament.rounds"
        self.seed, self.secret = seed, secret
        self.challenger_pos = {c: i for i, c in enumerate(self.challengers)}

    @cached_property
    def opponents(self) -> list[list[int]]:
        """Each challenger's opponents, in bot order."""
        chal = set(self.challengers)
        return [[b for b in range(self.n_bots) if b != c and (self.meet or b not in chal)] for c in self.challengers]

    def table(self, t: int) -> tuple[int, ...]:
        """The challenger of table ``t`` and its opponents, rotated by the turn."""
        n_chal = len(self.challengers)
        if self.random:
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

    def canonical(self, t: int, names: Sequence[str]) -> tuple[int, tuple[int, ...]]:
        """(round, the challenger then its opponents by name)."""
        rnd, rest = divmod(t, len(self.challengers) * self.combos)
        c, rank = divmod(rest, self.combos)
        opp = self.opponents[c]
        others = sorted((opp[j] for j in unrank_combination(rank, len(opp), self.k - 1)), key=names.__getitem__)
        return rnd, (self.challengers[c], *others)

    def locate(self, rnd: int, r: int, seats: Sequence[int]) -> int:
        """The table of round ``rnd`` with these bots, found from its challenger's seat; -1 if none."""
        k = self.k
        seat = (k - (rnd + r) % k) % k
        ci = self.challenger_pos.get(seats[seat])
        if ci is None:
            return -1
        opp = {b: j for j, b in enumerate(self.opponents[ci])}
        others = [opp.get(b, -1) for s, b in enumerate(seats) if s != seat]
        if -1 in others:
            return -1
        return (rnd * len(self.challengers) + ci) * self.combos + rank_combination(sorted(others), len(opp))


class Grow:
    """The fixtures of a tournament that grows: seed, id, order and deal come from the round
    and the names at the table, never from positions in the bot list, so bots may be added
    (or removed) and the run resumed."""

    def __init__(self, fmt: Tables, names: Sequence[str], seed: int, secret: bool) -> None:
        self.fmt, self.names, self.seed, self.secret = fmt, list(names), seed, secret
        self.position_of = {n: i for i, n in enumerate(self.names)}

    def fixture(self, i: int) -> Fixture:
        """Fixture ``i``, keyed by names."""
        fmt = self.fmt
        t, r = divmod(i, fmt.rotations)
        if isinstance(fmt, Team):
            d, b = divmod(t, fmt.n_bots)
            order = (d << 40) | key_bits(f"team/{self.names[b]}", 40)
            return Fixture(i, f"g{order:x}", derive_seed(self.seed, d, self.secret), (b,) * fmt.k, d, order)
        rnd, canon = fmt.canonical(t, self.names)
        key = f"{rnd}/" + "|".join(self.names[b] for b in canon)
        deal = (rnd << 50) | key_bits(key, 50)
        order = (deal << 6) | r
        shift = (rnd + r) % fmt.k
        seats = canon[shift:] + canon[:shift]
        seed = derive_key_seed(self.seed, key, self.secret)
        return Fixture(i, f"g{order:x}", seed, seats, deal if fmt.duplicate else None, order)

    def position(self, doc: Mapping[str, Any]) -> int | None:
        """The fixture a journal line is of, from its round and names (-1 when none fits,
        None when a bot of the line is no longer in the file)."""
        fmt = self.fmt
        bots, order = doc["bots"], int(doc["index"])
        if any(b not in self.position_of for b in bots):
            return None
        if isinstance(fmt, Team):
            return (order >> 40) * fmt.n_bots + self.position_of[bots[0]]
        rnd, r = order >> 56, order & 63
        if len(set(bots)) != fmt.k or r >= fmt.rotations:
            return -1
        t = fmt.locate(rnd, r, [self.position_of[b] for b in bots])
        return -1 if t < 0 else t * fmt.rotations + r


def rank_combination(combo: Sequence[int], n: int) -> int:
    """The rank of the sorted ``combo`` of range(n) in ``itertools.combinations`` order."""
    k, rank, prev = len(combo), 0, -1
    for slot, x in enumerate(combo):
        for y in range(prev + 1, x):
            rank += math.comb(n - y - 1, k - slot - 1)
        prev = x
    return rank


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


def _compact_state(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """A Mersenne Twister state with its 625 words in an array (2.5 KB instead of ~20)."""
    version, words, gauss = state
    return (version, array("L", words), gauss)
