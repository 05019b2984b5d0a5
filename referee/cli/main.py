"""The ``referee`` command: parses, calls, prints. The only place with exit codes.

Exit codes: 0 done, 1 the run failed (a bot never became ready, interrupted, a
journal that does not fit), 2 bad usage or a bad tournament file.
"""

from __future__ import annotations

import click

from referee import __version__
from referee.cli.authors import check_bot_command, games, schema
from referee.cli.common import ARGV_KEY
from referee.cli.outputs import leaderboard, replay, verify
from referee.cli.play import check, plan, run


class _Referee(click.Group):
    """The command group; it keeps the command line for the commands that mark bots' logs."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse as a group does, keeping ``args`` (see ``common.command_line``)."""
        ctx.meta[ARGV_KEY] = list(args)
        return super().parse_args(ctx, args)


@click.group(cls=_Referee, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """A tournament referee for card-game bots that talk over HTTP."""


for _command in (run, check, plan, games, schema, check_bot_command, leaderboard, verify, replay):
    main.add_command(_command)
