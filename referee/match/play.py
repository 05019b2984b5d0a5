"""Plays one match: asks seats, judges replies, applies the fault policy.

The only module that knows games and bots. A bot failure never raises here: it is a
fault (seat, decision, kind, detail, latency) in the ``MatchRecord``, and a seeded
random legal action is played for the seat; with ``on_fault = "forfeit"`` the seat also
ranks last. Past ``max_faults`` faults, or when its bot is disqualified for this match
(``run/dq.py``), a seat is played by the fallback without being called.

``Seats`` holds the fault policy; ``_Table`` sends the requests and runs the decisions.
Not charged to bots: a timeout whose timer fired late because the referee itself was
busy (voided and asked again, up to ``MAX_REASKS`` times; lateness noticed while reading
the bot's own bytes is the bot's); with ``time_bank_ms``, an answer slower than the
deadline, which spends the seat's bank instead (a timeout is then slower than the
deadline plus the bank left); the restart of a managed bot found dead; a decision that
finds its managed bot being restarted, while it waits for it within its deadline
(``bots.control.through_restart``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from referee.bots.client import protocol
from referee.bots.client.transport import Transport
from referee.bots.client.wire import Endpoint, Exchange, Sent
from referee.bots.control import BotRuntime, Pacer, ask, referee_was_late, send_placed, through_restart
from referee.config.model import Limits
from referee.games.base import Game, InvalidExtras
from referee.match.rules import NOT_ASKED, deal_fingerprint, fallback_index, judge, ranks_with_forfeits
from referee.record import BOT, ERROR, FALLBACK, MALFORMED, TIMEOUT, MatchRecord, Move

LOG_CAP_DECISION = 1024  # characters of a bot's ``log`` kept per decision
LOG_CAP_SEAT = 65536  # and per seat per match; longer is cut, never a fault
MAX_REASKS = 8  # a decision voided more often than this is judged as it stands


class Seats:
    """The per-seat bookkeeping of one match, and the fault policy of DESIGN.md in one
    place: what a reply costs a seat (a fault, its time bank, a restart), whether a seat
    is still asked, and the log it may keep. ``_Table`` only runs the decisions."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        runtimes: Sequence[BotRuntime],
        limits: Limits,
        disqualified: Collection[int] = (),
    ) -> None:
        n = len(endpoints)
        self.names = [e.name for e in endpoints]
        self.rts = list(runtimes)
        self.limits = limits
        self.faults: list[dict[str, Any]] = []
        self.fault_count = [0] * n
        self.latency: list[list[float]] = [[] for _ in range(n)]
        self.decisions = [0] * n
        self.bank = [float(limits.time_bank_ms)] * n
        self.restarts = [0] * n
        self.disqualified: set[int] = set(disqualified)
        self.voided = 0
        self.log_used = [0] * n  # characters of bot logs kept per seat

    def asked(self, s: int) -> bool:
        """Whether seat ``s`` is asked for its next decision: not when its bot is
        disqualified for this match, nor past ``max_faults`` faults in this match."""
        if s in self.disqualified:
            return False
        return self.fault_count[s] <= self.limits.max_faults

    def bank_left(self, s: int) -> int | None:
        """The time bank ``s`` has left, as sent in ``act`` (None without a time bank)."""
        return int(self.bank[s]) if self.limits.time_bank_ms else None

    def limit_ms(self, s: int, acting: bool) -> float:
        """How long seat ``s`` may take: the deadline, plus its bank for an ``act``."""
        return self.limits.deadline_ms + (self.bank[s] if acting else 0.0)

    def void(self, pacer: Pacer | None) -> None:
        """A decision was voided because the referee was late (asked again)."""
        self.voided += 1
        if pacer is not None:
            pacer.note_late()

    def settled_at_once(self, s: int, ex: Exchange, acting: bool) -> bool:
        """``settle`` for an answer without a fault (no restart to check): done here, True;
        False when ``settle`` must be awaited."""
        if ex.fault is not None:
            return False
        self.rts[s].timeouts_in_a_row = 0
        if acting:
            self.spend(s, ex)
        return True

    def spend(self, s: int, ex: Exchange) -> None:
        """An ``act`` exchange slower than the deadline spends the difference from the bank
        of seat ``s``, whatever it ended in (an answer, or a restart window waited out)."""
        if ex.latency_ms > self.limits.deadline_ms:
            self.bank[s] = max(0.0, self.bank[s] - (ex.latency_ms - self.limits.deadline_ms))

    async def settle(self, s: int, ex: Exchange, acting: bool) -> None:
        """What an exchange costs seat ``s`` besides a fault: a timeout empties its bank,
        a late answer spends it; an ``error`` restarts a dead managed bot, and timeouts in
        a row a hung one."""
        if self.settled_at_once(s, ex, acting):
            return
        if ex.fault != TIMEOUT:
            self.rts[s].timeouts_in_a_row = 0
        if acting and ex.fault == TIMEOUT:
            self.bank[s] = 0.0
            self.restarts[s] += await self.rts[s].after_timeout()  # a hung managed bot is restarted
            return
        if acting:
            self.spend(s, ex)
        if ex.fault == ERROR:
            self.restarts[s] += await self.rts[s].restart_if_dead()  # failed attempts included

    def charge(self, s: int, decision: int | None, phase: str, kind: str, detail: str, ms: float) -> None:
        """Record a fault of seat ``s``; faults in play count towards ``max_faults``."""
        if decision is not None:
            self.fault_count[s] += 1
        self.faults.append(
            {
                "seat": s,
                "bot": self.names[s],
                "decision": decision,
                "phase": phase,
                "kind": kind,
                "detail": detail[:300],
                "latency_ms": round(ms, 1),
            }
        )

    def answered(self, s: int, ex: Exchange) -> float:
        """Count one decision the bot of ``s`` was asked; its response time as recorded."""
        self.decisions[s] += 1
        ms = round(ex.latency_ms, 2)
        self.latency[s].append(ms)
        return ms

    def keep_log(self, s: int, log: str | None) -> str | None:
        """The part of a bot's ``log`` kept: 1 KB a decision, 64 KB a seat."""
        if log is None:
            return None
        kept = log[: min(LOG_CAP_DECISION, max(0, LOG_CAP_SEAT - self.log_used[s]))]
        self.log_used[s] += len(kept)
        return kept

    def forfeited(self) -> list[int]:
        """Seats ranked last for a fault in play (``on_fault = "forfeit"``)."""
        if self.limits.on_fault != "forfeit":
            return []
        return [s for s in range(len(self.names)) if self.fault_count[s] > 0]


