"""The leaderboard page ``index.html`` (pure: one string from the standings document),
and the text formats it shares with ``README.md``.

The page is one self-contained file: inline CSS, inline SVG drawn here and a small inline
script (``ui.py``: search, sorting, paging; without it every row shows, in rank order), no
external URL of any kind (no fonts, images or CDNs), so it opens from disk with no network.
It is built for hundreds of bots: the standings come first (the bots summarised as a count
that opens into their names), long tables show their first rows with a button for the rest,
sections fold, the rating plot draws the top few in colour and the rest faint, and
head-to-head past the top ``H2H_CAP`` lives on the bots' pages (``bot_pages.py``), linked
from every mention of a bot. Every bot name is escaped. The bytes depend on the document
alone (no dates, no random ids), so the same journal gives the same page.

Stable hooks for tests and scrapers: ``#standings`` with one ``tr[data-bot]`` per bot
(``data-rank``, ``data-mean-score``, ``data-mean-score-lo`` ... as in standings.json)
and cells ``td[data-col]`` (``data-v``: the number a column sorts by); ``#search``;
``#score-distribution`` with one ``tr.dist[data-bot]`` per bot; ``#head-to-head`` with one
``td.h2h`` per ordered pair (``data-bot``, ``data-opponent``, ``data-share``,
``data-meetings`` ...); ``#rating-history`` (``polyline[data-line]``); ``#seat-bias``;
``p.dq`` per disqualified bot.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from referee import __version__
from referee.games.base import Game
from referee.report.names import bot_files
from referee.report.places import final_html, matchmaking_html, places_html
from referee.report.text import (
    COOP_WINS,
    H2H_CAP,
    H2H_NOTE,
    MINUS_3_SIGMA,
    NO_DIFFERENCES,
    NO_SEAT_BIAS,
    SEAT_NOTE,
    cage_text,
    difference_rows,
    fmt,
    fmt_ci,
    fmt_pair,
    fmt_toml,
    role_mark,
    seed_text,
    standings_columns,
)
from referee.report.ui import CSS, SCRIPT, attr, linker, paged, value_ci
from referee.schedule.registry import describe, format_named
from referee.schedule.settings import line_keys

# Tableau 10: distinct, print-safe colours; bots take them in standings order.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")

# Settings shown in their own lines (as declared, and a ladder's history, counted); every other key is listed generically.
_KNOWN_SETTINGS = line_keys() | {"ladder"}


def format_text(settings: Mapping[str, Any]) -> str:
    """The tournament format in words (each format describes itself)."""
    return describe(settings)


def settings_lines(game: Game, doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The settings shown above the standings, as (label, text); values of the options and of
    any further setting (e.g. sandbox, a secret seed) as TOML writes them. A ladder's lineup
    history and dropped tables are counted in a line of their own, not listed."""
    s = doc["settings"]
    opts = ", ".join(f"{k} = {fmt_toml(v)}" for k, v in sorted(s["options"].items())) or "defaults"
    deals = doc["method"]["deals"]
    lines = [
        ("Game", f"{game.info.title} ({s['game']}), options: {opts}"),
        ("Format", f"{format_text(s)}; {seed_text(s)}"),
        (
            "Matches played",
            f"{doc['matches']} of {doc['scheduled']} ({deals} deal{'s' if deals != 1 else ''})" + dropped_text(s),
        ),
        ("Limits", _limits_text(s)),
        ("Bots", ", ".join(s["bots"])),
    ]
    excluded = doc.get("excluded") or ()
    if excluded:  # bots left out of the run (not ready)
        lines.append(("Excluded", "; ".join(f"{x['name']} ({x.get('reason', '')})" for x in excluded)))
    if isinstance(s.get("ladder"), Mapping):
        lines.append(("Ladder", ladder_text(s["ladder"])))
    other = [f"{k} = {fmt_toml(v)}" for k, v in sorted(s.items()) if k not in _KNOWN_SETTINGS]
    if other:
        lines.append(("Other settings", "; ".join(other)))
    if doc.get("stopped"):  # stop = "settled": why the run ended
        lines.insert(3, ("Stopped", str(doc["stopped"]["reason"])))
    if doc.get("live"):  # publish_every_s: a page rendered while the run goes on
        live = doc["live"]
        lines.insert(0, ("In progress", f"covers {live['matches']} of {live['scheduled']} matches, as of {live['at']}"))
    return lines


# A bot that did not answer hello: its window and its last answer (run/lineup.py writes it so).
def ladder_text(ladder: Mapping[str, Any]) -> str:
    """A ladder's lineup history and dropped tables, counted."""
    lineups, dropped = len(ladder.get("lineups") or ()), len(ladder.get("dropped") or ())
    return (
        f"epochs of {ladder.get('epoch_tables')} tables; {lineups} lineup{'s' if lineups != 1 else ''} "
        f"(a bot joined, left or changed its version); {dropped} table{'s' if dropped != 1 else ''} dropped"
    )


def dropped_text(s: Mapping[str, Any]) -> str:
    """Why a ladder played fewer matches than it scheduled: its dropped tables ('' for none)."""
    ladder = s.get("ladder")
    n = len(ladder.get("dropped") or ()) if isinstance(ladder, Mapping) else 0
    if not n:
        return ""
    return (
        f"; {n} table{'s' if n != 1 else ''} dropped, never played: chosen while a bot (or an old version) "
        "was in the lineup, unplayed when it left"
    )


