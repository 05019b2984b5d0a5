"""The referee's exception tree (the rules' own tree lives in ``games/base.py``).

::

    RefereeError
    ├── ConfigError        a tournament file that cannot be run (exit code 2)
    ├── BotStartError      a managed bot that never became ready, or a bot that
    │                      never answered ``hello`` (exit code 1, before play)
    └── JournalError       a ``matches.jsonl`` that does not belong to this config

Bot faults during play are not exceptions: they are data (``bots.http.Fault``).
"""

from __future__ import annotations


class RefereeError(Exception):
    """Base of every error the referee reports to the user."""


class ConfigError(RefereeError):
    """A tournament file that cannot be run; the message names file, key and problem."""


class BotStartError(RefereeError):
    """A bot that could not be started or reached before play."""


class JournalError(RefereeError):
    """A journal that cannot be resumed with this config."""
