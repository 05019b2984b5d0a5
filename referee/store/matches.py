"""One played match as an output folder keeps it: its journal line, its transcript, and
the game and options of ``tournament.json``, loaded for ``referee replay`` and the viewer."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import LeaderboardError, ReplayError
from referee.games import get_game
from referee.games.base import Game, OptionError
from referee.match.frames import Frame, frames
from referee.store import transcripts
from referee.store.tournament_file import TOURNAMENT_FILE, load_output_dir


@dataclass
class Match:
    """A played match: the game, its options, the journal line, the transcript and the
    tournament's name."""

    game: Game
    options: dict[str, Any]
    record: dict[str, Any]
    transcript: transcripts.Transcript
    tournament: str

    def frames(self, after: bool = False) -> Iterator[Frame]:
        """The match's decisions through the rules (``match.frames.frames``)."""
        rec = self.record
        try:
            yield from frames(self.game, self.options, rec["seed"], len(rec["bots"]), self.transcript.moves, after)
        except ReplayError as exc:
            raise ReplayError(f"match {rec['id']}: {exc}") from exc


def match_of(
    game: Game, settings: Mapping[str, Any], record: Mapping[str, Any], transcript: transcripts.Transcript
) -> Match:
    """The match of the journal line ``record`` in a tournament of ``settings``."""
    options = options_of(game, settings, len(record["bots"]))
    return Match(game, options, dict(record), transcript, str(settings.get("name", "")))


def load_match(out: Path, match_id: str) -> Match:
    """The match ``match_id`` (an id such as m000042, or its fixture index) of ``out``."""
    tournament, records = load_output_dir(out)
    settings = tournament["settings"]
    rec = next((r for r in records if str(r.get("id")) == match_id or str(r.get("index")) == match_id), None)
    if rec is None:
        raise ReplayError(f"{out}: no match {match_id!r} in the journal")
    if not transcripts.exists(out):
        raise ReplayError(f'{out}: no transcripts (the run had [tournament] transcripts = "none")')
    tr = transcripts.find(out, str(rec["id"]))
    if tr is None:
        raise ReplayError(f"{out}: match {rec['id']} has no transcript")
    return match_of(game_of(settings), settings, rec, tr)


def game_of(settings: Mapping[str, Any]) -> Game:
    """The game of a tournament's ``settings``; LeaderboardError naming the file if unknown."""
    try:
        return get_game(str(settings["game"]))
    except KeyError as exc:
        raise LeaderboardError(f"unknown game {settings['game']!r} in {TOURNAMENT_FILE}") from exc


def options_of(game: Game, settings: Mapping[str, Any], seats: int) -> dict[str, Any]:
    """The game's options of ``settings`` for ``seats`` seats, defaults filled; an option the
    game refuses (a hand-edited or hostile file) is a LeaderboardError naming the file."""
    try:
        return game.check_options(seats, settings.get("options", {}))
    except OptionError as exc:
        raise LeaderboardError(f"{TOURNAMENT_FILE}: settings.options: {exc}") from exc
