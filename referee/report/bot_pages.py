"""A page per bot, ``bots/<name>.html``: what a contestant opens.

Each page holds the bot's standings row with its intervals explained, its rating history,
its versions and whether it was excluded, its head-to-head against every opponent it met,
its faults (with the reason and a link to the decision in the replay viewer) and EVERY
match it played, paged, each linking its replay at the bot's first decision
(``../replays/index.html#<match>/s<seat>d0``: the replay packs hold every match).

Cost stays flat: the per-bot match lists come from the journal's columns in one numpy
pass (``BotMatches``: one stable sort of the seats by bot), never one pass per bot. The
first ``CHUNK`` matches of a bot are inline in its page; the rest are data files of
``CHUNK`` matches each, ``bots/data/<stem>.<n>.js``, that the page loads as scripts when
their page of the list is shown (this works from ``file://``). About 40 bytes per seat
played (id, seat, table, rank, score, faults): at 1,000,000 four-seat matches about
160 MB in 4,000 files at 1,000 matches a file. Fault details are kept for the
``FAULT_MATCHES`` faulted matches of lowest index (a hostile bot can fault at every
decision); every match, faulted or not, stays in the match list with its fault count.

The pages' bytes depend on the journal alone (``bots/bots.js`` holds the names and the
script shared by every page). ``write_bot_pages`` writes a file only when its bytes
change (a live publish rewrites little) and removes the pages of bots no longer listed.
"""

from __future__ import annotations

import hashlib
import heapq
import html
import json
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee import __version__
from referee.games.base import Game
from referee.report.names import bot_files
from referee.report.page import (
    FAINT,
    PALETTE,
    h2h_cell,
    page_files,
    rating_svg,
)
from referee.report.text import MINUS_3_SIGMA, fmt, fmt_faults, fmt_range, fmt_wins, role_mark
from referee.report.ui import CSS, SCRIPT, attr, linker, paged, value_ci
from referee.stats.columns import Columns, credit_mask, kept_rows
from referee.store.files import atomic_write

CHUNK = 1000  # matches per data file (and inline in the page)
PER_PAGE = 100  # matches a screen of the list
FAULT_MATCHES = 20_000  # faulted matches whose fault details are kept (lowest indices)
FAULTS_SHOWN = 1000  # fault lines on one bot's page
DETAIL_CHARS = 300

Progress = Callable[[int, int, str], None]
IntArray = npt.NDArray[np.int64]


class MatchTap:
    """Passes journal lines through unchanged, keeping each line's id and index and the
    fault details of faulted matches (bounded): the one extra thing a bot page needs
    that the columns drop. Lines may come in any order; the last line of an index wins."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.index = array("q")
        self.faulted: dict[int, tuple[str, list[str], list[tuple[int, int | None, str, str, str]]]] = {}
        self._heap: list[int] = []  # -index of every kept faulted match

    def wrap(self, records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """The lines of ``records``, each recorded as it passes."""
        ids, index, faulted = self.ids, self.index, self.faulted
        for d in records:
            try:
                i, ident = int(d["index"]), str(d["id"])
                index.append(i)
            except (KeyError, TypeError, ValueError, OverflowError):  # build_columns names the problem
                i, ident = -1, ""
                index.append(-1)
            ids.append(ident)
            f = d.get("faults") if isinstance(d, dict) else None
            if f:
                self._keep(i, d, f)
            elif faulted and i in faulted:
                del faulted[i]
            yield d

    def _keep(self, i: int, d: Mapping[str, Any], faults: Any) -> None:
        """Keep the fault details of line ``d`` while it is among the lowest-index faulted matches."""
        if i not in self.faulted:
            if len(self._heap) >= FAULT_MATCHES:
                if i > -self._heap[0]:
                    return
                self.faulted.pop(-heapq.heappop(self._heap), None)
            heapq.heappush(self._heap, -i)
        try:
            kept = [
                (
                    int(x["seat"]),
                    x.get("decision"),
                    str(x["kind"]),
                    str(x.get("detail", ""))[:DETAIL_CHARS],
                    str(x.get("phase", "act")),
                )
                for x in faults
            ]
            self.faulted[i] = (str(d["id"]), [str(b) for b in d["bots"]], kept)
        except (KeyError, TypeError, ValueError):
            self.faulted.pop(i, None)


@dataclass
class BotMatches:
    """Every bot's matches, from the columns: entries (row, seat) grouped by bot in fixture order."""

    names: list[str]
    ids: list[str]  # per row
    bot: IntArray  # (rows, seats), -1 padding
    rank: IntArray
    score: npt.NDArray[np.float64]
    faults: IntArray  # act faults per seat
    forfeited: npt.NDArray[np.bool_]
    rows: IntArray  # entries grouped by bot
    seats: IntArray
    offsets: IntArray  # bot j's entries are [offsets[j], offsets[j + 1])
    faults_of: dict[str, list[tuple[int, str, int, int | None, str, str, str]]] = field(default_factory=dict)
    faults_cut: bool = False

    def __post_init__(self) -> None:
        self._at = {n: j for j, n in enumerate(self.names)}

    def count(self, name: str) -> int:
        """How many matches ``name`` has (0 for a name without any)."""
        j = self._at.get(name)
        return 0 if j is None else int(self.offsets[j + 1] - self.offsets[j])

    def entries(self, name: str) -> tuple[IntArray, IntArray]:
        """The (rows, seats) of ``name``'s matches, in fixture order."""
        j = self._at[name]
        a, b = int(self.offsets[j]), int(self.offsets[j + 1])
        return self.rows[a:b], self.seats[a:b]


