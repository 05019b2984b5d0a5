"""The referee's exception tree: every error it reports to a user, and nothing else.

::

    RefereeError
    ├── ConfigError        a tournament file that cannot be run (exit code 2)
    ├── BotStartError      a managed bot that never became ready, or a bot that
    │                      never answered ``hello`` (exit code 1, before play)
    ├── JournalError       a ``matches.jsonl`` that does not belong to this config
    ├── LeaderboardError   an output folder whose leaderboard cannot be rendered
    ├── TranscriptError    a transcript line that cannot be read
    ├── ReplayError        a match that cannot be replayed
    ├── ClusterError       a Dask cluster that cannot be started or reached
    └── OutputError        a file of the output folder that cannot be written (a full disk)

A layer's internal exceptions stay inside it and are translated at its boundary with
``raise ... from exc``: the rules' ``GameError`` tree (``games/base.py``), the transport's
``TransportError`` (``bots/client/transport.py``) and the reply parser's ``ReplyError``
(``bots/client/protocol.py``). Bot faults during play are not exceptions: they are data
(the fault kinds of ``record.py``, kept in a ``MatchRecord``).
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


class LeaderboardError(RefereeError):
    """An output folder whose leaderboard cannot be rendered; the message names the file."""


class TranscriptError(RefereeError):
    """A transcript line that cannot be read; the message names the file and the match."""


class ReplayError(RefereeError):
    """A match that cannot be replayed; the message names the match and why."""


class ClusterError(RefereeError):
    """The Dask cluster could not be started or reached, or lost a batch for good."""


class OutputError(RefereeError):
    """A file of the output folder that cannot be written (a full disk, a read-only folder);
    the message names the file. ``disk_full`` tells a full disk from other failures."""

    def __init__(self, message: str, disk_full: bool = False) -> None:
        super().__init__(message)
        self.disk_full = disk_full
