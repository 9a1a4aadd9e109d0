"""Plays files as a DuckDB relation named `plays`, every value kept as text.

The relation has the columns `line, play_id, partner, state, zip, placed_at, enriched_at,
wager_type, stake, malformed, raw`. Values are read as VARCHAR and never coerced, so a ZIP that
lost its leading zero or an odd timestamp reaches the audit as written. A row that cannot be read
as a play (wrong column count, a NUL byte, an unterminated quote, a JSON line that is not an
object with the eight keys) is kept with `malformed` true, its file line in `line` and its text in
`raw`: counted and reported, never dropped.

The file comes checked from audit/plays_source.py (its format, its columns, the column map of
`--plays-columns`); the Parquet schema is checked here, where DuckDB describes it. Spark's twin is
spark_plays.py.

DuckDB's CSV reader (which reads JSON Lines too, a line as one column) has a `max_line_size`,
2,000,000 bytes by default. Past it, DuckDB 2.0 is not reliable: a record of 3 to 20 MB lands in
the rejects table (`LINE SIZE OVER MAXIMUM`), but one of about 30 MB and more is silently dropped
(no row, no reject: it vanished from the audit), or, without `store_rejects`, stops the scan with
"The Parallel CSV Reader currently does not support a full read on this file". A larger
`max_line_size` costs nothing on ordinary files; a record is then read whole, at about four times
its size in memory. So the audit sets it to `record_count.RECORD_LIMIT` (64 MiB), never hands
DuckDB a longer record (`plays_input.PlaysInput.readable`), and reconciles DuckDB's rows with its
own count of the file's records (`accounting`). The reader's `buffer_size` is 16 times
`max_line_size` unless given: 1 GiB, so a file up to that size would be one buffer, read by
one thread (a higher peak, and slower than two threads: docs/benchmarks.md). It is given:
`max_line_size`, at least 16 MiB.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compliance_bake.audit.plays_source import COLUMNS, PlaysFile, PlaysFormat, require_columns
from compliance_bake.inputs.database import quote_ident

REJECTS_TABLE = "plays_rejects"
_MIN_BUFFER = 16 << 20  # bytes: the reader's buffer, at least (`buffer_size`)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sizes(source: PlaysFile) -> str:
    """The reader's record and buffer sizes (module docstring)."""
    buffer = max(source.max_line_size, _MIN_BUFFER)
    return f"max_line_size = {source.max_line_size}, buffer_size = {buffer}"


def _csv_relation(source: PlaysFile, nul_check: bool) -> str:
    columns = "{" + ", ".join(f"{_literal(n)}: 'VARCHAR'" for n in source.header) + "}"
    # A NUL byte in any of the columns makes the row malformed; the reader itself lets it through.
    read = source.present()
    nul = " OR ".join(f"contains({quote_ident(c)}, chr(0))" for c in read)
    if not nul_check:
        nul = "false"
    # A row of empty fields (a line of commas, however many) holds no play: the reader passes
    # empty trailing fields, so it would otherwise be a play with no ZIP (malformed-zip).
    empty = f"coalesce({', '.join(quote_ident(c) for c in read)}) IS NULL"
    return f"""
        SELECT NULL::BIGINT AS line, {_select(source, quote_ident)},
               coalesce({nul}, false) OR {empty} AS malformed, NULL::VARCHAR AS raw
        FROM read_csv({_literal(str(source.path))}, header = true, columns = {columns},
                      auto_detect = false, delim = ',', quote = '"', escape = '"',
                      store_rejects = true, rejects_table = '{REJECTS_TABLE}',
                      rejects_scan = '{REJECTS_TABLE}_scan', {_sizes(source)})
    """


