"""Runs a tournament: source -> executor -> sink, one code path for every executor.

- **source**: ``pending(schedule, state)`` yields the fixtures not yet in the journal,
  lazily, in fixture order (``state``: the journal read once into one bit per fixture).
- **executor** (``executor.Executor``): this process (``local.py``) or a Dask cluster
  (``cluster.py``); it pulls fixtures as it can start them and hands each finished
  match to the sink.
- **sink** (``sink.py``): the only writer of the journal.

``resume`` reads the journal once, checks every line belongs to this config's schedule,
drops a torn last line, and plays only what is missing. Standings are always computed
from the journal in fixture order, so they never depend on which match finished first.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.config.model import TournamentConfig
from referee.errors import ConfigError, RefereeError
from referee.run.dq import Gate, judge_for
from referee.run.executor import Executor
from referee.run.final import FinalGate, plan_for, play_final
from referee.run.lineup import BotStatus, judge_lineup
from referee.run.live import LivePublisher
from referee.run.local import open_local
from referee.run.season import open_gate, resolve_ladder
from referee.run.sink import Hook, Progress, Sink, open_sink
from referee.run.stopping import DealValues, Stop, batches, look, make_stop
from referee.run.versions import bot_versions
from referee.schedule.formats import Fixture, Schedule, schedule
from referee.schedule.registry import format_class
from referee.store import journal as jn
from referee.store.journal import JOURNAL as JOURNAL  # re-exported: callers may import it from here
from referee.store.journal import JournalState


@dataclass(frozen=True)
class RunReport:
    """What a finished run tells its caller besides the journal."""

    lag: dict[str, Any]  # the referee's own event-loop lag (``Pacer.report``; with Dask, the workers')
    stopped: Stop | None = None  # stop = "settled": why the run stopped
    config: TournamentConfig | None = None  # the config played: without the bots excluded (on_unready)


def read_journal(path: Path, fixtures: Schedule, bot_names: list[str], repair: bool) -> JournalState:
    """The journal at ``path`` read once into a ``JournalState`` (done fixtures, tallies).

    A torn last line (a killed run) is dropped, and cut from the file when ``repair``.
    A line that does not match this config's schedule is a JournalError.
    """
    state = jn.scan(path, fixtures, bot_names)
    if repair:
        jn.repair(path, state.good_end)
    return state


Dropped = Callable[[int], bool] | None  # a ladder's tables that are never played


def pending_range(
    fixtures: Schedule, state: JournalState, lo: int, hi: int, dropped: Dropped = None
) -> Iterator[Fixture]:
    """The source of one batch: fixtures ``lo`` to ``hi`` (excluded) not yet in the journal."""
    for i in range(lo, hi):
        if not state.is_done(i) and not (dropped and dropped(i)):
            yield fixtures[i]


def pending(fixtures: Schedule, state: JournalState, dropped: Dropped = None) -> Iterator[Fixture]:
    """The source: fixtures not yet in the journal (nor ``dropped``), lazily, in fixture order."""
    done = state.done
    for byte_index, byte in enumerate(done):
        if byte == 0xFF:
            continue  # eight finished matches
        for i in range(byte_index * 8, min(byte_index * 8 + 8, fixtures.total)):
            if not byte & (1 << (i & 7)) and not (dropped and dropped(i)):
                yield fixtures[i]


async def run_tournament(
    config: TournamentConfig,
    *,
    resume: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    on_ready: Callable[[list[BotStatus]], None] | None = None,
    before_write: list[Hook] | None = None,
    pilot_deals: int | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_lineup: Callable[[TournamentConfig], None] | None = None,
) -> RunReport:
    """Play every fixture not yet in the journal, appending each to it as it ends.

    The bots are started and greeted first; the lineup judged on their answers
    (``lineup.judge_lineup``) is the config played, handed to ``on_lineup`` before any
    match (it differs from ``config`` only by the bots ``on_unready = "exclude"`` left
    out). ``pilot_deals``: play only the first that many deals (``referee plan``). With
    ``publish_every_s`` the outputs are published while matches are played (not for a
    pilot); a failed live publish goes to ``on_warning``."""
    started = time.perf_counter()
    async with _executor(config, pilot_deals) as executor:
        if on_ready:
            on_ready(executor.statuses)
        lineup_fixed = not config.grow and not format_class(config).adaptive  # a ladder's lineup changes at any resume
        fixed = resume and lineup_fixed and jn.has_lines(config.output / JOURNAL)
        config = judge_lineup(config, executor.statuses, fixed)
        versions = bot_versions(config, {s.name: s.version for s in executor.statuses})
        config = resolve_ladder(config, resume, versions)  # a ladder's lineup: these bots, these versions
        fixtures = schedule(config)
        state = _journal_state(config, fixtures, resume)
        judge, dropped = _judge(config, fixtures, resume, versions)
        await executor.use(config, judge)
        if on_lineup:
            on_lineup(config)
        progress = Progress(state.count, fixtures.total, state.faults, 0.0, state.count)
        if on_progress:
            on_progress(progress)
        with open_sink(config, state, progress, started, on_progress, before_write, resume) as sink:
            sink.versions = versions
            publishing = config.publish_every_s > 0 and pilot_deals is None
            live = LivePublisher(config, fixtures.total, on_warning) if publishing else None
            stopped: Stop | None = None
            try:
                if isinstance(judge, FinalGate) and pilot_deals is None:  # a closed season with a final
                    stopped = await play_final(
                        judge,
                        fixtures,
                        lambda some: executor.play(some, sink),
                        lambda lo, hi: pending_range(fixtures, state, lo, hi, dropped),
                    )
                elif config.stop == "settled" or pilot_deals is not None:
                    stopped = await play_until_settled(config, fixtures, state, sink, executor, pilot_deals, dropped)
                else:
                    await executor.play(pending(fixtures, state, dropped), sink)
            except BaseException:
                await _wind_down(executor, sink, live, failed=True)
                raise
            lag = await _wind_down(executor, sink, live, failed=False)
    return RunReport(lag or {"samples": 0}, stopped, config)


async def _wind_down(executor: Executor, sink: Sink, live: LivePublisher | None, failed: bool) -> dict[str, Any] | None:
    """The end of a run, also an interrupted or ``failed`` one: live publishing stopped,
    the executor's lag kept, the response-time summary saved (when the run failed, only
    if it can be: the error in flight, such as the journal's full disk, is the one to report)."""
    if live is not None:
        await live.stop()
    lag = await executor.lag()
    if lag is not None:
        sink.timings.referee_lag.append({k: v for k, v in lag.items() if isinstance(v, (int, float))})
    if not failed:
        sink.save_timings()
    else:
        with contextlib.suppress(RefereeError):
            sink.save_timings()
    return lag


