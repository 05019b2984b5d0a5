"""Balanced random tables (``format = "random"``, schedule version 2): every bot plays the
same number of matches (+-1) and sits in each seat the same number of times (+-1), from
the seed alone, lazily; a journal made with the older tables (version 1) still resumes
with them. Real ``referee run`` (the CLI, in this process) against one real bot process
(``tests/bots/steady.py``) answering at many URLs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli import main
from referee.cli import play as cli_play
from referee.config.model import TournamentConfig
from referee.run.seeds import resolve_schedule_version
from referee.schedule.tables import BalancedTables, RandomTables
from tests.support.cli import run_here
from tests.support.steady import Steady

pytestmark = pytest.mark.parallel


def counts(tables: list[tuple[int, ...]], n: int, k: int) -> tuple[list[int], list[list[int]]]:
    """Matches per bot, and seats per bot and seat position."""
    matches, seats = [0] * n, [[0] * k for _ in range(n)]
    for t in tables:
        assert len(set(t)) == k, t
        for s, b in enumerate(t):
            matches[b] += 1
            seats[b][s] += 1
    return matches, seats


def assert_balanced(matches: list[int], seats: list[list[int]]) -> None:
    assert max(matches) - min(matches) <= 1, matches
    for row in seats:
        assert max(row) - min(row) <= 1, row  # each bot: every seat within one
    for col in zip(*seats):
        assert max(col) - min(col) <= 1, col  # each seat: every bot within one


def test_every_size_is_balanced_in_matches_and_seats() -> None:
    for n in range(1, 26):
        for k in range(1, min(n, 6) + 1):
            for m in sorted({1, 2, k, n - 1, n, n + 1, 2 * n + 3, 3 * n - 1, 97}):
                if m < 1:
                    continue
                fmt = BalancedTables(n, k, m, False, 7, False)
                assert_balanced(*counts([fmt.table(t) for t in range(m)], n, k))


def test_tables_are_random_access_seeded_and_mixed() -> None:
    fmt = BalancedTables(200, 4, 2000, False, 3, False)
    forward = [fmt.table(t) for t in range(2000)]
    assert [fmt.table(t) for t in (1999, 5, 1200, 0)] == [forward[t] for t in (1999, 5, 1200, 0)]
    assert forward != [BalancedTables(200, 4, 2000, False, 4, False).table(t) for t in range(2000)]
    matches, _ = counts(forward, 200, 4)
    assert set(matches) == {40}  # the field: 2,000 matches among 200 bots gave 26 to 61 before
    # opponents vary: a bot meets many distinct others, not one fixed group per round
    met = {b for t in forward if 0 in t for b in t if b != 0}
    assert len(met) > 60


def journal(out: Path) -> list[dict[str, object]]:
    """The journal's lines in fixture order, without their timings."""
    lines = [json.loads(x) for x in (out / "matches.jsonl").read_text().splitlines()]
    for d in lines:
        d.pop("duration_s")
    return sorted(lines, key=lambda d: int(d["index"]))


def write(tmp: Path, name: str, url: str, n: int, matches: int, players: int = 4) -> Path:
    lines = [
        "[tournament]",
        f'name = "{name}"',
        'game = "nimmt_plus"',
        "seed = 9",
        f"players = {players}",
        'format = "random"',
        f"matches = {matches}",
        "concurrency = 8",
        "[limits]",
        "deadline_ms = 30000",
    ]
    for i in range(n):
        lines += ["[[bot]]", f'name = "b{i:02d}"', f'url = "{url}b{i:02d}"']
    path = tmp / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("n", "matches", "players"), [(5, 7, 4), (7, 10, 3)])
def test_a_real_run_balances_matches_and_seats(
    tmp_path: Path, steady_bot: Steady, n: int, matches: int, players: int
) -> None:
    cfg = write(tmp_path, "bal", steady_bot.url, n, matches, players)
    run_here(cfg, tmp_path / "out")
    names = [f"b{i:02d}" for i in range(n)]
    lines = journal(tmp_path / "out")
    assert len(lines) == matches
    tables = [tuple(names.index(str(b)) for b in d["bots"]) for d in lines]  # type: ignore[attr-defined]
    assert_balanced(*counts(tables, n, players))
    settings = json.loads((tmp_path / "out" / "tournament.json").read_text())["settings"]
    assert settings["schedule_version"] == 2


def test_a_journal_of_the_older_tables_resumes_with_them(
    tmp_path: Path, steady_bot: Steady, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write(tmp_path, "old", steady_bot.url, 6, 8)

    def older(config: TournamentConfig, resume: bool) -> TournamentConfig:
        return replace(config, schedule_version=1)  # what a referee before balanced tables dealt

    with monkeypatch.context() as m:
        m.setattr(cli_play, "resolve_schedule_version", older)
        run_here(cfg, tmp_path / "whole")
        run_here(cfg, tmp_path / "cut")
    whole = journal(tmp_path / "whole")
    old = RandomTables(6, 4, 8, False, 9, False)
    names = [f"b{i:02d}" for i in range(6)]
    assert [d["bots"] for d in whole] == [[names[b] for b in old.table(t)] for t in range(8)]
    assert "schedule_version" not in json.loads((tmp_path / "whole" / "tournament.json").read_text())["settings"]

    lines = (tmp_path / "cut" / "matches.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "cut" / "matches.jsonl").write_text("".join(lines[:3]))  # a run stopped early
    run_here(cfg, tmp_path / "cut", "--resume")  # this referee: the tables the journal was made with
    assert journal(tmp_path / "cut") == whole
    for name in ("standings.json", "README.md"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    new = BalancedTables(6, 4, 8, False, 9, False)  # what a fresh run deals
    assert [new.table(t) for t in range(8)] != [old.table(t) for t in range(8)]


def test_a_newer_schedule_version_is_refused_with_a_reason(tmp_path: Path, steady_bot: Steady) -> None:
    cfg = write(tmp_path, "newer", steady_bot.url, 5, 2)
    out = tmp_path / "out"
    run_here(cfg, out)
    doc = json.loads((out / "tournament.json").read_text())
    doc["settings"]["schedule_version"] = 99
    (out / "tournament.json").write_text(json.dumps(doc))
    done = CliRunner().invoke(main.main, ["run", str(cfg), "--output", str(out), "-q", "--resume"])
    assert done.exit_code == 1
    assert "newer referee" in done.output and "tables version 99" in done.output
    with pytest.raises(Exception, match="newer referee"):
        resolve_schedule_version(replace(_load(cfg), output=out), True)


def _load(path: Path) -> TournamentConfig:
    from referee.config.parse import load_config

    return load_config(path)
