"""The Dask executor: matches fan out over Dask distributed; the head keeps the journal.

Used when ``workers`` > 1 (a ``LocalCluster``) or a cluster address is given. The head
(this process) keeps what must be single: the schedule, the journal (through the sink),
disqualification (``dq.DqJudge``, in fixture order, so outputs are those of one
process) and the publish. Workers play batches of ``BATCH`` fixtures with the bots a
``WorkerPlugin`` started on each of them (``lineup.BotPool``, as in one process) and ship
records back as Dask events on one topic (the head client's id) as matches end: no round
trip per record, nothing to poll, and the scheduler keeps only the topic's last events.
A worker that dies loses its matches in flight; Dask plays its batches again elsewhere,
and the head keeps the first record of each fixture. docs/scale.md
tells the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pickle
import re
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import dask
from distributed import Client, LocalCluster, Reschedule, Semaphore
from distributed.diagnostics.plugin import WorkerPlugin

from referee.bots.client import wire
from referee.bots.client.pool import LeanPool
from referee.bots.control import BotRuntime, Pacer
from referee.config.model import TournamentConfig
from referee.errors import ClusterError, RefereeError
from referee.games import get_game
from referee.record import MatchRecord
from referee.run.dq import DqJudge, Gate
from referee.run.lineup import BotPool, BotStatus, without
from referee.run.local import play_fixture, play_gc
from referee.run.security import NO_HTTP_PAGES, PROTOCOL, address_security, run_security
from referee.run.sink import Sink
from referee.schedule.formats import Fixture, schedule
from referee.store import packs, transcripts

# Fixtures per batch: a constant, so a batch's place (and its disqualifications) never
# depends on what was played before; small, so the run's last batches leave few workers idle.
BATCH = 8
THREADS_PER_WORKER = 2  # batches a local worker plays at once (its matches still share `concurrency`)
SEND_EVERY_S = 0.01  # a finished record leaves its worker within this long (records ending together go as one event)
WAKE_S = 1.0  # the head looks at the cluster's size at least this often, records or not
# A LocalCluster's servers without the statistical profiler, with a slower tick and
# slower monitors: they serve a dashboard nobody looks at, and cost an idle worker CPU.
LOCAL_DASK_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}
IDLE_STOP_S = 300.0  # a worker whose head vanished stops the run's bots after this long without a batch


# ------------------------------------------------------------------ the worker side

_STATES: dict[str, _WorkerState] = {}  # run token -> that run's state in this worker process


@dataclass
class _ClusterRuntime(BotRuntime):
    """A bot as one batch sees it: its ``max_concurrent`` as a cluster-wide lease
    instead of a per-process semaphore."""

    lease: Any = None

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """One of the bot's leases across the whole cluster (none when unlimited)."""
        if self.lease is None:
            yield
            return
        async with self.lease:
            yield


