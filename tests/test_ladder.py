"""The ladder's matchmaking (referee/run/ladder.py): deterministic, fair within its bounds,
new bots placed at once, removed bots never seated, and each epoch a function of the
epochs before it only (a resumed partial epoch gets the same remaining tables)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from referee.run.ladder import LadderRules, Summary, choose_epoch, new_entries, seat_spread

pytestmark = pytest.mark.parallel

RULES = LadderRules(players=4, epoch_tables=16)


def names(n: int, prefix: str = "bot") -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(n)]


def play(tables: Any, lineup: list[str], rng: np.random.Generator) -> Any:
    """Ranks from strength (the lineup's number in the name) plus noise."""
    strength = np.array([int(name[3:5]) / 10 for name in lineup])
    perf = strength[tables] + rng.normal(size=tables.shape)
    return 1 + np.argsort(np.argsort(-perf, axis=1), axis=1)


def season(lineups: list[list[str]], seed: int = 5, rules: LadderRules = RULES) -> tuple[Summary, list[Any]]:
    """Epoch e plays with ``lineups[e]``; results count ``lag`` epochs late, as a runner does.
    Returns the summary and the journal lines (``epoch`` added) of every match."""
    summary = Summary(rules.players)
    rng = np.random.default_rng(0)
    pending: list[tuple[int, list[str], Any, Any]] = []
    lines: list[dict[str, Any]] = []
    for epoch, lineup in enumerate(lineups):
        while pending and pending[0][0] < epoch - rules.lag:
            _, lu, t, r = pending.pop(0)
            summary.record(lu, t, r)
        tables = choose_epoch(rules, seed, lineup, summary, epoch)
        summary.assign(lineup, tables)
        ranks = play(tables, lineup, rng)
        pending.append((epoch, lineup, tables, ranks))
        for row, rk in zip(tables.tolist(), ranks.tolist()):
            lines.append({"epoch": epoch, "bots": [lineup[b] for b in row], "ranks": rk})
    return summary, lines


def test_same_inputs_same_tables_and_another_seed_others() -> None:
    lineup = names(30)
    summary, _ = season([lineup] * 6)
    a = choose_epoch(RULES, 5, lineup, summary, 6)
    assert np.array_equal(a, choose_epoch(RULES, 5, lineup, summary, 6))
    assert not np.array_equal(a, choose_epoch(RULES, 6, lineup, summary, 6))
    again, _ = season([lineup] * 6)
    assert np.array_equal(a, choose_epoch(RULES, 5, lineup, again, 6))


def test_every_table_has_distinct_bots_and_the_right_size() -> None:
    for n in (4, 5, 9, 30):
        lineup = names(n)
        _, lines = season([lineup] * 5)
        assert len(lines) == 5 * RULES.epoch_tables
        assert all(len(d["bots"]) == 4 and len(set(d["bots"])) == 4 for d in lines)


def test_match_counts_and_seats_stay_within_the_bounds() -> None:
    lineup = names(40)
    summary = Summary(4)
    rng = np.random.default_rng(1)
    pending: list[Any] = []
    for epoch in range(120):
        if pending:
            summary.record(lineup, *pending.pop(0))
        tables = choose_epoch(RULES, 9, lineup, summary, epoch)
        summary.assign(lineup, tables)
        pending.append((tables, play(tables, lineup, rng)))
        a = summary.view(lineup)["assigned"]
        mean = a.mean()
        assert (a >= RULES.floor * mean - 1).all(), (epoch, a.min(), mean)
        assert (a <= RULES.cap * mean + 1).all(), (epoch, a.max(), mean)
        assert seat_spread(summary, lineup).max() <= 2
    a = summary.view(lineup)["assigned"]
    assert a[-10:].mean() > a[:10].mean()  # the strongest (the top of the table) play more


def test_a_new_bot_is_placed_at_once_until_it_is_as_certain_as_the_field() -> None:
    field = names(30)
    grown = field + ["bot30-late"]
    summary, lines = season([field] * 20 + [grown] * 40)
    first = [d for d in lines if d["epoch"] == 20]
    assert sum("bot30-late" in d["bots"] for d in first) >= RULES.epoch_tables // 2
    a = summary.view(grown)["assigned"]
    assert a[-1] >= np.median(a[:-1]) - RULES.epoch_tables
    assert not new_entries(summary, grown)[-1]


def test_removed_bots_are_never_seated_and_their_results_stay() -> None:
    field = names(20)
    smaller = field[3:]
    summary, lines = season([field] * 5 + [smaller] * 10)
    later = [d for d in lines if d["epoch"] >= 5]
    assert not any(set(d["bots"]) & set(field[:3]) for d in later)
    assert summary.played[summary.pos["bot00"]] > 0


def test_versions_are_separate_entries() -> None:
    field = names(12)
    versioned = field[:-1] + ["bot11@2"]
    summary, lines = season([field] * 5 + [versioned] * 5)
    assert summary.view(["bot11"])["assigned"][0] > 0 and summary.view(["bot11@2"])["assigned"][0] > 0
    assert not any("bot11" in d["bots"] for d in lines if d["epoch"] >= 5)


def test_an_epoch_depends_only_on_the_epochs_before_it() -> None:
    lineup = names(25)
    _, lines = season([lineup] * 12)
    k = 11
    original = [d["bots"] for d in lines if d["epoch"] == k]
    # a resume after 5 tables of epoch k: rebuilt from the journal lines alone
    rebuilt = Summary(4)
    rebuilt.assign_lines(d for d in lines if d["epoch"] < k)
    rebuilt.record_lines(d for d in lines if d["epoch"] < k - RULES.lag)
    tables = choose_epoch(RULES, 5, lineup, rebuilt, k)
    assert [[lineup[b] for b in row] for row in tables.tolist()][5:] == original[5:]