async def play_match(
    game: Game,
    options: Mapping[str, Any],
    *,
    tournament: str,
    match_id: str,
    index: int,
    seed: int,
    seats: Sequence[Endpoint],
    client: Transport,
    limits: Limits,
    runtimes: Sequence[BotRuntime] | None = None,
    pacer: Pacer | None = None,
    disqualified: Collection[int] = (),
) -> MatchRecord:
    """Play one match between the bots at ``seats`` and return its record.

    ``runtimes`` (one per seat; a bot holding several seats has one runtime) carry the
    tournament-wide state of each bot; without them every seat is a plain endpoint.
    ``disqualified``: seats whose bot is disqualified for this match (never called,
    played by the fallback, listed in the record).
    """
    started = time.perf_counter()
    n = len(seats)
    ctx = protocol.MatchContext(
        tournament, match_id, game.info.id, options, [e.name for e in seats], game.info.append_only_view_keys
    )
    book = Seats(seats, runtimes if runtimes is not None else [BotRuntime(e) for e in seats], limits, disqualified)
    table = _Table(game, ctx, seed, book, client, pacer)
    await table.notify("start", [protocol.start(ctx, s) for s in range(n)])

    state = game.setup(n, seed, options)
    deal_hash = deal_fingerprint(game, state, n)
    state = await table.play(state)

    result = game.result(state)
    forfeited = book.forfeited()
    ranks = ranks_with_forfeits(result.scores, result.ranks, result.lower_is_better, forfeited)
    published = {
        "scores": result.scores,
        "ranks": ranks,
        "lower_is_better": result.lower_is_better,
        "forfeited": forfeited,
        "details": result.details,
    }
    # each seat's view of the final position: the last hand/round is shown nowhere else
    await table.notify("end", protocol.ends(ctx, published, [game.view(state, s) for s in range(n)], range(n)))
    return MatchRecord(
        id=match_id,
        index=index,
        seed=seed,
        bots=[e.name for e in seats],
        scores=list(result.scores),
        ranks=ranks,
        lower_is_better=result.lower_is_better,
        forfeited=forfeited,
        faults=book.faults,
        latency_ms=book.latency,
        decisions=book.decisions,
        stats=[game.seat_stats(result, s) for s in range(n)],
        details=result.details,
        duration_s=round(time.perf_counter() - started, 4),
        deal_hash=deal_hash,
        restarts=book.restarts,
        disqualified=sorted(book.disqualified),
        voided=book.voided,
        moves=table.moves,
    )