def bot_matches(cols: Columns, tap: MatchTap, coop: bool) -> BotMatches:
    """The per-bot match lists of ``cols`` (one numpy pass) with the tap's ids and fault details."""
    idx = np.frombuffer(tap.index, np.int64) if len(tap.index) else np.zeros(0, np.int64)
    where = kept_rows(idx)  # the tap saw the lines the columns kept, in the same order
    ids = [tap.ids[p] for p in where.tolist()]
    mask = credit_mask(cols, coop)  # cooperative: a bot's matches once, not once per seat
    rows, seats = np.nonzero(mask)
    owner = cols.bot[rows, seats]
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=len(cols.names))
    data = BotMatches(
        names=list(cols.names),
        ids=ids,
        bot=cols.bot.astype(np.int32),
        rank=cols.rank.astype(np.int16),
        score=cols.score,
        faults=cols.faults.sum(axis=2).astype(np.int32),
        forfeited=cols.forfeited,
        rows=rows[order].astype(np.int64),
        seats=seats[order].astype(np.int64),
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
    )
    data.faults_cut = len(tap._heap) >= FAULT_MATCHES
    for i in sorted(tap.faulted):
        ident, bots, faults = tap.faulted[i]
        for seat, decision, kind, detail, phase in faults:
            if 0 <= seat < len(bots):
                data.faults_of.setdefault(bots[seat], []).append((i, ident, seat, decision, kind, detail, phase))
    return data


def write_bot_pages(
    out: Path, game: Game, doc: Mapping[str, Any], data: BotMatches | None, on_progress: Progress | None = None
) -> list[Path]:
    """Write ``bots/<stem>.html`` for every bot of ``doc`` (and the data files); return the pages."""
    files = page_files(doc)
    removed = _removed(files, data)
    files = {**files, **removed}
    folder, chunks = out / "bots", out / "bots" / "data"
    chunks.mkdir(parents=True, exist_ok=True)
    # the data files number bots by their place in the journal's columns (config order)
    names = list(dict.fromkeys([*(data.names if data is not None else []), *files]))
    shared = (
        f"window.REFEREE_NAMES={_js(names)};window.REFEREE_FILES={_js([files.get(n) for n in names])};\n"
        f"{SCRIPT}\n{BOT_SCRIPT}\n"
    )
    written = {folder / "bots.js"}
    _write_if_changed(folder / "bots.js", shared)
    h2h = _h2h_by_bot(doc)
    rows = {r["name"]: r for r in doc["standings"]}
    excluded = {x["name"]: x for x in doc.get("excluded") or ()}
    pages = []
    for done, name in enumerate(files):
        first, rest = _match_chunks(data, name)
        for c, text in enumerate(rest, start=1):
            path = chunks / f"{files[name]}.{c}.js"
            written.add(path)
            _write_if_changed(path, f"window.refereeChunk({_js(files[name])},{c},{text});\n")
        page = render_bot_page(
            game, doc, name, files, rows.get(name), excluded.get(name), h2h.get(name, []), data, first, name in removed
        )
        pages.append(folder / f"{files[name]}.html")
        written.add(pages[-1])
        _write_if_changed(pages[-1], page)
        if on_progress is not None:
            on_progress(done + 1, len(files), "bot pages")
    for stale in [*folder.glob("*.html"), *chunks.glob("*.js"), *folder.glob("*.js")]:
        if stale not in written:
            stale.unlink(missing_ok=True)
    return pages


