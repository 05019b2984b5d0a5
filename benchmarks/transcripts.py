"""Transcript size and ``referee verify`` speed on a synthetic tournament folder.

Plays N matches of a game in-process (no HTTP: every seat picks a seeded random legal
action, with a made-up response time and now and then a fallback after a fault), writes
the journal and the transcripts as a run would, publishes the standings, then runs
verify and prints bytes per match on disk and replay speed.

    python -m benchmarks.transcripts [GAME] [MATCHES] [PLAYERS]     # nimmt_plus 2000 4
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.audit.verify import verify
from referee.games import get_game
from referee.match.rules import deal_fingerprint, fallback_index, ranks_with_forfeits
from referee.record import BOT, FALLBACK, TIMEOUT, MatchRecord, Move
from referee.report.publish import build_leaderboard, write_leaderboard
from referee.store import transcripts
from referee.store.tournament_file import tournament_document


def play(game_id: str, index: int, seed: int, bots: list[str], options: dict[str, Any]) -> MatchRecord:
    """One match with random legal actions, a response time per decision, rare faults."""
    game = get_game(game_id)
    n = len(bots)
    rng = random.Random(seed)
    state = game.setup(n, seed, options)
    deal = deal_fingerprint(game, state, n)
    moves: list[Move] = []
    asked = [0] * n
    lat: list[list[float]] = [[] for _ in range(n)]
    faults = []
    while not game.is_over(state):
        for s in game.to_act(state):
            legal = game.legal(state, s)
            ms = round(rng.uniform(0.3, 4.0), 2)
            if rng.random() < 0.01:
                action, by, fault = legal[fallback_index(seed, s, asked[s], len(legal))], FALLBACK, TIMEOUT
                faults.append(
                    {
                        "seat": s,
                        "bot": bots[s],
                        "decision": asked[s],
                        "phase": "act",
                        "kind": TIMEOUT,
                        "detail": "no reply",
                        "latency_ms": round(ms, 1),
                    }
                )
            else:
                action, by, fault = rng.choice(legal), BOT, None
            moves.append(Move(s, asked[s], action, by, fault, ms))
            lat[s].append(ms)
            asked[s] += 1
            state = game.apply(state, s, action)
    r = game.result(state)
    return MatchRecord(
        id=f"m{index:06d}",
        index=index,
        seed=seed,
        bots=bots,
        scores=list(r.scores),
        ranks=ranks_with_forfeits(r.scores, r.ranks, r.lower_is_better, []),
        lower_is_better=r.lower_is_better,
        forfeited=[],
        faults=faults,
        latency_ms=lat,
        decisions=asked,
        stats=[game.seat_stats(r, s) for s in range(n)],
        details=r.details,
        duration_s=0.0,
        deal_hash=deal,
        moves=moves,
    )


def random_settings(
    name: str, game_id: str, options: dict[str, Any], players: int, matches: int, names: list[str]
) -> dict[str, Any]:
    """The settings of a synthetic random-tables tournament (fallback, 1 s deadline, no bank)."""
    return {
        "name": name,
        "game": game_id,
        "options": options,
        "seed": 1,
        "players": players,
        "format": "random",
        "rounds": None,
        "matches": matches,
        "deadline_ms": 1000,
        "on_fault": "fallback",
        "max_faults": 10,
        "duplicate": False,
        "time_bank_ms": 0,
        "max_fault_rate": 1.0,
        "bots": names,
    }


def main(argv: list[str] | None = None) -> None:
    """Play the synthetic tournament, verify it and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.transcripts", description=__doc__.splitlines()[0])
    parser.add_argument("game", nargs="?", default="nimmt_plus")
    parser.add_argument("matches", nargs="?", type=int, default=2000)
    parser.add_argument("players", nargs="?", type=int, default=4)
    args = parser.parse_args(argv)
    game_id, count, players = args.game, args.matches, args.players
    game = get_game(game_id)
    options = game.check_options(players, {})
    names = [f"bot{i}" for i in range(players + 1)]
    settings = random_settings("bench", game_id, options, players, count, names)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        rng = random.Random(1)
        t0 = time.perf_counter()
        with transcripts.Writer(out) as tw, open(out / "matches.jsonl", "w") as fh:
            for i in range(count):
                seats = rng.sample(names, players)
                rec = play(game_id, i, rng.getrandbits(63), seats, options)
                tw.write(rec)
                fh.write(json.dumps(rec.to_json(), separators=(",", ":")) + "\n")
        played = time.perf_counter() - t0
        doc = tournament_document(settings, count)
        (out / "tournament.json").write_text(json.dumps(doc, indent=2) + "\n")
        records = [json.loads(x) for x in (out / "matches.jsonl").read_text().splitlines()]
        write_leaderboard(out, build_leaderboard(doc, records))
        size = sum(p.stat().st_size for p in (out / "transcripts").iterdir())
        report = verify(out)
        print(report.verdict())
        print(
            f"{game_id}, {players} players, {count} matches: transcripts {size} bytes on disk, "
            f"{size / count:.0f} bytes per match ({report.decisions / count:.0f} decisions per match); "
            f"played in {played:.1f} s; verify: replay {report.replay_seconds:.2f} s = "
            f"{report.replayed / report.replay_seconds:,.0f} matches/s on one core, "
            f"whole verify {report.seconds:.2f} s"
        )


if __name__ == "__main__":
    main()