def _limits_text(s: Mapping[str, Any]) -> str:
    """The time and fault limits; the optional ones only where they are in force."""
    text = (
        f"deadline {s['deadline_ms']} ms per decision; on fault: {s['on_fault']} "
        f"(max {s['max_faults']} per seat per match)"
    )
    if s.get("time_bank_ms"):
        text += f"; time bank {s['time_bank_ms']} ms per seat per match"
    rate = s.get("max_fault_rate")
    if isinstance(rate, int | float) and rate < 1:
        text += f"; a bot faulting in more than {rate:.0%} of its decisions is disqualified"
    return text


def ranking_text(game: Game, doc: Mapping[str, Any]) -> str:
    """How the table is ordered and what its intervals mean."""
    sense = "lower is better" if doc["lower_score_wins"] else "higher is better"
    m = doc["method"]
    order = (
        f"Cooperative: every seat shares its table's score; ranked by mean score ({sense}). {COOP_WINS} "
        if game.info.cooperative
        else f"Ranked by mean rank in a match (1 is best), then mean score ({sense}), then wins. "
    )
    return (
        order + f"Intervals are 95% studentized bootstrap (bootstrap-t) intervals over {m['deals']} deals "
        f"({m['resamples']} resamples; the matches of one deal are resampled together). Rank range: 95% of one "
        f"bot's leaderboard positions across resamples (one bot at a time). Rank set: holds for all bots at "
        f"once at 95% (use it to draw a prize or qualification line). Overlapping intervals of two bots are "
        f"not a test: the differences below are. Rating: Plackett-Luce log-strength, {MINUS_3_SIGMA}. "
        f"Faults: timeout/error/malformed/illegal over every decision; start/end faults are failed start "
        f"and end messages."
    )


def few_deals_text(doc: Mapping[str, Any]) -> str | None:
    """The warning of a tournament with few deals, with the deals a stated precision needs."""
    m = doc["method"]
    p = m.get("precision") or {}
    if not m.get("few_deals"):
        return None
    stat = "mean rank" if p.get("statistic") == "mean_rank" else "mean score"
    return (
        f"Only {m['deals']} deals: the intervals are approximate (fewer than 30 deals). For {stat} intervals "
        f"of \u00b1{p.get('half_width')} about {p.get('deals_needed')} deals are needed."
    )


# The page ----------------------------------------------------------------------------

TOP_LINES = 5  # rating lines drawn in colour; the others faint until searched or hovered


def render_page(game: Game, doc: Mapping[str, Any], sections: Sequence[str] = ()) -> str:
    """The content of ``index.html``.

    Hook: ``sections`` are HTML fragments (each a whole ``<section>``, already escaped)
    added before the footer.
    """
    rows = doc["standings"]
    files = page_files(doc)
    colours = {r["name"]: (PALETTE[i] if i < len(PALETTE) else FAINT) for i, r in enumerate(rows)}
    side_by_side = len(rows) <= 4  # a small heat map leaves room for the rating chart beside it
    unit = "deals" if game.info.cooperative else "matches"
    e = html.escape
    link = linker(files, "bots/")
    warn = few_deals_text(doc)
    cap = (
        f" The first {H2H_CAP} bots of the standings; every opponent of every bot is on the bot's page (click a name)."
        if len(rows) > H2H_CAP
        else ""
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(doc['tournament'])}: leaderboard</title>",
        f"<style>{CSS}</style></head>",
        "<body><main>",
        f'<header><p class="kicker">Leaderboard</p><h1>{e(doc["tournament"])}</h1>'
        f'{places_html(doc)}<dl class="settings">{_settings(game, doc, link)}</dl></header>',
        '<section id="standings-section"><div class="tools"><h2>Standings</h2>'
        '<input id="search" type="search" placeholder="Find bots (names, comma-separated)" '
        'aria-label="Find bots: show only the bots whose names hold one of these words" autocomplete="off">'
        '<span id="search-count" class="count" aria-live="polite"></span></div>',
        f'<p class="warn" id="few-deals">{e(warn)}</p>' if warn else "",
        f'<p class="lead">{e(_lead(game, doc))}</p>',
        _explain(game, doc),
        _standings_table(game, doc, colours, link),
        _dq_lines(rows, link),
        "</section>",
        final_html(doc) + matchmaking_html(doc),
        _section(
            "differences-section",
            "Differences between neighbours",
            '<p class="lead">Each bot against the next one in the standings: the 95% interval of the difference, '
            "paired by deal (duplicate deals tighten it); separated when it excludes 0. P(above): share of "
            "bootstrap resamples in which the bot ranks above the next.</p>" + _differences(game, doc, link),
        ),
        _section(
            "distribution-section",
            "Score distribution",
            '<p class="lead">Per bot: whiskers from lowest to highest score, box from the first to the third '
            "quartile, a line at the median; the dark bar is the 95% interval of the mean score and the dot the "
            "mean.</p>" + _score_distribution(doc, colours, link),
        ),
        f'<div class="{"pair" if side_by_side else "stack"}">',
        _section("h2h-section", "Head-to-head", f'<p class="lead">{H2H_NOTE}{cap}</p>' + _head_to_head(doc, link)),
        _section(
            "rating-section",
            f"Rating over {unit}",
            f'<p class="lead">Plackett-Luce log-strength \u03bc fitted on the {unit} played so far, in fixture '
            f"order. In colour the top {min(TOP_LINES, len(rows))}; a bot you search or point at is drawn in "
            "red.</p>" + _rating_history(doc, colours, unit, 540.0 if side_by_side else 1100.0),
        ),
        "</div>",
        _section(
            "above-section",
            "P(row ranks above column)",
            '<p class="lead">Share of bootstrap resamples in which the row bot is above the column bot in the '
            f"standings' own order.{cap}</p>" + _above(doc, link),
            opened=len(rows) <= 10,
        ),
        _section("seat-section", "Seat bias", _seat_bias(doc)),
        _replays_link(doc),
        *sections,
        f"<footer>Made by referee {e(__version__)} from <code>matches.jsonl</code>; the same journal always "
        "gives this page byte for byte. Data: <code>standings.json</code>, <code>standings.csv</code>; "
        "response times: <code>timings.json</code>.</footer>",
        f"</main><script>{SCRIPT}</script></body></html>",
        "",
    ]
    return "\n".join(p for p in parts if p)


