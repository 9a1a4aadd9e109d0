"""Plays files as a DuckDB relation named `plays`, every value kept as text.

The relation has the columns `line, play_id, partner, state, zip, placed_at, enriched_at,
wager_type, stake, malformed, raw`. Values are read as VARCHAR and never coerced, so a ZIP that
lost its leading zero or an odd timestamp reaches the audit as written. A row that cannot be read
as a play (wrong column count, a NUL byte, an unterminated quote, a JSON line that is not an
object with the eight keys) is kept with `malformed` true, its file line in `line` and its text in
`raw`: counted and reported, never dropped.

The format follows the file name: `.csv`, `.jsonl` or `.ndjson`, `.parquet` (or is given). The
CSV header (or the first JSON line, or the Parquet schema) must name the eight columns; extra
columns are ignored. With a column map (`--plays-columns`, audit/columns.py) each field is read
from its mapped column, only the five audited fields must exist, and the others are NULL.

DuckDB's CSV reader (which reads JSON Lines too, a line as one column) has a `max_line_size`,
2,000,000 bytes by default. Past it, DuckDB 2.0 is not reliable: a record of 3 to 20 MB lands in
the rejects table (`LINE SIZE OVER MAXIMUM`), but one of about 30 MB and more is silently dropped
(no row, no reject: it vanished from the audit), or, without `store_rejects`, stops the scan with
"The Parallel CSV Reader currently does not support a full read on this file". A larger
`max_line_size` costs nothing on ordinary files; a record is then read whole, at about four times
its size in memory. So the audit sets it to `record_count.RECORD_LIMIT` (64 MiB), never hands
DuckDB a longer record (`plays_input.PlaysInput.readable`), and reconciles DuckDB's rows with its
own count of the file's records (`accounting`). The reader's `buffer_size` is 16 times
`max_line_size` unless given: 1 GiB, so a 1 GiB file was one buffer, read by one thread (on
10,000,000 plays: a peak of 1.1 GiB, and 2.5 s where 1.1 s with two threads). It is given:
`max_line_size`, at least 16 MiB.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from compliance_bake.audit.columns import DEFAULT, ColumnMap
from compliance_bake.errors import InputError

COLUMNS = (
    "play_id",
    "partner",
    "state",
    "zip",
    "placed_at",
    "enriched_at",
    "wager_type",
    "stake",
)
REJECTS_TABLE = "plays_rejects"
_HEAD_BYTES = 1 << 16
_MIN_BUFFER = 16 << 20  # bytes: the reader's buffer, at least (`buffer_size`)
_FIX_COLUMNS = "the first line must name the columns " + ", ".join(COLUMNS)


class PlaysFormat(Enum):
    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"


SUFFIXES = {
    ".csv": PlaysFormat.CSV,
    ".jsonl": PlaysFormat.JSONL,
    ".ndjson": PlaysFormat.JSONL,
    ".parquet": PlaysFormat.PARQUET,
}


@dataclass(frozen=True, slots=True)
class PlaysSource:
    """A readable plays file of a known format, with its column names checked."""

    path: Path
    format: PlaysFormat
    header: tuple[str, ...]  # CSV: the file's columns in order; else the eight columns
    max_line_size: int = 2_000_000  # bytes: the longest record the reader takes (CSV, JSONL)
    columns: ColumnMap = DEFAULT  # which source column holds each field (audit/columns.py)

    def read(self) -> list[tuple[str, str | None]]:
        """Each plays-relation column and the source column it is read from (None: absent,
        read as NULL: with a column map only the audited fields are read)."""
        return self.columns.read(COLUMNS)

    def present(self) -> list[str]:
        """The source columns the relation reads."""
        return self.columns.present(COLUMNS)


def plays_format(path: Path) -> PlaysFormat:
    found = SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise InputError(
            f"{path}: unknown plays format {path.suffix or '(no extension)'!r}",
            "name the file .csv, .jsonl (or .ndjson) or .parquet to match its content",
        )
    return found


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_HEAD_BYTES)
    except FileNotFoundError:
        raise InputError(
            f"{path}: no such plays file", "give the path of an existing plays file"
        ) from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a plays file", "pass a file") from None
    except OSError as exc:
        raise InputError(
            f"{path}: cannot read the plays file: {exc.strerror}",
            "make it readable (chmod a+r) or pass another file",
        ) from None


def _first_line(path: Path, head: bytes) -> str:
    text = head.split(b"\n", 1)[0].rstrip(b"\r")
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    if not text.strip():
        raise InputError(
            f"{path}: the plays file is empty or starts with a blank line", _FIX_COLUMNS
        )
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: line 1 is not UTF-8", "save the file as UTF-8") from None


def _require(path: Path, names: list[str], where: str, columns: ColumnMap = DEFAULT) -> None:
    if columns.given:
        columns.missing(f"{path}: {where}", names)
        return
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise InputError(
            f"{path}: {where} lacks the column{'s' if len(missing) > 1 else ''} "
            + ", ".join(missing),
            _FIX_COLUMNS,
        )


def _csv_header(path: Path, head: bytes, columns: ColumnMap) -> tuple[str, ...]:
    names = next(csv.reader(io.StringIO(_first_line(path, head))))
    names = [n.strip() for n in names]
    _require(path, names, "the CSV header", columns)
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise InputError(
            f"{path}: the CSV header names {', '.join(duplicated)} more than once",
            "name each column once",
        )
    return tuple(names)


def _jsonl_keys(path: Path, head: bytes, columns: ColumnMap) -> None:
    from compliance_bake.inputs.jsonio import StrictJSONError, loads_strict

    line = _first_line(path, head)
    try:
        first = loads_strict(line)
    except StrictJSONError:
        if line.lstrip().startswith("{"):
            # An object the strict parse refuses (a key twice, NaN) is a play like any other:
            # the engine counts it as a malformed-row; only a file of no objects is refused.
            return
        first = None
    if not isinstance(first, dict):
        raise InputError(
            f"{path}: line 1 is not a JSON object, so this is not a JSON Lines plays file",
            "write one JSON object per line, or name a CSV file .csv",
        )
    _require(path, list(first), "the first JSON line", columns)


def open_plays(
    path: Path,
    fmt: PlaysFormat | None = None,
    name: str | None = None,
    max_line_size: int = 2_000_000,
    columns: ColumnMap = DEFAULT,
) -> PlaysSource:
    """Check that the file exists, is readable, has a known format and names the columns.
    `fmt` overrides the file name's suffix; `name` is how messages call the file."""
    fmt = fmt or plays_format(path)
    head = _head(path)
    called = Path(name) if name is not None else path
    if fmt is PlaysFormat.CSV:
        return PlaysSource(path, fmt, _csv_header(called, head, columns), max_line_size, columns)
    if fmt is PlaysFormat.JSONL:
        _jsonl_keys(called, head, columns)
    elif not head.startswith(b"PAR1"):
        raise InputError(f"{called}: not a Parquet file", "write it as Parquet or rename it")
    return PlaysSource(path, fmt, COLUMNS, max_line_size, columns)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sizes(source: PlaysSource) -> str:
    """The reader's record and buffer sizes (module docstring)."""
    buffer = max(source.max_line_size, _MIN_BUFFER)
    return f"max_line_size = {source.max_line_size}, buffer_size = {buffer}"


