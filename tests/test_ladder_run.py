"""The ladder wired into the runner (``format = "ladder"``, referee/run/season.py): the
tables of each epoch come from the journal, so a run gives the same bytes at any
concurrency, on a Dask cluster, after a kill -9 and ``--resume``, and a ladder grown
with new bots (one removed) equals itself. Real ``referee run`` against one real bot
process (``tests/bots/steady.py``) answering at many URLs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.run import ladder
from referee.schedule.registry import check_format
from tests.support.cli import referee, run_here, start
from tests.support.ladder import names, write
from tests.support.steady import Steady
from tests.support.tournament import journal, kill9_after, lines, published

pytestmark = pytest.mark.parallel


@pytest.fixture
def small_epochs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ladder, "MIN_EPOCH_TABLES", 8)  # epochs of 8 tables: a short run holds several


def test_the_config_refuses_what_a_ladder_cannot_do(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/"
    for extra, words in (
        ({"duplicate": "true"}, "no duplicate deals"),
        ({"grow": "true"}, "grows by itself"),
    ):
        with pytest.raises(ConfigError, match=words):
            check_format(load_config(write(tmp_path, url, names(5), 10, **extra)))
    cfg = load_config(write(tmp_path, url, names(5), 10, stop='"settled"', closed="true"))
    assert cfg.format == "ladder" and cfg.closed and cfg.stop == "settled"
    other = write(tmp_path, url, names(5), 10).read_text().replace('"ladder"', '"random"')
    (tmp_path / "r.toml").write_text(other.replace("matches = 10", "matches = 10\nclosed = true"))
    with pytest.raises(ConfigError, match=r"closed.*is for format = 'ladder'"):
        check_format(load_config(tmp_path / "r.toml"))


def test_a_ladder_is_the_same_at_any_concurrency_and_on_two_dask_workers(
    tmp_path: Path, steady_bot: Steady, small_epochs: None
) -> None:
    cfg = write(tmp_path, steady_bot.url, names(7), 28)
    outs = []
    for name, extra in (("c1", ["--concurrency", "1"]), ("w2", ["--workers", "2"])):
        run_here(cfg, tmp_path / name, *extra)
        outs.append(tmp_path / name)
    base = published(outs[0])
    doc = json.loads(base["tournament.json"])["settings"]
    assert doc["ladder"]["epoch_tables"] == 8 and doc["matches"] == 28
    assert doc["seed"] == 3  # a seed given in the file is public anyway
    for other in outs[1:]:
        assert journal(other) == journal(outs[0])
        files = published(other)
        assert sorted(files) == sorted(base)
        for name in base:
            assert files[name] == base[name], f"{name} differs in {other.name}"
    counts: dict[str, int] = {}
    for d in journal(outs[0]):
        for b in d["bots"]:
            counts[b] = counts.get(b, 0) + 1
    assert len(counts) == 7 and min(counts.values()) >= 0.5 * 28 * 3 / 7  # the floor: no bot starved


def grow(tmp: Path, url: str, out: str) -> Path:
    """20 bots for 14 matches (the last epoch cut short), then 25 (b03 gone) for 40."""
    cfg = write(tmp, url, names(20), 14, file=f"{out}.toml")
    run_here(cfg, tmp / out)
    first = (tmp / out / "matches.jsonl").read_text()
    field = [n for n in names(26) if n != "b03"]
    write(tmp, url, field, 40, file=f"{out}.toml")
    output = run_here(cfg, tmp / out, "--resume")
    assert (tmp / out / "matches.jsonl").read_text().startswith(first), output
    return tmp / out


def test_a_ladder_grown_from_20_to_25_bots_twice_over_equals_itself(
    tmp_path: Path, steady_bot: Steady, small_epochs: None
) -> None:
    a, b = grow(tmp_path, steady_bot.url, "one"), grow(tmp_path, steady_bot.url, "two")
    assert journal(a) == journal(b)
    fa, fb = published(a), published(b)
    for name in fa:
        assert fa[name] == fb[name], f"{name} differs"
    plan = json.loads(fa["tournament.json"])["settings"]["ladder"]
    assert [s["from"] for s in plan["lineups"]] == [0, 2]  # epoch 1 was in flight: 25 bots from epoch 2
    # epoch 1's unplayed tables with b03 (entries are name@version)
    assert all(any(k.startswith("b03@") for k in keys) and 14 <= i < 16 for i, keys in plan["dropped"])
    recs = journal(a)
    assert len(recs) + len(plan["dropped"]) == 40
    assert not any("b03" in d["bots"] for d in recs if d["index"] >= 14)
    newcomers = {"b20", "b21", "b22", "b23", "b24", "b25"}
    # new bots are placed first: each has played in its first epoch (epoch 2)
    first_epoch = {n for d in recs if 16 <= d["index"] < 24 for n in d["bots"]}
    assert newcomers <= first_epoch
    standings = json.loads(fa["standings.json"])
    assert "b03" not in [r["name"] for r in standings["standings"]]


def test_kill_9_and_resume_of_a_ladder_equals_an_uninterrupted_one(tmp_path: Path, steady_bot: Steady) -> None:
    """The real epoch size (64 tables): 72 matches are two epochs, the kill lands in the first or second."""
    cfg = write(tmp_path, steady_bot.url, names(7), 72, concurrency="4")
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    run_here(cfg, whole)  # the runs nobody kills play in this process
    assert json.loads((whole / "tournament.json").read_text())["settings"]["ladder"]["epoch_tables"] == 64
    first = kill9_after(start("run", str(cfg), "--output", str(cut), "-q"), cut, 50, timeout_s=120)
    assert 50 <= first < 72
    run_here(cfg, cut, "--resume")
    assert lines(cut) == 72
    assert journal(cut) == journal(whole)
    a, b = published(whole), published(cut)
    for name in a:
        assert a[name] == b[name], f"{name} differs between the uninterrupted and the killed-and-resumed ladder"


def resubmit(tmp: Path, url: str, out: str) -> Path:
    """8 bots for 24 matches, then b02 resubmitted (a new URL: a new version) for 48."""
    cfg = write(tmp, url, names(8), 24, file=f"{out}.toml")
    run_here(cfg, tmp / out)
    cfg.write_text(cfg.read_text().replace(f'"{url}b02"', f'"{url}b02-v2"').replace("matches = 24", "matches = 48"))
    run_here(cfg, tmp / out, "--resume")
    return tmp / out


def test_a_resubmitted_bot_is_a_new_entry_of_the_ladder_and_the_run_equals_itself(
    tmp_path: Path, steady_bot: Steady, small_epochs: None
) -> None:
    a, b = resubmit(tmp_path, steady_bot.url, "one"), resubmit(tmp_path, steady_bot.url, "two")
    assert journal(a) == journal(b)
    fa, fb = published(a), published(b)
    for name in fa:
        assert fa[name] == fb[name], f"{name} differs"
    recs = journal(a)
    v1 = {d["versions"][d["bots"].index("b02")] for d in recs if "b02" in d["bots"] and d["index"] < 24}
    v2 = {d["versions"][d["bots"].index("b02")] for d in recs if "b02" in d["bots"] and d["index"] >= 32}
    assert len(v1) == 1 and len(v2) == 1 and v1 != v2
    plan = json.loads(fa["tournament.json"])["settings"]["ladder"]
    assert [s["from"] for s in plan["lineups"]] == [0, 3]  # the journal's last epoch was 2: the new version from 3
    first, last = plan["lineups"][0]["bots"], plan["lineups"][-1]["bots"]
    assert f"b02@{v1.pop()}" in first and f"b02@{v2.pop()}" in last
    assert [k for k in last if k not in first] == [k for k in last if k.startswith("b02@")]  # one new entry
    # the new version is placed as a new bot: in its first epoch it sits more than any other entry
    seats: dict[str, int] = {}
    for d in recs:
        if 24 <= d["index"] < 32:
            for n in d["bots"]:
                seats[n] = seats.get(n, 0) + 1
    assert seats["b02"] > max(v for n, v in seats.items() if n != "b02"), seats
    row = next(r for r in json.loads(fa["standings.json"])["standings"] if r["name"] == "b02")
    assert len(row["versions"]) == 2  # the standings stay keyed by name, with its versions


@pytest.mark.serial
def test_an_open_season_with_a_secret_seed_publishes_without_a_bot_that_is_down(tmp_path: Path) -> None:
    """A ladder left open keeps its secret seed (only its commitment is published) and
    still publishes its leaderboard; a bot that never answers is excluded, named, and the
    season plays on without it."""
    bots = "".join(
        f'[[bot]]\nname = "{n}"\ncommand = ["python", "-m", "sample_bots.nimmt", "{s}", "--port", "{{port}}"]\n'
        for n, s in [("a", "greedy"), ("b", "cautious"), ("c", "random"), ("d", "random")]
    )
    out = tmp_path / "out"
    (tmp_path / "l.toml").write_text(
        '[tournament]\nname = "open"\ngame = "nimmt_plus"\nplayers = 3\nformat = "ladder"\nmatches = 20\n'
        f'concurrency = 4\non_unready = "exclude"\noutput = "{out}"\n'
        "[limits]\ndeadline_ms = 30000\nstartup_ms = 1500\n"
        + bots
        + '[[bot]]\nname = "gone"\nurl = "http://127.0.0.1:9/"\n'
    )
    done = referee("run", str(tmp_path / "l.toml"), "-q")
    assert done.returncode == 0, done.stderr[-2000:]
    settings = json.loads((out / "tournament.json").read_text())["settings"]
    assert settings["seed_secret"] is True and settings["seed"] is None and len(settings["seed_commitment"]) == 64
    doc = json.loads((out / "standings.json").read_text())
    assert [e["name"] for e in doc["excluded"]] == ["gone"]
    assert sorted(r["name"] for r in doc["standings"]) == ["a", "b", "c", "d"]
    assert "secret seed (drawn by the referee, revealed at the end)" in (out / "README.md").read_text()
    assert len(journal(out)) == 20 and all("gone" not in r["bots"] for r in journal(out))
