"""The output files and ``referee leaderboard``: byte-for-byte determinism (file order
of the journal, repeated renders, ``run`` versus ``leaderboard``), formats, errors,
disqualified bots in every format. One real ``referee run`` with sample bots; the rest
renders seeded synthetic journals in-process. Takes about 4 s."""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.config.parse import load_config
from referee.games.base import ranks_from_scores
from referee.record import MatchRecord
from referee.report.page import render_page
from referee.report.publish import build_leaderboard, render_markdown
from referee.report.text import md
from referee.schedule.formats import schedule
from referee.schedule.settings import published
from referee.store.tournament_file import TOURNAMENT_FILE, write_tournament_file
from tests.support.cli import here

pytestmark = pytest.mark.parallel

DETERMINISTIC = ("README.md", "standings.json", "standings.csv", "index.html")
ALL_FILES = DETERMINISTIC + ("timings.json",)
ODD_LATENCY, ODD_DURATION = 987.654, 4321.125  # numbers that must reach timings.json only
BOTS = ["alpha", "beta", "gamma", "delta"]


def config_text(out: Path, bots: list[str], rounds: int) -> str:
    """A duplicate round robin of 3-player 6 nimmt! tables; a sample bot's strategy is its name."""
    lines = [
        "[tournament]",
        'name = "pub"',
        'game = "nimmt_plus"',
        "seed = 4",
        "players = 3",
        f"rounds = {rounds}",
        "duplicate = true",
        f'output = "{out}"',
    ]
    for name in bots:
        strategy = name if name in ("greedy", "cautious", "random") else "greedy"
        lines += [
            "[[bot]]",
            f'name = "{name}"',
            f'command = ["python", "-m", "sample_bots.nimmt", "{strategy}", "--port", "{{port}}"]',
        ]
    return "\n".join(lines) + "\n"


def synthetic_output(tmp_path: Path, disqualify: str | None = None) -> Path:
    """An output folder with tournament.json and a seeded journal of the config's real
    (duplicate) schedule, in fixture order; the strongest bot is the first one."""
    out = tmp_path / "out"
    cfg_file = tmp_path / "pub.toml"
    cfg_file.write_text(config_text(out, BOTS, rounds=2))
    cfg = load_config(cfg_file)
    fixtures = schedule(cfg)
    write_tournament_file(out, published(cfg), len(fixtures))
    rng = random.Random(9)
    lines = []
    for f in fixtures:
        bots = [BOTS[b] for b in f.seats]
        scores = [round(rng.gauss(40 - 8 * BOTS.index(n), 6), 1) for n in bots]
        latency = [[round(rng.uniform(0.5, 3), 2), ODD_LATENCY if f.index == 3 else 1.5] for _ in bots]
        rec = MatchRecord(
            id=f.id,
            index=f.index,
            seed=f.seed,
            bots=bots,
            scores=scores,
            ranks=ranks_from_scores(scores, False),
            lower_is_better=False,
            forfeited=[],
            faults=[],
            latency_ms=latency,
            decisions=[2] * 3,
            stats=[{} for _ in bots],
            details={},
            duration_s=ODD_DURATION if f.index == 5 else 0.25,
        )
        if disqualify in bots and f.index >= len(fixtures) // 2:
            rec.disqualified = [bots.index(disqualify)]
        if disqualify in bots and f.index < len(fixtures) // 2:
            seat = bots.index(disqualify)
            rec.faults = [
                {
                    "seat": seat,
                    "bot": disqualify,
                    "decision": 0,
                    "phase": "act",
                    "kind": "illegal",
                    "detail": "x",
                    "latency_ms": 1.0,
                }
            ]
        # a journal of a referee that kept response times in its lines: timings.json comes from them
        line = {**rec.to_json(), "latency_ms": rec.latency_ms}
        line["deal"] = f.deal
        lines.append(json.dumps(line, separators=(",", ":")))
    (out / "matches.jsonl").write_text("\n".join(lines) + "\n")
    return out


