"""The twin: a well-behaved bot that plays exactly the referee's fallback move.

    python tests/hostile/twin.py --port 8001 --seeds seeds.json

``seeds.json`` maps each match id to its match seed (the test writes it from
``referee.schedule.formats.schedule(config)``). The referee's fallback move depends
only on the match seed, the seat and the seat's own decision number
(``referee.match.play.fallback_index``), all of which a bot can know, so a tournament with
the twin in a seat is exactly the tournament in which that seat's every decision fell
back. The hostile tests compare every hostile run with it: the hostile server plays the
same moves before it misbehaves, the referee plays them after.

``fallback_action`` and ``load_seeds`` are shared with ``server.py``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from referee.match.rules import fallback_index
from sample_bots._server import serve


def load_seeds(path: str | Path) -> dict[str, int]:
    """Match id -> match seed, from the JSON file at ``path``."""
    seeds = json.loads(Path(path).read_text())
    return {str(match): int(seed) for match, seed in seeds.items()}


def fallback_action(seeds: dict[str, int], message: dict[str, Any]) -> Any:
    """The action the referee's fallback would play for this ``act`` message."""
    legal = message["legal"]
    return legal[fallback_index(seeds[message["match"]], message["seat"], message["decision"], len(legal))]


def main(argv: list[str] | None = None) -> None:
    """Serve the twin on ``--port`` until SIGTERM."""
    parser = argparse.ArgumentParser(description="A bot that plays the referee's fallback moves.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seeds", required=True, help="JSON file: match id -> match seed")
    args = parser.parse_args(argv)
    seeds = load_seeds(args.seeds)
    serve(lambda message: {"action": fallback_action(seeds, message)}, args.port)


if __name__ == "__main__":
    main()
