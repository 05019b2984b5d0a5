"""Benchmark: what the cage of managed bots costs (``make bench``, or
``python -m benchmarks.cage``). For ``sandbox = "bwrap"`` and ``"none"`` it prints:

1. bot start-up: from launching a sample bot to its first answered ``hello`` (median
   of a few starts);
2. a whole tournament of sample bots, once they are up: decisions per second and the
   referee's own CPU µs per decision (its process time over the decisions in the journal).

Without bubblewrap only the ``none`` lines are printed. On a machine whose Python lives
where no other uid can read it, ``none`` runs the bots as the referee's user.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from referee.bots.cage.process import start_managed
from referee.bots.cage.sandbox import BotSpec, CageLimits, bwrap_works
from referee.bots.client import protocol
from referee.config.parse import parse_config
from referee.run.runner import run_tournament
from referee.store.journal import JOURNAL

NIMMT = ("python", "-m", "sample_bots.nimmt")


def limits(sandbox: str) -> CageLimits:
    """The default limits in ``sandbox`` mode (``none``: as the referee's own user)."""
    return CageLimits(sandbox=sandbox, bot_user="referee" if sandbox == "none" else "own")


async def startup_ms(sandbox: str, starts: int, logs: Path) -> float:
    """Median ms from launching a sample bot to its first answered hello."""
    spec = BotSpec("bench", (*NIMMT, "greedy", "--port", "{port}"), limits=limits(sandbox))
    hello = protocol.hello("bench", "nimmt_plus", {}, "bench")
    times = []
    for _ in range(starts):
        t0 = time.perf_counter()
        bot = await start_managed(spec, logs, hello)
        times.append((time.perf_counter() - t0) * 1000)
        bot.stop()
    return statistics.median(times)


def tournament(sandbox: str, rounds: int, folder: Path, concurrency: int = 8) -> tuple[float, float, int]:
    """Decisions/s, referee CPU µs per decision and decisions of a sample tournament."""
    bots = [
        {"name": f"{s}-{i}", "command": [*NIMMT, s, "--port", "{port}"]}
        for i, s in enumerate(["greedy", "cautious", "random", "random"])
    ]
    table = {"name": "bench-cage", "game": "nimmt_plus", "players": 4, "rounds": rounds, "concurrency": concurrency}
    doc = {
        "tournament": {**table, "output": str(folder / f"{sandbox}-{concurrency}")},
        "limits": {"sandbox": sandbox, **({"bot_user": "referee"} if sandbox == "none" else {})},
        "bot": bots,
    }
    cfg = parse_config(doc, folder / "bench.toml", os.environ)
    marks: list[float] = []  # CPU and wall clock once every bot is up: play only

    def ready(_statuses: object) -> None:
        marks.extend((time.process_time(), time.perf_counter()))

    asyncio.run(run_tournament(cfg, on_ready=ready))
    cpu, wall = time.process_time() - marks[0], time.perf_counter() - marks[1]
    lines = (cfg.output / JOURNAL).read_text().splitlines()
    decisions = sum(sum(json.loads(line)["decisions"]) for line in lines)
    return decisions / wall, cpu / decisions * 1e6, decisions


def main(argv: list[str] | None = None) -> None:
    """Print start-up time and referee CPU per decision with and without the cage."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5, help="bot starts per mode")
    parser.add_argument("--rounds", type=int, default=20, help="round-robin rounds of the tournament")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 128], help="matches in flight")
    args = parser.parse_args(argv)
    modes = ["bwrap", "none"] if bwrap_works() else ["none"]
    print("the cage of managed bots (sandbox = bwrap vs none), 6 nimmt! Plus sample bots")
    with TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mode in modes:
            ms = asyncio.run(startup_ms(mode, args.starts, folder / "logs"))
            print(f"  {mode:<5}  bot start-up {ms:6.0f} ms (median of {args.starts})")
            for concurrency in args.concurrency:
                rate, cpu_us, decisions = tournament(mode, args.rounds, folder, concurrency)
                print(
                    f"  {mode:<5}  concurrency {concurrency:<4} {rate:7.0f} decisions/s   "
                    f"referee CPU {cpu_us:5.0f} µs per decision ({decisions} decisions)"
                )


if __name__ == "__main__":
    main()
