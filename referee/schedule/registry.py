"""The formats: one declarative class each, registered by name in ``FORMATS``.

A format declares its name, the ``[tournament]`` keys that size it and those only it
takes, the games it is for, its flags (the facts other layers ask of it: grows by names,
plays duplicate deals, adaptive, plays teams, ...), its config checks (run by
``check_format`` on the parsed config: the config sits below the schedule), the settings
it writes into ``tournament.json``, its one-line description for the page and README.md,
and its tables (``referee.schedule.tables``). Adding a format is one class here (its
tables beside it) and its name in ``referee.config.model.FORMATS``; only the ladder's
matchmaking lives elsewhere (``referee.run``).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar, NoReturn

from referee.config.keys import hint
from referee.config.model import TournamentConfig
from referee.errors import ConfigError
from referee.games import get_game
from referee.schedule import tables as tb
from referee.schedule.final import final_plan


class Format(abc.ABC):
    """A tournament format, declared (class attributes and class methods; never instanced)."""

    name: ClassVar[str]
    # the [tournament] keys that size the schedule; the first unless the file gives only another
    sizes: ClassVar[tuple[str, ...]] = ("matches",)
    own_keys: ClassVar[tuple[str, ...]] = ()  # [tournament] keys for this format alone
    games: ClassVar[bool | None] = None  # True: cooperative games only; False: competitive only
    games_refusal: ClassVar[str] = ""  # why not, for the other games ({game}: the game's id)
    plays_duplicate: ClassVar[bool] = True  # duplicate = true is allowed
    duplicate_refusal: ClassVar[str] = ""
    grows_by_name: ClassVar[bool] = True  # grow = true is allowed: fixtures can be keyed by names
    grow_refusal: ClassVar[str] = (
        "is for round_robin, gauntlet (with rounds) and team: random tables depend on the bot list"
    )
    adaptive: ClassVar[bool] = False  # tables chosen from the results as they come (run.ladder), bots come and go
    plays_teams: ClassVar[bool] = False  # every seat one bot: a deal is played once by every bot
    needs_challengers: ClassVar[bool] = False  # every table holds one of the challengers
    rounds_rotate_seats: ClassVar[bool] = False  # rounds a multiple of players seat every bot everywhere equally
    versioned_tables: ClassVar[bool] = False  # its tables have versions (settings' schedule_version)

    @classmethod
    def size_key(cls, config: TournamentConfig) -> str:
        """The key that sizes the schedule of ``config``."""
        given = [k for k in cls.sizes if k in config.given]
        return given[0] if len(given) == 1 else cls.sizes[0]

    @classmethod
    @abc.abstractmethod
    def tables(cls, config: TournamentConfig) -> tb.Tables:
        """The tables of ``config`` (computed on demand)."""

    @classmethod
    def can_grow(cls, config: TournamentConfig) -> bool:
        """True when ``config``'s fixtures can be keyed by names."""
        return cls.grows_by_name

    @classmethod
    def check(cls, config: TournamentConfig) -> None:
        """Refuse (ConfigError) what the format cannot play: other games, duplicate, grow."""
        if cls.games is not None and get_game(config.game).info.cooperative != cls.games:
            fail(config, "tournament.format", cls.games_refusal.format(game=config.game))
        if config.duplicate and not cls.plays_duplicate:
            fail(config, "tournament.duplicate", cls.duplicate_refusal)
        cls.check_own(config)
        if config.grow and not cls.can_grow(config):
            fail(config, "tournament.grow", cls.grow_refusal)

    @classmethod
    def check_own(cls, config: TournamentConfig) -> None:
        """The format's own keys, checked (none by default)."""
        return None

    @classmethod
    def settings(cls, config: TournamentConfig) -> dict[str, Any]:
        """The format's settings in ``tournament.json`` (each declared in ``schedule.settings``)."""
        key = cls.size_key(config)
        return {
            "rounds": config.rounds if key == "rounds" else None,
            "matches": config.matches if key == "matches" else None,
        }

    @classmethod
    @abc.abstractmethod
    def describe(cls, settings: Mapping[str, Any]) -> str:
        """The format in words, from ``tournament.json``'s settings (duplicate aside)."""


