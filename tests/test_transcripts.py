"""Transcripts, ``referee verify`` and ``referee replay``: real tournaments of every game
with real bot processes verify; one changed action, score, rank or seed is named by
verify; kill -9 + resume leaves no journal line without its transcript; a run without
transcripts verifies what it can; replay shows faults, fallbacks and escaped bot logs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from referee.audit.replay import render_text
from referee.audit.schedule_check import config_of
from referee.audit.verify import verify
from referee.bots.client import wire
from referee.bots.client.wire import Endpoint
from referee.config.model import Limits
from referee.games import get_game
from referee.match.play import play_match
from referee.report.publish import build_leaderboard, write_leaderboard
from referee.schedule.formats import schedule
from referee.store import transcripts
from referee.store.matches import load_match
from referee.store.tournament_file import tournament_document
from tests.support.cli import here, start
from tests.support.localbots import good, illegal, on_act, serve
from tests.support.outputs import (
    SAMPLE_CONFIGS,
    copy,
    journal_lines,
    rewrite_transcripts,
    run_small,
    small_config,
    transcript_lines,
    write_journal,
)
from tests.support.tournament import NIMMT, UNREACHABLE_DEADLINE_MS, kill9_after, write_config

pytestmark = pytest.mark.parallel

GAMES = {"nimmt_plus": "nimmt_plus.toml", "drahtseilakt": "drahtseilakt.toml", "dieci": "dieci.toml"}
GAMES["the_game"] = "the_game.toml"


@pytest.mark.parametrize("game", sorted(SAMPLE_CONFIGS))
def test_verify_passes_on_a_real_tournament(tmp_path: Path, game: str, nimmt_run: Path) -> None:
    out = nimmt_run if game == "nimmt_plus" else run_small(tmp_path, game)
    recs = journal_lines(out)
    lines = transcript_lines(out)
    assert [t["id"] for t in lines] == [r["id"] for r in recs]  # in journal order, one each
    assert all(len(t["actions"]) >= sum(r["decisions"]) for t, r in zip(lines, recs))
    done = here("verify", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"verified {out}: {len(recs)} matches, {len(recs)} replayed")
    assert "all consistent" in done.stdout and "not checked" not in done.stdout
    shown = here("replay", str(out), recs[-1]["id"])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("\n#") == len(lines[-1]["actions"])
    assert "result: " in shown.stdout


def test_a_changed_action_is_named_with_its_decision(nimmt_run: Path, tmp_path: Path) -> None:
    out = copy(nimmt_run, tmp_path)
    lines = transcript_lines(out)
    lines[1]["actions"][9] = [999]
    rewrite_transcripts(out, lines)
    report = verify(out)
    assert not report.ok
    assert str(report.problems[0]).startswith(f"match {lines[1]['id']}, decision 10 (seat ")
    assert report.problems[0].field == "action" and "[999] is not legal" in report.problems[0].detail
    done = here("verify", str(out))
    assert done.returncode == 1 and done.stdout.startswith(f"FAILED {out}: match {lines[1]['id']}, decision 10")
    shown = here("replay", str(out), lines[1]["id"])
    assert shown.returncode == 2 and "decision 10 ([999]) is refused by the rules" in shown.stderr
    assert "Traceback" not in shown.stderr


def test_a_legal_but_different_action_is_caught(nimmt_run: Path, tmp_path: Path) -> None:
    out = copy(nimmt_run, tmp_path)
    lines = transcript_lines(out)
    a, b = lines[0]["actions"][0], lines[0]["actions"][4]  # seat 0's first two choices, swapped
    lines[0]["actions"][0], lines[0]["actions"][4] = b, a
    rewrite_transcripts(out, lines)
    report = verify(out)
    assert not report.ok and report.problems[0].match == lines[0]["id"]


@pytest.mark.parametrize("field", ["scores", "ranks", "seed"])
def test_a_changed_journal_field_is_named(nimmt_run: Path, tmp_path: Path, field: str) -> None:
    out = copy(nimmt_run, tmp_path)
    recs = journal_lines(out)
    if field == "scores":
        recs[2]["scores"][1] += 1
    elif field == "ranks":
        recs[2]["ranks"] = recs[2]["ranks"][::-1] if len(set(recs[2]["ranks"])) > 1 else [9] * len(recs[2]["ranks"])
    else:
        recs[2]["seed"] += 1
    write_journal(out, recs)
    report = verify(out)
    assert not report.ok
    first = report.problems[0]
    assert (first.match, first.field) == (recs[2]["id"], field), str(first)
    done = here("verify", str(out))
    assert done.returncode == 1 and f"match {recs[2]['id']}: {field}:" in done.stdout


def full_details(out: Path, recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The journal as referee wrote it before per-hand details left it: each line's whole
    ``details``, rebuilt here by playing its transcript through the rules."""
    game = get_game("nimmt_plus")
    settings = json.loads((out / "tournament.json").read_text())["settings"]
    by_id = {tr.id: tr for tr in transcripts.read_all(out)}
    for rec in recs:
        n = len(rec["bots"])
        state = game.setup(n, rec["seed"], game.check_options(n, settings.get("options", {})))
        for mv in by_id[rec["id"]].moves:
            state = game.apply(state, mv.seat, mv.action)
        rec["details"] = game.result(state).details
    return recs


