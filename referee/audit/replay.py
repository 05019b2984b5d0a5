"""``referee replay``: one match's play-by-play for the terminal.

``render_text`` prints the frames of a match (``match.frames``, loaded by
``store.matches``): every decision, who chose it, faults, response times and bot logs.
Anything a bot wrote is shown with control characters escaped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from referee.record import FALLBACK
from referee.store.matches import Match


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


def render_text(m: Match, seat: int | None = None) -> Iterator[str]:
    """The play-by-play of ``m``: every decision (or only ``seat``'s, with the view it
    was sent), who chose it, faults, response times, bot logs; then the result."""
    rec = m.record
    bots = rec["bots"]
    yield f"{m.tournament} {rec['id']} ({m.game.info.title}), seed {rec['seed']}, deal {rec.get('deal_hash', '')}"
    yield "seats: " + ", ".join(f"{s}={escape(b)}" for s, b in enumerate(bots))
    for f in m.frames():
        mv = f.move
        if seat is not None and mv.seat != seat:
            continue
        if seat is not None:
            yield f"  sent: {escape(json.dumps(f.sent, separators=(',', ':')))}"
        else:
            yield f"  saw: {escape(m.game.glance(f.sent))}"
        who = "bot" if mv.by != FALLBACK else "FALLBACK"
        fault = f" [{mv.fault.upper()}]" if mv.fault else ""
        ms = f" {mv.ms:.1f} ms" if mv.ms is not None else " (not asked)"
        extras = f" {escape(json.dumps(mv.extras))}" if mv.extras else ""
        yield (
            f"#{f.index + 1:<4} seat {mv.seat} {escape(bots[mv.seat])} d{mv.decision}: "
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