def _removed(files: Mapping[str, str], data: BotMatches | None) -> dict[str, str]:
    """The page stems of bots that played but are no longer in the tournament (removed on a
    resume): their matches still count for the bots they met, so their pages stay."""
    gone = [n for n in (data.names if data is not None else []) if n not in files and data and data.count(n)]
    used = set(files.values())
    stems = {}
    for name, stem in bot_files([*files, *gone]).items():
        if name in gone:
            stems[name] = stem if stem not in used else f"{stem}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"
            used.add(stems[name])
    return stems


def _match_chunks(data: BotMatches | None, name: str) -> tuple[str, list[str]]:
    """The bot's match list as JSON chunks of ``CHUNK`` entries: (the first, the others)."""
    if data is None or not data.count(name):
        return _js(_empty_chunk()), []
    rows, seats = data.entries(name)
    texts = [_chunk(data, rows[a : a + CHUNK], seats[a : a + CHUNK]) for a in range(0, max(1, rows.shape[0]), CHUNK)]
    return texts[0], texts[1:]


def _empty_chunk() -> dict[str, Any]:
    return {"id": [], "seat": [], "k": 0, "bots": [], "rank": [], "score": [], "faults": [], "forfeit": []}


def _chunk(data: BotMatches, rows: IntArray, seats: IntArray) -> str:
    """One chunk of entries as JSON, columns of numbers (bots by their position in REFEREE_NAMES)."""
    if rows.shape[0] == 0:
        return _js(_empty_chunk())
    score = np.round(data.score[rows, seats], 6)
    integral = bool(np.all(score == np.round(score))) and bool(np.all(np.abs(score) < 2**53))
    body = {
        "id": [data.ids[r] for r in rows.tolist()],
        "seat": seats.tolist(),
        "k": int(data.bot.shape[1]),
        "bots": data.bot[rows].reshape(-1).tolist(),
        "rank": data.rank[rows, seats].tolist(),
        "score": score.astype(np.int64).tolist() if integral else score.tolist(),
        "faults": data.faults[rows, seats].tolist(),
        "forfeit": data.forfeited[rows, seats].astype(np.int8).tolist(),
    }
    return _js(body)


