"""Matches fanned out over Dask: a real ``dask scheduler`` and ``dask worker`` processes
over TCP on 127.0.0.1, real ``referee run`` processes, real bot processes (managed ones
started on every worker, a URL bot reached from every worker). The outputs equal those
of ``workers = 1``; a worker killed with SIGKILL mid-run costs nothing but time; a head
killed with SIGKILL is resumed with another number of workers."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.bots.cage.process import free_port
from referee.config.parse import parse_config
from referee.run.cluster import BATCH, _batches
from referee.run.dq import DQ_LAG, DqJudge
from referee.schedule.formats import schedule
from tests.support.cli import ROOT, here, run_here, start
from tests.support.cluster import (
    DASK,
    assert_same_outputs,
    config_text,
    indices,
    run,
    serve_url_bot,
    stop_process,
)
from tests.support.tournament import (
    assert_nothing_listens,
    bot_ports,
    journal,
    kill9_after,
    lines,
    wait_port,
)

pytestmark = pytest.mark.parallel

# A SIGKILLed worker's leases (max_concurrent) come back after 1 s instead of 30. Every
# process of the run needs it: the head makes the leases (with its timeout), the workers
# refresh them (every fifth of theirs) and the scheduler expires them. The scheduler may
# grant a freed lease to an acquire the dead worker left waiting, so it expires once per
# match the worker had in flight.
LEASES = {
    "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT": "1s",
    "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_VALIDATION_INTERVAL": "200ms",
}
ROUNDS = 2  # 10 tables x 2 = 20 matches


@pytest.fixture(scope="module")
def one_process(url_bot: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The tournament file of these tests and its output played by one process: what
    every run on workers must give."""
    tmp = tmp_path_factory.mktemp("dist")
    config = tmp / "dist.toml"
    config.write_text(config_text(tmp / "one", url_bot, rounds=ROUNDS))
    run_here(config, tmp / "one")
    return config, tmp / "one"


@pytest.fixture(scope="module")
def url_bot() -> Iterator[str]:
    with serve_url_bot() as url:
        yield url