class RoundRobinFormat(Format):
    """Every combination of ``players`` bots, ``rounds`` times, seats rotated by the round."""

    name = "round_robin"
    sizes = ("rounds",)
    rounds_rotate_seats = True

    @classmethod
    def tables(cls, config: TournamentConfig) -> tb.Tables:
        """Combinations of the bots, round after round."""
        return tb.RoundRobin(len(config.bots), config.players, config.rounds, config.duplicate)

    @classmethod
    def describe(cls, settings: Mapping[str, Any]) -> str:
        """Rounds and seats."""
        return f"round robin, {settings.get('rounds')} round(s), {settings['players']} players per match"


class RandomFormat(Format):
    """``matches`` tables drawn from the seed (balanced since version 2 of the tables)."""

    name = "random"
    grows_by_name = False
    versioned_tables = True

    @classmethod
    def tables(cls, config: TournamentConfig) -> tb.Tables:
        """The version of the tables the config deals."""
        tables = tb.RandomTables if config.schedule_version == 1 else tb.BalancedTables
        return tables(
            len(config.bots), config.players, config.matches, config.duplicate, config.seed, config.seed_secret
        )

    @classmethod
    def settings(cls, config: TournamentConfig) -> dict[str, Any]:
        """The size, and the version of the tables past the first."""
        version = {"schedule_version": config.schedule_version} if config.schedule_version > 1 else {}
        return {**super().settings(config), **version}

    @classmethod
    def describe(cls, settings: Mapping[str, Any]) -> str:
        """Matches and seats."""
        return f"random tables, {settings.get('matches')} matches, {settings['players']} players per match"


class TeamFormat(Format):
    """Cooperative games: ``matches`` deals, each played by every bot as a whole team."""

    name = "team"
    games = True
    games_refusal = "team is for cooperative games; {game} is competitive (use round_robin or random)"
    plays_duplicate = False
    duplicate_refusal = "team already plays every deal with every bot; duplicate is for round_robin and random"
    plays_teams = True

    @classmethod
    def tables(cls, config: TournamentConfig) -> tb.Tables:
        """Every bot on every deal."""
        return tb.Team(len(config.bots), config.players, config.matches)

    @classmethod
    def describe(cls, settings: Mapping[str, Any]) -> str:
        """Deals and team size."""
        return (
            f"team (duplicate): {settings.get('matches')} deals, "
            f"each played by every bot as a team of {settings['players']}"
        )


class GauntletFormat(Format):
    """The challengers against the field: ``rounds`` over combinations, or ``matches`` random tables."""

    name = "gauntlet"
    sizes = ("rounds", "matches")
    own_keys = ("challengers", "challengers_meet")
    games = False
    games_refusal = "gauntlet is for competitive games (cooperative games: use team)"
    needs_challengers = True

    @classmethod
    def tables(cls, config: TournamentConfig) -> tb.Tables:
        """One challenger per table."""
        index = {b.name: i for i, b in enumerate(config.bots)}
        return tb.Gauntlet(
            len(config.bots),
            config.players,
            [index[c] for c in config.challengers],
            config.challengers_meet,
            (config.rounds, config.matches, cls.size_key(config) == "matches"),
            config.duplicate,
            config.seed,
            config.seed_secret,
        )

    @classmethod
    def can_grow(cls, config: TournamentConfig) -> bool:
        """With rounds only: random tables depend on the bot list."""
        return cls.size_key(config) == "rounds"

    @classmethod
    def check_own(cls, config: TournamentConfig) -> None:
        """The challengers name bots, once each, and leave a field big enough."""
        if not config.challengers:
            fail(config, "tournament.challengers", 'a gauntlet needs challengers = ["bot name", ...]')
        names = {b.name for b in config.bots}
        seen: set[str] = set()
        for i, c in enumerate(config.challengers):
            if not isinstance(c, str) or c not in names:
                known = hint(c, names) if isinstance(c, str) else ""
                fail(config, f"tournament.challengers[{i}]", f"{c!r} is not the name of a [[bot]]" + known)
            if c in seen:
                fail(config, f"tournament.challengers[{i}]", f"{c!r} is named twice")
            seen.add(c)
        if config.players < 2:
            fail(config, "tournament.players", "a gauntlet needs at least 2 seats per table")
        opponents = len(config.bots) - 1 if config.challengers_meet else len(config.bots) - len(seen)
        if opponents < config.players - 1:
            fail(
                config,
                "tournament.challengers",
                f"each table needs {config.players - 1} bots besides its challenger but the field has {opponents}: "
                "add bots, lower players or set challengers_meet = true",
            )

    @classmethod
    def settings(cls, config: TournamentConfig) -> dict[str, Any]:
        """The size, the challengers and whether they meet."""
        return {
            **super().settings(config),
            "challengers": list(config.challengers),
            "challengers_meet": config.challengers_meet,
        }

    @classmethod
    def describe(cls, settings: Mapping[str, Any]) -> str:
        """Challengers, size, seats, and whether challengers meet."""
        size = (
            f"{settings['rounds']} round(s)" if settings.get("rounds") else f"{settings.get('matches')} random tables"
        )
        return (
            f"gauntlet of {', '.join(settings.get('challengers', []))} against the field, {size}, "
            f"{settings['players']} players per match"
            + ("; challengers meet" if settings.get("challengers_meet") else "; challengers never meet")
        )