FAINT = "#9aa5b1"


def page_files(doc: Mapping[str, Any]) -> dict[str, str]:
    """The page file stem of every bot of the document (standings and excluded bots)."""
    names = [r["name"] for r in doc["standings"]] + [x["name"] for x in doc.get("excluded") or ()]
    return bot_files(dict.fromkeys(names))


def _section(ident: str, title: str, body: str, opened: bool = True) -> str:
    """A collapsible section (a ``details`` whose summary is the heading)."""
    return (
        f'<section id="{ident}"><details class="sec"{" open" if opened else ""}><summary><h2>{html.escape(title)}'
        f"</h2></summary>{body}</details></section>"
    )


def _settings(game: Game, doc: Mapping[str, Any], link: Callable[[str], str]) -> str:
    """The settings, one line each (a click on a line shows it whole); the bots, the excluded
    bots and a ladder's lineups and dropped tables as a one-line summary that opens."""
    e = html.escape
    out = []
    for label, value in settings_lines(game, doc):
        if label == "Bots":
            names = doc["settings"]["bots"]
            items = "".join(f"<li>{link(n)}</li>" for n in names)
            value_html = (
                f'<details id="bot-list" class="fold"><summary>{len(names)} bot{"s" if len(names) != 1 else ""}'
                f'</summary><ul class="botlist">{items}</ul></details>'
            )
        elif label == "Excluded":
            value_html = _excluded(doc.get("excluded") or (), value, link)
        elif label == "Ladder":
            value_html = _ladder(doc["settings"]["ladder"], value)
        else:
            value_html = f'<details class="line"><summary>{e(value)}</summary></details>'
        out.append(f"<dt>{e(label)}</dt><dd>{value_html}</dd>")
    return "".join(out)


def _excluded(excluded: Sequence[Mapping[str, Any]], text: str, link: Callable[[str], str]) -> str:
    """The bots left out (not ready): their count and names, opening into one line each with
    its reason in a few words, as the run made it (``errors.Unready``: "connection refused")."""
    e = html.escape
    items = []
    for x in excluded:
        items.append(f'<li data-bot="{e(x["name"])}">{link(x["name"])}: {e(str(x.get("reason", "")))}</li>')
    n = len(excluded)
    return (
        f'<details id="excluded" class="fold"><summary>{n} bot{"s" if n != 1 else ""} not ready'
        f'<span class="gist">: {e(text)}</span></summary>'
        f'<ul class="reasons">{"".join(items)}</ul></details>'
    )


DROPPED_SHOWN = 100  # dropped tables listed on the page; tournament.json holds them all


def lineup_changes(segments: Sequence[Mapping[str, Any]]) -> list[tuple[int, list[str], list[str], list[str]]]:
    """A ladder's lineup history as changes: per segment (its first epoch, the entries that
    joined, the names that left, the entries with a new version)."""
    out = []
    before: dict[str, str] = {}
    for seg in segments:
        now = {name: version for name, _, version in (str(b).partition("@") for b in seg.get("bots") or ())}
        joined = [f"{n}@{v}" if v else n for n, v in now.items() if n not in before]
        left = [n for n in before if n not in now]
        changed = [f"{n}@{v}" if v else n for n, v in now.items() if n in before and before[n] != v]
        out.append((int(seg.get("from", 0)), joined, left, changed))
        before = now
    return out


