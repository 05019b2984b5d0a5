"""The leaderboard page ``index.html`` (pure: one string from the standings document),
and the text formats it shares with ``README.md``.

The page is one self-contained file: inline CSS and inline SVG drawn here, no script,
no external URL of any kind (no fonts, images or CDNs), so it opens from disk with no
network. Every bot name is escaped. The bytes depend on the document alone (no dates,
no random ids), so the same journal gives the same page.

Stable hooks for tests and scrapers: ``#standings`` with one ``tr[data-bot]`` per bot
(``data-rank``, ``data-mean-score``, ``data-mean-score-lo`` ... as in standings.json)
and cells ``td[data-col]``; ``#score-distribution``; ``#head-to-head`` with one
``td.h2h`` per ordered pair (``data-bot``, ``data-opponent``, ``data-share``,
``data-meetings`` ...); ``#rating-history``; ``#seat-bias``; ``p.dq`` per
disqualified bot.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from referee import __version__
from referee.games.base import Game
from referee.report.text import (
    COOP_WINS,
    H2H_CAP,
    H2H_NOTE,
    MINUS_3_SIGMA,
    NO_DIFFERENCES,
    NO_SEAT_BIAS,
    SEAT_NOTE,
    difference_rows,
    fmt,
    fmt_ci,
    fmt_pair,
    fmt_toml,
    role_mark,
    seed_text,
    standings_columns,
)

# Tableau 10: distinct, print-safe colours; bots take them in standings order.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")

# Settings shown in their own lines; every other key of the settings is listed generically.
_KNOWN_SETTINGS = {
    "name",
    "game",
    "options",
    "seed",
    "players",
    "format",
    "rounds",
    "matches",
    "deadline_ms",
    "on_fault",
    "max_faults",
    "duplicate",
    "time_bank_ms",
    "max_fault_rate",
    "bots",
}


def format_text(settings: Mapping[str, Any]) -> str:
    """The tournament format in words."""
    if settings["format"] == "round_robin":
        text = f"round robin, {settings.get('rounds')} round(s), {settings['players']} players per match"
    elif settings["format"] == "team":
        text = f"team (duplicate): {settings.get('matches')} deals, each played by every bot as a team of {settings['players']}"
    elif settings["format"] == "gauntlet":
        size = (
            f"{settings['rounds']} round(s)" if settings.get("rounds") else f"{settings.get('matches')} random tables"
        )
        text = (
            f"gauntlet of {', '.join(settings.get('challengers', []))} against the field, {size}, "
            f"{settings['players']} players per match"
            + ("; challengers meet" if settings.get("challengers_meet") else "; challengers never meet")
        )
    else:
        text = f"random tables, {settings.get('matches')} matches, {settings['players']} players per match"
    if settings.get("duplicate"):
        text += "; duplicate deals (every deal once per seat rotation of its table)"
    return text


def settings_lines(game: Game, doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The settings shown above the standings, as (label, text); values of the options and of
    any further setting (e.g. sandbox, a secret seed) as TOML writes them."""
    s = doc["settings"]
    opts = ", ".join(f"{k} = {fmt_toml(v)}" for k, v in sorted(s["options"].items())) or "defaults"
    deals = doc["method"]["deals"]
    lines = [
        ("Game", f"{game.info.title} ({s['game']}), options: {opts}"),
        ("Format", f"{format_text(s)}; {seed_text(s)}"),
        ("Matches played", f"{doc['matches']} of {doc['scheduled']} ({deals} deal{'s' if deals != 1 else ''})"),
        ("Limits", _limits_text(s)),
        ("Bots", ", ".join(s["bots"])),
    ]
    other = [f"{k} = {fmt_toml(v)}" for k, v in sorted(s.items()) if k not in _KNOWN_SETTINGS]
    if other:
        lines.append(("Other settings", "; ".join(other)))
    if doc.get("stopped"):  # stop = "settled": why the run ended
        lines.insert(3, ("Stopped", str(doc["stopped"]["reason"])))
    if doc.get("live"):  # publish_every_s: a page rendered while the run goes on
        live = doc["live"]
        lines.insert(0, ("In progress", f"covers {live['matches']} of {live['scheduled']} matches, as of {live['at']}"))
    return lines


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


