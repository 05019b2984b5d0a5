"""The JSON Schemas of the wire protocol: every message the referee sends in a playout of
every game, variant and seat count validates against them (closed: a field a view gains
without its schema fails here; checked by jsonschema-rs, and on a sample by the referee's
own validator), the docs copy equals the shipped one, the replies of the
sample bots validate, and ``referee schema`` prints them."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from referee.bots.client import protocol
from referee.bots.client import schema as wire
from referee.cli.main import main
from referee.games import GAMES
from referee.games.base import Game, OptionError
from sample_bots import dieci as dieci_bot
from sample_bots import drahtseilakt as drahtseilakt_bot
from sample_bots import nimmt as nimmt_bot
from sample_bots import the_game as the_game_bot
from tests.support import schemas as fast
from tests.support.games import cases

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_STRATEGIES = {
    "nimmt_plus": nimmt_bot.STRATEGIES,
    "drahtseilakt": drahtseilakt_bot.STRATEGIES,
    "dieci": dieci_bot.STRATEGIES,
    "the_game": the_game_bot.STRATEGIES,
}


def _sent(body: bytes) -> Any:
    return json.loads(body)


def _check(message: Any, game: str, sample: bool = True) -> None:
    """``message`` validates against the closed schemas, by jsonschema-rs; and by the
    referee's own validator too when ``sample`` (it takes ~3 ms a message)."""
    broken = fast.message_errors(message, game)
    if sample:
        broken += wire.message_errors(message, game, strict=True)
    assert not broken, f"{message.get('type')} message breaks {wire.game_schema_name(game)}: {broken[:5]}"


@pytest.mark.parametrize(("game", "seats", "options"), cases())
def test_every_message_of_a_playout_validates(game: Game, seats: int, options: dict[str, Any]) -> None:
    gid = game.info.id
    names = [f"bot{i}" for i in range(seats)]
    ctx = protocol.MatchContext("schema-test", "m000001", gid, options, names)
    _check(_sent(protocol.hello("schema-test", gid, options, "bot0")), gid)
    for s in range(seats):
        _check(_sent(protocol.start(ctx, s)), gid)
    rng = random.Random(5)
    state = game.setup(seats, 5, options)
    asked = [0] * seats
    acts = 0
    while not game.is_over(state):
        for s in game.to_act(state):
            legal = game.legal(state, s)
            bank = 500 if acts % 2 else None  # both shapes of act: with and without a time bank
            message = protocol.act(ctx, s, asked[s], 1000, game.view(state, s), legal, time_bank_ms=bank)
            _check(_sent(message), gid, sample=acts % 50 < 2)  # both shapes, every 50 acts
            asked[s] += 1
            acts += 1
            state = game.apply(state, s, legal[rng.randrange(len(legal))])
    assert acts > 0
    result = game.result(state)
    published = {
        "scores": result.scores,
        "ranks": result.ranks,
        "lower_is_better": result.lower_is_better,
        "forfeited": [],
        "details": result.details,
    }
    for s in range(seats):
        _check(_sent(protocol.end(ctx, s, published, game.view(state, s))), gid)


def test_every_game_has_a_schema_and_every_schema_is_valid() -> None:
    names = wire.schema_names()
    assert names == ["protocol.json", *(f"games/{g}.json" for g in sorted(GAMES))]
    for name in names:
        doc = wire.load(name)
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == wire.DIALECT
        assert doc["$id"] == wire.BASE + name


def test_docs_copy_equals_the_shipped_schemas() -> None:
    """docs/schema/ holds referee/schemas/ and each game folder's schema.json as games/<id>.json."""
    shipped = ROOT / "referee" / "schemas"
    docs = ROOT / "docs" / "schema"
    expected = {str(p.relative_to(shipped)): p.read_bytes() for p in shipped.rglob("*") if p.is_file()}
    expected.update({f"games/{g}.json": (ROOT / "referee" / "games" / g / "schema.json").read_bytes() for g in GAMES})
    on_disk = sorted(str(p.relative_to(docs)) for p in docs.rglob("*") if p.is_file())
    assert on_disk == sorted(expected), "docs/schema/ differs from the shipped schemas: run make schemas"
    for name in on_disk:
        assert (docs / name).read_bytes() == expected[name], f"docs/schema/{name} is stale: make schemas"
        if name.endswith(".json"):
            assert (docs / name).read_text(encoding="utf-8") == wire.schema_text(name), name


def test_a_field_the_schema_does_not_list_fails_the_strict_check_only() -> None:
    game = GAMES["nimmt_plus"]
    options = game.check_options(4, {})
    state = game.setup(4, 1, options)
    ctx = protocol.MatchContext("t", "m1", "nimmt_plus", options, ["a", "b", "c", "d"])
    message = _sent(protocol.act(ctx, 0, 0, 1000, game.view(state, 0), game.legal(state, 0)))
    assert not wire.message_errors(message, "nimmt_plus", strict=True)
    message["state"]["new_field"] = 1
    assert wire.message_errors(message, "nimmt_plus", strict=True) == [
        "/state: Additional properties are not allowed ('new_field' was unexpected)"
    ]
    assert not wire.message_errors(message, "nimmt_plus"), "the published schemas stay open to additive fields"
    # the fast validator of the playout test sees the same (its words are its own)
    assert [e.split(":")[0] for e in fast.message_errors(message, "nimmt_plus")] == ["/state"]
    assert not fast.message_errors(message, "nimmt_plus", strict=False)
    del message["state"]["hand"]
    message["legal"].append([200])
    broken = wire.message_errors(message, "nimmt_plus")
    assert any(line.startswith("/legal/") and "200" in line for line in broken)
    assert "/state: 'hand' is a required property" in broken


