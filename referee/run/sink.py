"""The sink: where every finished match goes, in the head process, as it ends.

``Sink.accept`` sets the record's deal, runs the ``before_write`` hooks (the transcript
is written there, so a journal line always has its transcript), appends the line to the
journal (written whole and flushed: a killed run loses only the matches in flight), hands
the match's replay pack line to the pack writer (``store.packs``: made here, or where the
match was played on Dask), tallies it and reports progress. Only the sink writes the
journal and the packs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from referee.config.model import TournamentConfig
from referee.games import get_game
from referee.record import MatchRecord
from referee.schedule.formats import Fixture
from referee.store import journal as jn
from referee.store import packs, transcripts
from referee.store.files import write_error
from referee.store.journal import JOURNAL, JournalState
from referee.store.timings import Timings

TIMINGS_EVERY_S = 2.0  # a kill loses at most this much of the response-time summary

Hook = Callable[[Fixture, MatchRecord], None]


@dataclass
class Progress:
    """Where a run stands, for the live display."""

    done: int
    total: int
    faults: int
    elapsed_s: float
    skipped: int

    @property
    def rate(self) -> float:
        """Matches per second played in this run."""
        played = self.done - self.skipped
        return played / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass
class PackSink:
    """The replay packs of a run: each journaled match's line, in index order (``store.packs``)."""

    writer: packs.PackWriter
    entries: packs.Entries

    def add(self, rec: MatchRecord) -> None:
        """Hand over the pack line of ``rec`` (made now unless it came made)."""
        line = rec.pack
        if line is None:
            line = self.entries.line_of(rec.to_json(), transcripts.line_of(rec))
        self.writer.add(rec.index, line)


@dataclass
class Sink:
    """The journal line, tallies and progress of every finished match (see the module doc)."""

    writer: jn.JournalWriter
    state: JournalState
    progress: Progress
    started: float
    on_progress: Callable[[Progress], None] | None = None
    before_write: list[Hook] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    timings_dir: Path | None = None  # where the response-time summary is saved (every few seconds)
    _saved: float = field(default_factory=time.monotonic)
    versions: dict[str, str] = field(default_factory=dict)  # each bot's version (run.versions), into every line
    packs: PackSink | None = None

    def save_timings(self) -> None:
        """Save the response-time summary now (at the end, and every few seconds)."""
        if self.timings_dir is not None:
            self.timings.save(self.timings_dir)
            self._saved = time.monotonic()

    def accept(self, fixture: Fixture, rec: MatchRecord) -> None:
        """Journal one finished match (called once per match, in the head process)."""
        rec.deal = fixture.deal
        if self.versions:
            rec.versions = [self.versions[b] for b in rec.bots]
        for hook in self.before_write:
            try:
                hook(fixture, rec)
            except OSError as exc:  # a full disk under a transcript: a message naming the file
                raise write_error(Path(exc.filename or self.writer.path.parent), exc) from exc
        self.writer.write(rec)
        if self.packs is not None:
            self.packs.add(rec)
        self.timings.add(rec)
        if time.monotonic() - self._saved > TIMINGS_EVERY_S:
            self.save_timings()
        self.state.mark(fixture.index)
        self.progress.done += 1
        self.progress.faults += len(rec.faults)
        self.progress.elapsed_s = time.perf_counter() - self.started
        if self.on_progress:
            self.on_progress(self.progress)


@contextlib.contextmanager
def open_sink(
    config: TournamentConfig,
    state: JournalState,
    progress: Progress,
    started: float,
    on_progress: Callable[[Progress], None] | None,
    before_write: list[Hook] | None,
    resume: bool,
) -> Iterator[Sink]:
    """The sink of a run, with its transcript writer, journal writer and response-time
    summary open (a resumed run goes on from the saved summary)."""
    out = config.output
    timings = (Timings.load(out) if resume else None) or Timings()
    kept = config.transcripts == "all"
    with (
        transcripts.Writer(out, kept, resume) as tw,
        jn.JournalWriter(out / JOURNAL) as writer,
        contextlib.ExitStack() as stack,
    ):
        # a folder made before packs, resumed, stays without them (its replays: replay data files)
        older = resume and not packs.exists(out) and jn.has_lines(out / JOURNAL)
        pack_sink = stack.enter_context(open_packs(config, resume)) if kept and not older else None

        def transcript(f: Fixture, rec: MatchRecord) -> None:
            if pack_sink is not None and rec.transcript is None:  # encoded once, for both
                rec.transcript = transcripts.line_of(rec)
            tw.write(rec)

        hooks: list[Hook] = [transcript, *(before_write or ())]
        sink = Sink(writer, state, progress, started, on_progress, hooks, timings, out)
        sink.packs = pack_sink
        yield sink


@contextlib.contextmanager
def open_packs(config: TournamentConfig, resume: bool) -> Iterator[PackSink]:
    """The pack writer of a run; a resumed run's packs first made to agree with its
    journal (a torn line cut, entries of matches not in it dropped, missing ones made)."""
    out = config.output
    entries = packs.Entries(get_game(config.game), config.options)
    journal: dict[int, str] = {}
    if resume and (out / JOURNAL).exists():
        journal = {int(d["index"]): str(d["id"]) for d in jn.read_journal(out / JOURNAL)}
    present = packs.repair(out, journal) if resume else set()
    # held back: a few matches in flight here; on Dask, the batches of every worker
    window = 2 * max(2, config.concurrency) if config.workers <= 1 and not config.cluster else packs.WINDOW
    with packs.PackWriter(out, resume, window) as writer:
        missing = journal.keys() - present
        if missing:
            lines = (d for d in jn.read_journal(out / JOURNAL) if int(d["index"]) in missing)
            packs.fill(writer, entries, lines, lambda ids: transcripts.find_many(out, ids))
        yield PackSink(writer, entries)
