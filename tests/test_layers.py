"""The layers of DESIGN.md hold: the import-linter contract in pyproject.toml (each package
imports only the ones below it) passes, and no module of referee/ is part of an import
cycle, counting imports inside functions and under ``TYPE_CHECKING``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent


def test_the_layer_contract_is_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--config", "pyproject.toml"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("referee")
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "cyclic"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from cyclic import b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyclic import a\n")
    (pkg / "c.py").write_text("from cyclic import a\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert _cycles(grimp.build_graph("cyclic")) == [["cyclic.a", "cyclic.b"]]
    finally:
        sys.path.remove(str(tmp_path))