def _ladder(ladder: Mapping[str, Any], text: str) -> str:
    """A ladder's lineup history (as changes) and its dropped tables, behind a fold."""
    e = html.escape
    items = []
    for epoch, joined, left, changed in lineup_changes(ladder.get("lineups") or ()):
        parts = [
            f"{label} ({len(names)}): {e(', '.join(names))}"
            for label, names in (("joined", joined), ("left", left), ("new version", changed))
            if names
        ]
        items.append(f"<li><b>from epoch {epoch}</b>: {'; '.join(parts) or 'no change'}</li>")
    dropped = list(ladder.get("dropped") or ())
    shown = "; ".join(f"{d[0]}: {e(', '.join(map(str, d[1])))}" for d in dropped[:DROPPED_SHOWN])
    more = (
        f"; and {len(dropped) - DROPPED_SHOWN} more (tournament.json lists them all)"
        if len(dropped) > DROPPED_SHOWN
        else ""
    )
    drops = (
        f'<p id="dropped"><b>Dropped tables</b> (fixture index: its table; chosen while a bot or an old version was '
        f"in the lineup, unplayed when it left): {shown}{more}</p>"
        if dropped
        else ""
    )
    return (
        f'<details id="ladder" class="fold"><summary>{e(text)}</summary>'
        f'<ol class="lineups">{"".join(items)}</ol>{drops}</details>'
    )


def _lead(game: Game, doc: Mapping[str, Any]) -> str:
    """One line above the standings: the order and how to read an interval."""
    sense = "lower is better" if doc["lower_score_wins"] else "higher is better"
    if format_named(doc["settings"]["format"]).adaptive:
        order = f"the opponent-adjusted model's strength (scores: {sense})"
    else:
        order = f"{'mean score' if game.info.cooperative else 'mean rank (1 is best), then mean score'} ({sense})"
    return f"Ranked by {order}; [lo, hi]: 95% intervals. Click a header to sort, a name for the bot's matches."


def _explain(game: Game, doc: Mapping[str, Any]) -> str:
    """What every column and interval means, right above the table (collapsed)."""
    m = doc["method"]
    items = [
        (
            "Mean rank, mean score",
            f"95% studentized bootstrap (bootstrap-t) intervals over {m['deals']} deals "
            f"({m['resamples']} resamples; the matches of one deal are resampled together). They say where a bot's "
            "long-run mean lies; two overlapping intervals are not a test: the differences between neighbours are. "
            "The bar beside the mean score plots its interval, on one scale for every bot.",
        ),
        ("Rank range", "Where this bot lands in 95% of the resampled leaderboards, one bot at a time."),
        ("Rank set", "Ranks that hold for all bots at once at 95%: use it to draw a prize or qualification line."),
        (
            "Rating",
            f"Plackett-Luce log-strength, {MINUS_3_SIGMA}: \u03bc higher by 1 is e \u2248 2.7 times as "
            "likely to finish first of the two.",
        ),
        (
            "Faults",
            "timeout/error/malformed/illegal over every decision; start/end faults are failed start and end messages.",
        ),
    ]
    dl = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in items)
    return (
        '<details class="explain" id="explain"><summary>What the columns and intervals mean</summary>'
        f"<dl>{dl}</dl><p>{html.escape(ranking_text(game, doc))}</p></details>"
    )


def _dq_lines(rows: Sequence[Mapping[str, Any]], link: Callable[[str], str]) -> str:
    e = html.escape
    return "".join(
        f'<p class="dq" data-bot="{e(r["name"])}"><b>DQ</b> {link(r["name"])}: {e(r["disqualified_note"] or "")}</p>'
        for r in rows
        if r["disqualified"]
    )


def _replays_link(doc: Mapping[str, Any]) -> str:
    """A link to the replay viewer when the run kept transcripts."""
    if doc["settings"].get("transcripts", "all") == "none":
        return ""
    return (
        '<section id="replays"><h2>Matches</h2><p><a href="replays/index.html">Replays</a>: every decision of '
        "every match, step by step. A bot's page lists every match it played, each with a link to its "
        "replay.</p></section>"
    )


def sort_value(key: str, row: Mapping[str, Any]) -> Any:
    """The number a standings column sorts by (None sorts last)."""
    if key == "rank":
        return row["rank"] if isinstance(row["rank"], int) else 10**9
    simple = {"matches": "matches", "wins": "wins", "mean-rank": "mean_rank", "mean-score": "mean_score"}
    if key in simple:
        return row[simple[key]]
    if key in ("rank-range", "rank-set"):
        interval = row["rank_interval"] if key == "rank-range" else row.get("rank_set")
        return None if not interval else interval[0] + interval[1] / 1000
    if key == "rating":
        return row["rating"]["ordinal"]
    if key == "faults":
        return row["faults"]["total"]
    if key == "notice-faults":
        return row["notice_faults"]
    return row.get(key)


def _standings_table(game: Game, doc: Mapping[str, Any], colours: Mapping[str, str], link: Callable[[str], str]) -> str:
    e = html.escape
    rows = doc["standings"]
    spans = [r["mean_score_ci"] for r in rows if r["mean_score_ci"]]
    lo = min((s[0] for s in spans), default=0.0)
    hi = max((s[1] for s in spans), default=1.0)
    columns = standings_columns(game, rows)
    head = []
    for c in columns:
        kind = "text" if c.key == "bot" else "num"
        cls = ' class="name"' if c.key == "bot" else ""
        head.append(f'<th{cls} data-sort="{kind}" title="{e(_TITLES.get(c.key, c.header))}">{e(c.header)}</th>')
        if c.key == "mean-score":
            head.append(f'<th class="axis-head">{_ci_axis(lo, hi)}</th>')
    out = [
        f'<div class="scroll"><table id="standings"{paged(len(rows))}><thead><tr>',
        "".join(head),
        "</tr></thead><tbody>",
    ]
    for r in rows:
        out.append(_standings_row(r, columns, colours, link, lo, hi))
    out.append("</tbody></table></div>")
    return "".join(out)


