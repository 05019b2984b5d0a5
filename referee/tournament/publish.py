"""Writes the leaderboard files of an output folder, from its journal alone.

``referee run`` (at the end) and ``referee leaderboard`` (any time later) publish
through the same functions, so both write the same bytes. Files:

- ``README.md``: the settings, the standings table with intervals (tabulate), the DQ
  lines, a head-to-head table and a seat-bias table.
- ``standings.json``: the document described below.
- ``standings.csv``: one row per bot, flat columns.
- ``index.html``: the self-contained page (``page.py``).
- ``timings.json``: response times per bot (decisions, p50, p90, p99, max ms), the
  run's total match seconds and the decisions voided because the referee itself was
  late: the only output that differs between two runs of the same tournament with
  deterministic bots.
- ``tournament.json``: written by ``referee run`` as it starts: the config's settings
  (no tokens, urls or commands) and the scheduled match count, which is everything a
  re-render needs besides the journal.

The first four hold no response time or duration and depend only on the journal's
records in fixture order (never on file order): floats are rounded, keys come in a
fixed order, so the same journal gives the same bytes. Every file is written to a
temporary name and renamed, so a reader never sees half a file.

``standings.json``::

    tournament, game, matches (played), scheduled, lower_score_wins, settings,
    method          how the verdicts were computed (unit, deals, resamples, ...)
    standings       one row per bot in leaderboard order: rank (an int, or "DQ"),
                    name, matches, wins, win_rate, mean_rank, mean_rank_ci [lo, hi]
                    (null in cooperative games), mean_score, mean_score_ci [lo, hi],
                    rank_interval [lo, hi], rating {mu, sigma, ordinal}, faults
                    {timeout, error, malformed, illegal, total}, notice_faults,
                    forfeits, decisions, restarts, disqualified, disqualified_note,
                    <the game's stats>, deals, score_summary {min, q1, median, q3, max}
    head_to_head    [{bot, opponent, meetings, above, below, ties, share}], every
                    ordered pair of distinct bots, in leaderboard order
    seat_bias       [{seat, matches, mean_score, mean_score_ci, mean_rank,
                    mean_rank_ci}], or null for cooperative games
    rating_history  {games, step: [rated games so far], mu: {bot: [mu at each step]}}

Exception: ``LeaderboardError`` (a ``RefereeError``): an output folder that cannot be
rendered (no folder, journal or tournament.json; a damaged journal; an unknown game).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from .. import __version__
from ..errors import JournalError, RefereeError
from ..games import get_game
from ..games.base import Game
from ..record import MatchRecord
from .journal import JOURNAL, line_record, read_journal, validate_tournament
from .page import (
    H2H_NOTE,
    MINUS_3_SIGMA,
    NO_SEAT_BIAS,
    SEAT_NOTE,
    fmt,
    fmt_ci,
    fmt_faults,
    fmt_pair,
    fmt_range,
    fmt_wins,
    ranking_text,
    render_page,
    role_mark,
    settings_lines,
)
from .standings import compute_standings, compute_timings
from .verdicts import DEFAULT_RESAMPLES, analyse

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
FORMATS: dict[str, tuple[str, ...]] = {
    "md": ("README.md",),
    "html": ("index.html",),
    "json": ("standings.json", "timings.json"),
    "csv": ("standings.csv",),
}


class LeaderboardError(RefereeError):
    """An output folder whose leaderboard cannot be rendered; the message names the file."""


@dataclass
class Leaderboard:
    """Everything the output files are rendered from."""

    game: Game
    document: dict[str, Any]  # standings.json
    timings: dict[str, Any]  # timings.json


def tournament_document(
    settings: Mapping[str, Any], scheduled: int, stopped: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The content of ``tournament.json``, JSON-normalised so that reading it back gives it
    again; ``stopped``: why a ``stop = "settled"`` run ended."""
    body: dict[str, Any] = {"settings": dict(settings), "scheduled": scheduled}
    if stopped is not None:
        body["stopped"] = dict(stopped)
    doc: dict[str, Any] = json.loads(json.dumps(body, allow_nan=False))
    return doc


