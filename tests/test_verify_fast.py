"""``referee verify`` through the games' whole-transcript fast path (``Game.replay``).

On a real 6 nimmt! tournament of the sample bots every match goes through the fast path
and the report is the one the ordinary per-decision replay gives; a transcript or journal
changed at one place still fails, naming the match, the decision and the field exactly as
the ordinary replay names them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.audit.verify import Report, verify
from referee.games.base import Result
from referee.games.nimmt_plus.rules import NimmtPlus
from referee.match.rules import fallback_index
from tests.support.outputs import copy, journal_lines, rewrite_transcripts, transcript_lines, write_journal

pytestmark = pytest.mark.parallel


def verify_counting(out: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Report, list[bool]]:
    """verify(out), and for each fast replay whether it gave a result."""
    calls: list[bool] = []
    real = NimmtPlus.replay

    def spy(self: NimmtPlus, state: Any, seats: Any, actions: Any) -> Result | None:
        result = real(self, state, seats, actions)
        calls.append(result is not None)
        return result

    with monkeypatch.context() as m:
        m.setattr(NimmtPlus, "replay", spy)
        report = verify(out)
    return report, calls


def ordinary(out: Path, monkeypatch: pytest.MonkeyPatch) -> Report:
    with monkeypatch.context() as m:
        m.setattr(NimmtPlus, "fast_replay", False)
        return verify(out)


def shown(report: Report) -> list[str]:
    return [str(p) for p in report.problems]


def test_every_match_goes_through_the_fast_path(nimmt_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report, calls = verify_counting(nimmt_run, monkeypatch)
    assert report.ok, report.verdict()
    recs = journal_lines(nimmt_run)
    assert len(calls) == len(recs) == report.replayed and all(calls)
    slow = ordinary(nimmt_run, monkeypatch)
    assert slow.ok and (slow.replayed, slow.decisions) == (report.replayed, report.decisions)
    assert report.decisions == sum(len(t["actions"]) for t in transcript_lines(nimmt_run))
    assert report.replay_cpu_seconds > 0 and report.cpu_seconds >= report.replay_cpu_seconds


def changed(nimmt_run: Path, tmp_path: Path, how: str) -> Path:
    out = copy(nimmt_run, tmp_path)
    lines = transcript_lines(out)
    line = lines[1]
    seat0 = [i for i, s in enumerate(line["seats"]) if s == 0]
    if how == "illegal":
        line["actions"][7] = [line["actions"][7][0], 105]
    elif how == "played-twice":  # seat 0 plays its first card again later in the hand
        line["actions"][seat0[3]] = line["actions"][seat0[0]]
    elif how == "seat":
        line["seats"][5] = (line["seats"][5] + 1) % 4
    elif how == "short":
        del line["seats"][-3:], line["actions"][-3:], line["ms"][-3:]
        line["by"] = line["by"][:-3]
    elif how == "long":
        line["seats"].append(0)
        line["actions"].append([1])
        line["ms"].append(5)
        line["by"] += "b"
    elif how == "type":
        line["actions"][2] = [True]
    rewrite_transcripts(out, lines)
    return out


@pytest.mark.parametrize(
    ("how", "field"),
    [
        ("illegal", "action"),
        ("played-twice", "action"),
        ("seat", "seat"),
        ("short", "moves"),
        ("long", "moves"),
        ("type", "action"),
    ],
)
def test_a_changed_transcript_is_named_as_the_ordinary_replay_names_it(
    nimmt_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, field: str
) -> None:
    out = changed(nimmt_run, tmp_path, how)
    report, calls = verify_counting(out, monkeypatch)
    assert not report.ok and report.problem_count == 1
    mid = journal_lines(out)[1]["id"]
    first = report.problems[0]
    assert (first.match, first.field) == (mid, field), str(first)
    assert calls.count(False) == 1  # refused by the fast path, then named by the ordinary replay
    assert shown(report) == shown(ordinary(out, monkeypatch))
    if how in ("illegal", "seat", "type"):
        assert first.decision is not None and first.decision[0] == {"illegal": 7, "seat": 5, "type": 2}[how]


@pytest.mark.parametrize("key", ["scores", "ranks", "decisions", "stats"])
def test_a_changed_journal_field_after_a_fast_replay_is_named(
    nimmt_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    out = copy(nimmt_run, tmp_path)
    recs = journal_lines(out)
    rec = recs[0]
    if key == "scores":
        rec["scores"][0] += 1
    elif key == "ranks":
        rec["ranks"] = rec["ranks"][::-1] if rec["ranks"] != rec["ranks"][::-1] else [9] * len(rec["ranks"])
    elif key == "decisions":
        rec["decisions"][1] += 1
    else:
        rec["stats"][2]["heads_per_hand"] += 0.5
    write_journal(out, recs)
    report, calls = verify_counting(out, monkeypatch)
    assert all(calls)  # the transcripts are intact: every match replayed at once
    assert any(p.match == rec["id"] and p.field == key for p in report.problems), shown(report)
    assert [p for p in shown(report) if p.startswith("match ")] == [
        p for p in shown(ordinary(out, monkeypatch)) if p.startswith("match ")
    ]


def test_a_fallback_or_fault_goes_the_ordinary_way(
    nimmt_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = copy(nimmt_run, tmp_path)
    lines = transcript_lines(out)
    lines[0]["by"] = "f" + lines[0]["by"][1:]  # the bot answered, yet the fallback is marked: refused
    rewrite_transcripts(out, lines)
    report, calls = verify_counting(out, monkeypatch)
    assert len(calls) == len(lines) - 1  # that match never reached the fast path
    assert report.problems[0].match == lines[0]["id"] and report.problems[0].field == "by"


def test_older_journal_lines_with_response_times_are_compared(
    nimmt_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = copy(nimmt_run, tmp_path)
    recs, lines = journal_lines(out), transcript_lines(out)
    for rec, line in zip(recs, lines):  # as older journals kept them: each seat's times in ms
        rec["latency_ms"] = [[t / 10 for s, t in zip(line["seats"], line["ms"]) if s == seat] for seat in range(4)]
    write_journal(out, recs)
    report, calls = verify_counting(out, monkeypatch)
    assert all(calls) and not [p for p in report.problems if p.match != "-"], shown(report)
    recs[1]["latency_ms"][2][3] += 0.5
    write_journal(out, recs)
    report, calls = verify_counting(out, monkeypatch)
    assert [(p.match, p.field) for p in report.problems if p.match != "-"] == [(recs[1]["id"], "latency_ms[2]")]


def test_the_verify_bench_prints_both_figures(nimmt_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import verify

    verify.main(["--folder", str(nimmt_run), "--reps", "1"])
    text = capsys.readouterr().out
    assert "whole-transcript fast path:" in text and "ordinary apply per decision:" in text
    assert f"({len(journal_lines(nimmt_run))} matches," in text and "target >= 2,000 matches/s per core" in text
    assert NimmtPlus.fast_replay  # the bench puts the fast path back


@pytest.mark.parametrize("how", ["fallback-differs", "fallback-yet-answered", "bot-not-asked", "seed"])
def test_a_decision_marked_wrongly_is_named_exactly(
    nimmt_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    out = copy(nimmt_run, tmp_path)
    lines = transcript_lines(out)
    line = lines[1]
    game = NimmtPlus()
    n = len(journal_lines(out)[1]["bots"])
    legal = game.legal(game.setup(n, line["seed"], game.check_options(n, {})), 0)
    expected = legal[fallback_index(line["seed"], 0, 0, len(legal))]
    other = next(a for a in legal if a != expected)
    rec = journal_lines(out)[1]
    seat0 = f"bot {rec['bots'][0]}" + (f" version {rec['versions'][0]}" if "versions" in rec else "")
    want = f"match {line['id']}, decision 1 (seat 0's decision 0, {seat0}): "
    if how == "fallback-differs":
        line["by"], line["ms"][0], line["actions"][0] = "f" + line["by"][1:], None, list(other)
        want += f"action: {list(other)!r} marked as the fallback's, the fallback plays {expected!r}"
    elif how == "fallback-yet-answered":
        line["by"] = "f" + line["by"][1:]
        want += "by: played by the fallback, yet the bot answered without a fault"
    elif how == "bot-not-asked":
        line["ms"][0] = None
        want += "by: marked as the bot's choice, yet the bot was not asked or faulted"
    else:
        line["seed"] += 1
        want = f"match {line['id']}: seed: journal {line['seed'] - 1}, transcript {line['seed']}"
    rewrite_transcripts(out, lines)
    report = verify(out)
    assert (report.problem_count, shown(report)) == (1, [want])
    assert shown(ordinary(out, monkeypatch)) == [want]
