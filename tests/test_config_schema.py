"""Each key of the tournament file is declared once (referee/config/model.py, ``setting`` from referee/config/keys.py): the
default the parser applies, the bound or choices it enforces, the message it reports and
docs/config.md all come from that one declaration."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from referee.config import model
from referee.config.docs import keys_markdown
from referee.config.keys import Key
from referee.config.model import Limits
from referee.config.parse import load_config, parse_config
from referee.errors import ConfigError
from referee.schedule.registry import check_format

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
PATH = Path("t.toml")


def base() -> dict[str, Any]:
    """The smallest valid document: everything else left to its default."""
    return {
        "tournament": {"game": "nimmt_plus", "seed": 1},
        "bot": [{"name": "a", "url": "http://127.0.0.1:8001/"}, {"name": "b", "url": "http://127.0.0.1:8002/"}],
    }


def refusal(doc: dict[str, Any]) -> str | None:
    """The parser's (or the format's) message for ``doc``, or None when it is accepted."""
    try:
        check_format(parse_config(doc, PATH, {}))
    except ConfigError as exc:
        return str(exc)
    return None


def with_value(section: str, key: str, value: Any) -> dict[str, Any]:
    doc = base()
    if section == "bot":
        doc["bot"][0][key] = value
    else:
        doc.setdefault(section, {})[key] = value
    return doc


def where(section: str, key: str) -> str:
    return f"bot[0] (a).{key}" if section == "bot" else f"{section}.{key}"


SECTIONS = {"tournament": model.TOURNAMENT_KEYS, "limits": model.LIMIT_KEYS, "bot": model.BOT_KEYS}
BOUNDED = [
    (section, key, spec)
    for section, keys in SECTIONS.items()
    for key, spec in keys.items()
    if spec.bounds and spec.type in (int, float)
]
CHOICES = [(section, key, spec) for section, keys in SECTIONS.items() for key, spec in keys.items() if spec.choices]


def outside(spec: Key) -> list[float]:
    """Values just past each bound of ``spec`` (of its type)."""
    step = 1 if spec.type is int else 0.25
    out: list[float] = []
    if spec.minimum is not None:
        out.append(spec.minimum - step)
    if spec.above is not None:
        out.append(spec.above)
    if spec.maximum is not None:
        out.append(spec.maximum + step)
    if spec.below is not None:
        out.append(spec.below)
    return [spec.type(v) for v in out]


def inside(spec: Key) -> list[float]:
    """The bounds themselves where they are allowed."""
    edges = [spec.minimum, spec.maximum]
    return [spec.type(v) for v in edges if v is not None]


def test_the_parser_applies_every_declared_default() -> None:
    cfg = parse_config(base(), PATH, {})
    for key, spec in model.LIMIT_KEYS.items():
        assert getattr(cfg.limits, key) == spec.default, key
    derived = {"name", "game", "seed", "players", "output"}
    for key, spec in model.TOURNAMENT_KEYS.items():
        if key not in derived:
            assert getattr(cfg, key) == spec.default, key
    bot = cfg.bots[0]
    assert (bot.max_concurrent, bot.command, bot.token, bot.workdir, dict(bot.env)) == (0, None, None, None, {})
    assert cfg.cluster is None and model.CLUSTER_KEYS["address"].default is None


def test_the_dataclass_defaults_are_the_declared_ones() -> None:
    built = Limits()
    for key, spec in model.LIMIT_KEYS.items():
        assert getattr(built, key) == spec.default, key
    fields = {f.name: f for f in dataclasses.fields(model.TournamentConfig)}
    for key, spec in model.TOURNAMENT_KEYS.items():
        f = fields[key]
        if f.default is not dataclasses.MISSING:
            assert f.default == spec.default, key


@pytest.mark.parametrize(("section", "key", "spec"), BOUNDED, ids=[f"{s}.{k}" for s, k, _ in BOUNDED])
def test_each_declared_bound_is_what_the_parser_refuses_and_reports(section: str, key: str, spec: Key) -> None:
    assert outside(spec), "a bounded key has a value out of bounds"
    for value in outside(spec):
        message = refusal(with_value(section, key, value))
        expected = f"{PATH}: {where(section, key)}: must be {spec.bounds}"
        assert message is not None and message.startswith(expected), (value, message)
        assert message.endswith(f", got {value}"), message
    for value in inside(spec):
        message = refusal(with_value(section, key, value))
        assert message is None or f"{where(section, key)}: must be" not in message, (value, message)


@pytest.mark.parametrize(("section", "key", "spec"), CHOICES, ids=[f"{s}.{k}" for s, k, _ in CHOICES])
def test_each_declared_choice_list_is_what_the_parser_accepts(section: str, key: str, spec: Key) -> None:
    wrong = spec.choices[0] + "x"
    message = refusal(with_value(section, key, wrong))
    assert message is not None
    assert message.startswith(f"{PATH}: {where(section, key)}: unknown {spec.what} {wrong!r}"), message
    assert f"(did you mean {spec.choices[0]!r}?)" in message
    for good in spec.choices:  # refused for another reason perhaps (team: cooperative games), never as unknown
        message = refusal(with_value(section, key, good))
        assert message is None or "unknown" not in message, (good, message)


def test_a_bound_or_default_changed_in_its_declaration_changes_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = with_value("limits", "memory_mb", 20)
    assert refusal(doc) is None
    spec = model.LIMIT_KEYS["memory_mb"]
    monkeypatch.setitem(model.LIMIT_KEYS, "memory_mb", dataclasses.replace(spec, minimum=32))
    assert refusal(doc) == f"{PATH}: limits.memory_mb: must be at least 32, got 20"

    monkeypatch.setitem(
        model.LIMIT_KEYS, "deadline_ms", dataclasses.replace(model.LIMIT_KEYS["deadline_ms"], default=777)
    )
    assert parse_config(base(), PATH, {}).limits.deadline_ms == 777
    monkeypatch.setitem(model.TOURNAMENT_KEYS, "batch", dataclasses.replace(model.TOURNAMENT_KEYS["batch"], minimum=5))
    doc = with_value("tournament", "batch", 4)
    assert refusal(doc) == f"{PATH}: tournament.batch: must be at least 5 deal, got 4"


def test_the_command_line_overrides_are_checked_against_the_same_declarations(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(
        '[tournament]\ngame = "nimmt_plus"\n[[bot]]\nname = "a"\nurl = "http://127.0.0.1:1/"\n'
        '[[bot]]\nname = "b"\nurl = "http://127.0.0.1:2/"\n'
    )
    cfg = load_config(toml, env={})
    for flag in ("workers", "seed", "concurrency"):
        low = int(model.TOURNAMENT_KEYS[flag].minimum or 0)
        with pytest.raises(ConfigError) as info:
            cfg.with_overrides(**{flag: low - 1})
        assert str(info.value) == f"--{flag}: must be at least {low}, got {low - 1}"
        assert getattr(cfg.with_overrides(**{flag: low}), flag) == low


def test_a_wrong_type_names_file_and_key() -> None:
    for section, keys in SECTIONS.items():
        for key, spec in keys.items():
            wrong: Any = "x" if spec.type is not str else 3
            message = refusal(with_value(section, key, wrong))
            at = "bot[0].name" if (section, key) == ("bot", "name") else where(section, key)  # no name to show
            assert message is not None and message.startswith(f"{PATH}: {at}: expected "), message


def test_docs_config_md_is_written_from_the_declarations() -> None:
    text = (ROOT / "docs" / "config.md").read_text()
    assert text == keys_markdown(), "docs/config.md is stale: python -m referee.config.docs > docs/config.md"
    for keys in SECTIONS.values():
        for key, spec in keys.items():
            row = next(line for line in text.splitlines() if line.startswith(f"| `{key}` |"))
            assert spec.bounds in row and all(f"`{c}`" in row for c in spec.choices), row
    assert re.search(r"\| `deadline_ms` \| integer \| `1000` \| at least 1 \|", text)


def _whole(spec: Key) -> int | None:
    """An integer the key's bounds allow, or None (confidence lies strictly between 0 and 1)."""
    return next((v for v in range(0, 100_000) if spec.problem(float(v)) is None), None)