class LadderFormat(Format):
    """A season: a budget of ``matches`` tables, chosen epoch by epoch from the results
    (the matchmaking is ``referee.run.ladder``); bots may come and go at any resume."""

    name = "ladder"
    own_keys = ("closed", "final")
    games = False
    games_refusal = "ladder is for competitive games (cooperative games: use team)"
    plays_duplicate = False
    duplicate_refusal = "a ladder chooses each table from the results: it plays no duplicate deals"
    grows_by_name = False
    grow_refusal = "a ladder grows by itself: bots may be added or removed at any --resume"
    adaptive = True

    @classmethod
    def tables(cls, config: TournamentConfig) -> tb.Tables:
        """The budget; the seats come from the results."""
        final = final_plan(
            {
                "matches": config.matches,
                "players": config.players,
                "final": config.final,
                "closed": config.closed,
                "batch": config.batch,
            }
        )
        return tb.LadderTables(len(config.bots), config.players, config.matches, final)

    @classmethod
    def settings(cls, config: TournamentConfig) -> dict[str, Any]:
        """The budget, whether the season is closed, and the plan (epochs, lineups) once made."""
        plan = {"ladder": dict(config.ladder)} if config.ladder is not None else {}
        final = {"final": dict(config.final)} if config.final else {}
        return {**super().settings(config), "closed": config.closed, **final, **plan}

    @classmethod
    def describe(cls, settings: Mapping[str, Any]) -> str:
        """Epochs, budget and seats, and whether the season is closed."""
        budget = settings.get("matches")
        plan = settings.get("ladder")
        size = plan.get("epoch_tables") if isinstance(plan, Mapping) else None
        epochs = f"{-(-budget // size)} epoch(s) of {size} tables, " if isinstance(budget, int) and size else ""
        return (
            f"ladder, tables chosen from the results: {epochs}a budget of {budget} matches, "
            f"{settings['players']} players per match; the season is {'closed' if settings.get('closed') else 'open'}"
            + _final_words(settings)
        )


def _final_words(settings: Mapping[str, Any]) -> str:
    """The final in words ("" without one)."""
    final = settings.get("final")
    if not isinstance(final, Mapping) or not final:
        return ""
    when = "after the season" if settings.get("closed") else "once the season is closed"
    return f"; a final of its top {final['bots']}, at most {final['matches']} more matches, {when}"


FORMATS: dict[str, type[Format]] = {
    f.name: f for f in (RoundRobinFormat, RandomFormat, TeamFormat, GauntletFormat, LadderFormat)
}


def format_named(name: str) -> type[Format]:
    """The format called ``name`` (a name the config or ``tournament.json``'s check accepted)."""
    return FORMATS[name]


def format_class(config: TournamentConfig) -> type[Format]:
    """The format of ``config``."""
    return FORMATS[config.format]


def check_format(config: TournamentConfig) -> TournamentConfig:
    """``config`` if its format can play it: no key of another format, the format's own checks."""
    for other in FORMATS.values():
        for key in other.own_keys:
            if other.name != config.format and key in config.given:
                fail(config, f"tournament.{key}", f"is for format = '{other.name}'")
    format_class(config).check(config)
    return config


def describe(settings: Mapping[str, Any]) -> str:
    """The tournament format in words (the page's and README.md's Format line)."""
    text = format_named(settings["format"]).describe(settings)
    if settings.get("duplicate"):
        text += "; duplicate deals (every deal once per seat rotation of its table)"
    return text


def fail(config: TournamentConfig, key: str, problem: str) -> NoReturn:
    """Raise the ConfigError of ``key`` of ``config``'s file."""
    raise ConfigError(f"{config.path}: {key}: {problem}")
