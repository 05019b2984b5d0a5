"""``tournament.json``'s settings, declared once: ``SETTINGS`` gives every key in the order
the file writes them, how a re-render checks it (``referee.store.tournament_file``) and
whether the page gives it a line of its own (``referee.report.page``); ``published``
writes them from a config (a format's own keys from its class: ``Format.settings``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from referee.config.model import TournamentConfig
from referee.schedule.registry import format_class

__all__ = ["KINDS", "SETTINGS", "Setting", "line_keys", "published", "required_keys"]


class Omit(Enum):
    """The value of a setting that is left out of this tournament's file."""

    OMIT = "omit"


OMIT = Omit.OMIT
# The kinds a setting is checked as (``referee.store.tournament_file`` holds their checks).
KINDS = (
    "name",  # a name of 1-64 letters, digits, '.', '_' or '-'
    "options",  # the game's options: an object
    "seed",  # an integer >= 0, or null while a secret seed is not revealed
    "seats",  # an integer from 1 to the most seats a journal line holds
    "format",  # a registered format's name
    "size",  # an integer >= 1, or null (a size the format does not use)
    "version",  # an integer from 1 to this referee's random tables version
    "integer",  # an integer >= ``minimum``
    "number",  # a finite number
    "bool",  # true or false
    "text",  # a short string
    "stop",  # a stop rule
    "bots",  # the bots' names, distinct
    "challengers",  # names of some of the bots
    "ladder",  # a ladder's epoch size and lineup history
    "final",  # a ladder's final: { bots, matches }
    "excluded",  # bots left out, each with its reason
    "sha256",  # a SHA-256 in hex
    "any",  # not checked (the re-render does not read it)
)


@dataclass(frozen=True)
class Setting:
    """A key of the settings: its check (``kind``, ``minimum``; ``required`` keys are in every
    file), whether the page gives it a line of its own (``line``), and its value:
    ``value(config)`` (OMIT: left out), or, without ``value``, the format's own
    (``Format.settings``) or, with ``by_run``, written by the runner (a secret seed's
    commitment)."""

    kind: str
    required: bool = False
    line: bool = False
    minimum: int = 0
    value: Callable[[TournamentConfig], Any] | None = None
    by_run: bool = False


def _if(condition: bool, value: Any) -> Any:
    return value if condition else OMIT


def _cage(config: TournamentConfig) -> Any:
    """The limits of started bots (none: no started bot)."""
    lim = config.limits
    cage = {"memory_mb": lim.memory_mb, "disk_mb": lim.disk_mb, "cpus": lim.cpus, "max_processes": lim.max_processes}
    return _if(any(b.managed for b in config.bots), cage)


def _cage_bots(config: TournamentConfig) -> Any:
    """Each started bot's own cage limits and network, where it has any."""
    own = {
        b.name: {**b.limits, **({"network": b.network} if b.network != "own" else {})}
        for b in config.bots
        if b.managed and (b.limits or b.network != "own")
    }
    return _if(bool(own), own)


def _cage_marks(config: TournamentConfig) -> Any:
    """Each started bot's weaker settings (``TournamentConfig.cage_marks``), where it has any."""
    marks = {name: found for name, found in config.cage_marks().items() if found}
    return _if(bool(marks), marks)


def _settled(key: str) -> Setting:
    """A key of ``stop = "settled"`` and of a ladder's final (its looks), written only with them."""
    kind, minimum = ("number", 0) if key == "confidence" else ("integer", 0)
    return Setting(kind, minimum=minimum, value=lambda c: _if(c.stop != "all" or bool(c.final), getattr(c, key)))


SETTINGS: dict[str, Setting] = {
    "name": Setting("name", required=True, line=True, value=lambda c: c.name),
    "game": Setting("name", required=True, line=True, value=lambda c: c.game),
    "options": Setting("options", required=True, line=True, value=lambda c: dict(c.options)),
    # a secret seed is null until the run is complete (the runner adds its commitment, then it)
    "seed": Setting("seed", line=True, value=lambda c: None if c.seed_secret else c.seed),
    "seed_secret": Setting("bool", value=lambda c: _if(c.seed_secret, True)),
    "players": Setting("seats", required=True, line=True, value=lambda c: c.players),
    "format": Setting("format", required=True, line=True, value=lambda c: c.format),
    "rounds": Setting("size", line=True),  # the format's
    "matches": Setting("size", line=True),
    "schedule_version": Setting("version"),
    "deadline_ms": Setting("integer", required=True, line=True, minimum=1, value=lambda c: c.limits.deadline_ms),
    "on_fault": Setting("text", required=True, line=True, value=lambda c: c.limits.on_fault),
    "max_faults": Setting("integer", required=True, line=True, value=lambda c: c.limits.max_faults),
    "duplicate": Setting("bool", line=True, value=lambda c: c.duplicate),
    "challengers": Setting("challengers"),
    "challengers_meet": Setting("bool"),
    "grow": Setting("bool", value=lambda c: _if(c.grow, True)),
    "closed": Setting("bool"),
    "final": Setting("final", line=True),
    "ladder": Setting("ladder"),
    "on_unready": Setting("any", value=lambda c: _if(c.on_unready != "stop", c.on_unready)),
    "stop": Setting("stop", value=lambda c: _if(c.stop != "all", c.stop)),
    "confidence": _settled("confidence"),
    # the prize places: with stop = "settled", or wherever the file names them
    "top": Setting("integer", value=lambda c: _if(c.stop != "all" or c.top != 0, c.top)),
    "batch": _settled("batch"),
    "time_bank_ms": Setting("integer", line=True, value=lambda c: c.limits.time_bank_ms),
    "max_fault_rate": Setting("number", line=True, value=lambda c: c.limits.max_fault_rate),
    "sandbox": Setting("text", value=lambda c: c.limits.sandbox),
    "cage": Setting("any", value=_cage),
    "cage_bots": Setting("any", value=_cage_bots),
    "cage_marks": Setting("any", value=_cage_marks),
    "bots": Setting("bots", required=True, line=True, value=lambda c: [b.name for b in c.bots]),
    "transcripts": Setting("any", value=lambda c: c.transcripts),
    "excluded": Setting(
        "excluded", value=lambda c: _if(bool(c.excluded), [{"name": n, "reason": r} for n, r in c.excluded])
    ),
    "seed_commitment": Setting("sha256", by_run=True),
}


def published(config: TournamentConfig) -> dict[str, Any]:
    """The settings of ``config`` worth publishing beside the results (no tokens, no
    commands), in ``SETTINGS``' order; a ValueError for a format's undeclared key."""
    own = format_class(config).settings(config)
    undeclared = [k for k in own if k not in SETTINGS or SETTINGS[k].value is not None or SETTINGS[k].by_run]
    if undeclared:
        raise ValueError(f"{config.format} writes settings not declared as a format's in SETTINGS: {undeclared}")
    out: dict[str, Any] = {}
    for key, s in SETTINGS.items():
        value = own.get(key, OMIT) if s.value is None else s.value(config)
        if value is not OMIT:
            out[key] = value
    return out


def required_keys() -> tuple[str, ...]:
    """The settings every ``tournament.json`` holds (the seed too, null while secret)."""
    return tuple(k for k, s in SETTINGS.items() if s.required or k == "seed")


def line_keys() -> frozenset[str]:
    """The settings the page shows in lines of their own (the others: "Other settings")."""
    return frozenset(k for k, s in SETTINGS.items() if s.line)
