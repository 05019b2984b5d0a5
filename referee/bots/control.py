"""What stands between a match and a bot: per-bot limits and the referee's own pace.

``BotRuntime`` is one bot for the whole tournament, shared by every match it plays: at
most ``max_concurrent`` requests in flight to it (waiting for a slot is not part of the
deadline, which runs from sending), and restarts (with backoff, up to a limit) of a
managed bot whose process died or that hangs (``UNRESPONSIVE_AFTER`` act timeouts in a
row, then no answer to ``hello``); a bot that cannot be restarted is ``down``, every
decision of it played by the fallback as a fault without a request.

The restart window: a decision that finds a managed bot not listening ("cannot connect":
it died, is dying or is being restarted) is not charged at once. ``through_restart`` waits
for the restart (the one under way, or one it starts), within what is left of the
decision's deadline, and asks again; only a bot not back in time is charged (``error``).
The bot never saw a refused request, so it answers the decision exactly once.

``Pacer`` keeps the referee's clock honest: on a busy event loop, deadline timers and
reply times come late, charging the referee's queueing to bots. It measures the loop's lag
every 10 ms and limits the requests in flight referee-wide, adaptively (additive increase,
multiplicative decrease, as TCP does). A decision whose deadline timer itself fired late
is replayed by the match (``referee_was_late``); lateness noticed while reading a bot's
own bytes is the bot's.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee.bots.client import wire
from referee.bots.client.transport import Transport
from referee.bots.client.wire import Endpoint, Exchange
from referee.record import ERROR, TIMEOUT

if TYPE_CHECKING:
    from referee.bots.cage.process import ManagedBot, Revival

# A timeout whose timer fired this much later than its deadline was the referee's
# lateness, not the bot's (a timer on an idle loop fires within about a millisecond).
REFEREE_LATE_MS = 5.0
RETRY_S = 0.05  # how often a request that found nothing listening is tried again within its deadline
UNRESPONSIVE_AFTER = 3  # act timeouts in a row after which a managed bot is probed (hello) and, if hung, restarted


def referee_was_late(ex: Exchange) -> bool:
    """True when ``ex`` is a timeout whose deadline timer the referee itself fired late
    (busy elsewhere); never for lateness inside the bot's own exchange."""
    return ex.fault == TIMEOUT and ex.late_ms > REFEREE_LATE_MS


@dataclass
class ReviveArgs:
    """What a restart needs to check the bot is ready again."""

    hello_body: bytes
    startup_ms: int
    deadline_ms: int
    max_bytes: int


@dataclass
class _SharedRevival:
    """One ``ManagedBot.revive`` that several decisions may wait for; its restart attempts
    are charged once, to the first caller that sees it end (``claim``)."""

    task: asyncio.Task[Revival]
    claimed: bool = False

    def claim(self) -> int:
        """The attempts of the ended revive, the first time; 0 after."""
        if self.claimed:
            return 0
        self.claimed = True
        return self.task.result().attempts


@dataclass
class BotRuntime:
    """One bot during a tournament: its limits and its process (fault-rate
    disqualification is judged per fixture by the run, ``run/dq.py``)."""

    endpoint: Endpoint
    max_concurrent: int = 0
    managed: ManagedBot | None = None
    revive_args: ReviveArgs | None = None
    _slots: asyncio.Semaphore | None = field(default=None, repr=False)
    timeouts_in_a_row: int = 0  # across matches: reset by any answer
    _revival: _SharedRevival | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """The bot's name."""
        return self.endpoint.name

    @property
    def down(self) -> bool:
        """True once a crashed managed bot could not be restarted."""
        return self.managed is not None and self.managed.down

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """One of the bot's ``max_concurrent`` request slots (none when unlimited)."""
        if self.max_concurrent <= 0:
            yield
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_concurrent)
        async with self._slots:
            yield

    async def after_timeout(self) -> int:
        """After an ``act`` timeout: past ``UNRESPONSIVE_AFTER`` in a row, probe a managed bot
        and restart it if it is hung. The restart attempts made (the caller's match is charged)."""
        self.timeouts_in_a_row += 1
        if self.managed is None or self.revive_args is None or self.timeouts_in_a_row < UNRESPONSIVE_AFTER:
            return 0
        self.timeouts_in_a_row = 0
        a = self.revive_args
        return (await self.managed.revive_unresponsive(a.hello_body, a.startup_ms, a.deadline_ms, a.max_bytes)).attempts

    async def restart_if_dead(self) -> int:
        """After an ``error`` fault: restart the bot if its process died. The restart
        attempts this call made, failed ones included (the caller's match is charged)."""
        if self.managed is None or self.revive_args is None:
            return 0
        return await self._revive_shared(None)

    async def _revive_shared(self, within_s: float | None) -> int:
        """Join the revive under way, or start one (it goes on if this caller stops
        waiting: after ``within_s`` seconds, or cancelled). The restart attempts charged
        to this caller: those of revives that ended and nobody claimed yet."""
        assert self.managed is not None and self.revive_args is not None
        owed = 0
        r = self._revival
        if r is not None and r.task.done():
            owed, r = r.claim(), None
        if r is None:
            a = self.revive_args
            task = asyncio.ensure_future(self.managed.revive(a.hello_body, a.startup_ms, a.deadline_ms, a.max_bytes))
            r = self._revival = _SharedRevival(task)
        try:
            await asyncio.wait_for(asyncio.shield(r.task), within_s)
        except TimeoutError:
            return owed
        return owed + r.claim()


