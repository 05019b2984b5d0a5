"""What a run publishes, and when.

- As a run starts, ``tournament.json`` holds the settings; a secret seed only as its
  commitment (the SHA-256 of its 16 bytes, big-endian).
- While it runs (``publish_every_s``), the files are rendered from the journal as it
  stands, marked ``live`` (the matches they cover, and when).
- At its end, from the whole journal; a complete run (every match played, or stopped
  settled) reveals the secret seed in ``tournament.json``, so anyone can check the deals.
- Response times come from the run's summary (the journal keeps none); a journal of an
  older referee, with response times in its lines, keeps the figures computed from them.
"""

from __future__ import annotations

import datetime
import gc
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.bots.cage import uids
from referee.config.model import TournamentConfig
from referee.errors import OutputError, RefereeError
from referee.report.progress import OnProgress, nothing
from referee.report.publish import Leaderboard, build_leaderboard, write_leaderboard
from referee.report.viewer import Watch, write_replays
from referee.schedule.formats import schedule
from referee.schedule.registry import format_class
from referee.schedule.settings import published
from referee.store import journal as jn
from referee.store import transcripts
from referee.store.files import write_error
from referee.store.journal import JOURNAL
from referee.store.timings import Timings
from referee.store.tournament_file import load_output_dir, read_settings, tournament_document, write_tournament_file

STANDINGS_STEP = "standings"  # the step of reading the journal and computing the verdicts


@dataclass(frozen=True)
class Published:
    """What a publish wrote: the leaderboard it rendered, its files, and what went wrong
    without stopping it (the replay pages), as warnings."""

    board: Leaderboard
    paths: tuple[Path, ...]
    warnings: tuple[str, ...] = ()


def commitment(seed: int) -> str:
    """The published commitment to a secret ``seed``: SHA-256 of its 16 bytes, hex."""
    return hashlib.sha256(seed.to_bytes(16, "big")).hexdigest()


def published_settings(config: TournamentConfig, complete: bool) -> dict[str, Any]:
    """The settings for ``tournament.json``: with a secret seed, its commitment, and the
    seed itself only when the run is ``complete``."""
    settings = published(config)
    if not uids.own_uids():  # the run's bots share one uid (bots/cage/uids.py): each is marked
        marks = {name: found for name, found in config.cage_marks(shared_uid=True).items() if found}
        settings.update({"cage_marks": marks} if marks else {})
    if config.seed_secret:
        settings["seed_commitment"] = commitment(config.seed)
        if complete:
            settings["seed"] = config.seed
    return settings


def announce(config: TournamentConfig, scheduled: int) -> Path:
    """Write ``tournament.json`` as a run starts (a secret seed only if it was revealed
    already: a revealed seed stays revealed); return its path. ``RefereeError`` when it
    cannot be written."""
    earlier = read_settings(config.output) or {}
    revealed = config.seed_secret and earlier.get("seed_commitment") == commitment(config.seed)
    revealed = revealed and earlier.get("seed") == config.seed
    try:
        return write_tournament_file(config.output, published_settings(config, complete=revealed), scheduled)
    except OSError as exc:  # the folder (a file's failure is an OutputError already)
        raise OutputError(f"{config.output}: cannot write tournament.json: {exc.strerror or exc}") from exc


def publish_final(
    config: TournamentConfig, stopped: Mapping[str, Any] | None = None, on_progress: OnProgress = nothing
) -> Published:
    """Write the leaderboard files from the journal at the end of a run (also an
    interrupted one). A complete run with a secret seed reveals it in ``tournament.json``
    first; a run that stopped settled (``stopped``) is complete and says why there.
    A ``RefereeError`` names what could not be read or written (``OutputError``: a file
    that could not be written); ``on_progress`` is told how the writing goes."""
    fixtures = schedule(config)
    names = [b.name for b in config.bots]
    journal = config.output / JOURNAL
    try:
        state = jn.scan(journal, fixtures, names)
        complete = _complete(config, state.count, fixtures.total, stopped is not None)
        settings = published_settings(config, complete=complete)
        if (config.seed_secret and complete) or stopped is not None:
            write_tournament_file(config.output, settings, fixtures.total, stopped)
        watch = Watch()  # the replay pages' matches, chosen as the standings read the journal
        lines = jn.read_journal(journal)
        board = standings(
            tournament_document(settings, fixtures.total, stopped),
            watch(lines) if transcripts.exists(config.output) else lines,
            config.output,
            names,
            on_progress,
        )
        paths = write_leaderboard(config.output, board, on_progress=on_progress)
    except OSError as exc:
        raise write_error(Path(exc.filename or config.output), exc) from exc
    return Published(board, tuple(paths), _write_replays(config.output, on_progress, watch))


