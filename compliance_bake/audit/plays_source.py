"""Where the plays are and what they hold, checked before any engine starts: a file, a folder, a
glob, or (on Spark) a cluster URI; their format; their columns.

Engine-neutral. `resolve_plays` checks a `--plays` value (a `PlaysSpec`): it exists, its files
share one format (`.csv`, `.jsonl`/`.ndjson`, `.parquet`), and their first lines or schema name
the columns (`open_plays`, on every CSV file and on the first of the others: a `PlaysFile`). A
folder is read recursively, skipping names that start with `_` or `.` (Spark's and Hadoop's
markers), so a hive-partitioned Parquet folder (`state=MA/part-0.parquet`) is one source. A URI
(`s3a://`, `hdfs://`, `abfss://`, `file://`...) is only for Spark, which lists it itself: its
format is its suffix, or Parquet when it names a folder.

The format follows the file name: `.csv`, `.jsonl` or `.ndjson`, `.parquet` (or is given). The
CSV header (or the first JSON line, or the Parquet schema) must name the eight columns of the
`plays` relation (`COLUMNS`); extra columns are ignored. With a column map (`--plays-columns`,
audit/columns.py) each field is read from its mapped column, only the five audited fields must
exist, and the others are NULL. Each engine makes the relation from the source:
engines/duckdb_plays.py, engines/spark_plays.py.
"""

from __future__ import annotations

import csv
import glob
import io
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from compliance_bake.audit.columns import DEFAULT, ColumnMap
from compliance_bake.errors import InputError
from compliance_bake.inputs.files import NotRegular, open_regular

STDIN = "-"  # `--plays -`: the plays on standard input

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
_HEAD_BYTES = 1 << 16
FIX_COLUMNS = "the first line must name the columns " + ", ".join(COLUMNS)


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
class PlaysFile:
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


def unreadable(path: Path, exc: OSError, what: str = "plays file") -> InputError:
    """The line, with its fix, for a plays file that cannot be opened: missing, a folder, or
    unreadable (ENXIO: a socket, or a FIFO some systems refuse to open without blocking)."""
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{path}: no such {what}", f"give the path of an existing {what}")
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{path}: is a folder, not a {what}", "pass a file")
    return InputError(
        f"{path}: cannot read the {what}: {exc.strerror}",
        "make it readable (chmod a+r) or pass another file",
    )


def not_regular(path: Path, kind: str, what: str = "plays file") -> InputError:
    """The line, with its fix, for a plays path that is not a regular file (a FIFO, a device, a
    socket would block the reader or feed it without end; a folder is not one file)."""
    if kind == "a folder":
        return InputError(f"{path}: is a folder, not a {what}", "pass a file")
    return InputError(
        f"{path}: not a regular file ({kind}), so not a {what}",
        f"pass a regular file; to read a stream, give --plays {STDIN} and pipe it in",
    )


def _head(path: Path) -> bytes:
    try:
        with open_regular(path) as handle:
            return handle.read(_HEAD_BYTES)
    except NotRegular as exc:
        raise not_regular(path, exc.kind) from None
    except OSError as exc:
        raise unreadable(path, exc) from None


def _first_line(path: Path, head: bytes) -> str:
    text = head.split(b"\n", 1)[0].rstrip(b"\r")
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    if not text.strip():
        raise InputError(
            f"{path}: the plays file is empty or starts with a blank line", FIX_COLUMNS
        )
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: line 1 is not UTF-8", "save the file as UTF-8") from None


def require_columns(path: Path, names: list[str], where: str, columns: ColumnMap = DEFAULT) -> None:
    """Refuse a file whose header, first JSON line or schema (`where`) lacks a column."""
    if columns.given:
        columns.missing(f"{path}: {where}", names)
        return
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise InputError(
            f"{path}: {where} lacks the column{'s' if len(missing) > 1 else ''} "
            + ", ".join(missing),
            FIX_COLUMNS,
        )


def _csv_header(path: Path, head: bytes, columns: ColumnMap) -> tuple[str, ...]:
    names = next(csv.reader(io.StringIO(_first_line(path, head))))
    names = [n.strip() for n in names]
    require_columns(path, names, "the CSV header", columns)
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
    require_columns(path, list(first), "the first JSON line", columns)


