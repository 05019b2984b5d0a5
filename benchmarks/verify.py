"""Verify speed (part of ``make bench-scale``): figures, never asserts.

Plays a small 6 nimmt! tournament with ``referee run`` (5 bots, 4 seats, ``random``
format) against fast bots playing a random legal action (``benchmarks.fast_bot``), so the
transcripts hold singles, pairs and zeros as a real field's do. Then ``verify`` checks the
folder in this process and the bench prints matches per CPU second of the replay, the
best of ``--reps``: with the games' whole-transcript fast path (``Game.replay``) and the
ordinary way (``apply`` per decision), as verify replays a match with fallbacks, faults
or extras. Target: >= 2,000 matches/s per core for 6 nimmt! Plus with 4 players.

    python -m benchmarks.verify                     # 400 matches, variant plus
    python -m benchmarks.verify --matches 1000 --variant simple
    python -m benchmarks.verify --folder OUT        # time an existing output folder
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from benchmarks import fast_bot
from referee.audit.verify import verify
from referee.games import get_game
from referee.store.tournament_file import load_output_dir

TARGET = 2000.0


def write_tournament(folder: Path, matches: int, variant: str, players: int, timeout: float = 900.0) -> Path:
    """Play a ``matches``-match tournament with ``referee run``; its output folder."""
    bot, _ = fast_bot.command("random")
    out = folder / "out"
    lines = [
        "[tournament]",
        f'name = "verify{matches}"',
        'game = "nimmt_plus"',
        "seed = 1",
        f"players = {players}",
        'format = "random"',
        f"matches = {matches}",
        "concurrency = 8",
        f'output = "{out}"',
        "[game]",
        f'variant = "{variant}"',
    ]
    for i in range(max(5, players + 1)):
        lines += ["[[bot]]", f'name = "rand{i}"', f"command = {json.dumps(bot)}"]
    config = folder / "verify.toml"
    config.write_text("\n".join(lines) + "\n")
    subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "-q"],
        check=True,
        timeout=timeout,
        stdout=subprocess.DEVNULL,
    )
    return out


def replay_rate(out: Path, fast: bool, reps: int) -> tuple[float, float, int, int]:
    """Best of ``reps``: (matches per CPU second of the replay, CPU seconds of the whole
    verify, matches replayed, decisions), with the fast path on or off."""
    tournament, _ = load_output_dir(out)
    game = get_game(tournament["settings"]["game"])
    cls = type(game)
    saved = cls.fast_replay
    best_rate, best_total, replayed, decisions = 0.0, 0.0, 0, 0
    try:
        cls.fast_replay = saved and fast
        for _ in range(reps):
            report = verify(out)
            if not report.ok:
                raise SystemExit(f"verify failed on the bench's own folder: {report.verdict()}")
            rate = report.replayed / report.replay_cpu_seconds if report.replay_cpu_seconds > 0 else 0.0
            if rate > best_rate:
                best_rate, best_total = rate, report.cpu_seconds
            replayed, decisions = report.replayed, report.decisions
    finally:
        cls.fast_replay = saved
    return best_rate, best_total, replayed, decisions


def main(argv: list[str] | None = None) -> None:
    """Print the verify figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.verify", description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=400, help="matches of the tournament played (default 400)")
    parser.add_argument("--variant", default="plus", choices=("plus", "plus_dealt_zeros", "zeros_negative", "simple"))
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--reps", type=int, default=5, help="verify runs per figure, the best is printed (default 5)")
    parser.add_argument("--folder", type=Path, help="time this output folder instead of playing one")
    args = parser.parse_args(argv)
    with TemporaryDirectory(prefix="bench-verify-") as tmp:
        if args.folder is not None:
            out, what = args.folder, str(args.folder)
        else:
            started = time.perf_counter()
            out = write_tournament(Path(tmp), args.matches, args.variant, args.players)
            what = (
                f"6 nimmt! {args.variant}, {args.players} players, {args.matches} matches of random legal bots "
                f"(played in {time.perf_counter() - started:.0f} s)"
            )
        print("== verify speed: matches replayed per CPU second (one process; best of the runs) ==")
        print(f"   {what}")
        for label, fast in (("whole-transcript fast path", True), ("ordinary apply per decision", False)):
            rate, total, replayed, decisions = replay_rate(out, fast, args.reps)
            print(
                f"   {label:>28}: {rate:8,.0f} matches/s ({replayed} matches, {decisions / max(1, replayed):.0f} "
                f"decisions each; whole verify with the standings files {total:.2f} CPU s)"
            )
            if fast:
                print(f"   target >= {TARGET:,.0f} matches/s per core: {'met' if rate >= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
