"""The text of the leaderboard (pure): number formats, Markdown escaping, the standings
columns and the head-to-head cell, defined once for README.md, index.html and the console.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games.base import Game

DASH = "\u2013"  # en dash for ranges
MINUS_3_SIGMA = "\u03bc\u22123\u03c3"
H2H_CAP = 30  # bots shown in the head-to-head tables of README.md and index.html (all in standings.json)
H2H_NOTE = (
    f"Row bot against column bot: how often it finished above (ties count half), with its 95% Wilson "
    f"interval, and above{DASH}below{DASH}ties over their meetings."
)
SEAT_NOTE = (
    "Seats are numbered from 0 as in the journal; over the whole tournament. A seat marked ! has an "
    "interval that excludes the overall mean (the seat itself matters)."
)
NO_SEAT_BIAS = "Not applicable: in a cooperative game every seat shares its table's score."
COOP_WINS = "Wins: matches in which the team placed every card (0 cards left)."


def fmt(x: float | None, digits: int = 2) -> str:
    """A number with fixed decimals, or an empty string for None."""
    return "" if x is None else f"{x:.{digits}f}"


def fmt_ci(value: float | None, ci: Sequence[float | None] | None, digits: int = 2) -> str:
    """``12.34 [11.00, 13.50]``: a value with its interval."""
    if value is None:
        return ""
    if not ci:
        return fmt(value, digits)
    return f"{value:.{digits}f} [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def fmt_range(interval: Sequence[int] | None) -> str:
    """A rank interval: ``2`` or ``1–3``; empty when there is none."""
    if not interval:
        return ""
    lo, hi = interval
    return str(lo) if lo == hi else f"{lo}{DASH}{hi}"


def fmt_wins(row: Mapping[str, Any]) -> str:
    """Wins with their share of matches: ``5 (56%)``."""
    return f"{row['wins']} ({row['win_rate']:.0%})" if row["win_rate"] is not None else str(row["wins"])


def fmt_faults(faults: Mapping[str, int]) -> str:
    """Fault counts as timeout/error/malformed/illegal."""
    return f"{faults['timeout']}/{faults['error']}/{faults['malformed']}/{faults['illegal']}"


def fmt_pair(pair: Mapping[str, Any]) -> tuple[str, str]:
    """A head-to-head cell as (share with its interval, counts): ``62% [48–75]``, ``5–3`` (ties a
    third count); a dash if they never met. The one cell format of every output."""
    if not pair["meetings"]:
        return DASH, ""
    counts = f"{pair['above']}{DASH}{pair['below']}" + (f"{DASH}{pair['ties']}" if pair["ties"] else "")
    ci = pair.get("share_ci")
    share = f"{pair['share']:.0%}" + (f" [{ci[0] * 100:.0f}{DASH}{ci[1] * 100:.0f}]" if ci else "")
    return share, counts


def fmt_toml(value: Any) -> str:
    """A setting's value as TOML writes it (``true``, ``"text"``, ``[1, 2]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(fmt_toml(v) for v in value) + "]"
    if value is None:
        return "none"
    return str(value)


_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def seed_text(settings: Mapping[str, Any]) -> str:
    """The seed as the settings show it: a seed given in the tournament file (or by
    ``--seed``) says that it makes every hand predictable; a secret one, drawn by the
    referee, says so (``seed_secret``), with the seed once revealed."""
    seed = settings.get("seed")
    if settings.get("seed_secret"):
        return (
            "secret seed (drawn by the referee, revealed at the end)"
            if seed is None
            else (f"seed {fmt_toml(seed)} (secret until the end, drawn by the referee)")
        )
    return f"seed {fmt_toml(seed)} (given, not secret: anyone who can guess it can predict every hand)"


def md(text: Any) -> str:
    """``text`` safe inside a Markdown table cell or line: markup characters escaped, control
    characters and line breaks replaced, so a name from a file cannot add links, HTML or rows."""
    return _MD_SPECIAL.sub(r"\\\1", _CONTROL.sub(" ", str(text)))


@dataclass(frozen=True)
class Column:
    """One standings column: key (``data-col`` in the page), header and its text per row."""

    key: str
    header: str
    text: Callable[[Mapping[str, Any]], str]
    value: Callable[[Mapping[str, Any]], Any] | None = None  # the (value, interval) the page draws, if any
    interval: Callable[[Mapping[str, Any]], Any] | None = None


