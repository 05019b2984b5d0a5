"""The prize places' headline: one line per place, for README.md, the page and the console.

"1st: X, settled at match 3,412" or "1st: not settled: X, Y or Z (0.61, 0.30, 0.09)",
from ``standings.json``'s ``places`` (``stats/places.py`` says how they are computed).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from referee.schedule.final import FinalPlan, final_plan, season_lineup
from referee.schedule.fixture import match_id
from referee.stats.places import FinalResult, FinalWatch

SHOWN = 3  # candidates named in a line; the rest are counted, their chance summed

PLACES_NOTE = (
    "Who takes the prize places, from the opponent-adjusted Plackett-Luce model. A settled place holds "
    "at the stated confidence together with every other claim, at whatever match it was read "
    "(anytime-valid); an open place names the bots that can still take it and each one's chance."
)


def ordinal(place: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, ..."""
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def place_line(p: Mapping[str, Any]) -> str:
    """One place as a sentence (bot names as they are: the caller escapes)."""
    head = ordinal(int(p["place"]))
    if p["settled"]:
        return f"{head}: {p['bot']}, settled at match {p['settled_at']:,}"
    cands: Sequence[Mapping[str, Any]] = p["candidates"]
    shown = [c["bot"] for c in cands[:SHOWN]]
    chances = [f"{float(c['chance']):.2f}" for c in cands[:SHOWN]]
    rest = cands[SHOWN:]
    if rest:
        shown.append(f"{len(rest)} other{'s' if len(rest) > 1 else ''}")
        chances.append(f"{sum(float(c['chance']) for c in rest):.2f} together")
    names = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    return f"{head}: not settled: {names} ({', '.join(chances)})"


def place_lines(doc: Mapping[str, Any]) -> list[str]:
    """The headline of a standings document: one line per prize place (none without places)."""
    return [place_line(p) for p in doc.get("places") or ()]


def places_html(doc: Mapping[str, Any]) -> str:
    """The page's headline (empty without places): the first block of the header, one line
    per place, so the leader is on the first screen of a phone."""
    lines = place_lines(doc)
    if not lines:
        return ""
    e = html.escape
    items = "".join(
        f"<li><strong>{e(head)}</strong>: {e(rest)}</li>" for head, rest in (line.split(": ", 1) for line in lines)
    )
    return (
        f'<div class="places" id="places"><h2>Prize places</h2><div><ul>{items}</ul>'
        f'<details class="note"><summary>what this says</summary>{e(PLACES_NOTE)}</details></div></div>'
    )


WHY = {
    "contender": "can still reach the prize places: the tables go where they decide them",
    "placement": "a new entry (fewer matches than the median): placed first",
    "floor": "surely cannot reach the prize places now: a floor share keeps its rating current",
}
LISTED = 12  # bots named per reason on the page; the rest counted


def matchmaking_html(doc: Mapping[str, Any]) -> str:
    """The ladder's "Matches and why" section (empty for other formats): per reason, how
    many bots, their mean matches and the bots with their matches."""
    rows = [r for r in doc["standings"] if r.get("matchmaking")]
    if not rows:
        return ""
    e = html.escape
    body = []
    for why, text in WHY.items():
        mine = [r for r in rows if r["matchmaking"] == why]
        if not mine:
            continue
        mean = sum(r["matches"] for r in mine) / len(mine)
        named = ", ".join(f"{e(r['name'])} ({r['matches']:,})" for r in mine[:LISTED])
        more = f" and {len(mine) - LISTED} more" if len(mine) > LISTED else ""
        body.append(
            f'<tr><td>{why}</td><td>{len(mine)}</td><td>{mean:,.0f}</td><td class="wrap">{e(text)}: {named}{more}</td></tr>'
        )
    return (
        '<section id="matchmaking-section"><h2>Matches and why</h2><p class="lead">The ladder chooses its tables '
        "from the results: each bot's matches and why it gets its seats now (the opponent-adjusted model, top "
        "places first; every bot's own count is in the standings).</p>"
        '<div class="scroll"><table><thead><tr><th>Why</th><th>Bots</th>'
        "<th>Matches (mean)</th><th>Who</th></tr></thead><tbody>" + "".join(body) + "</tbody></table></div></section>"
    )


