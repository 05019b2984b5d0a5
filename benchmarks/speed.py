"""Benchmark: how fast the referee is on this machine, next to a floor it cannot beat
(``make bench``, or ``python -m benchmarks.speed``). It prints:

1. engine only: µs of CPU per decision (view + legal + apply, random choices, no HTTP)
   for every 6 nimmt! Plus variant;
2. the referee: real matches (6 nimmt! Plus, 4 seats) through ``play_match``, the lean
   pool and the pacer, against one fast bot server (``benchmarks.fast_bot``) at
   concurrency 8 and 128: decisions/s, the referee's CPU µs per decision, the recorded
   response time p50/p99, replies recorded past the deadline, and the loop lag;
3. the floor: a minimal keep-alive client (an ``asyncio.Protocol``, one prebuilt ``act``
   request, no game, no checks) against the same server with the same requests in
   flight. Repetitions interleave with the referee's; medians are printed, with the
   ratio and the targets beside them (never asserted).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks import fast_bot
from referee.bots.client import protocol, wire
from referee.bots.client.pool import LeanPool
from referee.bots.control import BotRuntime, Pacer
from referee.config.parse import parse_config
from referee.games import get_game
from referee.match.play import play_match
from referee.run.local import play_gc
from referee.schedule.formats import derive_seed

SEATS = 4
DEADLINE_MS = 1000


def engine_only(variant: str, decisions: int) -> tuple[float, int]:
    """CPU µs per decision over at least ``decisions`` decisions."""
    game = get_game("nimmt_plus")
    options = game.check_options(SEATS, {"variant": variant})
    rng = random.Random(1)
    done = matches = 0
    cpu0 = time.process_time()
    while done < decisions:
        state = game.setup(SEATS, matches, options)
        while not game.is_over(state):
            for s in game.to_act(state):
                game.view(state, s)
                legal = game.legal(state, s)
                state = game.apply(state, s, legal[rng.randrange(len(legal))])
                done += 1
        game.result(state)
        matches += 1
    return (time.process_time() - cpu0) / done * 1e6, done


async def referee_run(url: str, concurrency: int, matches: int) -> dict[str, float]:
    """Play ``matches`` matches, ``concurrency`` at a time; the referee's figures."""
    cfg = parse_config(
        {
            "tournament": {"name": "bench", "game": "nimmt_plus", "players": SEATS},
            "game": {"variant": "plus"},
            "limits": {"deadline_ms": DEADLINE_MS},
            "bot": [{"name": f"b{i}", "url": url} for i in range(SEATS)],
        },
        Path("bench.toml"),
        {},
    )
    game = get_game("nimmt_plus")
    rts = [BotRuntime(wire.Endpoint.make(f"b{i}", url, None)) for i in range(SEATS)]
    pacer = Pacer.for_tournament(DEADLINE_MS, concurrency, SEATS)
    sem = asyncio.Semaphore(concurrency)
    lean = LeanPool(concurrency * SEATS)  # as the runner: one keep-alive pool for the run
    latencies: list[float] = []
    faults = 0

    async def one(i: int) -> None:
        nonlocal faults
        async with sem, wire.new_client(SEATS + 2, lean) as client:
            rec = await play_match(
                game,
                cfg.options,
                tournament="bench",
                match_id=f"b{i:06d}",
                index=i,
                seed=derive_seed(7, i),
                seats=[rt.endpoint for rt in rts],
                client=client,
                limits=cfg.limits,
                runtimes=rts,
                pacer=pacer,
            )
            for seat in rec.latency_ms:
                latencies.extend(seat)
            faults += len(rec.faults)

    cpu0, t0 = time.process_time(), time.perf_counter()
    with play_gc():  # as the runner plays
        async with pacer:
            try:
                await asyncio.gather(*(one(i) for i in range(matches)))
            finally:
                lean.close()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    latencies.sort()
    lag = pacer.report()
    return {
        "decisions_per_s": len(latencies) / wall,
        "cpu_us_per_decision": cpu / len(latencies) * 1e6,
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[int(len(latencies) * 0.99)],
        "past_deadline": sum(1 for x in latencies if x > DEADLINE_MS),
        "faults": faults,
        "lag_p50_ms": lag.get("p50_ms", 0.0),
        "lag_p99_ms": lag.get("p99_ms", 0.0),
        "decisions": len(latencies),
        "connections": sum(lean.opened.values()),
    }


class _FloorConn(asyncio.Protocol):
    """One keep-alive connection sending the same request as soon as a reply is in."""

    def __init__(self, request: bytes, left: list[int], done: asyncio.Future[None]) -> None:
        self.request, self.left, self.done = request, left, done
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        i = self.buf.lower().find(b"content-length:", 0, end)
        length = int(self.buf[i + 15 : self.buf.find(b"\r\n", i)])
        if len(self.buf) < end + 4 + length:
            return
        self.buf = self.buf[end + 4 + length :]
        self.left[0] -= 1
        if self.left[0] > 0:
            assert self.transport is not None
            self.transport.write(self.request)
        elif not self.done.done():
            self.done.set_result(None)


