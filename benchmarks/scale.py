"""Scale bench: the referee's memory as a tournament grows (``make bench-scale``, or
``python -m benchmarks.scale``). Figures, never asserts (the machine may be loaded).

A 1,000,000-match ``random`` 6 nimmt! tournament and a 1,000-match one (5 bots, 4 seats),
each a real ``referee run`` process against fast bots (``benchmarks.fast_bot``, started by
the referee as managed bots), so the bots are not the bottleneck. The referee's resident
memory (VmRSS of the ``referee run`` process alone) is sampled every second for
``--seconds`` (60) of play; the runs are then killed (``kill -9``: the guard takes the bots
down). Target: the big run <= 150 MB and within 15 % of the small one.

Then the same for a ladder (``format = "ladder"``) of 200 bots, 1,000,000 matches against
1,000: the bots are 200 URLs of one fast bot server. Printed besides the RSS: the referee's
CPU per match, and matchmaking's CPU per match (``choose_epoch`` for 200 bots, measured
in this process over a season of epochs): its share of the referee's CPU per match.
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

import numpy as np

from benchmarks import fast_bot
from referee.run.ladder import LadderRules, Summary, choose_epoch, epoch_size

LADDER_BOTS = 200


def _config(folder: Path, matches: int, concurrency: int, url: str | None = None) -> Path:
    """The tournament file: ``matches`` random-format matches of 5 managed fast bots; with
    ``url``, a ladder of 200 bots at that fast bot server."""
    bot, _ = fast_bot.command("first")
    lines = [
        "[tournament]",
        f'name = "scale{matches}"',
        'game = "nimmt_plus"',
        "seed = 1",
        "players = 4",
        f'format = "{"ladder" if url else "random"}"',
        f"matches = {matches}",
        f"concurrency = {concurrency}",
        f'output = "{folder / "out"}"',
    ]
    if url is not None:
        for i in range(LADDER_BOTS):
            lines += ["[[bot]]", f'name = "b{i:03d}"', f'url = "{url}b{i:03d}"']
    for i in range(0 if url else 5):
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


def _cpu_s(pid: int) -> float | None:
    """The process's user + system CPU seconds (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_while_playing(matches: int, seconds: float, concurrency: int, url: str | None = None) -> dict[str, float]:
    """Play a ``matches``-match tournament (a ladder with ``url``) for ``seconds``; the
    referee's RSS and CPU figures."""
    with TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = Path(tmp)
        config = _config(folder, matches, concurrency, url)
        proc = subprocess.Popen(
            [sys.executable, "-m", "referee", "run", str(config), "-q"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        journal = folder / "out" / "matches.jsonl"
        samples: list[float] = []
        cpu: float | None = 0.0
        started = time.monotonic()
        played_at_first = None
        while time.monotonic() - started < seconds and proc.poll() is None:
            time.sleep(1.0)
            rss = _rss_mb(proc.pid)
            if rss is not None:
                samples.append(rss)
                cpu = _cpu_s(proc.pid) or cpu
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
        "cpu_s": cpu or 0.0,
    }


def matchmaking_cpu_per_match(bots: int = LADDER_BOTS, players: int = 4, epochs: int = 40) -> float:
    """CPU seconds ``choose_epoch`` spends per table over ``epochs`` epochs of ``bots`` bots."""
    rules = LadderRules(players=players, epoch_tables=epoch_size(bots, players))
    lineup = [f"b{i:03d}" for i in range(bots)]
    summary, rng = Summary(players), np.random.default_rng(1)
    strength = rng.normal(size=bots)
    pending: list[tuple[object, object]] = []
    spent = 0.0
    for e in range(epochs):
        if len(pending) > rules.lag:
            summary.record(lineup, *pending.pop(0))  # type: ignore[arg-type]
        cpu = time.process_time()
        tables = choose_epoch(rules, 7, lineup, summary, e)
        summary.assign(lineup, tables)
        spent += time.process_time() - cpu
        perf = strength[tables] + rng.normal(size=tables.shape)
        pending.append((tables, 1 + np.argsort(np.argsort(-perf, axis=1), axis=1)))
    return spent / (epochs * rules.epoch_tables)


def main(argv: list[str] | None = None) -> None:
    """Print the scale figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of play per run (default 60)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--ladder-only", action="store_true", help="only the ladder's figures")
    args = parser.parse_args(argv)
    if args.ladder_only:
        ladder(args.seconds, args.concurrency)
        return
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

    ladder(args.seconds, args.concurrency)


def ladder(seconds: float, concurrency: int) -> None:
    """The ladder's figures: RSS at 1,000,000 against 1,000 matches, matchmaking's CPU share."""
    print(f"== 2. the same for a ladder of {LADDER_BOTS} URL bots (one fast bot server), 4 seats ==")
    with fast_bot.running("first") as server:
        small = rss_while_playing(1_000, seconds, concurrency, server.url)
        big = rss_while_playing(1_000_000, seconds, concurrency, server.url)
    for label, r in (("1,000 matches", small), ("1,000,000 matches", big)):
        end = "finished" if r["finished"] else "still playing"
        per = 1000 * r["cpu_s"] / r["played"] if r["played"] else float("nan")
        print(
            f"   {label:>18}: RSS {r['rss_end_mb']:6.1f} MB ({end}), max {r['rss_max_mb']:6.1f} MB; "
            f"{int(r['played'])} matches ({r['played'] / r['seconds']:.1f}/s), referee CPU {per:.2f} ms a match"
        )
    ratio = big["rss_max_mb"] / small["rss_max_mb"]
    print(f"   1,000,000 vs 1,000: {ratio:.2f}x the RSS (target <= 1.15x: {'met' if ratio <= 1.15 else 'NOT met'})")
    mm = matchmaking_cpu_per_match()
    per = big["cpu_s"] / big["played"] if big["played"] else float("nan")
    print(
        f"   matchmaking: {1000 * mm:.3f} ms CPU a match (choose_epoch, {LADDER_BOTS} bots), "
        f"{100 * mm / per:.1f} % of the referee's CPU per match"
    )


if __name__ == "__main__":
    main()
