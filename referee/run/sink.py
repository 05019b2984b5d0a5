"""The sink: where every finished match goes, in the head process, as it ends.

``Sink.accept`` sets the record's deal, runs the ``before_write`` hooks (the transcript
is written there, so a journal line always has its transcript), appends the line to the
journal (written whole and flushed: a killed run loses only the matches in flight),
tallies it and reports progress. Only the sink writes the journal.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from referee.config.model import TournamentConfig
from referee.record import MatchRecord
from referee.schedule.formats import Fixture
from referee.store import journal as jn
from referee.store import transcripts
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
    with (
        transcripts.Writer(out, config.transcripts == "all", resume) as tw,
        jn.JournalWriter(out / JOURNAL) as writer,
    ):
        hooks: list[Hook] = [lambda f, rec: tw.write(rec), *(before_write or ())]
        yield Sink(writer, state, progress, started, on_progress, hooks, timings, out)
