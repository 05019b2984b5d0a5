"""Secret seeds: a tournament file without ``seed`` gets a 128-bit seed drawn by the
referee (``secrets``) when a run starts.

The seed is kept in ``OUTPUT/.secret-seed`` (mode 0600, synced before any match is
played, so ``--resume`` after a ``kill -9`` deals the same cards); what is published of
it, and when, is ``report.policy``'s. Match seeds are HMAC-SHA256 of the fixture
(``schedule.derive_seed``), so a bot that sees its own hand cannot work back to the seed.
The output folder is never shown to bots (the sandbox hides it).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import replace

from referee.config.model import TournamentConfig
from referee.errors import JournalError
from referee.schedule.registry import format_class
from referee.store.files import atomic_write
from referee.store.journal import JOURNAL
from referee.store.tournament_file import recorded_schedule_version

SEED_FILE = ".secret-seed"
_HEX32 = re.compile(r"^[0-9a-f]{32}\n?\Z")


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
    atomic_write(path, f"{seed:032x}\n", mode=0o600, sync=True)
    return replace(config, seed=seed)


def resolve_schedule_version(config: TournamentConfig, resume: bool) -> TournamentConfig:
    """``config`` dealing the random tables its journal was made with: on ``resume`` of a
    random tournament, the ``schedule_version`` its ``tournament.json`` recorded (absent: 1,
    the tables drawn before balanced tables); else this referee's."""
    if not resume or not format_class(config).versioned_tables or not (config.output / JOURNAL).exists():
        return config
    version = recorded_schedule_version(config.output)
    return config if version is None else replace(config, schedule_version=version)
