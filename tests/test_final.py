"""A ladder season's final (``[tournament] final = { bots, matches }``, referee/run/final.py)
through ``referee run`` with the real nimmt sample bots over HTTP: the finalists are the
season's top and play only among themselves, seats rotated on shared deals; the published
order of the finalists is the final's; the secret seed stays secret until the final ends;
a kill -9 mid-final and ``--resume`` at concurrency 1 equals an uninterrupted run at 4,
byte for byte; ``verify`` passes, and fails on a final whose tables were swapped."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.schedule.formats import check
from referee.stats.places import PairTally, fit
from tests.support.cli import here, run_here, start
from tests.support.final import field, sample_servers, write_final
from tests.support.tournament import journal, kill9_after, lines, published

pytestmark = pytest.mark.parallel

SEASON, FINAL = 24, 24  # the final: 4 blocks of 6 (batch = 2 groups of 3 matches)
FINAL_TOML = "{ bots = 4, matches = 24 }"


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with sample_servers() as u:
        yield u


def settings(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "tournament.json").read_text())["settings"])


def season_top(recs: list[dict[str, Any]], k: int) -> list[str]:
    """The season's top ``k`` by the Plackett-Luce fit of who finished above whom (a name breaks a tie)."""
    names = sorted({b for d in recs for b in d["bots"]})
    at = {b: i for i, b in enumerate(names)}
    tally = PairTally(len(names))
    tally.add(np.array([[at[b] for b in d["bots"]] for d in recs]), np.array([d["ranks"] for d in recs]))
    theta = fit(tally).theta
    return sorted(names, key=lambda b: (-theta[at[b]], b))[:k]


def test_bad_final_values_are_refused_with_the_key(tmp_path: Path) -> None:
    bots = [(f"b{i}", f"http://127.0.0.1:9/b{i}") for i in range(5)]
    for final, extra, words in (
        ("{ bots = 1, matches = 5 }", {}, r"tournament\.final\.bots: must be at least 3"),
        ("{ bots = 2, matches = 5 }", {}, r"tournament\.final\.bots: must be at least 3 \(2, and the 3 seats"),
        ("{ bots = 6, matches = 5 }", {}, r"at most the 5 bots, got 6"),
        ("{ bots = 3, matches = 0 }", {}, r"tournament\.final\.matches: must be at least 1"),
        ("{ bots = 3, matchs = 5 }", {}, r"tournament\.final\.matchs: unknown key \(did you mean 'matches'\?\)"),
        ("{ bots = 3 }", {}, r"tournament\.final\.matches: missing"),
        ('{ bots = "3", matches = 5 }', {}, r"tournament\.final\.bots: expected an integer, got a string"),
        ("3", {}, r"tournament\.final: expected a table, got an integer"),
        ("{ bots = 3, matches = 5 }", {"stop": '"settled"'}, r"tournament\.final: a season with a final plays"),
        (
            "{ bots = 3, matches = 5 }",
            {"format": '"random"', "closed": ""},
            r"tournament\.final: is for format = 'ladder'",
        ),
    ):
        path = write_final(tmp_path, bots, 10, final, **extra)
        with pytest.raises(ConfigError, match=words) as err:
            check(load_config(path))
        assert str(path) in str(err.value) and "\n" not in str(err.value)
    cfg = check(load_config(write_final(tmp_path, bots, 10, "{ bots = 3, matches = 5 }")))
    assert cfg.final == {"bots": 3, "matches": 5} and load_config(write_final(tmp_path, bots, 10, "")).final == {}