@dataclass
class _WorkerState:
    """One run in one worker process: its bots, its pacer, its outbox of records."""

    token: str
    config: TournamentConfig
    log_dir: Path
    pool: BotPool | None = None
    statuses: list[BotStatus] = field(default_factory=list)
    pacer: Pacer | None = None
    fixtures: Sequence[Fixture] = field(default_factory=list)
    worker: Any = None  # the Dask worker this state lives in (its batched stream carries the records)
    topic: str = ""  # the event topic the head listens to: its client's id
    slots: asyncio.Semaphore | None = None
    lean: LeanPool | None = None  # this worker's keep-alive connections, reused across its matches
    connected: bool = False
    leases: dict[str, Any] = field(default_factory=dict)
    outbox: list[MatchRecord] = field(default_factory=list)
    shipping: asyncio.TimerHandle | None = None
    active: int = 0
    last_used: float = field(default_factory=time.monotonic)
    watchdog: asyncio.Task[None] | None = None
    decisions: int = 0
    cpu0: float = 0.0  # CPU seconds of this process when its bots were up
    gc: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)  # the play thresholds while the run lasts
    excluded: tuple[str, ...] = ()  # bots the head excluded (on_unready): not played here
    failure: str | None = None  # why this worker could not start the run's bots at all
    entries: packs.Entries | None = None  # makes the replay pack lines (where the frames are cheap: here)

    @property
    def ready(self) -> bool:
        """True when every bot answered hello on this worker."""
        return self.failure is None and bool(self.statuses) and all(s.ok for s in self.statuses)

    async def keep(self, excluded: tuple[str, ...]) -> None:
        """Play without the bots ``excluded`` by the head (their processes stopped here), the
        schedule of the config without them: the head's."""
        if excluded == self.excluded or self.pool is None:
            return
        self.config = without(self.config, dict.fromkeys(excluded, ""))
        await asyncio.to_thread(self.pool.keep, self.config)
        self.fixtures = schedule(self.config)
        self.statuses = [s for s in self.statuses if s.name not in excluded]
        self.excluded = excluded

    async def start(self) -> None:
        """Start and greet the bots; start the pacer."""
        self.fixtures = schedule(self.config)
        self.slots = asyncio.Semaphore(self.config.concurrency)
        self.lean = LeanPool(max_idle=self.config.concurrency * self.config.players)
        self.pool = BotPool(self.config, self.log_dir)
        try:
            self.statuses = await self.pool.start()
        except RefereeError as exc:
            self.failure = str(exc)
        lim = self.config.limits
        self.pacer = Pacer.for_tournament(lim.deadline_ms, self.config.concurrency, self.config.players)
        await self.pacer.__aenter__()
        self.watchdog = asyncio.create_task(self._idle_stop())
        self.gc.enter_context(play_gc())
        self.cpu0 = time.process_time()

    async def stop(self) -> None:
        """Stop the pacer and every bot this worker started."""
        _STATES.pop(self.token, None)
        self.gc.close()
        if self.watchdog is not None and self.watchdog is not asyncio.current_task():
            self.watchdog.cancel()
        if self.pacer is not None:
            await self.pacer.__aexit__(None, None, None)
        if self.lean is not None:
            self.lean.close()
        if self.pool is not None:
            await asyncio.to_thread(self.pool.stop)

    async def _idle_stop(self) -> None:
        """Stop the bots when no batch came for ``IDLE_STOP_S`` (a head that died
        without saying goodbye to an external cluster)."""
        while True:
            await asyncio.sleep(min(IDLE_STOP_S / 4, 30.0))
            if self.active == 0 and time.monotonic() - self.last_used > IDLE_STOP_S:
                await self.stop()
                return

    async def connect(self) -> None:
        """The run's bot leases, through this worker's client (only bots with a ``max_concurrent``)."""
        if self.connected:
            return
        for b in self.config.bots:
            limit = self.config.max_concurrent(b)
            if limit > 0:  # the worker's own client, made on first use
                self.leases[b.name] = await Semaphore(max_leases=limit, name=_lease_name(self.token, b.name))
        self.connected = True

    def runtimes(self) -> list[BotRuntime]:
        """The bots as one batch sees them."""
        assert self.pool is not None
        return [
            _ClusterRuntime(
                rt.endpoint,
                # the limit routes every request to this bot through ``slot``: the lease
                max_concurrent=rt.max_concurrent if rt.name in self.leases else 0,
                managed=rt.managed,
                revive_args=rt.revive_args,
                lease=self.leases.get(rt.name),
            )
            for rt in self.pool.runtimes
        ]

    def send(self, rec: MatchRecord) -> None:
        """Ship a finished match's record to the head within ``SEND_EVERY_S``, with
        those that end meanwhile: its transcript line encoded here, its moves left here
        (unpickling 240 Moves cost the head ~1 ms a match, more than the rest of its work),
        and its replay pack line made here (a game without replay.js replays the match)."""
        rec.transcript = transcripts.line_of(rec) if self.config.transcripts == "all" else b""
        if rec.transcript:
            if self.entries is None:
                self.entries = packs.Entries(get_game(self.config.game), self.config.options)
            rec.pack = self.entries.line_of(rec.to_json(), rec.transcript)
        rec.moves = []
        self.outbox.append(rec)
        if self.shipping is None:
            self.shipping = asyncio.get_running_loop().call_later(SEND_EVERY_S, self.flush)

    def flush(self) -> None:
        """Ship every record of this worker now (onto the worker's ordered stream to the
        scheduler, ahead of anything it sends after)."""
        if self.shipping is not None:
            self.shipping.cancel()
            self.shipping = None
        if self.outbox:
            recs, self.outbox = self.outbox, []
            self.worker.log_event(self.topic, pickle.dumps(recs, protocol=pickle.HIGHEST_PROTOCOL))