async def floor_run(port: int, in_flight: int, requests: int) -> dict[str, float]:
    """Requests/s and CPU µs per request of the minimal client with ``in_flight`` connections."""
    game = get_game("nimmt_plus")
    options = game.check_options(SEATS, {"variant": "plus"})
    state = game.setup(SEATS, 1, options)
    ctx = protocol.MatchContext("bench", "b0", "nimmt_plus", options, [f"b{i}" for i in range(SEATS)])
    body = protocol.act(ctx, 0, 0, DEADLINE_MS, game.view(state, 0), game.legal(state, 0))
    request = (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
        % (port, len(body), body)
    )
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    left = [requests]
    cpu0, t0 = time.process_time(), time.perf_counter()
    conns = [
        (await loop.create_connection(lambda: _FloorConn(request, left, done), "127.0.0.1", port))[0]
        for _ in range(in_flight)
    ]
    await done
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    for c in conns:
        c.close()
    n = requests - max(0, left[0])
    return {"requests_per_s": n / wall, "cpu_us_per_request": cpu / n * 1e6}


async def http_figures(port: int, matches: int, reps: int) -> tuple[dict[int, Any], dict[int, Any]]:
    """The referee's and the floor's medians at concurrency 8 and 128, repetitions interleaved."""
    url = f"http://127.0.0.1:{port}/"
    await referee_run(url, 8, 8)  # warm-up
    runs: dict[int, list[dict[str, float]]] = {8: [], 128: []}
    floors: dict[int, list[dict[str, float]]] = {8: [], 128: []}
    for _ in range(reps):
        for c in (8, 128):
            runs[c].append(await referee_run(url, c, max(matches, c)))
            floors[c].append(await floor_run(port, min(c * SEATS, 256), int(runs[c][-1]["decisions"])))
    referee, floor = {}, {}
    for c in (8, 128):
        referee[c] = {k: round(statistics.median(r[k] for r in runs[c]), 2) for k in runs[c][0]}
        floor[c] = {k: round(statistics.median(r[k] for r in floors[c]), 2) for k in floors[c][0]}
    return referee, floor


def print_http(referee: dict[int, Any], floor: dict[int, Any]) -> None:
    """The referee's figures beside the floor's and the targets."""
    targets = {8: (90, 3.0), 128: (110, 10.0)}
    for c in (8, 128):
        r, f = referee[c], floor[c]
        ratio = r["decisions_per_s"] / f["requests_per_s"]
        cpu_t, p50_t = targets[c]
        print(
            f"   concurrency {c:>3}: referee {r['decisions_per_s']:7.0f} decisions/s, CPU {r['cpu_us_per_decision']:6.1f}"
            f" µs/decision (target ≤ {cpu_t}), recorded p50 {r['p50_ms']:.2f} ms (target ≤ {p50_t}) p99"
            f" {r['p99_ms']:.2f} ms, past deadline {r['past_deadline']:.0f} (target 0), faults {r['faults']:.0f},"
            f" loop lag p50 {r['lag_p50_ms']} p99 {r['lag_p99_ms']} ms  ({r['decisions']:.0f} decisions)"
        )
        print(
            f"                    floor   {f['requests_per_s']:7.0f} requests/s, CPU {f['cpu_us_per_request']:6.1f}"
            f" µs/request ({min(c * SEATS, 256)} in flight); referee reaches {ratio:.2f} of the floor (target ≥ 0.40);"
            f" its CPU per decision is {r['cpu_us_per_decision'] / f['cpu_us_per_request']:.1f}× the floor's per"
            f" request (steadier than absolute figures on a loaded machine), {r['connections']:.0f} connections"
        )


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decisions", type=int, default=100_000, help="engine-only decisions per variant")
    ap.add_argument(
        "--matches",
        type=int,
        default=32,
        help="matches per referee figure at concurrency 8 (~240 decisions each; at 128, 128 matches)",
    )
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (medians are printed)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)

    figures: dict[str, Any] = {"engine": {}, "referee": {}, "floor": {}}
    print(f"1. engine only (nimmt_plus, {SEATS} players, random choices, no HTTP): CPU time")
    for variant in ("plus", "plus_dealt_zeros", "zeros_negative", "simple"):
        us, n = engine_only(variant, args.decisions)
        figures["engine"][variant] = {"cpu_us_per_decision": round(us, 1)}
        print(f"   {variant:<17} {us:7.1f} µs CPU/decision  ({n} decisions)")

    with fast_bot.running("first") as bot:
        print(
            f"2./3. referee vs floor (bots: one {bot.kind} server answering at once; {args.reps} interleaved reps, medians)"
        )
        figures["referee"], figures["floor"] = asyncio.run(http_figures(bot.port, args.matches, args.reps))
    print_http(figures["referee"], figures["floor"])
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