NUMBER_KEYS = [
    (section, key, spec, _whole(spec))
    for section, keys in SECTIONS.items()
    for key, spec in keys.items()
    if spec.type is float and _whole(spec) is not None
]


def test_number_keys_are_found() -> None:
    assert {"publish_every_s", "max_fault_rate"} <= {k for _, k, _, _ in NUMBER_KEYS}


@pytest.mark.parametrize(
    ("section", "key", "spec", "whole"), NUMBER_KEYS, ids=[f"{s}.{k}" for s, k, _, _ in NUMBER_KEYS]
)
def test_an_integer_stands_where_a_number_is_expected(section: str, key: str, spec: Key, whole: int) -> None:
    cfg = parse_config(with_value(section, key, whole), PATH, {})
    owner = cfg.bots[0] if section == "bot" else cfg.limits if section == "limits" else cfg
    got = getattr(owner, key)
    assert got == whole and isinstance(got, float), (key, got)
    assert (
        refusal(with_value(section, key, True))
        == f"{PATH}: {where(section, key)}: expected a number, got a boolean True"
    )


def test_a_number_is_still_refused_where_an_integer_is_expected() -> None:
    assert refusal(with_value("limits", "deadline_ms", 1000.5)) == (
        f"{PATH}: limits.deadline_ms: expected an integer, got a number 1000.5"
    )
