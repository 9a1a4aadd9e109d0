"""Plays in a database: `sqlite:PATH` and `postgresql://`, the connection inputs/database.py's.

A database source names a table (`--plays-table`, schema-qualified allowed, each part quoted as
an identifier) or a query (`--plays-query`, one SELECT, run as a subquery inside a read-only
transaction): exactly one. The engines read it (audit/engines/database_read.py); this module
checks what the operator gave and says what the report records of it (`Provenance`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from compliance_bake.errors import InputError
from compliance_bake.inputs.database import (
    POSTGRES,
    SQLITE,
    Database,
    database_at,
    relation,
    unambiguous_url,
)

_FIX_ONE = "give --plays-table NAME or --plays-query SQL (exactly one) with a database source"


def is_database(text: str) -> bool:
    return text.startswith(SQLITE) or text.startswith(POSTGRES)


@dataclass(frozen=True, slots=True)
class DatabaseSource(Database):
    """A `--plays` database source and what to read from it."""

    table: str | None
    query: str | None

    @property
    def relation(self) -> str:
        """The FROM item: the quoted table, or the query as a subquery."""
        return relation(self.table, self.query, "plays_query")

    @property
    def selected(self) -> str:
        """What was read, for the report: the table, or the query's SHA-256."""
        if self.table is not None:
            return f"table {self.table}"
        assert self.query is not None
        return "query sha256:" + hashlib.sha256(self.query.encode("utf-8")).hexdigest()


def database_source(text: str, table: str | None, query: str | None) -> DatabaseSource:
    """Check a database `--plays` with its table or query; bad input raises InputError."""
    kind = "sqlite" if text.startswith(SQLITE) else "postgresql"
    if kind == "postgresql":
        unambiguous_url(text)
    shown = Database(text, kind).shown
    if (table is None) == (query is None):
        raise InputError(f"{shown}: a database source needs a table or a query", _FIX_ONE)
    if table is not None and not all(part for part in table.split(".")):
        raise InputError(f"--plays-table {table!r}: not a table name", "give NAME or SCHEMA.NAME")
    if query is not None and not query.strip():
        raise InputError("--plays-query: the query is empty", "give one SELECT")
    if query is not None:
        query = query.strip().rstrip(";").strip()
    return DatabaseSource(text, database_at(text).kind, table, query)


def no_database_options(table: str | None, query: str | None) -> None:
    if table is not None or query is not None:
        raise InputError(
            "--plays-table and --plays-query read a database source only",
            "give --plays sqlite:PATH or --plays postgresql://..., or drop them",
        )


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where the plays came from, as the report records it (no password)."""

    source: str
    selected: str
    server: str

    def as_json(self) -> dict[str, str]:
        return {"source": self.source, "read": self.selected, "server": self.server}
