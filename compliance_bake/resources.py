"""Where the bundled schemas, demo fixtures and templates live.

In a wheel they are package data under `compliance_bake/_data/`; in a source checkout (editable
install) they are the top-level `schemas/`, `fixtures/` and `docs/` folders. Nothing is kept per
user: what the package ships (the ZIP index included) is read from the installation itself.
"""

from __future__ import annotations

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


def manual_dir() -> Path:
    """The manual's pages (docs/*.md), which `compliance-bake docs` prints."""
    return data_dir("docs")


def is_demo_fixtures(folder: Path) -> bool:
    return folder.resolve() == demo_fixtures_dir().resolve()


def templates_dir() -> Path:
    return _PACKAGE / "templates"
