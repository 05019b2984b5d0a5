"""The replay viewer's match list is chosen in one streamed pass holding a bounded number of
journal lines, and chooses what sorting every line would."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from referee.report.viewer import FAULTED, RECENT, Watch, select

pytestmark = pytest.mark.parallel


def reference(records: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The plain definition: sort every line by index, keep the last RECENT and FAULTED faulted."""
    ordered = sorted(records, key=lambda r: r["index"])
    keep = {r["index"]: r for r in ordered[-RECENT:]}
    faulted = [r for r in ordered if r.get("faults")]
    keep.update({r["index"]: r for r in faulted[-FAULTED:]})
    return [keep[i] for i in sorted(keep)]


def test_select_equals_the_sorted_definition_in_any_line_order_with_repeated_indices() -> None:
    rng = random.Random(7)
    for n in (0, 3, RECENT, RECENT + FAULTED + 50, 2000):
        for spread in (n, 2 * n + 1, max(1, n // 3)):  # repeated indices: the last line of one wins
            lines = [
                {"index": rng.randrange(spread + 1), "faults": [{"seat": 0}] if rng.random() < 0.3 else [], "n": j}
                for j in range(n)
            ]
            assert [r["n"] for r in select(iter(lines))] == [r["n"] for r in reference(lines)]


def test_select_holds_a_bounded_number_of_lines_from_a_stream() -> None:
    alive = 0
    peak = 0

    class Line(dict[str, Any]):
        def __init__(self, **kw: Any) -> None:
            nonlocal alive, peak
            super().__init__(**kw)
            alive += 1
            peak = max(peak, alive)

        def __del__(self) -> None:
            nonlocal alive
            alive -= 1

    def stream() -> Iterator[Line]:
        for i in range(20_000):
            yield Line(index=i, faults=[{"seat": 1}] if i % 7 == 0 else [])

    chosen = select(stream())
    expected = set(range(20_000 - RECENT, 20_000)) | set(list(range(0, 20_000, 7))[-FAULTED:])
    assert [r["index"] for r in chosen] == sorted(expected)
    assert peak <= RECENT + FAULTED + 2


def test_a_watch_passes_every_line_on_and_chooses_what_select_chooses() -> None:
    rng = random.Random(3)
    lines = [{"index": rng.randrange(900), "faults": [{"seat": 0}] if rng.random() < 0.4 else []} for _ in range(800)]
    watch = Watch()
    assert list(watch(iter(lines))) == lines
    assert watch.count == 800 and watch.chosen() == select(lines) == reference(lines)