def _jsonl_relation(source: PlaysFile, nul_check: bool) -> str:
    # Each line is read whole (\x01 cannot appear unescaped in JSON, so a line holding one is
    # rejected by the reader and reported as malformed), then parsed by DuckDB's JSON functions.
    keys = ", ".join(_literal(c) for c in source.present())
    nul = "contains(text, chr(0))" if nul_check else "false"
    fields = ", ".join(
        f"CASE WHEN NOT bad THEN json_extract_string(text, {_literal(_json_path(s))}) END AS {c}"
        if s is not None
        else f"NULL::VARCHAR AS {c}"
        for c, s in source.read()
    )
    return f"""
        SELECT NULL::BIGINT AS line, {fields}, bad AS malformed,
               CASE WHEN bad THEN text END AS raw
        FROM (
          SELECT text, CASE
                   WHEN text IS NULL OR {nul} OR NOT json_valid(text) THEN true
                   WHEN json_type(text) <> 'OBJECT' THEN true
                   -- a key twice: readers disagree on which value is the play's
                   ELSE NOT list_has_all(json_keys(text), [{keys}])
                        OR list_unique(json_keys(text)) < len(json_keys(text))
                 END AS bad
          FROM read_csv({_literal(str(source.path))}, header = false,
                        columns = {{'text': 'VARCHAR'}}, auto_detect = false, delim = '\x01',
                        quote = '', escape = '', store_rejects = true,
                        rejects_table = '{REJECTS_TABLE}', rejects_scan = '{REJECTS_TABLE}_scan',
                        {_sizes(source)})
          WHERE text IS NOT NULL  -- a blank line is no row, as in CSV
        )
    """


def _parquet_relation(source: PlaysFile, types: dict[str, str]) -> str:
    def text(column: str) -> str:
        kind = types[column].upper()
        if kind.startswith("TIMESTAMP WITH TIME ZONE"):
            # An instant: written in the text form a CSV would hold (the session is in UTC).
            return f"strftime({quote_ident(column)}::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%fZ')"
        return f"CAST({quote_ident(column)} AS VARCHAR)"

    return f"""
        SELECT NULL::BIGINT AS line, {_select(source, text)},
               false AS malformed, NULL::VARCHAR AS raw
        FROM read_parquet({_literal(str(source.path))})
    """


def _json_path(key: str) -> str:
    """The JSON path of a top-level key, quoted."""
    return '$."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _select(source: PlaysFile, value: Any) -> str:
    """The eight plays columns, each read from its source column (`value` spells the read) or
    NULL when the source is not read for it."""
    return ", ".join(
        f"{value(s)} AS {c}" if s is not None else f"NULL::VARCHAR AS {c}" for c, s in source.read()
    )


def plays_relation(con: Any, source: PlaysFile, nul_check: bool = True) -> str:
    """The SELECT that reads the file as the `plays` relation (DuckDB).

    `nul_check=False` leaves out the search of every value for a NUL byte: only for a file that
    the record count (`record_count.RecordCount.nul`) found free of them.
    """
    if source.format is PlaysFormat.CSV:
        return _csv_relation(source, nul_check)
    if source.format is PlaysFormat.JSONL:
        return _jsonl_relation(source, nul_check)
    described = con.execute(
        f"DESCRIBE SELECT * FROM read_parquet({_literal(str(source.path))})"
    ).fetchall()
    types = {str(row[0]): str(row[1]) for row in described}
    require_columns(source.path, list(types), "the Parquet schema", source.columns)
    return _parquet_relation(source, types)


def parquet_rows(con: Any, path: Path) -> int:
    """The rows a Parquet file's footer declares (its row groups' counts)."""
    row = con.execute(
        f"SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata({_literal(str(path))})"
    ).fetchone()
    return int(row[0]) if row else 0


def drop_rejects(con: Any) -> None:
    """Forget the lines a previous scan rejected (before scanning another file)."""
    con.execute(f"DROP TABLE IF EXISTS {REJECTS_TABLE}")
    con.execute(f"DROP TABLE IF EXISTS {REJECTS_TABLE}_scan")


def rejected_relation() -> str:
    """The reader's rejected lines (CSV, JSON Lines) as malformed rows of the `plays` relation."""
    nulls = ", ".join(f"NULL::VARCHAR AS {c}" for c in COLUMNS)
    return f"""
        SELECT line::BIGINT AS line, {nulls}, true AS malformed, any_value(csv_line) AS raw
        FROM {REJECTS_TABLE} GROUP BY line
        UNION ALL
        -- the reader reports none for a table it never created (no line was rejected)
        SELECT NULL, {nulls}, true, NULL WHERE false
    """
