"""Where the plays are: a file, a folder, a glob, or (on Spark) a cluster URI, and their format.

A local source is checked here before any engine starts: it exists, its files share one format
(`.csv`, `.jsonl`/`.ndjson`, `.parquet`), and their first lines or schema name the columns
(audit/plays.py's `open_plays`, on every CSV file and on the first of the others). A folder is
read recursively, skipping names that start with `_` or `.` (Spark's and Hadoop's markers), so
a hive-partitioned Parquet folder (`state=MA/part-0.parquet`) is one source. A URI
(`s3a://`, `hdfs://`, `abfss://`, `file://`...) is only for Spark, which lists it itself: its
format is its suffix, or Parquet when it names a folder.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path

from compliance_bake.audit.columns import DEFAULT, ColumnMap
from compliance_bake.audit.plays import (
    SUFFIXES,
    PlaysFormat,
    PlaysSource,
    open_plays,
    plays_format,
)
from compliance_bake.errors import InputError

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
    def single(self) -> PlaysSource:
        """The one local file (DuckDB reads one file)."""
        return PlaysSource(self.files[0], self.format, self.header, columns=self.columns)


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
        return PlaysSpec(text, fmt, (), None, _columns(), columns)
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


def _columns() -> tuple[str, ...]:
    from compliance_bake.audit.plays import COLUMNS

    return COLUMNS
