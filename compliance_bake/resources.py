"""Where the bundled schemas, demo fixtures and templates live, and the user's cache folder.

In a wheel they are package data under `compliance_bake/_data/`; in a source checkout (editable
install) they are the top-level `schemas/` and `fixtures/` folders. The cache folder holds what
a later process may reuse instead of building again (the ZIP database's compact copy, the portal
template compiled); nothing there is ever needed.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    bundled = _PACKAGE / "_data" / name
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / name


def schemas_dir() -> Path:
    return data_dir("schemas")


def demo_fixtures_dir() -> Path:
    return data_dir("fixtures")


def is_demo_fixtures(folder: Path) -> bool:
    return folder.resolve() == demo_fixtures_dir().resolve()


def templates_dir() -> Path:
    return _PACKAGE / "templates"


def user_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/compliance-bake`, else `~/.cache/compliance-bake` (maybe missing)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "compliance-bake"
