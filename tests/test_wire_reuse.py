"""One keep-alive pool for a whole run, requests without a task per seat, and the pacer's
places: real matches against a real HTTP server on 127.0.0.1 that counts its connections.

Parallel: the matches here are played under ``HONEST``, a deadline no load reaches; the two
tests that time exchanges against each other race their deadlines (marked serial)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from referee.bots.client import wire
from referee.bots.client.pool import LeanPool
from referee.bots.client.wire import Endpoint
from referee.bots.control import Pacer
from referee.config.model import Limits
from referee.games import get_game
from referee.match.play import play_match
from referee.record import MatchRecord
from tests.support.localbots import serve
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = pytest.mark.parallel

HONEST_MS = UNREACHABLE_DEADLINE_MS  # the bots here answer at once (or are held by the test)

GAME = get_game("nimmt_plus")
OPTIONS = GAME.check_options(4, {"variant": "plus"})


@dataclass
class Bot:
    """A bot server answering ``legal[0]``; ``before_act`` may hold a reply back."""

    port: int = 0
    connections: int = 0
    acts: int = 0
    per_seat_tasks: list[int] = field(default_factory=list)  # replay tasks seen at each act
    before_act: Callable[[], Awaitable[None]] | None = None
    released: int = 0  # acts ``before_act`` held and let go

    async def conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
                )
                msg = json.loads(await reader.readexactly(length))
                out = b"{}"
                if msg["type"] == "act":
                    self.acts += 1
                    # tasks running ``replay``: what a seat asked without ``send_placed`` costs
                    self.per_seat_tasks.append(
                        sum(1 for t in asyncio.all_tasks() if t.get_coro().__name__ == "replay")  # type: ignore[union-attr]
                    )
                    if self.before_act is not None:
                        await self.before_act()
                    out = json.dumps({"action": msg["legal"][0]}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%b" % (len(out), out))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def match(bot: Bot, pool: LeanPool, i: int, pacer: Pacer | None = None) -> MatchRecord:
    url = f"http://127.0.0.1:{bot.port}/"
    async with wire.new_client(6, pool) as client:
        return await play_match(
            GAME,
            OPTIONS,
            tournament="t",
            match_id=f"m{i:06d}",
            index=i,
            seed=i,
            seats=[Endpoint.make(f"p{s}", url, None) for s in range(4)],
            client=client,
            limits=Limits(deadline_ms=HONEST_MS),
            pacer=pacer,
        )


async def started(bot: Bot) -> asyncio.Server:
    server = await asyncio.start_server(bot.conn, "127.0.0.1", 0)
    bot.port = server.sockets[0].getsockname()[1]
    return server


def test_one_pool_serves_every_match_and_no_seat_needs_a_task_of_its_own() -> None:
    bot = Bot()

    async def go() -> tuple[list[MatchRecord], MatchRecord]:
        server = await started(bot)
        pool = LeanPool(16)
        async with server:
            recs = [await match(bot, pool, i) for i in range(3)]
            pool.close()
        bot2 = Bot()
        server = await started(bot2)
        async with server:
            fresh = LeanPool(16)  # a pool of its own, as each match had before
            alone = await match(bot2, fresh, 1)
            fresh.close()
        return recs, alone

    recs, alone = asyncio.run(go())
    assert all(r.faults == [] and sum(r.decisions) > 0 for r in recs)
    # four seats asked at once: four connections for the run, not four per match
    assert bot.connections == 4
    # once connections are idle, every act went out without a task per seat
    first_match_acts = sum(recs[0].decisions)
    assert bot.per_seat_tasks[first_match_acts:] == [0] * (bot.acts - first_match_acts)
    # a shared pool plays the same moves as a pool per match (determinism)
    assert [(m.seat, m.action) for m in recs[1].moves] == [(m.seat, m.action) for m in alone.moves]
    assert recs[1].scores == alone.scores


def test_a_cancelled_match_gives_back_its_pacer_places_and_its_connections_are_never_reused() -> None:
    """A match is cancelled while its four requests are in flight; the bot answers them
    afterwards. The pacer's places come back, and the next match on the same pool gets
    its own answers on new connections (the late replies are nobody's)."""
    bot = Bot()
    held = asyncio.Event()
    release = asyncio.Event()

    async def hold() -> None:
        if bot.acts >= 4:
            held.set()
        await release.wait()
        bot.released += 1  # its reply is written at once, without a pause

    async def go() -> tuple[int, int, MatchRecord]:
        server = await started(bot)
        pool = LeanPool(16)
        pacer = Pacer(initial=64)
        async with server:
            warm = await match(bot, pool, 0, pacer)  # four idle connections
            assert warm.faults == [] and bot.connections == 4
            bot.acts = 0
            bot.before_act = hold
            task = asyncio.create_task(match(bot, pool, 1, pacer))
            await held.wait()  # four acts of match 1 are in flight
            in_flight_then = pacer.in_flight
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            in_flight_after = pacer.in_flight
            bot.before_act = None
            release.set()  # the held replies now arrive, on abandoned connections
            while bot.released < 4:
                await asyncio.sleep(0)
            rec = await match(bot, pool, 2, pacer)
            pool.close()
        return in_flight_then, in_flight_after, rec

    in_flight_then, in_flight_after, rec = asyncio.run(go())
    assert in_flight_then == 4 and in_flight_after == 0
    assert rec.faults == [] and sum(rec.decisions) > 0
    assert bot.connections == 8  # the four abandoned connections were replaced, not reused


# -- the pacer's places ----------------------------------------------------------------


def test_pacer_places_are_given_in_order_and_a_decision_alone_may_exceed_the_limit() -> None:
    async def go() -> list[Any]:
        pacer = Pacer(initial=4, minimum=4)
        log: list[Any] = []
        assert pacer.try_take(3)
        assert not pacer.try_take(2)  # 5 > 4

        async def taker(name: str, places: int) -> None:
            await pacer.take(places)
            log.append((name, pacer.in_flight))

        a = asyncio.create_task(taker("a", 2))
        b = asyncio.create_task(taker("b", 1))
        await asyncio.sleep(0)
        assert log == [] and not pacer.try_take(1)  # b waits behind a, and so does a newcomer
        pacer.release(3)
        await asyncio.gather(a, b)
        log.append(("after", pacer.in_flight))
        pacer.release(3)
        assert pacer.try_take(9)  # nothing in flight: a decision of 9 seats is never stuck
        log.append(("alone", pacer.in_flight))
        pacer.release(9)
        return log

    assert asyncio.run(go()) == [("a", 3), ("b", 3), ("after", 3), ("alone", 9)]  # both woken by one release


def test_a_cancelled_waiter_passes_its_places_on() -> None:
    async def go() -> tuple[int, bool]:
        pacer = Pacer(initial=4, minimum=4)
        assert pacer.try_take(4)
        first = asyncio.create_task(pacer.take(2))
        second = asyncio.create_task(pacer.take(2))
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.sleep(0)
        pacer.release(4)
        await second
        return pacer.in_flight, first.cancelled()

    assert asyncio.run(go()) == (2, True)


@pytest.mark.serial
def test_a_seats_failure_is_timed_when_it_failed_not_when_the_match_read_it() -> None:
    """Seat 0 answers its first act after 1 s; seat 1 closes its connection at once, and
    the fresh one it is asked again on too. The match reads seat 0 first, yet seat 1 was
    asked again at once and its fault carries its own time (generous bound)."""
    first = asyncio.Event()

    async def slow_once(msg: dict[str, Any]) -> httpx.Response:
        if msg["type"] == "act" and not first.is_set():
            first.set()
            await asyncio.sleep(1.0)
        return httpx.Response(200, json={"action": msg["legal"][0]} if msg["type"] == "act" else {})

    async def boom(msg: dict[str, Any]) -> httpx.Response:
        if msg["type"] == "act":
            raise httpx.ConnectError("closes the connection without a reply")
        return httpx.Response(200, text="{}")

    async def go() -> MatchRecord:
        async with serve({"slow": slow_once, "boom": boom}) as urls, wire.new_client(4) as client:
            return await play_match(
                GAME,
                GAME.check_options(2, {}),
                tournament="t",
                match_id="m000001",
                index=1,
                seed=3,
                seats=[Endpoint.make(n, urls[n], None) for n in ("slow", "boom")],
                client=client,
                limits=Limits(deadline_ms=5000, max_faults=1000),
            )

    rec = asyncio.run(go())
    assert rec.latency_ms[0][0] >= 1000  # seat 0's first answer took its second
    fault = next(f for f in rec.faults if f["seat"] == 1 and f["decision"] == 0)
    assert fault["kind"] == "error" and fault["latency_ms"] < 500, fault


@pytest.mark.serial
def test_deadlines_out_of_order_and_after_answered_requests_still_end_each_exchange() -> None:
    """One pool, a bot that answers only bodies marked "answer": requests with deadlines
    of 2 s, then 0.3 s (out of order: a timer of its own), then answered ones, then 0.6 s.
    Each silent request times out at its own deadline (generous bounds), none at another's."""

    async def silent_or_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                n = next(int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                if b"answer" in await reader.readexactly(n):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    async def go() -> list[wire.Exchange]:
        server = await asyncio.start_server(silent_or_answer, "127.0.0.1", 0)
        ep = Endpoint.make("b", f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/", None)
        pool = LeanPool(8)
        async with server:
            warm = [wire.post(pool, ep, b'{"answer":1}', 5000, 1024) for _ in range(4)]
            await asyncio.gather(*warm)  # four idle connections
            sent = [
                wire.send_now(pool, ep, b'{"wait":1}', 2000, 1024),
                wire.send_now(pool, ep, b'{"wait":2}', 300, 1024),
                wire.send_now(pool, ep, b'{"answer":2}', 5000, 1024),
            ]
            assert all(s is not None for s in sent)
            answered = await sent[2].result()  # type: ignore[union-attr]
            last = wire.send_now(pool, ep, b'{"wait":3}', 600, 1024)
            assert last is not None
            out = [await s.result() for s in (*sent[:2], last)]  # type: ignore[union-attr]
            pool.close()
        return [*out, answered]

    long, short, later, answered = asyncio.run(go())
    assert answered.fault is None and answered.body == b"{}"
    assert [e.fault for e in (long, short, later)] == ["timeout"] * 3
    assert long.latency_ms >= 1900
    assert 250 <= short.latency_ms < 1600  # its own deadline, not the 2 s one queued before it
    assert 550 <= later.latency_ms < 1600
