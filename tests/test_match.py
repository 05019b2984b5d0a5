"""Matches against bots served on 127.0.0.1 (``localbots``), through the lean pool
production uses: every fault kind is classified and lands on the right seat (as through
the scripted transport), the fault policy holds, simultaneous seats are asked
concurrently. (End-to-end tests with real bot processes are in test_e2e.py.)

Parallel: every match here is played under ``HONEST_MS``, a deadline no load reaches, but
the timeouts' own (marked serial), whose slow bot answers far past a short deadline."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from referee.bots.client import wire
from referee.bots.client.scripted import ScriptedTransport
from referee.bots.client.transport import Target, Transport, TransportError
from referee.bots.client.wire import Endpoint
from referee.config.model import Limits, Secret
from referee.games import get_game
from referee.match.play import play_match
from referee.record import MatchRecord
from tests.support.localbots import Handler, Seen, good, illegal, on_act, serve
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = pytest.mark.parallel

HONEST_MS = UNREACHABLE_DEADLINE_MS  # the bots here answer at once

GAME = get_game("nimmt_plus")


async def slow(msg: dict[str, Any]) -> httpx.Response:
    await asyncio.sleep(0.5)
    return await good(msg)


async def status_500(msg: dict[str, Any]) -> httpx.Response:
    return httpx.Response(500, text="boom")


async def not_json(msg: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, text="<html>hello</html>")


async def no_action(msg: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"move": msg["legal"][0]})


async def oversized(msg: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, content=b'{"action": [1], "pad": "' + b"x" * 5000 + b'"}')


async def bool_for_int(msg: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"action": [True]})


async def redirect(msg: dict[str, Any]) -> httpx.Response:
    return httpx.Response(302, headers={"Location": "http://elsewhere/"})


async def refused(msg: dict[str, Any]) -> httpx.Response:
    raise httpx.ConnectError("connection refused")


def scripted(handlers: dict[str, Handler]) -> ScriptedTransport:
    """The bots of ``handlers`` behind a scripted transport, each at ``http://NAME.test/``
    (a handler raising ``httpx.ConnectError`` is a connection closed without a reply)."""

    async def answer(target: Target, body: bytes) -> tuple[int, bytes]:
        try:
            resp = await handlers[target.host.removesuffix(".test")](json.loads(body))
        except httpx.ConnectError as exc:
            raise TransportError(str(exc)) from None
        return resp.status_code, resp.content

    return ScriptedTransport(answer)


def run(
    handlers: dict[str, Handler],
    limits: Limits,
    seed: int = 5,
    seats: int = 2,
    options: dict[str, Any] | None = None,
    seen: list[Seen] | None = None,
    tokens: dict[str, str] | None = None,
    over: str = "sockets",
) -> MatchRecord:
    """One match of the bots of ``handlers``, served on 127.0.0.1 (or ``over`` a scripted transport)."""
    names = list(handlers)[:seats]
    tokens = tokens or {}

    async def play(urls: dict[str, str], client: Transport) -> MatchRecord:
        eps = [Endpoint.make(n, urls[n], Secret(tokens[n]) if n in tokens else None) for n in names]
        return await play_match(
            GAME,
            GAME.check_options(seats, options or {}),
            tournament="t",
            match_id="m000001",
            index=1,
            seed=seed,
            seats=eps,
            client=client,
            limits=limits,
        )

    async def go() -> MatchRecord:
        if over == "scripted":
            async with scripted(handlers) as client:
                return await play({n: f"http://{n}.test/" for n in handlers}, client)
        async with serve(handlers, seen) as urls, wire.new_client(seats + 2) as client:
            return await play(urls, client)

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("handler", "kind"),
    [
        pytest.param(slow, "timeout", marks=pytest.mark.serial),
        (status_500, "error"),
        (redirect, "error"),
        (refused, "error"),
        (not_json, "malformed"),
        (no_action, "malformed"),
        (oversized, "malformed"),
        (illegal, "illegal"),
        (bool_for_int, "illegal"),
    ],
)
@pytest.mark.parametrize("over", ["sockets", "scripted"])
def test_each_fault_kind_lands_on_the_faulty_seat(handler: Any, kind: str, over: str) -> None:
    limits = Limits(deadline_ms=100 if kind == "timeout" else HONEST_MS, max_faults=2, max_response_bytes=1024)
    rec = run({"bad": on_act(handler), "fine": good}, limits, over=over)
    act_faults = [f for f in rec.faults if f["phase"] == "act"]
    assert act_faults, "the faulty bot must have faults"
    assert {f["kind"] for f in act_faults} == {kind}
    assert {f["seat"] for f in rec.faults} == {0}
    assert all(f["bot"] == "bad" for f in rec.faults)
    # past max_faults the seat is no longer called: exactly max_faults + 1 calls, all faulty
    assert rec.decisions[0] == 3 and len(act_faults) == 3
    assert rec.decisions[1] == sum(1 for _ in rec.latency_ms[1]) > 3
    if kind == "timeout":
        assert all(100 <= f["latency_ms"] < 400 for f in act_faults)
    assert sorted(rec.ranks) in ([1, 2], [1, 1])


def test_good_bots_have_no_faults_and_a_full_result() -> None:
    rec = run({"a": good, "b": good}, Limits(deadline_ms=HONEST_MS))
    assert rec.faults == []
    assert rec.decisions[0] == rec.decisions[1] == 30  # 2 hands x 15 turns each
    hands = rec.details["hands"]
    assert len(hands) == 2  # a match is as many hands as players
    assert rec.scores == [sum(h["scores"][s] for h in hands) for s in range(2)]
    assert all(len(lat) == 30 for lat in rec.latency_ms)


def test_fallback_is_seeded_and_deterministic() -> None:
    limits = Limits(deadline_ms=HONEST_MS, max_faults=0)
    a = run({"bad": on_act(illegal), "fine": good}, limits, seed=9)
    b = run({"bad": on_act(illegal), "fine": good}, limits, seed=9)
    c = run({"bad": on_act(illegal), "fine": good}, limits, seed=10)
    assert a.scores == b.scores and a.ranks == b.ranks
    assert (a.scores, a.seed) != (c.scores, c.seed)


def test_forfeit_ranks_the_faulty_seat_last() -> None:
    limits = Limits(deadline_ms=HONEST_MS, on_fault="forfeit", max_faults=0)
    handlers = {"bad": on_act(illegal), "x": good, "y": good}
    rec = run(handlers, limits, seats=3)
    assert rec.forfeited == [0]
    assert rec.ranks[0] == 3
    assert sorted(rec.ranks[1:]) in ([1, 2], [1, 1])


def test_start_and_end_failures_are_recorded_not_fatal() -> None:
    async def only_act(msg: dict[str, Any]) -> httpx.Response:
        if msg["type"] == "act":
            return await good(msg)
        return httpx.Response(503)

    rec = run({"flaky": only_act, "fine": good}, Limits(deadline_ms=HONEST_MS))
    phases = sorted(f["phase"] for f in rec.faults)
    assert phases == ["end", "start"]
    assert all(f["seat"] == 0 and f["kind"] == "error" for f in rec.faults)
    assert rec.decisions[0] == 30


def test_simultaneous_seats_are_asked_concurrently() -> None:
    in_flight = 0
    peak = 0

    async def tracking(msg: dict[str, Any]) -> httpx.Response:
        nonlocal in_flight, peak
        if msg["type"] == "act":
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.002)
            in_flight -= 1
        return await good(msg)

    run({"a": tracking, "b": tracking, "c": tracking, "d": tracking}, Limits(deadline_ms=HONEST_MS), seats=4)
    assert peak == 4


def test_messages_follow_the_wire_protocol_and_carry_the_token() -> None:
    seen: list[Seen] = []
    run({"a": good, "b": good}, Limits(deadline_ms=HONEST_MS), seen=seen, tokens={"a": "s3cret"})
    bodies = [json.loads(r.content) for r in seen]
    assert [b["type"] for b in bodies[:2]] == ["start", "start"]
    assert [b["type"] for b in bodies[-2:]] == ["end", "end"]
    act = next(b for b in bodies if b["type"] == "act")
    assert set(act) == {
        "protocol",
        "type",
        "tournament",
        "match",
        "game",
        "options",
        "seat",
        "players",
        "decision",
        "deadline_ms",
        "state",
        "legal",
    }
    assert act["protocol"] == 1 and act["game"] == "nimmt_plus" and act["players"] == ["a", "b"]
    assert act["state"]["seat"] == act["seat"]
    end = bodies[-1]
    assert set(end["result"]) >= {"scores", "ranks"}
    # the schema's integers, as the wire carries them: a typed decoder (Go int, Java long) reads 104, not 104.0
    assert all(type(x) is int for x in end["result"]["scores"]), end["result"]["scores"]
    for r in seen:
        assert r.headers["content-type"] == "application/json"
        if r.bot == "a":
            assert r.headers["authorization"] == "Bearer s3cret"
        else:
            assert "authorization" not in r.headers
    for seat in (0, 1):  # numbered per seat, so nobody learns how often others were asked
        decisions = [b["decision"] for b in bodies if b["type"] == "act" and b["seat"] == seat]
        assert decisions == list(range(len(decisions)))


def test_reply_fields_the_game_refuses_are_a_malformed_fault_and_the_action_stands() -> None:
    game = get_game("the_game")

    async def bad_claims(msg: dict[str, Any]) -> httpx.Response:
        if msg["type"] != "act":
            return httpx.Response(200, json={})
        return httpx.Response(200, json={"action": msg["legal"][0], "claims": [7, 7]})

    async def good_claims(msg: dict[str, Any]) -> httpx.Response:
        if msg["type"] != "act":
            return httpx.Response(200, json={})
        return httpx.Response(200, json={"action": msg["legal"][0], "claims": [2]})

    seen: list[Seen] = []

    async def go() -> MatchRecord:
        async with serve({"bad": bad_claims, "good": good_claims}, seen) as urls, wire.new_client(4) as client:
            eps = [Endpoint.make(n, urls[n], None) for n in ("bad", "good")]
            return await play_match(
                game,
                game.check_options(2, {}),
                tournament="t",
                match_id="m1",
                index=0,
                seed=3,
                seats=eps,
                client=client,
                limits=Limits(deadline_ms=HONEST_MS, max_faults=1000),
            )

    rec = asyncio.run(go())
    kinds = {(f["bot"], f["kind"]) for f in rec.faults}
    assert kinds == {("bad", "malformed")}
    assert all("reply fields refused" in f["detail"] for f in rec.faults)
    assert len(rec.faults) == rec.decisions[0]  # every reply of "bad" carried broken claims
    # the actions still counted: the good seat saw its own claim and no claim from "bad"
    states = [json.loads(r.content)["state"] for r in seen if json.loads(r.content)["type"] == "act"]
    later = [s for s in states if s["seat"] == 0 and s["claims"][1]]
    assert later and all(s["claims"][0] == [] and s["claims"][1] == [2] for s in later)


async def logging_bot(msg: dict[str, Any]) -> httpx.Response:
    if msg["type"] != "act":
        return httpx.Response(200, json={"ok": True})
    return httpx.Response(200, json={"action": msg["legal"][-1], "log": "why " * 400})


def test_moves_replay_the_match_and_mark_who_chose() -> None:
    """The record's moves, applied in order from the seed, give the same scores; a
    faulting seat's moves are the fallback's, with the fault kind; logs are capped."""
    limits = Limits(deadline_ms=HONEST_MS, max_faults=3, max_response_bytes=4096)
    rec = run({"bad": on_act(illegal), "talker": logging_bot}, limits)
    state = GAME.setup(2, 5, GAME.check_options(2, {}))
    for m in rec.moves:
        state = GAME.apply(state, m.seat, m.action)
    assert GAME.is_over(state) and GAME.result(state).scores == rec.scores
    bad = [m for m in rec.moves if m.seat == 0]
    asked = [m for m in bad if m.ms is not None]
    assert len(asked) == 4 and all(m.by == "fallback" and m.fault == "illegal" for m in asked)
    assert all(m.by == "fallback" and m.fault is None and m.ms is None for m in bad[4:])  # past max_faults
    talk = [m for m in rec.moves if m.seat == 1]
    assert all(m.by == "bot" and m.fault is None and m.log is not None for m in talk)
    assert all(len(m.log or "") == 1024 for m in talk[:60])  # 1 KB a decision; 64 KB a seat a match
    assert sum(len(m.log or "") for m in talk) <= 65536
    assert [m.decision for m in talk] == list(range(len(talk)))
