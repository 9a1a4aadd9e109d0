"""The registry map (`--registry-map FILE`): where a database registry's four tables really are.

A database registry is read from four tables of the operator's database (docs/fixtures.md,
"A registry in a database"): `partner_state_licenses`, `regulatory_limits`,
`partner_geo_profiles` and `partner_profile_bindings`, each with the columns in `TABLES`. A
TOML map names another table (`table = "compliance.limits_v2"`, schema-qualified allowed) or a
query (`query = "SELECT ..."`, run as a subquery inside the registry's read-only transaction)
per table, other names for its columns (`columns = {state_code = "jurisdiction"}`), and the
list of regulated states (`states = ["MA", "NJ"]`; without it, the states of the licence and
limit rows). Every key it does not know is refused, so a misspelt table or column never falls
back to the default name silently.

The map travels with the source: `with_map` makes the `--registry` text a `MappedSource`, a
`str` that carries the map, so every command's core passes its one registry source to
`read_registry` as before, and nothing between the CLI and the reader knows of the map.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from compliance_bake.errors import InputError
from compliance_bake.inputs.files import FIXTURE_MAX_BYTES, read_regular_file
from compliance_bake.policy.rows import COLUMNS as LIMIT_COLUMNS

MAP_OPTION = "--registry-map"
LICENCES = "partner_state_licenses"
LIMITS = "regulatory_limits"
GEO = "partner_geo_profiles"
BINDINGS = "partner_profile_bindings"
# The columns read of each default table (others may exist and are not read). `id` of
# regulatory_limits is optional: when there, it orders the rows and names them in messages.
TABLES: Mapping[str, tuple[str, ...]] = {
    LICENCES: ("node_id", "state_code", "status"),
    LIMITS: ("id", *LIMIT_COLUMNS),
    GEO: ("node_id", "state_code", "age", "location", "zip_code"),
    BINDINGS: ("tree_node_id", "metadata_json"),
}
OPTIONAL: Mapping[str, tuple[str, ...]] = {LIMITS: ("id",)}
_STATE = re.compile(r"[A-Z]{2}")
_FIX = (
    "see `compliance-bake docs fixtures` (A registry in a database) for the map's keys "
    f"({MAP_OPTION})"
)


@dataclass(frozen=True, slots=True)
class TableSource:
    """Where one of the four tables is read: a table name or a query, and its columns' names."""

    name: str  # the default table's name, as messages call it
    table: str | None
    query: str | None
    columns: Mapping[str, str] = field(default_factory=dict)  # default name -> source name

    def column(self, name: str) -> str:
        return self.columns.get(name, name)

    @property
    def shown(self) -> str:
        """The table as messages name it: `regulatory_limits`, `regulatory_limits (table x)`,
        `regulatory_limits (query)`."""
        if self.query is not None:
            return f"{self.name} (query)"
        return self.name if self.table == self.name else f"{self.name} (table {self.table})"


@dataclass(frozen=True, slots=True)
class RegistryMap:
    tables: Mapping[str, TableSource]
    states: tuple[str, ...] | None = None  # None: the states of the licence and limit rows
    file: Path | None = None


DEFAULT_MAP = RegistryMap({name: TableSource(name, name, None) for name in TABLES})


class MappedSource(str):
    """A database registry source with the map its `--registry-map` names."""

    map_file: Path

    def __new__(cls, source: str, map_file: Path) -> MappedSource:
        made = super().__new__(cls, source)
        made.map_file = map_file
        return made


def with_map(source: str | None, map_file: Path) -> MappedSource:
    """`source` carrying `map_file`; InputError (exit 2) when the source is not a database."""
    if source is None or not source.startswith(("sqlite:", "postgresql://", "postgres://")):
        shown = "the bundled fixtures" if source is None else f"--registry {source}"
        raise InputError(
            f"{MAP_OPTION} {map_file}: names the tables of a database registry, and {shown} is "
            "a fixtures folder",
            "give --registry sqlite:PATH or --registry postgresql://..., or drop --registry-map",
        )
    return MappedSource(source, map_file)


def read_map(path: Path) -> RegistryMap:
    """The map of a TOML file; InputError (exit 2) naming the file and the key when it is not
    one."""
    missing = InputError(f"{MAP_OPTION} {path}: no such file", "give the map's path")
    raw = read_regular_file(path, max_bytes=FIXTURE_MAX_BYTES, what="registry map", missing=missing)
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text", "write the map as UTF-8 TOML") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not TOML: {exc}", "write the map as TOML") from None
    for key in doc:
        if key != "states" and key not in TABLES:
            raise InputError(
                f"{path}: {key!r} is not a key of a registry map",
                f"use states or a table of {', '.join(TABLES)}; {_FIX}",
            )
    tables = {name: _table(path, name, doc.get(name, {})) for name in TABLES}
    return RegistryMap(tables, _states(path, doc.get("states")), path)


def _table(path: Path, name: str, value: object) -> TableSource:
    where = f"{path}: [{name}]"
    if not isinstance(value, dict):
        raise InputError(f"{where}: not a table", f"write [{name}] with table, query or columns")
    for key in value:
        if key not in ("table", "query", "columns"):
            raise InputError(f"{where}.{key}: not a key of a table's map", _FIX)
    table, query = value.get("table"), value.get("query")
    if table is not None and query is not None:
        raise InputError(f"{where}: names both a table and a query", "keep one of them")
    if table is not None and (
        not isinstance(table, str) or not all(part for part in table.split("."))
    ):
        raise InputError(
            f"{where}.table: {table!r} is not a table name", "give NAME or SCHEMA.NAME"
        )
    if query is not None:
        if not isinstance(query, str) or not query.strip():
            raise InputError(f"{where}.query: not a query", "give one SELECT")
        query = query.strip().rstrip(";").strip()
    columns = value.get("columns", {})
    if not isinstance(columns, dict):
        raise InputError(f"{where}.columns: not a table", 'write columns = {default = "yours"}')
    for column, source in columns.items():
        if column not in TABLES[name]:
            raise InputError(
                f"{where}.columns.{column}: not a column {name} is read by",
                f"map one of {', '.join(TABLES[name])}",
            )
        if not isinstance(source, str) or not source:
            raise InputError(f"{where}.columns.{column}: not a column name", "give its name")
    if query is None and table is None:
        table = name
    return TableSource(name, table, query, dict(columns))


def _states(path: Path, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise InputError(f"{path}: states: not a non-empty array", 'write states = ["MA", "NJ"]')
    for item in value:
        if not isinstance(item, str) or not _STATE.fullmatch(item):
            raise InputError(f"{path}: states: {item!r} is not a state code", 'use e.g. "MA"')
    if len(set(value)) != len(value):
        raise InputError(f"{path}: states: a state is listed twice", "list each state once")
    return tuple(value)
