"""Replay packs (issue 35, point 4): their bytes per match and files per folder, and a
whole run's CPU per decision with and without them: figures, never asserts.

Whole runs as ``make bench``'s third part (``referee run`` in a process of its own, 6 nimmt!
Plus at 4 seats against one fast bot server as 4 URL bots, concurrency 8, start-up and
publishing included), of each code tree given, interleaved repetitions (each tree right
after the other, so a busy spell of the machine hits them alike); medians and min–max of
CPU µs per decision. Then the packs of the last run of each tree: bytes per match, files in
the packs folder, matches per file; and what the moves-only doc (a game with ``replay.js``)
would weigh for the same matches (deflated, base64'd).

    python -m benchmarks.packs --tree before=/path/to/main --tree after=.
    python -m benchmarks.packs --tree after=. --matches 400 --reps 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import fast_bot

SEATS = 4


def whole_run(tree: Path, port: int, matches: int, out: Path) -> float:
    """``referee run`` of the code in ``tree`` into ``out``; its CPU µs per decision."""
    config = out.with_suffix(".toml")
    bots = "".join(f'[[bot]]\nname = "b{i}"\nurl = "http://127.0.0.1:{port}/"\n' for i in range(SEATS))
    config.write_text(
        f'[tournament]\nname = "bench"\ngame = "nimmt_plus"\nplayers = {SEATS}\nformat = "random"\n'
        f'matches = {matches}\nconcurrency = 8\nseed = 7\n[game]\nvariant = "plus"\n'
        f"[limits]\ndeadline_ms = 1000\n{bots}"
    )
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "--output", str(out), "--quiet"],
        check=True,
        capture_output=True,
        env=env,
        cwd=tree,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    decisions = sum(sum(json.loads(line)["decisions"]) for line in (out / "matches.jsonl").read_text().splitlines())
    return cpu / decisions * 1e6


def pack_figures(out: Path) -> dict[str, Any]:
    """Bytes per match of the packs of ``out``, its files, and the moves-only figure."""
    from referee.store import journal as jn
    from referee.store import packs, transcripts

    files = packs.pack_files(out)
    if not files:
        return {"packs": 0}
    lines = list(jn.read_journal(out / "matches.jsonl"))
    found = transcripts.find_many(out, {str(r["id"]) for r in lines})
    moves = [
        packs.encode_line(
            str(r["id"]), r["index"], packs.moves_doc("nimmt_plus", packs.record_fields(r), found[r["id"]])
        )
        for r in lines
    ]
    entries = sum(len(packs.read_pack(p)[0]) for p in files)
    return {
        "matches": len(lines),
        "pack_bytes_per_match": round(sum(p.stat().st_size for p in files) / len(lines)),
        "files_in_packs_folder": len(list((out / packs.FOLDER).iterdir())),
        "matches_per_file_max": max(len(packs.read_pack(p)[0]) for p in files),
        "entries": entries,
        "moves_only_bytes_per_match": round(sum(map(len, moves)) / len(lines)),
    }


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH: a code tree to run (repeatable)")
    ap.add_argument("--matches", type=int, default=200, help="matches of each whole run")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (medians are printed)")
    args = ap.parse_args(argv)
    trees = {name: Path(path) for name, path in (t.split("=", 1) for t in args.tree)}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    with fast_bot.running("first") as bot, tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for name, tree in trees.items():
                out = Path(tmp) / f"{name}-{rep}"
                cpu[name].append(whole_run(tree, bot.port, args.matches, out))
        print(
            f"whole run ({args.matches} matches, 6 nimmt! Plus, 4 seats, concurrency 8), {args.reps} reps interleaved:"
        )
        for name, xs in cpu.items():
            print(f"  {name:<10} {statistics.median(xs):7.1f} µs CPU/decision ({min(xs):.1f}–{max(xs):.1f})")
        for name in trees:
            print(f"  {name:<10} packs: {json.dumps(pack_figures(Path(tmp) / f'{name}-{args.reps - 1}'))}")
        print(f"  load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
