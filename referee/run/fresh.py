"""No run loses a season: what an output folder holds, and ``--fresh``.

``referee run`` over a folder whose journal has lines refuses without ``--resume`` or
``--fresh`` (``season_line`` says what is there). ``--fresh`` moves everything in the
folder but ``previous/`` into ``previous/<UTC date and time>/``, never over an earlier
one, in steps a ``kill -9`` cannot tear: the entries go one by one (each a rename) into
``previous/.<stamp>.partial``, which is renamed to ``previous/<stamp>`` at the end; the
next run finds a ``.partial`` folder and finishes its move (``finish_moves``) before
anything else. A season whose secret seed was revealed is closed: ``closed_reason`` says
why a resume that would deal more matches from it is refused.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import JournalError
from referee.run.seeds import SEED_FILE
from referee.schedule.registry import FORMATS
from referee.store.journal import JOURNAL, count_lines
from referee.store.tournament_file import as_found

PREVIOUS = "previous"  # the folder of earlier seasons, inside the output folder
_PARTIAL = ".partial"


@dataclass(frozen=True)
class Season:
    """What an output folder holds of a season: its finished matches and its seed."""

    matches: int
    seed: str  # "secret seed", "secret seed, revealed" or "seed N"
    closed: bool

    def line(self) -> str:
        """The season in a few words: ``120 matches, secret seed, open``."""
        return f"{self.matches} match{'es' if self.matches != 1 else ''}, {self.seed}, {'closed' if self.closed else 'open'}"


def season_of(out: Path) -> Season | None:
    """The season in ``out``, or None when its journal has no line (nothing to lose)."""
    journal = out / JOURNAL
    if not journal.is_file() or journal.stat().st_size == 0:
        return None
    settings = _settings(out)
    revealed = "seed_commitment" in settings and "seed" in settings
    if revealed:
        seed = "secret seed, revealed"
    elif "seed_commitment" in settings or (out / SEED_FILE).exists():
        seed = "secret seed"
    else:
        seed = f"seed {settings['seed']}" if "seed" in settings else "seed unknown"
    closed = revealed or settings.get("closed") is True  # a season's own key (the ladder's)
    return Season(count_lines(journal), seed, closed)


def _adaptive(settings: Mapping[str, Any]) -> bool:
    """True when the recorded format chooses its tables from the results (a ladder: more
    matches come at any resume unless the season is closed)."""
    name = settings.get("format")
    fmt = FORMATS.get(name) if isinstance(name, str) else None
    return fmt is not None and fmt.adaptive


def season_line(out: Path, season: Season) -> str:
    """The one line of a refused run: what is there and the two ways on."""
    return (
        f"{out} holds a season ({season.line()}): go on with --resume, or start a new one with --fresh "
        f"(moves it to {out / PREVIOUS}/<date>/)"
    )


def closed_reason(out: Path, scheduled: int, closed_now: bool, grow: bool) -> str | None:
    """Why resuming the season in ``out`` is refused, or None: its secret seed was revealed
    and the run would deal more from it (more matches, ``grow``, or ``closed`` undone)."""
    settings = _settings(out)
    if "seed_commitment" not in settings or "seed" not in settings:
        return None
    recorded = as_found(out).get("scheduled")
    if recorded == scheduled and not grow and (not _adaptive(settings) or closed_now):
        return None
    return (
        f"{out}: this season is closed (its secret seed was revealed, so more matches would be dealt from a "
        "public seed); a new season is a new --output, or --fresh"
    )


def stamp(now: datetime.datetime | None = None) -> str:
    """The name of a dated folder: UTC date and time to the second."""
    return (now or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%dT%H-%M-%SZ")


def move_aside(out: Path, when: str, step: Callable[[], None] = lambda: None) -> Path | None:
    """Move everything in ``out`` but ``previous/`` into ``previous/<when>`` (or
    ``<when>-2``, ... when taken); return it, None when there was nothing to move.
    ``step`` is called after each step (a seam for the crash tests)."""
    entries = sorted(p.name for p in out.iterdir() if p.name != PREVIOUS) if out.is_dir() else []
    if not entries:
        return None
    partial = out / PREVIOUS / f".{when}{_PARTIAL}"
    partial.mkdir(parents=True)
    _sync(partial.parent)
    step()
    return _finish(out, partial, step)


def finish_moves(out: Path, step: Callable[[], None] = lambda: None) -> list[Path]:
    """Finish every move a killed ``--fresh`` left half done in ``out``; their folders."""
    previous = out / PREVIOUS
    if not previous.is_dir():
        return []
    partials = sorted(p for p in previous.iterdir() if p.name.startswith(".") and p.name.endswith(_PARTIAL))
    return [_finish(out, partial, step) for partial in partials]


def _finish(out: Path, partial: Path, step: Callable[[], None]) -> Path:
    """Move what is left in ``out`` into ``partial``, then rename it to its dated name."""
    for name in sorted(p.name for p in out.iterdir() if p.name != PREVIOUS):
        if (partial / name).exists():  # cannot happen but by hand: never overwrite the old season
            raise JournalError(f"{out / name}: also in {partial}; move one of them away by hand")
        os.rename(out / name, partial / name)
        _sync(out)
        step()
    when = partial.name[1 : -len(_PARTIAL)]
    final, n = out / PREVIOUS / when, 1
    while final.exists():
        n += 1
        final = out / PREVIOUS / f"{when}-{n}"
    os.rename(partial, final)
    _sync(final.parent)
    step()
    return final


def _sync(folder: Path) -> None:
    """Make the renames in ``folder`` durable (a power cut keeps them too)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _settings(out: Path) -> Mapping[str, Any]:
    """The settings of ``tournament.json`` in ``out`` ({} when unreadable)."""
    settings = as_found(out).get("settings")
    return settings if isinstance(settings, dict) else {}
