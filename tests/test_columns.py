"""Journal columns: every column holds what the kept lines say (read plainly, line by line),
whatever the batching, for lines with and without faults, restarts, forfeits,
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
from referee.store.journal import validate_line

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


def kept(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines the columns keep, in index order: the last line of each index."""
    last = {d["index"]: d for d in data}
    return [last[i] for i in sorted(last)]


def check_against_lines(cols: Columns, data: list[dict[str, Any]]) -> None:
    """Every per-seat column equals what the kept lines say, read plainly one by one."""
    rows = kept(data)
    assert cols.matches == len(rows) and list(cols.index) == [d["index"] for d in rows]
    for r, d in enumerate(rows):
        k = len(d["bots"])
        assert list(cols.bot[r, :k]) == [NAMES.index(b) for b in d["bots"]] and (cols.bot[r, k:] == -1).all()
        assert list(cols.score[r, :k]) == [float(x) for x in d["scores"]]
        assert list(cols.rank[r, :k]) == d["ranks"] and list(cols.decisions[r, :k]) == d["decisions"]
        assert list(cols.forfeited[r, :k]) == [s in d["forfeited"] for s in range(k)]
        assert list(cols.disqualified[r, :k]) == [s in d.get("disqualified", ()) for s in range(k)]
        assert list(cols.restarts[r, :k]) == (d.get("restarts") or [0] * k)
        assert list(cols.won[r, :k]) == [1.0 if st.get("won") == 1 else 0.0 for st in d["stats"]]
        assert list(cols.stats[r, :k, 0]) == [st["x"] for st in d["stats"]]
        for s in range(k):
            act = [f["kind"] for f in d["faults"] if f["seat"] == s and f.get("phase", "act") == "act"]
            assert list(cols.faults[r, s]) == [act.count(kind) for kind in FAULT_KINDS]
            notice = [f for f in d["faults"] if f["seat"] == s and f.get("phase", "act") != "act"]
            assert cols.notice[r, s] == len(notice)
    # as ever: the last line of each index that has a disqualification names it
    assert cols.ids == dict(sorted({d["index"]: d["id"] for d in data if d.get("disqualified")}.items()))
    first = min(d["index"] for d in data)
    assert cols.lower == next(d["lower_is_better"] for d in data if d["index"] == first)


@pytest.mark.parametrize("seed", range(12))
def test_columns_hold_what_the_lines_say_in_any_batching(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    n = rng.choice([1, 7, 3000, 5000])
    data = lines(seed, n, rng.choice([None, 4]), rng.choice([0.0, 0.001, 0.2]))
    whole = build_columns(data, NAMES, ["x"])
    check_against_lines(whole, data)
    monkeypatch.setattr(columns, "_BATCH", rng.choice([1, 3, 1000]))
    same(whole, build_columns(data, NAMES, ["x"]))
    assert whole.matches == len({d["index"] for d in data})


def test_a_bad_line_is_refused_by_the_reader_and_a_stranger_by_the_columns() -> None:
    data = lines(1, 3000, 4, 0.0)
    data[2500]["ranks"][1] = 9  # the journal's reader refuses it: it never reaches the columns
    line = {**data[2500], "seed": 1, "details": {}, "deal_hash": ""}
    with pytest.raises(
        JournalError, match=r"matches.jsonl: line 2501: field ranks\[1\]: must be an integer from 1 to 4"
    ):
        validate_line(line, "matches.jsonl: line 2501")
    data = lines(1, 3000, 4, 0.0)
    data[10]["bots"][0] = "zed"
    with pytest.raises(JournalError, match=r"match 'm10' \(line 11\): bot 'zed' is not in tournament.json"):
        build_columns(data, NAMES, ["x"])
    data = lines(1, 3000, 4, 0.0)
    del data[2100]["scores"]  # not a journal line at all: still named, never a traceback
    with pytest.raises(JournalError, match=r"match 'm2100' \(line 2101\): missing field 'scores'"):
        build_columns(data, NAMES, ["x"])
