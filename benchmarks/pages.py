"""The leaderboard page and bot pages at 200 bots: figures, not asserts.

Synthesizes a 200-bot, 2,000-match 6 nimmt! Plus folder (``synth``: the numbers of real
matches of the sample bots, re-seated; a few faults), times ``referee leaderboard`` with
every format and with ``-f md`` in a fresh process, and opens ``index.html`` and a bot
page in the system Chromium, printing the time to the load event and the page sizes.

    python -m benchmarks.pages                     # 200 bots, 2,000 matches
    python -m benchmarks.pages --bots 1000 --matches 20000
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "leaderboards" / "nimmt_plus"
CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HERO = "bot001"  # sits at every tenth table as well, so its match list has several pages
FAULTY = "bot007"  # times out once in each of its matches


def synth(out: Path, bots: int = 200, matches: int = 2000, seed: int = 1) -> list[str]:
    """Write ``tournament.json`` and ``matches.jsonl`` of a random-tables tournament; return the bot names."""
    lines = [json.loads(x) for x in (TEMPLATES / "matches.jsonl").read_text().splitlines() if x.strip()]
    settings = json.loads((TEMPLATES / "tournament.json").read_text())["settings"]
    names = [f"bot{i:03d}" for i in range(bots)]
    settings = {**settings, "name": f"season-{bots}", "bots": names, "format": "random", "matches": matches}
    out.mkdir(parents=True, exist_ok=True)
    (out / "tournament.json").write_text(json.dumps({"settings": settings, "scheduled": matches}, indent=2) + "\n")
    rng = random.Random(seed)
    with (out / "matches.jsonl").open("w") as f:
        for i in range(matches):
            seats = rng.sample(names, 4)
            if i % 10 == 0 and HERO not in seats:
                seats[rng.randrange(4)] = HERO
            d = dict(rng.choice(lines))
            d.pop("latency_ms", None)
            d.update(id=f"m{i:06d}", index=i, seed=rng.getrandbits(63), bots=seats, faults=[])
            if FAULTY in seats:
                seat = seats.index(FAULTY)
                d["faults"] = [
                    {
                        "seat": seat,
                        "decision": 3,
                        "phase": "act",
                        "kind": "timeout",
                        "detail": "no reply within 1000 ms",
                        "latency_ms": 1000.0,
                    }
                ]
            f.write(json.dumps(d, separators=(",", ":")) + "\n")
    return names


def publish(out: Path, *formats: str) -> tuple[float, float]:
    """(wall, CPU) seconds of ``referee leaderboard out [-f ...]`` in a fresh process."""
    args = [sys.executable, "-m", "referee", "leaderboard", str(out)] + [x for f in formats for x in ("-f", f)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def load_times(pages: list[Path], runs: int = 3) -> list[float]:
    """Milliseconds from navigation to the load event of each page (best of ``runs``), in Chromium."""
    from playwright.sync_api import sync_playwright

    best = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            for path in pages:
                times = []
                for _ in range(runs):
                    page = browser.new_page(viewport={"width": 1366, "height": 800})
                    page.goto(path.as_uri(), wait_until="load")
                    times.append(
                        page.evaluate(
                            "() => { const n = performance.getEntriesByType('navigation')[0];"
                            " return n.loadEventEnd - n.startTime; }"
                        )
                    )
                    page.close()
                best.append(min(times))
        finally:
            browser.close()
    return best


def main(argv: list[str] | None = None) -> None:
    """Print publish times and page load times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--keep", type=Path, default=None, help="write the folder here and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="referee-bench-pages-") as tmp:
        out = args.keep or Path(tmp) / "out"
        synth(out, args.bots, args.matches)
        md, md_cpu = publish(out, "md")
        every, every_cpu = publish(out)
        index = out / "index.html"
        hero = out / "bots" / f"{HERO}.html"
        bot_bytes = sum(p.stat().st_size for p in (out / "bots").rglob("*") if p.is_file())
        ms = load_times([index, hero])
        print(
            f"{args.bots} bots, {args.matches} matches: referee leaderboard -f md {md:.2f} s (CPU {md_cpu:.2f} s), "
            f"every format {every:.2f} s (CPU {every_cpu:.2f} s); index.html {index.stat().st_size / 1e3:.0f} kB, loads in {ms[0]:.0f} ms; "
            f"bots/ {bot_bytes / 1e6:.2f} MB in {sum(1 for _ in (out / 'bots').rglob('*.*'))} files, "
            f"{HERO}.html loads in {ms[1]:.0f} ms",
            flush=True,
        )


if __name__ == "__main__":
    main()
