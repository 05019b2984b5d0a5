"""Publishing at scale (the publishing half of ``make bench-scale``): figures, not asserts.

Writes journals of 100,000 and 1,000,000 matches (5 and 50 bots, 4 seats) from the lines
of a real small run (``leaderboards/nimmt_plus/matches.jsonl``: 6 nimmt! Plus matches of
the sample bots, ``latency_ms`` dropped and ``details`` cut to the summary the journal
keeps), then times ``referee leaderboard`` on each in a fresh process: wall seconds and
peak RSS, and checks that a second run and a run on the journal with its lines shuffled
give byte-identical outputs (timings.json aside).

    python -m benchmarks.publish                      # every size
    python -m benchmarks.publish --sizes 100000:5     # one size (matches:bots)
    python -m benchmarks.publish --replays            # with a transcripts part and a replay packs folder
    python -m benchmarks.publish --tree /path/to/main # publish with the referee of another tree
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.store.journal import journal_details

TEMPLATES = Path(__file__).resolve().parent.parent / "leaderboards" / "nimmt_plus"
DETERMINISTIC = ("README.md", "index.html", "standings.json", "standings.csv")
SIZES = ((100_000, 5), (1_000_000, 5), (1_000_000, 50))
TARGETS = {100_000: 8.0, 1_000_000: 60.0}


def write_journal(out: Path, matches: int, bots: int, seed: int = 1) -> int:
    """A journal of ``matches`` lines made from the real template lines; returns its bytes."""
    lines = [json.loads(x) for x in (TEMPLATES / "matches.jsonl").read_text().splitlines() if x.strip()]
    settings = json.loads((TEMPLATES / "tournament.json").read_text())["settings"]
    names = [f"bot{i:02d}" for i in range(bots)]
    settings = {**settings, "name": f"bench-{matches}-{bots}", "bots": names, "format": "random", "matches": matches}
    out.mkdir(parents=True, exist_ok=True)
    (out / "tournament.json").write_text(json.dumps({"settings": settings, "scheduled": matches}, indent=2) + "\n")
    tails = []
    for d in lines:
        d.pop("latency_ms", None)
        d["details"] = journal_details(d["details"])  # as the journal writes it: the summary only
        rest = {k: v for k, v in d.items() if k not in ("id", "index", "seed", "bots")}
        tails.append(json.dumps(rest, separators=(",", ":"))[1:])
    rng = random.Random(seed)
    size = 0
    with (out / "matches.jsonl").open("w") as f:
        for i in range(matches):
            seats = rng.sample(names, 4)
            line = (
                f'{{"id":"m{i:07d}","index":{i},"seed":{rng.getrandbits(63)},'
                f'"bots":{json.dumps(seats, separators=(",", ":"))},{tails[rng.randrange(len(tails))]}\n'
            )
            size += len(line)
            f.write(line)
    return size


def shuffle_journal(path: Path, seed: int = 2, buckets: int = 64) -> None:
    """Shuffle the journal's lines in bounded memory (random buckets, each shuffled)."""
    rng = random.Random(seed)
    tmp = [path.with_name(f"{path.name}.b{i}") for i in range(buckets)]
    handles = [p.open("w") for p in tmp]
    with path.open() as f:
        for line in f:
            handles[rng.randrange(buckets)].write(line)
    for h in handles:
        h.close()
    rng.shuffle(tmp)
    with path.open("w") as f:
        for p in tmp:
            part = p.read_text().splitlines(keepends=True)
            rng.shuffle(part)
            f.writelines(part)
            p.unlink()


def replay_folders(out: Path) -> None:
    """A transcripts part (empty) and a replay packs folder: publishing takes the replay path
    (the match list chosen as the journal is read, the viewer page; with packs, no replay data)."""
    (out / "transcripts").mkdir()
    (out / "transcripts" / "part-00000.jsonl.gz").write_bytes(gzip.compress(b""))
    (out / "replays" / "packs").mkdir(parents=True)


def leaderboard(out: Path, tree: str | None = None) -> tuple[float, float, float]:
    """Run ``referee leaderboard out`` in a fresh process: (wall seconds, CPU seconds, peak RSS MB)."""
    script = (
        "import resource, sys, time\n"
        "from referee.cli.main import main\n"
        "t = time.perf_counter()\n"
        "try:\n"
        f"    main(['leaderboard', {str(out)!r}])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "u = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024)\n"
    )
    env = None if tree is None else {**os.environ, "PYTHONPATH": tree}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, env=env)
    if result.returncode:
        raise SystemExit(f"referee leaderboard failed:\n{result.stderr}")
    seconds, cpu, rss = result.stdout.split()[-3:]
    return float(seconds), float(cpu), float(rss)


def outputs(out: Path) -> dict[str, bytes]:
    """The deterministic output files' bytes."""
    return {name: (out / name).read_bytes() for name in DETERMINISTIC}


def main(argv: list[str] | None = None) -> None:
    """Print the publishing figures for each size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(f"{m}:{b}" for m, b in SIZES), help="matches:bots,...")
    parser.add_argument("--replays", action="store_true", help="with transcripts and replay packs (replay_folders)")
    parser.add_argument("--tree", help="publish with the referee package of this source tree (PYTHONPATH)")
    args = parser.parse_args(argv)
    print(f"publishing bench (referee leaderboard), {resource.getpagesize()} B pages; figures under load")
    for spec in args.sizes.split(","):
        matches, bots = (int(x) for x in spec.split(":"))
        with tempfile.TemporaryDirectory(prefix="referee-bench-publish-") as tmp:
            out = Path(tmp) / "out"
            t = time.perf_counter()
            size = write_journal(out, matches, bots)
            if args.replays:
                replay_folders(out)
            made = time.perf_counter() - t
            first_s, first_cpu, first_rss = leaderboard(out, args.tree)
            first = outputs(out)
            second_s, second_cpu, _ = leaderboard(out, args.tree)
            same_twice = outputs(out) == first
            shuffle_journal(out / "matches.jsonl")
            third_s, third_cpu, _ = leaderboard(out, args.tree)
            same_shuffled = outputs(out) == first
            page = len(first["index.html"])
            target = TARGETS.get(matches)
            print(
                f"{matches:>9,} matches {bots:>3} bots: journal {size / 1e6:.0f} MB (written in {made:.1f} s); "
                f"leaderboard {first_s:.1f} s / {second_s:.1f} s / {third_s:.1f} s shuffled (CPU {first_cpu:.1f} / "
                f"{second_cpu:.1f} / {third_cpu:.1f} s)"
                + (f" (target <= {target:.0f} s)" if target else "")
                + f", peak RSS {first_rss:.0f} MB (target <= 1024 MB); index.html {page / 1e6:.2f} MB; "
                f"byte-identical twice: {same_twice}, after shuffling: {same_shuffled}",
                flush=True,
            )
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
