"""Benchmark: a tournament on 1, 2 and 4 worker processes (Dask) against one fast bot
server (``benchmarks.fast_bot``) that every worker reaches as URL bots, so the referee is
what is measured (``make bench-scale``, or ``python -m benchmarks.workers``).

For each number of workers it plays the same tournament through ``run_tournament`` (the
production path, journal and all) and prints decisions/s (from the bots being ready to the
last journal line), the referee's CPU per decision (head and workers; not the bots') and
the head's own CPU per match (journal, Dask scheduler, worker nannies). It projects 16 and
64 cores from those: workers scale with cores until the head's cost per match fills its
one core. The control row plays the same matches as two separate one-process tournaments
at once, no Dask: the ceiling 2 workers are measured against.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import pickle
import statistics
import time
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from benchmarks import fast_bot
from referee.config.parse import parse_config
from referee.run.runner import run_tournament
from referee.store.journal import JOURNAL


def measure(cfg: Any) -> dict[str, float]:
    """Play ``cfg``; decisions/s, referee CPU µs per decision, head CPU µs per match."""
    ready: dict[str, float] = {}

    def on_ready(_statuses: Any) -> None:
        ready["t"], ready["cpu"] = time.perf_counter(), time.process_time()

    report = asyncio.run(run_tournament(cfg, on_ready=on_ready))
    wall = time.perf_counter() - ready["t"]
    head_cpu = time.process_time() - ready["cpu"]
    decisions = matches = 0
    for line in (cfg.output / JOURNAL).read_text().splitlines():
        decisions += sum(json.loads(line)["decisions"])
        matches += 1
    referee_cpu = head_cpu + float(report.lag.get("worker_cpu_s", 0.0))
    return {
        "workers": cfg.workers,
        "matches": matches,
        "decisions": decisions,
        "decisions_per_s": decisions / wall,
        "referee_cpu_us_per_decision": referee_cpu / decisions * 1e6,
        "worker_cpu_us_per_decision": float(report.lag.get("worker_cpu_s", head_cpu)) / decisions * 1e6,
        "head_cpu_us_per_match": head_cpu / matches * 1e6,
        "head_cpu_us_per_decision": head_cpu / decisions * 1e6,
        "head_record_us_per_match": float(report.lag.get("head_record_cpu_s", 0.0)) / matches * 1e6,
    }


async def _flood(topic: str, n: int) -> int:
    """On a worker: ship ``n`` empty record events on ``topic``, one by one."""
    from distributed import get_worker

    worker = get_worker()
    empty = pickle.dumps([])
    for i in range(n):
        worker.log_event(topic, empty)
        if i % 100 == 99:
            await asyncio.sleep(0)  # let the batched stream go
    return n


async def head_costs(cfg: Any, seconds: float, messages: int) -> tuple[float, float]:
    """With ``cfg.workers`` workers: the head's CPU share with no match at all (heartbeats,
    the scheduler, the nannies), and its CPU µs per record event the workers ship (the
    scheduler's forwarding and the head's handler)."""
    from referee.run.cluster import DaskExecutor

    async with DaskExecutor(cfg) as ex:
        assert ex.client is not None
        topic = ex.topic
        got = [0]

        def arrived(event: Any) -> None:
            got[0] += isinstance(event[1], bytes)  # not the scheduler's own events about the client

        ex.client.subscribe_topic(topic, arrived)
        cpu0, t0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        idle = (time.process_time() - cpu0) / (time.perf_counter() - t0)
        workers = list(await ex.client.nthreads())
        each = messages // len(workers)
        cpu0, t0 = time.process_time(), time.perf_counter()
        futures = [ex.client.submit(_flood, topic, each, workers=[w], pure=False) for w in workers]
        await ex.client.gather(futures)
        deadline = time.monotonic() + 60
        while got[0] < each * len(workers) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return idle, (time.process_time() - cpu0) / max(1, got[0]) * 1e6  # gross: the heartbeats etc. included


def print_projection(head: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Project 16 and 64 cores from the measured CPU per decision and the head's cost per match."""
    per_decision = min(r["worker_cpu_us_per_decision"] for r in rows if r["workers"] > 1)
    per_match = head["decisions"] / head["matches"]
    ceiling = (1 - head["head_idle_cpu_share"]) * 1e6 / head["head_marginal_us_per_match"] * per_match
    print(
        f"projection (bots on other machines, one core for the head): workers {per_decision:.0f} µs/decision; "
        f"the head saturates at ~{ceiling:,.0f} decisions/s ({per_match:.0f} decisions a match)"
    )
    for cores in (16, 64):
        by_workers = (cores - 1) * 1e6 / per_decision
        print(
            f"   {cores} cores: ~{min(by_workers, ceiling):,.0f} decisions/s "
            f"({'limited by the head' if ceiling < by_workers else 'limited by the workers'}; "
            f"workers alone {by_workers:,.0f})"
        )


