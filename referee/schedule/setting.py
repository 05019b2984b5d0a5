"""One key of ``tournament.json``'s settings, as declared (``referee.schedule.settings``):
where its value comes from, how a re-render checks it, and where the page shows it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from referee.config.model import TournamentConfig


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
