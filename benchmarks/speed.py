"""Benchmark: how fast the referee is on this machine, next to a limit it cannot beat
(``make bench``, or ``python -m benchmarks.speed``). It prints:

1. engine only: µs of CPU per decision (view + legal + apply, random choices, no HTTP)
   for every 6 nimmt! Plus variant;
2. the referee against the limit, at concurrency 8 and 128. The referee: real matches
   (6 nimmt! Plus, 4 seats) through ``play_match``, the lean pool and the pacer, against
   one fast bot server (``benchmarks.fast_bot``, answering the first legal action). The
   limit: the same matches (same seeds, same moves) played by the least a referee must do
   in one loop (``_LimitMatch``: the game's view, legal list and apply, one bare keep-alive
   exchange per seat with a prebuilt ``act``, no encoding, no check), against the same
   server. Its two parts are also measured apart (the engine on the same games and moves;
   the bare exchange), which adds less than the loop: interleaved, each costs more. CPU µs
   per decision as the median (min–max) of interleaved repetitions, and the ratio;
3. a whole run: ``referee run`` in a process of its own at concurrency 8 (start-up,
   readiness, journal, transcripts and publishing included), CPU µs per decision.

Everything runs on the loop ``referee run`` uses (``bots/client/eventloop.py``: uvloop
where installed; ``REFEREE_EVENT_LOOP=asyncio`` for asyncio's own).

Targets are printed beside the figures, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, cast

from benchmarks import fast_bot
from referee.bots.client import eventloop, protocol, wire
from referee.bots.client.pool import LeanPool
from referee.bots.control import BotRuntime, Pacer
from referee.config.parse import parse_config
from referee.games import get_game
from referee.match.play import play_match
from referee.run.local import play_gc
from referee.schedule.formats import derive_seed

SEATS = 4
DEADLINE_MS = 1000


def bench_seeds(matches: int) -> list[int]:
    """The deal seeds of the bench's matches (``referee_run`` plays match ``i`` from ``derive_seed(7, i)``)."""
    return [derive_seed(7, i) for i in range(matches)]


def engine_only(
    variant: str, decisions: int, policy: str = "random", seeds: list[int] | None = None
) -> tuple[float, int]:
    """CPU µs per decision (view + legal + apply, no HTTP) over at least ``decisions``
    decisions. ``policy`` ``first`` plays the first legal action, as the bench's bot does;
    with ``seeds`` the matches are dealt from them in turn (the bench's own games), else
    from 0, 1, 2, ..."""
    game = get_game("nimmt_plus")
    options = game.check_options(SEATS, {"variant": variant})
    rng = random.Random(1)
    first = policy == "first"
    done = matches = 0
    cpu0 = time.process_time()
    while done < decisions:
        state = game.setup(SEATS, seeds[matches % len(seeds)] if seeds else matches, options)
        while not game.is_over(state):
            turn = []  # as a match: every seat to act sees the position, then the actions are applied
            for s in game.to_act(state):
                game.view(state, s)
                legal = game.legal(state, s)
                turn.append((s, legal[0] if first else legal[rng.randrange(len(legal))]))
            for s, action in turn:
                state = game.apply(state, s, action)
            done += len(turn)
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
        "pacer_limit": lag.get("final_limit", 0),
        "decisions": len(latencies),
        "connections": sum(lean.opened.values()),
    }


def _act_request(port: int) -> bytes:
    """One real ``act`` request (the first decision of a match), prebuilt once."""
    game = get_game("nimmt_plus")
    options = game.check_options(SEATS, {"variant": "plus"})
    state = game.setup(SEATS, 1, options)
    ctx = protocol.MatchContext("bench", "b0", "nimmt_plus", options, [f"b{i}" for i in range(SEATS)])
    body = protocol.act(ctx, 0, 0, DEADLINE_MS, game.view(state, 0), game.legal(state, 0))
    return (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
        % (port, len(body), body)
    )


class _FloorConn(asyncio.Protocol):
    """One keep-alive connection sending the same request as soon as a reply is in."""

    def __init__(self, request: bytes, left: list[int], done: asyncio.Future[None]) -> None:
        self.request, self.left, self.done = request, left, done
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is one, unregistered with the ABC
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        end = _reply_end(self.buf)
        if end < 0:
            return
        self.buf = self.buf[end:]
        self.left[0] -= 1
        if self.left[0] > 0:
            assert self.transport is not None
            self.transport.write(self.request)
        elif not self.done.done():
            self.done.set_result(None)


async def floor_run(port: int, in_flight: int, requests: int) -> dict[str, float]:
    """Requests/s and CPU µs per request of the minimal client with ``in_flight`` connections."""
    request = _act_request(port)
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