def leaderboard(*args: str) -> Any:
    return CliRunner().invoke(main, ["leaderboard", *args])


def files(out: Path, names: tuple[str, ...] = ALL_FILES) -> dict[str, bytes]:
    return {n: (out / n).read_bytes() for n in names}


def test_the_same_journal_in_any_line_order_gives_the_same_bytes(tmp_path: Path) -> None:
    out = synthetic_output(tmp_path)
    result = leaderboard(str(out))
    assert result.exit_code == 0, result.output
    assert sorted(Path(p).name for p in result.output.split()) == sorted(ALL_FILES)
    first = files(out)
    assert leaderboard(str(out)).exit_code == 0
    assert files(out) == first  # rendering twice changes nothing
    journal = out / "matches.jsonl"
    lines = journal.read_text().splitlines()
    for seed in (1, 2):
        random.Random(seed).shuffle(lines)
        journal.write_text("\n".join(lines) + "\n")
        assert leaderboard(str(out)).exit_code == 0
        assert files(out) == first
    for name in DETERMINISTIC:  # response times and durations stay out of the deterministic files
        text = first[name].decode()
        assert "987.65" not in text and "4321" not in text and "p50" not in text, name
    timings = json.loads(first["timings.json"])
    assert timings["bots"]["alpha"]["max_ms"] == ODD_LATENCY
    assert timings["match_seconds"] == round(ODD_DURATION + 0.25 * (timings["matches"] - 1), 4)
    doc = json.loads(first["standings.json"])
    assert doc["method"]["deals"] == doc["matches"] // 3  # duplicate: 3 rotations per deal, resampled together
    assert doc["standings"][0]["name"] == "alpha"


def test_markdown_csv_and_json_agree(tmp_path: Path) -> None:
    out = synthetic_output(tmp_path)
    assert leaderboard(str(out)).exit_code == 0
    doc = json.loads((out / "standings.json").read_text())
    assert list(doc)[:6] == ["tournament", "game", "matches", "scheduled", "lower_score_wins", "settings"]
    assert {"head_to_head", "seat_bias", "rating_history", "method"} <= set(doc)
    rows = doc["standings"]
    assert len(doc["head_to_head"]) == 4 * 3 and len(doc["seat_bias"]) == 3
    readme = (out / "README.md").read_text()
    assert (
        "| Rank | Bot | Matches | Wins (share) | Mean rank [95% CI] | Mean score [95% CI] | Rank range |"
        in " ".join(readme.split()).replace("| |", "|")
    )
    for r in rows:
        lo, hi = r["mean_score_ci"]
        assert f"{r['mean_score']:.2f} [{lo:.2f}, {hi:.2f}]" in readme
        assert f"| {r['rank']} " in readme and f"{r['rating']['ordinal']:.2f}" in readme
    assert "## Head-to-head" in readme and "## Seat bias" in readme
    pair = doc["head_to_head"][0]
    lo, hi = pair["share_ci"]
    assert f"{pair['share']:.0%} [{lo * 100:.0f}\u2013{hi * 100:.0f}] ({pair['above']}\u2013{pair['below']}" in readme
    table = list(csv.DictReader(io.StringIO((out / "standings.csv").read_text())))
    assert [t["name"] for t in table] == [r["name"] for r in rows]
    for t, r in zip(table, rows):
        assert (int(t["rank"]), int(t["matches"]), float(t["mean_score"])) == (r["rank"], r["matches"], r["mean_score"])
        assert [float(t["mean_score_lo"]), float(t["mean_score_hi"])] == r["mean_score_ci"]
        assert [int(t["rank_lo"]), int(t["rank_hi"])] == r["rank_interval"]
        assert float(t["ordinal"]) == r["rating"]["ordinal"] and t["disqualified"] == "false"


