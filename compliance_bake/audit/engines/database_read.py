"""A database's plays read through ADBC: the engines' one read of a `sqlite:` or `postgresql://`
source, over the connection of inputs/database.py.

Every row counts: each audited column arrives as text, whatever its type (a number as its text,
an instant as ISO 8601 in UTC), a NULL as NULL; a SQLite BLOB in an audited column makes the row
a malformed-row play. The rows are an Arrow stream that DuckDB scans without a copy (docs/design.md
says why these readers); the row count is taken in the same read-only transaction as the rows and
checked against the plays the audit counted. A row is named by its play id and, for a SQLite
table, its `rowid` (`row_key`). `plays_sql` makes the `plays` relation of the rows read, on DuckDB
(the stream) or Spark (the JDBC read of the same SELECT).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compliance_bake.audit.columns import AUDITED, ColumnMap
from compliance_bake.audit.database import DatabaseSource, Provenance
from compliance_bake.errors import SourceError
from compliance_bake.inputs.database import Session, begin_read_only, failing, quote_ident

ROW_KEY = "row_key"


@dataclass
class DatabaseRead:
    """An open read: the Arrow stream of the plays, the row count taken in the same
    transaction, and the provenance. `close` ends the transaction and the connection."""

    stream: Any  # None when `open_read` was asked for no stream (Spark reads through JDBC)
    rows: int | None  # None when not counted (the PostgreSQL engine's count is its answer's)
    provenance: Provenance
    row_keys: bool
    select: str  # the SELECT the stream reads (`_select`)
    _session: Any  # kept open: the stream is its statement's (inputs/database.Session)

    def close(self) -> None:
        self._session.close()


def open_read(
    source: DatabaseSource, columns: ColumnMap, stream: bool = True, count: bool = True
) -> DatabaseRead:
    """Connect, check the columns, count the rows (unless `count` is false) and open the stream
    of the plays (unless `stream` is false), all in one read-only transaction. Bad input raises
    InputError; a source that fails, SourceError."""
    session = Session(source)
    try:
        server = begin_read_only(session)
        what = "cannot read the table" if source.table else "the query failed"
        fix = (
            "check the table's name and schema (--plays-table SCHEMA.NAME)"
            if source.table
            else "give one read-only SELECT that runs on its own (--plays-query)"
        )
        with failing(source, what, fix):
            types = session.columns(f"SELECT * FROM {source.relation} LIMIT 0")
        columns.missing(f"{source.shown} ({source.selected})", list(types))
        key = source.kind == "sqlite" and source.table is not None and _has_rowid(session, source)
        with failing(source, what, fix):
            rows = (
                int(session.rows(f"SELECT count(*) FROM {source.relation}")[0][0])
                if count
                else None
            )
            select = _select(source, columns, types, key)
            plays = session.stream(select) if stream else None
        provenance = Provenance(source.shown, source.selected, server)
        return DatabaseRead(plays, rows, provenance, key, select, session)
    except BaseException:
        session.close()
        raise


def _has_rowid(session: Session, source: DatabaseSource) -> bool:
    """Whether the SQLite table has a rowid (not a view, not WITHOUT ROWID)."""
    try:
        session.columns(f"SELECT rowid FROM {source.relation} LIMIT 0")
    except Exception:
        return False
    return True


def check_count(read: DatabaseRead, counted: int) -> None:
    """The audit counted every row the source has, or the run fails (exit 3)."""
    if counted != read.rows:
        raise SourceError(
            f"{read.provenance.source}: the audit counted {counted:,} plays but the "
            f"{read.provenance.selected} holds {read.rows:,} rows",
            "rerun the audit; report it if it happens again",
        )


def _text(kind: str, column: str, arrow_type: str) -> str:  # arrow_type: DuckDB's name
    """A column as text: an instant as ISO 8601 in UTC, anything else its own text."""
    ident = quote_ident(column)
    if kind == "postgresql":
        if arrow_type == "TIMESTAMP WITH TIME ZONE":
            return f"to_char({ident} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
        return f"CAST({ident} AS TEXT)"
    return f"CASE WHEN typeof({ident}) = 'blob' THEN NULL ELSE CAST({ident} AS TEXT) END"


def _select(source: DatabaseSource, columns: ColumnMap, types: dict[str, str], key: bool) -> str:
    """The SELECT that reads the audited columns as text, and the row's key and flags.

    SQLite's reader takes a column's type from its first rows, so a column whose first rows are
    NULL would stop the read at its first text: there every value is read as text with NULL as
    '' and a bit per column of `nulls` says which were NULL (restored by `plays_sql`)."""
    fields = [(f, columns.source(f)) for f in AUDITED]
    rel = source.relation
    if source.kind == "postgresql":
        values = ", ".join(f"{_text('postgresql', c, types[c])} AS {f}" for f, c in fields)
        return f"SELECT NULL::BIGINT AS {ROW_KEY}, {values}, 0 AS nulls, '' AS blobs FROM {rel}"
    values = ", ".join(f"ifnull({_text('sqlite', c, types[c])}, '') AS {f}" for f, c in fields)
    ident = [quote_ident(c) for _, c in fields]
    nulls = " | ".join(
        f"(({i} IS NULL OR typeof({i}) = 'blob') << {n})" for n, i in enumerate(ident)
    )
    blobs = " || ".join(
        f"CASE WHEN typeof({i}) = 'blob' THEN '{f} ' ELSE '' END"
        for (f, _), i in zip(fields, ident, strict=True)
    )
    row_key = "rowid" if key else "0"
    return f"SELECT {row_key} AS {ROW_KEY}, {values}, {nulls} AS nulls, {blobs} AS blobs FROM {rel}"


def plays_sql(view: str, row_keys: bool, spark: bool = False) -> str:
    """The `plays` relation over the rows of `_select` as the view `view` (DuckDB: the Arrow
    stream; Spark: the JDBC read): the NULLs restored, a BLOB's row malformed."""
    fields = []
    for n, f in enumerate(AUDITED):
        bit = f"shiftright(nulls, {n}) & 1" if spark else f"(nulls >> {n}) & 1"
        fields.append(f"CASE WHEN {bit} = 1 THEN NULL ELSE {f} END AS {f}")
    by_name = dict(zip(AUDITED, fields, strict=True))
    line = f"CAST({ROW_KEY} AS BIGINT)" if row_keys else "CAST(NULL AS BIGINT)"
    text = "STRING" if spark else "VARCHAR"
    return f"""
        SELECT {line} AS line, {by_name["play_id"]}, {by_name["partner"]}, {by_name["state"]},
               {by_name["zip"]}, CAST(NULL AS {text}) AS placed_at, {by_name["enriched_at"]},
               CAST(NULL AS {text}) AS wager_type, CAST(NULL AS {text}) AS stake,
               blobs <> '' AS malformed,
               CASE WHEN blobs <> '' THEN 'a BLOB, not text, in ' || trim(blobs) END AS raw
        FROM {view}
    """
