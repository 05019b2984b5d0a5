"""Fault-rate disqualification, judged in fixture order (``referee/run/dq.py``):
one rule for one process at any concurrency and for a Dask cluster. Real ``referee run``
(in this process, through the CLI) against real bot processes (``tests/bots/steady.py``),
a real ``LocalCluster`` of two worker processes for ``workers = 2``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.config.parse import load_config
from referee.run import dq
from tests.support.cli import run_here
from tests.support.steady import Steady
from tests.support.tournament import UNREACHABLE_DEADLINE_MS, journal, published

pytestmark = pytest.mark.parallel

LAG = 16  # a small lag (a Dask batch of 16 needs one of at least 15), so a short run shows it take effect


def config(tmp: Path, urls: dict[str, str]) -> Path:
    lines = [
        "[tournament]",
        'name = "dq"',
        'game = "nimmt_plus"',
        "seed = 5",
        "players = 2",
        'format = "random"',
        "matches = 40",
        "[limits]",
        f"deadline_ms = {UNREACHABLE_DEADLINE_MS}",  # the three runs compared see no timeout
        "max_faults = 1000",
        "max_fault_rate = 0.5",
        "fault_rate_min_decisions = 15",
    ]
    for name, url in urls.items():
        lines += ["[[bot]]", f'name = "{name}"', f'url = "{url}"']
    path = tmp / "dq.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_disqualification_is_the_same_at_any_concurrency_and_on_two_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dq, "DQ_LAG", LAG)
    bots = {"bad": Steady("--illegal"), "good": Steady(), "fine": Steady()}
    try:
        cfg = config(tmp_path, {n: b.url for n, b in bots.items()})
        outs, acts = [], []
        for name, extra in (("c1", ["--concurrency", "1"]), ("c8", ["--concurrency", "8"]), ("w2", ["--workers", "2"])):
            before = bots["bad"].stats()["acts"]
            run_here(cfg, tmp_path / name, *extra)
            outs.append(tmp_path / name)
            acts.append(bots["bad"].stats()["acts"] - before)
    finally:
        for b in bots.values():
            b.stop()
    files = [published(o) for o in outs]
    assert "standings.json" in files[0] and "README.md" in files[0]
    for other in files[1:]:
        assert sorted(other) == sorted(files[0])
        for name in files[0]:
            assert other[name] == files[0][name], f"{name} differs"
    recs = journal(outs[0])
    assert journal(outs[1]) == recs and journal(outs[2]) == recs
    # the rule: fixture i plays with the bots disqualified over the fixtures before i - LAG
    decided, faulted, dq_from = 0, 0, None
    for r in recs:
        seat = r["bots"].index("bad") if "bad" in r["bots"] else None
        if dq_from is not None and r["index"] >= dq_from + LAG:
            assert seat is None or (r["disqualified"] == [seat] and r["decisions"][seat] == 0), r["index"]
            assert not any(f["bot"] == "bad" for f in r["faults"])
        elif seat is not None:
            assert "disqualified" not in r and r["decisions"][seat] > 0, r["index"]
        if seat is not None:
            decided += r["decisions"][seat]
            faulted += sum(1 for f in r["faults"] if f["bot"] == "bad" and f["phase"] == "act")
            if dq_from is None and decided >= 15 and faulted / decided > 0.5:
                dq_from = r["index"] + 1
    assert dq_from is not None and dq_from + LAG < len(recs), "the bad bot was disqualified mid-run"
    assert any(r.get("disqualified") for r in recs)
    # not called after its point: every act it got is a decision of the journal
    assert acts == [decided] * 3, (acts, decided)
    rows = {r["name"]: r for r in json.loads(files[0]["standings.json"])["standings"]}
    assert rows["bad"]["rank"] == "DQ" and rows["bad"]["disqualified_note"].startswith("disqualified in m")
    assert f"faults in {decided} of {decided} decisions (100 %)" in rows["bad"]["disqualified_note"]


def test_a_run_waits_for_the_prefix_so_a_fixture_never_starts_before_its_judgement(tmp_path: Path) -> None:
    """At concurrency above the lag, fixture i starts only once fixtures < i - lag are in."""
    cfg = load_config(config(tmp_path, {"a": "http://127.0.0.1:9/", "b": "http://127.0.0.1:9/"}))
    judge = dq.DqJudge(cfg, 24, lag=2)
    assert judge.ready(2) and not judge.ready(3)
    judge.add({"index": 1, "bots": ["a", "b"], "decisions": [20, 20], "faults": []})
    assert not judge.ready(3)  # fixture 0 is still missing: the prefix is not complete
    faults = [{"seat": 0, "decision": d, "phase": "act"} for d in range(20)]
    judge.add({"index": 0, "bots": ["a", "b"], "decisions": [20, 20], "faults": faults})
    assert judge.ready(4) and not judge.ready(5)
    assert judge.dq_at == {0: 1}  # a, after fixture 0 (rate 1 > 0.5 over 20 decisions)
    assert judge.disqualified(2) == [] and judge.disqualified(3) == [0]
    assert judge.seats(3, [1, 0]) == [1] and judge.seats(2, [1, 0]) == []
