"""What every command shares: the exit codes and loading a tournament file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from referee.config.model import TournamentConfig
from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.schedule.formats import check

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
ARGV_KEY = "referee.argv"


def command_line(command: str) -> list[str]:
    """The command line this command was called with, as ``referee <args>`` (its own
    name and arguments when it was called without the ``referee`` group)."""
    ctx = click.get_current_context(silent=True)
    argv = ctx.meta.get(ARGV_KEY) if ctx is not None else None
    return ["referee", *(argv if argv else [command])]


def load(
    config: Path,
    seed: int | None,
    concurrency: int | None,
    output: Path | None,
    workers: int | None = None,
    cluster: str | None = None,
) -> TournamentConfig:
    """The tournament file ``config`` with the command line's overrides; exit 2 if it is bad."""
    try:
        return check(load_config(config)).with_overrides(
            seed=seed, concurrency=concurrency, output=output, workers=workers, cluster=cluster
        )
    except ConfigError as exc:
        usage(str(exc))


def usage(message: str) -> NoReturn:
    """Print ``error: message`` and exit 2 (bad usage)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)
