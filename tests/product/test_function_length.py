"""No function in the bake's walk, its command or the targets runs over 60 lines.

A function that does not fit on a screen hides its order of steps; these modules hold the
longest walks of the package, split into their steps, and the test keeps them split. A
function's length is its `def` line to its last line (`end_lineno - lineno + 1`, decorators
not counted, the docstring counted).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "compliance_bake"
MEASURED = ("targets", "cli/bake_cmd.py", "bake.py")
LIMIT = 60


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """Each function (nested ones too) of `source` over `limit` lines, with its length."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append((node.name, length))
    return found


def _modules() -> list[Path]:
    paths: list[Path] = []
    for name in MEASURED:
        path = PACKAGE / name
        paths.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return paths


def test_the_measure_finds_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    assert long_functions(f"def short():\n    pass\n\ndef long():\n{body}") == [("long", LIMIT + 1)]
    method = body.replace("    ", "        ")
    assert long_functions(f"class C:\n    async def m(self):\n{method}") == [("m", LIMIT + 1)]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_over_the_limit(path: Path) -> None:
    found = long_functions(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(PACKAGE)}: over {LIMIT} lines: {found}"