@pytest.mark.parametrize(
    ("reply", "ok"),
    [
        ({"action": {"card": 5, "pile": 0}}, True),
        ({"action": "end", "claims": [0, 3], "log": "keeping pile 3 for the 90s"}, True),
        ({"action": "end", "claims": None}, True),
        ({"action": "end", "log": 5}, False),
        ({"action": "end", "claims": [4]}, False),
        ({"action": "end", "claims": [1, 1]}, False),
        ({"action": {"card": 1, "pile": 0}}, False),
        ({"claims": []}, False),
    ],
)
def test_the_act_reply_schema(reply: dict[str, Any], ok: bool) -> None:
    assert (not wire.reply_errors(reply, "the_game")) is ok


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_replies_of_the_sample_bots_validate(gid: str) -> None:
    """Every strategy of the sample bot answers a sample of real decisions (every 5th of
    a playout at the most seats) with a reply that validates and is legal."""
    game = GAMES[gid]
    seats = game.info.max_seats if gid != "dieci" else 6
    options = game.check_options(seats, {})
    ctx = protocol.MatchContext("t", "m000007", gid, options, [f"b{i}" for i in range(seats)])
    rng = random.Random(3)
    state = game.setup(seats, 3, options)
    asked = [0] * seats
    checked = 0
    while not game.is_over(state):
        for s in game.to_act(state):
            legal = game.legal(state, s)
            if asked[s] % 5 == 0:
                message = _sent(protocol.act(ctx, s, asked[s], 1000, game.view(state, s), legal))
                for name, strategy in SAMPLE_STRATEGIES[gid].items():
                    reply = json.loads(json.dumps(strategy(message)))
                    assert not wire.reply_errors(reply, gid), f"{gid} {name}: {wire.reply_errors(reply, gid)}"
                    assert protocol.find_legal(reply["action"], legal) >= 0
                    checked += 1
            asked[s] += 1
            state = game.apply(state, s, legal[rng.randrange(len(legal))])
    assert checked >= 10


def test_cli_prints_the_schemas() -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["schema"])
    assert out.exit_code == 0
    assert json.loads(out.output)["$id"] == wire.BASE + "protocol.json"
    out = runner.invoke(main, ["schema", "the_game"])
    assert out.exit_code == 0
    doc = json.loads(out.output)
    assert doc["$defs"]["act_reply"]["properties"]["claims"]
    out = runner.invoke(main, ["schema", "chess"])
    assert out.exit_code == 2
    assert "no game 'chess'" in out.output


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_messages_of_real_matches_validate(gid: str) -> None:
    """Every message ``play_match`` sends (with a time bank, forfeits on) in one match per
    option combination of each game, received by real local bot servers (the production
    transport) that answer the first legal action but fault now and then (so
    ``forfeited`` is filled)."""
    import asyncio

    import httpx

    from referee.bots.client import wire
    from referee.bots.client.wire import Endpoint
    from referee.config.model import Limits
    from referee.match.play import play_match
    from tests.support.games import option_grid
    from tests.support.localbots import serve

    game = GAMES[gid]
    seats = max(game.info.min_seats, min(game.info.max_seats, 4))
    received: list[Any] = []

    async def route(message: dict[str, Any]) -> httpx.Response:
        received.append(message)
        if message["type"] != "act":
            return httpx.Response(200, json={})
        if message["seat"] == 1 and message["decision"] == 0:
            return httpx.Response(500)
        return httpx.Response(200, json={"action": message["legal"][0], "log": "first legal"})

    limits = Limits(deadline_ms=5000, time_bank_ms=1000, on_fault="forfeit")

    async def one(options: dict[str, Any], index: int) -> None:
        names = [f"b{i}" for i in range(seats)]
        async with serve(dict.fromkeys(names, route)) as urls, wire.new_client(seats + 2) as client:
            eps = [Endpoint.make(n, urls[n], None) for n in names]
            await play_match(
                game,
                options,
                tournament="t",
                match_id=f"m{index:06d}",
                index=index,
                seed=index + 1,
                seats=eps,
                client=client,
                limits=limits,
            )

    played = 0
    for opts in option_grid(game)[:2]:  # the playouts above cover every variant; these, the real sending
        try:
            options = game.check_options(seats, opts)
        except OptionError:
            continue
        asyncio.run(one(options, played))
        played += 1
    assert played > 0
    kinds = {m["type"] for m in received}
    assert kinds == {"start", "act", "end"}
    assert any("time_bank_ms" in m for m in received if m["type"] == "act")
    assert any(m["result"]["forfeited"] == [1] for m in received if m["type"] == "end")
    ends = [m for m in received if m["type"] == "end"]
    # every seat's end message shows its own view of the final position
    assert ends and all(m["state"]["seat"] == m["seat"] if "seat" in m["state"] else m["state"] for m in ends)
    if gid == "nimmt_plus":  # the last hand complete: every turn of it, the hands empty
        assert all(m["state"]["history"] and m["state"]["hand"] == [] for m in ends)
    if gid == "drahtseilakt":  # the last round complete: all 9 tricks
        assert all(len(m["state"]["tricks"]) == 9 for m in ends)
    for i, message in enumerate(received):
        _check(message, gid, sample=message["type"] != "act" or i % 50 == 0)
