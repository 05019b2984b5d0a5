"""Every JSON example in ``docs/`` is valid against the schemas a bot author decodes with.

Each ```` ```json ```` block follows a marker line naming what it shows, checked closed (a
field the schema does not list fails, so a renamed field cannot linger in the docs):

    <!-- json: games/the_game.json#/$defs/state -->
    <!-- json: protocol.json#/$defs/result games/nimmt_plus.json#/$defs/end/properties/result -->
    <!-- json: fragment -->

(several targets: the block is valid against each; ``fragment``: a part cut short, not
checked; an ``act_reply`` is checked open, as the referee reads replies). The "By hand" curl example of ``docs/protocol.md`` is a whole ``act`` message,
checked against its game's schema and sent to the sample bot it names, which answers it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from referee.bots.cage.process import free_port
from referee.bots.client import protocol, schema
from tests.support.checkbot import wait_listening

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```json\n(.*?)^```$", re.M | re.S)
MARKER = re.compile(r"<!-- json: (.+?) -->\n*$")
TARGET = re.compile(r"^(protocol\.json|games/(\w+)\.json)#/\$defs/(\S+)$")
CURL_BODY = re.compile(r"curl .*? -d '(.*?)'$", re.M | re.S)


def blocks() -> list[tuple[str, str, str]]:
    """Every JSON block of docs/: (where, its marker or "", its text)."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            before = MARKER.search(text, 0, m.start())
            marker = before[1] if before is not None and before.end() == m.start() else ""
            where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
            found.append((where, marker, m[1]))
    return found


def schema_file(target: str) -> tuple[str, str]:
    """The schema file and the path under its ``$defs`` a marker's target names."""
    m = TARGET.match(target)
    assert m is not None, f"{target!r}: expected protocol.json#/$defs/NAME or games/GAME.json#/$defs/NAME"
    name = schema.PROTOCOL if m[2] is None else schema.game_schema_name(m[2])
    return name, m[3]


def test_the_docs_have_json_examples_and_each_says_what_it_shows() -> None:
    found = blocks()
    assert len(found) >= 15
    unmarked = [where for where, marker, _ in found if not marker]
    assert not unmarked, f"JSON blocks without a <!-- json: ... --> line just above: {unmarked}"
    fragments = [where for where, marker, _ in found if marker == "fragment"]
    assert len(fragments) <= 2, fragments  # examples are whole values, but for a rare cut


@pytest.mark.parametrize(("where", "marker", "text"), blocks(), ids=[b[0] for b in blocks()])
def test_each_json_example_is_valid_against_the_schema_it_names(where: str, marker: str, text: str) -> None:
    if marker == "fragment":
        return
    value = json.loads(text)
    for target in marker.split():
        name, definition = schema_file(target)
        # a reply may carry fields the schema does not list (a game's own, as The Game's claims)
        errors = schema.errors(value, name, definition, strict=not definition.endswith("act_reply"))
        assert not errors, f"{where}: not a valid {target}: {errors}"


def curl_message() -> dict[str, Any]:
    """The body of the curl example of docs/protocol.md."""
    found = CURL_BODY.search((DOCS / "protocol.md").read_text(encoding="utf-8"))
    assert found is not None, "no curl ... -d '...' example in docs/protocol.md"
    message: dict[str, Any] = json.loads(found[1])
    return message


def test_the_curl_example_is_a_valid_act_message_the_sample_bot_answers() -> None:
    message = curl_message()
    assert message["type"] == "act"
    assert schema.message_errors(message, message["game"], strict=True) == []
    port = free_port()
    bot = subprocess.Popen([sys.executable, "-m", "sample_bots.nimmt", "greedy", "--port", str(port)], cwd=ROOT)
    try:
        wait_listening(port)
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/", json.dumps(message).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 200
            action = json.loads(reply.read())["action"]
    finally:
        bot.terminate()
        bot.wait(10)
    assert protocol.find_legal(action, message["legal"]) >= 0


def test_a_wrong_example_would_be_caught() -> None:
    """The check itself: a stale field name, a float score, a missing field each fail."""
    state = next(json.loads(t) for w, m, t in blocks() if m == "games/the_game.json#/$defs/state")
    name = schema.game_schema_name("the_game")
    assert schema.errors(state, name, "state", strict=True) == []
    assert schema.errors({**state, "turns": 6}, name, "state", strict=True)
    assert schema.errors({**state, "cards_left": 85.5}, name, "state", strict=True)
    assert schema.errors({k: v for k, v in state.items() if k != "turn"}, name, "state", strict=True)
    assert schema.errors([12.5], schema.PROTOCOL, "result/properties/scores", strict=True)
