"""``referee verify`` derives the schedule again (referee/audit/schedule_check.py): once the
seed is public, every journal line must be its fixture's (id, seed, bots; a ladder's tables
chosen again from the journal before them) and every scheduled match be in the journal or
dropped. Real ``referee run`` against one real bot process (``tests/support/steady.py``)
answering at many URLs; the tampered folders are re-rendered by ``referee leaderboard``
(the referee's own publisher), so only the schedule check can catch them. ``leaderboard``
and ``verify`` run in this process (their claim is not the process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from referee.run import ladder
from tests.support.cli import here, run_here
from tests.support.ladder import names, write
from tests.support.steady import Steady
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = pytest.mark.parallel


def round_robin(tmp: Path, url: str, *extra: str) -> Path:
    """5 bots, 3 seats, 2 rounds: 20 matches of 6 nimmt!, seed 11 (``extra``: more [tournament] lines)."""
    rows = [
        "[tournament]",
        'name = "rr"',
        'game = "nimmt_plus"',
        "seed = 11",
        "players = 3",
        'format = "round_robin"',
        "rounds = 2",
        "concurrency = 4",
        *extra,
        "[game]",
        'variant = "simple"',
        "[limits]",
        f"deadline_ms = {UNREACHABLE_DEADLINE_MS}",
    ]
    for n in names(5):
        rows += ["[[bot]]", f'name = "{n}"', f'url = "{url}{n}"']
    cfg = tmp / "rr.toml"
    cfg.write_text("\n".join(rows) + "\n")
    out = tmp / "rr"
    run_here(cfg, out)
    return out


def lines_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "matches.jsonl").read_text().splitlines()]


def write_lines(out: Path, docs: list[dict[str, Any]]) -> None:
    (out / "matches.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))


def swap_bots(out: Path, a: int, b: int) -> tuple[str, str]:
    """Swap the bots (and versions) of journal lines ``a`` and ``b``: the transcripts hold
    no names, so every match still replays as its journal line says; the ids swapped."""
    docs = lines_of(out)
    for key in ("bots", "versions"):
        if key in docs[a]:
            docs[a][key], docs[b][key] = docs[b][key], docs[a][key]
    write_lines(out, docs)
    return docs[a]["id"], docs[b]["id"]


def rerender_and_verify(out: Path) -> Any:
    done = here("leaderboard", str(out), "-q")
    assert done.returncode == 0, done.stderr
    return here("verify", str(out), "-q")


@pytest.fixture(scope="module")
def rr(tmp_path_factory: pytest.TempPathFactory, steady_bot: Steady) -> Path:
    return round_robin(tmp_path_factory.mktemp("rr"), steady_bot.url)


def tampered(rr: Path, tmp: Path) -> Path:
    out = tmp / "copy"
    shutil.copytree(rr, out)
    return out


def test_a_round_robin_verifies_clean(rr: Path) -> None:
    done = here("verify", str(rr), "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all consistent" in done.stdout and "schedule" not in done.stdout


def test_matches_swapped_between_tables_and_re_rendered_fail_naming_both(rr: Path, tmp_path: Path) -> None:
    out = tampered(rr, tmp_path)
    docs = lines_of(out)
    other = next(j for j, d in enumerate(docs) if set(d["bots"]) != set(docs[0]["bots"]))
    a, b = swap_bots(out, 0, other)
    done = rerender_and_verify(out)
    assert done.returncode == 1, done.stdout
    text = done.stdout + done.stderr
    assert f"match {a}: bots: expected" in text and f"match {b}: bots: expected" in text
    assert "all consistent" not in text


def test_a_changed_seed_fails(rr: Path, tmp_path: Path) -> None:
    out = tampered(rr, tmp_path)
    doc = json.loads((out / "tournament.json").read_text())
    doc["settings"]["seed"] = 12
    (out / "tournament.json").write_text(json.dumps(doc, indent=2) + "\n")
    done = rerender_and_verify(out)
    assert done.returncode == 1
    first = lines_of(out)[0]
    assert f"match {first['id']}: seed: expected " in done.stdout and f"found {first['seed']}" in done.stdout


def test_a_deleted_line_is_missing(rr: Path, tmp_path: Path) -> None:
    out = tampered(rr, tmp_path)
    docs = lines_of(out)
    gone = docs.pop(len(docs) // 2)
    write_lines(out, docs)
    done = rerender_and_verify(out)
    assert done.returncode == 1, done.stdout
    assert f"match {gone['id']}: missing: scheduled match {gone['index']} is neither in the journal nor dropped" in (
        done.stdout
    )


def test_a_grown_tournament_names_the_table_a_swapped_line_belongs_to(tmp_path: Path, steady_bot: Steady) -> None:
    out = round_robin(tmp_path, steady_bot.url, "grow = true")
    assert here("verify", str(out), "-q").returncode == 0
    docs = lines_of(out)
    other = next(j for j, d in enumerate(docs) if set(d["bots"]) != set(docs[0]["bots"]))
    a, b = swap_bots(out, 0, other)
    done = rerender_and_verify(out)
    assert done.returncode == 1, done.stdout
    assert f"match {a}: bots: expected another table: {docs[other]['bots']} are the bots of scheduled match {b}" in (
        done.stdout
    )


@pytest.fixture
def small_epochs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ladder, "MIN_EPOCH_TABLES", 8)  # epochs of 8 tables: a short run holds several


def test_a_ladder_resumed_with_a_new_bot_verifies_and_a_swap_fails(
    tmp_path: Path, steady_bot: Steady, small_epochs: None
) -> None:
    cfg = write(tmp_path, steady_bot.url, names(7), 20)
    out = tmp_path / "season"
    run_here(cfg, out)
    write(tmp_path, steady_bot.url, names(8), 40)
    run_here(cfg, out, "--resume")
    plan = json.loads((out / "tournament.json").read_text())["settings"]["ladder"]
    assert len(plan["lineups"]) == 2  # the lineup grew mid-season
    done = here("verify", str(out), "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all consistent" in done.stdout
    cut = tmp_path / "cut"
    shutil.copytree(out, cut)
    docs = lines_of(cut)
    gone = next(d for d in docs if d["index"] == 17)  # epoch 2: epoch 4 is chosen without it
    write_lines(cut, [d for d in docs if d is not gone])
    done = rerender_and_verify(cut)
    assert done.returncode == 1, done.stdout
    assert f"match {gone['id']}: missing: scheduled match 17" in done.stdout + done.stderr
    docs = lines_of(out)
    late = [j for j, d in enumerate(docs) if d["index"] >= 32]  # the last epoch: its own lineup, results before it
    other = next(j for j in late if set(docs[j]["bots"]) != set(docs[late[0]]["bots"]))
    a, b = swap_bots(out, late[0], other)
    done = rerender_and_verify(out)
    assert done.returncode == 1, done.stdout
    assert f"match {a}: bots: expected" in done.stdout + done.stderr
    assert f"match {b}: bots: expected" in done.stdout + done.stderr


def test_an_open_season_with_a_secret_seed_says_the_schedule_cannot_be_checked_yet(
    tmp_path: Path, steady_bot: Steady, small_epochs: None
) -> None:
    cfg = write(tmp_path, steady_bot.url, names(5), 10)
    cfg.write_text(cfg.read_text().replace("seed = 3\n", ""))
    out = tmp_path / "open"
    run_here(cfg, out)
    done = here("verify", str(out), "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not checked: the schedule (the secret seed is not revealed yet" in done.stdout
