"""What the ladder tests share: a ladder tournament file over URL bots, and their names."""

from __future__ import annotations

from pathlib import Path


def write(tmp: Path, url: str, names: list[str], matches: int, file: str = "ladder.toml", **extra: str) -> Path:
    rows = [
        "[tournament]",
        'name = "ladder"',
        'game = "nimmt_plus"',
        "seed = 3",
        "players = 3",
        'format = "ladder"',
        f"matches = {matches}",
        *(f"{k} = {v}" for k, v in {"concurrency": "6", **extra}.items()),
        "[game]",
        'variant = "simple"',
        "[limits]",
        "deadline_ms = 30000",
    ]
    for n in names:
        rows += ["[[bot]]", f'name = "{n}"', f'url = "{url}{n}"']
    path = tmp / file
    path.write_text("\n".join(rows) + "\n")
    return path


def names(n: int) -> list[str]:
    return [f"b{i:02d}" for i in range(n)]
