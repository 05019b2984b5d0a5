"""Scale bench: the referee's memory as a tournament grows (``make bench-scale``, or
``python -m benchmarks.scale``). Figures, never asserts (the machine may be loaded).

A 1,000,000-match ``random`` 6 nimmt! tournament and a 1,000-match one (5 bots, 4 seats),
each a real ``referee run`` process against fast bots (``benchmarks.fast_bot``, started by
the referee as managed bots), so the bots are not the bottleneck. The referee's resident
memory (VmRSS of the ``referee run`` process alone) is sampled every second for
``--seconds`` (60) of play; the runs are then killed (``kill -9``: the guard takes the bots
down). Target: the big run <= 150 MB and within 15 % of the small one.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from benchmarks import fast_bot


def _config(folder: Path, matches: int, concurrency: int) -> Path:
    """The tournament file: ``matches`` random-format matches of 5 managed fast bots."""
    bot, _ = fast_bot.command("first")
    lines = [
        "[tournament]",
        f'name = "scale{matches}"',
        'game = "nimmt_plus"',
        "seed = 1",
        "players = 4",
        'format = "random"',
        f"matches = {matches}",
        f"concurrency = {concurrency}",
        f'output = "{folder / "out"}"',
    ]
    for i in range(5):
        lines += ["[[bot]]", f'name = "fast{i}"', f"command = {json.dumps(bot)}"]
    path = folder / "scale.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _rss_mb(pid: int) -> float | None:
    """The process's resident memory in MB (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def rss_while_playing(matches: int, seconds: float, concurrency: int) -> dict[str, float]:
    """Play a ``matches``-match tournament for ``seconds``; the referee's RSS figures."""
    with TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = Path(tmp)
        config = _config(folder, matches, concurrency)
        proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "run", str(config), "-q"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        journal = folder / "out" / "matches.jsonl"
        samples: list[float] = []
        started = time.monotonic()
        played_at_first = None
        while time.monotonic() - started < seconds and proc.poll() is None:
            time.sleep(1.0)
            rss = _rss_mb(proc.pid)
            if rss is not None:
                samples.append(rss)
            if played_at_first is None and journal.exists():
                played_at_first = time.monotonic()
        elapsed = time.monotonic() - started
        played = journal.read_bytes().count(b"\n") if journal.exists() else 0
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.5)  # the guards notice the referee's death and stop the bots
    return {
        "rss_end_mb": samples[-1] if samples else float("nan"),
        "rss_max_mb": max(samples) if samples else float("nan"),
        "played": played,
        "seconds": elapsed,
        "finished": float(finished),
    }


def main(argv: list[str] | None = None) -> None:
    """Print the scale figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of play per run (default 60)")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)
    print("== 1. referee RSS while playing a random 6 nimmt! tournament (5 fast bots, 4 seats) ==")
    print(f"   concurrency {args.concurrency}, {args.seconds:.0f} s of play each; VmRSS of the referee process")
    small = rss_while_playing(1_000, args.seconds, args.concurrency)
    big = rss_while_playing(1_000_000, args.seconds, args.concurrency)
    for label, r in (("1,000 matches", small), ("1,000,000 matches", big)):
        end = "finished" if r["finished"] else "still playing"
        print(
            f"   {label:>18}: RSS {r['rss_end_mb']:6.1f} MB at {r['seconds']:.0f} s ({end}), "
            f"max {r['rss_max_mb']:6.1f} MB; {int(r['played'])} matches played "
            f"({r['played'] / r['seconds']:.1f}/s)"
        )
    ratio = big["rss_max_mb"] / small["rss_max_mb"]
    print(
        f"   1,000,000 vs 1,000: {ratio:.2f}x the RSS (target <= 1.15x and <= 150 MB: "
        f"{'met' if ratio <= 1.15 and big['rss_max_mb'] <= 150 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
