"""Which matches a tournament plays, in which order, with which seed (pure, lazy).

``schedule(config)`` is a ``Sequence`` of fixtures: fixture *i* is computed on demand
from the format's table (``referee.schedule.tables``) and *i*. ``match_count`` counts a
config's matches without building anything, and ``check`` refuses a config its format
cannot play (``referee.schedule.registry``) or that would schedule more than ``MAX_MATCHES``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from referee.config.model import TournamentConfig
from referee.errors import ConfigError
from referee.schedule.fixture import Fixture, derive_seed, match_id
from referee.schedule.registry import check_format, format_class
from referee.schedule.tables import Grow, Tables

__all__ = [
    "MAX_MATCHES",
    "Fixture",
    "Schedule",
    "check",
    "check_count",
    "derive_seed",
    "match_count",
    "schedule",
    "seat_balance",
]

# The most matches one tournament may schedule: fixtures are lazy, but resume keeps one
# bit per match and ids, seeds and the journal are sized for it. Counted before anything
# is allocated, so ``rounds = 10**9`` is a config error, not a MemoryError.
MAX_MATCHES = 100_000_000


def format_of(config: TournamentConfig) -> Tables:
    """The tables of ``config``'s format (computed on demand)."""
    return format_class(config).tables(config)


def match_count(config: TournamentConfig) -> int:
    """How many matches the schedule of ``config`` holds, counted without building it."""
    return format_of(config).count()


def check(config: TournamentConfig) -> TournamentConfig:
    """``config`` if its format can play it and its schedule fits; a ConfigError otherwise
    (the checks the config, below the schedule, cannot make)."""
    return check_count(check_format(config))


def check_count(config: TournamentConfig) -> TournamentConfig:
    """``config`` if its schedule fits within ``MAX_MATCHES``; a ConfigError otherwise."""
    fmt = format_of(config)
    count = fmt.count()
    if count > MAX_MATCHES:
        raise ConfigError(
            f"{config.path}: {fmt.key}: the tournament would schedule {count:,} matches, "
            f"more than the limit of {MAX_MATCHES:,}; {fmt.too_many()}"
        )
    return config


class Schedule(Sequence[Fixture]):
    """Every fixture of a tournament, in play order, computed on demand."""

    def __init__(self, config: TournamentConfig) -> None:
        self.names = [b.name for b in config.bots]
        self.seed, self.secret = config.seed, config.seed_secret
        self.format = format_of(config)
        self.total = self.format.count()
        self.grow = Grow(self.format, self.names, self.seed, self.secret) if config.grow else None

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
        if self.grow is not None:
            return self.grow.fixture(i)
        seats, deal = self.format.seats(*divmod(i, self.format.rotations))
        return Fixture(i, match_id(i), derive_seed(self.seed, i if deal is None else deal, self.secret), seats, deal)

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

    def position(self, doc: Mapping[str, Any]) -> int | None:
        """The fixture a journal line is of: its ``index``; in a tournament that grows, the
        position its round and names give (-1 when none fits, None when a bot of the line
        is no longer in the file)."""
        if self.grow is None:
            return int(doc["index"])
        return self.grow.position(doc)


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
