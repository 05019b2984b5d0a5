"""Journal columns: the batch path (common lines converted a batch at a time) gives the same
arrays as the line-by-line path, for lines with and without faults, restarts, forfeits,
disqualifications, deals, response times, repeated indices and tables of several widths."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from referee.errors import JournalError
from referee.record import FAULT_KINDS
from referee.stats import columns
from referee.stats.columns import Columns, build_columns

pytestmark = pytest.mark.parallel

NAMES = ["a", "b", "c", "d", "e"]


def lines(seed: int, n: int, width: int | None, rare: float) -> list[dict[str, Any]]:
    """Journal-like lines; ``rare``: the share of lines with faults, forfeits, restarts ..."""
    rng = random.Random(seed)
    out = []
    for j in range(n):
        k = width or rng.choice([2, 3, 4])
        bots = rng.sample(NAMES, k) if rng.random() < 0.9 else [rng.choice(NAMES)] * k
        d: dict[str, Any] = {
            "id": f"m{j}",
            "index": rng.randrange(n + 3) if rng.random() < 0.2 else j,
            "bots": bots,
            "scores": [rng.choice([rng.randrange(-5, 50), rng.random() * 10]) for _ in bots],
            "ranks": [rng.randrange(1, k + 1) for _ in bots],
            "decisions": [rng.randrange(0, 50) for _ in bots],
            "stats": [{"x": rng.random(), **({"won": rng.choice([0, 1])} if rng.random() < 0.5 else {})} for _ in bots],
            "lower_is_better": rng.random() < 0.5,
            "forfeited": [],
            "faults": [],
            "duration_s": rng.random(),
        }
        if rng.random() < 0.3:
            d["deal"] = rng.randrange(20)
        if rng.random() < rare:
            phases = [{}, {"phase": "act"}, {"phase": "start"}, {"phase": "end"}]
            d["faults"] = [
                {"seat": rng.randrange(k), "kind": rng.choice(FAULT_KINDS), **rng.choice(phases)}
                for _ in range(rng.randrange(1, 6))
            ]
        if rng.random() < rare:
            d["forfeited"] = [rng.randrange(k)]
        if rng.random() < rare / 2:
            d["disqualified"] = [rng.randrange(k)]
        if rng.random() < rare:
            d["restarts"] = [rng.randrange(3) for _ in range(k)]
        if rng.random() < rare / 2:
            d["latency_ms"] = [[rng.random() * 100 for _ in range(3)] for _ in bots]
        out.append(d)
    return out


def same(a: Columns, b: Columns) -> None:
    for key, value in vars(a).items():
        other = getattr(b, key)
        if isinstance(value, np.ndarray):
            assert value.dtype == other.dtype and value.shape == other.shape, key
            assert np.array_equal(value, other, equal_nan=value.dtype.kind == "f"), key
        elif isinstance(value, float):
            assert value == other or (math.isnan(value) and math.isnan(other)), key
        else:
            assert value == other, key


@pytest.mark.parametrize("seed", range(12))
def test_batch_path_equals_line_by_line_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 7, 3000, 5000])
    data = lines(seed, n, rng.choice([None, 4]), rng.choice([0.0, 0.001, 0.2]))
    fast = build_columns(data, NAMES, ["x"])
    monkeypatch.setattr(columns, "_take_batch", lambda *a: None)
    slow = build_columns(data, NAMES, ["x"])
    same(fast, slow)
    assert fast.matches == len({d["index"] for d in data})


def test_a_bad_line_in_a_batch_is_named_by_the_line_by_line_checks() -> None:
    data = lines(1, 3000, 4, 0.0)
    data[2500]["ranks"][1] = 9
    with pytest.raises(JournalError, match=r"match 'm2500' \(line 2501\): ranks must be integers"):
        build_columns(data, NAMES, ["x"])
    data = lines(1, 3000, 4, 0.0)
    data[10]["bots"][0] = "zed"
    with pytest.raises(JournalError, match=r"match 'm10' \(line 11\): bot 'zed' is not in tournament.json"):
        build_columns(data, NAMES, ["x"])
