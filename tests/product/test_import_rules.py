"""The house's rules hold: layered parts, only the CLI imports click or rich, no circle.

The rules are import-linter contracts in pyproject.toml (`[tool.importlinter]`); these tests run
them on the package and on copies broken on purpose, so a rule that could never fail is caught.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(package_root: Path) -> subprocess.CompletedProcess[str]:
    """Run the contracts on the `compliance_bake` found under `package_root`."""
    env = dict(os.environ, PYTHONPATH=str(package_root))
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        env=env,
        cwd=package_root,
        timeout=300,
    )


def _cycles(package: str) -> list[list[str]]:
    """Strongly connected groups of modules that import each other (directly or around)."""
    graph = grimp.build_graph(package, cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in edges[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(edges):
        if module not in order:
            visit(module)
    return found


def test_the_package_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_module_imports_back_into_a_circle() -> None:
    assert _cycles("compliance_bake") == []


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "compliance_bake", tmp_path / "compliance_bake")
    return tmp_path


def _append(root: Path, module: str, line: str) -> None:
    path = root / "compliance_bake" / module
    path.write_text(path.read_text() + f"\n{line}\n")


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("inputs/models.py", "from compliance_bake.report import layout", "nothing imports upward"),
        ("signing/canon.py", "from compliance_bake.targets import http", "nothing imports upward"),
        ("report/board.py", "import rich", "Only the CLI imports click or rich"),
        ("audit/run.py", "import click", "Only the CLI imports click or rich"),
    ],
)
def test_a_broken_rule_is_caught(package_copy: Path, module: str, line: str, contract: str) -> None:
    _append(package_copy, module, line)
    result = _lint(package_copy)
    assert result.returncode != 0
    assert f"{contract} BROKEN" in result.stdout


def test_a_circle_is_caught(package_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _append(package_copy, "cli/shared.py", "from compliance_bake.cli import main")
    monkeypatch.syspath_prepend(str(package_copy))
    for name in [m for m in sys.modules if m.startswith("compliance_bake")]:
        monkeypatch.delitem(sys.modules, name)
    cycles = _cycles("compliance_bake")
    assert any({"compliance_bake.cli.main", "compliance_bake.cli.shared"} <= set(c) for c in cycles)