def test_a_disqualified_bot_is_dq_and_last_in_every_format(tmp_path: Path) -> None:
    out = synthetic_output(tmp_path, disqualify="alpha")  # the strongest bot
    assert leaderboard(str(out)).exit_code == 0
    doc = json.loads((out / "standings.json").read_text())
    last = doc["standings"][-1]
    assert last["name"] == "alpha" and last["rank"] == "DQ" and last["disqualified"]
    assert last["rank_interval"] is None
    assert last["disqualified_note"].startswith("disqualified in m0000")
    assert " faults in " in last["disqualified_note"] and "decisions (" in last["disqualified_note"]
    assert [r["rank"] for r in doc["standings"][:-1]] == [1, 2, 3]
    readme = (out / "README.md").read_text()
    assert f"- **DQ** alpha: {last['disqualified_note']}" in readme
    assert readme.index("| DQ ") > readme.index("| 3 ")
    table = list(csv.DictReader(io.StringIO((out / "standings.csv").read_text())))
    assert (table[-1]["name"], table[-1]["rank"], table[-1]["disqualified"]) == ("alpha", "DQ", "true")
    page = (out / "index.html").read_text()
    assert (
        f'<p class="dq" data-bot="alpha"><b>DQ</b> <a href="bots/alpha.html">alpha</a>: {last["disqualified_note"]}</p>'
        in page
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-f", "md"], {"README.md"}),
        (["--format", "json,csv"], {"standings.json", "timings.json", "standings.csv"}),
        (["-f", "html", "-f", "md"], {"index.html", "README.md"}),
    ],
)
def test_format_picks_the_files(tmp_path: Path, args: list[str], expected: set[str]) -> None:
    out = synthetic_output(tmp_path)
    result = leaderboard(str(out), *args)
    assert result.exit_code == 0, result.output
    assert {Path(p).name for p in result.output.split()} == expected
    pages = {"bots"} if "index.html" in expected else set()  # the bot pages come with the page
    assert {p.name for p in out.iterdir()} == expected | pages | {"matches.jsonl", TOURNAMENT_FILE}