def _h2h_by_bot(doc: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """Every bot's head-to-head pairs with an opponent it met, in leaderboard order."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for p in doc["head_to_head"]:
        if p["meetings"]:
            out.setdefault(p["bot"], []).append(p)
    return out


def render_bot_page(
    game: Game,
    doc: Mapping[str, Any],
    name: str,
    files: Mapping[str, str],
    row: Mapping[str, Any] | None,
    excluded: Mapping[str, Any] | None,
    pairs: Sequence[Mapping[str, Any]],
    data: BotMatches | None,
    first_chunk: str,
    removed: bool = False,
) -> str:
    """The content of ``bots/<stem>.html`` (``removed``: a bot no longer in the tournament)."""
    e = html.escape
    link = linker(files, "")
    total = 0 if data is None else data.count(name)
    replays = doc["settings"].get("transcripts", "all") != "none"
    state = {
        "stem": files[name],
        "name": name,
        "total": total,
        "chunk": CHUNK,
        "per": PER_PAGE,
        "replays": replays,
        "coop": bool(game.info.cooperative),
        "first": "__FIRST__",
    }
    boot = _js(state).replace('"__FIRST__"', first_chunk)  # made by _js: escaped already
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(name)}: {e(doc['tournament'])}</title>",
        f"<style>{CSS}</style></head>",
        "<body><main>",
        f'<header><p class="kicker"><a href="../index.html">\u2190 {e(doc["tournament"])}: leaderboard</a></p>'
        f'<h1 id="bot-name">{e(name)}</h1>{_status(doc, row, excluded)}{_removed_note(removed, total)}</header>',
        _summary(game, doc, row) if row else "",
        _versions(row) if row else "",
        _rating(game, doc, name) if row else "",
        _matches_section(total),
        _faults(doc, name, data, replays),
        "" if removed else _opponents(doc, name, pairs, link),
        f"<footer>Made by referee {e(__version__)} from <code>matches.jsonl</code>; the same journal always "
        "gives this page byte for byte.</footer>",
        f'</main><script>window.REFEREE_BOT={boot};</script><script src="bots.js"></script></body></html>',
        "",
    ]
    return "\n".join(p for p in parts if p)


def _status(doc: Mapping[str, Any], row: Mapping[str, Any] | None, excluded: Mapping[str, Any] | None) -> str:
    """The line under the name: rank of how many, disqualified, excluded, latest version."""
    e = html.escape
    bits = []
    if excluded is not None:
        bits.append(
            f'<span class="dq" id="excluded">Excluded from this run: {e(str(excluded.get("reason", "")))}</span>'
        )
    if row is not None:
        n = len(doc["standings"])
        rank = "DQ" if row["disqualified"] else f"rank {row['rank']} of {n}"
        bits.append(f"<b>{e(str(rank))}</b>{e(role_mark(row))}, {row['matches']} matches")
        if row.get("version"):
            bits.append(f"version {e(str(row['version']))}")
    text = " \u00b7 ".join(bits)
    dq = (
        f'<p class="dq"><b>DQ</b> {e(str(row.get("disqualified_note") or ""))}</p>'
        if row is not None and row["disqualified"]
        else ""
    )
    return f'<p class="lead" id="status">{text}</p>{dq}'


def _removed_note(removed: bool, total: int) -> str:
    """The line of a removed bot's page: why it has no standing, and what still counts."""
    if not removed:
        return ""
    return (
        f'<p class="dq" id="removed"><b>Removed</b> from the tournament: its {total} match'
        f"{'es' if total != 1 else ''} stay in the journal and count for the bots it met; it has no row "
        "in the standings.</p>"
    )


def _summary(game: Game, doc: Mapping[str, Any], r: Mapping[str, Any]) -> str:
    """The bot's standings row as facts, each with what it means beside it."""
    rating = r["rating"]
    m = doc["method"]
    facts = [
        ("rank", "Rank", str(r["rank"]), f"of {len(doc['standings'])} bots"),
        ("wins", "Wins", fmt_wins(r), f"in {r['matches']} matches"),
    ]
    if not game.info.cooperative:
        facts.append(
            (
                "mean-rank",
                "Mean rank [95% CI]",
                value_ci(r["mean_rank"], r["mean_rank_ci"]),
                "finishing place per match, 1 is best",
            )
        )
    sense = "lower is better" if doc["lower_score_wins"] else "higher is better"
    facts += [
        ("mean-score", "Mean score [95% CI]", value_ci(r["mean_score"], r["mean_score_ci"]), sense),
        ("rank-range", "Rank range", fmt_range(r["rank_interval"]), "where it lands in 95% of resampled leaderboards"),
        (
            "rank-set",
            "Rank set (all at once)",
            fmt_range(r.get("rank_set")),
            "holds with every other bot's set at 95%: the line for prizes",
        ),
        (
            "rating",
            f"Rating {MINUS_3_SIGMA}",
            fmt(rating["ordinal"]),
            f"\u03bc {fmt(rating['mu'])}, \u03c3 {fmt(rating['sigma'])} (Plackett-Luce log-strength)",
        ),
        (
            "faults",
            "Faults t/e/m/i",
            fmt_faults(r["faults"]),
            f"{r['faults']['total']} of {r['decisions']} decisions; {r['notice_faults']} start/end, "
            f"{r['forfeits']} forfeits, {r['restarts']} restarts",
        ),
    ]
    for spec in game.info.stats:
        if r.get(spec.key) is not None:
            facts.append((spec.key, spec.title, fmt(r[spec.key]), ""))
    items = "".join(
        f'<div data-col="{k}"><dt>{html.escape(t)}</dt><dd>{v}<small>{html.escape(note)}</small></dd></div>'
        for k, t, v, note in facts
    )
    return (
        f'<section id="summary"><h2>Standing</h2><dl class="facts">{items}</dl><p class="note">Intervals: 95% '
        f"studentized bootstrap over {m['deals']} deals ({m['resamples']} resamples). Overlapping intervals "
        "of two bots are not a test; the leaderboard's differences between neighbours are.</p></section>"
    )


def _versions(r: Mapping[str, Any]) -> str:
    versions = r.get("versions")
    if not versions:
        return ""
    body = "".join(
        f'<tr data-version="{html.escape(str(v.get("version")))}"><td class="name"><code>'
        f"{html.escape(str(v.get('version')))}</code></td><td>{attr(v.get('matches'))}</td></tr>"
        for v in versions
    )
    return (
        '<section id="versions"><h2>Versions</h2><p class="lead">Oldest first; the last is the one now '
        'playing.</p><div class="scroll"><table><thead><tr><th class="name">Version</th><th>Matches</th></tr>'
        f"</thead><tbody>{body}</tbody></table></div></section>"
    )


def _rating(game: Game, doc: Mapping[str, Any], name: str) -> str:
    """The bot's rating history against the top of the standings."""
    hist = doc["rating_history"]
    top = [r["name"] for r in doc["standings"][:3] if r["name"] != name]
    series = [(name, hist["mu"][name], PALETTE[0], True)]
    series += [(n, hist["mu"][n], FAINT, True) for n in top]
    unit = "deals" if game.info.cooperative else "matches"
    return (
        '<section id="rating"><h2>Rating over '
        + unit
        + "</h2>"
        + rating_svg(hist["step"], series, unit, 900.0)
        + f'<p class="note">\u03bc of {html.escape(name)} (blue) and of the top of the standings (grey), fitted on '
        f"the {unit} played so far, in fixture order.</p></section>"
    )


def _matches_section(total: int) -> str:
    return (
        f'<section id="bot-matches"><h2>Matches ({total})</h2><p class="lead">Every match it played, in fixture '
        f"order, {PER_PAGE} a page; a match id opens its replay. Click #, Table (by opponents), Rank, Score or "
        "Faults to sort them all.</p>"
        '<div class="pager" id="pager"></div><div class="scroll"><table id="matches"><thead><tr>'
        '<th class="sortable" data-key="order" aria-sort="ascending">#</th><th class="name">Match</th><th>Seat</th>'
        '<th class="name sortable" data-key="opponents">Table</th><th class="sortable" data-key="rank">Rank</th>'
        '<th class="sortable" data-key="score">Score</th><th class="sortable" data-key="faults">Faults</th></tr>'
        "</thead><tbody></tbody></table></div>"
        "<noscript><p>The match list needs JavaScript.</p></noscript></section>"
    )


def _faults(doc: Mapping[str, Any], name: str, data: BotMatches | None, replays: bool) -> str:
    """The bot's faults with their reason, each linking the decision in its replay."""
    e = html.escape
    found = (data.faults_of.get(name) if data else None) or []
    if not found:
        return '<section id="faults"><h2>Faults</h2><p class="lead">None.</p></section>'
    body = []
    for _, ident, seat, decision, kind, detail, phase in found[:FAULTS_SHOWN]:
        where = f"{ident}/s{seat}d{decision}"  # the seat's own decision number, as the viewer reads it
        match = f'<a href="../replays/index.html#{e(ident)}">{e(ident)}</a>' if replays else e(ident)
        dec = "" if decision is None else str(decision)
        if replays and decision is not None:
            dec = f'<a href="../replays/index.html#{e(where)}">{decision}</a>'
        body.append(
            f'<tr data-match="{e(ident)}"><td class="name">{match}</td><td>{dec}</td><td>{seat}</td>'
            f'<td class="name">{e(phase)}</td><td class="name">{e(kind)}</td><td class="name detail">{e(detail)}</td></tr>'
        )
    more = len(found) - FAULTS_SHOWN
    note = (
        f"The first {FAULTS_SHOWN} are listed; {more} more are in the match list's fault column. " if more > 0 else ""
    )
    if data is not None and data.faults_cut:
        note += (
            f"Details are kept for the first {FAULT_MATCHES} faulted matches of the tournament; every match "
            "shows its fault count in the match list and its faults in its replay."
        )
    return (
        f'<section id="faults"><h2>Faults ({len(found)}{"+" if data and data.faults_cut else ""})</h2>'
        '<p class="lead">Each fault with its reason; a decision number opens the replay at that decision.</p>'
        '<div class="scroll"><table id="fault-list" data-sortable data-page="50"><thead><tr>'
        '<th class="name" data-sort="text">Match</th><th data-sort="num">Decision</th><th data-sort="num">Seat</th>'
        '<th class="name" data-sort="text">Phase</th><th class="name" data-sort="text">Kind</th>'
        f'<th class="name">Reason</th></tr></thead><tbody>{"".join(body)}</tbody></table></div>'
        f"{f'<p class=note>{e(note)}</p>' if note else ''}</section>"
    )


def _opponents(
    doc: Mapping[str, Any], name: str, pairs: Sequence[Mapping[str, Any]], link: Callable[[str], str]
) -> str:
    """Head-to-head against every opponent met, with P(above) where the matrix has it."""
    e = html.escape
    above = doc.get("above") or {"bots": [], "p": []}
    at = {n: i for i, n in enumerate(above["bots"])}
    me = at.get(name)
    body = []
    for p in pairs:
        o = p["opponent"]
        pa = above["p"][me][at[o]] if me is not None and o in at else None
        body.append(
            f'<tr data-bot="{e(o)}"><td class="name">{link(o)}</td><td>{p["meetings"]}</td>{h2h_cell(p)}'
            f'<td data-v="{attr(pa)}">{"" if pa is None else f"{pa:.0%}"}</td></tr>'
        )
    if not body:
        return '<section id="opponents"><h2>Head-to-head</h2><p class="lead">No meetings yet.</p></section>'
    return (
        f'<section id="opponents"><h2>Head-to-head ({len(body)} opponents)</h2><p class="lead">Against every '
        "opponent it met: how often it finished above (ties count half), with a 95% Wilson interval, and "
        "above\u2013below\u2013ties. P(above): share of bootstrap resamples in which it ranks above that bot. "
        'Click a header to sort.</p><div class="scroll"><table id="head-to-head"'
        f"{paged(len(body), 50)}><thead><tr>"
        '<th class="name" data-sort="text">Opponent</th><th data-sort="num">Meetings</th>'
        '<th data-sort="num">Share above [95% CI]</th><th data-sort="num">P(above)</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _js(value: Any) -> str:
    """JSON text safe inside a ``<script>`` element."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` (temporary file + rename) unless the file already holds exactly it."""
    data = text.encode("utf-8")
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return
    except OSError:
        pass
    atomic_write(path, data)


# The match list of a bot page: pages of PER_PAGE entries, chunks loaded as scripts on demand.
BOT_SCRIPT = r"""
(function(){"use strict";
var B=window.REFEREE_BOT;if(!B)return;var D=document,N=window.REFEREE_NAMES,F=window.REFEREE_FILES;
var chunks={0:B.first},asked={},at=0,pages=Math.max(1,Math.ceil(B.total/B.per));
var nchunks=Math.max(1,Math.ceil(B.total/B.chunk)),order=null,key="order",dir=1,waiting=false;
var m=/^#page=(\d+)$/.exec(location.hash);if(m)at=Math.min(pages-1,Math.max(0,+m[1]-1));
window.refereeChunk=function(stem,c,d){if(stem!==B.stem)return;chunks[c]=d;if(waiting)sortAll();else draw();};
function el(tag,text,cls){var x=D.createElement(tag);if(text!=null)x.textContent=text;if(cls)x.className=cls;return x;}
function replay(id,tail){if(!B.replays)return el("span",id);var a=el("a",id);a.href="../replays/index.html#"+id+(tail||"");return a;}
function bot(j){if(F[j]==null)return el("span",N[j]);var a=el("a",N[j]);a.href=F[j]+".html";return a;}
function need(c){if(asked[c])return;asked[c]=1;var s=D.createElement("script");s.src="data/"+B.stem+"."+c+".js";
s.onerror=function(){var p=D.getElementById("pager");p.appendChild(el("span","could not load "+s.src,"warn"));};D.head.appendChild(s);}
function row(d,j,i){var tr=el("tr"),k=d.k,me=d.seat[j];tr.setAttribute("data-match",d.id[j]);
tr.appendChild(el("td",String(i+1)));var td=el("td",null,"name");td.appendChild(replay(d.id[j],"/s"+me+"d0"));tr.appendChild(td);
tr.appendChild(el("td",String(me)));td=el("td",null,"name");
for(var s=0;s<k;s++){var b=d.bots[j*k+s];if(b<0)continue;if(td.childNodes.length)td.appendChild(D.createTextNode(", "));
if(s===me||N[b]===B.name)td.appendChild(el("b",N[b]));else td.appendChild(bot(b));}tr.appendChild(td);
tr.appendChild(el("td",B.coop?"":String(d.rank[j])+(d.forfeit[j]?" (forfeit)":"")));
tr.appendChild(el("td",String(d.score[j])));tr.appendChild(el("td",d.faults[j]?String(d.faults[j]):""));return tr;}
function opponents(d,j){var k=d.k,me=d.seat[j],o=[];for(var s=0;s<k;s++){var b=d.bots[j*k+s];if(b>=0&&s!==me)o.push(N[b]);}
return o.sort().join(", ");}
function value(i){var c=Math.floor(i/B.chunk),d=chunks[c],j=i-c*B.chunk;
return key==="rank"?d.rank[j]:key==="score"?d.score[j]:key==="faults"?d.faults[j]:opponents(d,j);}
function sortAll(){for(var c=0;c<nchunks;c++)if(!chunks[c]){waiting=true;need(c);}
for(c=0;c<nchunks;c++)if(!chunks[c])return;waiting=false;
if(key==="order"&&dir>0){order=null;at=0;draw();return;}
var idx=[],v=[];for(var i=0;i<B.total;i++){idx.push(i);v.push(key==="order"?i:value(i));}
idx.sort(function(a,b){var x=v[a],y=v[b];return (x<y?-1:x>y?1:0)*dir||a-b;});order=idx;at=0;draw();}
D.querySelectorAll("#matches th[data-key]").forEach(function(th){th.tabIndex=0;
function go(){var k=th.getAttribute("data-key");dir=key===k?-dir:1;key=k;
D.querySelectorAll("#matches th[data-key]").forEach(function(o){o.removeAttribute("aria-sort");});
th.setAttribute("aria-sort",dir>0?"ascending":"descending");sortAll();}
th.addEventListener("click",go);th.addEventListener("keydown",function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();go();}});});
function button(text,to){var b=el("button",text);b.type="button";b.disabled=to<0||to>=pages||to===at;
b.addEventListener("click",function(){at=to;history.replaceState(null,"","#page="+(at+1));draw();});return b;}
function draw(){var body=D.querySelector("#matches tbody"),start=at*B.per,end=Math.min(B.total,start+B.per),out=[];
for(var i=start;i<end;i++){var n=order?order[i]:i,c=Math.floor(n/B.chunk),d=chunks[c];if(!d){need(c);return;}
out.push(row(d,n-c*B.chunk,n));}
body.textContent="";out.forEach(function(r){body.appendChild(r);});
var p=D.getElementById("pager");p.textContent="";
p.appendChild(el("span",B.total?"matches "+(start+1)+"\u2013"+end+" of "+B.total:"no matches yet"));
if(pages>1){p.appendChild(button("\u00ab first",0));p.appendChild(button("\u2039 previous",at-1));
p.appendChild(el("span","page "+(at+1)+" of "+pages));p.appendChild(button("next \u203a",at+1));p.appendChild(button("last \u00bb",pages-1));}}
draw();})();
""".strip()