class _Plugin(WorkerPlugin):  # type: ignore[misc]
    """Sets a run up on every worker, also on one that joins later, and tears it down."""

    name: str

    def __init__(self, token: str, config: TournamentConfig, log_root: str, topic: str) -> None:
        self.token = token
        self.topic = topic
        self.config = config
        self.log_root = log_root
        self.name = f"referee-{token}"

    async def setup(self, worker: Any) -> None:
        """Start the run's bots on this worker."""
        log_dir = Path(self.log_root) / _worker_dir(worker.name)
        state = _WorkerState(self.token, self.config, log_dir, worker=worker, topic=self.topic)
        _STATES[self.token] = state
        await state.start()

    async def teardown(self, worker: Any) -> None:
        """Stop the run's bots on this worker."""
        state = _STATES.get(self.token)
        if state is not None:
            await state.stop()


async def _play_batch(
    token: str,
    indices: list[int],
    disqualified: list[list[int]],
    seats: list[tuple[int, ...]],
    excluded: tuple[str, ...] = (),
) -> list[int]:
    """Play the fixtures ``indices`` (each with its disqualified seats and the head's seats:
    a ladder's tables come from the head) on this worker, without the bots ``excluded`` by
    the head; every record is shipped on return."""
    state = _STATES.get(token)
    if state is not None:
        await state.keep(excluded)  # a worker that joined after the lineup was judged
    if state is None or not state.ready:
        raise Reschedule()  # this worker's bots are not up: let another worker play it
    state.active += 1
    try:
        await state.connect()
        cfg = state.config
        game = get_game(cfg.game)
        rts = state.runtimes()
        assert state.slots is not None

        async def one(i: int, dq: list[int], at: tuple[int, ...]) -> None:
            assert state.slots is not None
            f = state.fixtures[i]
            f = f if f.seats == at else replace(f, seats=at)
            async with state.slots, wire.new_client(cfg.players + 2, state.lean) as client:
                rec = await play_fixture(cfg, game, rts, state.pacer, f, dq, client)
            state.decisions += sum(rec.decisions)
            state.send(rec)

        async with asyncio.TaskGroup() as tg:
            for i, dq, at in zip(indices, disqualified, seats):
                tg.create_task(one(i, dq, tuple(at)))
        state.flush()
    finally:
        state.active -= 1
        state.last_used = time.monotonic()
    return indices


def _worker_statuses(token: str) -> tuple[str | None, list[BotStatus]]:
    """Why this worker could not start the run's bots at all (None when it could), and how
    each answered hello on it."""
    state = _STATES.get(token)
    if state is None:
        return "the run was not set up on this worker", []
    return state.failure, state.statuses


def _on_every_worker(status: BotStatus, worker: str) -> BotStatus:
    """A worker's status of a bot as the head shows it: a started bot's URL (the worker's
    own) shown as started on every worker; the worker named in the detail of one not ready
    (not in its public reason)."""
    url = status.url if not status.managed else "started on every worker"
    unready = status.unready
    if unready is not None:
        unready = replace(unready, detail=f"{unready.detail} (on worker {worker})")
    return replace(status, url=url, unready=unready)


async def _worker_keep(token: str, excluded: tuple[str, ...]) -> None:
    """Play this run without the bots ``excluded`` by the head."""
    state = _STATES.get(token)
    if state is not None:
        await state.keep(excluded)


def _worker_report(token: str) -> dict[str, Any]:
    """This worker's pacer figures, CPU seconds since its bots were up, decisions played."""
    state = _STATES.get(token)
    lag = state.pacer.report() if state is not None and state.pacer is not None else {"samples": 0}
    cpu = time.process_time() - (state.cpu0 if state else 0.0)
    return {"lag": lag, "cpu_s": cpu, "decisions": state.decisions if state else 0}


def _worker_dir(name: Any) -> str:
    """A folder name for a worker's bot logs: worker-0, worker-127.0.0.1-40123."""
    return "worker-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", str(name)).strip("-")


