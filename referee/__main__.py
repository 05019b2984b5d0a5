"""``python -m referee``: the same as the ``referee`` command."""

from referee.cli.main import main

main()
