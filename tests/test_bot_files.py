"""Per-bot page names never collide on a case-insensitive disk and avoid Windows device names."""

from __future__ import annotations

import pytest

from referee.report.names import bot_files

pytestmark = pytest.mark.parallel


def test_names_differing_only_in_case_get_distinct_files() -> None:
    files = bot_files(["Ann", "ann", "Bob"])
    assert files["Bob"] == "bob"
    assert files["Ann"] != files["ann"]
    assert len({f.lower() for f in files.values()}) == 3
    assert files["Ann"].startswith("ann-") and len(files["Ann"]) == len("ann-") + 6


def test_reserved_device_names_are_suffixed_and_the_rule_is_stable() -> None:
    files = bot_files(["CON", "nul.v2", "console"])
    assert files["CON"].startswith("con-") and files["nul.v2"].startswith("nul.v2-")
    assert files["console"] == "console"
    assert bot_files(["CON", "nul.v2", "console"]) == files