def _hush() -> None:
    """On a process of the run's own cluster as it closes: what Dask logs while its parts
    stop in turn (a worker's heartbeat to the scheduler that has just gone, with its
    traceback) is not the run's to show."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)


def _lease_name(token: str, bot: str) -> str:
    return f"referee-{token}-bot-{bot}"


# ------------------------------------------------------------------ the head


class DaskExecutor:
    """Plays fixtures on Dask workers, handing each record to the sink as its match ends (an ``Executor``)."""

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.token = uuid.uuid4().hex[:12]
        self.total = len(schedule(config))
        self.judge: Gate = DqJudge(config, self.total)  # until ``use`` gives the run's
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None
        self.statuses: list[BotStatus] = []
        self.duplicates = 0  # records of a fixture already received (a batch played again)
        self.resubmitted = 0  # batches played again because a record was missing
        self.started_cpu = 0.0
        self.topic = ""  # where workers ship records: the head client's id, so the scheduler drops the
        # events it keeps of it (the last 1000) when the head leaves, after events-cleanup-delay
        self.record_cpu_s = 0.0  # head CPU spent on records: unpickle, judge, journal line
        self.excluded: tuple[str, ...] = ()  # bots the head's lineup leaves out (on_unready = "exclude")
        self.cut_short = False  # a play ended by an exception: no worker is asked for figures

    async def __aenter__(self) -> DaskExecutor:
        try:
            await self._connect()
            try:
                await self._setup_workers()
            except (OSError, TimeoutError) as exc:
                raise ClusterError(f"the Dask cluster failed while starting the bots on its workers: {exc}") from exc
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.unregister_worker_plugin(f"referee-{self.token}"), 30)
            if self.cluster is not None:  # the run's own workers: not an organiser's, which live on
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.client.run(_hush), 10)
                    await asyncio.wait_for(self.client.run(_hush, nanny=True), 10)
            if self.topic:  # else the scheduler pushes its 'remove-client' event to the closed client (a CRITICAL log)
                with contextlib.suppress(Exception):
                    self.client.unsubscribe_topic(self.topic)
            with contextlib.suppress(Exception):
                await self.client.close()
        if self.cluster is not None:  # its scheduler is in this process: hushed as it closes, too
            dask_log = logging.getLogger("distributed")
            level = dask_log.level
            dask_log.setLevel(logging.CRITICAL + 1)
            try:
                with contextlib.suppress(Exception):
                    await self.cluster.close()
            finally:
                dask_log.setLevel(level)

    async def _connect(self) -> None:
        cfg = self.config
        if cfg.cluster:
            try:
                self.client = await Client(
                    cfg.cluster, asynchronous=True, timeout=10, security=address_security(cfg.cluster)
                )
            except (OSError, TimeoutError) as exc:
                raise ClusterError(f"cannot reach the Dask scheduler at {cfg.cluster}: {exc}") from exc
            try:
                await self.client.wait_for_workers(1, timeout=max(10.0, cfg.limits.startup_ms / 1000))
            except TimeoutError as exc:
                raise ClusterError(f"no worker has joined the scheduler at {cfg.cluster}") from exc
        else:
            # read as the servers start; the nannies pass it on
            with dask.config.set(LOCAL_DASK_CONFIG | NO_HTTP_PAGES):
                self.cluster = await LocalCluster(
                    n_workers=cfg.workers,
                    threads_per_worker=THREADS_PER_WORKER,
                    processes=True,
                    asynchronous=True,
                    host="127.0.0.1",
                    protocol=PROTOCOL,
                    security=run_security(),
                    dashboard_address=None,
                    # the HTTP server Dask always starts (no page: NO_HTTP_PAGES) takes any free
                    # port, not 8787, which a second run on the machine would find taken (a warning)
                    scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                    silence_logs=logging.ERROR,
                )
                self.client = await Client(self.cluster, asynchronous=True)

    async def _setup_workers(self) -> None:
        """Start every worker's bots; ``statuses`` is each bot's worst answer."""
        assert self.client is not None
        self.topic = str(self.client.id)
        cfg = self.config
        for b in cfg.bots:  # the scheduler keeps the leases; make each with its limit before any worker asks
            limit = cfg.max_concurrent(b)
            if limit > 0:
                await Semaphore(max_leases=limit, name=_lease_name(self.token, b.name))
        plugin = _Plugin(self.token, cfg, str((cfg.output / "logs").resolve()), self.topic)
        await self.client.register_plugin(plugin, name=plugin.name)
        answers: dict[str, tuple[str | None, list[BotStatus]]] = await self.client.run(_worker_statuses, self.token)
        by_bot: dict[str, BotStatus] = {}
        for worker, (failure, statuses) in sorted(answers.items()):
            if failure is not None:
                raise ClusterError(f"worker {worker} could not start the run's bots: {failure}")
            for st in statuses:
                cur = by_bot.get(st.name)
                if cur is None or (cur.ok and not st.ok) or (cur.ok == st.ok and st.ms > cur.ms):
                    by_bot[st.name] = _on_every_worker(st, worker)
        self.started_cpu = time.process_time()
        self.statuses = [by_bot[b.name] for b in cfg.bots if b.name in by_bot]

    async def use(self, config: TournamentConfig, judge: Gate) -> None:
        """Play ``config``'s lineup under ``judge``: every worker stops the excluded bots."""
        if judge.lag < BATCH - 1:  # a batch must be judged on fixtures before it
            raise ClusterError(f"disqualification lag {judge.lag} is shorter than a batch ({BATCH})")
        kept = {b.name for b in config.bots}
        self.excluded = tuple(b.name for b in self.config.bots if b.name not in kept)
        if self.excluded:
            assert self.client is not None
            await self.client.run(_worker_keep, self.token, self.excluded)
        self.config, self.judge, self.total = config, judge, len(schedule(config))

    async def play(self, fixtures: Iterator[Fixture], sink: Sink) -> None:
        """Play ``fixtures`` on the workers; ``sink.accept`` each record as its match ends,
        each fixture exactly once."""
        assert self.client is not None
        fl = _Flight(_batches(fixtures), bytearray(self.total), asyncio.get_running_loop())

        def arrived(event: tuple[float, Any]) -> None:
            if isinstance(event[1], bytes):  # the scheduler's own events on the client's topic are dicts
                fl.inbox.append(event[1])
                fl.wake.set()

        self.cut_short = True
        self.client.subscribe_topic(self.topic, arrived)  # before any batch goes out, on the same ordered stream
        try:
            window, looked = 4, 0.0
            while True:
                if time.monotonic() - looked > WAKE_S:  # workers come and go: two batches per worker thread
                    window, looked = max(4, 2 * sum((await self.client.nthreads()).values())), time.monotonic()
                self._fill(fl, window)
                if not fl.outstanding and not fl.waiting and not fl.more:
                    break
                fl.wake.clear()  # before looking: whatever arrives from now on wakes the wait below
                finished = [fut for fut in fl.outstanding if fut.done()]  # their records are in the inbox already
                msgs, fl.inbox[:] = fl.inbox[:], []
                if not msgs and not finished:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(fl.wake.wait(), WAKE_S)
                    continue
                self._receive(fl, msgs, sink)
                await self._settle(fl, finished)
        finally:
            with contextlib.suppress(Exception):
                self.client.unsubscribe_topic(self.topic)
        self.cut_short = False

    def _fill(self, fl: _Flight, window: int) -> None:
        """Send batches out until ``window`` are outstanding, each once the prefix its
        last fixture's disqualifications are judged on is in the journal."""
        while len(fl.outstanding) < window:
            if not fl.waiting and fl.more:
                nxt = next(fl.batches, None)
                if nxt is None:
                    fl.more = False
                else:
                    fl.waiting.append(nxt)
            if not fl.waiting or not self.judge.ready(fl.waiting[0][-1].index):
                return
            self._submit(fl, fl.waiting.pop(0))

    def _submit(self, fl: _Flight, batch: list[Fixture]) -> None:
        """Send one batch to the cluster, with each fixture's disqualified seats."""
        assert self.client is not None
        batch = [self.judge.fixture(f) for f in batch]
        fut = self.client.submit(
            _play_batch,
            self.token,
            [f.index for f in batch],
            [self.judge.seats(f.index, f.seats) for f in batch],
            [f.seats for f in batch],
            self.excluded,
            key=f"referee-batch-{self.token}-{batch[0].index}-{uuid.uuid4().hex[:6]}",
            pure=False,
        )
        fut.add_done_callback(lambda _: fl.loop.call_soon_threadsafe(fl.wake.set))  # in Dask's callback thread
        fl.outstanding[fut] = batch
        fl.inflight.update((f.index, f) for f in batch)

    def _receive(self, fl: _Flight, msgs: list[bytes], sink: Sink) -> None:
        """Judge and journal the records of the events ``msgs``: the first of each fixture."""
        cpu = time.process_time()  # the head's cost per record: unpickling, judging, the sink
        for rec in _records(msgs):
            if fl.seen[rec.index]:
                self.duplicates += 1
                continue
            fl.seen[rec.index] = 1
            f = fl.inflight.get(rec.index)
            if f is None:
                raise ClusterError(f"a worker sent fixture {rec.index}, which was never sent out")
            sink.accept(f, rec)  # first, as in one process: the judge sees the line as journaled
            self.judge.add(rec)
        self.record_cpu_s += time.process_time() - cpu

    async def _settle(self, fl: _Flight, finished: list[Any]) -> None:
        """Close the batches that ended (their records are in): a failed one ends the run."""
        for fut in finished:
            batch = fl.outstanding.pop(fut)
            for f in batch:
                fl.inflight.pop(f.index, None)
            if fut.status == "error":
                exc = await fut.exception()
                raise ClusterError(
                    f"a batch of matches ({batch[0].id}...) failed on the cluster: {type(exc).__name__}: {exc}"
                )
            missing = [f for f in batch if not fl.seen[f.index]]
            if missing:  # cannot happen while every record precedes its batch's end; stay safe
                self.resubmitted += 1
                self._submit(fl, missing)

    async def lag(self) -> dict[str, Any] | None:
        """The workers' lag figures (the worst), CPU seconds of head and workers, decisions;
        None after a ``play`` cut short (its workers may be gone)."""
        if self.cut_short:
            return None
        assert self.client is not None
        reports: dict[str, dict[str, Any]] = await self.client.run(_worker_report, self.token)
        lags = [r["lag"] for r in reports.values() if r["lag"].get("samples")]
        out: dict[str, Any] = {"samples": 0}
        if lags:
            worst = max(lags, key=lambda r: r["p99_ms"])
            out = dict(worst)
            out["samples"] = sum(r["samples"] for r in lags)
            out["lowest_limit"] = min(r["lowest_limit"] for r in lags)
            out["final_limit"] = sum(r["final_limit"] for r in lags)
        out["workers"] = len(reports)
        out["worker_cpu_s"] = sum(r["cpu_s"] for r in reports.values())
        out["worker_decisions"] = sum(r["decisions"] for r in reports.values())
        out["head_cpu_s"] = time.process_time() - self.started_cpu
        out["head_record_cpu_s"] = self.record_cpu_s
        out["duplicates"] = self.duplicates
        return out


