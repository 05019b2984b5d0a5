"""Benchmark: how fast the referee is on this machine, next to the floor it cannot beat.

Run with ``make bench`` or ``python -m referee.bench``. It prints:

1. engine only: matches/s and µs per decision (view + legal + apply, random choices,
   no HTTP) for every 6 nimmt! Plus variant;
2. through HTTP against real local sample bots (started as processes): decisions/s at
   concurrency 1 and 32, and the referee's own CPU µs per decision;
3. the floor: a bare keep-alive HTTP loop (same httpx stack, one prebuilt ``act``
   message, no game) against the same bots, at the same concurrency, in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from .bots import http, protocol
from .bots.control import Pacer
from .config import parse_config
from .games import get_game
from .match import play_match
from .tournament.runner import BotPool
from .tournament.schedule import derive_seed


def engine_only(variant: str, seats: int, seconds: float) -> tuple[float, float, int]:
    """Matches/s, µs per decision, decisions played in about ``seconds``."""
    game = get_game("nimmt_plus")
    options = game.check_options(seats, {"variant": variant})
    rng = random.Random(1)
    matches = decisions = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        state = game.setup(seats, matches, options)
        while not game.is_over(state):
            for s in game.to_act(state):
                game.view(state, s)
                legal = game.legal(state, s)
                state = game.apply(state, s, legal[rng.randrange(len(legal))])
                decisions += 1
        game.result(state)
        matches += 1
    elapsed = time.perf_counter() - started
    return matches / elapsed, elapsed / decisions * 1e6, decisions


async def through_http(pool: BotPool, cfg: Any, concurrency: int, matches: int) -> tuple[float, float, int]:
    """Decisions/s, referee CPU µs per decision, decisions, playing ``matches`` matches."""
    game = get_game(cfg.game)
    rts = pool.runtimes
    sem = asyncio.Semaphore(concurrency)
    counted = 0
    pacer = Pacer.for_tournament(cfg.limits.deadline_ms, concurrency, cfg.players)

    async def one(i: int) -> None:
        nonlocal counted
        async with sem, http.new_client(cfg.players + 2) as client:
            seats = [rts[(i + k) % len(rts)] for k in range(cfg.players)]
            rec = await play_match(
                game,
                cfg.options,
                tournament="bench",
                match_id=f"b{i:06d}",
                index=i,
                seed=derive_seed(7, i),
                seats=[rt.endpoint for rt in seats],
                client=client,
                limits=cfg.limits,
                runtimes=seats,
                pacer=pacer,
            )
            counted += sum(rec.decisions)
            if rec.faults:
                raise RuntimeError(f"bench bots faulted: {rec.faults[:2]}")

    cpu0, t0 = time.process_time(), time.perf_counter()
    async with pacer:
        await asyncio.gather(*(one(i) for i in range(matches)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return counted / wall, cpu / counted * 1e6, counted


async def bare_loop(pool: BotPool, cfg: Any, concurrency: int, requests: int) -> tuple[float, float]:
    """Requests/s and CPU µs per request of a bare keep-alive loop posting one act message."""
    game = get_game(cfg.game)
    state = game.setup(cfg.players, 1, cfg.options)
    ctx = protocol.MatchContext("bench", "b0", cfg.game, cfg.options, [e.name for e in pool.endpoints][: cfg.players])
    body = protocol.act(ctx, 0, 0, cfg.limits.deadline_ms, game.view(state, 0), game.legal(state, 0))
    eps = pool.endpoints
    per_worker = requests // concurrency

    async def worker(w: int) -> None:
        async with http.new_client(2) as client:
            ep = eps[w % len(eps)]
            for _ in range(per_worker):
                ex = await http.post(client, ep, body, cfg.limits.deadline_ms, cfg.limits.max_response_bytes)
                if ex.fault:
                    raise RuntimeError(ex.detail)

    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    n = per_worker * concurrency
    return n / wall, cpu / n * 1e6


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="engine-only time per variant")
    ap.add_argument("--matches", type=int, default=40, help="HTTP matches per concurrency level")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)

    figures: dict[str, Any] = {"engine": {}, "http": {}, "floor": {}}
    print("1. engine only (nimmt_plus, 4 players, random choices, no HTTP)")
    for variant in ("plus", "plus_dealt_zeros", "zeros_negative", "simple"):
        mps, us, n = engine_only(variant, 4, args.seconds)
        figures["engine"][variant] = {"matches_per_s": round(mps, 1), "us_per_decision": round(us, 1)}
        print(f"   {variant:<17} {mps:8.1f} matches/s  {us:7.1f} µs/decision  ({n} decisions)")

    doc = {
        "tournament": {"name": "bench", "game": "nimmt_plus", "players": 4},
        "game": {"variant": "plus"},
        "limits": {"deadline_ms": 5000},
        "bot": [
            {"name": f"random{i}", "command": ["python", "-m", "sample_bots.nimmt", "random", "--port", "{port}"]}
            for i in range(4)
        ],
    }
    with TemporaryDirectory() as tmp:
        cfg = parse_config(doc, Path("bench.toml"), {})

        async def http_part() -> None:
            with BotPool(cfg, Path(tmp) / "logs") as pool:
                statuses = await pool.start()
                if not all(s.ok for s in statuses):
                    raise SystemExit("bench bots did not start: " + "; ".join(s.detail for s in statuses if not s.ok))
                await through_http(pool, cfg, 4, 4)  # warm-up
                print("2. through HTTP (4 sample random bots as processes, 4 seats per match)")
                for c in (1, 32):
                    dps, us, n = await through_http(pool, cfg, c, args.matches if c > 1 else max(4, args.matches // 8))
                    figures["http"][c] = {"decisions_per_s": round(dps), "referee_cpu_us_per_decision": round(us, 1)}
                    print(
                        f"   concurrency {c:>2}: {dps:8.0f} decisions/s  referee CPU {us:6.1f} µs/decision  ({n} decisions)"
                    )
                print("3. floor: bare keep-alive HTTP loop, same bots, same client stack")
                for c in (1, 32):
                    rps, us = await bare_loop(pool, cfg, c, 2000 if c == 1 else 6400)
                    figures["floor"][c] = {"requests_per_s": round(rps), "cpu_us_per_request": round(us, 1)}
                    ratio = figures["http"][c]["decisions_per_s"] / rps
                    print(
                        f"   concurrency {c:>2}: {rps:8.0f} requests/s   client CPU {us:6.1f} µs/request"
                        f"   referee reaches {ratio:.0%} of the floor"
                    )

        asyncio.run(http_part())
    game_us = statistics.fmean(v["us_per_decision"] for v in figures["engine"].values())
    print(
        f"summary: game logic {game_us:.0f} µs/decision (target ≤ 150); "
        f"{figures['http'][32]['decisions_per_s']} decisions/s at concurrency 32 (target ≥ 1200)"
    )
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
