"""Publishing with replays against Markdown only (issue 28): figures, never asserts.

Plays a synthetic 6 nimmt! Plus tournament in-process (``benchmarks.transcripts.play``:
seeded random legal actions, rare fallbacks after a timeout), writes its journal,
transcripts and tournament.json as a run would, then times ``referee leaderboard`` in a
fresh process: ``-f md`` alone, every format on a folder without replay data (the first
publish), and every format again (data already made). Prints wall and CPU seconds, peak
RSS and the bytes of ``replays/``. Target: every format within 3x of Markdown alone.

    python -m benchmarks.replays                        # 2,000 matches, 200 bots
    python -m benchmarks.replays --matches 200 --bots 20
    python -m benchmarks.replays --matches 1000000 --bots 200 --distinct 500
    python -m benchmarks.replays --folder OUT           # time an existing folder
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.transcripts import play, random_settings
from referee.games import get_game
from referee.record import MatchRecord
from referee.store import transcripts
from referee.store.tournament_file import tournament_document


def write_folder(
    out: Path,
    matches: int,
    bots: int,
    players: int = 4,
    distinct: int = 0,
    change: Callable[[MatchRecord], MatchRecord] | None = None,
) -> None:
    """A played output folder: ``matches`` matches of ``players`` seats among ``bots`` bots;
    with ``distinct``, only that many are played and repeated under new ids (large folders);
    ``change`` edits each record before it is written (tests)."""
    game = get_game("nimmt_plus")
    options = game.check_options(players, {})
    names = [f"bot{i:03d}" for i in range(bots)]
    settings = random_settings(f"replays-{matches}", "nimmt_plus", options, players, matches, names)
    out.mkdir(parents=True)
    rng = random.Random(1)
    pool = [play("nimmt_plus", i, rng.getrandbits(63), rng.sample(names, players), options) for i in range(distinct)]
    with transcripts.Writer(out) as tw, open(out / "matches.jsonl", "w") as fh:
        for i in range(matches):
            if pool:
                rec = dataclasses.replace(pool[i % len(pool)], id=f"m{i:07d}", index=i)
            else:
                rec = play("nimmt_plus", i, rng.getrandbits(63), rng.sample(names, players), options)
            rec = change(rec) if change is not None else rec
            tw.write(rec)
            line = rec.to_json()
            line.pop("latency_ms", None)
            fh.write(json.dumps(line, separators=(",", ":")) + "\n")
    doc = tournament_document(settings, matches)
    (out / "tournament.json").write_text(json.dumps(doc, indent=2) + "\n")


def leaderboard(out: Path, *formats: str) -> tuple[float, float, float]:
    """``referee leaderboard OUT [-f F]...`` in a fresh process: wall s, CPU s, peak RSS MB."""
    args = [a for f in formats for a in ("-f", f)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "referee", "leaderboard", str(out), *args], check=True, stdout=subprocess.DEVNULL
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def size(folder: Path) -> int:
    """Bytes of the files under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def main(argv: list[str] | None = None) -> None:
    """Write the folder, time the three publishes, print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replays", description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="write the folder here and keep it")
    parser.add_argument("--distinct", type=int, default=0, help="play only this many, repeated (1,000,000)")
    parser.add_argument("--folder", type=Path, default=None, help="time this existing folder instead")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.folder or args.keep or Path(tmp) / "out"
        if args.folder is None:
            t0 = time.perf_counter()
            write_folder(out, args.matches, args.bots, distinct=args.distinct)
            print(f"{args.matches} matches, {args.bots} bots: written in {time.perf_counter() - t0:.1f} s")
        md = leaderboard(out, "md")
        print(f"leaderboard -f md:               {md[0]:6.2f} s wall {md[1]:6.2f} s CPU {md[2]:6.0f} MB")
        shutil.rmtree(out / "replays", ignore_errors=True)
        first = leaderboard(out)
        print(f"leaderboard (all), first:        {first[0]:6.2f} s wall {first[1]:6.2f} s CPU {first[2]:6.0f} MB")
        again = leaderboard(out)
        print(f"leaderboard (all), again:        {again[0]:6.2f} s wall {again[1]:6.2f} s CPU {again[2]:6.0f} MB")
        print(
            f"all/md: first {first[0] / md[0]:.2f}x, again {again[0] / md[0]:.2f}x wall (target <= 3x); "
            f"replays/ {size(out / 'replays') / 1e6:.2f} MB"
        )


if __name__ == "__main__":
    main()
