"""A scheduled match and its seed.

Every match seed comes from the tournament seed and the fixture index alone (for team
and duplicate deals, the deal index), so the same config always deals the same cards.
A seed written in the file is hashed with SHA-256 (``referee/{seed}/{index}``); a secret
seed drawn by the referee is an HMAC-SHA256 key over ``referee/{index}``.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass


@dataclass(frozen=True)
class Fixture:
    """One scheduled match: its index, id, seed and the bot (by index) in each seat."""

    index: int
    id: str
    seed: int
    seats: tuple[int, ...]
    deal: int | None = None  # the deal index where several fixtures share a deal
    order: int | None = None  # grow: the journal's ``index``, from the names (``index`` is the position)


def derive_seed(tournament_seed: int, index: int, secret: bool = False) -> int:
    """The seed of fixture ``index`` (63 bits, stable across platforms and versions);
    with ``secret``, keyed by the 128-bit secret seed (HMAC-SHA256)."""
    if secret:
        key = tournament_seed.to_bytes(16, "big")
        digest = hmac.new(key, f"referee/{index}".encode(), hashlib.sha256).digest()
    else:
        digest = hashlib.sha256(f"referee/{tournament_seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def derive_key_seed(tournament_seed: int, key: str, secret: bool = False) -> int:
    """The seed of the fixture with name ``key`` in a tournament that grows (63 bits)."""
    if secret:
        mac = hmac.new(tournament_seed.to_bytes(16, "big"), f"referee/grow/{key}".encode(), hashlib.sha256)
        digest = mac.digest()
    else:
        digest = hashlib.sha256(f"referee/{tournament_seed}/grow/{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def key_bits(text: str, bits: int) -> int:
    """``bits`` bits of the SHA-256 of ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> (64 - bits)


def match_id(index: int) -> str:
    """The id of the match with fixture ``index``: m000042."""
    return f"m{index:06d}"
