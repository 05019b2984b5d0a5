"""The pure rules of judging a match (no I/O, no clock): which action the fallback plays,
the deal's fingerprint, what a reply amounts to, and ranks with forfeits. ``play`` uses
them while a match is played; ``audit`` uses them to check a match again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.bots.client import protocol
from referee.bots.client.wire import Exchange
from referee.games.base import Game, ranks_from_scores
from referee.record import ILLEGAL, MALFORMED


def fallback_index(seed: int, seat: int, decision: int, n_legal: int) -> int:
    """Which of ``n_legal`` actions the fallback plays for ``seat``'s decision number
    ``decision`` in the match dealt from ``seed``.

    It depends on nothing else (not on other seats' faults, nor on how many fallbacks
    came before), so a seat's fault never changes what another seat's fallback plays,
    and a well-behaved bot given the match seeds can play exactly the fallback's moves.
    """
    digest = hashlib.sha256(f"fallback/{seed}/{seat}/{decision}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n_legal


def deal_fingerprint(game: Game, state: Any, n: int) -> str:
    """A fingerprint of the starting position (every seat's first view): equal for
    matches dealt the same cards, so duplicate deals can be checked from the journal."""
    views = json.dumps([game.view(state, s) for s in range(n)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(views.encode()).hexdigest()[:16]


@dataclass(slots=True)
class Verdict:
    """What a reply amounts to: the legal action chosen and its extras, or a fault kind
    with its detail; and the bot's optional ``log`` string either way (a reply that is
    JSON but illegal still shows the author what the bot was thinking)."""

    action: Any = None
    extras: dict[str, Any] | None = None
    fault: str | None = None
    detail: str = ""
    log: str | None = None


NOT_ASKED = Verdict()


def judge(ex: Exchange, legal: list[Any], extra_fields: tuple[str, ...]) -> Verdict:
    """The action and extras of a reply, or the fault kind and detail."""
    if ex.fault is not None:
        return Verdict(fault=ex.fault, detail=ex.detail)
    try:
        reply = protocol.parse_act_reply(ex.body or b"")
    except protocol.ReplyError as exc:
        return Verdict(fault=MALFORMED, detail=str(exc))
    log = protocol.reply_log(reply)
    i = protocol.find_legal(reply["action"], legal)
    if i < 0:
        shown = repr(reply["action"])
        return Verdict(fault=ILLEGAL, detail=f"action {shown[:120]} is not in legal ({len(legal)} actions)", log=log)
    extras = ({k: reply[k] for k in extra_fields if k in reply} or None) if extra_fields else None
    return Verdict(legal[i], extras, None, "", log)


def ranks_with_forfeits(
    scores: Sequence[float], ranks: Sequence[int], lower_is_better: bool, forfeited: Sequence[int]
) -> list[int]:
    """Ranks where forfeiting seats share the last place, the others keep their order."""
    if not forfeited:
        return list(ranks)
    n = len(scores)
    stay = [s for s in range(n) if s not in forfeited]
    out = [n - len(forfeited) + 1] * n
    for s, r in zip(stay, ranks_from_scores([scores[s] for s in stay], lower_is_better)):
        out[s] = r
    return out
