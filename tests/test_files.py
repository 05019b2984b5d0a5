"""store.files.atomic_write: the new bytes in one rename, the mode asked for, no temp left."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from referee.errors import OutputError
from referee.store import files
from referee.store.files import atomic_write

pytestmark = pytest.mark.parallel


def test_atomic_write_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "standings.json"
    path.write_text("old")
    atomic_write(path, "néw\n")
    assert path.read_bytes() == "néw\n".encode()
    atomic_write(path, b"\x00bytes", mode=0o600, sync=True)
    assert path.read_bytes() == b"\x00bytes"
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["standings.json"]


def test_a_stale_temp_file_does_not_stop_a_write(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    (tmp_path / "x.txt.tmp").write_text("left by a killed run")
    atomic_write(path, "fresh")
    assert path.read_text() == "fresh" and not (tmp_path / "x.txt.tmp").exists()


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "gone" / "x.txt"
    with pytest.raises(OutputError, match=f"^{path}: cannot write: No such file or directory$"):
        atomic_write(path, "nowhere to go")
    assert not path.exists()


def test_a_full_disk_leaves_the_old_file_and_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC injected at the write seam (tests/test_resume.py fills a real tmpfs)."""
    path = tmp_path / "README.md"
    path.write_text("old")

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "write", full)
    with pytest.raises(OutputError) as err:
        atomic_write(path, "new")
    monkeypatch.undo()
    assert str(err.value) == f"{path}: the disk is full (No space left on device)" and err.value.disk_full
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
