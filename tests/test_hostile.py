"""Hostile bots (issue 7): whole tournaments against real misbehaving bot servers.

Each mode of ``tests/hostile/server.py`` takes one seat ("subject") in a small real
tournament run by the referee in this process: 6 nimmt! Plus, 3 seats, the subject and
three real sample bots (greedy, cautious, random), round robin (4 matches: 3 with the
subject, 1 without). The subject is a managed bot, a real process on a real socket.

Each run is compared with the same tournament (seed, bots, seats) played by
``tests/hostile/twin.py``, a well-behaved bot that plays exactly the referee's fallback
moves. The hostile server plays those same moves for its first ``AFTER`` decisions and
the referee plays them for every decision after, so every match must end exactly as with
the twin: the other bots must not notice anything but the time.

For every mode: the run finishes; every fault is on the subject, of the right kind and
phase, and at most ``MAX_FAULTS + 1`` act faults per match (then the seat is played by
fallback without being asked); every decision to the subject is settled within
``DEADLINE_MS + MARGIN_MS`` (timeouts no sooner than the deadline), and no match waits
on the subject for longer than that per fault (its time bank aside, which keeps a loaded
machine's pause from failing an honest bot); the scores and ranks equal the twin run's. The 20 MB reply also runs under ``tracemalloc``: the referee never holds it.

The modes whose faults wait out deadlines (``WAITING``), and the dying ones (restarted
after a backoff), race the deadline (serial) and have their tournaments played at once in
one event loop (the waiting ones together but ``refuse``, alone, then the dying ones):
their waits overlap, and each tournament is still judged alone by its own test. The other
modes fault at once: their tournaments (and the twin's) are played under ``HONEST_MS``, a
deadline no load reaches, in the parallel pass; the bounds above stay those
of ``DEADLINE_MS``, so a referee that waited for a fault that came at once still fails.
Dead bots are restarted after a short backoff (``BACKOFF_MS``): the restarts are the point,
not how long the referee waits before each.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import tracemalloc
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from referee.config.model import TournamentConfig
from referee.config.parse import load_config
from referee.record import ERROR, ILLEGAL, MALFORMED, TIMEOUT
from referee.report.publish import build_leaderboard
from referee.run.runner import JOURNAL, run_tournament
from referee.schedule.formats import schedule
from referee.schedule.settings import published
from referee.store.tournament_file import tournament_document
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
SERVER = str(ROOT / "tests" / "hostile" / "server.py")
TWIN = str(ROOT / "tests" / "hostile" / "twin.py")
NIMMT = ["python", "-m", "sample_bots.nimmt"]

SUBJECT = "subject"
DEADLINE_MS = 300
HONEST_MS = UNREACHABLE_DEADLINE_MS  # the deadline of a tournament whose bots never need it
# Generous on purpose: a loaded CI machine may fire the referee's timer seconds late. It
# still proves the deadline: the slow mode answers after SLOW_MS, the silent and trickling
# ones never, so a referee that waited for them would be far past it.
MARGIN_MS = 3000
SLOW_MS = 60_000
MAX_FAULTS = 2
# Honest bots (and the twin) answer in milliseconds, but a 300 ms deadline is within reach
# of a loaded machine's pause, and one honest fallback would change a match compared with
# the twin run. With a bank per seat per match, only a pause longer than the deadline and
# the whole bank faults; the subject's first timeout in a match spends its bank.
TIME_BANK_MS = 2000
BACKOFF_MS = 50  # first wait before a dead bot's restart (doubling each time)
AFTER = 4  # decisions the hostile bot plays well (over all matches) before misbehaving
MAX_RESPONSE_BYTES = 65536
MEMORY_HEADROOM = 4 * 1024 * 1024  # the 20 MB reply must stay far below this
SLACK_S = 5.0  # per match, on top of what its faults may cost: a loaded machine's jitter

ACT = frozenset({"act"})
TIMED_OUT = "no complete reply within"  # the deadline, or the deadline and the bank left
ANY_PHASE = frozenset({"start", "act", "end"})  # a dead or deaf bot also misses start and end


@dataclass(frozen=True)
class Mode:
    """What one hostile mode must cost its seat: the fault kind, a fragment of the
    fault detail ("" where the operating system words it), the phases it may hit;
    ``dies`` when the process exits (the referee may restart it)."""

    kind: str
    detail: str
    phases: frozenset[str]
    args: tuple[str, ...] = ()
    dies: bool = False
    also: tuple[str, ...] = ()  # another kind it may cost on a loaded machine (its own timeout)


MODES: dict[str, Mode] = {
    "slow": Mode(TIMEOUT, TIMED_OUT, ACT, ("--delay-ms", str(SLOW_MS))),
    "trickle": Mode(TIMEOUT, TIMED_OUT, ACT),
    "silent": Mode(TIMEOUT, TIMED_OUT, ACT),
    "close": Mode(ERROR, "", ACT),
    "chunks": Mode(ERROR, "more than 1024 chunks", ACT, also=(TIMEOUT,)),
    "informational": Mode(ERROR, "more than 8 informational (1xx) responses", ACT, also=(TIMEOUT,)),
    "refuse": Mode(ERROR, "", ANY_PHASE),
    "http500": Mode(ERROR, "HTTP 500", ACT),
    "redirect": Mode(ERROR, "HTTP 302 redirect (not followed)", ACT),
    "notjson": Mode(MALFORMED, "not JSON", ACT),
    "noaction": Mode(MALFORMED, "no 'action' field", ACT),
    "illegal": Mode(ILLEGAL, "is not in legal", ACT),
    "huge": Mode(MALFORMED, f"body over the cap of {MAX_RESPONSE_BYTES} bytes", ACT),
    "exit": Mode(ERROR, "", ANY_PHASE, dies=True),
    "hello_then_dies": Mode(ERROR, "", ANY_PHASE, dies=True),
}
LIVING = [m for m, spec in MODES.items() if not spec.dies]  # the dying ones have their own test
WAITING = [m for m in LIVING if MODES[m].kind == TIMEOUT or m == "refuse"]  # their faults wait out deadlines
# played at once; not ``refuse``: its bot must close a connection within the deadline, which
# the load of the other three tournaments made a timeout once (an error alone)
TOGETHER = [m for m in WAITING if m != "refuse"]


@dataclass(frozen=True)
class TwinRun:
    """The reference tournament: the seeds file both bots read and its journal by match id."""

    seeds: Path
    records: dict[str, dict[str, Any]]


def tournament(folder: Path, subject: list[str], deadline_ms: int = DEADLINE_MS) -> TournamentConfig:
    """The tournament with ``subject`` as bot 1 (seats 1, 1, 0 and one match without it)."""
    doc = {
        "tournament": {
            "name": "hostile",
            "game": "nimmt_plus",
            "seed": 11,
            "players": 3,
            "rounds": 1,
            "concurrency": 4,
            "output": str(folder / "out"),
        },
        "game": {"variant": "plus"},
        "limits": {
            "deadline_ms": deadline_ms,
            "on_fault": "fallback",
            "max_faults": MAX_FAULTS,
            "time_bank_ms": TIME_BANK_MS,
            "max_response_bytes": MAX_RESPONSE_BYTES,
            "restart_backoff_ms": BACKOFF_MS,
        },
        "bot": [
            {"name": "greedy", "command": NIMMT + ["greedy", "--port", "{port}"]},
            {"name": SUBJECT, "command": subject + ["--port", "{port}"]},
            {"name": "cautious", "command": NIMMT + ["cautious", "--port", "{port}"]},
            {"name": "random", "command": NIMMT + ["random", "--port", "{port}"]},
        ],
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hostile.toml"
    path.write_text(tomli_w.dumps(doc))
    return load_config(path)


async def played(config: TournamentConfig) -> dict[str, dict[str, Any]]:
    """Run the tournament in this process; its journal by match id, with each match's
    response times (the journal keeps none: taken from the sink's hook as matches end)."""
    latency: dict[str, list[list[float]]] = {}
    await run_tournament(config, before_write=[lambda f, rec: latency.__setitem__(rec.id, rec.latency_ms)])
    lines = (config.output / JOURNAL).read_text().splitlines()
    return {rec["id"]: {**rec, "latency_ms": latency[rec["id"]]} for rec in map(json.loads, lines)}


def play(config: TournamentConfig) -> dict[str, dict[str, Any]]:
    """``played`` in an event loop of its own."""
    return asyncio.run(played(config))


@pytest.fixture(scope="module")
def twin_run(tmp_path_factory: pytest.TempPathFactory) -> TwinRun:
    """The tournament with the twin in the subject's seat, played once for every mode."""
    folder = tmp_path_factory.mktemp("twin")
    seeds = folder / "seeds.json"
    config = tournament(folder, ["python", TWIN, "--seeds", str(seeds)], HONEST_MS)  # it is honest
    seeds.write_text(json.dumps({f.id: f.seed for f in schedule(config)}))
    records = play(config)
    assert all(rec["faults"] == [] for rec in records.values()), "the twin itself must be well behaved"
    return TwinRun(seeds, records)


def hostile_config(folder: Path, mode: str, twin: TwinRun, deadline_ms: int = DEADLINE_MS) -> TournamentConfig:
    """The twin's tournament with the hostile server in ``mode`` in the subject's seat."""
    command = ["python", SERVER, "--mode", mode, "--after", str(AFTER), "--seeds", str(twin.seeds), *MODES[mode].args]
    return tournament(folder, command, deadline_ms)


Run = tuple[TournamentConfig, dict[str, dict[str, Any]]]


def play_at_once(configs: dict[str, TournamentConfig]) -> dict[str, Run]:
    """Every tournament of ``configs`` played at once in one event loop, by key."""

    async def all_at_once() -> list[dict[str, dict[str, Any]]]:
        return list(await asyncio.gather(*(played(c) for c in configs.values())))

    threshold = gc.get_threshold()  # each run sets its own and puts back what it found: interleaved, not the first
    try:
        records = asyncio.run(all_at_once())
    finally:
        gc.set_threshold(*threshold)
    return {key: (configs[key], r) for key, r in zip(configs, records)}


@pytest.fixture(scope="module")
def waiting_runs(tmp_path_factory: pytest.TempPathFactory, twin_run: TwinRun) -> dict[str, Run]:
    """The tournaments of the ``TOGETHER`` modes, played at once (each mode's test judges its own)."""
    return play_at_once({m: hostile_config(tmp_path_factory.mktemp(m), m, twin_run) for m in TOGETHER})


@pytest.fixture(scope="module")
def dying_runs(tmp_path_factory: pytest.TempPathFactory, twin_run: TwinRun) -> dict[str, Run]:
    """The tournaments of the dying modes, and of ``exit`` with one restart allowed
    (``once``), played at once (each test judges its own)."""
    configs = {m: hostile_config(tmp_path_factory.mktemp(m), m, twin_run) for m in ("exit", "hello_then_dies")}
    exit_config = hostile_config(tmp_path_factory.mktemp("once"), "exit", twin_run)
    configs["once"] = replace(exit_config, limits=replace(exit_config.limits, max_restarts=1))
    return play_at_once(configs)


def check_run(
    mode: str, config: TournamentConfig, records: dict[str, dict[str, Any]], twin: TwinRun, traced: bool = False
) -> None:
    """Everything that must hold after a hostile run in ``mode`` (see the module docstring).
    ``traced``: the run was under tracemalloc, which slows the referee ~5x, so its match
    durations are not compared with the twin run's."""
    expected = MODES[mode]
    # 1. the run finished: every scheduled match is in the journal, with the twin run's seeds and seats
    assert sorted(records) == sorted(f.id for f in schedule(config)) == sorted(twin.records)
    for match_id, rec in records.items():
        ref = twin.records[match_id]
        assert (rec["seed"], rec["bots"]) == (ref["seed"], ref["bots"]), match_id
        # 2. every fault is on the subject, of this mode's kind, in a phase it can hit
        for fault in rec["faults"]:
            assert fault["bot"] == SUBJECT and rec["bots"][fault["seat"]] == SUBJECT, (match_id, fault)
            assert fault["kind"] in (expected.kind, *expected.also), (match_id, fault)
            assert fault["phase"] in expected.phases, (match_id, fault)
            if fault["kind"] == expected.kind:
                assert expected.detail in fault["detail"], (match_id, fault)
        act_faults = [f for f in rec["faults"] if f["phase"] == "act"]
        if SUBJECT in rec["bots"]:
            # every match outlives the subject's good decisions, so each one saw it misbehave,
            # and a hopeless seat stops being asked after MAX_FAULTS + 1 faults
            assert 1 <= len(act_faults) <= MAX_FAULTS + 1, (match_id, rec["faults"])
        else:
            assert rec["faults"] == [], match_id
        # 3. every decision to the subject settled within the deadline (and its bank) and a bounded margin
        for fault in rec["faults"]:
            assert fault["latency_ms"] <= DEADLINE_MS + TIME_BANK_MS + MARGIN_MS, (match_id, fault)
            if expected.kind == TIMEOUT:
                assert fault["latency_ms"] >= DEADLINE_MS, (match_id, fault)
        if SUBJECT in rec["bots"]:
            seat = rec["bots"].index(SUBJECT)
            assert max(rec["latency_ms"][seat], default=0.0) <= DEADLINE_MS + TIME_BANK_MS + MARGIN_MS, (
                match_id,
                rec["latency_ms"][seat],
            )
            # the bank is spent once per match, whatever the faults: a refused bot waited for
            # until its deadline and bank passed has no bank left for its next decision
            over_ms = sum(max(0.0, f["latency_ms"] - DEADLINE_MS) for f in act_faults)
            assert over_ms <= TIME_BANK_MS + MARGIN_MS, (match_id, rec["faults"])
        # ... and the match did not wait on the subject for longer than that either: the
        # time it lost against the twin run is at most a deadline and margin per fault
        # (and per decision the referee voided), and its bank once. Restarting a dead bot takes its backoff
        # on purpose, so the dying modes are exempt.
        if not expected.dies and not traced:
            lost_s = rec["duration_s"] - ref["duration_s"]
            allowed_s = (len(rec["faults"]) + rec.get("voided", 0)) * (DEADLINE_MS + MARGIN_MS) / 1000
            allowed_s += TIME_BANK_MS / 1000 + SLACK_S
            assert lost_s <= allowed_s, (match_id, f"lost {lost_s:.2f} s, allowed {allowed_s:.2f} s", rec["faults"])
        # 4. the same match as with a well-behaved fallback player in the subject's seat
        assert (rec["scores"], rec["ranks"]) == (ref["scores"], ref["ranks"]), match_id
    log = (config.output / "logs" / f"{SUBJECT}.log").read_text()
    assert f"hostile {mode}: hello" in log  # the server's request lines reach the bot's log


@pytest.mark.parametrize("mode", [pytest.param(m, marks=pytest.mark.serial) if m in WAITING else m for m in LIVING])
def test_a_hostile_bot_costs_only_itself(
    mode: str, tmp_path: Path, twin_run: TwinRun, request: pytest.FixtureRequest
) -> None:
    if mode in TOGETHER:
        runs: dict[str, Run] = request.getfixturevalue("waiting_runs")
        config, records = runs[mode]
    else:
        config = hostile_config(tmp_path, mode, twin_run, DEADLINE_MS if mode in WAITING else HONEST_MS)
        records = play(config)
    check_run(mode, config, records, twin_run)
    log = (config.output / "logs" / f"{SUBJECT}.log").read_text()
    assert f"misbehaves ({mode})" in log


def test_a_20_mb_reply_is_cut_off_and_never_buffered(tmp_path: Path, twin_run: TwinRun) -> None:
    config = hostile_config(tmp_path, "huge", twin_run, HONEST_MS)
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        records = play(config)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak - baseline < MEMORY_HEADROOM, (
        f"the referee's traced memory peaked {peak - baseline} bytes over its baseline"
    )
    check_run("huge", config, records, twin_run, traced=True)  # includes: every fault is malformed, naming the cap


@pytest.mark.serial
@pytest.mark.parametrize("mode", ["exit", "hello_then_dies"])
def test_a_bot_process_that_dies_costs_only_itself(mode: str, twin_run: TwinRun, dying_runs: dict[str, Run]) -> None:
    config, records = dying_runs[mode]
    check_run(mode, config, records, twin_run)
    log = (config.output / "logs" / f"{SUBJECT}.log").read_text()
    assert "exits with code 3" in log
    # It dies again after every restart: restarted max_restarts (3) times, with backoff,
    # then given up and played by fallback. Each restart is charged to exactly one match.
    restarts = [r for rec in records.values() for r in rec.get("restarts", [])]
    assert 1 <= sum(restarts) <= 3
    assert all(
        rec.get("restarts", [0] * 3)[s] == 0
        for rec in records.values()
        for s, bot in enumerate(rec["bots"])
        if bot != SUBJECT
    )
    attempts = len(re.findall(r"^--- restart [123]/3 after ", log, re.M))
    failed = len(re.findall(r"^--- restart [123]/3 failed", log, re.M))
    assert sum(restarts) == attempts - failed
    board = build_leaderboard(tournament_document(published(config), len(schedule(config))), records.values())
    row = next(r for r in board.document["standings"] if r["name"] == SUBJECT)
    assert row["restarts"] == sum(restarts)


@pytest.mark.serial
def test_a_bot_that_cannot_be_restarted_is_played_by_fallback(twin_run: TwinRun, dying_runs: dict[str, Run]) -> None:
    """One restart allowed: the bot dies again, is given up, and from then on every
    decision of its seat is the fallback's without a request (the results still equal
    the twin's); the other bots never notice."""
    config, records = dying_runs["once"]
    check_run("exit", config, records, twin_run)
    log = (config.output / "logs" / f"{SUBJECT}.log").read_text()
    assert "--- restart 1/1 after exit code 3" in log and "--- down after 1 restart(s)" in log
    assert sum(r for rec in records.values() for r in rec.get("restarts", [])) == 1
    down = [f for rec in records.values() for f in rec["faults"] if "down" in f["detail"]]
    assert down and all(f["latency_ms"] == 0.0 and f["bot"] == SUBJECT for f in down)


def _honest_p50(records: dict[str, dict[str, Any]]) -> float:
    """Median recorded response time of every decision of the bots other than the subject."""
    times = sorted(
        ms
        for rec in records.values()
        for seat, bot in enumerate(rec["bots"])
        if bot != SUBJECT
        for ms in rec["latency_ms"][seat]
    )
    return times[len(times) // 2]


@pytest.mark.serial
@pytest.mark.parametrize("mode", ["chunks", "informational"])
def test_a_bot_that_tries_to_stall_the_referee_slows_no_honest_bot(
    mode: str, tmp_path: Path, twin_run: TwinRun
) -> None:
    """A chunk trickler and a 1xx flooder beside honest bots: nothing is charged to the
    honest bots (check_run), no decision is voided (the stall is the bot's own), and the
    honest bots' median recorded time stays within a deadline of the twin run's (a stall the
    referee let through would cost them hundreds of ms; a tighter bound compared two moments
    of a loaded machine)."""
    config = hostile_config(tmp_path, mode, twin_run)
    records = play(config)
    check_run(mode, config, records, twin_run)
    assert sum(rec.get("voided", 0) for rec in records.values()) == 0
    honest, twin = _honest_p50(records), _honest_p50(twin_run.records)
    assert honest <= twin + DEADLINE_MS, (honest, twin)