class Pacer:
    """The referee-wide, adaptive limit on requests in flight (see the module doc)."""

    def __init__(
        self,
        initial: int = 64,
        minimum: int = 4,
        maximum: int = 4096,
        target_lag_ms: float = 15.0,
        interval_ms: float = 10.0,
        window_ms: float = 100.0,
    ) -> None:
        self.limit = max(minimum, min(maximum, initial))
        self.minimum, self.maximum = minimum, maximum
        self.target_lag_ms = target_lag_ms
        self.interval_s = interval_ms / 1000.0
        self.window_s = window_ms / 1000.0
        self.in_flight = 0
        self.lags_ms: collections.deque[float] = collections.deque(maxlen=100_000)
        self.lowest_limit = self.limit
        self._waiters: collections.deque[tuple[asyncio.Future[None], int]] = collections.deque()
        self._waited = False
        self._cut_in_window = False
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_tournament(cls, deadline_ms: int, concurrency: int, players: int) -> Pacer:
        """The pacer of a tournament: it starts at 64 requests in flight at most, and
        the lag it tolerates is a hundredth of the deadline, between 10 and 40 ms (so a
        bot's recorded time is its own to within about that: the loop lag is about how
        long replies already in wait to be read; a timer that still fires late is caught
        by the replay of match/play.py)."""
        return cls(
            initial=min(64, max(16, concurrency * players)), target_lag_ms=min(40.0, max(10.0, deadline_ms / 100))
        )

    async def __aenter__(self) -> Pacer:
        self._task = asyncio.create_task(self._watch())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def try_take(self, places: int = 1) -> bool:
        """Take ``places`` among the requests in flight at once if there is room and
        nobody waits (a caller alone may exceed the limit: a decision of many seats is
        never stuck); False: ``take`` waits for them."""
        if self._waiters or (self.in_flight + places > self.limit and self.in_flight > 0):
            return False
        self.in_flight += places
        return True

    async def take(self, places: int = 1) -> None:
        """Take ``places`` among the requests in flight, waiting (first come, first
        served) while the limit is reached; ``release`` gives each back."""
        if self.try_take(places):
            return
        self._waited = True
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((fut, places))
        try:
            await fut  # the places are taken for us when we are woken
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release(places)  # woken, then cancelled: pass the places on
            raise

    def released(self, _: object) -> None:
        """``release(1)`` as a future's done-callback."""
        self.release(1)

    def release(self, places: int = 1) -> None:
        """Give back ``places`` taken with ``take`` or ``try_take``."""
        self.in_flight -= places
        if self._waiters:
            self._wake()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """A place among the requests in flight; waits while the limit is reached."""
        await self.take(1)
        try:
            yield
        finally:
            self.release(1)

    def note_late(self) -> None:
        """A decision was voided because the referee was late: halve the limit (once per
        window; the lag samples may not have seen the stall yet)."""
        if not self._cut_in_window:
            self._cut_in_window = True
            self.limit = max(self.minimum, self.limit // 2)
            self.lowest_limit = min(self.lowest_limit, self.limit)

    def _wake(self) -> None:
        """Wake waiters in order while their places fit under the limit (the first one
        also when nothing is in flight), taking the places for them."""
        waiters = self._waiters
        while waiters:
            fut, places = waiters[0]
            if fut.done():  # cancelled while waiting
                waiters.popleft()
                continue
            if self.in_flight + places > self.limit and self.in_flight > 0:
                return
            waiters.popleft()
            self.in_flight += places
            fut.set_result(None)

    async def _watch(self) -> None:
        """Sample the loop's lag; adjust the limit once per window."""
        window_max = 0.0
        window_start = time.perf_counter()
        while True:
            t = time.perf_counter()
            await asyncio.sleep(self.interval_s)
            now = time.perf_counter()
            lag = max(0.0, (now - t - self.interval_s) * 1000.0)
            self.lags_ms.append(lag)
            window_max = max(window_max, lag)
            if now - window_start >= self.window_s:
                if self._cut_in_window:
                    pass
                elif window_max > self.target_lag_ms:
                    self.limit = max(self.minimum, int(self.limit * 0.8))
                    self.lowest_limit = min(self.lowest_limit, self.limit)
                elif self._waited:
                    self.limit = min(self.maximum, self.limit + max(2, self.limit // 4))
                    self._wake()
                self._waited = False
                self._cut_in_window = False
                window_max = 0.0
                window_start = now

    def report(self) -> dict[str, Any]:
        """Lag figures of the run so far (ms), for the console and timings.json."""
        lags = sorted(self.lags_ms)
        if not lags:
            return {"samples": 0}

        def pick(q: float) -> float:
            return round(lags[min(len(lags) - 1, int(q * len(lags)))], 2)

        return {
            "samples": len(lags),
            "p50_ms": pick(0.5),
            "p99_ms": pick(0.99),
            "max_ms": round(lags[-1], 2),
            "final_limit": self.limit,
            "lowest_limit": self.lowest_limit,
        }


async def ask(
    rt: BotRuntime, pacer: Pacer | None, client: Transport, body: bytes, limit_ms: float, cap: int
) -> Exchange:
    """One request to the bot of ``rt`` within its slots and the pacer's limit."""
    if rt.down:
        return Exchange(None, 0.0, ERROR, "bot process is down (could not be restarted): played by fallback")
    if rt.max_concurrent > 0:
        async with rt.slot():
            return await _paced(rt, pacer, client, body, limit_ms, cap)
    return await _paced(rt, pacer, client, body, limit_ms, cap)


def refused(ex: Exchange) -> bool:
    """True when the request never reached the bot: nothing listened (its process died,
    or is starting again)."""
    return ex.fault == ERROR and ex.detail.startswith("cannot connect")


async def through_restart(
    rt: BotRuntime, pacer: Pacer | None, client: Transport, body: bytes, limit_ms: float, cap: int, ex: Exchange
) -> tuple[Exchange, int]:
    """The restart window (see the module doc): ``ex`` itself unless it found a managed
    bot not listening; then, within the deadline, the bot's restart is awaited (one is
    started if its process died; one that is dying may still look alive, so the request is
    tried again every ``RETRY_S`` meanwhile) and the request asked again; or ``ex`` timed
    to the end of the wait. With the restart attempts charged to the caller."""
    if rt.managed is None or rt.revive_args is None or rt.down or not refused(ex):
        return ex, 0
    sent_at = time.perf_counter() - ex.latency_ms / 1000.0
    attempts = 0
    while True:
        left_s = limit_ms / 1000.0 - (time.perf_counter() - sent_at)
        attempts += await rt._revive_shared(max(0.0, left_s))
        waited_ms = (time.perf_counter() - sent_at) * 1000.0
        if rt.down or waited_ms >= limit_ms:
            break
        again = await ask(rt, pacer, client, body, limit_ms - waited_ms, cap)
        if not refused(again):
            if again.fault == TIMEOUT:
                again = dataclasses.replace(again, detail=f"no complete reply within {limit_ms:.0f} ms")
            return dataclasses.replace(again, latency_ms=waited_ms + again.latency_ms), attempts
        await asyncio.sleep(max(0.0, min(RETRY_S, (limit_ms - waited_ms) / 1000.0)))
    revival = rt._revival
    if rt.down:
        note = "; the bot could not be restarted"
    elif revival is not None and not revival.task.done():
        note = f"; the bot was being restarted and was not back within {limit_ms:.0f} ms"
    else:
        note = f"; nothing listened for {limit_ms:.0f} ms"
    return dataclasses.replace(
        ex, latency_ms=(time.perf_counter() - sent_at) * 1000.0, detail=ex.detail + note
    ), attempts


def send_placed(
    rt: BotRuntime, pacer: Pacer | None, client: Transport, body: bytes, limit_ms: float, cap: int
) -> wire.Sent | None:
    """``ask``'s common case without a coroutine, for a caller holding a pacer place: the
    bot is up and has no slot limit, a keep-alive connection is idle. The request is on
    the wire on return, and its place is given back the moment its exchange ends (not
    when the caller gets to it: a match reading its seats in order must not hold places
    another bot's request waits for). ``None``: the place is the caller's; use ``ask``."""
    if rt.max_concurrent > 0 or rt.down:
        return None
    sent = wire.send_now(client, rt.endpoint, body, limit_ms, cap)
    if sent is not None and pacer is not None:
        sent.fut.add_done_callback(pacer.released)
    return sent


async def _paced(
    rt: BotRuntime, pacer: Pacer | None, client: Transport, body: bytes, limit_ms: float, cap: int
) -> Exchange:
    if pacer is None:
        return await wire.post(client, rt.endpoint, body, limit_ms, cap)
    if not pacer.try_take(1):
        await pacer.take(1)
    try:
        return await wire.post(client, rt.endpoint, body, limit_ms, cap)
    finally:
        pacer.release(1)
