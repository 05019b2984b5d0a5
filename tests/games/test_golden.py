"""Golden playthroughs (DESIGN.md style 9, third level): today's rules replay every
stored file decision by decision; a rule change fails here with a readable diff.
Regenerate with ``python -m tests.games.golden --update`` (see tests/games/golden)."""

from __future__ import annotations

import json
import random

import pytest

from referee.games import GAMES
from tests.games import golden

pytestmark = pytest.mark.parallel


@pytest.mark.parametrize("case", golden.CASES, ids=lambda c: f"{c.game}.{c.variant}")
def test_golden_playthrough_still_holds(case: golden.Case) -> None:
    problem = golden.first_difference(case)
    assert problem is None, problem


def test_every_game_and_variant_has_golden_files() -> None:
    games = {c.game for c in golden.CASES}
    assert games == set(GAMES)
    nimmt = {c.options.get("variant") for c in golden.CASES if c.game == "nimmt_plus"}
    assert nimmt == set(GAMES["nimmt_plus"].info.options[0].choices or ())
    for case in golden.CASES:
        lines = case.path.read_text(encoding="utf-8").splitlines()
        headers = [json.loads(line) for line in lines if line.startswith('{"game"')]
        assert [h["seed"] for h in headers] == list(golden.SEEDS)
    total = sum(c.path.stat().st_size for c in golden.CASES)
    assert total < 600_000, f"golden files take {total} bytes: keep the repository small"


def test_delta_round_trips() -> None:
    rng = random.Random(7)
    before: dict = {}
    for _ in range(300):
        after = {
            "a": [rng.randrange(3) for _ in range(rng.randrange(4))],
            "b": rng.randrange(2),
            **({"c": [{"x": rng.randrange(2)}] * 3} if rng.random() < 0.7 else {}),
        }
        assert golden.undelta(before, golden.delta(before, after)) == after
        before = after
    old = [[1], [2], [1, 2], [3]]
    for new in ([[1], [1, 2]], [[2], [3]], [[4]], old):
        assert golden.unlegal(old, golden.legal_delta(old, new)) == new


def test_a_rule_change_is_caught_with_a_readable_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 6 nimmt! whose rows take the 5th card instead of the 6th: the replay names the
    file, line, decision and seat, and shows the changed rows."""
    from referee.games.nimmt_plus import rules as nimmt_plus

    monkeypatch.setattr(nimmt_plus, "ROW_LIMIT", 4)
    case = next(c for c in golden.CASES if c.variant == "plus")
    problem = golden.first_difference(case)
    assert problem is not None
    assert problem.startswith("nimmt_plus.plus.jsonl line ") and "seat" in problem
    assert "differs" in problem and "--- golden" in problem and "+++ now" in problem