@dataclass
class _Flight:
    """One ``play``: batches held back, out on the cluster, and the fixtures received."""

    batches: Iterator[list[Fixture]]
    seen: bytearray  # a byte per fixture of the schedule: its record is in
    loop: asyncio.AbstractEventLoop
    waiting: list[list[Fixture]] = field(default_factory=list)  # held back until the prefix they need is in
    outstanding: dict[Any, list[Fixture]] = field(default_factory=dict)  # futures of the batches out
    inflight: dict[int, Fixture] = field(default_factory=dict)  # the fixtures of the outstanding batches
    more: bool = True
    inbox: list[bytes] = field(default_factory=list)  # record events pushed by the scheduler, not yet read
    wake: asyncio.Event = field(default_factory=asyncio.Event)


def _records(msgs: list[bytes]) -> Iterator[MatchRecord]:
    """The records of the events ``msgs``, in the order they came."""
    for m in msgs:
        yield from pickle.loads(m)


def _batches(fixtures: Iterable[Fixture]) -> Iterator[list[Fixture]]:
    """Fixtures cut into batches at multiples of ``BATCH`` (so a batch's place in the
    schedule, and its disqualifications, never depend on what was played before)."""
    batch: list[Fixture] = []
    for f in fixtures:
        if batch and f.index // BATCH != batch[0].index // BATCH:
            yield batch
            batch = []
        batch.append(f)
    if batch:
        yield batch
