"""Writes the leaderboard files: ``README.md`` (Markdown) and ``standings.json``.

Nothing in them depends on the clock or on the order matches finished, so the same
journal always gives the same files, byte for byte. Files are written to a temporary
name and renamed, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from .. import __version__
from ..games.base import Game


def standings_document(
    settings: Mapping[str, Any], matches: int, total: int, lower_is_better: bool, rows: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The content of ``standings.json``."""
    return {
        "tournament": settings["name"],
        "game": settings["game"],
        "matches": matches,
        "scheduled": total,
        "lower_score_wins": lower_is_better,
        "settings": dict(settings),
        "standings": list(rows),
    }


def table_rows(game: Game, rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of the leaderboard table."""
    coop = game.info.cooperative  # every seat shares one score: no mean rank to show
    headers = ["Rank", "Bot", "Matches", "Wins (share)"] + ([] if coop else ["Mean rank"]) + ["Mean score (95% CI)"]
    headers += [s.title for s in game.info.stats]
    headers += ["Faults t/e/m/i", "p50 ms", "p99 ms"]
    out = []
    for r in rows:
        f = r["faults"]
        score = "" if r["mean_score"] is None else f"{r['mean_score']:.2f}" + (f" ± {r['score_ci95']:.2f}" if r["score_ci95"] is not None else "")
        wins = f"{r['wins']} ({r['win_rate']:.0%})" if r["win_rate"] is not None else str(r["wins"])
        line = [r["rank"], r["name"], r["matches"], wins] + ([] if coop else [_fmt(r["mean_rank"])]) + [score]
        line += [_fmt(r[s.key]) for s in game.info.stats]
        line += [f"{f['timeout']}/{f['error']}/{f['malformed']}/{f['illegal']}", _fmt(r["p50_ms"], 1), _fmt(r["p99_ms"], 1)]
        out.append(line)
    return headers, out


def render_table(game: Game, rows: Sequence[Mapping[str, Any]], fmt: str = "github") -> str:
    """The leaderboard as text in a tabulate format ("github" for Markdown)."""
    headers, body = table_rows(game, rows)
    return tabulate(body, headers=headers, tablefmt=fmt, disable_numparse=True)


def render_markdown(game: Game, doc: Mapping[str, Any]) -> str:
    """The content of ``README.md``."""
    s = doc["settings"]
    opts = ", ".join(f"{k} = {v!r}" for k, v in sorted(s["options"].items())) or "defaults"
    if s["format"] == "round_robin":
        fmt = f"round robin, {s['rounds']} round(s), {s['players']} players per match"
    elif s["format"] == "team":
        fmt = f"team (duplicate): {s['matches']} deals, each played by every bot as a team of {s['players']}"
    else:
        fmt = f"random tables, {s['matches']} matches, {s['players']} players per match"
    sense = "lower is better" if doc["lower_score_wins"] else "higher is better"
    lines = [
        f"# {doc['tournament']}: leaderboard",
        "",
        f"- Game: **{game.info.title}** (`{s['game']}`), options: {opts}",
        f"- Format: {fmt}; seed {s['seed']}",
        f"- Matches played: {doc['matches']} of {doc['scheduled']}",
        f"- Deadline {s['deadline_ms']} ms per decision; on fault: {s['on_fault']} (max {s['max_faults']} per seat per match)",
        f"- Bots: {', '.join(s['bots'])}",
        "",
        render_table(game, doc["standings"]),
        "",
        (f"Cooperative: every seat shares its table's score; ranked by mean score ({sense}). "
         if game.info.cooperative else
         f"Ranked by mean rank in a match (1 is best), then mean score ({sense}), then wins. ") +
        "Faults: timeout / error / malformed / illegal, over every decision; response times are "
        "measured by the referee from sending to the last byte.",
        "",
        f"Made by referee {__version__}; the per-match record is in `matches.jsonl`.",
        "",
    ]
    return "\n".join(lines)


def write_outputs(game: Game, out: Path, doc: Mapping[str, Any]) -> list[Path]:
    """Write ``standings.json`` and ``README.md`` into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "standings.json", out / "README.md"]
    _atomic_write(paths[0], json.dumps(doc, indent=2, sort_keys=False) + "\n")
    _atomic_write(paths[1], render_markdown(game, doc))
    return paths


def _fmt(x: float | None, digits: int = 2) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
