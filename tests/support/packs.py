"""Replay packs for folders written without a run (the page and pack tests)."""

from __future__ import annotations

from pathlib import Path

from referee.games import get_game
from referee.store import packs, transcripts
from referee.store.tournament_file import load_output_dir


def write_packs(out: Path, moves_only: bool | None = None) -> None:
    """The packs of a folder made without them, as a resumed run makes missing entries."""
    tournament, lines = load_output_dir(out)
    settings = tournament["settings"]
    entries = packs.Entries(get_game(settings["game"]), settings["options"])
    if moves_only is not None:
        entries.moves_only = moves_only
    with packs.PackWriter(out, resume=False) as w:
        packs.fill(w, entries, list(lines), lambda ids: transcripts.find_many(out, ids))