_NAME = ' class="name"'
_TITLES = {
    "rank": "Place in the standings (DQ: disqualified)",
    "mean-rank": "Mean finishing place in a match (1 is best) with its 95% interval",
    "mean-score": "Mean score per match with its 95% interval",
    "rank-range": "Where this bot lands in 95% of resampled leaderboards (one bot at a time)",
    "rank-set": "Ranks that hold for every bot at once at 95%",
    "rating": "Plackett-Luce rating \u03bc\u22123\u03c3",
    "faults": "Faulted decisions: timeout/error/malformed/illegal",
}


def _standings_row(
    r: Mapping[str, Any],
    columns: Sequence[Any],
    colours: Mapping[str, str],
    link: Callable[[str], str],
    lo: float,
    hi: float,
) -> str:
    """One ``tr[data-bot]`` of the standings."""
    e = html.escape
    rating = r["rating"]
    attrs = {
        "bot": r["name"],
        "rank": r["rank"],
        "matches": r["matches"],
        "wins": r["wins"],
        "mean-rank": r["mean_rank"],
        "mean-rank-lo": _ci(r["mean_rank_ci"], 0),
        "mean-rank-hi": _ci(r["mean_rank_ci"], 1),
        "mean-score": r["mean_score"],
        "mean-score-lo": _ci(r["mean_score_ci"], 0),
        "mean-score-hi": _ci(r["mean_score_ci"], 1),
        "rank-lo": _ci(r["rank_interval"], 0),
        "rank-hi": _ci(r["rank_interval"], 1),
        "rank-set-lo": _ci(r.get("rank_set"), 0),
        "rank-set-hi": _ci(r.get("rank_set"), 1),
        "mu": rating["mu"],
        "sigma": rating["sigma"],
        "ordinal": rating["ordinal"],
        "notice-faults": r["notice_faults"],
        "disqualified": r["disqualified"],
    }
    cells = []
    for c in columns:
        if c.key == "bot":
            text = (
                f'<span class="swatch" style="background:{colours[r["name"]]}"></span>{link(r["name"])}'
                f"{e(role_mark({**r, 'cage_marks': ()}))}{_name_notes(r)}"
            )
        elif c.value is not None and c.interval is not None:
            text = value_ci(c.value(r), c.interval(r))
        elif c.key == "rating":
            text = f"{fmt(rating['ordinal'])}<small>\u03bc {fmt(rating['mu'])} \u03c3 {fmt(rating['sigma'])}</small>"
        else:
            text = e(c.text(r))
        v = "" if c.key == "bot" else f' data-v="{attr(sort_value(c.key, r))}"'
        cls = ' class="name"' if c.key == "bot" else ""
        cells.append(f'<td data-col="{c.key}"{cls}{v}>{text}</td>')
        if c.key == "mean-score":
            cells.append(f'<td data-col="ci-bar">{_ci_bar(r, lo, hi, colours[r["name"]])}</td>')
    cls = ' class="dq-row"' if r["disqualified"] else ""
    data = " ".join(f'data-{k}="{attr(v)}"' for k, v in attrs.items())
    return f"<tr{cls} {data}>{''.join(cells)}</tr>"


def _name_notes(r: Mapping[str, Any]) -> str:
    """The line under a bot's name in the standings: its weaker cage (marked) and its version."""
    e = html.escape
    cage = cage_text(r)
    notes = ([f'<span class="cage">{e(cage)}</span>'] if cage else []) + (
        [f"version {e(str(r['version']))}"] if r.get("version") else []
    )
    return "<small>" + " \u00b7 ".join(notes) + "</small>" if notes else ""


def _ci_axis(lo: float, hi: float) -> str:
    """The axis of the interval bars: the shared scale's ends and ticks, above the column."""
    w, pad = 100.0, 5.0
    x = _scale(lo, hi, pad, w - pad)
    ticks = [t for t in _ticks(lo, hi, 2) if lo <= t <= hi] or [lo, hi]
    marks = "".join(
        f'<line x1="{x(t):.1f}" y1="12" x2="{x(t):.1f}" y2="16" class="grid"/>'
        f'<text class="tick" x="{x(t):.1f}" y="10" text-anchor="middle">{_num(t)}</text>'
        for t in ticks
    )
    return (
        f'<svg class="ciaxis" width="{w:.0f}" height="18" viewBox="0 0 {w:.0f} 18" role="img" '
        f'aria-label="mean score axis">{marks}<line x1="{pad:.1f}" y1="16" x2="{w - pad:.1f}" y2="16" '
        f'class="axisline"/></svg>'
    )