def final_watch(
    settings: Mapping[str, Any], records: Iterable[Mapping[str, Any]]
) -> tuple[FinalWatch | None, Iterable[Mapping[str, Any]]]:
    """The watch of a ladder's final from ``tournament.json``'s settings, and ``records``
    counted by it as they pass (None and ``records`` as they are: no final, or the season
    is not closed)."""
    plan = final_plan(settings)
    if plan is None:
        return None, records
    top, confidence = int(settings.get("top") or 0), float(settings.get("confidence", 0.95))
    watch = FinalWatch(plan, season_lineup(settings.get("ladder"), plan), top, confidence)
    return watch, watch.watch(records)


def final_order(rows: list[dict[str, Any]], final: FinalResult) -> list[dict[str, Any]]:
    """Standings rows once the final has begun: the finalists in the final's order, then the
    season's other bots in the season's order, then the rest as they were; ranks renumbered
    (a disqualified bot keeps "DQ")."""
    by = {r["name"]: r for r in rows}
    head = [by[b] for b in final.order if b in by]
    rest = [by[b] for b in final.season_order if b in by and b not in final.finalists]
    placed = {r["name"] for r in head + rest}
    out = head + rest + [r for r in rows if r["name"] not in placed]
    rank = 0
    for r in out:
        if isinstance(r["rank"], int):
            rank += 1
            r["rank"] = rank
    return out


def final_fields(doc: dict[str, Any], plan: FinalPlan, final: FinalResult) -> None:
    """standings.json's ``final`` and every row's ``decided_by`` ("final" for a finalist once
    the final has begun, else "season")."""
    doc["final"] = final.document(plan)
    for row in doc["standings"]:
        row["decided_by"] = "final" if final.played and row["name"] in final.finalists else "season"


def final_sets(bots: Mapping[str, dict[str, Any]], final: FinalResult) -> None:
    """The finalists' rank sets and intervals from the final (places among the finalists,
    which take the first places); every other bot's start after the finalists'."""
    n = len(final.finalists)
    for name, verdict in bots.items():
        if name in final.rank_sets:
            verdict["rank_set"] = list(final.rank_sets[name])
            verdict["rank_interval"] = list(final.ranges.get(name, final.rank_sets[name]))
            continue
        for key in ("rank_set", "rank_interval"):
            if verdict.get(key):
                lo, hi = verdict[key]
                verdict[key] = [max(int(lo), n + 1), max(int(hi), n + 1)]


def final_lines(doc: Mapping[str, Any]) -> list[str]:
    """The final in sentences (none without one): who played it, how it ended, which order
    decided which places (bot names as they are: the caller escapes)."""
    final = doc.get("final")
    if not final:
        return []
    n, finalists = int(final["bots"]), list(final["finalists"])
    if not final["played"]:
        who = ", ".join(finalists) if finalists else "not known yet"
        return [f"The final of the season's top {n} has not begun; its finalists as the season stands: {who}."]
    state = (
        "settled its prize places"
        if final["settled"]
        else ("played its whole budget" if final["over"] else "is being played")
    )
    return [
        f"The final of the season's top {len(finalists)} {state}: {final['played']:,} of at most "
        f"{final['budget']:,} matches, from {match_id(int(final['first_match']))} on.",
        f"Places 1-{len(finalists)} are the final's order: {', '.join(final['order'])}.",
        f"The season had them in this order: {', '.join(finalists)}; places {len(finalists) + 1} on keep the "
        "season's order (each row's decided_by says which).",
    ]


def final_html(doc: Mapping[str, Any]) -> str:
    """The page's section on the final (empty without one): both orders side by side."""
    final = doc.get("final")
    if not final:
        return ""
    e = html.escape
    lead = "".join(f'<p class="lead">{e(line)}</p>' for line in final_lines(doc))
    order = list(final["order"]) if final["played"] else []
    season = list(final["finalists"])
    body = "".join(
        f"<tr><td>{i + 1}</td><td>{e(order[i]) if i < len(order) else ''}</td><td>{e(b)}</td></tr>"
        for i, b in enumerate(season)
    )
    return (
        f'<section id="final-section"><h2>The final</h2>{lead}<div class="scroll"><table><thead><tr><th>Place</th>'
        f"<th>The final's order (decides)</th><th>The season's order</th></tr></thead><tbody>{body}</tbody>"
        "</table></div></section>"
    )