def _judge(
    config: TournamentConfig, fixtures: Schedule, resume: bool, versions: Mapping[str, str]
) -> tuple[Gate, Dropped]:
    """The gate fixtures pass: disqualification in fixture order, and for a ladder the
    tables of each epoch chosen from the journal (and the tables it dropped)."""
    dq = judge_for(config, fixtures.total, config.output / JOURNAL, resume)
    if not format_class(config).adaptive:
        return dq, None
    gate = open_gate(config, dq, fixtures.total, config.output / JOURNAL, resume, versions)
    final = plan_for(config)
    if final is None:
        return gate, gate.dropped
    with_final = FinalGate(config, gate, final)
    if resume:
        with_final.rebuild(config.output / JOURNAL)
    return with_final, with_final.dropped


def _journal_state(config: TournamentConfig, fixtures: Schedule, resume: bool) -> JournalState:
    """The journal of a resumed run read back (a torn last line cut); else a fresh start,
    the journal of an earlier run kept aside as ``matches.jsonl.prev``."""
    out = config.output
    out.mkdir(parents=True, exist_ok=True)
    journal = out / JOURNAL
    if resume:
        return read_journal(journal, fixtures, [b.name for b in config.bots], repair=True)
    if jn.has_lines(journal):
        journal.replace(out / (JOURNAL + ".prev"))
    return jn.empty_state(fixtures.total)


def _executor(config: TournamentConfig, pilot_deals: int | None) -> AbstractAsyncContextManager[Executor]:
    """The executor of ``config``: Dask with ``workers`` > 1 or a cluster (imported only
    then), else this process."""
    if not (config.workers > 1 or config.cluster):
        return open_local(config)
    settled_here = config.stop == "settled" and not format_class(config).adaptive  # a ladder's gate orders its looks
    if settled_here or config.grow or pilot_deals is not None:
        raise ConfigError(
            f"{config.path}: stop = 'settled', grow and referee plan play in this process for now: "
            "drop workers / --cluster for them"
        )
    from referee.run.cluster import DaskExecutor  # Dask is imported only when used

    return DaskExecutor(config)


async def play_until_settled(
    config: TournamentConfig,
    fixtures: Schedule,
    state: JournalState,
    sink: Sink,
    executor: Executor,
    pilot_deals: int | None = None,
    dropped: Dropped = None,
) -> Stop | None:
    """Play batch after batch of deals, looking after each whole batch (stopping.py);
    return why the run stopped (None for a pilot)."""
    values = DealValues(config)
    if state.count:  # a resumed run: its finished matches count, and the looks are replayed
        values.add_lines(jn.read_journal(config.output / JOURNAL))
    sink.before_write.append(lambda f, rec: values.add(f.index, rec.bots, rec.ranks, rec.scores, rec.lower_is_better))
    deals = values.deals if pilot_deals is None else min(values.deals, pilot_deals)
    verdict, upto = None, 0
    for lo, hi, upto in batches(deals, values.deal_size, config.batch):
        await executor.play(pending_range(fixtures, state, lo, hi, dropped), sink)
        if pilot_deals is None:
            verdict = look(values, upto, config)
            if verdict.settled:
                break
    if pilot_deals is not None:
        return None
    return make_stop(config, values, verdict, upto)