def _differences(game: Game, doc: Mapping[str, Any], link: Callable[[str], str]) -> str:
    """Adjacent rows of the standings: the difference with its interval and P(above)."""
    e = html.escape
    diffs = doc.get("differences") or []
    if not diffs:
        return f'<p class="note" id="differences">{NO_DIFFERENCES}</p>'
    head, cells = difference_rows(game, diffs, value_ci, link)
    kinds = ["text", "text"] + ["num"] * (len(head) - 3) + ["text"]
    body = [
        f'<tr data-bot="{e(d["bot"])}" data-next="{e(d["next"])}" data-separated="{attr(d["separated"])}">'
        + "".join(f"<td{_NAME if i < 2 else ''}>{c}</td>" for i, c in enumerate(row))
        + "</tr>"
        for d, row in zip(diffs, cells)
    ]
    return (
        f'<div class="scroll"><table id="differences"{paged(len(diffs), 20)}>'
        "<thead><tr>"
        + "".join(f'<th data-sort="{k}"{_NAME if i < 2 else ""}>{h}</th>' for i, (h, k) in enumerate(zip(head, kinds)))
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def _above(doc: Mapping[str, Any], link: Callable[[str], str]) -> str:
    """The P(row ranks above column) matrix, the first ``H2H_CAP`` bots."""
    e = html.escape
    above = doc.get("above") or {"bots": [], "p": []}
    names = above["bots"][:H2H_CAP]
    out = ['<div class="scroll"><table id="p-above" class="heat" data-filter><thead><tr><th></th>']
    out += [f'<th class="opp" title="{e(n)}">{e(n)}</th>' for n in names]
    out.append("</tr></thead><tbody>")
    for i, a in enumerate(names):
        out.append(f'<tr data-bot="{e(a)}"><th class="me">{link(a)}</th>')
        for j, b in enumerate(names):
            p = above["p"][i][j]
            if p is None:
                out.append('<td class="self"></td>')
                continue
            out.append(
                f'<td class="above" data-bot="{e(a)}" data-opponent="{e(b)}" data-p="{attr(p)}" '
                f'style="background:{_heat(p)}">{p:.0%}</td>'
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _ci_bar(row: Mapping[str, Any], lo: float, hi: float, colour: str) -> str:
    """A small inline interval plot of the mean score on a scale shared by every row."""
    ci, mean = row["mean_score_ci"], row["mean_score"]
    if not ci or mean is None:
        return ""
    w, pad = 100.0, 5.0
    x = _scale(lo, hi, pad, w - pad)
    return (
        f'<svg class="cibar" width="{w:.0f}" height="14" viewBox="0 0 {w:.0f} 14" aria-hidden="true">'
        f'<line x1="{pad:.1f}" y1="7" x2="{w - pad:.1f}" y2="7" class="track"/>'
        f'<line x1="{x(ci[0]):.1f}" y1="7" x2="{x(ci[1]):.1f}" y2="7" stroke="{colour}" stroke-width="4" '
        f'stroke-linecap="round"/><circle cx="{x(mean):.1f}" cy="7" r="3.5" fill="#1f2933"/></svg>'
    )


_DIST_W = 520.0


def _score_distribution(doc: Mapping[str, Any], colours: Mapping[str, str], link: Callable[[str], str]) -> str:
    """A table, one row per bot: its box plot on a scale shared by all, the axis above and below."""
    e = html.escape
    rows = [r for r in doc["standings"] if r["score_summary"]]
    lo = min((r["score_summary"]["min"] for r in rows), default=0.0)
    hi = max((r["score_summary"]["max"] for r in rows), default=1.0)
    ticks = _ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])
    x = _scale(lo, hi, 10.0, _DIST_W - 10.0)
    sense = "lower is better" if doc["lower_score_wins"] else "higher is better"
    axis = _dist_axis(ticks, x)
    head = (
        f'<tr><th class="name" data-sort="text">Bot</th><th class="plot">score per match ({sense}){axis}</th>'
        '<th data-sort="num">Mean [95% CI]</th><th data-sort="num">Median</th></tr>'
    )
    body = []
    for r in rows:
        s, c = r["score_summary"], colours[r["name"]]
        ci = r["mean_score_ci"] or [r["mean_score"], r["mean_score"]]
        tip = (
            f"{r['name']}: min {_num(s['min'])}, quartiles {_num(s['q1'])} / {_num(s['median'])} / "
            f"{_num(s['q3'])}, max {_num(s['max'])}; mean {fmt_ci(r['mean_score'], r['mean_score_ci'])}"
        )
        svg = (
            f'<svg viewBox="0 0 {_DIST_W:.0f} 26" width="{_DIST_W:.0f}" height="26" role="img" '
            f'aria-label="{e(tip)}"><title>{e(tip)}</title>'
            f'<line class="whisker" x1="{x(s["min"]):.1f}" y1="13" x2="{x(s["max"]):.1f}" y2="13"/>'
            f'<line class="whisker" x1="{x(s["min"]):.1f}" y1="7" x2="{x(s["min"]):.1f}" y2="19"/>'
            f'<line class="whisker" x1="{x(s["max"]):.1f}" y1="7" x2="{x(s["max"]):.1f}" y2="19"/>'
            f'<rect x="{x(s["q1"]):.1f}" y="4" width="{max(1.0, x(s["q3"]) - x(s["q1"])):.1f}" height="18" rx="3" '
            f'fill="{c}" fill-opacity="0.28" stroke="{c}" stroke-width="1.5"/>'
            f'<line x1="{x(s["median"]):.1f}" y1="4" x2="{x(s["median"]):.1f}" y2="22" stroke="{c}" '
            f'stroke-width="2.5"/><line class="meanci" x1="{x(ci[0]):.1f}" y1="13" x2="{x(ci[1]):.1f}" y2="13"/>'
            f'<circle cx="{x(r["mean_score"]):.1f}" cy="13" r="3.5" class="mean"/></svg>'
        )
        body.append(
            f'<tr class="dist" data-bot="{e(r["name"])}"><td class="name">{link(r["name"])}</td>'
            f'<td class="plot">{svg}</td><td data-v="{attr(r["mean_score"])}">'
            f"{value_ci(r['mean_score'], r['mean_score_ci'])}</td>"
            f'<td data-v="{attr(s["median"])}">{_num(s["median"])}</td></tr>'
        )
    foot = f'<tfoot><tr><td></td><td class="plot">{axis}</td><td></td><td></td></tr></tfoot>'
    return (
        f'<div class="scroll"><table id="score-distribution" class="dist"{paged(len(rows), 25)}>'
        f"<thead>{head}</thead><tbody>{''.join(body)}</tbody>{foot if len(rows) > 12 else ''}</table></div>"
    )


