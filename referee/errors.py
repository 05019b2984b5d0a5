"""The referee's exception tree: every error it reports to a user, and nothing else.

Each class carries its exit code (``exit_code``); one handler, in ``cli/main.py``, turns
any ``RefereeError`` into ``error: <its message>`` on stderr and that code. No command
catches one on its own.

::

    RefereeError                                                        exit code
    ├── UsageError         a command line that cannot be run                  2
    ├── ConfigError        a tournament file that cannot be run               2
    ├── LeaderboardError   an output folder whose leaderboard cannot be       2
    │                      rendered (a damaged journal met there included)
    ├── TranscriptError    a transcript line that cannot be read              2
    ├── ReplayError        a match that cannot be replayed                    2
    ├── BotStartError      a managed bot that never became ready, or a bot    1
    │                      that never answered ``hello`` (before play)
    ├── JournalError       a ``matches.jsonl`` that does not belong to this   1
    │                      config (a run, a resume)
    ├── ClusterError       a Dask cluster that cannot be started or reached   1
    └── OutputError        a file or folder of the output that cannot be      1
                           written (a full disk, a read-only folder)

Exit codes: 0 done; 1 the run failed (the errors above with 1, an interrupted run, a bot
``check`` found not ready, a check of ``check-bot`` that failed, a ``verify`` that found a
difference); 2 bad usage or a bad input file (the errors above with 2, and Click's own
usage errors).

A layer's internal exceptions stay inside it and are translated at its boundary with
``raise ... from exc``: the rules' ``GameError`` tree (``games/base.py``), the transport's
``TransportError`` (``bots/client/transport.py``) and the reply parser's ``ReplyError``
(``bots/client/protocol.py``). Bot faults during play are not exceptions: they are data
(the fault kinds of ``record.py``, kept in a ``MatchRecord``); so is why a bot was not
ready (``Unready``, carried by ``BotStartError``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# why a bot was not ready: its command is not a program; it could not be launched (its
# log, its cage, its guard); it exited before it answered hello; it did not answer in time
UnreadyKind = Literal["no_program", "not_started", "exited", "no_hello"]


@dataclass(frozen=True)
class Unready:
    """Why a bot was not ready to play, made where it failed: its ``kind``, a ``public``
    text fit for the public page (no URL, address, path, command or log) and the
    organiser's whole ``detail``."""

    kind: UnreadyKind
    public: str
    detail: str


class RefereeError(Exception):
    """Base of every error the referee reports to the user."""

    exit_code: ClassVar[int] = EXIT_FAILED


class UsageError(RefereeError):
    """A command line that cannot be run; the message names the option."""

    exit_code = EXIT_USAGE


class ConfigError(RefereeError):
    """A tournament file that cannot be run; the message names file, key and problem."""

    exit_code = EXIT_USAGE


class BotStartError(RefereeError):
    """A bot that could not be started or reached before play; ``unready`` says why, as
    data (by default: it could not be started)."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, unready: Unready | None = None) -> None:
        super().__init__(message)
        self.unready = unready if unready is not None else Unready("not_started", "could not be started", message)


class JournalError(RefereeError):
    """A journal that cannot be resumed with this config."""

    exit_code = EXIT_FAILED


class LeaderboardError(RefereeError):
    """An output folder whose leaderboard cannot be rendered; the message names the file."""

    exit_code = EXIT_USAGE


class TranscriptError(RefereeError):
    """A transcript line that cannot be read; the message names the file and the match."""

    exit_code = EXIT_USAGE


class ReplayError(RefereeError):
    """A match that cannot be replayed; the message names the match and why."""

    exit_code = EXIT_USAGE


class ClusterError(RefereeError):
    """The Dask cluster could not be started or reached, or lost a batch for good."""

    exit_code = EXIT_FAILED


class OutputError(RefereeError):
    """A file of the output folder that cannot be written (a full disk, a read-only folder);
    the message names the file. ``disk_full`` tells a full disk from other failures."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, disk_full: bool = False) -> None:
        super().__init__(message)
        self.disk_full = disk_full
