"""Where the registry is read from: `--registry SOURCE` (its alias `--fixtures DIR`).

SOURCE is a fixtures folder, `sqlite:PATH` or a `postgresql://` URL. `read_registry` is the
entry: it tells the form from the text and hands it to that form's reader, and every reader
returns the same `Fixtures` (the policy registry, the geo profiles, where it was read), so
nothing after it knows where the registry lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.inputs.fixtures import load_fixtures
from compliance_bake.inputs.models import Fixtures
from compliance_bake.inputs.redaction import redacted
from compliance_bake.inputs.registry_database import read_database_registry

REGISTRY_OPTION = "--registry"


class RegistryForm(StrEnum):
    FOLDER = "folder"
    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


def registry_form(source: str) -> RegistryForm:
    """The form of a registry source's text: `sqlite:` and `postgresql://` (`postgres://`)
    prefixes name a database, anything else is a folder."""
    if source.startswith("sqlite:"):
        return RegistryForm.SQLITE
    if source.startswith(("postgresql://", "postgres://")):
        return RegistryForm.POSTGRESQL
    return RegistryForm.FOLDER


BUNDLED = "the bundled demo fixtures"


def recorded_source(source: str) -> str:
    """Where the registry was read, as a record says it: the folder as given (the bundled demo
    set by that name, never the path it is installed at, so a demo bake's bytes are the same
    on every machine), or the database URL without its password."""
    from compliance_bake.resources import is_demo_fixtures

    if registry_form(source) is RegistryForm.FOLDER and is_demo_fixtures(Path(source)):
        return BUNDLED
    return redacted(source)


def folder_of(source: str | Path) -> Path | None:
    """The fixtures folder a source names, None for a database source."""
    if isinstance(source, Path):
        return source
    return Path(source) if registry_form(source) is RegistryForm.FOLDER else None


def read_registry(source: str | Path, wager_types: Sequence[str] = ()) -> Fixtures:
    """The registry of `source`, whatever its form (a database's states also permit
    `wager_types`, a profile's `[wagers]`); InputError (exit 2) when it cannot be read."""
    if isinstance(source, Path):
        return load_fixtures(source)
    if not source.strip():
        raise InputError(
            f"{REGISTRY_OPTION}: the source is empty",
            f"pass {REGISTRY_OPTION} DIR, a fixtures folder",
        )
    form = registry_form(source)
    if form is RegistryForm.FOLDER:
        return load_fixtures(Path(source))
    return read_database_registry(source, redacted(source), wager_types)