def _dist_axis(ticks: Sequence[float], x: Callable[[float], float]) -> str:
    """The score axis of the distribution table (drawn above and, when long, below)."""
    marks = "".join(
        f'<line class="grid" x1="{x(t):.1f}" y1="14" x2="{x(t):.1f}" y2="20"/>'
        f'<text class="tick" x="{x(t):.1f}" y="11" text-anchor="middle">{_num(t)}</text>'
        for t in ticks
    )
    return (
        f'<svg viewBox="0 0 {_DIST_W:.0f} 22" width="{_DIST_W:.0f}" height="22" aria-hidden="true">{marks}'
        f'<line class="axisline" x1="10" y1="20" x2="{_DIST_W - 10:.0f}" y2="20"/></svg>'
    )


def _head_to_head(doc: Mapping[str, Any], link: Callable[[str], str]) -> str:
    e = html.escape
    names = [r["name"] for r in doc["standings"]][:H2H_CAP]
    pairs = {(p["bot"], p["opponent"]): p for p in doc["head_to_head"] if p["bot"] in names}
    out = ['<div class="scroll"><table id="head-to-head" class="heat" data-filter><thead><tr><th></th>']
    out += [f'<th class="opp" title="{e(n)}">{e(n)}</th>' for n in names]
    out.append("</tr></thead><tbody>")
    for a in names:
        out.append(f'<tr data-bot="{e(a)}"><th class="me">{link(a)}</th>')
        for b in names:
            if a == b:
                out.append('<td class="self"></td>')
                continue
            out.append(h2h_cell(pairs[(a, b)]))
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def h2h_cell(p: Mapping[str, Any]) -> str:
    """One ``td.h2h`` of a head-to-head table (the page's and a bot page's)."""
    e = html.escape
    a, b, share = p["bot"], p["opponent"], p["share"]
    tip = f"{a} above {b} in {p['above']} of {p['meetings']} meetings ({p['below']} below, {p['ties']} ties)"
    style = f' style="background:{_heat(share)}"' if share is not None else ""
    head, counts = fmt_pair(p)
    text = e(head) + (f"<small>{e(counts)}</small>" if counts else "")
    return (
        f'<td class="h2h" data-bot="{e(a)}" data-opponent="{e(b)}" data-share="{attr(share)}" '
        f'data-meetings="{p["meetings"]}" data-above="{p["above"]}" data-below="{p["below"]}" '
        f'data-ties="{p["ties"]}" data-v="{attr(share)}" title="{e(tip)}"{style}>{text}</td>'
    )


_INSIDE = ' text-anchor="end" paint-order="stroke" stroke="#fff" stroke-width="3"'  # an end label over the lines


