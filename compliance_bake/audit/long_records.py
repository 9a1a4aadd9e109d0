"""Records past the reader's limit: a quick look for them, and a copy of the file without them.

Engine-neutral. `has_long_line` tells, before an engine reads a file, whether a line is longer
than the limit (then the full count runs first: DuckDB holds a whole line in memory past its
limit); `without_oversized` copies the file with each record the count found past the limit
(`records.Oversized`) blanked out, so that a reader never meets one.
"""

from __future__ import annotations

import mmap
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from compliance_bake.audit.records import CHUNK, RECORD_LIMIT, Oversized


def has_long_line(path: Path, limit: int | None = None) -> bool:
    """Whether some line of the file is longer than `limit` bytes: a quick look before an engine
    reads it. From each line feed it looks back from `limit` bytes on for the next one, so it
    touches a few bytes per `limit` bytes of file (the file is mapped, not read). A record past
    the limit made of short lines (a quoted field with line feeds) escapes it; the full count
    finds that one."""
    limit = RECORD_LIMIT if limit is None else limit
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= limit:
            return False
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            last = -1  # the line feed before the current line
            while last + 1 + limit < size:
                found = data.rfind(b"\n", last + 1, last + 1 + limit)
                if found < 0:
                    return True
                last = found
    return False


def without_oversized(source: Path, target: Path, oversized: Iterable[Oversized]) -> None:
    """Copy `source` to `target` with each oversized record replaced by as many line feeds as it
    has lines: blank lines, which the readers skip, so the lines after keep their numbers."""
    with source.open("rb") as src, target.open("wb") as dst:
        at = 0
        for record in oversized:
            _copy_range(src, dst, at, record.start)
            dst.write(b"\n" * record.lines)
            at = record.end
        src.seek(at)
        shutil.copyfileobj(src, dst, CHUNK)


def _copy_range(src: BinaryIO, dst: BinaryIO, begin: int, end: int) -> None:
    src.seek(begin)
    left = end - begin
    while left > 0:
        chunk = src.read(min(CHUNK, left))
        if not chunk:
            break
        dst.write(chunk)
        left -= len(chunk)