class _Table:
    """One match in play: sends its requests (``act`` to the seats to act, the ``start``
    and ``end`` notices to all) and runs its decisions, keeping the moves played."""

    def __init__(
        self, game: Game, ctx: protocol.MatchContext, seed: int, book: Seats, client: Transport, pacer: Pacer | None
    ) -> None:
        self.game = game
        self.ctx = ctx
        self.seed = seed
        self.book = book
        self.client = client
        self.pacer = pacer
        self.cap = book.limits.max_response_bytes
        self.moves: list[Move] = []

    async def play(self, state: Any) -> Any:
        """Play the decisions from the deal ``state`` to the end of the match; the final state."""
        game, ctx, book = self.game, self.ctx, self.book
        deadline = book.limits.deadline_ms
        # bound once: these run for every decision
        is_over, to_act, legal_of, view_of = game.is_over, game.to_act, game.legal, game.view
        act, is_asked, bank_left = protocol.act, book.asked, book.bank_left
        # Decisions are numbered per seat: a match-wide number would tell a seat how many
        # decisions others were asked in between, which can reveal hidden cards.
        asked = [0] * len(book.names)
        while not is_over(state):
            asks: list[tuple[int, int, list[Any]]] = []
            to: list[int] = []
            bodies: list[bytes] = []
            for s in to_act(state):
                legal = legal_of(state, s)
                dec = asked[s]
                if is_asked(s):
                    to.append(s)
                    bodies.append(act(ctx, s, dec, deadline, view_of(state, s), legal, bank_left(s)))
                asks.append((s, dec, legal))
                asked[s] = dec + 1
            replies = await self.ask_all(to, bodies, acting=True) if to else []
            state = self.apply_turn(state, asks, to, replies)
        return state

    def apply_turn(
        self, state: Any, asks: list[tuple[int, int, list[Any]]], to: list[int], replies: list[Exchange]
    ) -> Any:
        """Judge the replies of a turn (``asks``: seat, decision, legal list; ``to``: the seats
        asked, ``replies`` their answers) and apply the actions in seat order; the new state."""
        game, seed, book, moves = self.game, self.seed, self.book, self.moves
        extra_fields, apply = game.info.extra_reply_fields, game.apply
        r = 0
        for s, dec, legal in asks:
            ex: Exchange | None = None
            if r < len(to) and to[r] == s:
                ex = replies[r]
                r += 1
            verdict = judge(ex, legal, extra_fields) if ex is not None else NOT_ASKED
            action, extras, kind = verdict.action, verdict.extras, verdict.fault
            if ex is not None and kind is not None:
                book.charge(s, dec, "act", kind, verdict.detail, ex.latency_ms)
            by = BOT if action is not None else FALLBACK
            if action is None:
                action = legal[fallback_index(seed, s, dec, len(legal))]
            state = apply(state, s, action)
            if extras:
                try:
                    state = game.apply_extras(state, s, extras)
                except InvalidExtras as exc:
                    kind = MALFORMED
                    detail = f"reply fields refused: {exc}"
                    book.charge(s, dec, "act", MALFORMED, detail, ex.latency_ms if ex else 0.0)
            ms = book.answered(s, ex) if ex is not None else None
            log = verdict.log
            moves.append(Move(s, dec, action, by, kind, ms, extras, None if log is None else book.keep_log(s, log)))
        return state

    async def notify(self, phase: str, bodies: list[bytes]) -> None:
        """Send a notice to every seat still in the match; a failed one is a fault outside play."""
        book = self.book
        to = [s for s in range(len(book.names)) if s not in book.disqualified]
        done = await self.ask_all(to, [bodies[s] for s in to], acting=False)
        for s, ex in zip(to, done):
            if ex.fault is not None:
                book.charge(s, None, phase, ex.fault, ex.detail, ex.latency_ms)

    async def ask_again(self, s: int, body: bytes, acting: bool, ex: Exchange | None) -> Exchange:
        """Ask seat ``s`` (unless ``ex`` is its answer already), again while the referee was
        late (up to ``MAX_REASKS``); then settle what the answer costs the seat."""
        book, pacer, client, cap = self.book, self.pacer, self.client, self.cap
        rts = book.rts
        if ex is None:
            ex = await ask(rts[s], pacer, client, body, book.limit_ms(s, acting), cap)
        ex, restarted = await through_restart(rts[s], pacer, client, body, book.limit_ms(s, acting), cap, ex)
        book.restarts[s] += restarted
        attempt = 0
        while referee_was_late(ex) and attempt < MAX_REASKS:
            book.void(pacer)
            attempt += 1
            ex = await ask(rts[s], pacer, client, body, book.limit_ms(s, acting), cap)
        await book.settle(s, ex, acting)
        return ex

    async def ask_all(self, to: list[int], bodies: list[bytes], acting: bool) -> list[Exchange]:
        """Ask seats ``to`` at once, answers in seat order. The pacer's places are taken
        for all of them together; each request goes on the wire at once on an idle
        connection (``send_placed``: no task, no coroutine), any other in a task of its own."""
        book, pacer, client, cap = self.book, self.pacer, self.client, self.cap
        rts = book.rts
        if pacer is not None and not pacer.try_take(len(to)):
            await pacer.take(len(to))
        pending: list[Sent | asyncio.Task[Exchange] | None] = []
        try:
            for s, body in zip(to, bodies):
                sent = send_placed(rts[s], pacer, client, body, book.limit_ms(s, acting), cap)
                if sent is None:
                    if pacer is not None:
                        pacer.release(1)  # ``ask`` takes its own place
                    pending.append(asyncio.ensure_future(self.ask_again(s, body, acting, None)))
                else:
                    pending.append(sent)
            out: list[Exchange] = []
            for i, s in enumerate(to):
                p = pending[i]
                if type(p) is Sent:
                    # the common case without a coroutine: the reply is often in already
                    ex = p.exchange_now() if p.fut.done() else await p.result()
                    pending[i] = None
                    if not book.settled_at_once(s, ex, acting):
                        ex = await self.ask_again(s, bodies[i], acting, ex)
                else:
                    assert isinstance(p, asyncio.Task)
                    pending[i] = None
                    ex = await p
                out.append(ex)
            return out
        finally:
            for p in pending:  # only when cancelled or failed part-way
                if isinstance(p, Sent):
                    p.abandon()  # its place comes back with its future
                elif p is not None:
                    p.cancel()
