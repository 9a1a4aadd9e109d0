"""A missing file is worded once, where it is read: `read_regular_file(..., missing=...)` takes
the caller's words (what the file is, and how to give it), and `read_if_present` answers None for
a file whose absence is an answer. So no caller of `read_regular_file` wraps it in an `except` of
FileNotFoundError (or NotADirectoryError) with a wording of its own, where the callers' words
for one job would drift apart. The package's source is parsed, and every
`try` whose body calls `read_regular_file` and whose handlers catch either error is listed; only
the opener itself (`inputs/files.py`, where `read_if_present` is that catch) may hold one.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "compliance_bake"
MISSING = {"FileNotFoundError", "NotADirectoryError"}
OPENER = Path("inputs/files.py")


def _names(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return {item.id for item in items if isinstance(item, ast.Name)}


def _calls_reader(body: list[ast.stmt]) -> bool:
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name == "read_regular_file":
                return True
    return False


def own_missing_wordings(package: Path) -> list[str]:
    """`file:line` of every `try` around a `read_regular_file` call that catches a missing file."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package) == OPENER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try) or not _calls_reader(node.body):
                continue
            if any(_names(handler.type) & MISSING for handler in node.handlers):
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    return found


def test_no_caller_words_a_missing_file_itself() -> None:
    assert own_missing_wordings(PACKAGE) == []


def test_the_check_sees_a_caller_that_words_it_itself(tmp_path: Path) -> None:
    (tmp_path / "reader.py").write_text(
        "def read(path):\n"
        "    try:\n"
        "        return read_regular_file(path, max_bytes=1, what='x')\n"
        "    except (OSError, FileNotFoundError):\n"
        "        raise InputError(f'{path}: no such file')\n",
        encoding="utf-8",
    )
    assert own_missing_wordings(tmp_path) == ["reader.py:2"]
