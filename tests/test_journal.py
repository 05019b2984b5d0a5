"""The journal module: hand-edited or hostile journals and tournament files are a clean
error naming the line and field, or a correct re-render; never a traceback (for
``referee leaderboard`` and for ``--resume``). Writing refuses NaN; a full disk cuts the
journal back to its last complete line."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from referee.cli.main import main
from referee.config.model import NAME_RE
from referee.errors import JournalError, OutputError
from referee.record import MatchRecord
from referee.store import journal as jn
from referee.store.line import quick_fits
from referee.store.timings import TIMINGS_STATE, Timings

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "leaderboards" / "nimmt_plus_duplicate"
LINES = (SAMPLE / "matches.jsonl").read_text().splitlines()[:8]
TOURNAMENT = json.loads((SAMPLE / "tournament.json").read_text())

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=10,
)
# what a hand edit can leave that json.dumps will not write: NaN, Infinity, deep nesting
raw_values = st.sampled_from(["NaN", "Infinity", "-Infinity", "[" * 5000 + "]" * 5000, "1e999", '"x"' * 1])


def output_with(tmp_path: Path, lines: list[str], tournament: Any) -> Path:
    out = tmp_path / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    (out / "matches.jsonl").write_text("".join(line + "\n" for line in lines))
    (out / "tournament.json").write_text(tournament if isinstance(tournament, str) else json.dumps(tournament))
    return out


def leaderboard(out: Path) -> Any:
    return CliRunner().invoke(main, ["leaderboard", str(out), "-f", "json"])


def assert_clean(result: Any) -> None:
    """Exit 0, or exit 2 with one line saying ``error: ...``; never a traceback."""
    if result.exit_code != 0:
        assert result.exit_code == 2, result.output + repr(result.exception)
        assert result.output.startswith("error: ") and result.output.count("\n") == 1, result.output
    else:
        assert result.exception is None


def mutate(line: str, path: list[str | int], value: str | None) -> str:
    """``line`` with the value at ``path`` replaced by the JSON text ``value`` (None: deleted)."""
    marker = "\x00MUT\x00"
    doc = json.loads(line)
    node = doc
    for i, key in enumerate(path[:-1]):
        if not _has(node[key], path[i + 1]):
            path = path[: i + 1]  # another line's shape: mutate the deepest part this line has
            break
        node = node[key]
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = marker
    return json.dumps(doc).replace(json.dumps(marker), value if value is not None else "")


def _has(node: Any, key: str | int) -> bool:
    if isinstance(node, dict):
        return key in node
    return isinstance(node, list) and isinstance(key, int) and key < len(node)


def paths(doc: Any, prefix: list[str | int]) -> list[list[str | int]]:
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for k, v in items:
        out.append(prefix + [k])
        if len(prefix) < 3:
            out += paths(v, prefix + [k])
    return out


LINE_PATHS = paths(json.loads(LINES[3]), [])


def test_the_sample_journal_is_valid_and_reads_line_by_line(tmp_path: Path) -> None:
    out = output_with(tmp_path, LINES, TOURNAMENT)
    reader = jn.JournalReader(out / "matches.jsonl")
    docs = list(reader)
    assert [d["index"] for d in docs] == [json.loads(x)["index"] for x in LINES]
    assert reader.good_end == (out / "matches.jsonl").stat().st_size
    assert all("deal" in d for d in docs) and jn.line_record(docs[0]).deal == docs[0]["deal"]
    assert_clean(leaderboard(out))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    where=st.integers(0, len(LINES) - 1),
    path=st.sampled_from(LINE_PATHS),
    value=st.one_of(st.none(), json_values.map(json.dumps), raw_values),
)
def test_a_mutated_journal_is_a_clean_error_or_a_correct_rerender(
    tmp_path: Path, where: int, path: list[str | int], value: str | None
) -> None:
    lines = list(LINES)
    lines[where] = mutate(lines[where], path, value)
    out = output_with(tmp_path, lines, TOURNAMENT)
    result = leaderboard(out)
    assert_clean(result)
    if result.exit_code != 0 and where < len(LINES) - 1:
        # a damaged line that is not the last names its line and field
        assert f"line {where + 1}" in result.output or "match" in result.output, result.output
    # resume reads the same journal: a JournalError, never a traceback
    try:
        for _ in jn.read_journal(out / "matches.jsonl"):
            pass
    except JournalError as exc:
        assert "line" in str(exc)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 2000), junk=st.binary(max_size=50))
def test_torn_or_garbled_bytes_at_the_end_are_dropped_or_refused_cleanly(tmp_path: Path, cut: int, junk: bytes) -> None:
    out = output_with(tmp_path, LINES, TOURNAMENT)
    journal = out / "matches.jsonl"
    data = journal.read_bytes()
    journal.write_bytes(data[: max(0, len(data) - cut)] + junk)
    assert_clean(leaderboard(out))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(paths(TOURNAMENT, [])),
    value=st.one_of(st.none(), json_values.map(json.dumps), raw_values),
)
@example(path=["settings", "options"], value='{"\\n": 1}')  # an option named "\n": once a two-line error
def test_a_mutated_tournament_file_is_a_clean_error_or_a_correct_rerender(
    tmp_path: Path, path: list[str | int], value: str | None
) -> None:
    text = mutate(json.dumps(TOURNAMENT), path, value)
    out = output_with(tmp_path, LINES, text)
    result = leaderboard(out)
    assert_clean(result)
    if result.exit_code == 0:  # accepted: the names it rendered are names the config would accept
        doc = json.loads((out / "standings.json").read_text())
        assert all(NAME_RE.match(r["name"]) for r in doc["standings"])


def test_errors_name_the_line_and_the_field(tmp_path: Path) -> None:
    cases = {
        ("scores", 0): ('"12"', "field scores[0]: must be a number"),
        ("scores", 1): ("1e999", "field scores[1]: must be a finite number"),
        ("index",): (None, "field index: missing"),
        ("ranks",): ("[1]", "field ranks: has 1 entries, expected 4"),
        ("details",): ("[" * 40 + "]" * 40, "field details: must be an object"),
        ("seed",): ("NaN", "not JSON"),
    }
    for path, (value, message) in cases.items():
        lines = list(LINES)
        lines[1] = mutate(lines[1], list(path), value)
        out = output_with(tmp_path, lines, TOURNAMENT)
        result = leaderboard(out)
        assert result.exit_code == 2 and "matches.jsonl: line 2" in result.output, result.output
        assert message in result.output, result.output
        with pytest.raises(JournalError, match="line 2"):
            list(jn.read_journal(out / "matches.jsonl"))
    deep = {**TOURNAMENT, "settings": {**TOURNAMENT["settings"], "bots": ["=HYPERLINK(1)", "b"]}}
    result = leaderboard(output_with(tmp_path, LINES, deep))
    assert result.exit_code == 2 and "settings: field bots[0]: not a bot name" in result.output


def record(**over: Any) -> MatchRecord:
    base: dict[str, Any] = json.loads(LINES[0])
    base.update(over)
    return jn.line_record(base)


def test_writing_refuses_nan_and_the_line_fits_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "matches.jsonl"
    with jn.JournalWriter(path) as w:
        w.write(record())
        with pytest.raises(JournalError, match="non-standard JSON"):
            w.write(record(scores=[float("nan"), 1.0, 2.0, 3.0]))
    docs = list(jn.read_journal(path))
    old = json.loads(LINES[0])
    old.pop("latency_ms", None)  # response times left the journal (timings.json keeps a summary)
    old["details"] = jn.journal_details(old["details"])  # the per-hand breakdown left it too
    assert "hands" not in old["details"] and old["details"]["variant"] == "plus"
    assert len(docs) == 1 and docs[0] == old
    assert path.read_text() == jn.dumps(old) + "\n", "the line is otherwise written byte for byte as before"


class _FullDisk:
    """A file whose writes fail with ENOSPC after ``room`` bytes (the file-write seam)."""

    def __init__(self, real: Any, room: int) -> None:
        self.real, self.room = real, room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            self.real.write(data[: self.room])  # a partial line reaches the disk, as on a real full disk
            self.real.flush()
            self.room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return int(self.real.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_full_disk_names_the_path_and_keeps_the_journal_whole(tmp_path: Path) -> None:
    """Injected at the file-write seam; tests/test_resume.py fills a real tmpfs."""
    path = tmp_path / "matches.jsonl"
    w = jn.JournalWriter(path)
    w.write(record())
    w._fh = _FullDisk(w._fh, room=100)  # type: ignore[assignment]
    with pytest.raises(OutputError) as err:
        w.write(record(id="m000001", index=1))
    assert str(err.value) == f"{path}: the disk is full (No space left on device)" and err.value.disk_full
    assert path.read_text() == jn.record_line(record()), "the partial line was cut back"
    w._fh = w._fh.real  # space freed: writing goes on
    w.write(record(id="m000001", index=1))
    w.close()
    assert [d["index"] for d in jn.read_journal(path)] == [json.loads(LINES[0])["index"], 1]


def test_response_times_leave_the_journal_for_a_summary_within_one_percent(tmp_path: Path) -> None:
    import random

    from referee.stats.standings import compute_timings

    rng = random.Random(3)
    recs = []
    for i in range(40):
        rec = record(id=f"m{i:06d}", index=i)
        rec.latency_ms = [[round(rng.lognormvariate(1, 1), 2) for _ in range(30)] for _ in rec.bots]
        recs.append(rec)
    t = Timings()
    for rec in recs[:25]:
        t.add(rec)
    t.save(tmp_path)
    resumed = Timings.load(tmp_path)  # a resumed run goes on from the saved summary
    assert resumed is not None
    for rec in recs[25:]:
        resumed.add(rec)
    names = sorted({b for r in recs for b in r.bots})
    got, exact = resumed.document(names), compute_timings(names, recs)
    assert got["matches"] == exact["matches"] == 40 and got["voided"] == exact["voided"]
    for name in names:
        g, e = got["bots"][name], exact["bots"][name]
        assert g["decisions"] == e["decisions"] and g["max_ms"] == e["max_ms"]
        for key in ("p50_ms", "p90_ms", "p99_ms"):
            assert abs(g[key] - e[key]) <= 0.01 * e[key] + 1e-9, (name, key, g[key], e[key])
    line = jn.record_line(recs[0])
    with_times = jn.dumps({**json.loads(line), "latency_ms": recs[0].latency_ms})
    assert "latency_ms" not in json.loads(line) and len(line) < len(with_times)
    (tmp_path / TIMINGS_STATE).write_text("{garbage")
    assert Timings.load(tmp_path) is None  # a damaged summary never stops a run


def reference_parse(raw: str) -> Any:
    """The plain reading: stdlib json, constants refused, then the detailed checks."""
    try:
        doc = json.loads(raw, parse_constant=jn.no_constant)
    except RecursionError as exc:
        raise JournalError("x: nested too deeply") from exc
    except ValueError as exc:
        raise JournalError(f"x: not JSON ({exc})") from exc
    return jn.validate_line(doc, "x")


def outcome(fn: Any, raw: str) -> tuple[str, Any]:
    try:
        return "ok", fn(raw)
    except JournalError as exc:
        return "error", str(exc)


# what orjson reads differently from the stdlib, and what the quick path must not wave through
edge_values = st.sampled_from(
    [
        str(2**64),
        str(2**64 - 1),
        str(-(2**63) - 1),
        str(2**200),
        str(2**300),
        "1e400",
        "NaN",
        "-Infinity",
        "0.12345678901234567890123",
        '"\\ud800"',
        '"a\\"[[[["',
        '"]]]}}"',
        "[" * 31 + "]" * 31,
        "[" * 32 + "1" + "]" * 32,
        "[" * 33 + "]" * 33,
        "{" + '"a":{' * 40 + "}" * 41,
        "true",
        "null",
        "[]",
    ]
)


def _without_latency(line: str) -> str:
    doc = json.loads(line)
    doc.pop("latency_ms", None)
    return json.dumps(doc)


FAST_LINES = [_without_latency(x) for x in LINES]  # today's lines: response times left the journal


def test_the_sample_lines_take_the_quick_path() -> None:
    for line in FAST_LINES:
        doc = json.loads(line)
        assert quick_fits(doc) and jn._shallow(line.encode())


@settings(max_examples=300, deadline=None)
@given(
    where=st.integers(0, len(LINES) - 1),
    path=st.sampled_from(
        [p for p in LINE_PATHS if p[0] != "latency_ms"]
        + [["details", "deep"], ["latency_ms"], ["restarts"], ["stats", 0, "x"]]
    ),
    value=st.one_of(st.none(), json_values.map(json.dumps), raw_values, edge_values),
)
def test_the_fast_reader_accepts_and_refuses_exactly_as_the_plain_reader(
    where: int, path: list[str | int], value: str | None
) -> None:
    try:
        line = mutate(FAST_LINES[where], path, value)
    except KeyError:  # deleting a field this line does not have: the line as it is
        line = FAST_LINES[where]
    fast, plain = (
        outcome(lambda r: jn.parse_line(r.encode("utf-8", "surrogatepass"), "x"), line),
        outcome(reference_parse, line),
    )
    assert fast == plain
    if fast[0] == "ok":  # the same values and the same types (an integer stays an integer)
        assert json.dumps(fast[1]) == json.dumps(plain[1])


def test_a_full_disk_under_a_transcript_part_is_one_error_and_close_does_not_raise_again(tmp_path: Path) -> None:
    """The transcript writer meets the full disk first: one OutputError naming the part,
    later writes refused with it, and closing (the end of the run) raises nothing more."""
    from referee.store import transcripts

    w = transcripts.Writer(tmp_path)
    w.write(record(id="m000000", index=0))
    part = next((tmp_path / transcripts.FOLDER).iterdir())
    w._fh = _FullDisk(w._fh, room=2)  # type: ignore[assignment]
    with pytest.raises(OutputError) as err:
        w.write(record(id="m000007", index=7))
    assert str(err.value) == f"{part}: the disk is full (No space left on device)"
    with pytest.raises(OutputError):
        w.write(record(id="m000002", index=2))
    w.__exit__(OutputError, err.value, None)  # as the run's `with` does while the error is in flight
    w.close()
    assert [line["id"] for _, line in transcripts.read_lines(tmp_path)] == ["m000000"], "the torn tail is dropped"