def test_the_journal_keeps_the_details_summary_and_verify_checks_it(nimmt_run: Path, tmp_path: Path) -> None:
    recs = journal_lines(nimmt_run)
    assert all(r["details"]["variant"] == "plus" and "hands" not in r["details"] for r in recs)  # rebuilt, not kept
    lines = (nimmt_run / "matches.jsonl").read_bytes().splitlines(keepends=True)
    assert all(len(line) <= 700 for line in lines)
    out = copy(nimmt_run, tmp_path)
    recs[1]["details"]["zero_heads"] += 1
    write_journal(out, recs)
    first = verify(out).problems[0]
    assert (first.match, first.field) == (recs[1]["id"], "details.zero_heads"), str(first)


def test_an_older_journal_with_whole_details_verifies_and_rerenders_the_same(nimmt_run: Path, tmp_path: Path) -> None:
    out = copy(nimmt_run, tmp_path)
    recs = full_details(out, journal_lines(out))
    assert all(len(r["details"]["hands"]) >= 1 for r in recs)
    write_journal(out, recs)
    report = verify(out)  # the standings files re-rendered from the older lines, byte for byte
    assert report.ok and report.replayed == len(recs), [str(p) for p in report.problems]
    recs[2]["details"]["hands"][0]["heads"][0] += 1
    write_journal(out, recs)
    first = verify(out).problems[0]
    assert first.match == recs[2]["id"] and first.field.startswith("details.hands"), str(first)


def test_a_changed_seed_in_the_transcript_is_named(nimmt_run: Path, tmp_path: Path) -> None:
    out = copy(nimmt_run, tmp_path)
    lines = transcript_lines(out)
    lines[3]["seed"] += 1
    rewrite_transcripts(out, lines)
    first = verify(out).problems[0]
    assert (first.match, first.field) == (lines[3]["id"], "seed")


def test_a_changed_standings_file_is_named(nimmt_run: Path, tmp_path: Path) -> None:
    out = copy(nimmt_run, tmp_path)
    (out / "standings.csv").write_text((out / "standings.csv").read_text().replace("cautious", "cautiouz"))
    report = verify(out)
    assert [p.field for p in report.problems] == ["standings.csv"]


def test_a_missing_transcript_is_named(nimmt_run: Path, tmp_path: Path) -> None:
    out = copy(nimmt_run, tmp_path)
    lines = transcript_lines(out)
    gone = lines.pop(2)
    rewrite_transcripts(out, lines)
    first = verify(out).problems[0]
    assert (first.match, first.field) == (gone["id"], "transcript")


