"""Secret seeds: unpredictable deals that anyone can check once the run is complete.

A tournament file without ``seed`` gets a 128-bit seed drawn by the referee
(``secrets``) when a run starts. Only its commitment, the SHA-256 of its 16 bytes
(big-endian), goes into ``tournament.json`` at the start; the seed itself is kept in
``OUTPUT/.secret-seed`` (mode 0600, written and synced before any match is played, so
``--resume`` after a ``kill -9`` deals the same cards) and written into
``tournament.json`` as ``seed`` when every match is played. Match seeds are then
HMAC-SHA256 of the fixture (``schedule.derive_seed``), so a bot that sees its own hand
cannot work back to the seed nor forward to another match's cards. The output folder
is never shown to bots (the sandbox hides it; keep it out of any bot's working folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from dataclasses import replace
from typing import Any

from referee.config.model import TournamentConfig
from referee.errors import JournalError

SEED_FILE = ".secret-seed"
_HEX32 = re.compile(r"^[0-9a-f]{32}\n?\Z")


def commitment(seed: int) -> str:
    """The published commitment to a secret ``seed``: SHA-256 of its 16 bytes, hex."""
    return hashlib.sha256(seed.to_bytes(16, "big")).hexdigest()


def resolve_seed(config: TournamentConfig, resume: bool) -> TournamentConfig:
    """``config`` with its secret seed in place: read back on ``resume``, else drawn and
    stored; a config whose seed was given is returned unchanged."""
    if not config.seed_secret:
        return config
    path = config.output / SEED_FILE
    if resume and path.exists():
        try:
            text = path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise JournalError(f"{path}: cannot read the secret seed of this run: {exc}") from exc
        if not _HEX32.match(text):
            raise JournalError(f"{path}: not a secret seed (32 hex digits); the run cannot be resumed")
        return replace(config, seed=int(text.strip(), 16))
    seed = secrets.randbits(128)
    config.output.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(SEED_FILE + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, f"{seed:032x}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return replace(config, seed=seed)


def published_settings(config: TournamentConfig, complete: bool) -> dict[str, Any]:
    """The settings for ``tournament.json``: with a secret seed, its commitment, and the
    seed itself only when the run is ``complete``."""
    settings = config.settings()
    if config.seed_secret:
        settings["seed_commitment"] = commitment(config.seed)
        if complete:
            settings["seed"] = config.seed
    return settings