def test_errors_name_the_file_and_exit_2(tmp_path: Path) -> None:
    out = synthetic_output(tmp_path)
    bad = leaderboard(str(out), "-f", "pdf")
    assert bad.exit_code == 2 and "pdf (choose from md, html, json, csv)" in bad.output
    missing = leaderboard(str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and missing.output == f"error: {tmp_path / 'nowhere'}: no such output folder\n"

    journal = out / "matches.jsonl"
    good = journal.read_text()
    journal.write_text(good + '{"id": "m0000')  # a torn last line (a killed run) is left out
    assert leaderboard(str(out), "-f", "json").exit_code == 0
    journal.write_text('{"id": "m0000\n' + good)
    damaged = leaderboard(str(out))
    assert damaged.exit_code == 2
    assert damaged.output.startswith(f"error: {journal}: line 1: not JSON (")
    assert damaged.output.endswith("it is not the last line: the journal is damaged\n")
    journal.unlink()
    no_journal = leaderboard(str(out))
    assert no_journal.exit_code == 2 and no_journal.output.startswith(f"error: {journal}: not found")
    journal.write_text(good)
    (out / TOURNAMENT_FILE).unlink()
    no_settings = leaderboard(str(out))
    assert no_settings.exit_code == 2 and no_settings.output.startswith(f"error: {out / TOURNAMENT_FILE}: not found")
    assert all(len(r.output.strip().splitlines()) == 1 for r in (missing, damaged, no_journal, no_settings))


def test_run_and_leaderboard_publish_the_same_bytes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    secret = "tok-never-in-tournament-json"
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        config_text(out, ["greedy", "cautious", "random"], rounds=1).replace(
            'name = "random"', f'name = "random"\ntoken = "{secret}"'
        )
    )
    proc = here("run", str(cfg), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "p50 ms" in proc.stdout and "p99 ms" in proc.stdout and "cautious" in proc.stdout
    written = files(out)
    tournament = (out / TOURNAMENT_FILE).read_text()
    assert json.loads(tournament)["scheduled"] == 3 and json.loads(tournament)["settings"]["duplicate"] is True
    for leak in (secret, "sample_bots", "command", "url", "127.0.0.1"):
        assert leak not in tournament
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(out / "matches.jsonl", copy)
    shutil.copy(out / TOURNAMENT_FILE, copy)
    shutil.copy(out / ".timings-state.json", copy)  # response times: the run's summary, not the journal
    assert leaderboard(str(copy)).exit_code == 0
    assert files(copy) == written
    doc = json.loads(written["standings.json"])
    assert doc["matches"] == 3 and doc["method"]["deals"] == 1  # one table, played in 3 seat rotations


def test_a_cooperative_leaderboard_has_no_rank_columns_and_no_seat_bias() -> None:
    settings = {
        "name": "coop",
        "game": "the_game",
        "options": {},
        "seed": 2,
        "players": 2,
        "format": "team",
        "rounds": None,
        "matches": 4,
        "deadline_ms": 1000,
        "on_fault": "fallback",
        "max_faults": 10,
        "bots": ["careful", "hasty"],
    }
    lines = []
    for deal in range(4):
        for b, (name, left) in enumerate((("careful", 10 + deal), ("hasty", 30 - deal))):
            rec = MatchRecord(
                id=f"m{2 * deal + b:06d}",
                index=2 * deal + b,
                seed=deal,
                bots=[name] * 2,
                scores=[left] * 2,
                ranks=[1, 1],
                lower_is_better=True,
                forfeited=[],
                faults=[],
                latency_ms=[[1.0], [1.0]],
                decisions=[1, 1],
                stats=[{}, {}],
                details={},
                duration_s=0.1,
            )
            lines.append({**rec.to_json(), "deal": deal})
    board = build_leaderboard({"settings": settings, "scheduled": 8}, lines, resamples=200)
    rows = board.document["standings"]
    assert [r["name"] for r in rows] == ["careful", "hasty"] and rows[0]["mean_score"] == 11.5
    assert rows[0]["matches"] == 4 and rows[0]["mean_rank_ci"] is None and rows[0]["rank_interval"] == [1, 1]
    assert board.document["seat_bias"] is None and board.document["method"]["deals"] == 4
    assert board.document["head_to_head"][0] == {
        "bot": "careful",
        "opponent": "hasty",
        "meetings": 4,
        "above": 4,
        "below": 0,
        "ties": 0,
        "share": 1.0,
        "share_ci": [0.5101, 1.0],  # Wilson 95 % over 4 meetings
    }
    readme = render_markdown(board)
    assert "Mean rank" not in readme and "Not applicable: in a cooperative game" in readme
    assert "ranked by mean score (lower is better)" in readme
    page = render_page(board.game, board.document)
    assert 'data-col="mean-rank"' not in page and '<p class="note" id="seat-bias">Not applicable' in page
    assert "Rating over deals" in page


def edit_tournament(out: Path, **settings: Any) -> None:
    doc = json.loads((out / TOURNAMENT_FILE).read_text())
    doc["settings"].update(settings)
    (out / TOURNAMENT_FILE).write_text(json.dumps(doc))


def test_a_re_render_refuses_bad_names_and_escapes_what_it_prints(tmp_path: Path) -> None:
    out = synthetic_output(tmp_path)
    edit_tournament(out, bots=["alpha", "beta", "<img src=x>", "delta"])
    result = leaderboard(str(out))
    assert result.exit_code == 2 and "bots" in result.output and "Traceback" not in result.output
    edit_tournament(out, bots=BOTS, name="[win](http://evil.example) <b>|x|")
    result = leaderboard(str(out))
    assert result.exit_code == 2 and "name" in result.output and "Traceback" not in result.output
    # what does get printed from a file is escaped all the same
    assert md("[win](http://evil.example) <b>|x|") == "\\[win\\](http://evil.example) \\<b\\>\\|x\\|"
    assert md("a\nb\x1b[31m") == "a b \\[31m" and md("nimmt_plus") == "nimmt_plus"
    edit_tournament(out, name="pub", sandbox="bwrap", seed_secret=True)
    assert leaderboard(str(out)).exit_code == 0
    readme = (out / "README.md").read_text()
    assert 'sandbox = "bwrap"' in readme and "seed_secret = true" in readme  # further settings, as TOML
    assert "sandbox" in (out / "index.html").read_text()


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(tmp_path: Path) -> None:
    from referee.report.publish import _cell

    for text in ('=HYPERLINK("http://x")', "+1+2", "-2+3", "@SUM(A1)", "\tx"):
        assert _cell(text) == "'" + text  # a text cell never starts a formula
    assert _cell(-2.5) == "-2.5" and _cell(3) == "3" and _cell(None) == "" and _cell(True) == "true"
    out = synthetic_output(tmp_path, disqualify="beta")
    assert leaderboard(str(out)).exit_code == 0
    table = list(csv.reader(io.StringIO((out / "standings.csv").read_text())))
    assert any(cell.startswith("-") for row in table[1:] for cell in row)  # negative numbers stay numbers


def test_a_nan_or_infinite_score_in_the_journal_is_a_clear_error(tmp_path: Path) -> None:
    out = synthetic_output(tmp_path)
    journal = out / "matches.jsonl"
    lines = journal.read_text().splitlines()
    first = json.loads(lines[0])
    for bad in ("NaN", "1e999"):
        text = json.dumps(first).replace(f"{first['scores'][0]}", bad, 1)
        journal.write_text("\n".join([text, *lines[1:]]) + "\n")
        result = leaderboard(str(out))
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert "line 1" in result.output or "finite" in result.output


def test_two_hundred_bots_stay_readable(tmp_path: Path) -> None:
    names = [f"bot{i:03d}" for i in range(200)]
    settings = {
        "name": "big",
        "game": "nimmt_plus",
        "options": {"variant": "plus", "zero_heads": 0},
        "seed": 3,
        "players": 4,
        "format": "random",
        "rounds": None,
        "matches": 2000,
        "deadline_ms": 1000,
        "on_fault": "fallback",
        "max_faults": 10,
        "bots": names,
    }
    rng = random.Random(4)
    lines = []
    for i in range(2000):
        bots = rng.sample(names, 4)
        scores = [float(rng.randint(0, 60) + names.index(b) // 20) for b in bots]
        rec = MatchRecord(
            id=f"m{i:06d}",
            index=i,
            seed=i,
            bots=bots,
            scores=scores,
            ranks=ranks_from_scores(scores, False),
            lower_is_better=False,
            forfeited=[],
            faults=[],
            latency_ms=[[1.0] for _ in bots],
            decisions=[1] * 4,
            stats=[{} for _ in bots],
            details={},
            duration_s=0.0,
        )
        lines.append(rec.to_json())
    board = build_leaderboard({"settings": settings, "scheduled": 2000}, lines, resamples=300)
    doc = board.document
    assert len(doc["standings"]) == 200 and len(doc["head_to_head"]) == 200 * 199
    assert len(doc["above"]["p"]) == 200 and len(doc["differences"]) == 199
    readme = render_markdown(board)
    h2h = readme.split("## Head-to-head")[1].split("## Seat bias")[0]
    assert h2h.count("\n| bot") == 30 and "The first 30 bots" in h2h
    page = render_page(board.game, doc)
    assert page.count('class="h2h"') == 30 * 29 and page.count("<tr data-bot=") >= 200
    assert len(page.encode()) < 3_000_000


def test_cooperative_columns_say_each_thing_once_and_notice_faults_show() -> None:
    settings = {
        "name": "coop",
        "game": "the_game",
        "options": {"pro": True},
        "seed": 2,
        "players": 2,
        "format": "team",
        "rounds": None,
        "matches": 4,
        "deadline_ms": 1000,
        "on_fault": "fallback",
        "max_faults": 10,
        "bots": ["careful", "hasty"],
    }
    lines = []
    for deal in range(4):
        for b, (name, left) in enumerate((("careful", deal), ("hasty", 30 - deal))):
            won = 1 if left == 0 else 0
            rec = MatchRecord(
                id=f"m{2 * deal + b:06d}",
                index=2 * deal + b,
                seed=deal,
                bots=[name] * 2,
                scores=[left] * 2,
                ranks=[1, 1],
                lower_is_better=True,
                forfeited=[],
                faults=[{"seat": 1, "phase": "end", "kind": "error", "detail": "x"}] if name == "hasty" else [],
                latency_ms=[[1.0], [1.0]],
                decisions=[1, 1],
                stats=[{"cards_left": left, "won": won, "excellent": 1, "lost_by_fire": 0}] * 2,
                details={},
                duration_s=0.1,
            )
            lines.append({**rec.to_json(), "deal": deal})
    board = build_leaderboard({"settings": settings, "scheduled": 8}, lines, resamples=200)
    readme = render_markdown(board)
    header = next(line for line in readme.splitlines() if line.startswith("| Rank"))
    assert "cards left" not in header and "win rate" not in header  # the score and the wins' share already
    assert "excellent rate" in header and "Start/end faults" in header
    assert "0 cards left" in readme and "pro = true" in readme and "True" not in readme
    rows = {r["name"]: r for r in board.document["standings"]}
    assert rows["hasty"]["notice_faults"] == 4 and rows["careful"]["notice_faults"] == 0
    page = render_page(board.game, board.document)
    assert 'data-col="notice-faults" data-v="4">4<' in page and 'class="ciaxis"' in page


def test_few_deals_warn_and_neighbours_get_a_difference_interval(tmp_path: Path) -> None:
    out = synthetic_output(tmp_path)
    assert leaderboard(str(out)).exit_code == 0
    doc = json.loads((out / "standings.json").read_text())
    m = doc["method"]
    assert m["few_deals"] and m["deals"] < 30 and m["precision"]["deals_needed"] > 0
    readme = (out / "README.md").read_text()
    assert "intervals are approximate" in readme and f"{m['precision']['deals_needed']} deals are needed" in readme
    assert "Overlapping intervals of two bots in the standings are not a test" in readme
    order = [r["name"] for r in doc["standings"]]
    assert [(d["bot"], d["next"]) for d in doc["differences"]] == list(itertools.pairwise(order))
    for d in doc["differences"]:
        lo, hi = d["mean_rank_diff_ci"]
        assert lo <= d["mean_rank_diff"] <= hi and d["separated"] == (lo > 0 or hi < 0)
        assert 0 <= d["p_above"] <= 1
    p = doc["above"]["p"]
    assert doc["above"]["bots"] == order and all(p[i][i] is None for i in range(len(order)))
    assert all(abs(p[i][j] + p[j][i] - 1) < 1e-3 for i in range(len(order)) for j in range(len(order)) if i != j)
    for r in doc["standings"]:
        lo, hi = r["rank_set"]
        assert lo <= r["rank"] <= hi  # the set holds the bot's own place
    page = (out / "index.html").read_text()
    assert 'id="few-deals"' in page and 'id="differences"' in page and 'id="p-above"' in page


def test_a_number_beyond_the_float_range_in_tournament_json_is_a_clean_error(tmp_path: Path) -> None:
    from referee.errors import LeaderboardError
    from referee.store.tournament_file import load_output_dir

    src = Path(__file__).resolve().parent.parent / "leaderboards" / "nimmt_plus"
    out = tmp_path / "out"
    out.mkdir()
    (out / "matches.jsonl").write_bytes((src / "matches.jsonl").read_bytes())
    text = (src / "tournament.json").read_text()
    (out / "tournament.json").write_text(text.replace('"seed": ', '"extra": 1e999, "seed": ', 1))
    with pytest.raises(LeaderboardError, match=r"tournament.json: not JSON \(1e999 is out of the range"):
        load_output_dir(out)