def _complete(config: TournamentConfig, count: int, total: int, stopped: bool) -> bool:
    """A run whose secret seed may be revealed: every match played (a ladder's dropped
    tables aside) or stopped settled; a ladder only once its season is ``closed``."""
    if not format_class(config).adaptive:
        return count == total or stopped
    dropped = len((config.ladder or {}).get("dropped", ()))
    return config.closed and (count + dropped >= total or stopped)


def publish_live(config: TournamentConfig, scheduled: int, now: datetime.datetime | None = None) -> Leaderboard:
    """Render the outputs from the journal as it stands, marked as in progress (``live``:
    the matches it covers and when); every file replaced whole."""
    board = build_leaderboard(
        tournament_document(published_settings(config, complete=False), scheduled),
        jn.read_journal(config.output / JOURNAL),
    )
    at = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%d %H:%M:%S UTC")
    board.document["live"] = {"matches": board.document["matches"], "scheduled": scheduled, "at": at}
    use_run_timings(board, config.output, [b.name for b in config.bots])
    write_leaderboard(config.output, board)
    return board


def rebuild(out: Path, formats: Iterable[str], on_progress: OnProgress = nothing) -> Published:
    """Render the files of ``formats`` in the output folder ``out`` again from its journal
    and ``tournament.json`` (``referee leaderboard``), with the replay pages when html is
    among them. ``LeaderboardError``: a folder that cannot be rendered; ``OutputError``: a
    file that cannot be written. ``on_progress`` is told how the work goes."""
    formats = tuple(formats)
    tournament, lines = load_output_dir(out)
    watch = Watch()  # as in publish_final
    records: Iterable[Mapping[str, Any]] = watch(lines) if "html" in formats and transcripts.exists(out) else lines
    board = standings(tournament, records, out, tournament["settings"]["bots"], on_progress)
    paths = write_leaderboard(out, board, formats, on_progress)
    return Published(board, tuple(paths), _write_replays(out, on_progress, watch) if "html" in formats else ())


def standings(
    tournament: Mapping[str, Any],
    records: Iterable[Mapping[str, Any]],
    out: Path,
    names: list[str],
    on_progress: OnProgress = nothing,
) -> Leaderboard:
    """The leaderboard of ``records`` (its standings step told to ``on_progress``), with the
    response times of the run's summary in ``out`` where there is one."""
    on_progress(0, 1, STANDINGS_STEP)
    with cycles_paused():
        board = build_leaderboard(tournament, records)
    on_progress(1, 1, STANDINGS_STEP)
    use_run_timings(board, out, names)
    return board


@contextmanager
def cycles_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the journal's pass: the pass makes millions
    of short-lived objects, and each full collection walks a heap that grows with the
    columns, finding nothing to free (peak memory is the same without it): at 1,000,000
    matches its passes were about 13 % of publishing (``benchmarks/publish.py``)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def use_run_timings(board: Leaderboard, out: Path, names: list[str]) -> None:
    """Put the response times of the run's summary saved in ``out`` into ``board``, when
    there is one (see the module doc)."""
    saved = Timings.load(out)
    if saved is not None:
        board.timings = {"tournament": board.timings["tournament"], **saved.document(names)}


def _write_replays(out: Path, on_progress: OnProgress, watch: Watch) -> tuple[str, ...]:
    """Write the match list and replay pages (of the matches ``watch`` chose); a bad
    transcript or a full disk costs the pages (a warning), never the journal or the standings."""
    try:
        write_replays(out, on_progress=on_progress, watch=watch)
    except RefereeError as exc:
        return (f"replay pages not written: {exc}",)
    except OSError as exc:
        return (f"replay pages not written: {exc.filename or out}: {exc.strerror}",)
    return ()
