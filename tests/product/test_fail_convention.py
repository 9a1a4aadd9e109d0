"""One `fail` convention (docs/development.md, "Errors"): a function that makes an error returns
it, and the place that gives up raises it (`raise answer.fail(...)`, `raise file.fail(...)`), so
every exit from a function shows as a `raise` where it happens. A helper that raises for its
caller (annotated `NoReturn`, or a `fail` whose body raises) is the other convention, which this
test refuses. `cli/shared.finish` ends the process (sys.exit), and makes no error."""

from __future__ import annotations

import ast

from tests.support.package_source import found_in_package

ENDS_THE_PROCESS = {("cli/shared.py", "finish")}
ERROR_MAKERS = {"fail", "failed"}  # the names an error maker goes by


def raising_helpers(source: str) -> list[str]:
    """The functions of `source` that raise for their caller."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        returns = ast.unparse(node.returns) if node.returns is not None else ""
        raises = any(isinstance(inner, ast.Raise) for inner in ast.walk(node))
        if returns.endswith("NoReturn") or (node.name in ERROR_MAKERS and raises):
            found.append(node.name)
    return found


def test_the_measure_finds_both_kinds_of_raising_helper() -> None:
    source = (
        "def fail(what) -> Error:\n    raise Error(what)\n\n"
        "def refuse(what) -> NoReturn:\n    raise Error(what)\n\n"
        "def failed(what) -> Error:\n    return Error(what)\n"
    )
    assert raising_helpers(source) == ["fail", "refuse"]


def test_every_error_maker_returns_its_error() -> None:
    found = found_in_package(raising_helpers, ENDS_THE_PROCESS)
    assert not found, f"return the error and raise it at the place: {found}"