def rating_svg(
    steps: Sequence[int],
    series: Sequence[tuple[str, Sequence[float], str, bool]],
    unit: str,
    width: float,
) -> str:
    """The rating lines: (name, mu per step, colour, drawn in colour) each, the first on top."""
    e = html.escape
    height, left, right, top, bottom = 330.0, 44.0, 12.0, 14.0, 40.0  # the end labels sit inside the plot
    values = [v for _, mus, _, _ in series for v in mus]
    lo, hi = (min(values), max(values)) if values else (0.0, 50.0)
    yt = _ticks(lo, hi, 5)
    lo, hi = min(lo, yt[0]), max(hi, yt[-1])
    last = max(1, steps[-1] if steps else 1)
    xt = [t for t in _ticks(0, last, 6) if 0 <= t <= last]
    x = _scale(0, last, left, width - right)
    y = _scale(lo, hi, height - bottom, top)
    out = [
        f'<svg id="rating-history" viewBox="0 0 {width:.0f} {height:.0f}" width="100%" role="img" '
        f'aria-label="Rating mu over {unit}">'
    ]
    for t in yt:
        out.append(
            f'<line class="grid" x1="{left:.1f}" y1="{y(t):.1f}" x2="{width - right:.1f}" y2="{y(t):.1f}"/>'
            f'<text class="tick" x="{left - 6:.1f}" y="{y(t) + 4:.1f}" text-anchor="end">{_num(t)}</text>'
        )
    for t in xt:
        out.append(
            f'<text class="tick" x="{x(t):.1f}" y="{height - bottom + 16:.1f}" text-anchor="middle">{_num(t)}</text>'
        )
    out.append(
        f'<line class="axisline" x1="{left:.1f}" y1="{height - bottom:.1f}" x2="{width - right:.1f}" '
        f'y2="{height - bottom:.1f}"/><text class="axis" x="{(left + width - right) / 2:.1f}" '
        f'y="{height - 6:.1f}" text-anchor="middle">rated {unit}</text>'
    )
    ends: list[tuple[float, str]] = []
    faint_labels = []
    for n, mus, colour, strong in reversed(series):  # the first is drawn last, on top
        points = " ".join(f"{x(s):.1f},{y(m):.1f}" for s, m in zip(steps, mus))
        cls = "series" if strong else "series faint"
        out.append(
            f'<polyline class="{cls}" data-bot="{e(n)}" data-line="{e(n)}" points="{points}" stroke="{colour}">'
            f"<title>{e(n)}: \u03bc {fmt(mus[-1]) if mus else ''}</title></polyline>"
        )
        if mus and strong:
            ends.append((y(mus[-1]), n))
        elif mus:
            faint_labels.append(
                f'<text class="label faint" data-line="{e(n)}" x="{width - right - 4:.1f}" '
                f'y="{y(mus[-1]) - 4:.1f}"{_INSIDE}>{e(n)}</text>'
            )
    colour_of = {n: c for n, _, c, _ in series}
    for label_y, n in _spread(ends, 13.0, top + 14, height - bottom):
        out.append(
            f'<text class="label" data-line="{e(n)}" x="{width - right - 4:.1f}" y="{label_y - 4:.1f}" '
            f'style="fill:{colour_of[n]}"{_INSIDE}>{e(n)}</text>'
        )
    out += faint_labels
    out.append("</svg>")
    return "".join(out)


def _rating_history(doc: Mapping[str, Any], colours: Mapping[str, str], unit: str, width: float) -> str:
    hist = doc["rating_history"]
    names = [r["name"] for r in doc["standings"]]
    series = [(n, hist["mu"][n], colours[n], i < TOP_LINES) for i, n in enumerate(names)]
    return rating_svg(hist["step"], series, unit, width)


def _seat_bias(doc: Mapping[str, Any]) -> str:
    if doc["seat_bias"] is None:
        return f'<p class="note" id="seat-bias">{html.escape(NO_SEAT_BIAS)}</p>'
    head = "".join(f"<th>{h}</th>" for h in ("Seat", "Matches", "Mean score [95% CI]", "Mean rank [95% CI]"))
    body = "".join(
        f'<tr data-seat="{s["seat"]}" data-biased="{attr(s.get("biased", False))}"><td>{s["seat"]}'
        f"{' !' if s.get('biased') else ''}</td><td>{s['matches']}</td>"
        f"<td>{value_ci(s['mean_score'], s['mean_score_ci'])}</td>"
        f"<td>{value_ci(s['mean_rank'], s['mean_rank_ci'])}</td></tr>"
        for s in doc["seat_bias"]
    )
    return (
        f'<div class="scroll"><table id="seat-bias"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
        f'<p class="note">{SEAT_NOTE}</p>'
    )


def _spread(items: list[tuple[float, str]], gap: float, lo: float, hi: float) -> list[tuple[float, str]]:
    """Label positions moved apart by at least ``gap``, kept within [lo, hi] where they fit."""
    placed: list[tuple[float, str]] = []
    for pos, name in sorted(items):
        pos = max(pos, lo, placed[-1][0] + gap if placed else lo)
        placed.append((pos, name))
    overflow = (placed[-1][0] - hi) if placed else 0.0
    if overflow > 0:
        placed = [(max(lo, p - overflow), n) for p, n in placed]
    return placed


def _ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten) covering [lo, hi]."""
    if hi <= lo:
        lo, hi = lo - 1, hi + 1
    raw = (hi - lo) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(lo / step) * step
    n = math.ceil((hi - start) / step - 1e-9)
    return [round(start + i * step, 10) for i in range(n + 1)]


def _scale(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    """A linear map of [lo, hi] onto [a, b]."""
    span = (hi - lo) or 1.0
    return lambda v: a + (float(v) - lo) / span * (b - a)


def _heat(share: float) -> str:
    """A diverging colour: red below one half, white at one half, blue above."""
    lo, mid, hi = (236, 128, 108), (247, 247, 247), (96, 160, 208)
    t = max(0.0, min(1.0, share))
    a, b, f = (lo, mid, t * 2) if t < 0.5 else (mid, hi, (t - 0.5) * 2)
    return "#" + "".join(f"{round(a[i] + (b[i] - a[i]) * f):02x}" for i in range(3))


def _ci(interval: Sequence[Any] | None, i: int) -> Any:
    return interval[i] if interval else None


def _num(x: float) -> str:
    return f"{x:g}"
