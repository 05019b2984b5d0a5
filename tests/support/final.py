"""What the final's tests share: the nimmt sample bots (random, greedy, cautious) as real
HTTP servers, one process per strategy answering at any path, and a ladder file whose
bots are several names on each, so the field has bots of three strengths."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from referee.bots.cage.process import free_port
from tests.support.cli import ROOT
from tests.support.tournament import wait_port

STRATEGIES = ("cautious", "greedy", "random")


@contextmanager
def sample_servers() -> Iterator[dict[str, str]]:
    """Strategy -> the URL of its running sample bot; stopped on exit."""
    procs: list[subprocess.Popen[bytes]] = []
    urls: dict[str, str] = {}
    try:
        for s in STRATEGIES:
            port = free_port()
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "sample_bots.nimmt", s, "--port", str(port)],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            wait_port(port, procs[-1], timeout_s=20)
            urls[s] = f"http://127.0.0.1:{port}/"
        yield urls
    finally:
        for p in procs:
            p.kill()
            p.wait(5)


def field(urls: dict[str, str], per: int = 3) -> list[tuple[str, str]]:
    """(name, url) of ``per`` bots of each strategy, interleaved: c0, g0, r0, c1, ..."""
    return [(f"{s[0]}{i}", f"{urls[s]}{s[0]}{i}") for i in range(per) for s in STRATEGIES]


def write_final(
    tmp: Path, bots: list[tuple[str, str]], matches: int, final: str, file: str = "final.toml", **extra: str
) -> Path:
    """A closed ladder season of ``matches`` with ``final`` (a TOML inline table, "" for none)."""
    rows = [
        "[tournament]",
        'name = "final"',
        'game = "nimmt_plus"',
        "players = 3",
        f"matches = {matches}",
        *(
            f"{k} = {v}"
            for k, v in {"format": '"ladder"', "concurrency": "4", "closed": "true", "top": "2", **extra}.items()
            if v
        ),
        *([f"final = {final}"] if final else []),
        "[game]",
        'variant = "simple"',
        "[limits]",
        "deadline_ms = 30000",
    ]
    for name, url in bots:
        rows += ["[[bot]]", f'name = "{name}"', f'url = "{url}"']
    path = tmp / file
    path.write_text("\n".join(rows) + "\n")
    return path
