"""``tournament.json``: the settings and the scheduled match count a re-render needs
besides the journal. The one module that writes, reads and checks it."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from referee.config.model import FORMATS, NAME_RE, SCHEDULE_VERSION, STOP_RULES
from referee.errors import JournalError, LeaderboardError
from referee.store.files import atomic_write
from referee.store.journal import JOURNAL, MAX_DEPTH, MAX_SEATS, MAX_STR, FieldCheck, no_constant, read_journal

TOURNAMENT_FILE = "tournament.json"
_NEEDED_SETTINGS = (
    "name",
    "game",
    "seed",
    "format",
    "players",
    "bots",
    "options",
    "deadline_ms",
    "on_fault",
    "max_faults",
)


def tournament_document(
    settings: Mapping[str, Any], scheduled: int, stopped: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The content of ``tournament.json``, JSON-normalised so that reading it back gives it
    again; ``stopped``: why a ``stop = "settled"`` run ended."""
    body: dict[str, Any] = {"settings": dict(settings), "scheduled": scheduled}
    if stopped is not None:
        body["stopped"] = dict(stopped)
    doc: dict[str, Any] = json.loads(json.dumps(body))
    return doc


def write_tournament_file(
    out: Path, settings: Mapping[str, Any], scheduled: int, stopped: Mapping[str, Any] | None = None
) -> Path:
    """Write ``tournament.json`` into ``out`` (created if needed); return its path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / TOURNAMENT_FILE
    atomic_write(path, json.dumps(tournament_document(settings, scheduled, stopped), indent=2) + "\n")
    return path


def read_settings(out: Path) -> dict[str, Any] | None:
    """The checked settings of ``out/tournament.json``; None when there is none (or it
    cannot be read: the run that reads it writes it again)."""
    try:
        doc = json.loads((out / TOURNAMENT_FILE).read_text(encoding="utf-8"), parse_constant=no_constant)
        settings: dict[str, Any] = check_tournament(doc, out / TOURNAMENT_FILE)["settings"]
    except (OSError, ValueError, UnicodeDecodeError, RecursionError, LeaderboardError):
        return None
    return settings


def load_output_dir(out: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """The checked tournament document of the output folder ``out`` and its journal's lines
    (a generator: the journal is read once, line by line, when the lines are consumed)."""
    if not out.is_dir():
        raise LeaderboardError(f"{out}: no such output folder")
    tfile, journal = out / TOURNAMENT_FILE, out / JOURNAL
    if not tfile.is_file():
        raise LeaderboardError(f"{tfile}: not found (referee run writes it when a run starts)")
    if not journal.is_file():
        raise LeaderboardError(f"{journal}: not found (no match of this tournament has been played)")
    try:
        tournament = json.loads(tfile.read_text(encoding="utf-8"), parse_constant=no_constant, parse_float=_finite)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise LeaderboardError(f"{tfile}: not JSON ({exc})") from exc
    return check_tournament(tournament, tfile), iter_journal(journal)


def iter_journal(path: Path) -> Iterator[dict[str, Any]]:
    """The validated lines of the journal at ``path``, one at a time (flat memory), read as
    ``referee run --resume`` reads them (a torn last line is left out); a damaged line is
    a LeaderboardError naming the line and field."""
    try:
        yield from read_journal(path)
    except JournalError as exc:
        raise LeaderboardError(str(exc)) from exc


def check_tournament(doc: Any, where: Path | str = TOURNAMENT_FILE) -> dict[str, Any]:
    """``doc`` if a re-render can trust it (types, lengths, finite numbers, names as the
    config accepts them); a LeaderboardError naming the field otherwise."""
    if not isinstance(doc, dict):
        raise LeaderboardError(f"{where}: not a JSON object")
    c = FieldCheck(str(where), LeaderboardError)
    c.integer(doc, "scheduled", 0)
    if "stopped" in doc:
        st = doc["stopped"]
        if not isinstance(st, dict) or not isinstance(st.get("reason"), str) or len(st["reason"]) > MAX_STR:
            c.fail("stopped", "not an object with a reason")
        c.depth(st, "stopped", MAX_DEPTH - 2)
    s = doc.get("settings")
    if not isinstance(s, dict):
        c.fail("settings", "missing or not an object")
    _check_settings(s, FieldCheck(f"{where}: settings", LeaderboardError))
    if "seed" not in s:
        raise LeaderboardError(
            f"{where}: not a tournament file written by referee run "
            f"(it needs scheduled and settings with {', '.join(_NEEDED_SETTINGS)})"
        )
    if s["seed"] is None and not (s.get("seed_secret") is True and "seed_commitment" in s):
        raise LeaderboardError(f"{where}: settings.seed must be an integer")  # unrevealed: a secret's commitment
    return doc


def bootstrap_seed(settings: Mapping[str, Any]) -> int:
    """The seed of the verdicts' resamples: the tournament's, or while a secret seed is
    not yet revealed (an open ladder season) a number taken from its commitment, which
    tells nothing of the seed."""
    seed = settings.get("seed")
    return int(seed) if seed is not None else int(str(settings["seed_commitment"])[:16], 16)


def _check_settings(s: Mapping[str, Any], c: FieldCheck) -> None:
    """The settings of ``tournament.json``, field by field."""
    for key in ("name", "game"):
        if not isinstance(s.get(key), str) or not NAME_RE.match(s[key]):
            c.fail(key, "missing or not a name of 1-64 letters, digits, '.', '_' or '-'")
    if s.get("format") not in FORMATS:
        c.fail("format", f"must be one of {', '.join(FORMATS)}")
    c.integer(s, "players", 1)
    if s["players"] > MAX_SEATS:
        c.fail("players", f"more than {MAX_SEATS}")
    bots = c.lst(s, "bots", 1, 100_000)
    for i, b in enumerate(bots):
        if not isinstance(b, str) or not NAME_RE.match(b):
            c.fail(f"bots[{i}]", "not a bot name of 1-64 letters, digits, '.', '_' or '-'")
    if len(set(bots)) != len(bots):
        c.fail("bots", "a name appears twice")
    if s.get("seed") is not None:
        c.integer(s, "seed", 0)
    if not isinstance(s.get("options"), dict):
        c.fail("options", "missing or not an object")
    c.depth(s["options"], "options", MAX_DEPTH - 2)
    for k in s["options"]:
        if len(k) > 64:
            c.fail("options", "has a key longer than 64 characters")
    c.integer(s, "deadline_ms", 1)
    c.integer(s, "max_faults", 0)
    if not isinstance(s.get("on_fault"), str) or len(s["on_fault"]) > 64:
        c.fail("on_fault", "missing or not a short string")
    if "sandbox" in s and (not isinstance(s["sandbox"], str) or len(s["sandbox"]) > 64):
        c.fail("sandbox", "not a short string")
    for key in ("rounds", "matches"):
        if s.get(key) is not None:
            c.integer(s, key, 1)
    if "schedule_version" in s:
        c.integer(s, "schedule_version", 1)
        if s["schedule_version"] > SCHEDULE_VERSION:
            c.fail("schedule_version", f"{s['schedule_version']} is newer than this referee's ({SCHEDULE_VERSION})")
    if "challengers" in s:
        chal = c.lst(s, "challengers", 1, len(bots))
        if any(x not in bots for x in chal):
            c.fail("challengers", "names a bot that is not in bots")
    if "ladder" in s:
        _check_ladder(s["ladder"], bots, c)
    for key in ("duplicate", "seed_secret", "challengers_meet", "grow", "closed"):
        if key in s and not isinstance(s[key], bool):
            c.fail(key, "not true/false")
    if "stop" in s and s["stop"] not in STOP_RULES:
        c.fail("stop", "must be all or settled")
    for key in ("top", "batch"):
        if key in s:
            c.integer(s, key, 0)
    if "confidence" in s:
        c.number(s, "confidence")
    if "time_bank_ms" in s:
        c.integer(s, "time_bank_ms", 0)
    if "max_fault_rate" in s:
        c.number(s, "max_fault_rate")
    if "excluded" in s:
        for i, e in enumerate(c.lst(s, "excluded", 0, 100_000)):
            if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not NAME_RE.match(e["name"]):
                c.fail(f"excluded[{i}]", "not an object with a bot name")
            if not isinstance(e.get("reason"), str) or len(e["reason"]) > MAX_STR:
                c.fail(f"excluded[{i}].reason", "missing or not a string")
    if "seed_commitment" in s and (
        not isinstance(s["seed_commitment"], str) or not re.match(r"^[0-9a-f]{64}\Z", s["seed_commitment"])
    ):
        c.fail("seed_commitment", "not a SHA-256 in hex")


_ENTRY_VERSION = re.compile(r"[0-9a-f]{12}\Z")


def _entry(key: Any) -> bool:
    """True for a ladder entry key: a bot name, or ``name@version`` (12 hex digits)."""
    if not isinstance(key, str):
        return False
    name, at, version = key.partition("@")
    return bool(NAME_RE.match(name)) and (not at or bool(_ENTRY_VERSION.match(version)))


def _check_ladder(doc: Any, bots: list[Any], c: FieldCheck) -> None:
    """A ladder's epoch size and lineup history: segments of (first epoch, entry keys), in order."""
    if not isinstance(doc, dict):
        c.fail("ladder", "not an object")
    c.integer(doc, "epoch_tables", 1)
    segments = c.lst(doc, "lineups", 1, 1_000_000)
    last = -1
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict) or not _int(seg.get("from")) or seg["from"] <= last:
            c.fail(f"ladder.lineups[{i}]", "not a segment with a from epoch after the one before")
        last = seg["from"]
        names = seg.get("bots")
        if not isinstance(names, list) or not all(_entry(b) for b in names):
            c.fail(f"ladder.lineups[{i}].bots", "not a list of bot names (name or name@version)")
    for i, d in enumerate(c.lst(doc, "dropped", 0, 100_000_000) if "dropped" in doc else []):
        ok = isinstance(d, list) and len(d) == 2 and _int(d[0]) and isinstance(d[1], list)
        if not ok or not all(_entry(b) for b in d[1]):
            c.fail(f"ladder.dropped[{i}]", "not [fixture index, [bot names (name or name@version)]]")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _finite(text: str) -> float:
    """A JSON number as a float; one beyond the float range (1e999) is refused, not infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of the range of a number")
    return value


def recorded_schedule_version(out: Path) -> int | None:
    """The ``schedule_version`` of the random tables the run in ``out`` was made with (1 when
    its ``tournament.json`` names none), or None without a readable ``tournament.json``."""
    path = out / TOURNAMENT_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    settings = doc.get("settings") if isinstance(doc, dict) else None
    if not isinstance(settings, dict):
        return None
    version = settings.get("schedule_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise JournalError(f"{path}: settings.schedule_version: not a positive integer")
    if version > SCHEDULE_VERSION:
        raise JournalError(
            f"{path}: the run was made by a newer referee (random tables version {version}, this referee "
            f"deals up to {SCHEDULE_VERSION}): resume it with that referee"
        )
    return version