def render_page(game: Game, doc: Mapping[str, Any], sections: Sequence[str] = ()) -> str:
    """The content of ``index.html``.

    Hook: ``sections`` are HTML fragments (each a whole ``<section>``, already escaped)
    added before the footer, e.g. a link to the match list and replay viewer.
    """
    rows = doc["standings"]
    colours = {r["name"]: PALETTE[i % len(PALETTE)] for i, r in enumerate(rows)}
    side_by_side = len(rows) <= 4  # a small heat map leaves room for the rating chart beside it
    unit = "deals" if game.info.cooperative else "matches"
    e = html.escape
    settings = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in settings_lines(game, doc))
    dq = "".join(
        f'<p class="dq" data-bot="{e(r["name"])}"><b>DQ</b> {e(r["name"])}: {e(r["disqualified_note"] or "")}</p>'
        for r in rows
        if r["disqualified"]
    )
    warn = few_deals_text(doc)
    cap = f" The first {H2H_CAP} bots of the standings; every pair is in standings.json." if len(rows) > H2H_CAP else ""
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(doc['tournament'])}: leaderboard</title>",
        f"<style>{_CSS}</style></head>",
        "<body><main>",
        f'<header><p class="kicker">Leaderboard</p><h1>{e(doc["tournament"])}</h1>'
        f'<dl class="settings">{settings}</dl></header>',
        "<section><h2>Standings</h2>",
        _standings_table(game, doc, colours),
        dq,
        f'<p class="note">{e(ranking_text(game, doc))}</p>',
        f'<p class="warn" id="few-deals">{e(warn)}</p>' if warn else "",
        "</section>",
        "<section><h2>Differences between neighbours</h2>",
        _differences(game, doc),
        '<p class="note">Each bot against the next one in the standings: the 95% interval of the difference, '
        "paired by deal (duplicate deals tighten it); separated when it excludes 0. P(above): share of "
        "bootstrap resamples in which the bot ranks above the next.</p></section>",
        "<section><h2>Score distribution</h2>",
        _score_distribution(doc, colours),
        '<p class="note">Per bot: whiskers from lowest to highest score, box from the first to the third '
        "quartile, a line at the median; the dark bar is the 95% interval of the mean score and the dot the "
        "mean.</p></section>",
        f'<div class="{"pair" if side_by_side else "stack"}"><section><h2>Head-to-head</h2>',
        _head_to_head(doc, colours),
        f'<p class="note">{H2H_NOTE}{cap}</p></section>',
        f"<section><h2>Rating over {unit}</h2>",
        _rating_history(doc, colours, unit, 540.0 if side_by_side else 1100.0),
        f'<p class="note">Plackett-Luce log-strength \u03bc fitted on the {unit} played so far, in fixture '
        "order.</p></section></div>",
        "<section><h2>P(row ranks above column)</h2>",
        _above(doc, colours),
        f'<p class="note">Share of bootstrap resamples in which the row bot is above the column bot in the '
        f"standings' own order.{cap}</p></section>",
        "<section><h2>Seat bias</h2>",
        _seat_bias(doc),
        "</section>",
        _replays_link(doc),
        *sections,
        f"<footer>Made by referee {e(__version__)} from <code>matches.jsonl</code>; the same journal always "
        "gives this page byte for byte. Data: <code>standings.json</code>, <code>standings.csv</code>; "
        "response times: <code>timings.json</code>.</footer>",
        "</main></body></html>",
        "",
    ]
    return "\n".join(parts)


def _replays_link(doc: Mapping[str, Any]) -> str:
    """A link to the match list and replays (viewer.py) when the run kept transcripts."""
    if doc["settings"].get("transcripts", "all") == "none":
        return ""
    return (
        '<section id="replays"><h2>Matches</h2><p><a href="replays/index.html">Match list and replays</a>: '
        "every decision of the most recent matches and of matches with faults, step by step.</p></section>"
    )


def _standings_table(game: Game, doc: Mapping[str, Any], colours: Mapping[str, str]) -> str:
    e = html.escape
    rows = doc["standings"]
    spans = [r["mean_score_ci"] for r in rows if r["mean_score_ci"]]
    lo = min((s[0] for s in spans), default=0.0)
    hi = max((s[1] for s in spans), default=1.0)
    columns = standings_columns(game, rows)
    head = []
    for c in columns:
        head.append(f"<th>{e(c.header)}</th>")
        if c.key == "mean-score":
            head.append(f'<th class="axis-head">{_ci_axis(lo, hi)}</th>')
    out = ['<div class="scroll"><table id="standings"><thead><tr>', "".join(head), "</tr></thead><tbody>"]
    for r in rows:
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
                    f'<span class="swatch" style="background:{colours[r["name"]]}"></span>{e(r["name"] + role_mark(r))}'
                )
            elif c.value is not None and c.interval is not None:
                text = _value_ci(c.value(r), c.interval(r))
            elif c.key == "rating":
                text = (
                    f"{fmt(rating['ordinal'])}<small>\u03bc {fmt(rating['mu'])} \u03c3 {fmt(rating['sigma'])}</small>"
                )
            else:
                text = e(c.text(r))
            cells.append((c.key, text))
            if c.key == "mean-score":
                cells.append(("ci-bar", _ci_bar(r, lo, hi, colours[r["name"]])))
        cls = ' class="dq-row"' if r["disqualified"] else ""
        out.append(
            f"<tr{cls} "
            + " ".join(f'data-{k}="{_attr(v)}"' for k, v in attrs.items())
            + ">"
            + "".join(f'<td data-col="{k}">{v}</td>' for k, v in cells)
            + "</tr>"
        )
    out.append("</tbody></table></div>")
    return "".join(out)


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


