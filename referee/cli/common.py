"""What every command shares: the exit codes, the log mark, loading a tournament file."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import click

from referee.bots.cage.process import log_mark
from referee.config.model import TournamentConfig
from referee.config.parse import load_config
from referee.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError
from referee.schedule.formats import check

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "command_line", "load", "mark", "usage"]
ARGV_KEY = "referee.argv"


def command_line(command: str) -> list[str]:
    """The command line this command was called with, as ``referee <args>`` (its own
    name and arguments when it was called without the ``referee`` group)."""
    ctx = click.get_current_context(silent=True)
    argv = ctx.meta.get(ARGV_KEY) if ctx is not None else None
    return ["referee", *(argv if argv else [command])]


def mark(command: str) -> str:
    """The mark that opens this command's part of each bot's log (``process.log_mark``)."""
    return log_mark(command, command_line(command))


def load(
    config: Path,
    seed: int | None,
    concurrency: int | None,
    output: Path | None,
    workers: int | None = None,
    cluster: str | None = None,
) -> TournamentConfig:
    """The tournament file ``config`` with the command line's overrides (a ConfigError when it is bad)."""
    return check(load_config(config)).with_overrides(
        seed=seed, concurrency=concurrency, output=output, workers=workers, cluster=cluster
    )


def usage(message: str) -> NoReturn:
    """Refuse the command line: a UsageError (``error: message``, exit 2)."""
    raise UsageError(message)
