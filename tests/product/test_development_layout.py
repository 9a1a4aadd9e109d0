"""docs/development.md shows the package as it is: a row for every package, and no row for a
package that is gone, so a newcomer's map of the rooms stays true as they are renamed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "compliance_bake"


def _packages() -> set[str]:
    return {
        f"{init.parent.relative_to(PACKAGE).as_posix()}/"
        for init in PACKAGE.rglob("__init__.py")
        if init.parent != PACKAGE
    }


def _rows() -> set[str]:
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    table = text.split("One line per package", 1)[1].split("\n\n", 2)[1]
    return set(re.findall(r"^\| `([\w/]+/)` \|", table, flags=re.M))


def test_every_package_has_its_row_and_every_row_its_package() -> None:
    rows = _rows() - {"templates/"}  # data, named in the table but not a package
    assert rows == _packages(), (sorted(_packages() - rows), sorted(rows - _packages()))


def test_both_sides_are_read() -> None:
    """The comparison is not vacuous: each side holds the nested parts, found by the walk and
    by the table's rows."""
    assert {"cli/", "verify/rules/", "audit/engines/"} <= _packages() & _rows()