def role_mark(row: Mapping[str, Any]) -> str:
    """The marks after a bot's name in the tables: in a gauntlet, challengers are ranked and
    the field is for reference; a bot that ran with less of a cage than the tournament's
    (``cage_marks``, docs/cage.md) is marked with those settings."""
    role = {"challenger": " (challenger)", "field": " (field)"}.get(str(row.get("role", "")), "")
    marks = cage_text(row)
    return role + (f" [{marks}]" if marks else "")


def cage_text(row: Mapping[str, Any]) -> str:
    """ "weaker cage: " and the row's ``cage_marks`` ('' for none)."""
    marks = row.get("cage_marks") or ()
    return f"weaker cage: {', '.join(map(str, marks))}" if marks else ""


def standings_columns(game: Game, rows: Sequence[Mapping[str, Any]], stats: bool = True) -> list[Column]:
    """The columns of the standings table, for every output; optional ones only where they say something."""
    coop = game.info.cooperative
    cols = [
        Column("rank", "Rank", lambda r: str(r["rank"])),
        Column("bot", "Bot", lambda r: str(r["name"]) + role_mark(r)),
        Column("matches", "Matches", lambda r: str(r["matches"])),
        Column("wins", "Wins (share)", fmt_wins),
    ]
    if not coop:
        cols.append(_ci_column("mean-rank", "Mean rank [95% CI]", "mean_rank"))
    cols += [
        _ci_column("mean-score", "Mean score [95% CI]", "mean_score"),
        Column("rank-range", "Rank range", lambda r: fmt_range(r["rank_interval"])),
        Column("rank-set", "Rank set (all at once)", lambda r: fmt_range(r.get("rank_set"))),
        Column("rating", f"Rating {MINUS_3_SIGMA}", lambda r: fmt(r["rating"]["ordinal"])),
    ]
    if stats:
        for spec in game.info.stats:
            if _repeats(rows, spec.key):
                continue
            cols.append(Column(spec.key, spec.title, _stat_text(spec.key)))
    cols.append(Column("faults", "Faults t/e/m/i", lambda r: fmt_faults(r["faults"])))
    if any(r["notice_faults"] for r in rows):  # failed start/end messages, only when there were some
        cols.append(Column("notice-faults", "Start/end faults", lambda r: str(r["notice_faults"])))
    if any(r["restarts"] for r in rows):  # a column only when a bot was restarted
        cols.append(Column("restarts", "Restarts", lambda r: str(r["restarts"])))
    return cols


def _ci_column(key: str, title: str, field: str) -> Column:
    """A column of a value with its 95 % interval (``field`` and ``field + "_ci"``)."""
    return Column(
        key,
        title,
        lambda r: fmt_ci(r[field], r[field + "_ci"]),
        lambda r: r[field],
        lambda r: r[field + "_ci"],
    )


def _stat_text(key: str) -> Callable[[Mapping[str, Any]], str]:
    """The text of a game's stat column."""
    return lambda r: fmt(r[key])


def _repeats(rows: Sequence[Mapping[str, Any]], key: str) -> bool:
    """True when a stat column says what another column says already (the_game: cards left is
    the score, the win rate is the wins' share)."""
    played = [r for r in rows if r["matches"]]
    if not played:
        return False
    return any(
        all(r.get(key) is not None and r[other] is not None and abs(r[key] - r[other]) < 1e-9 for r in played)
        for other in ("mean_score", "win_rate")
    )


NO_DIFFERENCES = "Fewer than two bots in play: no difference to show."


def difference_rows(
    game: Game, diffs: Sequence[Mapping[str, Any]], ci: Callable[[Any, Any], str], name: Callable[[Any], str]
) -> tuple[list[str], list[list[str]]]:
    """The neighbours table (adjacent rows of the standings: difference with its interval,
    P(above), separated) as headers and cells, for Markdown and the page alike; ``ci``
    formats a value with its interval and ``name`` a bot's name in the target format."""
    coop = game.info.cooperative
    headers = ["Bot", "Next", *([] if coop else ["Mean rank difference [95% CI]"]), "Mean score difference [95% CI]"]
    headers += ["P(above)", "Separated"]
    body = []
    for d in diffs:
        cells = [name(d["bot"]), name(d["next"])]
        cells += [] if coop else [ci(d["mean_rank_diff"], d["mean_rank_diff_ci"])]
        cells += [
            ci(d["mean_score_diff"], d["mean_score_diff_ci"]),
            fmt(d["p_above"]),
            "yes" if d["separated"] else "no",
        ]
        body.append(cells)
    return headers, body
