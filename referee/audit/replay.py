"""``referee replay``: one match played again from its seed and transcript, step by step.

``frames`` replays a match through the rules and yields, for every decision, the view
the deciding seat was sent (computed as ``play_match`` computed it: for a simultaneous
choice every seat's view is taken before any of them is applied) and what was played.
``render_text`` turns it into a play-by-play for the terminal; the HTML viewer
(``viewer.py``) draws the same frames. Anything a bot wrote (its log) is shown with
control characters escaped.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import ReplayError
from referee.games import get_game
from referee.games.base import Game, IllegalAction, InvalidExtras
from referee.record import FALLBACK, Move
from referee.store import transcripts
from referee.store.tournament_file import load_output_dir


@dataclass
class Match:
    """What a replay needs: the game, its options, the journal line and the transcript."""

    game: Game
    options: dict[str, Any]
    record: dict[str, Any]
    transcript: transcripts.Transcript
    tournament: str


@dataclass
class Frame:
    """One decision: its index in the match, the move, the view its seat was sent, how
    many legal actions it had, and every seat's view once the move was applied."""

    index: int
    move: Move
    sent: dict[str, Any]
    n_legal: int
    after: list[dict[str, Any]] | None


def load_match(out: Path, match_id: str) -> Match:
    """The match ``match_id`` (an id such as m000042, or its fixture index) of ``out``."""
    tournament, records = load_output_dir(out)
    settings = tournament["settings"]
    rec = next((r for r in records if str(r.get("id")) == match_id or str(r.get("index")) == match_id), None)
    if rec is None:
        raise ReplayError(f"{out}: no match {match_id!r} in the journal")
    if not transcripts.exists(out):
        raise ReplayError(f'{out}: no transcripts (the run had [tournament] transcripts = "none")')
    tr = transcripts.find(out, str(rec["id"]))
    if tr is None:
        raise ReplayError(f"{out}: match {rec['id']} has no transcript")
    game = get_game(settings["game"])
    options = game.check_options(len(rec["bots"]), settings.get("options", {}))
    return Match(game, options, rec, tr, str(settings.get("name", "")))


def frames(m: Match, after: bool = False) -> Iterator[Frame]:
    """Every decision of ``m`` with the view its seat was sent; with ``after``, every
    seat's view once the decision is applied (what a spectator sees next)."""
    game, rec = m.game, m.record
    n = len(rec["bots"])
    state = game.setup(n, rec["seed"], m.options)
    moves = m.transcript.moves
    i = 0
    while not game.is_over(state) and i < len(moves):
        group = [(s, game.view(state, s), len(game.legal(state, s))) for s in game.to_act(state)]
        for s, view, n_legal in group:
            if i >= len(moves):
                return
            mv = moves[i]
            if mv.seat != s:
                raise ReplayError(f"match {rec['id']}: decision {i} is seat {mv.seat}'s, the rules ask seat {s}")
            try:
                state = game.apply(state, s, mv.action)
            except IllegalAction as exc:
                raise ReplayError(
                    f"match {rec['id']}: decision {i} ({json.dumps(mv.action)[:80]}) is refused by the rules: {exc} "
                    "(referee verify checks the whole folder)"
                ) from exc
            if mv.extras:
                with contextlib.suppress(InvalidExtras):  # refused extras were a fault in play, nothing more
                    state = game.apply_extras(state, s, mv.extras)
            views = [game.view(state, k) for k in range(n)] if after else None
            yield Frame(i, mv, view, n_legal, views)
            i += 1


def escape(text: str) -> str:
    """``text`` with every control character shown as an escape (a bot's log may hold
    terminal escapes)."""
    out = []
    for ch in text:
        o = ord(ch)
        if o < 0x20 or 0x7F <= o < 0xA0 or o in (0x2028, 0x2029) or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069:
            out.append(repr(ch)[1:-1] if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def glance(game_id: str, view: dict[str, Any]) -> str:
    """The part of a seat's view that decides its move, on one line."""

    def j(x: Any) -> str:
        return json.dumps(x, separators=(",", ":"))

    if game_id == "nimmt_plus":
        return f"hand {j(view.get('hand'))} rows {j(view.get('rows'))}"
    if game_id == "the_game":
        tops = [p.get("top") for p in view.get("piles", ())]
        return f"hand {j(view.get('hand'))} pile tops {j(tops)} placed {view.get('placed_this_turn')}/{view.get('minimum')}"
    if game_id == "drahtseilakt":
        trick = [p.get("card") for p in view.get("current_trick", ())]
        return f"hand {j(view.get('hand'))} score {j(view.get('score'))} trick {j(trick)}"
    if game_id == "dieci":
        return f"card {j(view.get('card'))} deciding {view.get('decision')} tokens {j(view.get('tokens'))}"
    return j(view)[:200]


def render_text(m: Match, seat: int | None = None) -> Iterator[str]:
    """The play-by-play of ``m``: every decision (or only ``seat``'s, with the view it
    was sent), who chose it, faults, response times, bot logs; then the result."""
    rec = m.record
    bots = rec["bots"]
    yield f"{m.tournament} {rec['id']} ({m.game.info.title}), seed {rec['seed']}, deal {rec.get('deal_hash', '')}"
    yield "seats: " + ", ".join(f"{s}={escape(b)}" for s, b in enumerate(bots))
    for f in frames(m):
        mv = f.move
        if seat is not None and mv.seat != seat:
            continue
        if seat is not None:
            yield f"  sent: {escape(json.dumps(f.sent, separators=(',', ':')))}"
        else:
            yield f"  saw: {escape(glance(m.game.info.id, f.sent))}"
        who = "bot" if mv.by != FALLBACK else "FALLBACK"
        fault = f" [{mv.fault.upper()}]" if mv.fault else ""
        ms = f" {mv.ms:.1f} ms" if mv.ms is not None else " (not asked)"
        extras = f" {escape(json.dumps(mv.extras))}" if mv.extras else ""
        yield (
            f"#{f.index:<4} seat {mv.seat} {escape(bots[mv.seat])} d{mv.decision}: "
            f"{escape(json.dumps(mv.action))}{extras}  {who}{fault}{ms}  ({f.n_legal} legal)"
        )
        if mv.log:
            for line in mv.log.split("\n"):
                yield f"      log: {escape(line)}"
    yield "result: " + ", ".join(
        f"{escape(b)} score {sc:g} rank {r}" for b, sc, r in zip(bots, rec["scores"], rec["ranks"])
    )
    if rec.get("forfeited"):
        yield f"forfeited seats: {rec['forfeited']}"
    others = [f for f in rec.get("faults", ()) if f.get("phase") != "act"]
    for f in others:
        yield f"fault at {f.get('phase')}: seat {f.get('seat')} {f.get('kind')}: {escape(str(f.get('detail', '')))}"
