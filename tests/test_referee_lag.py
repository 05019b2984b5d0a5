"""The referee's own event-loop lag reaches ``timings.json`` (one entry per run and per
``--resume``), survives a resume, and a re-render by ``referee leaderboard`` and
``referee verify`` keeps it. Real ``referee run`` processes, real sample bots (``leaderboard``
and ``verify`` run in this process: they play nothing, they have no lag of their own)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import here, referee, start
from tests.support.tournament import NIMMT, kill9_after, write_config

pytestmark = pytest.mark.parallel

BOTS = [("greedy", NIMMT + ["greedy"]), ("cautious", NIMMT + ["cautious"]), ("random", NIMMT + ["random"])]
LAG_KEYS = {"samples", "p50_ms", "p99_ms", "max_ms", "final_limit", "lowest_limit"}


def test_the_referee_lag_of_every_run_is_in_timings_json_and_survives_a_re_render(tmp_path: Path) -> None:
    config = write_config(tmp_path, BOTS, players=3, rounds=6, concurrency=2)
    out = tmp_path / "out"
    proc = start("run", str(config), "-q")
    kill9_after(proc, out, 1, timeout_s=120)
    proc.wait(30)
    done = referee("run", str(config), "-q", "--resume")
    assert done.returncode == 0, done.stderr
    timings = json.loads((out / "timings.json").read_text())
    lags = timings["referee_lag"]
    # the killed run never saved its lag (SIGKILL); the resume's is there, with real samples
    assert len(lags) >= 1 and set(lags[-1]) >= LAG_KEYS and lags[-1]["samples"] > 0
    assert lags[-1]["p50_ms"] <= lags[-1]["p99_ms"] <= lags[-1]["max_ms"]
    printed = [line for line in done.stderr.splitlines() if line.startswith("referee event-loop lag")]
    assert printed == [
        f"referee event-loop lag: p50 {lags[-1]['p50_ms']} ms, p99 {lags[-1]['p99_ms']} ms, "
        f"max {lags[-1]['max_ms']} ms; requests in flight limited to at least "
        f"{lags[-1]['lowest_limit']} (at the end {lags[-1]['final_limit']})"
    ]
    # another --resume (nothing left to play) adds its own entry, keeping the earlier ones
    again = referee("run", str(config), "-q", "--resume")
    assert again.returncode == 0, again.stderr
    after = json.loads((out / "timings.json").read_text())["referee_lag"]
    assert after[: len(lags)] == lags and len(after) == len(lags) + 1
    # re-rendering from the saved state keeps it
    (out / "timings.json").unlink()
    assert here("leaderboard", str(out)).returncode == 0
    assert json.loads((out / "timings.json").read_text())["referee_lag"] == after
    checked = here("verify", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads((out / "timings.json").read_text())["referee_lag"] == after