def _differences(game: Game, doc: Mapping[str, Any]) -> str:
    """Adjacent rows of the standings: the difference with its interval and P(above)."""
    e = html.escape
    diffs = doc.get("differences") or []
    if not diffs:
        return f'<p class="note" id="differences">{NO_DIFFERENCES}</p>'
    head, cells = difference_rows(game, diffs, _value_ci, e)
    body = [
        f'<tr data-bot="{e(d["bot"])}" data-next="{e(d["next"])}" data-separated="{_attr(d["separated"])}">'
        + "".join(f"<td>{c}</td>" for c in row)
        + "</tr>"
        for d, row in zip(diffs, cells)
    ]
    return (
        '<div class="scroll"><table id="differences" class="narrow"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></div>"
    )


def _above(doc: Mapping[str, Any], colours: Mapping[str, str]) -> str:
    """The P(row ranks above column) matrix, the first ``H2H_CAP`` bots."""
    e = html.escape
    above = doc.get("above") or {"bots": [], "p": []}
    names = above["bots"][:H2H_CAP]
    out = ['<div class="scroll"><table id="p-above" class="heat"><thead><tr><th></th>']
    out += [
        f'<th class="opp" title="{e(n)}"><span class="swatch" style="background:{colours[n]}"></span>{e(n)}</th>'
        for n in names
    ]
    out.append("</tr></thead><tbody>")
    for i, a in enumerate(names):
        out.append(f'<tr><th class="me"><span class="swatch" style="background:{colours[a]}"></span>{e(a)}</th>')
        for j, b in enumerate(names):
            p = above["p"][i][j]
            if p is None:
                out.append('<td class="self"></td>')
                continue
            out.append(
                f'<td class="above" data-bot="{e(a)}" data-opponent="{e(b)}" data-p="{_attr(p)}" '
                f'style="background:{_heat(p)}">{p:.0%}</td>'
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _value_ci(value: float | None, ci: Sequence[float | None] | None) -> str:
    if value is None:
        return ""
    if not ci:
        return fmt(value)
    return f"{fmt(value)}<small>[{fmt(ci[0])}, {fmt(ci[1])}]</small>"


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


def _score_distribution(doc: Mapping[str, Any], colours: Mapping[str, str]) -> str:
    e = html.escape
    rows = [r for r in doc["standings"] if r["score_summary"]]
    width, left, right, row_h, top = 1100.0, 150.0, 30.0, 34.0, 12.0
    height = top + row_h * max(1, len(rows)) + 34
    lo = min((r["score_summary"]["min"] for r in rows), default=0.0)
    hi = max((r["score_summary"]["max"] for r in rows), default=1.0)
    ticks = _ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])
    x = _scale(lo, hi, left, width - right)
    axis_y = top + row_h * max(1, len(rows)) + 4
    sense = "lower is better" if doc["lower_score_wins"] else "higher is better"
    out = [
        f'<svg id="score-distribution" viewBox="0 0 {width:.0f} {height:.0f}" width="100%" role="img" '
        f'aria-label="Score distribution per bot">'
    ]
    for t in ticks:
        out.append(
            f'<line class="grid" x1="{x(t):.1f}" y1="{top:.1f}" x2="{x(t):.1f}" y2="{axis_y:.1f}"/>'
            f'<text class="tick" x="{x(t):.1f}" y="{axis_y + 14:.1f}" text-anchor="middle">{_num(t)}</text>'
        )
    out.append(
        f'<text class="axis" x="{(left + width - right) / 2:.1f}" y="{height - 2:.1f}" '
        f'text-anchor="middle">score per match ({sense})</text>'
    )
    for i, r in enumerate(rows):
        s, c, cy = r["score_summary"], colours[r["name"]], top + row_h * i + row_h / 2
        ci = r["mean_score_ci"] or [r["mean_score"], r["mean_score"]]
        tip = (
            f"{r['name']}: min {_num(s['min'])}, quartiles {_num(s['q1'])} / {_num(s['median'])} / "
            f"{_num(s['q3'])}, max {_num(s['max'])}; mean {fmt_ci(r['mean_score'], r['mean_score_ci'])}"
        )
        out.append(
            f'<g class="dist" data-bot="{e(r["name"])}"><title>{e(tip)}</title>'
            f'<text class="label" x="{left - 10:.1f}" y="{cy + 4:.1f}" text-anchor="end">{e(r["name"])}</text>'
            f'<line class="whisker" x1="{x(s["min"]):.1f}" y1="{cy:.1f}" x2="{x(s["max"]):.1f}" y2="{cy:.1f}"/>'
            f'<line class="whisker" x1="{x(s["min"]):.1f}" y1="{cy - 6:.1f}" x2="{x(s["min"]):.1f}" y2="{cy + 6:.1f}"/>'
            f'<line class="whisker" x1="{x(s["max"]):.1f}" y1="{cy - 6:.1f}" x2="{x(s["max"]):.1f}" y2="{cy + 6:.1f}"/>'
            f'<rect x="{x(s["q1"]):.1f}" y="{cy - 10:.1f}" width="{max(1.0, x(s["q3"]) - x(s["q1"])):.1f}" '
            f'height="20" rx="3" fill="{c}" fill-opacity="0.28" stroke="{c}" stroke-width="1.5"/>'
            f'<line x1="{x(s["median"]):.1f}" y1="{cy - 10:.1f}" x2="{x(s["median"]):.1f}" y2="{cy + 10:.1f}" '
            f'stroke="{c}" stroke-width="2.5"/>'
            f'<line class="meanci" x1="{x(ci[0]):.1f}" y1="{cy:.1f}" x2="{x(ci[1]):.1f}" y2="{cy:.1f}"/>'
            f'<circle cx="{x(r["mean_score"]):.1f}" cy="{cy:.1f}" r="3.5" class="mean"/></g>'
        )
    out.append("</svg>")
    return "".join(out)