def open_plays(
    path: Path,
    fmt: PlaysFormat | None = None,
    name: str | None = None,
    max_line_size: int = 2_000_000,
    columns: ColumnMap = DEFAULT,
) -> PlaysFile:
    """Check that the file exists, is readable, has a known format and names the columns.
    `fmt` overrides the file name's suffix; `name` is how messages call the file."""
    fmt = fmt or plays_format(path)
    head = _head(path)
    called = Path(name) if name is not None else path
    if fmt is PlaysFormat.CSV:
        return PlaysFile(path, fmt, _csv_header(called, head, columns), max_line_size, columns)
    if fmt is PlaysFormat.JSONL:
        _jsonl_keys(called, head, columns)
    elif not head.startswith(b"PAR1"):
        raise InputError(f"{called}: not a Parquet file", "write it as Parquet or rename it")
    return PlaysFile(path, fmt, COLUMNS, max_line_size, columns)


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_GLOB = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class PlaysSpec:
    """A plays source: what `--plays` said, its format, and its local files (none for a URI)."""

    text: str
    format: PlaysFormat
    files: tuple[Path, ...]
    folder: Path | None  # a local folder given whole (Spark reads its partitions)
    header: tuple[str, ...]  # CSV: the files' columns in order; else the eight columns
    columns: ColumnMap = DEFAULT  # which column holds each field (audit/columns.py)

    @property
    def remote(self) -> bool:
        return not self.files

    @property
    def single(self) -> PlaysFile:
        """The one local file (DuckDB reads one file)."""
        return PlaysFile(self.files[0], self.format, self.header, columns=self.columns)


def is_uri(text: str) -> bool:
    return bool(_URI.match(text))


def is_glob(text: str) -> bool:
    """A pattern that names no existing path as it is written."""
    return bool(_GLOB.search(text)) and not Path(text).exists()


def _data_files(folder: Path) -> list[Path]:
    hidden = ("_", ".")
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(hidden) for part in p.relative_to(folder).parts)
    )


def _one_format(text: str, files: list[Path]) -> PlaysFormat:
    formats = {SUFFIXES.get(p.suffix.lower()) for p in files}
    if None in formats or len(formats) != 1:
        raise InputError(
            f"{text}: the plays files must share one format (.csv, .jsonl or .parquet); "
            f"found {', '.join(sorted({p.suffix or '(none)' for p in files}))}",
            "keep one format per folder or glob",
        )
    found = formats.pop()
    assert found is not None
    return found


def resolve_plays(text: str, allow_uri: bool, columns: ColumnMap = DEFAULT) -> PlaysSpec:
    """Check a `--plays` value; bad input raises InputError naming it and the fix."""
    if is_uri(text) and not text.startswith("file://"):
        if not allow_uri:
            raise InputError(
                f"{text}: a URI is read only by Spark",
                "add --engine spark, or copy the plays to a local file",
            )
        name = text.rstrip("/").rsplit("/", 1)[-1]
        suffix = Path(name).suffix.lower()
        fmt = SUFFIXES.get(suffix, PlaysFormat.PARQUET) if suffix else PlaysFormat.PARQUET
        if suffix and suffix not in SUFFIXES and not _GLOB.search(name):
            plays_format(Path(name))  # raises: unknown format
        return PlaysSpec(text, fmt, (), None, COLUMNS, columns)
    local = text.removeprefix("file://")
    path = Path(local)
    folder = None
    if _GLOB.search(local) and not path.exists():
        files = sorted(Path(p) for p in glob.glob(local, recursive=True) if Path(p).is_file())
        if not files:
            raise InputError(f"{text}: no plays file matches", "check the pattern")
    elif path.is_dir():
        files, folder = _data_files(path), path
        if not files:
            raise InputError(f"{text}: the folder holds no plays file", "pass a folder of plays")
    else:
        source = open_plays(path, columns=columns)  # raises on a missing or unreadable file
        return PlaysSpec(text, source.format, (path,), None, source.header, columns)
    fmt = _one_format(text, files)
    checked = files if fmt is PlaysFormat.CSV else files[:1]
    headers = {open_plays(p, columns=columns).header for p in checked}
    if len(headers) > 1:
        raise InputError(
            f"{text}: the CSV files' headers differ", "give every file the same header line"
        )
    return PlaysSpec(text, fmt, tuple(files), folder, headers.pop(), columns)
