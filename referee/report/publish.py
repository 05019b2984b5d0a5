"""Writes the leaderboard files of an output folder, from its journal alone.

``referee run`` (at the end) and ``referee leaderboard`` (any time later) publish
through the same functions, so both write the same bytes. Files:

- ``README.md``: the settings, the standings table with intervals (tabulate), the DQ
  lines, a head-to-head table and a seat-bias table.
- ``standings.json``: the document described below.
- ``standings.csv``: one row per bot, flat columns.
- ``index.html``: the self-contained page (``page.py``), and with it a page per bot,
  ``bots/<name>.html`` with its data files (``bot_pages.py``).
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
    places          the prize places 1..top (3 when top = 0): [{place, settled,
                    settled_at (match count, or null), bot (null when not settled),
                    candidates [{bot, chance}]}] (stats/places.py)
    standings       one row per bot of the tournament in leaderboard order (with grow
                    or a ladder, the matches of a bot removed from the file still count
                    in the numbers of the bots it met; it has no row, no head-to-head
                    pair and takes no place in a rank): rank (an int, or "DQ"),
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
    excluded        [{name, reason}]: bots of the file the run played without
                    (on_unready = "exclude"); [] when none

    On a ladder the rows are ranked by the opponent-adjusted model (its rank_set and
    rank_interval) and each has ``matchmaking``: contender, floor or placement.

    Where the journal records bot versions, every standings row also has ``version``
    (the bot's latest, a short hex id) and ``versions`` [{version, matches}], oldest first.

Exception: ``LeaderboardError`` (a ``RefereeError``): an output folder that cannot be
rendered (no folder, journal or tournament.json; a damaged journal; an unknown game).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from referee import __version__
from referee.errors import JournalError, LeaderboardError
from referee.games.base import Game
from referee.report import text
from referee.report.bot_pages import BotMatches, MatchTap, bot_matches, write_bot_pages
from referee.report.page import few_deals_text, ranking_text, render_page, settings_lines
from referee.report.places import (
    PLACES_NOTE,
    final_fields,
    final_lines,
    final_order,
    final_sets,
    final_watch,
    place_lines,
)
from referee.report.progress import OnProgress, nothing
from referee.report.text import md, standings_columns
from referee.schedule.registry import format_named
from referee.stats.columns import build_columns
from referee.stats.places import ladder_reasons, model_order, model_sets, places_from_columns
from referee.stats.standings import standings_from_columns, timings_from_columns
from referee.stats.verdicts import DEFAULT_RESAMPLES, analyse_columns
from referee.stats.versions import VersionTally
from referee.store.files import atomic_write, write_error
from referee.store.journal import JOURNAL
from referee.store.matches import game_of, options_of
from referee.store.tournament_file import bootstrap_seed, check_tournament

FILES_STEP = "leaderboard files"  # the step of write_leaderboard's progress
FORMATS: dict[str, tuple[str, ...]] = {
    "md": ("README.md",),
    "html": ("index.html",),
    "json": ("standings.json", "timings.json"),
    "csv": ("standings.csv",),
}


@dataclass
class Leaderboard:
    """Everything the output files are rendered from."""

    game: Game
    document: dict[str, Any]  # standings.json
    timings: dict[str, Any]  # timings.json
    matches: BotMatches | None = None  # every bot's matches, for the bot pages


def build_leaderboard(
    tournament: Mapping[str, Any], records: Iterable[Mapping[str, Any]], resamples: int = DEFAULT_RESAMPLES
) -> Leaderboard:
    """Standings, verdicts and timings of the journal lines ``records`` (any order), read once."""
    check_tournament(tournament)
    settings = tournament["settings"]
    game = game_of(settings)
    options_of(game, settings, settings["players"])  # a refused option fails here, before any file is written
    names = list(settings["bots"])
    # grow and ladder: a bot removed from the file has no row, but its matches keep counting
    # for the bots that met it (their matches, mean rank and score, rating, head-to-head)
    others = bool(settings.get("grow") or format_named(settings["format"]).adaptive)
    tap = MatchTap()
    tally = VersionTally()
    stat_keys = [s.key for s in game.info.stats]
    final, records = final_watch(settings, records)
    try:
        cols = build_columns(tap.wrap(tally.watch(records)), names, stat_keys, JOURNAL, others=others)
    except JournalError as exc:
        raise LeaderboardError(str(exc)) from exc
    matches = bot_matches(cols, tap, game.info.cooperative)
    del tap
    rows = standings_from_columns(game, cols)
    confidence = float(settings.get("confidence", 0.95))
    prizes = places_from_columns(
        cols, game.info.cooperative, int(settings.get("top") or 0), confidence, bootstrap_seed(settings)
    )
    adaptive = format_named(settings["format"]).adaptive  # tables chosen from results: the model ranks, not mean rank
    rows = model_order(rows, prizes, cols.names) if adaptive else rows
    outcome = final.result(bootstrap_seed(settings)) if final is not None else None
    rows = final_order(rows, outcome) if outcome is not None and outcome.played else rows
    order = [r["name"] for r in rows]
    verdicts = analyse_columns(game, cols, order, bootstrap_seed(settings), resamples)
    if adaptive:
        for name, sets in model_sets(prizes, cols.names).items():
            verdicts.bots[name].update(sets)
        count = {r["name"]: r["matches"] for r in rows}
        played = [count.get(name, 0) for name in cols.names]
        why = ladder_reasons(prizes, cols.names, played, int(settings.get("top") or 0), confidence)
    if outcome is not None and outcome.played:  # the final decides its finalists' places
        final_sets(verdicts.bots, outcome)
        prizes.places = outcome.places
    rank = {name: i for i, name in enumerate(order)}
    doc = {
        "tournament": settings["name"],
        "game": settings["game"],
        "matches": cols.matches,
        "scheduled": tournament["scheduled"],
        "lower_score_wins": cols.lower,
        "settings": {k: v for k, v in settings.items() if k != "excluded"},
        "method": verdicts.method,
        "places": prizes.places,
        "standings": [_row(r, verdicts.bots[r["name"]]) for r in rows],
        "differences": verdicts.differences,
        "above": verdicts.above,
        "head_to_head": sorted(verdicts.head_to_head, key=lambda p: (rank[p["bot"]], rank[p["opponent"]])),
        "seat_bias": verdicts.seat_bias,
        "rating_history": {
            **verdicts.rating_history,
            "mu": {name: verdicts.rating_history["mu"][name] for name in order},
        },
        "excluded": [{"name": e["name"], "reason": e["reason"]} for e in settings.get("excluded", ())],
    }
    marks = settings.get("cage_marks") or {}
    for row in doc["standings"]:  # what the bot's cage lacked against the tournament's (docs/cage.md)
        row["cage_marks"] = list(marks.get(row["name"], ()))
    if adaptive:  # the ladder: why each bot gets its seats now (page: "Matches and why")
        for row in doc["standings"]:
            row["matchmaking"] = why.get(row["name"])
    if final is not None and outcome is not None:  # a ladder's final: its finalists and which order decided a place
        final_fields(doc, final.plan, outcome)
    if tally.seen:
        for row in doc["standings"]:
            row.update(tally.fields(row["name"]))
    if settings.get("challengers"):  # a gauntlet: the challengers are ranked, the field shown for reference
        for row in doc["standings"]:
            row["role"] = "challenger" if row["name"] in settings["challengers"] else "field"
    if "stopped" in tournament:  # stop = "settled": why the run ended before (or at) its budget
        doc["stopped"] = tournament["stopped"]
    return Leaderboard(game, doc, {"tournament": settings["name"], **timings_from_columns(cols)}, matches)


def write_leaderboard(
    out: Path,
    board: Leaderboard,
    formats: Iterable[str] = tuple(FORMATS),
    on_progress: OnProgress = nothing,
    bot_pages: bool = True,
) -> list[Path]:
    """Write the files of ``formats`` (keys of FORMATS) into ``out``; return their paths.
    With ``html`` (and ``bot_pages``) also the bot pages (``bots/``, not in the list: the
    list names files of ``out`` itself); ``on_progress(done, total, what)`` follows the
    files and the bot pages."""
    render = {
        "README.md": lambda: render_markdown(board),
        "index.html": lambda: render_page(board.game, board.document),
        "standings.json": lambda: _json(board.document),
        "timings.json": lambda: _json(board.timings),
        "standings.csv": lambda: render_csv(board),
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(out, exc) from exc
    formats = list(formats)
    names = [filename for fmt_name in formats for filename in FORMATS[fmt_name]]
    paths = []
    on_progress(0, len(names), FILES_STEP)
    for filename in names:
        paths.append(out / filename)
        atomic_write(paths[-1], render[filename]())
        on_progress(len(paths), len(names), FILES_STEP)
    if "html" in formats and bot_pages:
        write_bot_pages(out, board.game, board.document, board.matches, on_progress)
    return paths


def render_markdown(board: Leaderboard) -> str:
    """The content of ``README.md`` (every text from a file escaped)."""
    game, doc = board.game, board.document
    rows = doc["standings"]
    dq = [f"- **DQ** {md(r['name'])}: {md(r['disqualified_note'])}" for r in rows if r["disqualified"]]
    lines = [f"# {md(doc['tournament'])}: leaderboard", ""]
    lines += [f"- {label}: {md(text)}" for label, text in settings_lines(game, doc)]
    warn = few_deals_text(doc)
    lines += [""] + ([f"> **Warning.** {md(warn)}", ""] if warn else [])
    headline = place_lines(doc)
    if headline:
        lines += (
            ["## Prize places", "", PLACES_NOTE, ""] + [f"- {md(line)}" for line in headline] + ["", "## Standings", ""]
        )
    lines += [render_table(game, doc), ""]
    final = final_lines(doc)
    lines += ["## The final", "", *(f"- {md(line)}" for line in final), ""] if final else []
    lines += dq + ([""] if dq else [])
    excluded = [f"- **Excluded** {md(e['name'])}: {md(e['reason'])}" for e in doc.get("excluded", ())]
    lines += excluded + ([""] if excluded else [])
    changed = [r for r in rows if len(r.get("versions") or ()) > 1]
    if changed:
        lines += ["## Bot versions", "", _VERSIONS_NOTE, ""] + [_versions_line(r) for r in changed] + [""]
    lines += [md(ranking_text(game, doc)), ""]
    lines += ["## Differences between neighbours", "", _DIFF_NOTE, "", _diff_table(game, doc), ""]
    cap = (
        f" The first {text.H2H_CAP} bots of the standings; every pair is in `standings.json`."
        if len(rows) > text.H2H_CAP
        else ""
    )
    lines += ["## Head-to-head", "", text.H2H_NOTE + cap, "", _h2h_table(doc), "", "## Seat bias", ""]
    if doc["seat_bias"] is None:
        lines.append(text.NO_SEAT_BIAS)
    else:
        lines += [_seat_table(doc), "", text.SEAT_NOTE]
    lines += [
        "",
        f"Made by referee {__version__}; the per-match record is in `matches.jsonl`, response times "
        "in `timings.json`, the page in `index.html`, the P(A ranks above B) matrix in `standings.json`.",
        "",
    ]
    return "\n".join(lines)


_DIFF_NOTE = (
    "Overlapping intervals of two bots in the standings are not a test. This is: each bot against the next "
    "one, the 95% interval of the difference (paired by deal, so duplicate deals tighten it); *separated* "
    "when it excludes 0. P(above): share of bootstrap resamples in which the bot ranks above the next."
)


_VERSIONS_NOTE = (
    "Bots that changed during the tournament (files, command, URL or the version their hello reply names); "
    "each match counts for the version that played it, oldest first. Every row of `standings.json` has its versions."
)


def _versions_line(row: Mapping[str, Any]) -> str:
    played = ", ".join(f"`{md(v['version'])}` ({v['matches']} matches)" for v in row["versions"])
    return f"- {md(row['name'])}: {played}; latest `{md(row['version'])}`"


def table_rows(game: Game, doc: Mapping[str, Any], stats: bool = True) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the standings table (with the game's stat columns when ``stats``)."""
    rows = doc["standings"]
    columns = standings_columns(game, rows, stats)
    # only the bot's name comes from a file; every other cell is a number formatted here
    return [c.header for c in columns], [
        [md(c.text(r)) if c.key == "bot" else c.text(r) for c in columns] for r in rows
    ]


