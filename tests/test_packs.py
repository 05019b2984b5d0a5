"""Replay packs written as matches finish: real ``referee`` runs of the sample 6 nimmt! bots
(in this process, but for the killed one) at concurrency 1 and 8 leave byte-identical
packs (every match, in index order, the docs the rules give); a run killed with ``kill -9``,
its last pack torn mid-line, then resumed, leaves them too. The writer puts a match that
comes after a higher index in its place, and a pack never holds more than ``PER_PACK``
matches."""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import pytest

from referee.audit.verify import verify
from referee.run.fresh import move_aside
from referee.store import packs, replay_data
from referee.store.matches import load_match
from tests.support.cli import run_here, start
from tests.support.tournament import NIMMT, journal, kill9_after, write_config

pytestmark = pytest.mark.parallel

BOTS = [
    ("greedy", NIMMT + ["greedy"]),
    ("cautious", NIMMT + ["cautious"]),
    ("random", NIMMT + ["random"]),
    ("greedy2", NIMMT + ["greedy"]),
]


def pack_bytes(out: Path) -> dict[str, bytes]:
    """Every pack file of ``out`` by name."""
    return {p.name: p.read_bytes() for p in packs.pack_files(out)}


def run(tmp: Path, name: str, concurrency: int) -> Path:
    """A finished run of 12 matches at ``concurrency`` into ``tmp/name``."""
    folder = tmp / name
    folder.mkdir()
    config = write_config(folder, BOTS, rounds=3, concurrency=concurrency)
    run_here(config, folder / "out")
    return folder / "out"


def test_packs_are_byte_identical_at_any_concurrency_and_after_kill_9_and_resume(tmp_path: Path) -> None:
    one = run(tmp_path, "c1", 1)
    eight = run(tmp_path, "c8", 8)
    recs = journal(one)
    assert len(recs) == 12 and journal(eight) == recs
    assert pack_bytes(one) == pack_bytes(eight) and list(pack_bytes(one)) == ["000000.js"]
    entries = list(packs.read_all(one))
    assert [(mid, i) for _, mid, i, _ in entries] == [(r["id"], r["index"]) for r in recs]
    for _, mid, _, b64 in entries[:3]:  # 6 nimmt! has replay.js: the format-1 data but its views and timings
        expected = replay_data.make(load_match(one, mid))
        for key in ("ms", "views", "start", "sent", "after", "legal"):
            del expected[key]
        assert packs.inflate(b64) == expected
        assert zlib.decompress(base64.b64decode(b64), -15) == replay_data.encode(expected)
    assert not (one / "replays" / "data").exists(), "publishing made replay data beside the packs"

    killed = tmp_path / "killed"
    killed.mkdir()
    config = write_config(killed, BOTS, rounds=3, concurrency=2)
    out = killed / "out"
    at = kill9_after(start("run", str(config), "-q"), out, 7)
    assert at < 12, "killed before the end"
    torn = packs.pack_files(out)
    assert torn, "no pack line written before the kill (the window holds 4 matches)"
    raw = torn[-1].read_bytes()
    torn[-1].write_bytes(raw + raw[: len(raw) // 3].split(b"\n")[0][:-40])  # half a line, no newline
    assert packs.read_pack(torn[-1])[1] is False
    run_here(config, out, "--resume")
    assert journal(out) == recs
    assert pack_bytes(out) == pack_bytes(one)

    # verify checks the packs against the journal and the transcripts
    assert verify(out).ok
    pack = packs.pack_files(out)[0]
    kept = pack.read_bytes().split(b"\n")
    pack.write_bytes(b"\n".join([kept[1], kept[0], *kept[2:-2], b""]))  # two swapped, the last gone
    found = "\n".join(str(p) for p in verify(out).problems)
    assert "out of index order" in found and f"{recs[-1]['id']}: packs: no entry in the replay packs" in found, found


def line(index: int) -> bytes:
    return packs.encode_line(f"m{index:06d}", index, {"id": f"m{index:06d}", "index": index})


def test_a_late_match_is_put_in_its_place_and_a_pack_holds_one_block(tmp_path: Path) -> None:
    order = [3, 1, 2, 0, 7, 501, 499, 5, 4, 6, 500, 1000, 8]  # 0 and 4 come past the window of 2
    with packs.PackWriter(tmp_path, resume=False, window=2) as w:
        for i in order:
            w.add(i, line(i))
    files = pack_bytes(tmp_path)
    assert sorted(files) == ["000000.js", "000001.js", "000002.js"]
    assert files["000000.js"] == b"".join(line(i) for i in sorted(order) if i < 500)
    assert files["000001.js"] == line(500) + line(501)
    # resume: a torn line cut, an entry whose match is not in the journal dropped
    path = tmp_path / packs.FOLDER / "000000.js"
    path.write_bytes(path.read_bytes() + line(9)[:30])
    journal_ids = {i: f"m{i:06d}" for i in order if i != 5}
    assert packs.repair(tmp_path, journal_ids) == set(journal_ids)
    assert path.read_bytes() == b"".join(line(i) for i in sorted(order) if i < 500 and i != 5)
    assert packs.read_pack(path)[1]


def test_a_fresh_start_drops_the_old_packs_and_fresh_moves_them_aside(tmp_path: Path) -> None:
    with packs.PackWriter(tmp_path, resume=False) as w:
        w.add(3, line(3))
    with packs.PackWriter(tmp_path, resume=True) as w:  # --resume keeps them
        pass
    assert pack_bytes(tmp_path) == {"000000.js": line(3)}
    moved = move_aside(tmp_path, "2026-01-01T00-00-00Z")  # --fresh: with the rest of the season
    assert moved is not None and (moved / packs.FOLDER / "000000.js").read_bytes() == line(3)
    assert not (tmp_path / packs.FOLDER).exists()
    (tmp_path / packs.FOLDER).mkdir(parents=True)
    (tmp_path / packs.FOLDER / "000001.js").write_bytes(line(700))
    with packs.PackWriter(tmp_path, resume=False) as w:  # a run started again without --resume
        w.add(1, line(1))
    assert pack_bytes(tmp_path) == {"000000.js": line(1)}
