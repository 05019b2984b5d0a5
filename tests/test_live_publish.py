"""``publish_every_s``: the outputs re-rendered from the journal while the run goes on, each
file replaced whole, the page saying what it covers and when; the final outputs carry no
time and equal those of a run without live publishing."""

from __future__ import annotations

import asyncio
import datetime
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from referee.config.parse import load_config
from referee.record import MatchRecord
from referee.report.policy import announce, publish_final, publish_live
from referee.run.runner import JOURNAL, run_tournament
from referee.schedule.formats import Fixture, schedule
from tests.support.tournament import UNREACHABLE_DEADLINE_MS, UNREACHABLE_STARTUP_MS

pytestmark = pytest.mark.parallel  # deadlines and start-up windows out of any load's reach

NIMMT = ["python", "-m", "sample_bots.nimmt"]


def _config(tmp_path: Path, out: str, **tournament: Any) -> Path:
    doc = {
        "tournament": {
            "name": "ladder",
            "game": "nimmt_plus",
            "seed": 2,
            "players": 3,
            "rounds": 6,
            "concurrency": 2,
            "output": str(tmp_path / out),
            **tournament,
        },
        "limits": {"deadline_ms": UNREACHABLE_DEADLINE_MS, "startup_ms": UNREACHABLE_STARTUP_MS},
        "bot": [
            {"name": n, "command": NIMMT + [s, "--port", "{port}"]}
            for n, s in (("greedy", "greedy"), ("cautious", "cautious"), ("random", "random"), ("r2", "random"))
        ],
    }
    path = tmp_path / f"{out}.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


def test_a_partial_journal_is_published_with_what_it_covers_and_when(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "full"))
    asyncio.run(run_tournament(cfg))
    part = load_config(_config(tmp_path, "part"))
    part.output.mkdir()
    lines = (cfg.output / JOURNAL).read_text().splitlines(keepends=True)
    (part.output / JOURNAL).write_text("".join(lines[:5]) + lines[5][:40])  # and a torn line being written
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    publish_live(part, len(schedule(part)), now=when)
    text = (part.output / "README.md").read_text()
    assert "- In progress: covers 5 of 24 matches, as of 2026-01-02 03:04:05 UTC" in text
    assert "covers 5 of 24 matches, as of 2026-01-02 03:04:05 UTC" in (part.output / "index.html").read_text()
    assert json.loads((part.output / "standings.json").read_text())["live"]["matches"] == 5


def test_live_pages_during_a_run_are_whole_and_the_final_ones_carry_no_time(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "live", publish_every_s=0.05))
    seen: list[str] = []
    warnings: list[str] = []

    def watch(f: Fixture, rec: MatchRecord) -> None:  # a reader on the event loop, while the thread writes
        page = cfg.output / "index.html"
        if page.exists():
            seen.append(page.read_text())

    announce(cfg, 24)
    asyncio.run(run_tournament(cfg, before_write=[watch], on_warning=warnings.append))
    assert warnings == []
    assert all(p.rstrip().endswith("</html>") and "In progress" in p for p in seen), "never a half-written page"
    live = json.loads((cfg.output / "standings.json").read_text())["live"]  # the run's last live publish
    assert live["scheduled"] == 24 and live["matches"] <= 24
    assert publish_final(cfg).warnings == ()
    plain = load_config(_config(tmp_path, "plain"))
    shutil.copytree(cfg.output, plain.output, ignore=shutil.ignore_patterns("*.html", "*.md", "*.json", "*.csv"))
    announce(plain, 24)
    assert publish_final(plain).warnings == ()
    for name in ("README.md", "index.html", "standings.json", "standings.csv"):
        final = (cfg.output / name).read_text()
        assert "In progress" not in final and '"live":' not in final
        assert final.replace("/live", "/plain") == (plain.output / name).read_text()


def test_a_failed_live_publish_is_a_warning_and_the_run_goes_on(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "blocked", publish_every_s=0.05))
    warnings: list[str] = []
    (cfg.output / "README.md").mkdir(parents=True)  # a folder where the page goes: every publish fails
    asyncio.run(run_tournament(cfg, on_warning=warnings.append))
    assert len((cfg.output / JOURNAL).read_text().splitlines()) == 24
    assert warnings and all(w.startswith("live publish failed (the run goes on): ") for w in warnings)
