"""Plays one match: asks seats, checks replies, applies the fault policy.

The only module that knows games and bots. A bot failure never raises here: it is a
fault (seat, decision, kind, detail, latency) in the ``MatchRecord``, and a seeded
random legal action is played for the seat. With ``on_fault = "forfeit"`` a seat with
a fault in play is also ranked last in the match. Past ``max_faults`` faults a seat
is played by fallback without being called, as is a disqualified bot's seat.

Three things are not charged to bots:
- a timeout whose timer fired late because the referee itself was busy: the decision
  is voided and asked again (same decision number), up to ``MAX_REPLAYS`` times;
- with ``time_bank_ms``, an answer slower than the deadline spends the seat's bank
  instead (the bank left is sent in ``act`` as ``time_bank_ms``); a timeout is an
  answer slower than the deadline plus the bank left;
- a managed bot whose process died is restarted (``BotRuntime.revive``); the match
  whose request found it dead records the restart.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from .bots import protocol
from .bots.control import BotRuntime, Pacer, ask, referee_was_late
from .bots.http import BotClient, Endpoint, Exchange
from .config import Limits
from .games.base import Game, InvalidExtras, ranks_from_scores
from .record import BOT, ERROR, FALLBACK, ILLEGAL, MALFORMED, TIMEOUT, MatchRecord, Move

LOG_CAP_DECISION = 1024  # characters of a bot's ``log`` kept per decision
LOG_CAP_SEAT = 65536  # and per seat per match; longer is cut, never a fault
MAX_REPLAYS = 8  # a decision voided more often than this is judged as it stands


def fallback_index(seed: int, seat: int, decision: int, n_legal: int) -> int:
    """Which of ``n_legal`` actions the fallback plays for ``seat``'s decision number
    ``decision`` in the match dealt from ``seed``.

    It depends on nothing else (not on other seats' faults, nor on how many fallbacks
    came before), so a seat's fault never changes what another seat's fallback plays,
    and a well-behaved bot given the match seeds can play exactly the fallback's moves.
    """
    digest = hashlib.sha256(f"fallback/{seed}/{seat}/{decision}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n_legal


async def play_match(
    game: Game,
    options: Mapping[str, Any],
    *,
    tournament: str,
    match_id: str,
    index: int,
    seed: int,
    seats: Sequence[Endpoint],
    client: BotClient | httpx.AsyncClient,
    limits: Limits,
    runtimes: Sequence[BotRuntime] | None = None,
    pacer: Pacer | None = None,
) -> MatchRecord:
    """Play one match between the bots at ``seats`` and return its record.

    ``runtimes`` (one per seat; a bot holding several seats has one runtime) carry the
    tournament-wide state of each bot; without them every seat is a plain endpoint.
    """
    started = time.perf_counter()
    n = len(seats)
    ctx = protocol.MatchContext(tournament, match_id, game.info.id, options, [e.name for e in seats])
    deadline, cap = limits.deadline_ms, limits.max_response_bytes
    extra_fields = game.info.extra_reply_fields
    faults: list[dict[str, Any]] = []
    fault_count = [0] * n
    latency: list[list[float]] = [[] for _ in range(n)]
    decisions = [0] * n
    rts = list(runtimes) if runtimes is not None else [BotRuntime(e) for e in seats]
    bank = [float(limits.time_bank_ms)] * n
    restarts = [0] * n
    disqualified: set[int] = set()
    voided = 0
    moves: list[Move] = []
    log_used = [0] * n  # characters of bot logs kept per seat

    def record(seat: int, decision: int | None, phase: str, kind: str, detail: str, ms: float) -> None:
        faults.append(
            {
                "seat": seat,
                "bot": seats[seat].name,
                "decision": decision,
                "phase": phase,
                "kind": kind,
                "detail": detail[:300],
                "latency_ms": round(ms, 1),
            }
        )

    async def exchange(s: int, body: bytes, acting: bool = True) -> Exchange:
        """Ask seat ``s``; replay when the referee was late; spend the time bank (acts
        only); restart a dead managed bot."""
        nonlocal voided
        for attempt in range(MAX_REPLAYS + 1):
            limit_ms = deadline + (bank[s] if acting else 0.0)
            ex = await ask(rts[s], pacer, client, body, limit_ms, cap)
            if not referee_was_late(ex, limit_ms) or attempt == MAX_REPLAYS:
                break
            voided += 1
            if pacer is not None:
                pacer.note_late()
        if acting and ex.fault == TIMEOUT:
            bank[s] = 0.0
        elif acting and ex.fault is None and ex.latency_ms > deadline:
            bank[s] = max(0.0, bank[s] - (ex.latency_ms - deadline))
        elif ex.fault == ERROR:
            restarts[s] += await rts[s].revive()
        return ex

    async def notify(phase: str, bodies: list[bytes]) -> None:
        to = [s for s in range(n) if not rts[s].disqualified]
        done = await asyncio.gather(*(exchange(s, bodies[s], acting=False) for s in to))
        for s, ex in zip(to, done):
            if ex.fault is not None:
                record(s, None, phase, ex.fault, ex.detail, ex.latency_ms)

    await notify("start", [protocol.start(ctx, s) for s in range(n)])

    state = game.setup(n, seed, options)
    deal_hash = _deal_hash(game, state, n)
    # Decisions are numbered per seat: a match-wide number would tell a seat how many
    # decisions others were asked in between, which can reveal hidden cards.
    asked = [0] * n
    while not game.is_over(state):
        to_act = game.to_act(state)
        asks: list[tuple[int, int, list[Any], bytes | None]] = []
        for s in to_act:
            legal = game.legal(state, s)
            body = None
            if rts[s].disqualified:
                disqualified.add(s)
            elif fault_count[s] <= limits.max_faults:
                left = int(bank[s]) if limits.time_bank_ms else None
                body = protocol.act(ctx, s, asked[s], deadline, game.view(state, s), legal, time_bank_ms=left)
            asks.append((s, asked[s], legal, body))
            asked[s] += 1
        sent = [a for a in asks if a[3] is not None]
        if len(sent) == 1:
            replies = [await exchange(sent[0][0], sent[0][3])]  # type: ignore[arg-type]
        else:
            replies = list(await asyncio.gather(*(exchange(s, b) for s, _, _, b in sent)))  # type: ignore[arg-type]
        by_seat = {a[0]: ex for a, ex in zip(sent, replies)}
        for s, dec, legal, _ in asks:
            ex = by_seat.get(s)
            verdict = _judge(ex, legal, extra_fields) if ex is not None else _NOT_ASKED
            action, extras, kind = verdict.action, verdict.extras, verdict.fault
            if ex is not None:
                decisions[s] += 1
                latency[s].append(round(ex.latency_ms, 2))
                if kind is not None:
                    fault_count[s] += 1
                    record(s, dec, "act", kind, verdict.detail, ex.latency_ms)
            by = BOT if action is not None else FALLBACK
            if action is None:
                action = legal[fallback_index(seed, s, dec, len(legal))]
            state = game.apply(state, s, action)
            if extras:
                try:
                    state = game.apply_extras(state, s, extras)
                except InvalidExtras as exc:
                    fault_count[s] += 1
                    kind = MALFORMED
                    record(s, dec, "act", MALFORMED, f"reply fields refused: {exc}", ex.latency_ms if ex else 0.0)
            log = None
            if verdict.log is not None:
                log = verdict.log[: min(LOG_CAP_DECISION, max(0, LOG_CAP_SEAT - log_used[s]))]
                log_used[s] += len(log)
            ms = round(ex.latency_ms, 2) if ex is not None else None
            moves.append(Move(s, dec, action, by, kind, ms, extras, log))
            if ex is not None:
                rts[s].tally(kind is not None)

    result = game.result(state)
    forfeited = [s for s in range(n) if fault_count[s] > 0] if limits.on_fault == "forfeit" else []
    ranks = _ranks_with_forfeits(result.scores, result.ranks, result.lower_is_better, forfeited)
    published = {
        "scores": result.scores,
        "ranks": ranks,
        "lower_is_better": result.lower_is_better,
        "forfeited": forfeited,
        "details": result.details,
    }
    await notify("end", [protocol.end(ctx, s, published) for s in range(n)])
    return MatchRecord(
        id=match_id,
        index=index,
        seed=seed,
        bots=[e.name for e in seats],
        scores=list(result.scores),
        ranks=ranks,
        lower_is_better=result.lower_is_better,
        forfeited=forfeited,
        faults=faults,
        latency_ms=latency,
        decisions=decisions,
        stats=[game.seat_stats(result, s) for s in range(n)],
        details=result.details,
        duration_s=round(time.perf_counter() - started, 4),
        deal_hash=deal_hash,
        restarts=restarts,
        disqualified=sorted(disqualified),
        voided=voided,
        moves=moves,
    )


def _deal_hash(game: Game, state: Any, n: int) -> str:
    """A fingerprint of the starting position (every seat's first view): equal for
    matches dealt the same cards, so duplicate deals can be checked from the journal."""
    views = json.dumps([game.view(state, s) for s in range(n)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(views.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Verdict:
    """What a reply amounts to: the legal action chosen and its extras, or a fault kind
    with its detail; and the bot's optional ``log`` string either way (a reply that is
    JSON but illegal still shows the author what the bot was thinking)."""

    action: Any = None
    extras: dict[str, Any] | None = None
    fault: str | None = None
    detail: str = ""
    log: str | None = None


_NOT_ASKED = Verdict()


def _judge(ex: Exchange, legal: list[Any], extra_fields: tuple[str, ...]) -> Verdict:
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
    extras = {k: reply[k] for k in extra_fields if k in reply} or None
    return Verdict(legal[i], extras, log=log)


def _ranks_with_forfeits(
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