def _measure_child(doc: dict[str, Any], output: str, out: Any) -> None:
    """In a process of its own: ``measure`` a one-process tournament, its figures to ``out``."""
    out.put(measure(replace(parse_config(doc, Path("bench-scale.toml"), {}), output=Path(output))))


def separate_processes(doc: dict[str, Any], tmp: Path, matches: int, n: int = 2) -> dict[str, float]:
    """``n`` one-process tournaments of ``matches // n`` matches each, at the same time,
    no Dask: their decisions/s summed and their CPU per decision (the control)."""
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter, as a Dask worker's
    out = ctx.Queue()
    part = {**doc, "tournament": {**doc["tournament"], "matches": matches // n}}
    procs = [ctx.Process(target=_measure_child, args=(part, str(tmp / f"sep{i}"), out)) for i in range(n)]
    for p in procs:
        p.start()
    rows = [out.get(timeout=1800) for _ in procs]
    for p in procs:
        p.join()
    decisions = sum(r["decisions"] for r in rows)
    return {
        "decisions_per_s": sum(r["decisions_per_s"] for r in rows),
        "referee_cpu_us_per_decision": sum(r["referee_cpu_us_per_decision"] * r["decisions"] for r in rows) / decisions,
        "decisions": decisions,
    }


def _median_row(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over the repetitions of one configuration."""
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def bench_config(matches: int, concurrency: int, port: int) -> dict[str, Any]:
    """The tournament every configuration plays: 4 URL bots on the one fast bot server."""
    return {
        "tournament": {
            "name": "bench-scale",
            "game": "nimmt_plus",
            "players": 4,
            "format": "random",
            "matches": matches,
            "concurrency": concurrency,
        },
        "limits": {"deadline_ms": 5000},
        "bot": [{"name": f"fast{i}", "url": f"http://127.0.0.1:{port}/"} for i in range(4)],
    }


def interleaved_runs(args: argparse.Namespace, doc: dict[str, Any], tmp: Path) -> dict[str, list[dict[str, float]]]:
    """Every worker count (and the control) once per repetition, so a slow spell of the
    machine hits every configuration; each repetition's ratios printed as it ends."""
    runs: dict[str, list[dict[str, float]]] = {}
    base = parse_config(doc, Path("bench-scale.toml"), {})
    for rep in range(args.reps):
        for w in args.workers:
            runs.setdefault(f"w{w}", []).append(measure(replace(base, workers=w, output=tmp / f"r{rep}w{w}")))
        if 2 in args.workers:
            runs.setdefault("control", []).append(separate_processes(doc, tmp / f"r{rep}", args.matches))
        r1, r2, rc = (runs.get(k, [{}])[-1] for k in ("w1", "w2", "control"))
        if r1 and r2 and rc:
            print(
                f"   repetition {rep + 1}: 2 workers {r2['decisions_per_s'] / r1['decisions_per_s']:.2f}x one, "
                f"2 separate processes {rc['decisions_per_s'] / r1['decisions_per_s']:.2f}x"
            )
    return runs


def print_rows(rows: list[dict[str, Any]], control: dict[str, float] | None) -> None:
    """One line per worker count, then the control's."""
    for r in rows:
        print(
            f"workers {r['workers']:.0f}: {r['decisions_per_s']:8.0f} decisions/s  referee CPU "
            f"{r['referee_cpu_us_per_decision']:6.1f} µs/decision (workers {r['worker_cpu_us_per_decision']:6.1f})"
            f"  head {r['head_cpu_us_per_match']:7.0f} µs/match ({r['head_cpu_us_per_decision']:5.1f} µs/decision)"
            f"  [{r['decisions']:.0f} decisions]"
        )
    if control is not None:
        print(
            f"control, 2 separate one-process tournaments at once (no Dask): {control['decisions_per_s']:8.0f}"
            f" decisions/s  referee CPU {control['referee_cpu_us_per_decision']:6.1f} µs/decision"
        )


def measure_head(biggest: dict[str, Any], doc: dict[str, Any], tmp: Path) -> None:
    """Add the head's idle share and per-message cost at the most workers to ``biggest``; print them."""
    cfg = replace(parse_config(doc, Path("bench-scale.toml"), {}), workers=int(biggest["workers"]), output=tmp / "idle")
    idle, per_message = asyncio.run(head_costs(cfg, 5.0, 4000))
    biggest["head_idle_cpu_share"] = idle
    biggest["head_us_per_message"] = per_message
    biggest["head_marginal_us_per_match"] = biggest["head_record_us_per_match"] + per_message
    print(
        f"head at {biggest['workers']:.0f} workers: {idle:.1%} of a core with no match at all (heartbeats, "
        f"scheduler, nannies); per match on top {biggest['head_marginal_us_per_match']:.0f} µs: "
        f"the record (unpickle, judge, journal line) {biggest['head_record_us_per_match']:.0f} µs, "
        f"its event (scheduler and handler) {per_message:.0f} µs at most (one message may carry several)"
    )


def print_scaling(rows: list[dict[str, Any]], control: dict[str, float] | None) -> None:
    """2 workers against one and against the control; the projection when the head was measured."""
    one = next((r for r in rows if r["workers"] == 1), None)
    two = next((r for r in rows if r["workers"] == 2), None)
    if one and two:
        print(
            f"2 workers reach {two['decisions_per_s'] / one['decisions_per_s']:.2f}x the decisions/s of one (target ≥ 1.3)"
        )
        if control is not None:
            print(
                f"2 separate processes without Dask reach {control['decisions_per_s'] / one['decisions_per_s']:.2f}x:"
                f" 2 workers reach {two['decisions_per_s'] / control['decisions_per_s']:.2f} of what this machine gives"
                " two referee processes beside the bots"
            )
    multi = [r for r in rows if "head_marginal_us_per_match" in r]
    if multi:
        print_projection(multi[0], rows)


def main(argv: list[str] | None = None) -> None:
    """Run the scaling benchmark and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=240, help="matches per run")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="worker counts to measure")
    ap.add_argument("--concurrency", type=int, default=16, help="matches in flight per worker")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (medians are printed)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)
    with TemporaryDirectory() as tmp, fast_bot.running("first") as bot:
        doc = bench_config(args.matches, args.concurrency, bot.port)
        print(
            f"nimmt_plus, 4 players, {args.matches} matches, 4 bots answering the first legal action "
            f"(one {bot.kind} server, reached by every worker), concurrency {args.concurrency} per worker; "
            f"{args.reps} interleaved repetitions, medians"
        )
        runs = interleaved_runs(args, doc, Path(tmp))
        rows = [_median_row(runs[f"w{w}"]) for w in args.workers]
        control = _median_row(runs["control"]) if "control" in runs else None
        print_rows(rows, control)
        biggest = max(rows, key=lambda r: r["workers"])
        if biggest["workers"] > 1:
            measure_head(biggest, doc, Path(tmp))
    print_scaling(rows, control)
    if args.json:
        print(json.dumps({"rows": rows, "control": control, "runs": runs}))


if __name__ == "__main__":
    main()