def write_tournament_file(
    out: Path, settings: Mapping[str, Any], scheduled: int, stopped: Mapping[str, Any] | None = None
) -> Path:
    """Write ``tournament.json`` into ``out`` (created if needed); return its path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / TOURNAMENT_FILE
    doc = tournament_document(settings, scheduled, stopped)
    _atomic_write(path, json.dumps(doc, indent=2, allow_nan=False) + "\n")
    return path


def load_output_dir(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The tournament document and the journal records of the output folder ``out``."""
    if not out.is_dir():
        raise LeaderboardError(f"{out}: no such output folder")
    tfile, journal = out / TOURNAMENT_FILE, out / JOURNAL
    if not tfile.is_file():
        raise LeaderboardError(f"{tfile}: not found (referee run writes it when a run starts)")
    if not journal.is_file():
        raise LeaderboardError(f"{journal}: not found (no match of this tournament has been played)")
    try:
        tournament = json.loads(tfile.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise LeaderboardError(f"{tfile}: not JSON ({exc})") from exc
    settings = tournament.get("settings") if isinstance(tournament, dict) else None
    if (
        not isinstance(settings, dict)
        or "scheduled" not in tournament
        or any(k not in settings for k in _NEEDED_SETTINGS)
    ):
        raise LeaderboardError(
            f"{tfile}: not a tournament file written by referee run "
            f"(it needs scheduled and settings with {', '.join(_NEEDED_SETTINGS)})"
        )
    try:
        validate_tournament(tournament, str(tfile))
    except JournalError as exc:
        raise LeaderboardError(str(exc)) from exc
    return tournament, read_records(journal)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The journal lines of ``path``; a torn last line (a killed run) is left out, as
    ``referee run --resume`` leaves it out."""
    try:
        return list(read_journal(path))
    except JournalError as exc:
        raise LeaderboardError(str(exc)) from exc


def build_leaderboard(
    tournament: Mapping[str, Any], records: Iterable[Mapping[str, Any]], resamples: int = DEFAULT_RESAMPLES
) -> Leaderboard:
    """Standings, verdicts and timings of the journal ``records`` (any order)."""
    settings = tournament["settings"]
    try:
        game = get_game(settings["game"])
    except KeyError as exc:
        raise LeaderboardError(f"unknown game {settings['game']!r} in {TOURNAMENT_FILE}") from exc
    names = list(settings["bots"])
    recs = _records(records, names, skip_unknown=bool(settings.get("grow")))
    rows = compute_standings(game, names, recs)
    verdicts = analyse(game, names, recs, settings["seed"], resamples)
    order = {r["name"]: i for i, r in enumerate(rows)}
    standings = [_row(r, verdicts.bots[r["name"]]) for r in rows]
    if settings.get("challengers"):  # a gauntlet: the challengers are ranked, the field shown for reference
        for row in standings:
            row["role"] = "challenger" if row["name"] in settings["challengers"] else "field"
    doc = {
        "tournament": settings["name"],
        "game": settings["game"],
        "matches": len(recs),
        "scheduled": tournament["scheduled"],
        "lower_score_wins": recs[0].lower_is_better if recs else False,
        "settings": dict(settings),
        "method": verdicts.method,
        "standings": standings,
        "head_to_head": sorted(verdicts.head_to_head, key=lambda p: (order[p["bot"]], order[p["opponent"]])),
        "seat_bias": verdicts.seat_bias,
        "rating_history": {
            **verdicts.rating_history,
            "mu": {r["name"]: verdicts.rating_history["mu"][r["name"]] for r in rows},
        },
    }
    if "stopped" in tournament:  # stop = "settled": why the run ended before (or at) its budget
        doc["stopped"] = tournament["stopped"]
    return Leaderboard(game, doc, {"tournament": settings["name"], **compute_timings(names, recs)})


def write_leaderboard(out: Path, board: Leaderboard, formats: Iterable[str] = tuple(FORMATS)) -> list[Path]:
    """Write the files of ``formats`` (keys of FORMATS) into ``out``; return their paths."""
    render = {
        "README.md": lambda: render_markdown(board),
        "index.html": lambda: render_page(board.game, board.document),
        "standings.json": lambda: _json(board.document),
        "timings.json": lambda: _json(board.timings),
        "standings.csv": lambda: render_csv(board),
    }
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt_name in formats:
        for filename in FORMATS[fmt_name]:
            paths.append(out / filename)
            _atomic_write(paths[-1], render[filename]())
    return paths


def render_markdown(board: Leaderboard) -> str:
    """The content of ``README.md``."""
    game, doc = board.game, board.document
    dq = [f"- **DQ** {r['name']}: {r['disqualified_note']}" for r in doc["standings"] if r["disqualified"]]
    lines = [f"# {doc['tournament']}: leaderboard", ""]
    lines += [f"- {label}: {text}" for label, text in settings_lines(game, doc)]
    lines += ["", render_table(game, doc), ""]
    lines += dq + ([""] if dq else [])
    lines += [ranking_text(game, doc), "", "## Head-to-head", "", H2H_NOTE, "", _h2h_table(doc), "", "## Seat bias", ""]
    if doc["seat_bias"] is None:
        lines.append(NO_SEAT_BIAS)
    else:
        lines += [_seat_table(doc), "", SEAT_NOTE]
    lines += [
        "",
        f"Made by referee {__version__}; the per-match record is in `matches.jsonl`, response times "
        "in `timings.json`, the page in `index.html`.",
        "",
    ]
    return "\n".join(lines)


def table_rows(game: Game, doc: Mapping[str, Any], stats: bool = True) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the standings table (with the game's stat columns when ``stats``)."""
    coop = game.info.cooperative
    rows = doc["standings"]
    specs = game.info.stats if stats else ()
    restarts = any(r["restarts"] for r in rows)  # a column only when a bot was restarted
    headers = ["Rank", "Bot", "Matches", "Wins (share)"] + ([] if coop else ["Mean rank [95% CI]"])
    headers += ["Mean score [95% CI]", "Rank range", f"Rating {MINUS_3_SIGMA}"] + [s.title for s in specs]
    headers += ["Faults t/e/m/i"] + (["Restarts"] if restarts else [])
    out = []
    for r in rows:
        line = [str(r["rank"]), r["name"] + role_mark(r), str(r["matches"]), fmt_wins(r)]
        line += [] if coop else [fmt_ci(r["mean_rank"], r["mean_rank_ci"])]
        line += [
            fmt_ci(r["mean_score"], r["mean_score_ci"]),
            fmt_range(r["rank_interval"]),
            fmt(r["rating"]["ordinal"]),
        ]
        line += [fmt(r[s.key]) for s in specs] + [fmt_faults(r["faults"])] + ([str(r["restarts"])] if restarts else [])
        out.append(line)
    return headers, out


def render_table(game: Game, doc: Mapping[str, Any], tablefmt: str = "github") -> str:
    """The standings as text in a tabulate format ("github" for Markdown)."""
    headers, body = table_rows(game, doc)
    return _tab(body, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def render_console(board: Leaderboard) -> str:
    """The standings for the terminal at the end of a run, with p50/p99 response times."""
    headers, body = table_rows(board.game, board.document, stats=False)
    timing = board.timings["bots"]
    for row, r in zip(body, board.document["standings"]):
        row += [fmt(timing[r["name"]]["p50_ms"], 1), fmt(timing[r["name"]]["p99_ms"], 1)]
    return _tab(body, headers=headers + ["p50 ms", "p99 ms"], tablefmt="simple", disable_numparse=True)


def render_csv(board: Leaderboard) -> str:
    """The content of ``standings.csv``: one row per bot, flat columns."""
    stats = [s.key for s in board.game.info.stats]
    header = [
        "rank",
        "name",
        "matches",
        "wins",
        "win_rate",
        "mean_rank",
        "mean_rank_lo",
        "mean_rank_hi",
        "mean_score",
        "mean_score_lo",
        "mean_score_hi",
        "rank_lo",
        "rank_hi",
        "mu",
        "sigma",
        "ordinal",
        *stats,
        "faults_timeout",
        "faults_error",
        "faults_malformed",
        "faults_illegal",
        "faults_total",
        "notice_faults",
        "forfeits",
        "decisions",
        "restarts",
        "disqualified",
        "disqualified_note",
    ]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for r in board.document["standings"]:
        f, rating = r["faults"], r["rating"]
        writer.writerow(
            [
                _cell(v)
                for v in (
                    r["rank"],
                    r["name"],
                    r["matches"],
                    r["wins"],
                    r["win_rate"],
                    r["mean_rank"],
                    *_pair(r["mean_rank_ci"]),
                    r["mean_score"],
                    *_pair(r["mean_score_ci"]),
                    *_pair(r["rank_interval"]),
                    rating["mu"],
                    rating["sigma"],
                    rating["ordinal"],
                    *(r[k] for k in stats),
                    f["timeout"],
                    f["error"],
                    f["malformed"],
                    f["illegal"],
                    f["total"],
                    r["notice_faults"],
                    r["forfeits"],
                    r["decisions"],
                    r["restarts"],
                    r["disqualified"],
                    r["disqualified_note"],
                )
            ]
        )
    return buf.getvalue()


def _records(
    records: Iterable[Mapping[str, Any]], names: Sequence[str], skip_unknown: bool = False
) -> list[MatchRecord]:
    """Journal lines as records in fixture order (the last line of an index wins), checked
    against ``names``; with ``skip_unknown`` (a tournament that grows) the lines of a bot
    removed from the file are left out instead."""
    by_index: dict[int, Mapping[str, Any]] = {}
    known = set(names)
    for d in records:
        unknown = set(d.get("bots", [])) - known
        if unknown and skip_unknown:
            continue
        if unknown:
            raise LeaderboardError(
                f"match {d.get('id')!r} has bots {sorted(unknown)} that are not in {TOURNAMENT_FILE}"
            )
        by_index[d["index"]] = d
    try:
        return [line_record(by_index[i]) for i in sorted(by_index)]
    except TypeError as exc:
        raise LeaderboardError(f"{JOURNAL}: a record lacks a field ({exc})") from exc


def _row(base: Mapping[str, Any], verdict: Mapping[str, Any]) -> dict[str, Any]:
    """A standings row with the verdicts in place, keys in a fixed order."""
    row = {k: base[k] for k in ("rank", "name", "matches", "wins", "win_rate", "mean_rank")}
    row["mean_rank_ci"] = verdict["mean_rank_ci"]
    row["mean_score"] = base["mean_score"]
    row["mean_score_ci"] = verdict["mean_score_ci"]
    row["rank_interval"] = verdict["rank_interval"]
    row["rating"] = verdict["rating"]
    row.update({k: v for k, v in base.items() if k not in row})
    row["deals"] = verdict["deals"]
    row["score_summary"] = verdict["score_summary"]
    return row


def _h2h_table(doc: Mapping[str, Any]) -> str:
    names = [r["name"] for r in doc["standings"]]
    pairs = {(p["bot"], p["opponent"]): p for p in doc["head_to_head"]}
    body = [[a] + ["" if a == b else fmt_pair(pairs[(a, b)]) for b in names] for a in names]
    return _tab(body, headers=["vs"] + names, tablefmt="github", disable_numparse=True)


def _seat_table(doc: Mapping[str, Any]) -> str:
    body = [
        [
            str(s["seat"]),
            str(s["matches"]),
            fmt_ci(s["mean_score"], s["mean_score_ci"]),
            fmt_ci(s["mean_rank"], s["mean_rank_ci"]),
        ]
        for s in doc["seat_bias"]
    ]
    return _tab(
        body,
        headers=["Seat", "Matches", "Mean score [95% CI]", "Mean rank [95% CI]"],
        tablefmt="github",
        disable_numparse=True,
    )


def _pair(interval: Sequence[Any] | None) -> tuple[Any, Any]:
    return (interval[0], interval[1]) if interval else (None, None)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number in standard JSON")


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _tab(*args: Any, **kwargs: Any) -> str:
    """tabulate, typed."""
    return str(tabulate(*args, **kwargs))
