"""A published-looking 200-bot ladder season for the page tests, written directly (no bots
played): the journal re-seats real sample-bot matches (``benchmarks.pages.synth``'s
templates), and ``tournament.json`` carries what a long season accumulates: a lineup
history of many segments of ``name@version``, dropped tables, five excluded bots with the
reasons a real run publishes, three bots removed on a resume (their matches still count),
versions in the journal, prize places, a few weaker-cage marks and one fault. Each match keeps its
template's seed and transcript, so its replay opens."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

from benchmarks.pages import TEMPLATES
from referee.store import transcripts

LEADER = "a-contestant-with-a-long-name.v2"  # takes the best seat of its every match: rank 1
MARKED = {LEADER: ["sandbox = none", "network = host"], "bot007": ["shared uid"], "bot011": ["memory_mb 4096 > 1024"]}
EXCLUDED = {  # the public reasons a run writes (errors.Unready, made where the bot failed)
    "late-bot": "connection refused",
    "slow-bot": "timed out after 15000 ms",
    "broken-bot": "HTTP 500",
    "crashy-bot": "exited with code 1 before it was ready",
    "gone-bot": "cannot start its command: no such executable",
}
REMOVED = ["bot900", "bot901", "bot902"]  # removed on a resume: no row, their matches count
EPOCH = 64  # tables an epoch
TABLES = 1500  # chosen: 24 epochs (room for the 12 lineup segments), every 75th dropped
FAULTED = ("bot007", 1000, 3)  # the bot, the match index and the bot's own decision of the one fault


def _timeout(seat: int, bot: str, decision: int) -> dict[str, Any]:
    return {
        "seat": seat,
        "bot": bot,
        "decision": decision,
        "phase": "act",
        "kind": "timeout",
        "detail": "no reply in 1000 ms",
    }


def _version(rng: random.Random) -> str:
    return f"{rng.getrandbits(48):012x}"


def _lineup(names: list[str], segment: int) -> list[str]:
    """The bots in the ladder's lineup in ``segment``: the excluded gone from the 3rd, the removed from the 8th."""
    return [n for n in names if not (n in REMOVED and segment >= 8) and not (n in EXCLUDED and segment >= 3)]


def build(out: Path, bots: int = 200, tables: int = TABLES, seed: int = 7) -> dict[str, Any]:
    """Write the season's ``tournament.json`` and ``matches.jsonl`` into ``out`` (``tables``
    chosen, every 75th dropped); its settings."""
    rng = random.Random(seed)
    lines = [json.loads(x) for x in (TEMPLATES / "matches.jsonl").read_text().splitlines() if x.strip()]
    moves = {t["id"]: t for _, t in transcripts.read_lines(TEMPLATES)}  # each template's transcript
    template = json.loads((TEMPLATES / "tournament.json").read_text())["settings"]
    names = [LEADER] + [f"bot{i:03d}" for i in range(1, bots)] + REMOVED
    played = names + ["late-bot", "slow-bot"]  # two excluded bots played before they went down
    versions = {n: sorted(_version(rng) for _ in range(rng.choice((1, 1, 2, 3)))) for n in played}
    starts = [0, *sorted(rng.sample(range(1, -(-tables // EPOCH)), 11))]  # a new version or a bot leaving

    def at(name: str, segment: int) -> str:
        own = versions[name]
        return own[min(segment * len(own) // len(starts), len(own) - 1)]

    dropped = []
    out.mkdir(parents=True, exist_ok=True)
    (out / transcripts.FOLDER).mkdir()
    with (out / "matches.jsonl").open("w") as f, gzip.open(out / transcripts.FOLDER / "part-00000.jsonl.gz", "wt") as t:
        for i in range(tables):
            segment = sum(1 for e in starts if e <= i // EPOCH) - 1
            seats = rng.sample(_lineup(played, segment), 4)
            d = dict(rng.choice(lines))
            if LEADER in seats:  # the leader sits where its template line ranked first
                j, best = seats.index(LEADER), d["ranks"].index(min(d["ranks"]))
                seats[j], seats[best] = seats[best], seats[j]
            vs = [at(n, segment) for n in seats]
            if i % 75 == 74:  # chosen, then a bot left before it was played
                dropped.append([i, [f"{n}@{v}" for n, v in zip(seats, vs)]])
                continue
            d.pop("latency_ms", None)
            tr = {**moves[d["id"]], "id": f"m{i:06d}"}  # the template's deal and moves: its replay opens
            faults = []
            if i == FAULTED[1]:  # one timeout of FAULTED[0] at its own decision FAULTED[2]
                who = FAULTED[0]
                seats = seats if who in seats else [who, *seats[1:]]
                faults = [_timeout(seats.index(who), who, FAULTED[2])]
            d.update(id=tr["id"], index=i, bots=seats, versions=vs, faults=faults)
            f.write(json.dumps(d, separators=(",", ":")) + "\n")
            t.write(json.dumps(tr, separators=(",", ":")) + "\n")
    segments = [{"from": e, "bots": [f"{n}@{at(n, k)}" for n in _lineup(played, k)]} for k, e in enumerate(starts)]
    settings = {
        **template,
        "name": "season-ladder",
        "format": "ladder",
        "rounds": None,
        "matches": tables,
        "closed": False,
        "ladder": {"epoch_tables": EPOCH, "lineups": segments, "dropped": dropped},
        "on_unready": "exclude",
        "top": 3,
        "cage_marks": MARKED,
        "bots": names[:bots],
        "excluded": [{"name": n, "reason": r} for n, r in EXCLUDED.items()],
    }
    (out / "tournament.json").write_text(json.dumps({"settings": settings, "scheduled": tables}, indent=2) + "\n")
    return settings
