"""The game interface every game implements, and the types it speaks.

Exception tree of this layer::

    GameError
    ├── IllegalAction      an action not in ``legal`` (the referee turns it into a fault)
    ├── InvalidExtras      optional reply fields that do not parse (a ``malformed`` fault)
    └── OptionError        a game option that does not exist or has a bad value

Rules are pure: no I/O, no clock, no global random. All randomness comes from the
``random.Random`` kept in the state, seeded by ``setup``.

A game is one folder, ``referee/games/<id>/``: ``rules.py`` (its ``Game``, registered in
``referee/games/__init__.py``), ``schema.json`` (the JSON Schema of its messages) and
``viewer.js`` (its renderer in the replay viewer), shipped as package data; the rest of the
referee reaches them through the hooks of ``Game``, and names no game.

``apply`` may change the state in place and returns the state to use next; callers
must not keep using a state they passed to ``apply``. ``copy`` gives an independent
deep copy when one is needed (tests, determinisation).
"""

from __future__ import annotations

import abc
import copy as _copy
import importlib
import json
import math
import pickle
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from importlib import resources
from typing import Any, ClassVar

Action = Any  # a JSON value: str, int, list, dict
View = dict[str, Any]
SCHEMA, RENDERER = "schema.json", "viewer.js"  # the assets of a game's folder
SHARED_JS = ("pyrandom.js", "viewtable.js")  # what every replay.js may use, inlined before it
REPLAY = "replay.js"  # optional: the game's engine in the viewer (``Game.replay_js``)


class GameError(Exception):
    """Base of every error raised by the rules."""


class IllegalAction(GameError):
    """The action is not one of the seat's legal actions in this state."""


class InvalidExtras(GameError):
    """Optional reply fields (such as The Game's claims) that the game cannot accept."""


def shown_key(key: str) -> str:
    """An option's name as an error line shows it: as it is, or quoted and escaped when it
    holds a character that is not printable (a newline would split the line)."""
    return key if key.isprintable() else repr(key)