def _csv_relation(source: PlaysSource, nul_check: bool) -> str:
    columns = "{" + ", ".join(f"{_literal(n)}: 'VARCHAR'" for n in source.header) + "}"
    # A NUL byte in any of the columns makes the row malformed; the reader itself lets it through.
    read = source.present()
    nul = " OR ".join(f"contains({_ident(c)}, chr(0))" for c in read)
    if not nul_check:
        nul = "false"
    # A row of empty fields (a line of commas, however many) holds no play: the reader passes
    # empty trailing fields, so it would otherwise be a play with no ZIP (malformed-zip).
    empty = f"coalesce({', '.join(_ident(c) for c in read)}) IS NULL"
    return f"""
        SELECT NULL::BIGINT AS line, {_select(source, _ident)},
               coalesce({nul}, false) OR {empty} AS malformed, NULL::VARCHAR AS raw
        FROM read_csv({_literal(str(source.path))}, header = true, columns = {columns},
                      auto_detect = false, delim = ',', quote = '"', escape = '"',
                      store_rejects = true, rejects_table = '{REJECTS_TABLE}',
                      rejects_scan = '{REJECTS_TABLE}_scan', {_sizes(source)})
    """


def _jsonl_relation(source: PlaysSource, nul_check: bool) -> str:
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


def _parquet_relation(source: PlaysSource, types: dict[str, str]) -> str:
    def text(column: str) -> str:
        kind = types[column].upper()
        if kind.startswith("TIMESTAMP WITH TIME ZONE"):
            # An instant: written in the text form a CSV would hold (the session is in UTC).
            return f"strftime({_ident(column)}::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%fZ')"
        return f"CAST({_ident(column)} AS VARCHAR)"

    return f"""
        SELECT NULL::BIGINT AS line, {_select(source, text)},
               false AS malformed, NULL::VARCHAR AS raw
        FROM read_parquet({_literal(str(source.path))})
    """


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _json_path(key: str) -> str:
    """The JSON path of a top-level key, quoted."""
    return '$."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _select(source: PlaysSource, value: Any) -> str:
    """The eight plays columns, each read from its source column (`value` spells the read) or
    NULL when the source is not read for it."""
    return ", ".join(
        f"{value(s)} AS {c}" if s is not None else f"NULL::VARCHAR AS {c}" for c, s in source.read()
    )


def plays_relation(con: Any, source: PlaysSource, nul_check: bool = True) -> str:
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
    _require(source.path, list(types), "the Parquet schema", source.columns)
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