def test_a_run_without_transcripts_verifies_what_it_can(tmp_path: Path) -> None:
    out = run_small(tmp_path, "nimmt_plus", 'transcripts = "none"\n')
    assert not (out / "transcripts").exists()
    done = here("verify", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 replayed" in done.stdout and "not checked: actions, legality, scores" in done.stdout
    recs = journal_lines(out)
    recs[0]["seed"] += 1  # the deal fingerprint still catches a changed seed
    write_journal(out, recs)
    assert verify(out).problems[0].field == "deal_hash"
    bad = here("replay", str(out), recs[0]["id"])
    assert bad.returncode == 2 and "no transcripts" in bad.stderr


def test_the_config_key_is_checked(tmp_path: Path) -> None:
    done = here("check", str(small_config(tmp_path, "nimmt_plus", 'transcripts = "some"\n')))
    assert done.returncode == 2 and "tournament.transcripts" in done.stderr


def test_kill_9_and_resume_leave_no_journal_line_without_its_transcript(tmp_path: Path) -> None:
    bots = [("greedy", NIMMT + ["greedy"]), ("cautious", NIMMT + ["cautious"]), ("random", NIMMT + ["random"])]
    config = write_config(tmp_path, bots, players=3, rounds=4, concurrency=2)  # 4 matches
    out = tmp_path / "cut"
    for at in (1, 2):
        kill9_after(start("run", str(config), "--output", str(out), "-q", *(["--resume"] if at > 1 else [])), out, at)
        have = {t.id for t in transcripts.read_all(out)}
        assert all(r["id"] in have for r in journal_lines(out) if r)  # a journal line always has its transcript
    final = here("run", str(config), "--output", str(out), "-q", "--resume")
    assert final.returncode == 0, final.stderr
    # each run that writes starts a part of its own (the last resume may find nothing left to play)
    assert 2 <= len(list((out / "transcripts").iterdir())) <= 3
    done = here("verify", str(out))
    assert done.returncode == 0 and "4 matches, 4 replayed" in done.stdout, done.stdout + done.stderr


def test_a_torn_part_loses_only_its_last_line(tmp_path: Path) -> None:
    recs = [play_logged(tmp_path, i) for i in range(3)]
    part = tmp_path / "transcripts" / "part-00000.jsonl.gz"
    with transcripts.Writer(tmp_path) as tw:
        tw.write(recs[0])
        tw.write(recs[1])
        two = part.stat().st_size  # flushed: on disk before a journal line would be written
        tw.write(recs[2])
        three = part.stat().st_size
    data = part.read_bytes()
    for cut in (two, two + 1, (two + three) // 2, three - 8):
        part.write_bytes(data[:cut])
        assert [t.id for t in transcripts.read_all(tmp_path)] == [recs[0].id, recs[1].id]
    part.write_bytes(data[:three])  # the last line complete, the stream never finished: all kept
    assert [t.id for t in transcripts.read_all(tmp_path)] == [r.id for r in recs]
    part.write_bytes(data)
    back = list(transcripts.read_all(tmp_path))
    assert [[(m.seat, m.decision, m.action, m.by, m.fault, m.log) for m in t.moves] for t in back] == [
        [(m.seat, m.decision, m.action, m.by, m.fault, m.log) for m in r.moves] for r in recs
    ]


def test_parts_roll_and_a_fresh_run_moves_the_old_ones_aside(tmp_path: Path) -> None:
    recs = [play_logged(tmp_path, i) for i in range(5)]
    with transcripts.Writer(tmp_path, per_part=2) as tw:
        for r in recs:
            tw.write(r)
    assert sorted(p.name for p in (tmp_path / "transcripts").iterdir()) == [
        "part-00000.jsonl.gz",
        "part-00001.jsonl.gz",
        "part-00002.jsonl.gz",
    ]
    with transcripts.Writer(tmp_path, resume=True) as tw:
        tw.write(recs[0])
    assert (tmp_path / "transcripts" / "part-00003.jsonl.gz").exists()
    transcripts.Writer(tmp_path).close()
    assert (tmp_path / "transcripts.prev" / "part-00003.jsonl.gz").exists()
    assert list((tmp_path / "transcripts").iterdir()) == []


# A bot whose log tries to clear the terminal, and one that plays illegal moves.
async def shouting(msg: dict[str, Any]) -> httpx.Response:
    if msg["type"] != "act":
        return httpx.Response(200, json={"ok": True})
    return httpx.Response(200, json={"action": msg["legal"][0], "log": "\x1b[2Jclear\nsecond line\x07"})


def play_logged(tmp: Path, index: int, seed: int | None = None, bots: tuple[str, ...] = ("bad", "loud")) -> Any:
    game = get_game("nimmt_plus")

    async def go() -> Any:
        handlers = {"bad": on_act(illegal), "loud": shouting, "fine": good}
        async with serve(handlers) as urls, wire.new_client(4) as client:
            eps = [Endpoint.make(n, urls[n], None) for n in bots]
            return await play_match(
                game,
                game.check_options(2, {}),
                tournament="t",
                match_id=f"m{index:06d}",
                index=index,
                seed=100 + index if seed is None else seed,
                seats=eps,
                client=client,
                limits=Limits(deadline_ms=UNREACHABLE_DEADLINE_MS, max_faults=2),
            )

    return asyncio.run(go())


def test_replay_marks_faults_and_escapes_bot_logs(tmp_path: Path) -> None:
    settings = {
        "name": "t",
        "game": "nimmt_plus",
        "options": {},
        "seed": 1,
        "players": 2,
        "format": "random",
        "rounds": None,
        "matches": 2,
        "deadline_ms": UNREACHABLE_DEADLINE_MS,
        "on_fault": "fallback",
        "max_faults": 2,
        "duplicate": False,
        "time_bank_ms": 0,
        "max_fault_rate": 1.0,
        "bots": ["bad", "loud"],
    }
    fixtures = schedule(config_of(settings, tmp_path))  # the match seeds and seats verify derives again
    recs = [
        play_logged(tmp_path, i, f.seed, tuple(["bad", "loud"][b] for b in f.seats)) for i, f in enumerate(fixtures)
    ]
    with transcripts.Writer(tmp_path) as tw, open(tmp_path / "matches.jsonl", "w") as fh:
        for r in recs:
            tw.write(r)
            fh.write(json.dumps(r.to_json()) + "\n")
    doc = tournament_document(settings, 2)
    (tmp_path / "tournament.json").write_text(json.dumps(doc))
    write_leaderboard(tmp_path, build_leaderboard(doc, [r.to_json() for r in recs]))
    assert verify(tmp_path).ok, verify(tmp_path).verdict()
    text = "\n".join(render_text(load_match(tmp_path, "m000001")))
    assert "\x1b" not in text and "\x07" not in text
    assert "log: \\x1b[2Jclear" in text and "log: second line\\x07" in text
    assert text.count("FALLBACK [ILLEGAL]") == 3  # max_faults 2: three faults, then not asked
    assert "FALLBACK (not asked)" in text
    only = list(render_text(load_match(tmp_path, "m000001"), seat=0))
    assert all(" seat 1 " not in line for line in only) and any(line.startswith("  sent: {") for line in only)
