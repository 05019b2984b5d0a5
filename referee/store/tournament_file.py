"""``tournament.json``: the settings and the scheduled match count a re-render needs
besides the journal. The one module that writes, reads and checks it."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from referee.config.model import NAME_RE, SCHEDULE_VERSION, STOP_RULES
from referee.errors import JournalError, LeaderboardError
from referee.schedule.registry import FORMATS
from referee.schedule.settings import SETTINGS, required_keys
from referee.store.files import atomic_write
from referee.store.journal import JOURNAL, MAX_DEPTH, MAX_SEATS, MAX_STR, FieldCheck, no_constant, read_journal

TOURNAMENT_FILE = "tournament.json"


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


def as_found(out: Path) -> dict[str, Any]:
    """``out/tournament.json`` as it is, unchecked ({} when there is none or it is not a JSON
    object): what a refused run says of a folder before anything reads it for real."""
    try:
        doc = json.loads((out / TOURNAMENT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


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
            f"(it needs scheduled and settings with {', '.join(required_keys())})"
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
    """The settings of ``tournament.json``, key by key as ``SETTINGS`` declares them: the
    required ones first (the bots before the challengers that name them), then those present."""
    keys = [k for k, d in SETTINGS.items() if d.required] + [k for k, d in SETTINGS.items() if not d.required]
    for key in keys:
        declared = SETTINGS[key]
        if declared.required or (key in s and (s[key] is not None or declared.kind not in _NULLABLE)):
            _KIND_CHECKS[declared.kind](s, key, declared.minimum, c)


_NULLABLE = ("seed", "size")  # kinds whose null is a value: a secret seed, a size the format does not use


def _name(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    if not isinstance(s.get(key), str) or not NAME_RE.match(s[key]):
        c.fail(key, "missing or not a name of 1-64 letters, digits, '.', '_' or '-'")


def _options(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    if not isinstance(s.get(key), dict):
        c.fail(key, "missing or not an object")
    c.depth(s[key], key, MAX_DEPTH - 2)
    if any(len(k) > 64 for k in s[key]):
        c.fail(key, "has a key longer than 64 characters")


def _seats(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    c.integer(s, key, 1)
    if s[key] > MAX_SEATS:
        c.fail(key, f"more than {MAX_SEATS}")


def _format(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    if not isinstance(s.get(key), str) or s[key] not in FORMATS:
        c.fail(key, f"must be one of {', '.join(FORMATS)}")


def _version(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    c.integer(s, key, 1)
    if s[key] > SCHEDULE_VERSION:
        c.fail(key, f"{s[key]} is newer than this referee's ({SCHEDULE_VERSION})")


def _bool(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    if not isinstance(s[key], bool):
        c.fail(key, "not true/false")


def _text(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    if not isinstance(s.get(key), str) or len(s[key]) > 64:
        c.fail(key, "missing or not a short string")


def _stop(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    if s[key] not in STOP_RULES:
        c.fail(key, f"must be {' or '.join(STOP_RULES)}")


def _bots(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    bots = c.lst(s, key, 1, 100_000)
    for i, b in enumerate(bots):
        if not isinstance(b, str) or not NAME_RE.match(b):
            c.fail(f"{key}[{i}]", "not a bot name of 1-64 letters, digits, '.', '_' or '-'")
    if len(set(bots)) != len(bots):
        c.fail(key, "a name appears twice")


def _challengers(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    bots = s["bots"]  # checked before: it is required
    if any(x not in bots for x in c.lst(s, key, 1, len(bots))):
        c.fail(key, "names a bot that is not in bots")


def _final(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    """A ladder's final: { bots, matches }, integers of at least 2 and 1."""
    final = s[key]
    if not isinstance(final, dict) or set(final) != {"bots", "matches"}:
        c.fail(key, "not an object with bots and matches")
    c.integer(final, "bots", 2)
    c.integer(final, "matches", 1)


def _excluded(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    for i, e in enumerate(c.lst(s, key, 0, 100_000)):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not NAME_RE.match(e["name"]):
            c.fail(f"{key}[{i}]", "not an object with a bot name")
        if not isinstance(e.get("reason"), str) or len(e["reason"]) > MAX_STR:
            c.fail(f"{key}[{i}].reason", "missing or not a string")


def _sha256(s: Mapping[str, Any], key: str, minimum: int, c: FieldCheck) -> None:
    if not isinstance(s[key], str) or not re.match(r"^[0-9a-f]{64}\Z", s[key]):
        c.fail(key, "not a SHA-256 in hex")


_KIND_CHECKS: dict[str, Callable[[Mapping[str, Any], str, int, FieldCheck], None]] = {
    "name": _name,
    "options": _options,
    "seed": lambda s, key, minimum, c: c.integer(s, key, 0) if s.get(key) is not None else None,
    "seats": _seats,
    "format": _format,
    "size": lambda s, key, minimum, c: c.integer(s, key, 1),
    "version": _version,
    "integer": lambda s, key, minimum, c: c.integer(s, key, minimum),
    "number": lambda s, key, minimum, c: c.number(s, key),
    "bool": _bool,
    "text": _text,
    "stop": _stop,
    "bots": _bots,
    "challengers": _challengers,
    "ladder": lambda s, key, minimum, c: _check_ladder(s[key], s["bots"], c),
    "final": _final,
    "excluded": _excluded,
    "sha256": _sha256,
    "any": lambda s, key, minimum, c: None,
}


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