def test_a_final_runs_resumes_and_verifies(tmp_path: Path, urls: dict[str, str]) -> None:
    cfg = write_final(tmp_path, field(urls), SEASON, FINAL_TOML, seed="3", batch="2")
    run_here(cfg, tmp_path / "c4")
    recs = journal(tmp_path / "c4")
    doc = json.loads((tmp_path / "c4" / "standings.json").read_text())
    season = [d for d in recs if d["index"] < SEASON]
    final = [d for d in recs if d["index"] >= SEASON]
    assert len(season) == SEASON and doc["final"]["bots"] == 4 and 0 < len(final) <= FINAL
    finalists = season_top(season, 4)
    assert doc["final"]["finalists"] == finalists
    assert {b for d in final for b in d["bots"]} <= set(finalists)  # only among themselves
    assert [d["id"] for d in final] == [f"m{SEASON + i:06d}" for i in range(len(final))]
    groups: dict[int, list[dict[str, Any]]] = {}
    for d in final:
        groups.setdefault(d["deal"], []).append(d)
    for deal, group in groups.items():  # a group: one deal, its 3 matches its seat rotations
        assert deal == group[0]["index"] and len({d["seed"] for d in group}) == 1
        for seat in range(3):
            assert sorted(d["bots"][seat] for d in group) == sorted(group[0]["bots"])
    seats = Counter((b, s) for d in final for s, b in enumerate(d["bots"]))
    for b in {b for d in final for b in d["bots"]}:  # every finalist equally often in every seat
        assert seats[(b, 0)] == seats[(b, 1)] == seats[(b, 2)]
    assert {b for d in final[:6] for b in d["bots"]} == set(finalists)  # the first block seats them all
    # the published order: the finalists by the final's own matches, then the season's order
    rows = doc["standings"]
    top = PairTally(4)
    at = {b: i for i, b in enumerate(finalists)}
    top.add(np.array([[at[b] for b in d["bots"]] for d in final]), np.array([d["ranks"] for d in final]))
    theta = fit(top).theta
    want = sorted(finalists, key=lambda b: (-theta[at[b]], at[b]))
    assert [r["name"] for r in rows[:4]] == doc["final"]["order"] == want
    assert [r["decided_by"] for r in rows] == ["final"] * 4 + ["season"] * (len(rows) - 4)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert {p["place"] for p in doc["places"]} == {1, 2}
    assert all(c["bot"] in finalists for p in doc["places"] for c in p["candidates"])
    page = (tmp_path / "c4" / "index.html").read_text()
    assert 'id="final-section"' in page and "The season&#x27;s order" in page.replace("'", "&#x27;")
    assert doc["stopped"]["rule"] == "final"

    # kill -9 in the final, then --resume at concurrency 1: the same bytes
    proc = start("run", str(cfg), "--output", str(tmp_path / "k1"), "--concurrency", "1", "-q", pipe=False)
    kill9_after(proc, tmp_path / "k1", SEASON + 2)
    assert SEASON < lines(tmp_path / "k1") < SEASON + len(final)
    run_here(cfg, tmp_path / "k1", "--resume", "--concurrency", "1")
    assert journal(tmp_path / "k1") == recs
    assert published(tmp_path / "k1") == published(tmp_path / "c4")

    done = here("verify", str(tmp_path / "c4"))
    assert done.returncode == 0, done.stdout + done.stderr
    bad = tmp_path / "swapped"
    shutil.copytree(tmp_path / "c4", bad)
    raw = [json.loads(x) for x in (bad / "matches.jsonl").read_text().splitlines()]
    a, b = (d for d in raw if d["index"] in (SEASON, SEASON + 3))  # two groups' first matches
    a["bots"], b["bots"] = b["bots"], a["bots"]
    (bad / "matches.jsonl").write_text("".join(json.dumps(d) + "\n" for d in raw))
    done = here("verify", str(bad))
    assert done.returncode != 0 and "expected the final's table" in done.stdout + done.stderr


def test_the_secret_seed_is_revealed_when_the_final_ends(tmp_path: Path, urls: dict[str, str]) -> None:
    cfg = write_final(tmp_path, field(urls, 2), SEASON, "{ bots = 3, matches = 12 }", batch="2")
    out = tmp_path / "out"
    proc = start("run", str(cfg), "--output", str(out), "--concurrency", "1", "-q", pipe=False)
    kill9_after(proc, out, SEASON + 1)
    assert "seed" not in settings(out) or settings(out)["seed"] is None  # the season is over, the final is not
    assert "seed_commitment" in settings(out)
    run_here(cfg, out, "--resume")
    s = settings(out)
    assert isinstance(s["seed"], int) and s["final"] == {"bots": 3, "matches": 12}
    assert len([d for d in journal(out) if d["index"] >= SEASON]) > 0
    done = here("verify", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