class Cluster:
    """``dask scheduler`` and ``dask worker`` processes on 127.0.0.1 (free ports)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: list[subprocess.Popen[bytes]] = []

    def start(self, workers: int) -> None:
        sched = self._spawn(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard"], "scheduler"
        )
        wait_port(self.port, sched)
        for i in range(workers):
            # no nanny: the worker is this very process, so SIGKILL ends it for good
            w = self._spawn(
                [DASK, "worker", self.address, "--nthreads", "2", "--no-nanny", "--no-dashboard", "--name", f"w{i}"]
                + ["--host", "127.0.0.1", "--local-directory", str(self.tmp / f"w{i}")],
                f"worker{i}",
            )
            self.workers.append(w)

    def _spawn(self, argv: list[str], name: str) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        env = dict(os.environ, **LEASES)
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        log.close()
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for p in reversed(self.procs):
            stop_process(p)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path)
    try:
        c.start(2)
        yield c
    finally:
        c.stop()


def test_a_real_cluster_gives_the_outputs_of_one_process_even_when_a_worker_is_killed(
    tmp_path: Path, cluster: Cluster, one_process: tuple[Path, Path]
) -> None:
    """The whole tournament on the cluster, one worker SIGKILLed once a few matches are in
    the journal: every worker started its own bots, each match is played once, the outputs
    are those of one process (nothing charged to a bot, nothing lost), and no bot is left."""
    config, one = one_process
    total = lines(one)
    killed = tmp_path / "killed"
    head = start("run", str(config), "--output", str(killed), "-q", "--cluster", cluster.address, env=LEASES)
    try:
        deadline = time.monotonic() + 180
        while lines(killed) < 4:
            assert head.poll() is None, head.communicate()
            assert time.monotonic() < deadline, "the journal did not grow"
            time.sleep(0.01)
        os.kill(cluster.workers[0].pid, signal.SIGKILL)
        _, err = head.communicate(timeout=240)
    finally:
        stop_process(head)
    assert head.returncode == 0, err[-3000:]
    assert lines(killed) == total and sorted(indices(killed)) == list(range(total))  # each match once
    assert_same_outputs(one, killed)
    worker_logs = sorted(p.parent.name for p in (killed / "logs").rglob("greedy.log"))
    assert worker_logs == ["worker-w0", "worker-w1"]  # each worker started its own copy
    dead_worker_ports = bot_ports(killed / "logs" / "worker-w0")
    assert dead_worker_ports, "the killed worker had started its bots"
    assert_nothing_listens(dead_worker_ports)  # its bots died with it (the guard)
    assert_nothing_listens(bot_ports(killed / "logs"))  # the run's end stopped the others on the live worker


def test_local_workers_equal_one_process_and_a_killed_head_resumes_with_other_workers(
    tmp_path: Path, one_process: tuple[Path, Path]
) -> None:
    config, one = one_process
    total = lines(one)
    two = tmp_path / "two"
    done = run(config, two, "--workers", "2")
    assert_same_outputs(one, two)
    # a clean run says nothing from Dask's insides: no traceback, no CRITICAL log at shutdown
    assert "Traceback" not in done.stderr and "CRITICAL" not in done.stderr, done.stderr[-3000:]

    cut = tmp_path / "cut"
    head = start("run", str(config), "--output", str(cut), "-q", "--workers", "2")
    try:
        first = kill9_after(head, cut, 3, timeout_s=180)
    finally:
        stop_process(head)
    assert first < total
    assert_nothing_listens(bot_ports(cut / "logs"))  # workers and their bots died with the head
    run_here(config, cut, "--resume", "--workers", "1")
    assert sorted(indices(cut)) == list(range(total))
    assert_same_outputs(one, cut)


def test_max_concurrent_holds_across_workers(tmp_path: Path, steady: Any) -> None:
    """A bot that takes one request at a time (``max_concurrent = 1``), reached by URL from
    two workers each playing several matches at once: it never has two requests in
    flight (each request holds the bot's one lease, kept by the scheduler), so it never
    refuses one and nobody is charged a fault."""
    solo, others = steady("--delay-ms", "5", "--exclusive"), steady("--delay-ms", "2")
    doc = [
        "[tournament]",
        'name = "lease"',
        'game = "nimmt_plus"',
        "players = 2",
        'format = "random"',
        "matches = 8",
        "concurrency = 4",
        f'output = "{tmp_path / "out"}"',
        "[limits]",
        "deadline_ms = 30000",
        "[[bot]]",
        'name = "solo"',
        f'url = "{solo.url}"',
        "max_concurrent = 1",
    ] + [line for n in ("x", "y") for line in ("[[bot]]", f'name = "{n}"', f'url = "{others.url}"')]
    config = tmp_path / "lease.toml"
    config.write_text("\n".join(doc) + "\n")
    run_here(config, tmp_path / "out", "--workers", "2")
    recs = journal(tmp_path / "out")
    assert len(recs) == 8 and [f for r in recs for f in r["faults"]] == []
    stats = solo.stats()
    assert stats["acts"] > 0 and stats["max_in_flight"] == 1 and stats["refused"] == 0, stats


def test_workers_and_cluster_are_checked_before_anything_starts(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(config_text(tmp_path / "x", "http://127.0.0.1:9/", rounds=1, extra="workers = 0"))
    bad = here("run", str(config))
    assert bad.returncode == 2 and "tournament.workers: must be at least 1" in bad.stderr
    config.write_text(config_text(tmp_path / "x", "http://127.0.0.1:9/", rounds=1) + '[cluster]\naddress = "nope"\n')
    bad = here("run", str(config))
    assert bad.returncode == 2 and "cluster.address" in bad.stderr and "Traceback" not in bad.stderr
    # a scheduler nobody listens at: test_cluster_tls (it waits out the connect timeout once for both)


def _cfg(rate: float, min_decisions: int = 10) -> Any:
    doc = {
        "tournament": {"name": "dq", "game": "nimmt_plus", "players": 3, "rounds": 150},
        "limits": {"max_fault_rate": rate, "fault_rate_min_decisions": min_decisions},
        "bot": [{"name": n, "url": "http://127.0.0.1:9/"} for n in ("a", "b", "c", "d")],
    }
    return parse_config(doc, Path("dq.toml"), {})


def _line(f: Any, names: list[str], faulty: str) -> dict[str, Any]:
    bots = [names[b] for b in f.seats]
    faults = [{"seat": s, "decision": 0, "phase": "act"} for s, b in enumerate(bots) if b == faulty]
    return {"index": f.index, "bots": bots, "decisions": [10] * len(bots), "faults": faults * 6}


def test_disqualification_is_judged_in_fixture_order_whatever_order_matches_end() -> None:
    cfg = _cfg(0.5)
    fixtures = schedule(cfg)
    names = [b.name for b in cfg.bots]
    assert len(fixtures) > DQ_LAG + 2 * BATCH
    judged = []
    for order in (fixtures, list(reversed(fixtures)), fixtures[1::2] + fixtures[::2]):
        judge = DqJudge(cfg, len(fixtures))
        for f in order:
            judge.add(_line(f, names, "b"))
        judged.append(dict(judge.dq_at))
    assert judged[0] == judged[1] == judged[2] == {1: judged[0][1]}  # b alone, at the same fixture
    judge = DqJudge(cfg, len(fixtures))
    for f in fixtures[: DQ_LAG + BATCH]:
        judge.add(_line(f, names, "b"))
    at = judge.dq_at[1]
    assert judge.disqualified(at + DQ_LAG - 1) == []  # fixture i: judged on the fixtures before i - DQ_LAG
    assert judge.disqualified(at + DQ_LAG) == [1]
    # a fixture waits until the prefix its disqualifications are judged on is in
    late = DqJudge(cfg, len(fixtures))
    assert late.ready(DQ_LAG) and not late.ready(DQ_LAG + 1)
    # with max_fault_rate = 1 nothing is ever held back
    assert DqJudge(_cfg(1.0), len(fixtures)).ready(len(fixtures))


def test_batches_are_cut_at_fixed_multiples_whatever_is_left_to_play() -> None:
    cfg = _cfg(1.0)
    fixtures = schedule(cfg)
    left = [f for f in fixtures if f.index % 3]  # as after a resume
    for batch in _batches(left):
        assert len({f.index // BATCH for f in batch}) == 1
    assert [f.index for b in _batches(left) for f in b] == [f.index for f in left]


class _Stream:
    """Stands in for a Dask worker's ``log_event`` (beside the real-cluster tests above)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, bytes]] = []

    def log_event(self, topic: str, msg: bytes) -> None:
        self.events.append((topic, msg))


def _record(index: int) -> Any:
    from referee.record import MatchRecord

    return MatchRecord(f"m{index}", index, 1, ["a"], [1.0], [1], False, [], [], [[1.0]], [1], [{}], {}, 0.1)


def test_a_worker_ships_records_within_a_short_delay_together_and_all_at_a_batch_end() -> None:
    import asyncio

    from referee.run.cluster import SEND_EVERY_S, _records, _WorkerState

    async def go() -> list[list[int]]:
        stream = _Stream()
        state = _WorkerState("tok", _cfg(1.0), Path("."), worker=stream, topic="head-client")
        state.send(_record(3))
        state.send(_record(1))  # ends before the first has left: same event
        assert stream.events == []  # nothing waits for a batch's end, but nothing goes at once either
        await asyncio.sleep(SEND_EVERY_S * 5)
        state.send(_record(2))
        state.flush()  # the batch ends: what is left goes now
        state.flush()  # nothing left: no empty event
        await asyncio.sleep(SEND_EVERY_S * 5)  # the cancelled timer sends nothing more
        assert {t for t, _ in stream.events} == {"head-client"}
        return [[r.index for r in _records([m])] for _, m in stream.events]

    assert asyncio.run(go()) == [[3, 1], [2]]