class OptionError(GameError):
    """A game option that does not exist or has a value the game refuses."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{shown_key(key)}: {message}")
        self.key = key
        self.message = message


@dataclass(frozen=True)
class OptionSpec:
    """One game option: its name, default, allowed values and a one-line help."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any) -> Any:
        """Return ``value`` if it fits this option, else raise OptionError."""
        expected = type(self.default)
        if expected is bool:
            ok = isinstance(value, bool)
        elif expected is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif expected is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, expected)
        if not ok:
            raise OptionError(self.name, f"expected {expected.__name__}, got {type(value).__name__} {value!r}")
        if self.choices is not None and value not in self.choices:
            shown = ", ".join(repr(c) for c in self.choices)
            raise OptionError(self.name, f"{value!r} is not one of {shown}")
        if self.minimum is not None and value < self.minimum:
            raise OptionError(self.name, f"{value!r} is below the minimum {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise OptionError(self.name, f"{value!r} is above the maximum {self.maximum}")
        return value


@dataclass(frozen=True)
class StatSpec:
    """A per-seat number a game reports for each match (see ``Game.seat_stats``);
    the leaderboard shows its mean over a bot's matches under ``title``."""

    key: str
    title: str
    help: str = ""


@dataclass(frozen=True)
class GameInfo:
    """What the registry and ``referee games`` show about a game."""

    id: str
    title: str
    min_seats: int
    max_seats: int
    cooperative: bool
    options: tuple[OptionSpec, ...] = ()
    # Names of optional reply fields besides "action" (The Game: ("claims",)).
    extra_reply_fields: tuple[str, ...] = ()
    # Extra leaderboard columns, filled from Game.seat_stats of every match.
    stats: tuple[StatSpec, ...] = ()
    # Keys of the view whose value is a list that only grows during a match and whose
    # entries are never changed once in it (6 nimmt!: ("history",)): their entries are
    # encoded once per match, not once per decision (``protocol.MatchContext``).
    append_only_view_keys: tuple[str, ...] = ()
    # The range of a seat's match score (RULES.md), which intervals of a mean score keep
    # to: None is unbounded; ``score_is_position``: scores are finishing positions 1..seats.
    score_min: float | None = None
    score_max: float | None = None
    score_is_position: bool = False

    def score_bounds(self, seats: int) -> tuple[float, float]:
        """The lowest and highest score a seat can have in a match of ``seats`` (infinite where unbounded)."""
        if self.score_is_position:
            return 1.0, float(seats)
        low = -math.inf if self.score_min is None else self.score_min
        return low, math.inf if self.score_max is None else self.score_max

    def defaults(self) -> dict[str, Any]:
        """The default value of every option."""
        return {o.name: _copy.deepcopy(o.default) for o in self.options}


@dataclass
class Result:
    """The outcome of a match.

    ``scores`` are the game's own totals, one per seat; ``ranks`` are 1-based with
    ties sharing the best rank (1, 1, 3); ``lower_is_better`` tells the sense of the
    scores; ``details`` is JSON-ready game-specific tabulation (per-round breakdowns,
    flags such as ``lost_by_fire``).
    """

    scores: list[float]
    ranks: list[int]
    lower_is_better: bool
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict."""
        return {
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "lower_is_better": self.lower_is_better,
            "details": self.details,
        }


def _shuffle(rng: random.Random, x: list[Any]) -> None:
    """``rng.shuffle(x)``, draw for draw and swap for swap, without its two calls per card.

    CPython's ``Random.shuffle`` asks ``_randbelow(i + 1)`` for each position from the
    end, which draws ``(i + 1).bit_length()`` bits until the draw is at most ``i``; the
    same draws done inline, a run of positions of one bit length at a time, cost half
    the time (dealing is most of the cost of replaying a match).
    """
    getrandbits = rng.getrandbits
    top = len(x) - 1
    while top > 0:
        k = (top + 1).bit_length()
        low = max(1, (1 << (k - 1)) - 1)  # the lowest i with (i + 1).bit_length() == k
        for i in range(top, low - 1, -1):
            j = getrandbits(k)
            while j > i:
                j = getrandbits(k)
            x[i], x[j] = x[j], x[i]
        top = low - 1


def _same_as_stdlib() -> bool:
    """True when ``_shuffle`` deals exactly as this Python's ``Random.shuffle`` does."""
    for size in (0, 1, 2, 3, 7, 104, 107, 600):
        a, b = list(range(size)), list(range(size))
        ra, rb = random.Random(size), random.Random(size)
        for _ in range(3):
            ra.shuffle(a)
            _shuffle(rb, b)
        if a != b or ra.getstate() != rb.getstate():
            return False
    return True


_INLINE = _same_as_stdlib()  # a Python whose shuffle draws otherwise keeps its own: the deals are its deals


def shuffle(rng: random.Random, x: list[Any]) -> None:
    """Shuffle ``x`` in place exactly as ``rng.shuffle(x)`` does, faster."""
    if _INLINE:
        _shuffle(rng, x)
    else:
        rng.shuffle(x)


def _generators(state: Any) -> dict[int, Any]:
    """A ``deepcopy`` memo holding a copy of each generator among a dataclass state's fields:
    ``getstate``/``setstate`` copy its 625 words at once, where ``deepcopy`` copies them one
    by one (most of the time of copying a state)."""
    memo: dict[int, Any] = {}
    if is_dataclass(state):
        for f in fields(state):
            value = getattr(state, f.name)
            if type(value) is random.Random:
                twin = random.Random()
                twin.setstate(value.getstate())
                memo[id(value)] = twin
    return memo


def ranks_from_scores(scores: Sequence[float], lower_is_better: bool) -> list[int]:
    """Competition ranks (1, 1, 3) for ``scores`` in the given sense."""
    if lower_is_better:
        return [1 + sum(1 for o in scores if o < s) for s in scores]
    return [1 + sum(1 for o in scores if o > s) for s in scores]


def compact(value: Any) -> str:
    """``value`` as compact JSON (for a glance)."""
    return json.dumps(value, separators=(",", ":"))


def sample_command(module: str) -> tuple[str, ...]:
    """The command line of the sample bot ``module`` (of ``sample_bots``) playing at random."""
    return ("python", "-m", module, "random", "--port", "{port}")


class Game(abc.ABC):
    """Base class of every game; subclasses fill in the rules and the hooks of its folder.

    Method order follows the protocol: setup, to_act, view, legal, apply, is_over,
    result, then the optional hooks, then the folder's.
    """

    info: ClassVar[GameInfo]
    # True when ``replay`` plays a whole transcript faster than ``apply`` one by one.
    fast_replay: ClassVar[bool] = False

    def check_options(self, seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``options`` for ``seats`` players; return them with defaults filled."""
        known = {o.name: o for o in self.info.options}
        out = self.info.defaults()
        for key, value in options.items():
            if key not in known:
                raise OptionError(key, f"{self.info.id} has no option {key!r}")
            out[key] = known[key].check(value)
        if not self.info.min_seats <= seats <= self.info.max_seats:
            raise OptionError(
                "players",
                f"{self.info.id} is played by {self.info.min_seats}-{self.info.max_seats} players, not {seats}",
            )
        return out

    @abc.abstractmethod
    def setup(self, seats: int, seed: int, options: Mapping[str, Any]) -> Any:
        """A new match for ``seats`` players, dealt from ``seed``."""

    @abc.abstractmethod
    def to_act(self, state: Any) -> tuple[int, ...]:
        """Seats that must act now; more than one means a simultaneous choice."""

    @abc.abstractmethod
    def view(self, state: Any, seat: int) -> View:
        """JSON-ready view of the state: exactly what ``seat`` may see."""

    @abc.abstractmethod
    def legal(self, state: Any, seat: int) -> list[Action]:
        """Every legal action of ``seat``, JSON-ready, in a stable order."""

    @abc.abstractmethod
    def apply(self, state: Any, seat: int, action: Action) -> Any:
        """Play ``action`` for ``seat``; raise IllegalAction if it is not legal."""

    @abc.abstractmethod
    def is_over(self, state: Any) -> bool:
        """True once the match is finished."""

    @abc.abstractmethod
    def result(self, state: Any) -> Result:
        """Scores, ranks and details of a finished match."""

    # Optional hooks -----------------------------------------------------------------

    def apply_extras(self, state: Any, seat: int, extras: Mapping[str, Any]) -> Any:
        """Take optional reply fields of ``info.extra_reply_fields``; raise InvalidExtras."""
        return state

    def seat_stats(self, result: Result, seat: int) -> dict[str, float]:
        """Per-seat numbers of a finished match for the ``info.stats`` columns."""
        return {}

    def replay(self, state: Any, seats: Sequence[int], actions: Sequence[Action]) -> Result | None:
        """The result of playing ``actions[i]`` for ``seats[i]`` in order from the fresh
        deal ``state`` (consumed), exactly as ``apply`` one by one would, or None when an
        action is out of turn or not legal, or the actions end before or after the match
        (the caller then replays the ordinary way, which names the decision). Only games
        with ``fast_replay`` implement it; a bot-chosen transcript needs no views."""
        return None

    def copy(self, state: Any) -> Any:
        """An independent deep copy of ``state``: a pickle round trip (C code, shared
        references kept as ``deepcopy`` keeps them, 2-4 times faster on the four games'
        states), or ``deepcopy`` for a state that pickle refuses (a lambda among its fields)."""
        try:
            return pickle.loads(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))
        except (pickle.PicklingError, TypeError, AttributeError):
            return _copy.deepcopy(state, _generators(state))

    @abc.abstractmethod
    def redeal_hidden(self, state: Any, seat: int, rng: random.Random) -> Any:
        """A copy of ``state`` with everything ``seat`` cannot see re-dealt at random.

        The copy must be consistent with what ``seat`` has seen (same view), while
        other hands, undealt cards and other seats' pending choices change. Used by
        the leak tests; also a determinisation for bots that search.
        """

    def invariants(self, state: Any) -> list[str]:
        """Broken invariants of ``state`` (every card accounted for, ...); empty if none."""
        return []

    # The game's folder ------------------------------------------------------------------

    def schema_text(self) -> str:
        """The JSON Schema of this game's messages (``schema.json`` of its folder), as shipped."""
        return self._asset(SCHEMA)

    def renderer_js(self) -> str:
        """This game's renderer in the replay viewer (``viewer.js`` of its folder), JavaScript the
        viewer page inlines: it sets ``G.board(pub, vs, acting)`` to the HTML of the table
        (``pub``: the spectator's view; ``vs``: each seat's view, null where hidden; ``acting``:
        the seats that just acted) and may set ``G.cardClass(c)`` to extra CSS classes of card
        ``c``; the page's ``esc``, ``card``, ``cards``, ``backs`` and ``seatName`` are in scope."""
        return self._asset(RENDERER)

    def replay_js(self) -> str | None:
        """This game's engine in the replay viewer (``replay.js`` of its folder), or None when
        the folder has none, after the shared ``pyrandom.js`` (``PyRandom``: CPython's
        generator and shuffle) and ``viewtable.js`` (``ViewTable``: format 1's view table) it
        may use. It sets ``G.rebuild(doc, options)``, which returns the views of a moves-only
        replay doc (``store.packs``: ``seed`` as a decimal string, ``bots``, ``seat``,
        ``action``, ``extras``; ``fault``: a decision with a fault took no extras) as ``{views,
        start, sent, after, legal}`` of format 1 (``store.replay_data``); ``options`` are the
        game's checked options."""
        package = importlib.import_module(type(self).__module__).__package__ or ""
        asset = resources.files(package) / REPLAY
        if not asset.is_file():
            return None
        shared = resources.files(__package__ or "referee.games")
        return "\n".join(
            [
                *(shared.joinpath(name).read_text(encoding="utf-8") for name in SHARED_JS),
                asset.read_text(encoding="utf-8"),
            ]
        )

    @abc.abstractmethod
    def glance(self, view: View) -> str:
        """The part of a seat's view that decides its move, on one line (``referee replay``)."""

    @abc.abstractmethod
    def sample_opponent(self) -> tuple[str, ...] | None:
        """The command line (``{port}`` for its port) of a bot that plays any seat of this game,
        check-bot's opponent for the bot under test; None: the game has none, and the bot under
        test holds every seat (as in a cooperative game)."""

    def _asset(self, name: str) -> str:
        """The text of file ``name`` of the folder (the package) this game's class is defined in."""
        package = importlib.import_module(type(self).__module__).__package__ or ""
        return (resources.files(package) / name).read_text(encoding="utf-8")