def _head_to_head(doc: Mapping[str, Any], colours: Mapping[str, str]) -> str:
    e = html.escape
    names = [r["name"] for r in doc["standings"]][:H2H_CAP]
    pairs = {(p["bot"], p["opponent"]): p for p in doc["head_to_head"]}
    out = ['<div class="scroll"><table id="head-to-head" class="heat"><thead><tr><th></th>']
    out += [
        f'<th class="opp" title="{e(n)}"><span class="swatch" style="background:{colours[n]}"></span>{e(n)}</th>'
        for n in names
    ]
    out.append("</tr></thead><tbody>")
    for a in names:
        out.append(f'<tr><th class="me"><span class="swatch" style="background:{colours[a]}"></span>{e(a)}</th>')
        for b in names:
            if a == b:
                out.append('<td class="self"></td>')
                continue
            p = pairs[(a, b)]
            share = p["share"]
            tip = f"{a} above {b} in {p['above']} of {p['meetings']} meetings ({p['below']} below, {p['ties']} ties)"
            style = f' style="background:{_heat(share)}"' if share is not None else ""
            head, counts = fmt_pair(p)
            text = e(head) + (f"<small>{e(counts)}</small>" if counts else "")
            out.append(
                f'<td class="h2h" data-bot="{e(a)}" data-opponent="{e(b)}" data-share="{_attr(share)}" '
                f'data-meetings="{p["meetings"]}" data-above="{p["above"]}" data-below="{p["below"]}" '
                f'data-ties="{p["ties"]}" title="{e(tip)}"{style}>{text}</td>'
            )
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _rating_history(doc: Mapping[str, Any], colours: Mapping[str, str], unit: str, width: float) -> str:
    e = html.escape
    hist = doc["rating_history"]
    steps: list[int] = hist["step"]
    names = [r["name"] for r in doc["standings"]]
    height, left, right, top, bottom = 330.0, 44.0, 100.0, 14.0, 40.0
    values = [v for n in names for v in hist["mu"][n]]
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
        f'y2="{height - bottom:.1f}"/>'
    )
    out.append(
        f'<text class="axis" x="{(left + width - right) / 2:.1f}" y="{height - 6:.1f}" '
        f'text-anchor="middle">rated {unit}</text>'
    )
    ends: list[tuple[float, str]] = []
    for n in reversed(names):  # the leader is drawn last, on top
        mus = hist["mu"][n]
        points = " ".join(f"{x(s):.1f},{y(m):.1f}" for s, m in zip(steps, mus))
        out.append(
            f'<polyline class="series" data-bot="{e(n)}" points="{points}" stroke="{colours[n]}">'
            f"<title>{e(n)}: \u03bc {fmt(mus[-1]) if mus else ''}</title></polyline>"
        )
        if mus:
            ends.append((y(mus[-1]), n))
    for label_y, n in _spread(ends, 13.0, top + 4, height - bottom):
        out.append(
            f'<text class="label" x="{width - right + 8:.1f}" y="{label_y + 4:.1f}" fill="{colours[n]}">{e(n)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _seat_bias(doc: Mapping[str, Any]) -> str:
    if doc["seat_bias"] is None:
        return f'<p class="note" id="seat-bias">{html.escape(NO_SEAT_BIAS)}</p>'
    head = "".join(f"<th>{h}</th>" for h in ("Seat", "Matches", "Mean score [95% CI]", "Mean rank [95% CI]"))
    body = "".join(
        f'<tr data-seat="{s["seat"]}" data-biased="{_attr(s.get("biased", False))}"><td>{s["seat"]}'
        f"{' !' if s.get('biased') else ''}</td><td>{s['matches']}</td>"
        f"<td>{_value_ci(s['mean_score'], s['mean_score_ci'])}</td>"
        f"<td>{_value_ci(s['mean_rank'], s['mean_rank_ci'])}</td></tr>"
        for s in doc["seat_bias"]
    )
    return (
        f'<table id="seat-bias" class="narrow"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
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


def _attr(value: Any) -> str:
    """An attribute value: JSON text of a number or bool, empty for None, escaped."""
    if value is None:
        return ""
    return html.escape(value if isinstance(value, str) else json.dumps(value))


def _num(x: float) -> str:
    return f"{x:g}"


_CSS = """
:root{--ink:#1f2933;--muted:#616e7c;--line:#e4e7eb;--bg:#f5f7fa;--card:#fff;--accent:#4e79a7}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1240px;margin:0 auto;padding:28px 24px 40px}
header{margin-bottom:18px}
.kicker{margin:0;color:var(--accent);font-weight:600;text-transform:uppercase;letter-spacing:.08em;font-size:12px}
h1{margin:2px 0 12px;font-size:28px;letter-spacing:-.01em}
h2{margin:0 0 12px;font-size:17px}
.settings{display:grid;grid-template-columns:max-content 1fr;gap:3px 16px;margin:0;color:var(--muted)}
.settings dt{font-weight:600;color:var(--ink)}
.settings dd{margin:0}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin:0 0 18px;box-shadow:0 1px 2px rgba(31,41,51,.04)}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(440px,1fr));gap:18px}
.pair section{margin:0 0 18px;min-width:0}
.stack section{min-width:0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;font-size:13.5px}
th,td{padding:6px 8px;text-align:right;white-space:nowrap;border-bottom:1px solid var(--line)}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfc;white-space:normal;vertical-align:bottom}
td small{display:block;color:var(--muted);font-size:11px}
#standings td[data-col=bot],#standings th:nth-child(2){text-align:left;font-weight:600}
#standings td[data-col=rank]{font-weight:700}
#standings tbody tr:hover{background:#f8fafc}
tr.dq-row td{color:var(--muted);background:#fdf2f2}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:7px;vertical-align:0}
.cibar .track{stroke:var(--line);stroke-width:2}
table.narrow{width:auto;min-width:420px}
.heat th.me{text-align:left;vertical-align:middle}
.heat td{text-align:center;min-width:64px;border:2px solid #fff;font-weight:600}
.heat td small{font-weight:400;color:inherit;opacity:.7}
.heat td.self{background:repeating-linear-gradient(45deg,#f1f3f5,#f1f3f5 4px,#fff 4px,#fff 8px)}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:var(--ink)}
svg .tick,svg .axis{fill:var(--muted);font-size:11px}
svg .label{font-weight:600}
svg .grid{stroke:var(--line);stroke-width:1}
svg .axisline{stroke:#9aa5b1}
svg .whisker{stroke:#9aa5b1;stroke-width:1.5}
svg .meanci{stroke:var(--ink);stroke-width:3;stroke-linecap:round}
svg .mean{fill:#fff;stroke:var(--ink);stroke-width:2}
svg .series{fill:none;stroke-width:2;stroke-linejoin:round}
.note{color:var(--muted);font-size:12.5px;margin:10px 0 0}
.warn{margin:10px 0 0;padding:8px 12px;border-left:3px solid #edc948;background:#fdf8e6}
.dq{margin:10px 0 0;padding:8px 12px;border-left:3px solid #d64545;background:#fdf2f2;color:#8a1c1c}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:8px}
code{font-size:12px;background:#eef1f4;padding:1px 4px;border-radius:3px}
""".strip().replace("\n", "")