def render_table(game: Game, doc: Mapping[str, Any], tablefmt: str = "github") -> str:
    """The standings as text in a tabulate format ("github" for Markdown)."""
    headers, body = table_rows(game, doc)
    return _tab(body, headers=headers, tablefmt=tablefmt, disable_numparse=True)


CONSOLE_ROWS = 10  # standings rows printed at the end of a run (all with --all-rows)


def render_console(board: Leaderboard, top: int | None = CONSOLE_ROWS) -> str:
    """The standings for the terminal at the end of a run, with p50/p99 response times:
    the first ``top`` rows (None: every row) and how many more there are."""
    every = board.document["standings"]
    rows = every if top is None else every[:top]
    more = len(every) - len(rows)
    note = f"\n... and {more} more bot{'s' if more != 1 else ''} (every row: --all-rows, or README.md)" if more else ""
    return _console_table(board, rows) + note


def _console_table(board: Leaderboard, rows: list[dict[str, Any]]) -> str:
    """The console table of ``rows``."""
    columns = standings_columns(board.game, rows, stats=False)
    body = [[c.text(r) for c in columns] for r in rows]
    timing = board.timings["bots"]
    for line, r in zip(body, rows):
        line += [text.fmt(timing[r["name"]]["p50_ms"], 1), text.fmt(timing[r["name"]]["p99_ms"], 1)]
    headers = [c.header for c in columns] + ["p50 ms", "p99 ms"]
    headline = "".join(line + "\n" for line in place_lines(board.document))
    return headline + ("\n" if headline else "") + _tab(body, headers=headers, tablefmt="simple", disable_numparse=True)


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
        "rank_set_lo",
        "rank_set_hi",
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
        "cage_marks",
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
                    *_pair(r["rank_set"]),
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
                    "; ".join(r.get("cage_marks") or ()),
                )
            ]
        )
    return buf.getvalue()


