"""The ``referee`` command: parses, calls, prints. The only place with exit codes.

Exit codes: 0 done, 1 the run failed (a bot never became ready, interrupted, a
journal that does not fit), 2 bad usage or a bad tournament file.
"""

from __future__ import annotations

import click

from referee import __version__
from referee.cli.authors import check_bot_command, games, schema
from referee.cli.outputs import leaderboard, replay, verify
from referee.cli.play import check, plan, run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """A tournament referee for card-game bots that talk over HTTP."""


for _command in (run, check, plan, games, schema, check_bot_command, leaderboard, verify, replay):
    main.add_command(_command)