def _reply_end(buf: bytes) -> int:
    """Where the first complete HTTP reply in ``buf`` ends (-1: not complete yet)."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return -1
    i = buf.lower().find(b"content-length:", 0, end)
    length = int(buf[i + 15 : buf.find(b"\r\n", i)])
    return end + 4 + length if len(buf) >= end + 4 + length else -1


class _LimitSeat(asyncio.Protocol):
    """One seat's keep-alive connection in ``limit_run``: a complete reply is handed to its match."""

    def __init__(self, match: _LimitMatch, seat: int) -> None:
        self.match, self.seat = match, seat
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is one, unregistered with the ABC

    def data_received(self, data: bytes) -> None:
        self.buf += data
        end = _reply_end(self.buf)
        if end >= 0:
            self.buf = self.buf[end:]
            self.match.answered()


class _LimitMatch:
    """The least a referee must do, as callbacks: deal, and each turn the game's view and
    legal list for every seat to act, one bare exchange per seat (a prebuilt ``act``: no
    encoding, no parsing, no check), then the first legal action applied for each, as the
    bench's bot plays it; the next match when one ends, until ``seeds`` run out."""

    def __init__(self, game: Any, options: Any, seeds: list[int], request: bytes, done: asyncio.Future[None]) -> None:
        self.game, self.options, self.seeds, self.request, self.done = game, options, seeds, request, done
        self.seats: list[_LimitSeat] = []
        self.state: Any = None
        self.turn: list[tuple[int, Any]] = []
        self.waiting = 0
        self.decisions = 0

    def next_match(self) -> None:
        """Deal the next match, or end when none is left."""
        if not self.seeds:
            if not self.done.done():
                self.done.set_result(None)
            return
        self.state = self.game.setup(SEATS, self.seeds.pop(), self.options)
        self.ask()

    def ask(self) -> None:
        """Send every seat to act its request (the match's result when it is over)."""
        game, state = self.game, self.state
        if game.is_over(state):
            game.result(state)
            self.next_match()
            return
        self.turn = []
        for s in game.to_act(state):
            game.view(state, s)
            self.turn.append((s, game.legal(state, s)[0]))
            transport = self.seats[s].transport
            assert transport is not None
            transport.write(self.request)
        self.waiting = len(self.turn)

    def answered(self) -> None:
        """A reply is in; once all of the turn's are, its actions are applied."""
        self.waiting -= 1
        if self.waiting:
            return
        for s, action in self.turn:
            self.state = self.game.apply(self.state, s, action)
        self.decisions += len(self.turn)
        self.ask()


async def limit_run(port: int, concurrency: int, matches: int) -> dict[str, float]:
    """CPU µs per decision of ``_LimitMatch``: ``matches`` matches dealt from the bench's
    seeds, ``concurrency`` at a time, one connection per seat, against the same bot."""
    game = get_game("nimmt_plus")
    options = game.check_options(SEATS, {"variant": "plus"})
    request = _act_request(port)
    loop = asyncio.get_running_loop()
    seeds = bench_seeds(matches)
    shares = [seeds[k::concurrency] for k in range(concurrency)]  # each runner plays its share in turn
    runners = []
    for share in shares:
        m = _LimitMatch(game, options, share[::-1], request, loop.create_future())
        for s in range(SEATS):
            m.seats.append((await loop.create_connection(functools.partial(_LimitSeat, m, s), "127.0.0.1", port))[1])
        runners.append(m)
    cpu0, t0 = time.process_time(), time.perf_counter()
    with play_gc():  # as the referee's matches
        for m in runners:
            m.next_match()
        await asyncio.gather(*(m.done for m in runners))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    for m in runners:
        for seat in m.seats:
            if seat.transport is not None:
                seat.transport.close()
    n = sum(m.decisions for m in runners)
    return {"decisions_per_s": n / wall, "cpu_us_per_decision": cpu / n * 1e6, "decisions": n}


def whole_run(port: int, concurrency: int, matches: int, tmp: Path) -> dict[str, float]:
    """``referee run`` in a process of its own (start-up, readiness, journal, transcripts and
    publishing included) on ``matches`` matches against the bot as 4 URL bots: its CPU
    µs per decision, from the interpreter's start to its exit."""
    out = tmp / f"run{len(list(tmp.iterdir()))}"
    config = tmp / f"{out.name}.toml"
    bots = "".join(f'[[bot]]\nname = "b{i}"\nurl = "http://127.0.0.1:{port}/"\n' for i in range(SEATS))
    config.write_text(
        f'[tournament]\nname = "bench"\ngame = "nimmt_plus"\nplayers = {SEATS}\nformat = "random"\n'
        f'matches = {matches}\nconcurrency = {concurrency}\nseed = 7\n[game]\nvariant = "plus"\n'
        f"[limits]\ndeadline_ms = {DEADLINE_MS}\n{bots}"
    )
    referee = Path(sys.executable).with_name("referee")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(referee), "run", str(config), "--output", str(out), "--quiet"], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    decisions = sum(sum(json.loads(line)["decisions"]) for line in (out / "matches.jsonl").read_text().splitlines())
    return {"cpu_us_per_decision": cpu / decisions * 1e6, "decisions": decisions}


