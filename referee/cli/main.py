"""The ``referee`` command: parses, calls, prints. The one handler of errors.

Every ``RefereeError`` a command raises ends here (``_Referee.invoke``): ``error: <its
message>`` on stderr and the exit code its class carries (``errors.py`` draws the tree
with the codes). Exit codes: 0 done; 1 the run failed (a bot never became ready, a
journal of another config, the cluster, an output that cannot be written, an interrupted
run; ``check``: a bot not ready; ``check-bot``: a check failed; ``verify``: a
difference); 2 bad usage or a bad input (a tournament file, an output folder, a
transcript, a match that cannot be replayed).
"""

from __future__ import annotations

from typing import Any

import click

from referee import __version__
from referee.cli.authors import check_bot_command, games, schema
from referee.cli.common import ARGV_KEY
from referee.cli.outputs import leaderboard, replay, verify
from referee.cli.play import check, plan, run
from referee.errors import RefereeError


class _Referee(click.Group):
    """The command group; it keeps the command line for the commands that mark bots' logs,
    and is the one place where an error becomes an exit code."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse as a group does, keeping ``args`` (see ``common.command_line``)."""
        ctx.meta[ARGV_KEY] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a ``RefereeError`` becomes ``error: <message>`` and its class's exit code."""
        try:
            return super().invoke(ctx)
        except RefereeError as exc:  # notes: what a command added (how to go on)
            click.echo("error: " + "; ".join([str(exc), *getattr(exc, "__notes__", ())]), err=True)
            ctx.exit(exc.exit_code)


EXIT_CODES = (
    "Exit codes: 0 done; 1 the run failed (a bot not ready, a journal of another config, the cluster, "
    "an output that cannot be written, interrupted; check-bot: a check failed; verify: a difference); "
    "2 bad usage or a bad input (the command line, a tournament file, an output folder, a transcript, "
    "a match that cannot be replayed); an error is printed as error: <what and where>."
)


@click.group(cls=_Referee, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """A tournament referee for card-game bots that talk over HTTP."""


for _command in (run, check, plan, games, schema, check_bot_command, leaderboard, verify, replay):
    main.add_command(_command)