def _row(base: Mapping[str, Any], verdict: Mapping[str, Any]) -> dict[str, Any]:
    """A standings row with the verdicts in place, keys in a fixed order."""
    row = {k: base[k] for k in ("rank", "name", "matches", "wins", "win_rate", "mean_rank")}
    row["mean_rank_ci"] = verdict["mean_rank_ci"]
    row["mean_score"] = base["mean_score"]
    row["mean_score_ci"] = verdict["mean_score_ci"]
    row["rank_interval"] = verdict["rank_interval"]
    row["rank_set"] = verdict["rank_set"]
    row["rating"] = verdict["rating"]
    row.update({k: v for k, v in base.items() if k not in row})
    row["deals"] = verdict["deals"]
    row["score_summary"] = verdict["score_summary"]
    return row


def _h2h_table(doc: Mapping[str, Any]) -> str:
    names = [r["name"] for r in doc["standings"]][: text.H2H_CAP]
    pairs = {(p["bot"], p["opponent"]): p for p in doc["head_to_head"]}
    body = [[md(a)] + ["" if a == b else _h2h_cell(pairs[(a, b)]) for b in names] for a in names]
    return _tab(body, headers=["vs"] + [md(n) for n in names], tablefmt="github", disable_numparse=True)


def _h2h_cell(pair: Mapping[str, Any]) -> str:
    share, counts = text.fmt_pair(pair)
    return f"{share} ({counts})" if counts else share


def _diff_table(game: Game, doc: Mapping[str, Any]) -> str:
    diffs = doc.get("differences") or []
    if not diffs:
        return text.NO_DIFFERENCES
    headers, body = text.difference_rows(game, diffs, text.fmt_ci, md)
    return _tab(body, headers=headers, tablefmt="github", disable_numparse=True)


def _seat_table(doc: Mapping[str, Any]) -> str:
    body = [
        [
            str(s["seat"]) + (" !" if s.get("biased") else ""),
            str(s["matches"]),
            text.fmt_ci(s["mean_score"], s["mean_score_ci"]),
            text.fmt_ci(s["mean_rank"], s["mean_rank_ci"]),
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
    """A CSV cell; text that a spreadsheet would run as a formula (=, +, -, @, tab, CR) is
    prefixed with a quote, numbers stay numbers."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return str(value)


def _json(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n"


def _tab(*args: Any, **kwargs: Any) -> str:
    """tabulate, typed."""
    return str(tabulate(*args, **kwargs))
