"""The package's modules as text, for the product tests that read the code itself (the fail
convention, the figures in docstrings)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "compliance_bake"


def found_in_package(
    measure: Callable[[str], Iterable[str]], allowed: Collection[tuple[str, str]] = ()
) -> list[str]:
    """`module: item` for each item `measure` finds in a module's text, but the allowed
    (module, item) pairs; a module is named by its path below compliance_bake/."""
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        items = measure(path.read_text(encoding="utf-8"))
        found += [f"{module}: {item}" for item in items if (module, item) not in allowed]
    return found