def _spread(runs: list[dict[str, float]]) -> dict[str, Any]:
    """Each figure's median over the repetitions, with the CPU figure's min and max."""
    out: dict[str, Any] = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0]}
    for key in ("cpu_us_per_decision", "cpu_us_per_request"):
        if key in runs[0]:
            out[f"{key}_min"] = round(min(r[key] for r in runs), 2)
            out[f"{key}_max"] = round(max(r[key] for r in runs), 2)
    return out


async def http_figures(port: int, matches: int, reps: int, run_matches: int, tmp: Path) -> dict[str, Any]:
    """At concurrency 8 and 128, repetitions interleaved (each one right after the other,
    so a busy spell of the machine hits them alike): the referee, the limit, and its two
    parts measured apart (the engine on the same games and moves, the bare exchange); and
    a whole run per repetition."""
    url = f"http://127.0.0.1:{port}/"
    await referee_run(url, 8, 8)  # warm-up
    await limit_run(port, 8, 8)
    kinds = ("referee", "limit", "engine", "exchange")
    runs: dict[str, dict[int, list[dict[str, float]]]] = {k: {8: [], 128: []} for k in kinds}
    whole: list[dict[str, float]] = []
    for _ in range(reps):
        for c in (8, 128):
            n = max(matches, c)
            runs["referee"][c].append(await referee_run(url, c, n))
            runs["limit"][c].append(await limit_run(port, c, n))
            us, done = engine_only("plus", int(runs["referee"][c][-1]["decisions"]), "first", bench_seeds(n))
            runs["engine"][c].append({"cpu_us_per_decision": us, "decisions": done})
            runs["exchange"][c].append(
                await floor_run(port, min(c * SEATS, 256), int(runs["referee"][c][-1]["decisions"]))
            )
        whole.append(whole_run(port, 8, run_matches, tmp))  # blocks the loop: nothing else is in play
    out: dict[str, Any] = {k: {c: _spread(runs[k][c]) for c in (8, 128)} for k in kinds}
    out["whole_run"] = _spread(whole)
    return out


def _cpu(f: dict[str, Any], key: str = "cpu_us_per_decision") -> str:
    """A CPU figure: median (min–max)."""
    return f"{f[key]:6.1f} µs ({f[key + '_min']:.1f}–{f[key + '_max']:.1f})"


def print_http(figures: dict[str, Any]) -> None:
    """Per concurrency: the referee, the limit and the ratio; the limit's parts; the referee's other figures."""
    for c in (8, 128):
        r, lim, eng, ex = (figures[k][c] for k in ("referee", "limit", "engine", "exchange"))
        ratio = r["cpu_us_per_decision"] / lim["cpu_us_per_decision"]
        print(f"   concurrency {c:>3}: referee {_cpu(r)}  limit {_cpu(lim)}  ratio {ratio:.2f}× (target ≤ 2, then 1.5)")
        parts = eng["cpu_us_per_decision"] + ex["cpu_us_per_request"]
        print(
            f"                    the limit's parts measured apart: engine {_cpu(eng)} + bare exchange"
            f" {_cpu(ex, 'cpu_us_per_request')} ({min(c * SEATS, 256)} in flight) = {parts:.1f} µs"
        )
        print(
            f"                    referee {r['decisions_per_s']:7.0f} decisions/s (limit {lim['decisions_per_s']:.0f}),"
            f" recorded p50 {r['p50_ms']:.2f} ms p99 {r['p99_ms']:.2f} ms, past deadline {r['past_deadline']:.0f},"
            f" faults {r['faults']:.0f}, loop lag p50 {r['lag_p50_ms']} p99 {r['lag_p99_ms']} ms (pacer's limit"
            f" {r['pacer_limit']:.0f} in flight),"
            f" {r['decisions']:.0f} decisions, {r['connections']:.0f} connections"
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
    ap.add_argument("--run-matches", type=int, default=200, help="matches of each whole run (concurrency 8)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (medians are printed)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)

    figures: dict[str, Any] = {"engine_random": {}}
    print(f"1. engine only (nimmt_plus, {SEATS} players, random choices, no HTTP): CPU time")
    for variant in ("plus", "plus_dealt_zeros", "zeros_negative", "simple"):
        us, n = engine_only(variant, args.decisions)
        figures["engine_random"][variant] = {"cpu_us_per_decision": round(us, 1)}
        print(f"   {variant:<17} {us:7.1f} µs CPU/decision  ({n} decisions)")

    with fast_bot.running("first") as bot, TemporaryDirectory() as tmp:
        print(
            f"2. referee against the limit on {eventloop.name()}'s loop (bots: one {bot.kind} server answering the"
            f" first legal action at once; {args.reps} interleaved reps, CPU per decision as median (min–max))"
        )
        figures.update(eventloop.run(http_figures(bot.port, args.matches, args.reps, args.run_matches, Path(tmp))))
    print_http(figures)
    whole = figures["whole_run"]
    print(
        f"3. whole run (referee run, {args.run_matches} matches at concurrency 8, start-up and publishing included):"
        f" {_cpu(whole)} per decision (target ≤ 62), {whole['decisions']:.0f} decisions"
    )
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
